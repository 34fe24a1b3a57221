// #/ (and #/capabilities): the capability list, Query.capabilities(filter:, orderBy:) a page at a
// time with Relay cursors. The filters and the order live in the hash (?q=, domain=, status=,
// priority=, health=, owner=, tag=, sort=, dir=, first=; the list ones repeat), so a filtered
// list is a link to share and back/forward step through filter changes. Filter chips show the
// catalogue-wide counts of catalogueSummary (a second, cheap operation; without it the chips
// show no counts).
import { h, replace, field } from '../dom.js';
import { gql } from '../api.js';
import { badge, healthBadge, label, mono, timeEl } from '../format.js';
import { inlineError, partialNotice } from '../errors.js';
import { STATUSES, PRIORITIES, HEALTH, parseState, listHash, filterOf, uniq } from '../liststate.js';

export { listHash };

const FIELDS = `
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes {
      capabilityId name businessDomain status priority owner updatedAt
      aggregates { healthScore healthStatus totalComponents activeComponents }
    }`;

export const LIST = `query CapabilityList($filter: CapabilityFilter, $orderBy: CapabilityOrder, $first: Int!, $after: String) {
  capabilities(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {${FIELDS}
  }
}`;

export const FACETS = `query CapabilityFacets {
  catalogueSummary {
    capabilityCount
    byDomain { domain count }
    byStatus { status count }
    byPriority { priority count }
    byHealthStatus { status count }
  }
}`;

const SIZES = [5, 10, 20, 50];
const DOMAINS_KEY = 'catalogue.domains';

function knownDomains() {
  try { return JSON.parse(sessionStorage.getItem(DOMAINS_KEY) || '[]'); } catch { return []; }
}

function remember(domains) {
  const all = new Set([...knownDomains(), ...domains]);
  sessionStorage.setItem(DOMAINS_KEY, JSON.stringify([...all].sort()));
}

const toggle = (xs, v) => (xs.includes(v) ? xs.filter((x) => x !== v) : [...xs, v]);

function title(st, filter) {
  if (!filter) return 'Capabilities';
  if (st.q && Object.keys(filter).length === 1) return `Capabilities matching “${st.q}”`;
  if (st.domains.length === 1 && Object.keys(filter).length === 1) return `Capabilities in ${st.domains[0]}`;
  return 'Capabilities, filtered';
}

async function facets(signal) {
  try {
    return (await gql(FACETS, {}, { signal })).catalogueSummary;
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    return null; // the chips go without counts
  }
}

export async function render(root, { params, signal }) {
  const st = parseState(params);
  const filter = filterOf(st);
  const orderBy = st.sort ? { field: st.sort, direction: st.dir } : null;
  document.title = `${title(st, filter)} · Capability Catalogue`;

  const summary = await facets(signal);
  const fetchPage = (after) => gql(LIST, { filter, orderBy, first: st.first, after }, { signal });
  const data = await fetchPage(null);
  const conn = data.capabilities;
  remember(conn.nodes.map((c) => c.businessDomain));
  const total = conn.totalCount;

  // Chips: a toggle per value, with the catalogue's count of it when the summary came.
  const counts = (list, key) => new Map((list || []).map((x) => [x[key], x.count]));
  const chipGroup = (name, legend, key, values, selected, countMap, text = label) => h('fieldset', { class: 'chip-group', dataset: { facet: name } },
    h('legend', {}, legend),
    h('div', { class: 'chip-row' }, values.map((v) => {
      const on = selected.includes(v);
      const n = countMap?.get(v);
      return h('button', {
        type: 'button', class: 'chip chip-button chip-toggle', 'aria-pressed': String(on),
        dataset: { facet: name, value: v, count: n ?? '' },
        onclick: () => { location.hash = listHash({ ...st, [key]: toggle(selected, v) }); },
      }, text(v), n === undefined ? null : h('span', { class: 'chip-count' }, h('span', { class: 'sr-only' }, ', '), String(n), h('span', { class: 'sr-only' }, ' in the catalogue')));
    })));
  const domainCounts = counts(summary?.byDomain, 'domain');
  const domainValues = uniq([...(summary ? summary.byDomain.map((d) => d.domain) : knownDomains()), ...st.domains]);

  const qInput = h('input', { type: 'search', name: 'q', value: st.q, placeholder: 'name, ID, tag or owner', autocomplete: 'off', spellcheck: 'false' });
  const ownerInput = h('input', { type: 'text', name: 'owner', value: st.owner, placeholder: 'any owner or team', autocomplete: 'off', spellcheck: 'false' });
  const tagsInput = h('input', { type: 'text', name: 'tags', value: st.tags.join(', '), placeholder: 'e.g. kyc, real-time', autocomplete: 'off', spellcheck: 'false' });
  const sizes = [...new Set([...SIZES, st.first])].sort((a, b) => a - b);
  const sizeSelect = h('select', { name: 'first' }, sizes.map((n) => h('option', { value: String(n), selected: n === st.first }, `${n} per page`)));
  const apply = () => {
    location.hash = listHash({ ...st, q: qInput.value.trim(), owner: ownerInput.value.trim(), tags: uniq(tagsInput.value.split(',')), first: Number(sizeSelect.value) });
  };
  sizeSelect.addEventListener('change', apply);
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter capabilities', onsubmit: (e) => { e.preventDefault(); apply(); } },
    field('Search', qInput),
    field('Owner', ownerInput),
    field('Tags (all of them)', tagsInput),
    field('Page size', sizeSelect),
    h('div', { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'),
      filter || st.sort || st.first !== 20 ? h('a', { class: 'btn btn-ghost', href: '#/', dataset: { testid: 'clear-filters' } }, 'Clear all') : null));
  const chips = h('div', { class: 'chip-groups', dataset: { testid: 'filter-chips' } },
    chipGroup('domain', 'Domain', 'domains', domainValues, st.domains, summary ? domainCounts : null, (v) => v),
    chipGroup('status', 'Status', 'statuses', STATUSES, st.statuses, summary ? counts(summary.byStatus, 'status') : null),
    chipGroup('priority', 'Priority', 'priorities', PRIORITIES, st.priorities, summary ? counts(summary.byPriority, 'priority') : null),
    chipGroup('health', 'Health', 'healths', HEALTH, st.healths, summary ? counts(summary.byHealthStatus, 'status') : null));

  const tbody = h('tbody');
  const addRows = (nodes) => { for (const c of nodes) tbody.appendChild(row(c)); };
  addRows(conn.nodes);
  let count = conn.nodes.length;

  const shown = h('p', { class: 'list-summary', role: 'status', dataset: { testid: 'list-count' } });
  const more = h('div', { class: 'load-more' });
  const updateFooter = (info) => {
    shown.dataset.shown = String(count);
    shown.dataset.total = String(total);
    shown.textContent = `${count} of ${total} capabilit${total === 1 ? 'y' : 'ies'}${filter ? ' matching' : ''}.`;
    replace(more, info.hasNextPage ? h('button', {
      type: 'button', class: 'btn', dataset: { testid: 'load-more' },
      async onclick(e) {
        const btn = e.currentTarget;
        btn.disabled = true;
        btn.textContent = 'Loading…';
        try {
          const next = (await fetchPage(info.endCursor)).capabilities;
          const firstNew = tbody.children.length;
          addRows(next.nodes);
          count += next.nodes.length;
          remember(next.nodes.map((c) => c.businessDomain));
          updateFooter(next.pageInfo);
          tbody.children[firstNew]?.querySelector('a')?.focus();
        } catch (err) {
          if (err?.name === 'AbortError') return;
          replace(more, inlineError(err), h('button', { type: 'button', class: 'btn', onclick: () => updateFooter(info) }, 'Retry'));
        }
      },
    }, `Load ${Math.min(st.first, total - count)} more`) : null);
  };
  updateFooter(conn.pageInfo);

  // A sortable header: a button in the th; aria-sort on the column the list is sorted by.
  const sortable = (text, fieldName, cls) => {
    const on = st.sort === fieldName;
    const next = on && st.dir === 'ASC' ? 'DESC' : 'ASC';
    return h('th', { scope: 'col', class: cls, 'aria-sort': on ? (st.dir === 'DESC' ? 'descending' : 'ascending') : 'none', dataset: { sort: fieldName } },
      h('button', {
        type: 'button', class: 'sort-button', dataset: { testid: `sort-${fieldName}` },
        onclick: () => { location.hash = listHash({ ...st, sort: fieldName, dir: next }); },
      }, text, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, on ? (st.dir === 'DESC' ? ' ▼' : ' ▲') : ' ↕'),
      h('span', { class: 'sr-only' }, on ? `, sorted ${st.dir === 'DESC' ? 'descending' : 'ascending'}; sort ${next === 'DESC' ? 'descending' : 'ascending'}` : ', sort')));
  };

  const table = conn.nodes.length
    ? h('div', { class: 'table-wrap' }, h('table', { class: 'table responsive middle', dataset: { testid: 'capability-table' } },
      h('caption', { class: 'sr-only' }, 'Capabilities', st.sort ? `, sorted by ${label(st.sort)} ${st.dir === 'DESC' ? 'descending' : 'ascending'}` : ''),
      h('thead', {}, h('tr', {},
        sortable('Capability', 'NAME'),
        h('th', { scope: 'col' }, 'Domain'),
        h('th', { scope: 'col' }, 'Status'),
        sortable('Priority', 'PRIORITY'),
        sortable('Health', 'HEALTH_SCORE'),
        h('th', { scope: 'col', class: 'num' }, 'Components'),
        sortable('Updated', 'UPDATED_AT'))),
      tbody))
    : h('div', { class: 'empty' }, h('p', {}, 'No capability matches these filters.'), h('a', { href: '#/', class: 'btn' }, 'Show all capabilities'));

  const order = st.sort ? `ordered by ${label(st.sort).toLowerCase()}, ${st.dir === 'DESC' ? 'descending' : 'ascending'}`
    : st.q ? 'by relevance' : filter ? 'in name order' : 'by domain, priority and name';
  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, title(st, filter)),
        h('p', { class: 'page-sub' }, 'Business capabilities and the health of the components that deliver them. ',
          h('span', { class: 'muted' }, `Query.capabilities, ${order}; chip counts are the whole catalogue's. `),
          h('a', { href: '#/owners' }, 'Owners'), ' · ', h('a', { href: '#/dashboard' }, 'Dashboard')))),
    partialNotice(data),
    h('section', { class: 'card', 'aria-label': 'Capability list' },
      form,
      chips,
      table,
      h('div', { class: 'list-foot' }, shown, more)));
}

function row(c) {
  const a = c.aggregates || {};
  return h('tr', { dataset: { capability: c.capabilityId } },
    h('td', { 'data-label': 'Capability', class: 'cell-main' },
      h('a', { class: 'row-link', href: `#/capability/${encodeURIComponent(c.capabilityId)}` }, c.name),
      h('div', { class: 'sub' }, mono(c.capabilityId), c.owner ? [' · ', h('a', { class: 'muted', href: `#/owner/${encodeURIComponent(c.owner)}` }, c.owner)] : null)),
    h('td', { 'data-label': 'Domain' }, h('a', { class: 'chip', href: listHash({ domain: c.businessDomain }), 'aria-label': `Capabilities in domain ${c.businessDomain}` }, c.businessDomain)),
    h('td', { 'data-label': 'Status' }, badge(c.status)),
    h('td', { 'data-label': 'Priority' }, badge(c.priority, { kind: 'priority' })),
    h('td', { 'data-label': 'Health' }, healthBadge(a.healthStatus, a.healthScore)),
    h('td', { 'data-label': 'Components', class: 'num' }, `${a.activeComponents ?? '—'} / ${a.totalComponents ?? '—'}`, h('span', { class: 'sr-only' }, ' active')),
    h('td', { 'data-label': 'Updated' }, timeEl(c.updatedAt)));
}
