// The explorer by role: "Run rules" is shown only to a caller whose role may call executeRules
// (`me.allowedMutations`, read in the capability page's one operation), and Evaluate and Run
// rules are never in flight together. A server of its own with a keys file (a viewer key and a
// devops key); the page gets each key as the server renders a key into it (the
// catalogue-api-key meta). No other host is reachable.
//
//   node --test web/test/roles.test.mjs   (environment as browser.test.mjs)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, chromiumArgs, serverBinary, serverEnv, startServer, stopServer, refuseOtherOrigins } from '../testkit/server.mjs';

const VIEWER = 'roles-test-viewer-key-0123456789';
const DEVOPS = 'roles-test-devops-key-0123456789';
const ALERT = 'CAP-ALERT-MGT-001';

let tmp;
let server;
let base;
let context;
let page;
let pageKey = '';
const external = [];
const problems = [];

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'catalogue-roles-test-'));
  const bin = serverBinary(tmp);
  const hash = (k) => createHash('sha256').update(k).digest('hex');
  const keys = join(tmp, 'keys');
  writeFileSync(keys, `viewer ${hash(VIEWER)} dashboards\ndevops ${hash(DEVOPS)} pipeline\n`);
  const env = serverEnv(['CORS_ORIGINS']);
  env.API_KEYS_FILE = keys;
  let listening;
  ({ server, listening } = startServer(bin, [], { cwd: tmp, env }));
  base = await listening;
  context = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: chromiumArgs,
  });
  const origin = new URL(base).origin;
  await refuseOtherOrigins(context, [origin], external);
  // The page as the server would render it with pageKey.
  await context.route((url) => url.origin === origin && url.pathname === '/', async (route) => {
    const resp = await route.fetch();
    const body = (await resp.text()).replace('<meta name="catalogue-endpoint"', `<meta name="catalogue-api-key" content="${pageKey}">\n  <meta name="catalogue-endpoint"`);
    await route.fulfill({ response: resp, body });
  });
  page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e.message}`));
});

after(async () => {
  await context?.close();
  await stopServer(server);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  assert.deepEqual(external, [], 'requests to other hosts');
  assert.deepEqual(problems, [], 'page errors');
});

async function openAs(key) {
  pageKey = key;
  await page.goto('about:blank');
  await page.goto(`${base}/#/capability/${ALERT}`);
  await page.waitForSelector(`main[data-rendered="#/capability/${ALERT}"]`, { timeout: 20_000 });
  await page.waitForSelector('form.evaluate');
}

const evaluateButton = 'form.evaluate button[type=submit]';
const runButton = '[data-testid=run-rules]';

test('a viewer key sees no Run rules button; a devops key does', async () => {
  await openAs(VIEWER);
  assert.equal(await page.locator(runButton).count(), 0, 'a viewer is shown Run rules');
  assert.equal(await page.locator(evaluateButton).count(), 1, 'a viewer can still evaluate');
  await openAs(DEVOPS);
  assert.equal(await page.locator(runButton).count(), 1, 'a devops caller is not shown Run rules');
  assert.ok(await page.locator(runButton).isEnabled());
});

// hold keeps the page's next operation that names `name` unanswered until release is called.
async function hold(name) {
  let release;
  const released = new Promise((r) => { release = r; });
  let seen;
  const sent = new Promise((r) => { seen = r; });
  let passed;
  const done = new Promise((r) => { passed = r; });
  const matches = (url) => url.pathname === '/graphql';
  const handler = async (route) => {
    if (!(route.request().postData() || '').includes(name)) return route.fallback();
    seen();
    await released;
    await route.fallback();
    passed();
  };
  await page.route(matches, handler);
  return {
    sent,
    release: async () => {
      release();
      await done;
      await page.unroute(matches, handler);
    },
  };
}

test('Evaluate is disabled while Run rules is in flight, and Run rules while Evaluate is', async () => {
  await openAs(DEVOPS);
  await page.fill('[data-testid=eval-input]', JSON.stringify({ source: 'production', error_count: 150 }));

  let op = await hold('executeRules');
  await page.click(runButton);
  await op.sent;
  assert.ok(await page.locator(evaluateButton).isDisabled(), 'Evaluate is enabled while Run rules is in flight');
  assert.ok(await page.locator(runButton).isDisabled(), 'Run rules is enabled while it is in flight');
  await page.locator(evaluateButton).click({ force: true });
  await op.release();
  await page.locator('[data-testid=executions]').waitFor();
  await page.waitForFunction((sel) => !document.querySelector(sel).disabled, evaluateButton);
  assert.ok(await page.locator(runButton).isEnabled());

  op = await hold('EvaluateRules');
  await page.click(evaluateButton);
  await op.sent;
  assert.ok(await page.locator(runButton).isDisabled(), 'Run rules is enabled while Evaluate is in flight');
  assert.ok(await page.locator(evaluateButton).isDisabled());
  await op.release();
  await page.locator('.evaluation-result .evaluations').waitFor();
  await page.waitForFunction((sel) => !document.querySelector(sel).disabled, runButton);
  assert.ok(await page.locator(evaluateButton).isEnabled());
});
