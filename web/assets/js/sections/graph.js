// The dependency graph card: the SVG, its legend, the topological order, cycles, the critical
// path, and the blast radius of a selected component (one `impact` operation).
import { h, replace, card, onWidth, field } from '../dom.js';
import { gql } from '../api.js';
import { badge } from '../format.js';
import { inlineError } from '../errors.js';
import { renderGraph } from '../graph.js';

export const IMPACT = `query Impact($id: ID!, $componentId: ID!, $direction: ImpactDirection!, $maxDepth: Int!) {
  capability(id: $id) {
    impact(componentId: $componentId, direction: $direction, maxDepth: $maxDepth) {
      root { componentId name }
      affected {
        component { componentId name componentType }
        distance
        path { componentId name }
        outcome
      }
    }
  }
}`;

// OUTCOMES describes each ImpactOutcome: what it does to a dependent (the DEPENDENTS view) and
// what the dependency is to the component analysed (the DEPENDENCIES view). AT_RISK (a low
// criticality edge, or a medium one with a fallback) has its own colour, blue and dashed.
export const OUTCOMES = {
  FAILED: {
    tone: 'FAILED', text: 'Fails', pill: 'fails', needed: 'Hard dependency', neededPill: 'hard',
    title: 'A chain of critical or high hard dependencies reaches it: it fails too',
    neededTitle: 'A chain of critical or high hard dependencies reaches it: if it fails, so does the component analysed',
  },
  DEGRADED: {
    tone: 'DEGRADED', text: 'Degrades', pill: 'degrades', needed: 'Soft dependency', neededPill: 'soft',
    title: 'No chain fails it, but a medium or softened (fallback, optional) critical or high one degrades it',
    neededTitle: 'If it fails, the component analysed keeps serving, degraded',
  },
  AT_RISK: {
    tone: 'AT_RISK', text: 'At risk', pill: 'at risk', needed: 'Low-risk dependency', neededPill: 'at risk',
    title: 'Every chain to it crosses a low edge, or a medium one with a fallback: it keeps serving, with less margin',
    neededTitle: 'If it fails, the component analysed keeps serving, at risk',
  },
};
const outcome = (o) => OUTCOMES[o] || OUTCOMES.FAILED;

// chain renders a -> b -> c; each arrow wraps with the name after it.
const chain = (ids, byId, cls) => h('ol', { class: ['chain', cls] },
  ids.map((id, i) => h('li', {},
    i ? h('span', { class: 'chain-arrow', 'aria-hidden': 'true' }, '→') : null,
    h('span', { class: 'chain-item' }, byId.get(id)?.name || id))));

export function graphSection({ cap, signal }) {
  const dg = cap.dependencyGraph || { nodes: [], edges: [], cycles: [], criticalPath: [] };
  const byId = new Map(cap.components.map((c) => [c.componentId, c]));
  const nodeIds = (dg.nodes?.length ? dg.nodes : cap.components).map((n) => n.componentId);
  const components = nodeIds.map((id) => byId.get(id) || { componentId: id, name: id, componentType: '?' });
  const topo = dg.topologicalOrder ? dg.topologicalOrder.map((n) => n.componentId) : null;
  const cycles = (dg.cycles || []).map((cy) => cy.map((n) => n.componentId));
  const critical = (dg.criticalPath || []).map((n) => n.componentId);

  const wrap = h('div', { class: 'graph-wrap' });
  let graph = null;
  let selected = null;
  let impactState = null;

  // The impact panel.
  const direction = h('select', { name: 'direction' },
    h('option', { value: 'DEPENDENTS' }, 'What fails with it (dependents)'),
    h('option', { value: 'DEPENDENCIES' }, 'What it needs (dependencies)'));
  const depth = h('input', { type: 'number', name: 'maxDepth', min: '1', max: '50', value: '10', inputmode: 'numeric' });
  const result = h('div', { class: 'impact-result', 'aria-live': 'polite' },
    h('p', { class: 'muted' }, 'Select a component in the graph (click it, or Tab to it and press Enter), or use “Blast radius” in the component table.'));
  const title = h('h3', { class: 'impact-title', tabindex: '-1' }, 'Blast radius');
  const clearBtn = h('button', { type: 'button', class: 'btn btn-small btn-ghost', hidden: true, onclick: () => clearImpact() }, 'Clear');
  const panel = h('div', { class: 'impact-panel', dataset: { testid: 'impact-panel' } },
    h('div', { class: 'impact-head' }, title, clearBtn),
    h('form', {
      class: 'impact-form', onsubmit: (e) => { e.preventDefault(); if (selected) runImpact(selected); },
    },
    field('Direction', direction),
    field('Max depth', depth),
    h('button', { type: 'submit', class: 'btn', disabled: true }, 'Analyse')),
    result);
  direction.addEventListener('change', () => { if (selected) runImpact(selected); });

  let seq = 0;
  async function runImpact(cid) {
    selected = cid;
    panel.querySelector('button[type=submit]').disabled = false;
    clearBtn.hidden = false;
    graph?.select(cid);
    const comp = byId.get(cid);
    title.textContent = `Blast radius of ${comp?.name || cid}`;
    replace(result, h('p', { class: 'loading-inline', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Analysing…'));
    const mine = ++seq;
    const maxDepth = Math.max(1, Math.min(50, Number(depth.value) || 10));
    try {
      const data = await gql(IMPACT, { id: cap.capabilityId, componentId: cid, direction: direction.value, maxDepth }, { signal });
      if (mine !== seq) return;
      showImpact(data.capability?.impact, direction.value);
    } catch (err) {
      if (err?.name === 'AbortError' || mine !== seq) return;
      replace(result, inlineError(err));
    }
  }

  function showImpact(impact, dir) {
    if (!impact) {
      replace(result, h('p', {}, 'No impact data.'));
      return;
    }
    const affected = new Map(impact.affected.map((a) => [a.component.componentId, a]));
    const pathEdges = new Set();
    for (const a of impact.affected) {
      for (let i = 0; i + 1 < a.path.length; i++) pathEdges.add(`${a.path[i].componentId}\u0000${a.path[i + 1].componentId}`);
    }
    impactState = { root: impact.root.componentId, affected, pathEdges, direction: dir };
    graph?.setImpact(impactState);
    const count = (o) => impact.affected.filter((a) => a.outcome === o).length;
    const fails = count('FAILED');
    const degrades = count('DEGRADED');
    const atRisk = count('AT_RISK');
    const verb = dir === 'DEPENDENTS' ? 'depend on it' : 'are needed by it';
    replace(result,
      impact.affected.length
        ? h('p', { class: 'impact-summary' },
          h('strong', {}, `${impact.affected.length} component${impact.affected.length > 1 ? 's' : ''}`), ` ${verb}`,
          dir === 'DEPENDENTS' ? [': ', h('span', { class: 'text-bad' }, `${fails} fail${fails === 1 ? 's' : ''}`), ', ', h('span', { class: 'text-warn' }, `${degrades} degrade${degrades === 1 ? 's' : ''}`),
            atRisk ? [', ', h('span', { class: 'text-info' }, `${atRisk} at risk`)] : null, ' if it fails.'] : '.')
        : h('p', { class: 'impact-summary' }, dir === 'DEPENDENTS' ? 'Nothing depends on it: its failure stays contained.' : 'It depends on no other component.'),
      impact.affected.length && dir === 'DEPENDENTS' ? h('ul', { class: 'graph-legend impact-legend', 'aria-label': 'Impact legend', dataset: { testid: 'impact-legend' } },
        Object.entries(OUTCOMES).map(([o, d]) => h('li', { title: d.title }, h('span', { class: `lg-node lg-impact-${o.toLowerCase().replace('_', '-')}`, 'aria-hidden': 'true' }), d.text))) : null,
      impact.affected.length ? h('ol', { class: 'impact-list', dataset: { testid: 'impact-list' } },
        impact.affected.map((a) => h('li', { dataset: { component: a.component.componentId, outcome: a.outcome } },
          h('div', { class: 'impact-row' },
            h('strong', {}, a.component.name),
            dir === 'DEPENDENCIES'
              ? badge({ FAILED: 'RUNNING', DEGRADED: 'PENDING', AT_RISK: 'AT_RISK' }[a.outcome] || 'RUNNING', { text: outcome(a.outcome).needed, title: outcome(a.outcome).neededTitle })
              : badge(outcome(a.outcome).tone, { text: outcome(a.outcome).text, title: outcome(a.outcome).title }),
            h('span', { class: 'muted' }, `${a.distance} hop${a.distance > 1 ? 's' : ''}`)),
          chain(a.path.map((p) => p.componentId), byId, 'chain-small')))) : null);
  }

  function clearImpact() {
    selected = null;
    impactState = null;
    seq += 1;
    graph?.select(null);
    graph?.setImpact(null);
    clearBtn.hidden = true;
    panel.querySelector('button[type=submit]').disabled = true;
    title.textContent = 'Blast radius';
    replace(result, h('p', { class: 'muted' }, 'Select a component in the graph to see its blast radius.'));
  }

  const draw = (width) => {
    const orientation = width < 720 ? 'tb' : 'lr';
    if (graph && graph.layout.orientation === orientation) return;
    const hadFocus = wrap.contains(document.activeElement) ? document.activeElement.dataset.component : null;
    graph = renderGraph({
      components, edges: dg.edges || [], topo, cycles, critical, orientation,
      label: `Dependency graph of ${cap.name}: ${components.length} components, ${(dg.edges || []).length} dependencies${cycles.length ? `, ${cycles.length} cycle(s)` : ''}`,
      onSelect: (cid) => runImpact(cid),
    });
    replace(wrap, graph.svg);
    graph.fit();
    if (selected) graph.select(selected);
    if (impactState) graph.setImpact(impactState);
    if (hadFocus) graph.focus(hadFocus);
  };

  const legend = h('ul', { class: 'graph-legend', 'aria-label': 'Legend' },
    h('li', {}, h('span', { class: 'lg-edge lg-runtime', 'aria-hidden': 'true' }), 'Runtime'),
    h('li', {}, h('span', { class: 'lg-edge lg-data', 'aria-hidden': 'true' }), 'Data'),
    h('li', {}, h('span', { class: 'lg-edge lg-optional', 'aria-hidden': 'true' }), 'Optional / fallback'),
    h('li', {}, h('span', { class: 'lg-edge lg-critical', 'aria-hidden': 'true' }), 'Critical path'),
    h('li', {}, h('span', { class: 'lg-edge lg-cycle', 'aria-hidden': 'true' }), 'Cycle'),
    h('li', {}, h('span', { class: 'lg-node lg-healthy', 'aria-hidden': 'true' }), 'Healthy'),
    h('li', {}, h('span', { class: 'lg-node lg-degraded', 'aria-hidden': 'true' }), 'Degraded'),
    h('li', {}, h('span', { class: 'lg-node lg-unhealthy', 'aria-hidden': 'true' }), 'Unhealthy'),
    h('li', {}, h('span', { class: 'lg-node lg-unknown', 'aria-hidden': 'true' }), 'No health'));

  const facts = h('div', { class: 'graph-facts' },
    cycles.length
      ? h('div', { class: 'alert alert-error', role: 'note', dataset: { testid: 'graph-cycles' } },
        h('strong', {}, `${cycles.length} dependency cycle${cycles.length > 1 ? 's' : ''}: `),
        'no topological order exists; cycle edges are drawn in red.',
        cycles.map((cy) => chain([...cy, cy[0]], byId, 'chain-cycle')))
      : topo?.length ? h('div', { class: 'fact' }, h('span', { class: 'fact-label' }, 'Topological order'), chain(topo, byId)) : null,
    critical.length > 1 ? h('div', { class: 'fact' }, h('span', { class: 'fact-label' }, 'Critical path'), chain(critical, byId, 'chain-critical'), h('span', { class: 'muted fact-note' }, 'longest runtime chain by response time')) : null);

  const el = card({
    id: 'graph', title: 'Dependency graph',
    description: 'Each component sits left of (or above) the components it depends on, in layers along the topological order. Arrows point from a component to what it needs.',
  },
  components.length ? [facts, wrap, legend, panel] : h('p', { class: 'empty' }, 'No components, no graph.'));

  return {
    el,
    mounted() {
      if (components.length) onWidth(wrap, signal, draw);
    },
    showImpact(cid, scroll) {
      if (scroll) el.scrollIntoView({ behavior: 'smooth', block: 'start' });
      runImpact(cid);
      title.focus({ preventScroll: true });
    },
  };
}

