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
        validation {
          preDeployment { healthChecks smokeTests securityScan }
          postDeployment { functionalTests performanceTests integrationTests }
        }
        strategy { rollback { automatic threshold { errorRate latency } } }
        metrics { rollbacksTriggered deploymentsCompleted totalArtifactsDeployed }
        artifacts { name size downloadUrl }
      }`;

export const CAPABILITY_JOBS = `query CapabilityJobs($id: ID!, $first: Int!, $after: String) {
  capability(id: $id) {
    jobs(first: $first, after: $after) {${JOB_FIELDS}
    }
  }
}`;

const STATUS_ICON = { COMPLETED: '✓', FAILED: '✕', RUNNING: '●', PENDING: '○', ROLLED_BACK: '↺', CANCELLED: '–' };

// The gates a job has, in schema order: [stage, name, result].
const GATES = [
  ['preDeployment', 'healthChecks', 'Health checks'], ['preDeployment', 'smokeTests', 'Smoke tests'], ['preDeployment', 'securityScan', 'Security scan'],
  ['postDeployment', 'functionalTests', 'Functional tests'], ['postDeployment', 'performanceTests', 'Performance tests'], ['postDeployment', 'integrationTests', 'Integration tests'],
];
const GATE_ICON = { passed: '✓', failed: '✕', pending: '○', skipped: '–' };

// gatesList shows a deployment's validation gates (passed / failed / pending), before and after
// the rollout: a job moves on only through passed gates, and a failed one stops it.
function gatesList(j) {
  const v = j.validation || {};
  const gates = GATES.filter(([stage, name]) => v[stage]?.[name]).map(([stage, name, text]) => [stage, name, text, v[stage][name]]);
  if (!gates.length) return null;
  return h('ul', { class: 'job-gates', dataset: { testid: 'job-gates' }, 'aria-label': `Validation gates of ${j.jobId}` },
    gates.map(([stage, name, text, result]) => h('li', {
      class: ['gate', `gate-${result}`], dataset: { gate: name, result },
      title: `${stage === 'preDeployment' ? 'Before' : 'After'} the rollout: ${result}`,
    }, h('span', { 'aria-hidden': 'true' }, GATE_ICON[result] || '•'), ' ', text, h('span', { class: 'sr-only' }, `: ${result}`))));
}

// rollbackNote says how a deployment rolls itself back, and whether it did.
function rollbackNote(j) {
  const rb = j.strategy?.rollback;
  const triggered = j.metrics?.rollbacksTriggered || 0;
  if (!rb?.automatic && !triggered) return null;
  const th = rb?.threshold;
  return h('div', { class: 'job-rollback muted', dataset: { testid: 'job-rollback' } },
    rb?.automatic ? `Rolls back automatically${th ? ` above ${th.errorRate}% errors or ${th.latency} ms p95` : ''}` : '',
    triggered ? h('strong', { class: 'rollback-count' }, `${rb?.automatic ? ' · ' : ''}rolled back ${triggered === 1 ? 'once' : `${triggered} times`}`) : null);
}

function jobRow(j) {
  const targets = j.targetComponents || [];
  return h('li', { class: ['job', `job-${j.status.toLowerCase()}`], dataset: { job: j.jobId, status: j.status } },
    h('div', { class: 'job-status', 'aria-hidden': 'true' }, STATUS_ICON[j.status] || '•'),
    h('div', { class: 'job-main' },
      h('div', { class: 'job-title' },
        h('strong', {}, label(j.jobType)), ' ', h('a', { href: `#/job/${encodeURIComponent(j.jobId)}`, title: 'The job and its components’ metrics across it' }, mono(j.jobId)),
        badge(j.status, { kind: 'status' }),
        j.priority ? badge(j.priority, { kind: 'priority', text: `${label(j.priority)} priority` }) : null),
      targets.length ? h('ul', { class: 'job-targets', 'aria-label': 'Target components' },
        targets.map((t) => h('li', {},
          mono(t.componentId),
          t.fromVersion || t.toVersion ? h('span', { class: 'version-change', dataset: { from: t.fromVersion || '', to: t.toVersion || '' } }, ' ', t.fromVersion || '?', ' → ', t.toVersion || '?') : null,
          t.status ? h('span', { class: 'muted', dataset: { targetStatus: t.status } }, ` · ${label(t.status)}`) : null))) : null,
      gatesList(j),
      rollbackNote(j),
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
