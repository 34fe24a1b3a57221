// The capability page's live updates: a subscription to the capability's changes over
// WebSocket (live.js), a "live" indicator that says in words whether it is connected,
// reconnecting or offline, and a refresh that coalesces a burst of changes into one refetch.
import { h, replace } from '../dom.js';
import { gql, endpoint, auth } from '../api.js';
import { subscribe, socketURL } from '../live.js';
import { label } from '../format.js';

export { coalescer } from '../live.js';

export const CHANGE_FIELDS = 'id at capabilityId entity entityId action revision actor { name role } requestId fields detail';

// The newest change of the capability before the page reads it: the subscription resumes after
// it, so a change made between this read and the subscription is replayed, not lost.
export const LIVE_CURSOR = `query LiveCursor($id: ID!) {
  changes(capabilityId: $id, last: 1) { pageInfo { endCursor } }
}`;

export const CAPABILITY_CHANGES = `subscription CapabilityChanges($id: ID!, $after: String) {
  changes(capabilityId: $id, after: $after) { ${CHANGE_FIELDS} }
}`;

// liveCursor returns the capability's newest change id ('' when it has none, or when the read
// failed: then the subscription starts at the moment it connects).
export async function liveCursor(id, signal) {
  try {
    const data = await gql(LIVE_CURSOR, { id }, { signal });
    return data.changes?.pageInfo?.endCursor || '';
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    return '';
  }
}

const STATE_TEXT = {
  connecting: 'Connecting…',
  connected: 'Live',
  reconnecting: 'Reconnecting…',
  offline: 'Offline',
};

// liveSection subscribes with query (a subscription whose field is `changes`) and
// variables(after) until signal aborts, calls onChange(change) for each change, and returns the
// indicator: a status line that says in words whether it is connected, reconnecting or offline.
// after is the cursor of the first subscribe; later ones resume after the last change seen.
// onRestart is called when the server refused the subscription and it starts again from now.
export function liveSection({ query, variables, after = '', signal, onChange, onRestart, what = 'Changes' }) {
  const text = h('span', { class: 'live-text' }, STATE_TEXT.connecting);
  const detail = h('span', { class: 'live-detail' });
  const el = h('p', { class: 'live live-connecting', role: 'status', dataset: { testid: 'live', state: 'connecting', refreshes: '0', changes: '0' } },
    h('span', { class: 'live-dot', 'aria-hidden': 'true' }), text, detail);
  let seen = 0;
  let start = after;
  const note = (t) => replace(detail, t);

  const setState = ({ state, delay, reason, fatal }) => {
    el.dataset.state = state;
    el.className = `live live-${state}`;
    text.textContent = fatal ? `${STATE_TEXT.offline}: ${reason}` : STATE_TEXT[state] || state;
    if (state === 'reconnecting' || (state === 'offline' && !fatal)) {
      note(delay ? ` · trying again in ${Math.max(1, Math.round(delay / 1000))} s` : '');
    } else if (state === 'connected') {
      note(` · ${what.toLowerCase()} appear without a reload`);
    }
    el.title = reason ? `Last disconnect: ${reason}` : `${what} appear without a reload.`;
  };

  const sub = subscribe({
    url: socketURL(endpoint, location.href),
    query,
    variables: (last) => variables(last || start),
    authorization: auth.header,
    idOf: (d) => d?.changes?.id,
    signal,
    onStatus: setState,
    onNext(data) {
      const c = data?.changes;
      if (!c) return;
      seen += 1;
      el.dataset.changes = String(seen);
      el.dataset.lastChange = c.id;
      onChange(c);
    },
    onError(errors) {
      // The subscription was refused (its cursor past the retention, say): it starts again
      // from now on.
      start = '';
      note(` · ${errors?.[0]?.message || 'the subscription failed'}`);
      onRestart?.();
    },
  });
  // For tests and tools: close the socket as a network failure would.
  el.addEventListener('catalogue:drop', () => sub.drop?.());
  return {
    el,
    // report shows the outcome of a refresh (coalescer's report).
    report({ refreshes, entities, error }) {
      el.dataset.refreshes = String(refreshes);
      note(error
        ? ` · refresh failed: ${error?.message || error}`
        : ` · updated ${new Date().toLocaleTimeString()} (${[...entities].map(label).join(', ').toLowerCase()})`);
    },
  };
}
