// #/components/TYPE : the components of one type across every capability (the COMPONENT#
// index), a page at a time.
import { h, replace, field } from '../dom.js';
import { gql } from '../api.js';
import { badge, healthBadge, label, mono, pct, ms, timeEl } from '../format.js';
import { partialNotice } from '../errors.js';
import { loadMore } from '../pager.js';

export const BY_TYPE = `query ComponentsByType($type: String!, $first: Int!, $after: String) {
  componentsByType(type: $type, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes {
      componentId name capabilityId componentType layer version status
      health { status availability responseTime errorRate activeAlerts lastCheck }
      technology { stack language }
      ownership { team }
    }
  }
}`;

// The types the catalogue documents; any other type can be typed in.
export const TYPES = ['ui-dashboard', 'api-server', 'mcp-server', 'database', 'message-queue', 'cache', 'scheduler', 'worker'];
const PAGE = 25;

export async function render(root, { args, signal }) {
  const type = (args[0] || 'mcp-server').trim();
  document.title = `${type} components · Capability Catalogue`;
  const fetchPage = (after) => gql(BY_TYPE, { type, first: PAGE, after }, { signal });
  const data = await fetchPage(null);
  const conn = data.componentsByType;

  const input = h('input', { type: 'text', name: 'type', value: TYPES.includes(type) ? '' : type, placeholder: 'another type, e.g. gateway', autocomplete: 'off', spellcheck: 'false', pattern: '[A-Za-z0-9._:-]+' });
  const form = h('form', {
    class: 'filters filters-inline', role: 'search', 'aria-label': 'Component type',
    onsubmit(e) {
      e.preventDefault();
      const v = input.value.trim();
      if (v) location.hash = `#/components/${encodeURIComponent(v)}`;
    },
  },
  h('ul', { class: 'type-chips', 'aria-label': 'Documented component types' },
    TYPES.map((t) => h('li', {}, h('a', { class: 'chip', href: `#/components/${t}`, 'aria-current': t === type ? 'page' : null }, t)))),
  h('div', { class: 'type-other' }, field('Other type', input), h('button', { type: 'submit', class: 'btn' }, 'Show')));

  const tbody = h('tbody');
  const summary = h('p', { class: 'list-summary', role: 'status' });
  const more = loadMore({
    tbody, row, conn, label: `Load ${PAGE} more`,
    next: async (after) => (await fetchPage(after)).componentsByType,
    describe: (count, info) => { summary.textContent = `${count} ${type} component${count === 1 ? '' : 's'} shown${info.hasNextPage ? ', more available' : ''}.`; },
  });

  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, 'Components by type: ', h('span', { class: 'accent' }, type)),
        h('p', { class: 'page-sub' }, 'Every component of one type across all capabilities. ', h('span', { class: 'muted' }, `From the COMPONENT#${type} index, by capability and component ID.`)))),
    partialNotice(data),
    h('section', { class: 'card', 'aria-label': `${type} components` },
      form,
      conn.nodes.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'table responsive', dataset: { testid: 'components-by-type' } },
          h('caption', { class: 'sr-only' }, `${type} components`),
          h('thead', {}, h('tr', {}, ['Component', 'Capability', 'Layer', 'Version', 'Status', 'Health', 'Checked'].map((t) => h('th', { scope: 'col' }, t)))),
          tbody))
        : h('div', { class: 'empty' }, h('p', {}, `No component has the type “${type}”.`)),
      h('div', { class: 'list-foot' }, summary, more)));
}

function row(c) {
  const hl = c.health;
  const tech = c.technology?.language || c.technology?.stack;
  return h('tr', { dataset: { component: c.componentId } },
    h('td', { 'data-label': 'Component', class: 'cell-main' },
      h('div', { class: 'strong' }, c.name),
      h('div', { class: 'sub' }, mono(c.componentId), tech ? h('span', { class: 'muted' }, ` · ${tech}`) : null)),
    h('td', { 'data-label': 'Capability' }, h('a', { href: `#/capability/${encodeURIComponent(c.capabilityId)}` }, c.capabilityId)),
    h('td', { 'data-label': 'Layer' }, c.layer ? label(c.layer) : '—'),
    h('td', { 'data-label': 'Version' }, c.version ? mono(c.version) : '—'),
    h('td', { 'data-label': 'Status' }, badge(c.status)),
    h('td', { 'data-label': 'Health' }, healthBadge(hl?.status || 'UNKNOWN', null),
      hl ? h('div', { class: 'sub health-figures' }, `${pct(hl.availability)} · ${ms(hl.responseTime)}`) : null),
    h('td', { 'data-label': 'Checked' }, timeEl(hl?.lastCheck)));
}
