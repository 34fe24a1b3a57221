// #/deployments : "Deployments now", the jobs PENDING or RUNNING across the catalogue
// (Query.activeJobs), oldest start first, a page at a time; ?type= (repeated) keeps some job
// types. The type chips show catalogueSummary.activeJobsByType when it answers.
import { h, replace } from '../dom.js';
import { gql } from '../api.js';
import { badge, label, mono, timeEl, date } from '../format.js';
import { partialNotice } from '../errors.js';
import { loadMore } from '../pager.js';

export const JOB_TYPES = ['DEPLOYMENT', 'ROLLBACK', 'CONFIGURATION', 'SCALING', 'MAINTENANCE', 'EMERGENCY'];
const PAGE = 25;

export const ACTIVE_JOBS = `query ActiveJobs($jobTypes: [JobType!], $first: Int!, $after: String) {
  activeJobs(jobTypes: $jobTypes, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes {
      jobId capabilityId jobType status priority triggeredBy startTime
      targetComponents { componentId fromVersion toVersion status }
    }
  }
}`;

export const ACTIVE_COUNTS = `query ActiveJobCounts {
  catalogueSummary { activeJobs activeJobsByType { jobType count } }
}`;

export function deploymentsHash(types) {
  const p = new URLSearchParams();
  for (const t of types) p.append('type', t);
  const q = p.toString();
  return q ? `#/deployments?${q}` : '#/deployments';
}

export async function render(root, { params, signal }) {
  const types = [...new Set(params.getAll('type').flatMap((v) => v.split(',')))].filter((t) => JOB_TYPES.includes(t));
  document.title = 'Deployments now · Capability Catalogue';
  let counts = null;
  try {
    counts = (await gql(ACTIVE_COUNTS, {}, { signal })).catalogueSummary;
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
  }
  const fetchPage = (after) => gql(ACTIVE_JOBS, { jobTypes: types.length ? types : null, first: PAGE, after }, { signal });
  const data = await fetchPage(null);
  const conn = data.activeJobs;
  const byType = new Map((counts?.activeJobsByType || []).map((c) => [c.jobType, c.count]));

  const chips = h('div', { class: 'chip-groups', dataset: { testid: 'job-type-chips' } },
    h('fieldset', { class: 'chip-group' }, h('legend', {}, 'Job type'),
      h('div', { class: 'chip-row' }, JOB_TYPES.map((t) => {
        const on = types.includes(t);
        const n = byType.get(t);
        return h('button', {
          type: 'button', class: 'chip chip-button chip-toggle', 'aria-pressed': String(on), dataset: { value: t, count: n ?? '' },
          onclick: () => { location.hash = deploymentsHash(on ? types.filter((x) => x !== t) : [...types, t]); },
        }, label(t), n === undefined ? null : h('span', { class: 'chip-count' }, h('span', { class: 'sr-only' }, ', '), String(n), h('span', { class: 'sr-only' }, ' active')));
      })),
      types.length ? h('a', { class: 'btn btn-ghost btn-small', href: '#/deployments' }, 'Every type') : null));

  const tbody = h('tbody');
  const summary = h('p', { class: 'list-summary', role: 'status', dataset: { testid: 'jobs-count', total: conn.totalCount } });
  const more = loadMore({
    tbody, row, conn, label: `Load ${PAGE} more`, testid: 'load-more',
    next: async (after) => (await fetchPage(after)).activeJobs,
    describe: (count) => { summary.textContent = `${count} of ${conn.totalCount} active job${conn.totalCount === 1 ? '' : 's'}.`; },
  });

  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, 'Deployments now'),
        h('p', { class: 'page-sub' }, 'Every job pending or running across the catalogue, the oldest first: what has been going on longest is on top. ',
          h('span', { class: 'muted' }, 'Query.activeJobs.')))),
    partialNotice(data),
    h('section', { class: 'card', 'aria-label': 'Active jobs' },
      chips,
      conn.nodes.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'table responsive middle', dataset: { testid: 'active-jobs' } },
          h('caption', { class: 'sr-only' }, 'Active jobs, oldest first'),
          h('thead', {}, h('tr', {}, ['Job', 'Capability', 'Type', 'Status', 'Started', 'Targets'].map((t) => h('th', { scope: 'col' }, t)))),
          tbody))
        : h('div', { class: 'empty' }, h('p', {}, types.length ? 'No job of these types is running or pending.' : 'Nothing is running or pending right now.')),
      h('div', { class: 'list-foot' }, summary, more)));
}

function row(j) {
  const capHash = `#/capability/${encodeURIComponent(j.capabilityId)}`;
  const targets = j.targetComponents || [];
  return h('tr', { dataset: { job: j.jobId, type: j.jobType, status: j.status, start: j.startTime } },
    h('td', { 'data-label': 'Job', class: 'cell-main' },
      h('a', { class: 'row-link', href: `${capHash}?job=${encodeURIComponent(j.jobId)}` }, j.jobId),
      j.triggeredBy ? h('div', { class: 'sub' }, `by ${j.triggeredBy}`) : null),
    h('td', { 'data-label': 'Capability' }, h('a', { href: capHash }, j.capabilityId)),
    h('td', { 'data-label': 'Type' }, label(j.jobType)),
    h('td', { 'data-label': 'Status' }, badge(j.status), j.priority ? [' ', badge(j.priority, { kind: 'priority' })] : null),
    h('td', { 'data-label': 'Started', title: date(j.startTime) }, timeEl(j.startTime)),
    h('td', { 'data-label': 'Targets' }, targets.length
      ? h('ul', { class: 'plain-list' }, targets.map((t) => h('li', {}, mono(t.componentId), t.toVersion ? ` → ${t.toVersion}` : '')))
      : h('span', { class: 'muted' }, '—')));
}
