// The explorer's sign-in through an OpenID Connect provider, in headless Chromium: the Go test
// TestBrowserSignIn (web/signin_test.go) serves a fake provider (its authorization endpoint
// signs in at once and redirects back with a code; its token endpoint answers the code with
// signed tokens, with CORS headers) and runs this file with OIDC_TEST_ISSUER set. Without it
// (node --test web/test/ from TestBrowser) the test is skipped.
//
// Environment: OIDC_TEST_ISSUER (the provider), CATALOGUE_BIN (the server), CHROMIUM_PATH.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, serverEnv, startServer, stopServer, refuseOtherOrigins } from '../testkit/server.mjs';

const issuer = process.env.OIDC_TEST_ISSUER;

let tmp;
let server;
let base;
let context;
let page;
const external = [];
const graphqlRequests = [];
const problems = [];

// startCatalogue starts the server signing in with the provider at issuer.
function startCatalogue() {
  let listening;
  ({ server, listening } = startServer(process.env.CATALOGUE_BIN, ['-oidc-issuer', issuer,
    '-oidc-audience', 'catalogue-api', '-oidc-client-id', 'explorer'], { env: serverEnv(['API_KEYS_FILE']) }));
  return listening;
}

before(async () => {
  if (!issuer) return;
  const { chromium } = await import('playwright-core');
  tmp = mkdtempSync(join(tmpdir(), 'catalogue-signin-test-'));
  base = await startCatalogue();
  context = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });
  await refuseOtherOrigins(context, [new URL(base).origin, new URL(issuer).origin], external);
  page = context.pages()[0] || await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error on ${page.url()}: ${e.message}`));
  page.on('request', (r) => {
    if (r.url().endsWith('/graphql') && r.method() === 'POST') graphqlRequests.push(r.headers().authorization || '');
  });
});

after(async () => {
  await context?.close();
  await stopServer(server);
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('the explorer signs in with the provider (code + PKCE), sends the token, and signs out', { skip: !issuer && 'OIDC_TEST_ISSUER is not set (TestBrowserSignIn sets it)' }, async () => {
  await page.goto(`${base}/#/dashboard`);
  await page.waitForSelector('main[data-rendered="#/dashboard"]', { timeout: 20_000 });
  const before = graphqlRequests.length;
  assert.ok(graphqlRequests.slice(0, before).every((a) => a === ''), 'before sign-in the explorer sends no Authorization');

  await page.click('[data-testid=sign-in]');
  // To the provider and back: the code is exchanged and gone from the address.
  await page.waitForSelector('[data-testid=signed-in]', { timeout: 20_000 });
  assert.match(await page.textContent('[data-testid=signed-in]'), /Signed in as alice/);
  await page.waitForSelector('main[data-rendered="#/dashboard"]', { timeout: 20_000 });
  const url = new URL(page.url());
  assert.equal(url.search, '', `the address keeps the code: ${page.url()}`);
  assert.equal(url.hash, '#/dashboard', 'the view before sign-in comes back');

  const stored = await page.evaluate(() => ({ session: sessionStorage.getItem('catalogue.authorization'), local: localStorage.length }));
  assert.match(stored.session || '', /^Bearer ey[\w-]+\.[\w-]+\.[\w-]+$/, 'the token is kept in sessionStorage');
  assert.equal(stored.local, 0, 'nothing in localStorage');
  const after = graphqlRequests.slice(before);
  assert.ok(after.length > 0 && after.every((a) => a === stored.session), `the views send the token: ${after.length} requests`);

  // Authenticated operations: the token's admin creates a capability (anonymous callers are
  // viewers), and the change feed names the token's subject (never its preferred_username) as
  // its writer.
  const actor = await page.evaluate(async () => {
    const { gql } = await import('/assets/js/api.js');
    await gql('mutation SignedInWrite { createCapability(input: {capabilityId: "CAP-SSO-001", name: "Signed in", businessDomain: "testing", priority: HIGH}) { id } }');
    const d = await gql('query WhoWrote { capability(id: "CAP-SSO-001") { changes(first: 1) { nodes { actor { name role } } } } }');
    return d.capability.changes.nodes[0].actor;
  });
  assert.deepEqual(actor, { name: 'oidc:alice-sub', role: 'admin' });
  // The token the explorer sends is the access token (aud = the server's audience), an admin's.
  const payload = JSON.parse(Buffer.from(stored.session.split('.')[1], 'base64url').toString());
  assert.deepEqual([payload.aud, payload.catalogue_role, payload.preferred_username], ['catalogue-api', 'admin', 'alice']);

  await page.click('text=Sign out');
  await page.waitForSelector('[data-testid=sign-in]', { timeout: 10_000 });
  assert.equal(await page.evaluate(() => sessionStorage.getItem('catalogue.authorization')), null, 'sign-out forgets the token');
  assert.deepEqual(external, [], 'no request left the server and the provider');
  assert.deepEqual(problems, []);
});
