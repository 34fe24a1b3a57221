// #/job/JOB-ID : one job, and its target components' performance across the deployment
// (Job.componentMetrics: from 15 minutes before its start to 15 minutes after its end, or now
// while it runs), p95 latency and availability per component with the start and end marked.
// One operation, JobPage.
import { h, replace, card, onWidth } from '../dom.js';
import { gql } from '../api.js';
import { badge, label, mono, duration, timeEl } from '../format.js';
import { partialNotice } from '../errors.js';
import { lineChart } from '../chart.js';

export const JOB_METRICS_FIRST = 1000;
export const MARGIN_MS = 15 * 60e3; // componentMetrics' default margin

export const JOB_PAGE = `query JobPage($id: ID!, $first: Int!) {
  job(id: $id) {
    jobId jobType status startTime endTime duration triggeredBy
    capability { capabilityId name }
    targetComponents { componentId fromVersion toVersion status }
    components { componentId name }
    componentMetrics(metricType: PERFORMANCE, first: $first) {
      nodes { componentId timestamp values { availability { value } latency { p95 } } }
      pageInfo { hasNextPage }
    }
  }
}`;

const fmtMs = (v) => (Math.abs(v) >= 100 ? String(Math.round(v)) : String(+v.toFixed(1)));
const fmtPct = (v) => `${+v.toFixed(3)}%`;

export async function render(root, { args, signal }) {
  const id = args[0];
  const data = await gql(JOB_PAGE, { id, first: JOB_METRICS_FIRST }, { signal });
  const j = data.job;
  if (!j) {
    document.title = 'Job not found · Capability Catalogue';
    replace(root,
      h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Job not found')),
      h('div', { class: 'card notice', dataset: { testid: 'not-found' } },
        h('p', {}, 'There is no job ', mono(id), ' in the catalogue.'),
        h('p', {}, h('a', { href: '#/deployments', class: 'btn' }, 'Deployments now'))));
    return;
  }
  document.title = `${j.jobId} · Capability Catalogue`;
  const names = new Map((j.components || []).map((c) => [c.componentId, c.name]));
  const targets = (j.targetComponents || []).map((t) => t.componentId);
  const start = Date.parse(j.startTime);
  const running = j.status === 'RUNNING' || j.status === 'PENDING' || !j.endTime;
  const end = running ? null : Date.parse(j.endTime);
  const domain = [start - MARGIN_MS, running ? Date.now() : end + MARGIN_MS];
  const markers = [{ t: start, key: 'start', label: 'Start' }];
  if (end !== null) markers.push({ t: end, key: 'end', label: 'End' });

  const conn = j.componentMetrics;
  const byComp = new Map(targets.map((c) => [c, []]));
  for (const m of conn?.nodes || []) {
    if (!byComp.has(m.componentId)) byComp.set(m.componentId, []);
    byComp.get(m.componentId).push(m);
  }
  const comps = [...byComp.keys()];
  const seriesOf = (f) => comps.map((c, i) => ({
    key: c, label: names.get(c) || c, cls: `s-c${i % 6}`,
    points: byComp.get(c).map((m) => ({ t: Date.parse(m.timestamp), v: f(m.values) })).filter((p) => Number.isFinite(p.v)),
  }));
  const latency = seriesOf((v) => v?.latency?.p95);
  const avail = seriesOf((v) => v?.availability?.value);
  const total = conn?.nodes?.length || 0;
  const when = running ? 'from 15 minutes before its start until now' : 'from 15 minutes before its start to 15 minutes after its end';
  const status = h('p', { class: 'metrics-status muted', role: 'status' },
    `${total} performance sample${total === 1 ? '' : 's'} of ${comps.length} target component${comps.length === 1 ? '' : 's'}, ${when}${conn?.pageInfo?.hasNextPage ? ` (the first ${JOB_METRICS_FIRST})` : ''}.`);
  const charts = h('div', { class: 'metrics-charts' });
  const draw = (width) => replace(charts,
    latency.some((se) => se.points.length) ? lineChart({
      title: 'Latency p95 (ms)', width, height: 220, format: fmtMs, unit: 'ms', domain, markers, testid: 'job-metrics-chart', data: { chart: 'latency' },
      describe: `p95 latency of each target component; the job started at ${new Date(start).toISOString()}${end !== null ? ` and ended at ${new Date(end).toISOString()}` : ' and is still running'}.`,
      series: latency,
    }) : null,
    avail.some((se) => se.points.length) ? lineChart({
      title: 'Availability (%)', width, height: 160, format: fmtPct, domain, markers, yMax: 100, testid: 'job-metrics-chart', data: { chart: 'availability' },
      describe: 'availability of each target component.',
      series: avail,
    }) : null);

  replace(root,
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' },
      h('ol', {},
        h('li', {}, h('a', { href: '#/' }, 'Capabilities')),
        h('li', {}, h('a', { href: `#/capability/${encodeURIComponent(j.capability.capabilityId)}?job=${encodeURIComponent(j.jobId)}` }, j.capability.name)),
        h('li', { 'aria-current': 'page' }, j.jobId))),
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, label(j.jobType), ' ', mono(j.jobId)),
        h('p', { class: 'page-sub' }, badge(j.status, { kind: 'status' }), ' Started ', timeEl(j.startTime),
          j.endTime ? [' · ended ', timeEl(j.endTime)] : null,
          j.duration != null ? ` · took ${duration(j.duration)}` : '',
          j.triggeredBy ? ` · by ${j.triggeredBy}` : ''))),
    partialNotice(data),
    card({ id: 'job-targets', title: 'Target components' },
      targets.length ? h('ul', { class: 'job-targets', dataset: { testid: 'job-targets' } },
        (j.targetComponents || []).map((t, i) => h('li', {},
          h('span', { class: ['swatch', `s-c${i % 6}`], 'aria-hidden': 'true' }), ' ',
          h('a', { href: `#/component/${encodeURIComponent(j.capability.capabilityId)}/${encodeURIComponent(t.componentId)}` }, names.get(t.componentId) || t.componentId), ' ', mono(t.componentId),
          t.fromVersion || t.toVersion ? h('span', { class: 'version-change' }, ' ', t.fromVersion || '?', ' → ', t.toVersion || '?') : null,
          t.status ? h('span', { class: 'muted' }, ` · ${label(t.status)}`) : null)))
        : h('p', { class: 'empty' }, 'This job names no target components.')),
    card({
      id: 'job-metrics', title: 'Performance across the deployment',
      description: 'Each target component’s PERFORMANCE samples around the job, the start and end marked.',
    }, status, total ? charts : h('p', { class: 'empty' }, 'No performance samples of the target components in this window.')));
  if (total) onWidth(charts, signal, draw, 16);
}
