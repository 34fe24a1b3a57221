// The jobs card: implementation jobs newest first, coloured by status, a page at a time.
import { h, replace, card } from '../dom.js';
import { gql } from '../api.js';
import { badge, label, mono, duration, timeEl } from '../format.js';
import { inlineError } from '../errors.js';

export const JOBS_FIRST = 4;

export const JOB_FIELDS = `
      pageInfo { hasNextPage endCursor }
      nodes {
        jobId jobType status priority triggeredBy approvedBy startTime endTime duration
        targetComponents { componentId fromVersion toVersion status }
        artifacts { name size downloadUrl }
      }`;

export const CAPABILITY_JOBS = `query CapabilityJobs($id: ID!, $first: Int!, $after: String) {
  capability(id: $id) {
    jobs(first: $first, after: $after) {${JOB_FIELDS}
    }
  }
}`;

const STATUS_ICON = { COMPLETED: '✓', FAILED: '✕', RUNNING: '●', PENDING: '○', ROLLED_BACK: '↺', CANCELLED: '–' };

function jobRow(j) {
  const targets = j.targetComponents || [];
  return h('li', { class: ['job', `job-${j.status.toLowerCase()}`], dataset: { job: j.jobId, status: j.status } },
    h('div', { class: 'job-status', 'aria-hidden': 'true' }, STATUS_ICON[j.status] || '•'),
    h('div', { class: 'job-main' },
      h('div', { class: 'job-title' },
        h('strong', {}, label(j.jobType)), ' ', mono(j.jobId),
        badge(j.status, { kind: 'status' }),
        j.priority ? badge(j.priority, { kind: 'priority', text: `${label(j.priority)} priority` }) : null),
      targets.length ? h('ul', { class: 'job-targets', 'aria-label': 'Target components' },
        targets.map((t) => h('li', {},
          mono(t.componentId),
          t.fromVersion || t.toVersion ? h('span', { class: 'version-change' }, ' ', t.fromVersion || '?', ' → ', t.toVersion || '?') : null,
          t.status ? h('span', { class: 'muted' }, ` · ${label(t.status)}`) : null))) : null,
      (j.artifacts || []).length ? h('ul', { class: 'job-artifacts', 'aria-label': `Artifacts of ${j.jobId}` },
        j.artifacts.map((a) => h('li', {},
          h('a', { href: a.downloadUrl, rel: 'noopener', download: a.name.split('/').pop() }, a.name),
          h('span', { class: 'muted' }, ` ${a.size < 1024 ? `${a.size} B` : `${(a.size / 1024).toFixed(1)} KB`}`)))) : null,
      h('div', { class: 'job-meta' },
        h('span', {}, j.status === 'PENDING' && new Date(j.startTime) > new Date() ? 'Scheduled ' : 'Started ', timeEl(j.startTime)),
        j.duration != null ? h('span', {}, ` · took ${duration(j.duration)}`) : j.status === 'RUNNING' ? h('span', {}, ' · in progress') : null,
        j.triggeredBy ? h('span', {}, ` · by ${j.triggeredBy}`) : null,
        j.approvedBy ? h('span', {}, `, approved by ${j.approvedBy}`) : null)));
}

export function jobsSection({ cap, conn, signal }) {
  const list = h('ol', { class: 'jobs', dataset: { testid: 'jobs' }, 'aria-label': 'Jobs, newest first' });
  const more = h('div', { class: 'load-more' });
  const count = h('p', { class: 'muted list-summary', role: 'status' });
  let shown = 0;
  const add = (c) => {
    const firstNew = list.children.length;
    for (const j of c.nodes) list.appendChild(jobRow(j));
    shown += c.nodes.length;
    count.textContent = `${shown} of ${cap.aggregates.totalJobs} job${cap.aggregates.totalJobs === 1 ? '' : 's'} shown, newest first.`;
    replace(more, c.pageInfo.hasNextPage ? h('button', {
      type: 'button', class: 'btn', dataset: { testid: 'jobs-more' },
      async onclick(e) {
        const btn = e.currentTarget;
        btn.disabled = true;
        btn.textContent = 'Loading…';
        try {
          const data = await gql(CAPABILITY_JOBS, { id: cap.capabilityId, first: JOBS_FIRST, after: c.pageInfo.endCursor }, { signal });
          const next = data.capability.jobs;
          add(next);
          list.children[list.children.length - next.nodes.length]?.setAttribute('tabindex', '-1');
          list.children[list.children.length - next.nodes.length]?.focus();
        } catch (err) {
          if (err?.name === 'AbortError') return;
          btn.disabled = false;
          btn.textContent = 'Retry';
          more.prepend(inlineError(err));
        }
      },
    }, 'Load more jobs') : null);
    return firstNew;
  };
  if (conn?.nodes?.length) add(conn);
  return card({ id: 'jobs', title: 'Jobs', description: 'Deployments, rollbacks, configuration, scaling and maintenance, newest first.' },
    conn?.nodes?.length ? [list, h('div', { class: 'list-foot' }, count, more)] : h('p', { class: 'empty' }, 'No jobs recorded.'));
}
