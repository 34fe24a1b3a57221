// #/dashboard : the catalogue in numbers (Query.catalogueSummary, one operation): key figures,
// and the breakdowns by domain, health, lifecycle stage, priority, component type and active job
// type as bar charts built with the DOM helpers (CSS bars, widths set through the CSSOM, which
// the page's Content-Security-Policy allows; no chart library). Each bar links to the list it
// counts.
import { h, replace } from '../dom.js';
import { gql } from '../api.js';
import { label, score, tone } from '../format.js';
import { partialNotice } from '../errors.js';
import { listHash } from './capabilities.js';
import { deploymentsHash } from './deployments.js';

export const SUMMARY = `query Dashboard {
  catalogueSummary {
    capabilityCount componentCount meanHealthScore activeJobs
    byDomain { domain count }
    byStatus { status count }
    byPriority { priority count }
    byHealthStatus { status count }
    componentsByType { type count }
    componentsByHealthStatus { status count }
    activeJobsByType { jobType count }
  }
}`;

// bars is a labelled bar chart: one row per item, the bar's length relative to the largest.
function bars({ testid, title, items, text = label, href, toneOf }) {
  const max = Math.max(1, ...items.map((i) => i.count));
  const total = items.reduce((a, i) => a + i.count, 0);
  return h('section', { class: 'card chart-card', 'aria-labelledby': `${testid}-title` },
    h('h2', { class: 'card-title', id: `${testid}-title` }, title),
    items.length
      ? h('ul', { class: 'bars', dataset: { testid } }, items.map((i) => {
        const name = text(i.key);
        const link = href ? href(i.key) : null;
        const labelEl = link ? h('a', { href: link }, name) : h('span', {}, name);
        return h('li', { class: 'bar-row', dataset: { key: i.key, count: i.count } },
          h('span', { class: 'bar-label' }, labelEl),
          h('span', { class: 'bar-track', 'aria-hidden': 'true' },
            h('span', { class: ['bar-fill', toneOf && `fill-${tone(i.key)}`], style: { width: `${(100 * i.count) / max}%` } })),
          h('span', { class: 'bar-value' }, String(i.count),
            h('span', { class: 'sr-only' }, total ? ` of ${total} (${Math.round((100 * i.count) / total)}%)` : '')));
      }))
      : h('p', { class: 'muted' }, 'None.'));
}

export async function render(root, { signal }) {
  document.title = 'Dashboard · Capability Catalogue';
  const data = await gql(SUMMARY, {}, { signal });
  const s = data.catalogueSummary;
  const kpi = (text, value, testid, href, sub) => h('div', { class: 'kpi', dataset: { testid, value: value ?? '' } },
    h('div', { class: 'kpi-label' }, href ? h('a', { href }, text) : text),
    h('div', { class: 'kpi-value' }, value === null || value === undefined ? '—' : typeof value === 'number' && !Number.isInteger(value) ? score(value) : String(value)),
    sub ? h('div', { class: 'kpi-sub' }, sub) : null);
  const items = (list, key) => list.map((x) => ({ key: x[key], count: x.count }));

  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, 'Dashboard'),
        h('p', { class: 'page-sub' }, 'The catalogue in numbers, exact after every write. ', h('span', { class: 'muted' }, 'Query.catalogueSummary, one operation.')))),
    partialNotice(data),
    h('div', { class: 'kpis', dataset: { testid: 'dashboard-kpis' } },
      kpi('Capabilities', s.capabilityCount, 'kpi-capabilities', '#/'),
      kpi('Components', s.componentCount, 'kpi-components', '#/components'),
      kpi('Mean health score', s.meanHealthScore, 'kpi-mean-health', null, 'of the capabilities that report one'),
      kpi('Active jobs', s.activeJobs, 'kpi-active-jobs', '#/deployments', 'pending or running')),
    h('div', { class: 'chart-grid' },
      bars({ testid: 'by-domain', title: 'Capabilities by domain', items: items(s.byDomain, 'domain'), text: (v) => v, href: (v) => listHash({ domain: v }) }),
      bars({ testid: 'by-health', title: 'Capabilities by health', items: items(s.byHealthStatus, 'status'), href: (v) => listHash({ health: v }), toneOf: true }),
      bars({ testid: 'by-status', title: 'Capabilities by lifecycle stage', items: items(s.byStatus, 'status'), href: (v) => listHash({ statuses: [v] }), toneOf: true }),
      bars({ testid: 'by-priority', title: 'Capabilities by priority', items: items(s.byPriority, 'priority'), href: (v) => listHash({ priorities: [v] }), toneOf: true }),
      bars({ testid: 'components-by-type', title: 'Components by type', items: items(s.componentsByType, 'type'), text: (v) => v, href: (v) => `#/components/${encodeURIComponent(v)}` }),
      bars({ testid: 'components-by-health', title: 'Components by health', items: items(s.componentsByHealthStatus, 'status'), toneOf: true }),
      bars({ testid: 'active-jobs-by-type', title: 'Active jobs by type', items: items(s.activeJobsByType, 'jobType'), href: (v) => deploymentsHash([v]) })));
}
