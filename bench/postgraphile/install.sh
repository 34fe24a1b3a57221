#!/usr/bin/env bash
# Installs what the benchmark's PostGraphile comparison (go run ./bench -postgraphile-only,
# bench/postgraphile.go) needs, idempotently; the server and the tests need none of it:
#   - the PostgreSQL 15 server from Debian (apt-get) when /usr/lib/postgresql/15/bin/postgres is
#     missing (needs root or sudo); the benchmark makes its own throwaway cluster each run;
#   - bench/postgraphile/node_modules (PostGraphile 4, pinned in package-lock.json) with
#     `npm ci` unless it is already installed from this very lock file.
set -euo pipefail
dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  echo "== installing postgresql-15 (apt-get)"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install.sh: PostgreSQL 15 is missing and this is not root (no sudo)" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql-15 postgresql-client-15 >/dev/null
fi
echo "== $(/usr/lib/postgresql/15/bin/postgres --version)"

command -v npm >/dev/null || { echo "install.sh: npm is missing (Node.js 20 or newer is needed)" >&2; exit 1; }
# A stamp of the lock file's hash marks a finished install: while it matches, npm ci (which
# deletes node_modules first) is skipped.
stamp="$dir/node_modules/.install-stamp"
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/node_modules/postgraphile/package.json" ]; then
  echo "== bench/postgraphile/node_modules is current"
else
  echo "== npm ci in bench/postgraphile/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi
echo "== ready: node $(node --version), postgraphile $(node -p "require('$dir/node_modules/postgraphile/package.json').version")"
