// #/ : the capability list, from the CAPABILITIES index, one domain (DOMAIN#) or one health
// status (HEALTH#), a page at a time with Relay cursors.
import { h, replace, field } from '../dom.js';
import { gql } from '../api.js';
import { badge, healthBadge, label, mono } from '../format.js';
import { inlineError, partialNotice } from '../errors.js';

const FIELDS = `
  pageInfo { hasNextPage endCursor }
  nodes {
    capabilityId name businessDomain status priority owner
    aggregates { healthScore healthStatus totalComponents activeComponents }
  }`;

export const LIST = `query CapabilityList($domain: String, $first: Int!, $after: String) {
  capabilities(domain: $domain, first: $first, after: $after) {${FIELDS}
  }
}`;

export const BY_HEALTH = `query CapabilitiesByHealth($status: HealthStatus!, $first: Int!, $after: String) {
  capabilitiesByHealth(status: $status, first: $first, after: $after) {${FIELDS}
  }
}`;

const HEALTH = ['HEALTHY', 'DEGRADED', 'UNHEALTHY', 'UNKNOWN'];
const SIZES = [5, 10, 20, 50];
const DOMAINS_KEY = 'catalogue.domains';

function knownDomains() {
  try { return JSON.parse(sessionStorage.getItem(DOMAINS_KEY) || '[]'); } catch { return []; }
}

function remember(domains) {
  const all = new Set([...knownDomains(), ...domains]);
  sessionStorage.setItem(DOMAINS_KEY, JSON.stringify([...all].sort()));
}

export function listHash({ domain, health, first } = {}) {
  const p = new URLSearchParams();
  if (health) p.set('health', health);
  else if (domain) p.set('domain', domain);
  if (first && first !== 20) p.set('first', String(first));
  const q = p.toString();
  return q ? `#/?${q}` : '#/';
}

export async function render(root, { params, signal }) {
  const health = HEALTH.includes(params.get('health')) ? params.get('health') : '';
  const domain = health ? '' : (params.get('domain') || '').trim();
  const asked = Number.parseInt(params.get('first'), 10);
  const first = asked >= 1 && asked <= 100 ? asked : 20;
  document.title = `${health ? `${label(health)} capabilities` : domain ? `Capabilities in ${domain}` : 'Capabilities'} · Capability Catalogue`;

  const fetchData = (after) => (health
    ? gql(BY_HEALTH, { status: health, first, after }, { signal })
    : gql(LIST, { domain: domain || null, first, after }, { signal }));
  const connOf = (d) => d.capabilitiesByHealth || d.capabilities;
  const fetchPage = (after) => fetchData(after).then(connOf);

  const data = await fetchData(null);
  const conn = connOf(data);
  remember(conn.nodes.map((c) => c.businessDomain));

  // Filters: domain and health use different indexes, so one excludes the other.
  const domainInput = h('input', { type: 'search', name: 'domain', value: domain, list: 'domain-options', placeholder: 'Any domain', autocomplete: 'off', disabled: !!health, spellcheck: 'false' });
  const healthSelect = h('select', { name: 'health' },
    h('option', { value: '' }, 'Any health'),
    HEALTH.map((s) => h('option', { value: s, selected: s === health }, label(s))));
  const sizes = [...new Set([...SIZES, first])].sort((a, b) => a - b);
  const sizeSelect = h('select', { name: 'first' }, sizes.map((n) => h('option', { value: String(n), selected: n === first }, `${n} per page`)));
  const go = () => {
    location.hash = listHash({ domain: domainInput.value.trim(), health: healthSelect.value, first: Number(sizeSelect.value) });
  };
  healthSelect.addEventListener('change', go);
  sizeSelect.addEventListener('change', go);
  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter capabilities', onsubmit: (e) => { e.preventDefault(); go(); } },
    field('Business domain', domainInput, health ? 'Clear the health filter to filter by domain.' : null),
    h('datalist', { id: 'domain-options' }, knownDomains().map((d) => h('option', { value: d }))),
    field('Health', healthSelect),
    field('Page size', sizeSelect),
    h('div', { class: 'filter-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'),
      (domain || health || first !== 20) ? h('a', { class: 'btn btn-ghost', href: '#/' }, 'Reset') : null));

  const index = health ? `HEALTH#${health} index, lowest score first` : domain ? `DOMAIN#${domain} index, by priority and name` : 'CAPABILITIES index, by domain, priority and name';

  const tbody = h('tbody');
  const addRows = (nodes) => { for (const c of nodes) tbody.appendChild(row(c)); };
  addRows(conn.nodes);
  let count = conn.nodes.length;

  const summary = h('p', { class: 'list-summary', role: 'status' });
  const more = h('div', { class: 'load-more' });
  const updateFooter = (info) => {
    summary.textContent = `${count} capabilit${count === 1 ? 'y' : 'ies'} shown${info.hasNextPage ? ', more available' : ''}.`;
    replace(more, info.hasNextPage ? h('button', {
      type: 'button', class: 'btn', dataset: { testid: 'load-more' },
      async onclick(e) {
        const btn = e.currentTarget;
        btn.disabled = true;
        btn.textContent = 'Loading…';
        try {
          const next = await fetchPage(info.endCursor);
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
    }, `Load ${first} more`) : null);
  };
  updateFooter(conn.pageInfo);

  const table = conn.nodes.length
    ? h('div', { class: 'table-wrap' }, h('table', { class: 'table responsive middle', dataset: { testid: 'capability-table' } },
      h('caption', { class: 'sr-only' }, 'Capabilities'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Capability'),
        h('th', { scope: 'col' }, 'Domain'),
        h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col' }, 'Priority'),
        h('th', { scope: 'col' }, 'Health'),
        h('th', { scope: 'col', class: 'num' }, 'Components'))),
      tbody))
    : h('div', { class: 'empty' }, h('p', {}, 'No capability matches these filters.'), h('a', { href: '#/', class: 'btn' }, 'Show all capabilities'));

  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, health ? `${label(health)} capabilities` : domain ? `Capabilities in ${domain}` : 'Capabilities'),
        h('p', { class: 'page-sub' }, 'Business capabilities and the health of the components that deliver them. ', h('span', { class: 'muted' }, `From the ${index}.`)))),
    partialNotice(data),
    h('section', { class: 'card', 'aria-label': 'Capability list' },
      form,
      table,
      h('div', { class: 'list-foot' }, summary, more)));
}

function row(c) {
  const a = c.aggregates || {};
  return h('tr', { dataset: { capability: c.capabilityId } },
    h('td', { 'data-label': 'Capability', class: 'cell-main' },
      h('a', { class: 'row-link', href: `#/capability/${encodeURIComponent(c.capabilityId)}` }, c.name),
      h('div', { class: 'sub' }, mono(c.capabilityId), c.owner ? h('span', { class: 'muted' }, ` · ${c.owner}`) : null)),
    h('td', { 'data-label': 'Domain' }, h('a', { class: 'chip', href: listHash({ domain: c.businessDomain }), 'aria-label': `Capabilities in domain ${c.businessDomain}` }, c.businessDomain)),
    h('td', { 'data-label': 'Status' }, badge(c.status)),
    h('td', { 'data-label': 'Priority' }, badge(c.priority, { kind: 'priority' })),
    h('td', { 'data-label': 'Health' }, healthBadge(a.healthStatus, a.healthScore)),
    h('td', { 'data-label': 'Components', class: 'num' }, `${a.activeComponents ?? '—'} / ${a.totalComponents ?? '—'}`, h('span', { class: 'sr-only' }, ' active')));
}
