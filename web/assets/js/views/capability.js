// #/capability/ID : one capability in one operation: metadata, aggregates, components with
// their SLA standing, the dependency graph, metrics, jobs and rules; live: a subscription to the
// capability's changes refetches that operation once per burst of changes.
import { h, replace, card } from '../dom.js';
import { gql } from '../api.js';
import { badge, healthBadge, label, mono, pct, ms, num, money, day, timeEl, score } from '../format.js';
import { partialNotice } from '../errors.js';
import { listHash } from './capabilities.js';
import { graphSection } from '../sections/graph.js';
import { metricsSection, WINDOWS, DEFAULT_WINDOW, METRICS_FIRST, METRIC_FIELDS, windowStart } from '../sections/metrics.js';
import { jobsSection, JOB_FIELDS, JOBS_FIRST } from '../sections/jobs.js';
import { rulesSection, keepRulesState, RULE_FIELDS, NOTIFICATION_FIELDS } from '../sections/rules.js';
import { liveSection, liveCursor, coalescer, CAPABILITY_CHANGES } from '../sections/live.js';

export const CAPABILITY_PAGE = `query CapabilityPage($id: ID!, $from: DateTime!, $metricsFirst: Int!, $jobsFirst: Int!) {
  me { role allowedMutations }
  capability(id: $id) {
    capabilityId name description businessDomain status priority owner createdBy version tags revision createdAt updatedAt
    businessMetrics { sla rto rpo criticalityLevel }
    architecture { pattern deploymentModel scalabilityType redundancy }
    compliance { standards lastAudit certificationStatus }
    lifecycle { phase plannedRetirement lastMajorUpdate nextReview }
    aggregates {
      totalComponents activeComponents healthScore healthStatus totalDependencies totalJobs successfulJobs failedJobs
      totalRules activeRules lastDeployment averageDeploymentTime totalIncidents monthlyOperationalCost userCount
    }
    components {
      componentId name description componentType layer version status order
      health { status availability responseTime errorRate activeAlerts lastCheck }
      sla { availability responseTime errorRate }
      ownership { team }
    }
    slaReport {
      compositeAvailability target met breached
      components { component { componentId } availability responseTime errorRate met availabilityMet responseTimeMet errorRateMet }
    }
    dependencyGraph {
      nodes { componentId }
      edges { sourceComponentId targetComponentId dependencyType criticality fallback { strategy } }
      topologicalOrder { componentId }
      cycles { componentId }
      criticalPath { componentId }
    }
    jobs(first: $jobsFirst) {${JOB_FIELDS}}
    rules {${RULE_FIELDS}}
    notifications(first: 20) { nodes { ${NOTIFICATION_FIELDS} } }
    metrics(metricType: PERFORMANCE, from: $from, first: $metricsFirst) {${METRIC_FIELDS}}
  }
}`;

// Which parts of the page a change of each entity can alter; the hero, key figures, components
// and details follow every refetch. The other cards keep what the user did in them (an impact
// shown, a metrics window, rule input) unless a change of theirs came; the rules card keeps its
// input, rule type and result even then (keepRulesState): running the rules changes them.
const REBUILD = {
  COMPONENT: ['graph', 'metrics'],
  DEPENDENCY: ['graph'],
  METRIC: ['metrics'],
  JOB: ['jobs'],
  ARTIFACT: ['jobs'],
  RULE: ['rules'],
  NOTIFICATION: ['rules'],
  CAPABILITY: ['graph', 'metrics', 'jobs', 'rules'],
};
const ALWAYS = ['hero', 'partial', 'kpis', 'components', 'details'];

export async function render(root, { args, params, signal }) {
  const id = args[0];
  const windowKey = DEFAULT_WINDOW;
  // The live cursor first, the page second: whatever changes after the cursor is replayed by
  // the subscription, so nothing between the page's read and the subscription is lost.
  const after = await liveCursor(id, signal);
  const load = () => {
    const from = windowStart(WINDOWS[windowKey].ms);
    return gql(CAPABILITY_PAGE, { id, from, metricsFirst: METRICS_FIRST, jobsFirst: JOBS_FIRST }, { signal });
  };
  const data = await load();
  if (!data.capability) {
    notFound(root, id);
    return;
  }
  // The components card's "Blast radius" acts on the graph on screen, whichever build made it.
  const onImpact = (cid) => parts.graph.showImpact(cid, true);
  let parts = build(data, windowKey, signal, onImpact);
  const refresh = async (entities) => {
    const next = await load();
    if (signal.aborted) return;
    if (!next.capability) {
      notFound(root, id, live.el);
      return;
    }
    const fresh = build(next, windowKey, signal, onImpact);
    const keys = new Set(ALWAYS);
    for (const e of entities) for (const k of REBUILD[e] || []) keys.add(k);
    for (const k of keys) {
      if (k === 'rules') keepRulesState(parts.el[k], fresh.el[k]);
      parts.el[k].replaceWith(fresh.el[k]);
      parts.el[k] = fresh.el[k];
    }
    if (keys.has('graph')) {
      parts.graph = fresh.graph;
      fresh.graph.mounted();
    }
    parts.cap = next.capability;
    document.title = `${next.capability.name} · Capability Catalogue`;
  };
  // Every change of the capability refetches the page (CAPABILITY_PAGE), once per burst.
  let live = null;
  const onChange = coalescer({ refresh, signal, report: (r) => live.report(r) });
  live = liveSection({
    query: CAPABILITY_CHANGES,
    variables: (cursor) => ({ id, ...(cursor ? { after: cursor } : {}) }),
    after, signal, onChange,
    onRestart: () => onChange({ entity: 'CAPABILITY' }),
    what: 'Changes to this capability',
  });

  const el = parts.el;
  replace(root,
    breadcrumb(parts.cap),
    h('div', { class: 'live-bar' }, live.el),
    el.hero,
    el.partial,
    el.kpis,
    h('nav', { class: 'section-nav', 'aria-label': 'Sections of this capability' },
      SECTIONS.map(([sid, title]) => h('button', {
        type: 'button', class: 'chip chip-button',
        onclick() {
          const target = document.getElementById(sid);
          target?.scrollIntoView({ behavior: 'smooth', block: 'start' });
          target?.querySelector('.card-title')?.focus({ preventScroll: true });
        },
      }, title))),
    SECTIONS.map(([sid]) => el[sid]));
  parts.graph.mounted();
  // ?job=ID (a link from Deployments now): the jobs card in view, the job marked.
  const job = params?.get('job');
  if (job) {
    setTimeout(() => {
      const li = root.querySelector(`[data-testid=jobs] > li[data-job="${CSS.escape(job)}"]`);
      li?.classList.add('job-target');
      (li || document.getElementById('jobs'))?.scrollIntoView({ block: 'center' });
    }, 0);
  }
}

const SECTIONS = [
  ['components', 'Components'],
  ['graph', 'Dependency graph'],
  ['metrics', 'Metrics'],
  ['jobs', 'Jobs'],
  ['rules', 'Rules'],
  ['details', 'Details'],
];

// build returns the page's parts for one answer of CAPABILITY_PAGE.
function build(data, windowKey, signal, onImpact) {
  const cap = data.capability;
  document.title = `${cap.name} · Capability Catalogue`;
  const comps = cap.components || [];
  const slaById = new Map((cap.slaReport?.components || []).map((c) => [c.component.componentId, c]));
  const graph = graphSection({ cap, signal });
  return {
    cap,
    graph,
    el: {
      hero: hero(cap),
      partial: partialNotice(data) || h('span', { hidden: true }),
      kpis: kpis(cap),
      components: componentsCard(cap, comps, slaById, onImpact),
      graph: graph.el,
      metrics: metricsSection({ cap, conn: cap.metrics, windowKey, signal }),
      jobs: jobsSection({ cap, conn: cap.jobs, signal }),
      rules: rulesSection({ cap, me: data.me, signal }),
      details: detailsCard(cap),
    },
  };
}

function notFound(root, id, live) {
  document.title = 'Capability not found · Capability Catalogue';
  replace(root,
    breadcrumb(null, id),
    live ? h('div', { class: 'live-bar' }, live) : null,
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Capability not found')),
    h('div', { class: 'card notice', dataset: { testid: 'not-found' } },
      h('p', {}, 'There is no capability ', mono(id), ' in the catalogue.'),
      h('p', {}, h('a', { href: '#/', class: 'btn' }, 'Browse capabilities'))));
}

function breadcrumb(cap, id) {
  return h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' },
    h('ol', {},
      h('li', {}, h('a', { href: '#/' }, 'Capabilities')),
      cap ? h('li', {}, h('a', { href: listHash({ domain: cap.businessDomain }) }, cap.businessDomain)) : null,
      h('li', { 'aria-current': 'page' }, cap ? cap.name : id)));
}

function hero(cap) {
  const a = cap.aggregates;
  return h('header', { class: 'hero' },
    h('div', { class: 'hero-main' },
      h('div', { class: 'hero-title' },
        h('h1', { tabindex: '-1' }, cap.name),
        h('div', { class: 'hero-badges' },
          badge(cap.status, { title: 'Lifecycle status' }),
          badge(cap.priority, { kind: 'priority', title: 'Business priority', text: `${label(cap.priority)} priority` }),
          healthBadge(a.healthStatus, a.healthScore))),
      h('p', { class: 'hero-meta' },
        mono(cap.capabilityId), sep(),
        h('span', {}, 'Domain ', h('a', { href: listHash({ domain: cap.businessDomain }) }, cap.businessDomain)),
        cap.owner ? [sep(), h('span', {}, 'Owner ', h('a', { href: `#/owner/${encodeURIComponent(cap.owner)}`, class: 'strong', dataset: { testid: 'owner-link' } }, cap.owner))] : null,
        cap.version ? [sep(), h('span', {}, `v${cap.version}`)] : null,
        sep(), h('span', {}, `Revision ${cap.revision}`),
        sep(), h('span', {}, 'Updated ', timeEl(cap.updatedAt))),
      cap.description ? h('p', { class: 'hero-desc' }, cap.description) : null,
      cap.tags?.length ? h('ul', { class: 'tags', 'aria-label': 'Tags' }, cap.tags.map((t) => h('li', { class: 'tag' }, t))) : null));
}

const sep = () => h('span', { class: 'sep', 'aria-hidden': 'true' }, '·');

function kpi(labelText, value, sub, { toneName, testid } = {}) {
  return h('div', { class: ['kpi', toneName && `kpi-${toneName}`], dataset: { testid } },
    h('div', { class: 'kpi-label' }, labelText),
    h('div', { class: 'kpi-value' }, value),
    sub ? h('div', { class: 'kpi-sub' }, sub) : null);
}

function kpis(cap) {
  const a = cap.aggregates;
  const r = cap.slaReport || {};
  const g = cap.dependencyGraph || {};
  const healthTone = { HEALTHY: 'good', DEGRADED: 'warn', UNHEALTHY: 'bad' }[a.healthStatus] || 'neutral';
  const meter = h('div', { class: 'meter', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': '100', 'aria-valuenow': String(a.healthScore ?? 0), 'aria-label': 'Health score' },
    h('span', { class: 'meter-fill', style: { width: `${Math.max(0, Math.min(100, a.healthScore || 0))}%` } }));
  return h('section', { class: 'kpis', 'aria-label': 'Key figures' },
    kpi('Health score', [h('span', {}, a.healthStatus === 'UNKNOWN' ? '—' : score(a.healthScore)), h('span', { class: 'kpi-unit' }, ' / 100')],
      [meter, h('span', {}, `${num(a.totalIncidents)} incident${a.totalIncidents === 1 ? '' : 's'} recorded`)], { toneName: healthTone, testid: 'kpi-health' }),
    kpi('Composite availability', r.compositeAvailability == null ? '—' : pct(r.compositeAvailability),
      availabilityNote(r), { toneName: r.met === false ? 'bad' : r.met ? 'good' : 'neutral' }),
    kpi('Components', [h('span', {}, num(a.activeComponents)), h('span', { class: 'kpi-unit' }, ` / ${num(a.totalComponents)} active`)],
      slaNote(r), { toneName: r.breached ? 'bad' : undefined }),
    kpi('Dependencies', num(a.totalDependencies),
      g.cycles?.length ? `${g.cycles.length} cycle${g.cycles.length > 1 ? 's' : ''}` : 'No cycles', { toneName: g.cycles?.length ? 'bad' : undefined }),
    kpi('Jobs', num(a.totalJobs), [`${num(a.successfulJobs)} succeeded · ${num(a.failedJobs)} failed`, h('br'), 'Last deploy ', timeEl(a.lastDeployment)], { testid: 'kpi-jobs' }),
    kpi('Rules', [h('span', {}, num(a.activeRules)), h('span', { class: 'kpi-unit' }, ` / ${num(a.totalRules)} active`)], `${num(a.userCount)} users · ${money(a.monthlyOperationalCost)}/mo`));
}

function availabilityNote(r) {
  if (r.compositeAvailability == null) return r.target == null ? 'No component reports health' : `No health reported; target ${pct(r.target)}`;
  if (r.target == null || r.met == null) return 'No availability objective';
  return [r.met ? badge('COMPLETED', { text: 'Meets' }) : badge('FAILED', { text: 'Below' }), ` target ${pct(r.target)}`];
}

function slaNote(r) {
  const measured = (r.components || []).filter((c) => c.met !== null && c.met !== undefined).length;
  if (r.breached) return `${r.breached} breach${r.breached === 1 ? 'es its' : ' their'} SLA`;
  if (!measured) return 'No SLA data yet';
  return measured === (r.components || []).length ? 'All within SLA' : `${measured} measured, all within SLA`;
}

function slaCell(sla, comp) {
  if (!sla || sla.met === null || sla.met === undefined) return h('span', { class: 'sla sla-none' }, 'No data');
  const t = comp.sla;
  const detail = t ? `Objectives: availability ≥ ${pct(t.availability)}, response ≤ ${ms(t.responseTime)}, errors ≤ ${pct(t.errorRate)}` : '';
  if (sla.met) return h('span', { class: 'sla sla-met', title: detail, dataset: { sla: 'met' } }, h('span', { 'aria-hidden': 'true' }, '✓ '), 'Met');
  const broken = [
    sla.availabilityMet === false && 'availability',
    sla.responseTimeMet === false && 'response time',
    sla.errorRateMet === false && 'error rate',
  ].filter(Boolean);
  return h('span', { class: 'sla sla-breached', title: detail, dataset: { sla: 'breached' } },
    h('span', { 'aria-hidden': 'true' }, '✕ '), 'Breached', broken.length ? h('span', { class: 'sla-what' }, `: ${broken.join(', ')}`) : null);
}

function componentsCard(cap, comps, slaById, onImpact) {
  const rows = comps.map((c) => {
    const hl = c.health;
    return h('tr', { dataset: { component: c.componentId } },
      h('td', { 'data-label': 'Component', class: 'cell-main' },
        h('div', { class: 'strong' }, c.name),
        h('div', { class: 'sub' }, mono(c.componentId), c.ownership?.team ? [' · ', h('a', { class: 'muted', href: `#/owner/${encodeURIComponent(c.ownership.team)}` }, c.ownership.team)] : null)),
      h('td', { 'data-label': 'Type' }, h('a', { class: 'chip', href: `#/components/${encodeURIComponent(c.componentType)}`, 'aria-label': `All ${c.componentType} components` }, c.componentType)),
      h('td', { 'data-label': 'Layer' }, c.layer ? label(c.layer) : '—'),
      h('td', { 'data-label': 'Version' }, c.version ? mono(c.version) : '—'),
      h('td', { 'data-label': 'Status' }, badge(c.status)),
      h('td', { 'data-label': 'Health' },
        healthBadge(hl?.status || 'UNKNOWN', null),
        hl ? h('div', { class: 'sub health-figures' }, `${pct(hl.availability)} · ${ms(hl.responseTime)} · ${pct(hl.errorRate)} errors`, hl.activeAlerts ? h('span', { class: 'alerts' }, ` · ${hl.activeAlerts} alert${hl.activeAlerts > 1 ? 's' : ''}`) : null) : null),
      h('td', { 'data-label': 'SLA' }, slaCell(slaById.get(c.componentId), c)),
      h('td', { 'data-label': 'Impact', class: 'cell-action' },
        h('button', { type: 'button', class: 'btn btn-small btn-ghost', 'aria-label': `Blast radius of ${c.name}`, onclick: () => onImpact(c.componentId) }, 'Blast radius')));
  });
  return card({ id: 'components', title: 'Components', description: `${comps.length} component${comps.length === 1 ? '' : 's'} in dependency order, with their SLA standing from slaReport.` },
    comps.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'table responsive', dataset: { testid: 'components-table' } },
        h('caption', { class: 'sr-only' }, `Components of ${cap.name}`),
        h('thead', {}, h('tr', {}, ['Component', 'Type', 'Layer', 'Version', 'Status', 'Health', 'SLA'].map((t) => h('th', { scope: 'col' }, t)), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')))),
        h('tbody', {}, rows)))
      : h('p', { class: 'empty' }, 'This capability has no components yet.'));
}

function dl(title, pairs) {
  const items = pairs.filter(([, v]) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && !v.length));
  return h('div', { class: 'dl-group' },
    h('h3', {}, title),
    items.length
      ? h('dl', {}, items.map(([k, v]) => [h('dt', {}, k), h('dd', {}, Array.isArray(v) ? v.join(', ') : v)]))
      : h('p', { class: 'muted' }, 'Not recorded'));
}

function detailsCard(cap) {
  const bm = cap.businessMetrics || {};
  const ar = cap.architecture || {};
  const co = cap.compliance || {};
  const lc = cap.lifecycle || {};
  const a = cap.aggregates;
  return card({ id: 'details', title: 'Details', description: 'Objectives, architecture, compliance and lifecycle as recorded on the capability.' },
    h('div', { class: 'dl-grid' },
      dl('Service objectives', [['SLA', bm.sla], ['RTO', bm.rto], ['RPO', bm.rpo], ['Tier', bm.criticalityLevel]]),
      dl('Architecture', [['Pattern', ar.pattern], ['Deployment', ar.deploymentModel], ['Scaling', ar.scalabilityType], ['Redundancy', ar.redundancy]]),
      dl('Compliance', [['Standards', co.standards], ['Certification', co.certificationStatus], ['Last audit', co.lastAudit && day(co.lastAudit)]]),
      dl('Lifecycle', [['Phase', lc.phase], ['Last major update', lc.lastMajorUpdate && day(lc.lastMajorUpdate)], ['Next review', lc.nextReview && day(lc.nextReview)], ['Planned retirement', lc.plannedRetirement && day(lc.plannedRetirement)]]),
      dl('Operations', [['Average deployment', a.averageDeploymentTime], ['Incidents', num(a.totalIncidents)], ['Users', num(a.userCount)], ['Monthly cost', money(a.monthlyOperationalCost)]]),
      dl('Record', [['Created', day(cap.createdAt)], ['Created by', cap.createdBy], ['Updated', day(cap.updatedAt)], ['Revision', String(cap.revision)]])));
}
