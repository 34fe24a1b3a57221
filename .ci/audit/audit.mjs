// Runs the graphql-http audit suite against the URL in argv[2] and fails on any error.
// Warnings (SHOULDs of the spec) fail it too: the server meets every one.
import { auditServer } from 'graphql-http';

const url = process.argv[2];
if (!url) {
  console.error('usage: node audit.mjs http://127.0.0.1:PORT/graphql');
  process.exit(2);
}
const results = await auditServer({ url });
let errors = 0;
let warnings = 0;
for (const r of results) {
  if (r.status === 'error') {
    errors++;
    console.log(`ERROR ${r.name}: ${r.reason}`);
  } else if (r.status === 'warn') {
    warnings++;
    console.log(`warn  ${r.name}: ${r.reason}`);
  }
}
console.log(`graphql-http audit: ${results.length - errors - warnings} ok, ${warnings} warnings, ${errors} errors`);
process.exit(errors + warnings > 0 ? 1 : 0);
