#!/usr/bin/env bash
# Installs what the browser tests need, idempotently (the server needs none of it: the explorer
# and GraphiQL are embedded in the binary; web/vendor-graphiql.sh updates GraphiQL's files):
#   - Chromium from Debian (apt-get) when /usr/bin/chromium is missing (needs root or sudo);
#   - web/node_modules from web/package-lock.json (`npm ci`) unless it is already installed
#     from this very lock file.
# The explorer itself needs none of this: it is embedded in the Go binary.
set -euo pipefail
web="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ ! -x /usr/bin/chromium ]; then
  echo "== installing chromium (apt-get)"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install.sh: chromium is missing and this is not root (no sudo)" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
fi
echo "== $(/usr/bin/chromium --version 2>/dev/null | head -n1)"

command -v npm >/dev/null || { echo "install.sh: npm is missing (Node.js 20 or newer is needed)" >&2; exit 1; }
# A stamp of the lock file's hash marks a finished install: while it matches, npm ci (which
# deletes node_modules first) is skipped.
stamp="$web/node_modules/.install-stamp"
want="$(sha256sum "$web/package-lock.json" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$web/node_modules/playwright-core/package.json" ] && [ -f "$web/node_modules/graphiql/graphiql.min.js" ]; then
  echo "== web/node_modules is current"
else
  echo "== npm ci in web/"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi
echo "== ready: node $(node --version), playwright-core $(node -p "require('$web/node_modules/playwright-core/package.json').version"), graphiql $(node -p "require('$web/node_modules/graphiql/package.json').version")"
