// #/owners : every owner (a capability's owner or a component's ownership.team) with counts
// (Query.owners); #/owner/NAME : one owner (Query.owner), its counts, capabilities and components,
// each a page at a time.
import { h, replace } from '../dom.js';
import { gql } from '../api.js';
import { badge, healthBadge, mono } from '../format.js';
import { partialNotice } from '../errors.js';
import { loadMore } from '../pager.js';
import { listHash } from './capabilities.js';

const PAGE = 25;

const CAP_FIELDS = `totalCount pageInfo { hasNextPage endCursor }
      nodes { capabilityId name businessDomain status priority owner aggregates { healthScore healthStatus } }`;
const COMP_FIELDS = `totalCount pageInfo { hasNextPage endCursor }
      nodes { componentId name capabilityId componentType status health { status } ownership { team } }`;

export const OWNER = `query OwnerPage($name: String!, $first: Int!) {
  owner(name: $name) {
    name capabilityCount componentCount
    capabilities(first: $first) { ${CAP_FIELDS} }
    components(first: $first) { ${COMP_FIELDS} }
  }
}`;

const OWNER_CAPS = `query OwnerCapabilities($name: String!, $first: Int!, $after: String) {
  owner(name: $name) { name capabilities(first: $first, after: $after) { ${CAP_FIELDS} } }
}`;

const OWNER_COMPS = `query OwnerComponents($name: String!, $first: Int!, $after: String) {
  owner(name: $name) { name components(first: $first, after: $after) { ${COMP_FIELDS} } }
}`;

export const OWNERS = `query Owners($first: Int!, $after: String) {
  owners(first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes { name capabilityCount componentCount }
  }
}`;

export const ownerHash = (name) => `#/owner/${encodeURIComponent(name)}`;

// pagedTable is a table with a footer "N of TOTAL" and "load more" by cursor.
function pagedTable({ testid, caption, head, conn, rowOf, more, noun }) {
  const tbody = h('tbody');
  const summary = h('p', { class: 'list-summary', role: 'status', dataset: { testid: `${testid}-count`, total: conn.totalCount } });
  const btn = loadMore({
    tbody, row: rowOf, conn, next: more, label: `Load ${PAGE} more`,
    describe: (count) => { summary.textContent = `${count} of ${conn.totalCount} ${noun}.`; },
  });
  return [
    conn.nodes.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'table responsive middle', dataset: { testid } },
        h('caption', { class: 'sr-only' }, caption),
        h('thead', {}, h('tr', {}, head.map((t) => h('th', { scope: 'col', class: t === 'Capabilities' || t === 'Components' ? 'num' : null }, t)))),
        tbody))
      : h('p', { class: 'empty' }, `No ${noun}.`),
    conn.nodes.length ? h('div', { class: 'list-foot' }, summary, btn) : null];
}

export async function renderOwner(root, { args, signal }) {
  const name = (args[0] || '').trim();
  document.title = `${name} · Owner · Capability Catalogue`;
  const data = await gql(OWNER, { name, first: PAGE }, { signal });
  const o = data.owner;
  if (!o) {
    replace(root,
      h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'No such owner')),
      h('div', { class: 'card notice', dataset: { testid: 'not-found' } },
        h('p', {}, 'Nothing in the catalogue is owned by ', h('strong', {}, name), '.'),
        h('p', {}, h('a', { href: '#/owners' }, 'Every owner'))));
    return;
  }
  const caps = pagedTable({
    testid: 'owner-capabilities', caption: `Capabilities of ${o.name}`, noun: 'capabilities',
    head: ['Capability', 'Domain', 'Status', 'Priority', 'Health'], conn: o.capabilities,
    more: async (after) => (await gql(OWNER_CAPS, { name, first: PAGE, after }, { signal })).owner.capabilities,
    rowOf: (c) => h('tr', { dataset: { capability: c.capabilityId } },
      h('td', { 'data-label': 'Capability', class: 'cell-main' },
        h('a', { class: 'row-link', href: `#/capability/${encodeURIComponent(c.capabilityId)}` }, c.name),
        h('div', { class: 'sub' }, mono(c.capabilityId), c.owner ? ` · owner ${c.owner}` : '')),
      h('td', { 'data-label': 'Domain' }, h('a', { class: 'chip', href: listHash({ domain: c.businessDomain }) }, c.businessDomain)),
      h('td', { 'data-label': 'Status' }, badge(c.status)),
      h('td', { 'data-label': 'Priority' }, badge(c.priority, { kind: 'priority' })),
      h('td', { 'data-label': 'Health' }, healthBadge(c.aggregates?.healthStatus, c.aggregates?.healthScore))),
  });
  const comps = pagedTable({
    testid: 'owner-components', caption: `Components of ${o.name}`, noun: 'components',
    head: ['Component', 'Capability', 'Type', 'Status', 'Health'], conn: o.components,
    more: async (after) => (await gql(OWNER_COMPS, { name, first: PAGE, after }, { signal })).owner.components,
    rowOf: (c) => h('tr', { dataset: { component: c.componentId } },
      h('td', { 'data-label': 'Component', class: 'cell-main' }, h('div', { class: 'strong' }, c.name), h('div', { class: 'sub' }, mono(c.componentId))),
      h('td', { 'data-label': 'Capability' }, h('a', { href: `#/capability/${encodeURIComponent(c.capabilityId)}` }, c.capabilityId)),
      h('td', { 'data-label': 'Type' }, h('a', { href: `#/components/${encodeURIComponent(c.componentType)}` }, c.componentType)),
      h('td', { 'data-label': 'Status' }, badge(c.status)),
      h('td', { 'data-label': 'Health' }, healthBadge(c.health?.status || 'UNKNOWN', null))),
  });

  replace(root,
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' }, h('ol', {}, h('li', {}, h('a', { href: '#/owners' }, 'Owners')), h('li', { 'aria-current': 'page' }, o.name))),
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, o.name),
        h('p', { class: 'page-sub' }, 'What this owner or team owns: capabilities whose owner it is or one of whose components its team owns, and the components its team owns. ',
          h('a', { href: listHash({ owner: o.name }) }, 'Filter the capability list by this owner')))),
    partialNotice(data),
    h('div', { class: 'kpis' },
      kpi('Capabilities', o.capabilityCount, 'owner-capability-count'),
      kpi('Components', o.componentCount, 'owner-component-count')),
    h('section', { class: 'card', 'aria-labelledby': 'owner-caps-title' }, h('h2', { id: 'owner-caps-title', class: 'card-title' }, 'Capabilities'), caps),
    h('section', { class: 'card', 'aria-labelledby': 'owner-comps-title' }, h('h2', { id: 'owner-comps-title', class: 'card-title' }, 'Components'), comps));
}

const kpi = (text, value, testid) => h('div', { class: 'kpi', dataset: { testid, value } },
  h('div', { class: 'kpi-label' }, text), h('div', { class: 'kpi-value' }, String(value)));

export async function renderOwners(root, { signal }) {
  document.title = 'Owners · Capability Catalogue';
  const fetchPage = async (after) => (await gql(OWNERS, { first: 100, after }, { signal })).owners;
  const conn = await fetchPage(null);
  const table = pagedTable({
    testid: 'owners-table', caption: 'Owners', noun: 'owners', head: ['Owner', 'Capabilities', 'Components'], conn, more: fetchPage,
    rowOf: (o) => h('tr', { dataset: { owner: o.name } },
      h('td', { 'data-label': 'Owner', class: 'cell-main' }, h('a', { class: 'row-link', href: ownerHash(o.name) }, o.name)),
      h('td', { 'data-label': 'Capabilities', class: 'num' }, String(o.capabilityCount)),
      h('td', { 'data-label': 'Components', class: 'num' }, String(o.componentCount))),
  });
  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, 'Owners'),
        h('p', { class: 'page-sub' }, 'Every capability owner and component team, in name order (names folded: lower case, no accents). ', h('span', { class: 'muted' }, 'Query.owners.')))),
    h('section', { class: 'card', 'aria-label': 'Owners' }, table));
}
