// Unit tests of the explorer's graphql-transport-ws client (assets/js/live.js) under Node, with
// a fake WebSocket and fake timers: the handshake, pings, resume with the last change's id after
// a drop, backoff with jitter and its cap, fatal close codes, and unsubscribing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { subscribe, backoff, socketURL, coalescer, PROTOCOL, OFFLINE_AFTER, REFRESH_GAP } from '../assets/js/live.js';

// FakeSocket records what the client sends; the test plays the server.
class FakeSocket {
  static all = [];
  constructor(url, protocol) {
    this.url = url;
    this.protocol = protocol;
    this.sent = [];
    this.readyState = 0;
    this.closed = null;
    FakeSocket.all.push(this);
  }
  send(s) { this.sent.push(JSON.parse(s)); }
  close(code, reason) { this.closed = { code, reason }; this.readyState = 3; }
  open() { this.readyState = 1; this.onopen?.(); }
  recv(msg) { this.onmessage?.({ data: JSON.stringify(msg) }); }
  drop(code = 1006, reason = '') { this.readyState = 3; this.onclose?.({ code, reason }); }
}

// FakeTimers runs timeouts when the test says so.
class FakeTimers {
  constructor() { this.next = 1; this.pending = new Map(); }
  setTimeout(fn, ms) { const id = this.next++; this.pending.set(id, { fn, ms }); return id; }
  clearTimeout(id) { this.pending.delete(id); }
  delays() { return [...this.pending.values()].map((t) => t.ms); }
  // fire runs the pending timeout with the longest delay below `over` (the retry, not the ack
  // timeout), or the only one.
  fireRetry() {
    const [id, t] = [...this.pending.entries()].sort((a, b) => a[1].ms - b[1].ms)[0];
    this.pending.delete(id);
    t.fn();
  }
}

const QUERY = 'subscription S($cap: ID, $after: String) { changes(capabilityId: $cap, after: $after) { id } }';

function start(extra = {}) {
  FakeSocket.all = [];
  const timers = new FakeTimers();
  const got = [];
  const states = [];
  const errors = [];
  const sub = subscribe({
    url: 'ws://127.0.0.1:1/graphql', query: QUERY, authorization: 'Bearer k',
    variables: (after) => ({ cap: 'CAP-1', ...(after ? { after } : {}) }),
    idOf: (d) => d?.changes?.id,
    onNext: (d) => got.push(d.changes.id), onStatus: (s) => states.push(s), onError: (e) => errors.push(e),
    WebSocketImpl: FakeSocket, timers, random: () => 0.5, ...extra,
  });
  return { sub, timers, got, states, errors, sock: () => FakeSocket.all[FakeSocket.all.length - 1] };
}

function handshake(s) {
  s.open();
  assert.deepEqual(s.sent.at(-1), { type: 'connection_init', payload: { Authorization: 'Bearer k' } });
  s.recv({ type: 'connection_ack' });
  return s.sent.at(-1);
}

test('the handshake: subprotocol, the key in connection_init, subscribe on ack, pong on ping', () => {
  const t = start();
  const s = t.sock();
  assert.equal(s.protocol, PROTOCOL);
  assert.equal(s.url, 'ws://127.0.0.1:1/graphql');
  assert.equal(t.states[0].state, 'connecting');
  const sub = handshake(s);
  assert.equal(sub.type, 'subscribe');
  assert.deepEqual(sub.payload, { query: QUERY, variables: { cap: 'CAP-1' } });
  assert.equal(t.states.at(-1).state, 'connected');
  s.recv({ type: 'ping' });
  assert.deepEqual(s.sent.at(-1), { type: 'pong' });
  s.recv({ id: sub.id, type: 'next', payload: { data: { changes: { id: 'c1' } } } });
  s.recv({ id: 'other', type: 'next', payload: { data: { changes: { id: 'zz' } } } });
  assert.deepEqual(t.got, ['c1']);
  assert.equal(t.sub.lastId, 'c1');
});

test('a dropped socket reconnects after a backoff and resumes after the last id it saw', () => {
  const t = start();
  const s1 = t.sock();
  const sub1 = handshake(s1);
  s1.recv({ id: sub1.id, type: 'next', payload: { data: { changes: { id: 'c1' } } } });
  s1.recv({ id: sub1.id, type: 'next', payload: { data: { changes: { id: 'c2' } } } });
  s1.drop(1006);
  assert.equal(t.states.at(-1).state, 'reconnecting');
  assert.equal(t.states.at(-1).delay, 500 / 2 + 0.5 * 250);
  assert.equal(FakeSocket.all.length, 1, 'reconnected before the backoff');
  t.timers.fireRetry();
  const s2 = t.sock();
  assert.notEqual(s2, s1);
  const sub2 = handshake(s2);
  assert.deepEqual(sub2.payload.variables, { cap: 'CAP-1', after: 'c2' });
  assert.equal(t.states.at(-1).state, 'connected');
  assert.equal(t.states.at(-1).resumedAfter, 'c2');
  s2.recv({ id: sub2.id, type: 'next', payload: { data: { changes: { id: 'c3' } } } });
  assert.deepEqual(t.got, ['c1', 'c2', 'c3']);
});

test('failures in a row back off exponentially up to the cap, then read offline; an ack resets', () => {
  const t = start({ cap: 4000 });
  const delays = [];
  for (let i = 0; i < 6; i++) {
    t.sock().drop(1006);
    delays.push(t.states.at(-1).delay);
    assert.equal(t.states.at(-1).state, i + 1 >= OFFLINE_AFTER ? 'offline' : 'reconnecting');
    t.timers.fireRetry();
  }
  // base 500: ceilings 500, 1000, 2000, 4000, 4000, 4000; half fixed plus half times 0.5.
  assert.deepEqual(delays, [375, 750, 1500, 3000, 3000, 3000]);
  handshake(t.sock());
  t.sock().drop(1001, 'going away');
  assert.equal(t.states.at(-1).state, 'reconnecting');
  assert.equal(t.states.at(-1).delay, 375);
});

test('backoff has jitter within [ceiling/2, ceiling] and a cap', () => {
  assert.equal(backoff(1, { random: () => 0 }), 250);
  assert.equal(backoff(1, { random: () => 1 }), 500);
  assert.equal(backoff(30, { random: () => 1 }), 15_000);
  assert.equal(backoff(30, { random: () => 0 }), 7_500);
});

test('a fatal close code (no key) stops retrying and reads offline', () => {
  const t = start();
  t.sock().open();
  t.sock().drop(4401, 'Unauthorized');
  assert.equal(t.states.at(-1).state, 'offline');
  assert.equal(t.states.at(-1).fatal, true);
  assert.equal(t.timers.pending.size, 0);
});

test('an error message reports the errors and subscribes again from now on', () => {
  const t = start();
  const sub = handshake(t.sock());
  t.sock().recv({ id: sub.id, type: 'next', payload: { data: { changes: { id: 'old' } } } });
  t.sock().recv({ id: sub.id, type: 'error', payload: [{ message: 'after is older than the retention', extensions: { code: 'BAD_USER_INPUT' } }] });
  assert.equal(t.errors.length, 1);
  t.timers.fireRetry();
  const again = handshake(t.sock());
  assert.deepEqual(again.payload.variables, { cap: 'CAP-1' });
});

test('no ack in time counts as a failure', () => {
  const t = start({ ackTimeout: 10_000 });
  t.sock().open();
  assert.deepEqual(t.timers.delays(), [10_000]);
  t.timers.fireRetry();
  assert.equal(t.states.at(-1).state, 'reconnecting');
  assert.equal(t.sock().closed.code, 1000);
});

test('aborting completes the subscription, closes the socket and never reconnects', () => {
  const ctrl = new AbortController();
  const t = start({ signal: ctrl.signal });
  const s = t.sock();
  const sub = handshake(s);
  ctrl.abort();
  assert.deepEqual(s.sent.at(-1), { id: sub.id, type: 'complete' });
  assert.equal(s.closed.code, 1000);
  s.drop(1006);
  assert.equal(t.timers.pending.size, 0);
  assert.equal(FakeSocket.all.length, 1);
});

test('socketURL maps http to ws and https to wss, relative to the page', () => {
  assert.equal(socketURL('/graphql', 'http://127.0.0.1:8080/#/x'), 'ws://127.0.0.1:8080/graphql');
  assert.equal(socketURL('/graphql', 'https://cat.example/'), 'wss://cat.example/graphql');
  assert.equal(socketURL('https://api.example/graphql', 'http://127.0.0.1/'), 'wss://api.example/graphql');
});

test('a burst of changes is one refresh; changes during a refresh are one more after it', async () => {
  const timers = new FakeTimers();
  const calls = [];
  let finish;
  const reports = [];
  const onChange = coalescer({
    timers,
    refresh: (entities) => { calls.push([...entities].sort()); return new Promise((r) => { finish = r; }); },
    report: (r) => reports.push(r.refreshes),
  });
  for (const entity of ['JOB', 'RULE', 'JOB', 'COMPONENT', 'JOB']) onChange({ entity });
  assert.deepEqual(timers.delays(), [REFRESH_GAP], 'a burst scheduled more than one refresh');
  timers.fireRetry();
  assert.deepEqual(calls, [['COMPONENT', 'JOB', 'RULE']]);
  // While the refresh runs: three changes, no new timer until it ends.
  for (const entity of ['METRIC', 'METRIC', 'RULE']) onChange({ entity });
  assert.equal(timers.pending.size, 0);
  finish();
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(reports, [1]);
  assert.deepEqual(timers.delays(), [REFRESH_GAP]);
  timers.fireRetry();
  assert.deepEqual(calls, [['COMPONENT', 'JOB', 'RULE'], ['METRIC', 'RULE']]);
  finish();
  await new Promise((r) => setImmediate(r));
  assert.equal(timers.pending.size, 0, 'a refresh with nothing pending');
  assert.deepEqual(reports, [1, 2]);
});

test('a coalescer stops with its signal', () => {
  const timers = new FakeTimers();
  const ctrl = new AbortController();
  const onChange = coalescer({ timers, signal: ctrl.signal, refresh: () => assert.fail('refreshed after abort') });
  onChange({ entity: 'JOB' });
  ctrl.abort();
  assert.equal(timers.pending.size, 0);
});
