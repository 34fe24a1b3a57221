#!/usr/bin/env bash
# Rebuilds web/graphiql/vendor/, the GraphiQL that /graphiql serves from the binary (go:embed),
# from web/package-lock.json: an update of GraphiQL or React is
#
#   (cd web && npm install graphiql@X react@Y react-dom@Y --save-exact) && web/vendor-graphiql.sh
#
# then `go test ./web/` (TestVendoredGraphiQL checks the files against the lock file) and commit.
#
# It installs the lock file's production dependencies with `npm ci --omit=dev` into a temporary
# directory (web/node_modules is neither read nor changed) and copies, byte for byte:
#   graphiql/   graphiql.min.js, graphiql.min.css (the UMD build: GraphiQL with graphql-js,
#               CodeMirror and its other dependencies bundled), LICENSE, and THIRD_PARTY_LICENSES
#               (the licences of the packages bundled into graphiql.min.js)
#   react/      react.production.min.js, LICENSE
#   react-dom/  react-dom.production.min.js, LICENSE
# and writes manifest.json: each package's version and lock-file integrity, and each file's
# SHA-256.
set -euo pipefail
web="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$web/graphiql/vendor"
command -v npm >/dev/null || { echo "vendor-graphiql.sh: npm is missing (Node.js 20 or newer is needed)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$web/package.json" "$web/package-lock.json" "$tmp/"
echo "== npm ci --omit=dev (in $tmp)"
(cd "$tmp" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)

rm -rf "$out"
mkdir -p "$out/graphiql" "$out/react" "$out/react-dom"
nm="$tmp/node_modules"
cp "$nm/graphiql/graphiql.min.js" "$nm/graphiql/graphiql.min.css" "$nm/graphiql/LICENSE" "$out/graphiql/"
cp "$nm/react/umd/react.production.min.js" "$nm/react/LICENSE" "$out/react/"
cp "$nm/react-dom/umd/react-dom.production.min.js" "$nm/react-dom/LICENSE" "$out/react-dom/"

OUT="$out" NM="$nm" LOCK="$web/package-lock.json" node --input-type=module <<'EOF'
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
const { OUT, NM, LOCK } = process.env;
const lock = JSON.parse(readFileSync(LOCK, 'utf8')).packages;

// The licences of what graphiql.min.js bundles: graphiql's production dependency closure,
// without its peers React and ReactDOM (loaded from their own files).
const seen = new Set();
const queue = Object.keys(lock['node_modules/graphiql'].dependencies || {});
while (queue.length) {
  const name = queue.shift();
  if (seen.has(name) || name === 'react' || name === 'react-dom') continue;
  seen.add(name);
  const p = lock[`node_modules/${name}`];
  if (p) queue.push(...Object.keys(p.dependencies || {}));
}
let third = 'Licences of the packages bundled into graphiql.min.js: GraphiQL\'s production dependencies at the\n' +
  'versions of web/package-lock.json (the bundle was built by GraphiQL\'s release, whose exact versions may differ).\n' +
  'Written by web/vendor-graphiql.sh.\n';
for (const name of [...seen].sort()) {
  const p = lock[`node_modules/${name}`];
  const dir = join(NM, name);
  const file = existsSync(dir) && readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
  third += `\n${'='.repeat(78)}\n${name} ${p?.version ?? ''} (${p?.license ?? 'licence not stated'})\n${'='.repeat(78)}\n\n`;
  third += file ? readFileSync(join(dir, file), 'utf8').trim() + '\n' : `No licence file in the package; package.json states: ${p?.license ?? 'nothing'}.\n`;
}
writeFileSync(join(OUT, 'graphiql', 'THIRD_PARTY_LICENSES'), third);

const sha = (f) => createHash('sha256').update(readFileSync(f)).digest('hex');
const manifest = { comment: 'Written by web/vendor-graphiql.sh from web/package-lock.json; checked by TestVendoredGraphiQL.', packages: {} };
for (const pkg of ['graphiql', 'react', 'react-dom']) {
  const p = lock[`node_modules/${pkg}`];
  const files = {};
  for (const f of readdirSync(join(OUT, pkg)).sort()) files[f] = sha(join(OUT, pkg, f));
  manifest.packages[pkg] = { version: p.version, integrity: p.integrity, license: p.license, files };
}
writeFileSync(join(OUT, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
EOF
echo "== web/graphiql/vendor:"
(cd "$out" && find . -type f | sort | xargs ls -l | awk '{print "   " $5 "\t" $9}')
