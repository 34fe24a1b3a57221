// Live updates: a small client of the graphql-transport-ws protocol (the one gqlgen's
// transport.Websocket speaks at /graphql) for one subscription that resumes where it left off.
//
//   const sub = subscribe({ url, query, variables: (after) => ({...}), authorization,
//                           onNext(data), onStatus({state, attempt, delay, reason}), signal });
//
// It opens a socket with the subprotocol graphql-transport-ws, sends connection_init with
// {Authorization} in its payload, subscribes on connection_ack, answers pings with pongs and
// hands every `next` to onNext. When the socket drops it connects again after a backoff with
// jitter (capped), and subscribes again with variables(lastId), so a resumable subscription
// (the change feed's `after:`) misses nothing and repeats nothing. Aborting signal (leaving the
// page) completes the subscription and closes the socket for good.
//
// States reported to onStatus: 'connecting' (first connect), 'connected' (acknowledged and
// subscribed), 'reconnecting' (dropped; trying again), 'offline' (several tries failed, the
// browser is offline, or the server refused the key: still retrying unless `fatal`).
//
// It has no dependency on the DOM, so test/live.test.mjs runs it under Node with a fake socket.

export const PROTOCOL = 'graphql-transport-ws';

// Close codes of graphql-transport-ws after which connecting again cannot help.
const FATAL = new Map([[4400, 'the server did not understand a message'], [4401, 'the server wants an API key'], [4403, 'the key may not subscribe'], [4406, 'the server does not speak graphql-transport-ws']]);

// backoff returns the delay before attempt n (1, 2, ...): exponential from base, capped, with
// "equal jitter" (half fixed, half random) so that clients dropped together do not return
// together.
export function backoff(attempt, { base = 500, cap = 15_000, random = Math.random } = {}) {
  const ceiling = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

// socketURL turns the GraphQL endpoint (absolute or relative to the page) into its ws: or wss:
// URL.
export function socketURL(endpoint, base) {
  const u = new URL(endpoint, base);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.hash = '';
  return u.toString();
}

// The number of failed attempts in a row after which the state reads 'offline'.
export const OFFLINE_AFTER = 3;

export function subscribe({
  url, query, variables = () => ({}), authorization = '', onNext, onError, onStatus, signal,
  idOf = () => '', WebSocketImpl, timers = globalThis, random = Math.random,
  base = 500, cap = 15_000, ackTimeout = 10_000,
}) {
  let ws = null;
  let lastId = '';
  let attempt = 0; // failed attempts in a row
  let retryTimer = null;
  let ackTimer = null;
  let stopped = false;
  let seq = 0;
  let subId = '';
  const status = (state, extra = {}) => onStatus?.({ state, attempt, ...extra });

  const cleanup = () => {
    timers.clearTimeout(ackTimer);
    ackTimer = null;
    if (!ws) return;
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
    try { ws.close(1000, 'leaving'); } catch { /* closed already */ }
    ws = null;
  };

  const retry = (reason, code) => {
    cleanup();
    if (stopped) return;
    if (FATAL.has(code)) {
      stopped = true;
      status('offline', { fatal: true, reason: FATAL.get(code) });
      return;
    }
    attempt += 1;
    const delay = backoff(attempt, { base, cap, random });
    const offline = attempt >= OFFLINE_AFTER || globalThis.navigator?.onLine === false;
    status(offline ? 'offline' : 'reconnecting', { delay, reason });
    retryTimer = timers.setTimeout(() => { retryTimer = null; connect(); }, delay);
  };

  const send = (msg) => ws?.send(JSON.stringify(msg));

  function connect() {
    if (stopped) return;
    let sock;
    try {
      // The page's WebSocket as it is at each connect (a test may hold it back).
      sock = new (WebSocketImpl || globalThis.WebSocket)(url, PROTOCOL);
    } catch (e) {
      retry(String(e?.message || e));
      return;
    }
    ws = sock;
    if (attempt === 0 && !lastId) status('connecting');
    sock.onopen = () => {
      send({ type: 'connection_init', payload: authorization ? { Authorization: authorization } : {} });
      ackTimer = timers.setTimeout(() => retry('no connection_ack'), ackTimeout);
    };
    sock.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { retry('a message that is not JSON'); return; }
      switch (msg?.type) {
        case 'connection_ack':
          timers.clearTimeout(ackTimer);
          seq += 1;
          subId = String(seq);
          send({ id: subId, type: 'subscribe', payload: { query, variables: variables(lastId) } });
          attempt = 0;
          status('connected', { resumedAfter: lastId });
          break;
        case 'ping':
          send({ type: 'pong', payload: msg.payload });
          break;
        case 'next':
          if (msg.id !== subId) break;
          if (msg.payload?.errors?.length && !msg.payload.data) {
            onError?.(msg.payload.errors);
            break;
          }
          lastId = idOf(msg.payload?.data) || lastId;
          onNext?.(msg.payload?.data, { lastId });
          break;
        case 'error':
          if (msg.id !== subId) break;
          // The operation was refused (a cursor past the retention, a role): say so, and try
          // again from now on, without the cursor.
          onError?.(Array.isArray(msg.payload) ? msg.payload : [msg.payload]);
          lastId = '';
          retry(msg.payload?.[0]?.message || 'the subscription failed');
          break;
        case 'complete':
          if (msg.id === subId) retry('the server completed the subscription');
          break;
        default:
      }
    };
    sock.onclose = (ev) => retry(ev?.reason || `closed (${ev?.code ?? '?'})`, ev?.code);
    sock.onerror = () => { /* onclose follows */ };
  }

  const online = () => {
    // The browser is back online: try now rather than at the end of the backoff.
    if (stopped || !retryTimer) return;
    timers.clearTimeout(retryTimer);
    retryTimer = null;
    connect();
  };
  globalThis.addEventListener?.('online', online);

  const stop = () => {
    if (stopped && !ws) return;
    stopped = true;
    timers.clearTimeout(retryTimer);
    globalThis.removeEventListener?.('online', online);
    if (ws && subId && ws.readyState === 1) send({ id: subId, type: 'complete' });
    cleanup();
  };
  signal?.addEventListener('abort', stop);
  if (signal?.aborted) return { stop, get lastId() { return lastId; } };
  connect();
  return {
    stop,
    get lastId() { return lastId; },
    // drop closes the socket as a network failure would (for tests and the "reconnect" button).
    drop() { ws?.close(4000, 'dropped by the page'); },
  };
}

// A burst of changes within REFRESH_GAP ms is one refresh; changes that arrive while one runs
// are one more after it.
export const REFRESH_GAP = 300;

// coalescer returns a change handler that calls refresh(entities) (a Set of the changes'
// entities) once per burst, and report({refreshes, entities, error}) after each.
export function coalescer({ refresh, signal, report = () => {}, timers = globalThis, gap = REFRESH_GAP }) {
  let pending = new Set();
  let timer = null;
  let running = false;
  let refreshes = 0;
  const run = async () => {
    timer = null;
    running = true;
    const entities = pending;
    pending = new Set();
    try {
      await refresh(entities);
      refreshes += 1;
      report({ refreshes, entities });
    } catch (err) {
      if (err?.name === 'AbortError' || signal?.aborted) return;
      report({ refreshes, entities, error: err });
    } finally {
      running = false;
      if (pending.size && !signal?.aborted) schedule();
    }
  };
  const schedule = () => {
    if (timer || running) return;
    timer = timers.setTimeout(run, gap);
  };
  signal?.addEventListener('abort', () => timers.clearTimeout(timer));
  return (change) => {
    pending.add(change.entity);
    schedule();
  };
}
