// Shared by the browser tests in web/test (outside that folder, so that `node --test web/test/`
// does not take it for a test file): the server under test started on a free loopback port, and
// the flags that keep headless Chromium from reaching any host but the loopback.
import { spawn, execFileSync } from 'node:child_process';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

// chromiumArgs: headless, no sandbox, nothing fetched in the background, every host name but
// 127.0.0.1 unresolvable.
export const chromiumArgs = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

// serverBinary returns CATALOGUE_BIN, or a server built with `go build` into dir.
export function serverBinary(dir) {
  if (process.env.CATALOGUE_BIN) return process.env.CATALOGUE_BIN;
  const bin = join(dir, 'catalogue');
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  return bin;
}

// serverEnv is this process's environment without what would point the server elsewhere
// (DynamoDB, AWS, port, host) and without the names in drop.
export function serverEnv(drop = []) {
  const env = { ...process.env };
  for (const k of ['DYNAMODB_ENDPOINT', 'USE_AWS', 'PORT', 'HOST', ...drop]) delete env[k];
  return env;
}

// startServer spawns bin with args on port 0 of 127.0.0.1 and returns the process at once (so
// that an `after` can stop it whatever happens) with `listening`, which resolves to its base URL
// when it prints its "listening on" line, and rejects if it exits first or prints none in 60 s.
export function startServer(bin, args, { cwd = repoRoot, env = serverEnv() } = {}) {
  const server = spawn(bin, ['-port', '0', '-host', '127.0.0.1', ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  server.stderr.on('data', (d) => { stderr = (stderr + d).slice(-4000); });
  const listening = new Promise((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`the server printed no "listening on" line in 60 s:\n${out}\n${stderr}`)), 60_000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) { clearTimeout(timer); ok(m[1]); }
    });
    server.on('exit', (code) => { clearTimeout(timer); fail(new Error(`the server exited (${code}) before listening:\n${stderr}`)); });
  });
  return { server, listening };
}

// stopServer ends a server startServer started (SIGTERM; at most 5 s).
export async function stopServer(server) {
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => { server.once('exit', r); setTimeout(r, 5000); });
  }
}

// refuseOtherOrigins aborts every request of a browser context to an origin not in origins
// (data: and blob: URLs aside), as if the network were down, and records its URL in refused.
export function refuseOtherOrigins(context, origins, refused) {
  const allowed = new Set(origins);
  return context.route((url) => !allowed.has(url.origin) && !url.protocol.startsWith('data') && !url.protocol.startsWith('blob'), (route) => {
    refused.push(route.request().url());
    return route.abort('internetdisconnected');
  });
}
