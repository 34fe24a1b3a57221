#!/usr/bin/env bash
# Installs clients/apollo/node_modules from package-lock.json (`npm ci`) unless it is already
# installed from this very lock file; clients/apollo_test.go needs it.
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v npm >/dev/null || { echo "install.sh: npm is missing (Node.js 20 or newer is needed)" >&2; exit 1; }
stamp="$dir/node_modules/.install-stamp"
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/node_modules/@apollo/client/package.json" ]; then
  echo "== clients/apollo/node_modules is current"
else
  echo "== npm ci in clients/apollo/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi
