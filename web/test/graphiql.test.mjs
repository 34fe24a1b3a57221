// GraphiQL at /graphiql works with no network and no web/node_modules at serve time: the server
// runs in an empty working directory (it reads no node_modules: GraphiQL is embedded), Chromium
// resolves no host name but the server's, and every request to another origin is aborted and
// recorded. The page must render, fetch the schema by introspection, open the docs explorer and
// run a query with the admin key that the embedded default renders into the page (loopback).
//
//   node --test web/test/graphiql.test.mjs   (environment as browser.test.mjs)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, chromiumArgs, serverBinary, serverEnv, startServer, stopServer, refuseOtherOrigins } from '../testkit/server.mjs';

const outDir = process.env.TEST_OUTPUT_DIR
  ? resolve(process.env.TEST_OUTPUT_DIR)
  : mkdtempSync(join(tmpdir(), 'catalogue-web-screenshots-'));
mkdirSync(outDir, { recursive: true });

let tmp;
let server;
let base;
let context;
let page;
const external = []; // requests to other origins (aborted)
const problems = []; // page errors

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'catalogue-graphiql-test-'));
  const bin = serverBinary(tmp);
  const env = serverEnv(['API_KEYS_FILE', 'CORS_ORIGINS']);
  // An empty working directory: no web/node_modules, no node_modules, nothing to read.
  const cwd = join(tmp, 'empty');
  mkdirSync(cwd);
  let listening;
  ({ server, listening } = startServer(bin, [], { cwd, env }));
  base = await listening;
  context = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: chromiumArgs,
  });
  await refuseOtherOrigins(context, [new URL(base).origin], external);
  page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Every file GraphiQL loads at run time (a worker, a plugin, a font) must be embedded: a
  // missing one is a 404 of this server.
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} for ${r.request().method()} ${r.url()}`);
  });
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()} (${r.failure()?.errorText})`));
});

after(async () => {
  await context?.close();
  await stopServer(server);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('GraphiQL renders from the binary, fetches the schema, opens the docs and runs a query with the admin key', async () => {
  const graphql = []; // {operationName, authorization} of every POST to /graphql, as sent
  page.on('request', (req) => {
    if (new URL(req.url()).pathname !== '/graphql' || req.method() !== 'POST') return;
    let op = '';
    try { op = JSON.parse(req.postData() || '{}').operationName || ''; } catch { /* not JSON */ }
    graphql.push({ operationName: op, authorization: req.headers().authorization || '' });
  });
  const introspection = page.waitForResponse((r) => r.url().endsWith('/graphql') && /IntrospectionQuery/.test(r.request().postData() || ''), { timeout: 30_000 });
  await page.goto(`${base}/graphiql`);
  assert.equal(await page.getAttribute('meta[name="graphiql-mode"]', 'content'), 'embedded');
  assert.match(await page.textContent('.graphiql-mode'), /GraphiQL \d+\.\d+\.\d+, embedded in this server/);
  const key = await page.getAttribute('meta[name="catalogue-api-key"]', 'content');
  assert.match(key || '', /\S{16,}/, 'the embedded default (loopback) renders its admin key into the page');
  await page.waitForSelector('.graphiql-container', { timeout: 20_000 });

  // The schema, by introspection, with the key.
  const schema = await (await introspection).json();
  assert.ok(schema.data?.__schema?.queryType, `introspection answered ${JSON.stringify(schema).slice(0, 200)}`);

  // The docs explorer opens on the root types and a field's documentation.
  await page.click('button[aria-label="Show Documentation Explorer"]');
  const docs = page.locator('.graphiql-doc-explorer');
  await docs.waitFor({ timeout: 10_000 });
  await docs.locator('.graphiql-doc-explorer-root-type', { hasText: 'query' }).waitFor();
  await docs.locator('a.graphiql-doc-explorer-type-name', { hasText: 'Query' }).first().click();
  await docs.locator('.graphiql-doc-explorer-field-name', { hasText: 'capability' }).first().waitFor({ timeout: 10_000 });

  // Run the default query (AlertManagement) with the execute button. Its response is awaited
  // here, not looked up in the listener's records: the listener pushes a record only once it
  // has read the body, which may be after the result window shows it.
  const operation = (r) => { try { return JSON.parse(r.postData() || '{}').operationName || ''; } catch { return ''; } };
  const running = page.waitForResponse((r) => new URL(r.url()).pathname === '/graphql' && r.request().method() === 'POST' &&
    operation(r.request()) === 'AlertManagement', { timeout: 20_000 });
  await page.click('.graphiql-execute-button');
  const run = await running;
  await page.locator('.result-window', { hasText: 'Alert Management' }).waitFor({ timeout: 20_000 });
  assert.equal(run.status(), 200);
  assert.equal(run.request().headers().authorization, `Bearer ${key}`, 'the query carries the admin key');
  const body = await run.text();
  const res = JSON.parse(body);
  assert.equal(res.errors, undefined, body.slice(0, 300));
  assert.equal(res.data.capability.name, 'Alert Management');
  assert.ok(graphql.some((g) => g.operationName === 'AlertManagement'), `no AlertManagement request among ${graphql.map((g) => g.operationName).join(', ')}`);
  assert.ok(graphql.every((g) => g.authorization === `Bearer ${key}`), 'every request carries the key');

  const file = join(outDir, 'graphiql-docs-1280.png');
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
});

test('GraphiQL loaded nothing from another host, every file it asked for was there, and no page error', () => {
  assert.deepEqual(external, [], 'requests to other hosts');
  assert.deepEqual(problems, []);
});
