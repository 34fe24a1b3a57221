// -cors-origins in a real browser: a page served from a second origin (a Node HTTP server on
// another loopback port) calls the catalogue's /graphql with fetch and an API key, which needs
// a preflight (Authorization, Content-Type: application/json); a page from a third origin, not
// listed, is refused by the browser. No other host is reachable.
//
//   node --test web/test/cors.test.mjs   (environment as browser.test.mjs)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, chromiumArgs, serverBinary, serverEnv, startServer, stopServer, refuseOtherOrigins } from '../testkit/server.mjs';

const KEY = 'cors-test-key-0123456789abcdef';

let tmp;
let server;
let api; // the catalogue's origin
let ui; // the listed origin
let foreign; // an origin not listed
const pages = [];
let context;
let page;
const external = [];

// servePage starts an HTTP server on a free loopback port that serves an empty page.
async function servePage() {
  const s = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>a web UI on another origin</title>');
  });
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  pages.push(s);
  return `http://127.0.0.1:${s.address().port}`;
}

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'catalogue-cors-test-'));
  ui = await servePage();
  foreign = await servePage();
  const bin = serverBinary(tmp);
  const keys = join(tmp, 'keys');
  writeFileSync(keys, `viewer ${createHash('sha256').update(KEY).digest('hex')} cors-ui\n`);
  const env = serverEnv(['CORS_ORIGINS']);
  env.API_KEYS_FILE = keys;
  let listening;
  ({ server, listening } = startServer(bin, ['-anonymous', 'none', '-cors-origins', ui], { cwd: tmp, env }));
  api = await listening;
  context = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: chromiumArgs,
  });
  await refuseOtherOrigins(context, [api, ui, foreign], external);
  page = context.pages()[0] || await context.newPage();
});

after(async () => {
  await context?.close();
  await stopServer(server);
  for (const s of pages) s.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

// call runs a GraphQL query from the page with the key and reports what the page could read.
function call(endpoint, key) {
  return page.evaluate(async ({ endpoint, key }) => {
    try {
      const r = await fetch(endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: '{ capability(id: "CAP-ALERT-MGT-001") { name } }' }),
      });
      return { status: r.status, requestId: r.headers.get('X-Request-ID'), body: await r.json() };
    } catch (e) {
      return { error: String(e) };
    }
  }, { endpoint, key });
}

test('a listed origin calls /graphql with an API key (preflight, then the query)', async () => {
  await page.goto(`${ui}/`);
  const res = await call(`${api}/graphql`, KEY);
  assert.equal(res.error, undefined, `the browser refused the call: ${res.error}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.data?.capability?.name, 'Alert Management', JSON.stringify(res.body).slice(0, 300));
  assert.match(res.requestId || '', /\S/, 'X-Request-ID is exposed to the page');
});

test('an origin that is not listed cannot read /graphql', async () => {
  await page.goto(`${foreign}/`);
  const res = await call(`${api}/graphql`, KEY);
  assert.match(res.error || '', /TypeError|Failed to fetch/, `the page read the answer: ${JSON.stringify(res)}`);
});

test('nothing went to another host', () => {
  assert.deepEqual(external, []);
});
