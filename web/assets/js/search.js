// The header's search box: an ARIA combobox (WAI-ARIA APG "list autocomplete") over
// Query.capabilities(filter: {search}). Results come as you type, debounced (one request once
// typing pauses for DEBOUNCE_MS, never one per keystroke); a request still in flight when a newer
// one starts is aborted, and an answer for an older text is never shown. ArrowDown/ArrowUp move
// through the options, Enter opens the active one (with none active: the capabilities page
// filtered by the text), Escape closes the list (a second Escape clears the box).
import { h, replace, uid } from './dom.js';
import { gql } from './api.js';

export const DEBOUNCE_MS = 200;
export const LIMIT = 8;

export const SEARCH = `query HeaderSearch($search: String!, $first: Int!) {
  capabilities(filter: {search: $search}, first: $first) {
    totalCount
    nodes { capabilityId name businessDomain }
  }
}`;

// The capabilities page filtered by a search text.
export const searchHash = (text) => `#/?${new URLSearchParams({ q: text.trim() })}`;

export function mount(root) {
  const listId = uid('search-list');
  const input = h('input', {
    type: 'search', name: 'search', id: uid('search'), class: 'search-input', placeholder: 'Search capabilities…',
    autocomplete: 'off', spellcheck: 'false', role: 'combobox', 'aria-autocomplete': 'list', 'aria-expanded': 'false',
    'aria-controls': listId, 'aria-label': 'Search capabilities by name, ID, tag or owner', dataset: { testid: 'search-input' },
  });
  const list = h('ul', { id: listId, role: 'listbox', class: 'search-list', 'aria-label': 'Matching capabilities', hidden: true, dataset: { testid: 'search-list' } });
  const foot = h('div', { class: 'search-foot', hidden: true });
  const live = h('p', { class: 'sr-only', role: 'status', 'aria-live': 'polite' });
  const panel = h('div', { class: 'search-panel', hidden: true }, list, foot);
  replace(root, h('span', { class: 'search-icon', 'aria-hidden': 'true' }, '⌕'), input, panel, live);

  let options = []; // [{id, el, hash}]
  let active = -1;
  let timer = 0;
  let inflight = null; // AbortController of the request in flight
  let shownFor = null; // the text the list shows results for
  let sent = 0;

  const setActive = (i) => {
    active = i;
    options.forEach((o, k) => o.el.setAttribute('aria-selected', String(k === i)));
    if (i >= 0) {
      input.setAttribute('aria-activedescendant', options[i].id);
      options[i].el.scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  };
  const open = (on) => {
    panel.hidden = !on;
    list.hidden = !on;
    input.setAttribute('aria-expanded', String(on));
    if (!on) setActive(-1);
  };
  const go = (hash, { clear = false } = {}) => {
    open(false);
    if (clear) { input.value = ''; shownFor = null; }
    if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = hash;
  };

  const show = (text, conn) => {
    shownFor = text;
    options = conn.nodes.map((c) => {
      const id = uid('search-opt');
      const hash = `#/capability/${encodeURIComponent(c.capabilityId)}`;
      const el = h('li', {
        id, role: 'option', class: 'search-option', 'aria-selected': 'false', dataset: { capability: c.capabilityId },
        onmousedown: (e) => e.preventDefault(), // keep the focus in the box
        onclick: () => go(hash, { clear: true }),
      },
      h('span', { class: 'search-name' }, c.name),
      h('span', { class: 'search-meta' }, h('code', { class: 'mono' }, c.capabilityId), ` · ${c.businessDomain}`));
      return { id, el, hash };
    });
    replace(list, options.length ? options.map((o) => o.el) : h('li', { class: 'search-empty', role: 'presentation' }, `No capability matches “${text}”.`));
    const total = conn.totalCount;
    foot.hidden = false;
    replace(foot, h('a', {
      href: searchHash(text), dataset: { testid: 'search-all' },
      onmousedown: (e) => e.preventDefault(),
      onclick: (e) => { e.preventDefault(); go(searchHash(text)); },
    }, total > options.length ? `All ${total} results` : 'Open as a filtered list'), h('span', { class: 'muted' }, ' · Enter'));
    live.textContent = total === 0 ? 'No results.' : `${total} result${total === 1 ? '' : 's'}${total > options.length ? `, ${options.length} shown` : ''}. Use the arrow keys to choose.`;
    setActive(-1);
    open(true);
  };

  const run = async (text) => {
    inflight?.abort();
    const ctrl = new AbortController();
    inflight = ctrl;
    sent += 1;
    root.dataset.sent = String(sent);
    root.dataset.state = 'loading';
    try {
      const data = await gql(SEARCH, { search: text, first: LIMIT }, { signal: ctrl.signal });
      if (ctrl.signal.aborted || input.value.trim() !== text) return;
      show(text, data.capabilities);
      root.dataset.state = 'done';
      root.dataset.shownFor = text;
    } catch (err) {
      if (err?.name === 'AbortError' || ctrl.signal.aborted) return;
      shownFor = null;
      options = [];
      replace(list, h('li', { class: 'search-empty', role: 'presentation' }, `Search failed: ${err?.message || err}`));
      foot.hidden = true;
      open(true);
      root.dataset.state = 'error';
    } finally {
      if (inflight === ctrl) inflight = null;
    }
  };

  input.addEventListener('input', () => {
    clearTimeout(timer);
    const text = input.value.trim();
    if (!text) {
      inflight?.abort();
      shownFor = null;
      open(false);
      return;
    }
    if (text === shownFor) { open(true); return; }
    timer = setTimeout(() => run(text), DEBOUNCE_MS);
  });
  input.addEventListener('keydown', (e) => {
    const n = options.length;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (panel.hidden) {
        if (shownFor !== null && shownFor === input.value.trim()) open(true);
        else return;
      }
      if (!n) return;
      if (e.key === 'ArrowDown') setActive(active + 1 >= n ? 0 : active + 1);
      else setActive(active <= 0 ? n - 1 : active - 1);
    } else if (e.key === 'Enter') {
      e.preventDefault();
      const text = input.value.trim();
      if (!panel.hidden && active >= 0) { go(options[active].hash, { clear: true }); return; }
      if (text) { clearTimeout(timer); inflight?.abort(); go(searchHash(text)); }
    } else if (e.key === 'Escape') {
      if (!panel.hidden) { e.preventDefault(); open(false); } else if (input.value) { e.preventDefault(); input.value = ''; shownFor = null; }
    } else if (e.key === 'Home' || e.key === 'End') {
      // Within the text, as the pattern has it.
      setActive(-1);
    }
  });
  input.addEventListener('focus', () => {
    if (shownFor !== null && shownFor === input.value.trim()) open(true);
  });
  input.addEventListener('blur', () => open(false));
  window.addEventListener('hashchange', () => open(false));
}
