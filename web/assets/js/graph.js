// The dependency graph as SVG: components in layers along the topological order (a component
// before the components it depends on), edges as curves with arrowheads, cycles in red, the
// critical path emphasised, and an impact overlay.
//
// Layout (a small Sugiyama): order the nodes topologically (the API's order, or a DFS order
// whose back edges are the cycle edges, drawn reversed); give each node the longest-path layer;
// split edges that span several layers with dummy points; order each layer by the barycenter of
// its neighbours; place each layer's nodes near their neighbours without overlap.
import { s, uid } from './dom.js';

const GEOMETRY = {
  // lr: layers left to right (wide screens); tb: top to bottom (narrow screens).
  lr: { w: 232, h: 58, layerGap: 64, crossGap: 26, dummy: 14, margin: 18 },
  tb: { w: 176, h: 54, layerGap: 56, crossGap: 16, dummy: 12, margin: 14 },
};

// layout computes positions. nodes: [{id}], edges: [{source, target}], topo: [id] or null.
export function layout(nodes, edges, topo, orientation = 'lr') {
  const g = GEOMETRY[orientation];
  const ids = nodes.map((n) => n.id);
  const known = new Set(ids);
  const out = new Map(ids.map((id) => [id, []]));
  const es = edges.filter((e) => known.has(e.source) && known.has(e.target));
  for (const e of es) if (e.source !== e.target) out.get(e.source).push(e.target);

  // 1. A topological order (or, with cycles, a DFS reverse postorder).
  let order;
  if (Array.isArray(topo) && topo.length === ids.length && topo.every((id) => known.has(id))) {
    order = topo.slice();
  } else {
    const seen = new Set();
    const post = [];
    const visit = (u) => {
      seen.add(u);
      for (const v of out.get(u)) if (!seen.has(v)) visit(v);
      post.push(u);
    };
    for (const id of ids) if (!seen.has(id)) visit(id);
    order = post.reverse();
  }
  const rank = new Map(order.map((id, i) => [id, i]));

  // 2. The DAG to layer: forward edges as they are, back edges reversed; self-loops apart.
  const dag = [];
  for (const e of es) {
    if (e.source === e.target) continue;
    const back = rank.get(e.source) > rank.get(e.target);
    dag.push({ edge: e, from: back ? e.target : e.source, to: back ? e.source : e.target, back });
  }

  // 3. Longest-path layers.
  const layerOf = new Map(ids.map((id) => [id, 0]));
  const dagOut = new Map(ids.map((id) => [id, []]));
  for (const d of dag) dagOut.get(d.from).push(d);
  for (const u of order) for (const d of dagOut.get(u)) layerOf.set(d.to, Math.max(layerOf.get(d.to), layerOf.get(u) + 1));
  const nLayers = Math.max(0, ...layerOf.values()) + 1;

  // 4. Slots: nodes and dummy points, with their neighbours above and below.
  const slots = new Map();
  const layers = Array.from({ length: nLayers }, () => []);
  const addSlot = (id, layer, dummy) => {
    const slot = { id, layer, dummy, up: [], down: [], size: dummy ? g.dummy : (orientation === 'lr' ? g.h : g.w) };
    slots.set(id, slot);
    layers[layer].push(slot);
    return slot;
  };
  for (const id of order) addSlot(id, layerOf.get(id), false);
  let dummies = 0;
  for (const d of dag) {
    const chain = [d.from];
    for (let l = layerOf.get(d.from) + 1; l < layerOf.get(d.to); l++) {
      dummies += 1;
      chain.push(addSlot(`\u0000d${dummies}`, l, true).id);
    }
    chain.push(d.to);
    for (let i = 0; i + 1 < chain.length; i++) {
      slots.get(chain[i]).down.push(chain[i + 1]);
      slots.get(chain[i + 1]).up.push(chain[i]);
    }
    d.chain = chain;
  }

  // 5. Crossing reduction: barycenter sweeps down and up.
  const position = () => {
    for (const layer of layers) layer.forEach((sl, i) => { sl.pos = i; });
  };
  position();
  const sweep = (range, key) => {
    for (const l of range) {
      const layer = layers[l];
      for (const sl of layer) {
        const nb = sl[key].map((id) => slots.get(id).pos);
        sl.bary = nb.length ? nb.reduce((a, b) => a + b, 0) / nb.length : sl.pos;
      }
      layer.sort((a, b) => a.bary - b.bary || a.pos - b.pos);
      layer.forEach((sl, i) => { sl.pos = i; });
    }
  };
  const down = [...Array(nLayers).keys()].slice(1);
  const up = [...Array(nLayers).keys()].reverse().slice(1);
  for (let i = 0; i < 6; i++) {
    sweep(down, 'up');
    sweep(up, 'down');
  }

  // 6. Cross-axis coordinates: stack, centre, then pull towards neighbours.
  const extent = (layer) => layer.reduce((a, sl) => a + sl.size, 0) + Math.max(0, layer.length - 1) * g.crossGap;
  const widest = Math.max(...layers.map(extent));
  for (const layer of layers) {
    let c = (widest - extent(layer)) / 2;
    for (const sl of layer) {
      sl.c = c + sl.size / 2;
      c += sl.size + g.crossGap;
    }
  }
  const place = (layer, keys) => {
    if (!layer.length) return;
    const want = layer.map((sl) => {
      const nb = keys.flatMap((k) => sl[k]).map((id) => slots.get(id).c);
      return nb.length ? nb.reduce((a, b) => a + b, 0) / nb.length : sl.c;
    });
    const c = [];
    layer.forEach((sl, i) => {
      c[i] = i === 0 ? want[0] : Math.max(want[i], c[i - 1] + (layer[i - 1].size + sl.size) / 2 + g.crossGap);
    });
    const shift = want.reduce((a, w, i) => a + (w - c[i]), 0) / layer.length;
    layer.forEach((sl, i) => { sl.c = c[i] + shift; });
  };
  for (let i = 0; i < 4; i++) {
    for (const l of down) place(layers[l], ['up']);
    for (const l of up) place(layers[l], ['down']);
  }
  for (const layer of layers) place(layer, ['up', 'down']);
  const minC = Math.min(...[...slots.values()].map((sl) => sl.c - sl.size / 2));
  for (const sl of slots.values()) sl.c -= minC;

  // 7. Map to x/y. Along the layer axis a layer occupies [start, start + depth].
  const depth = orientation === 'lr' ? g.w : g.h;
  const start = (l) => l * (depth + g.layerGap);
  const box = new Map();
  for (const sl of slots.values()) {
    if (sl.dummy) continue;
    const a = start(sl.layer);
    box.set(sl.id, orientation === 'lr'
      ? { x: a, y: sl.c - g.h / 2, w: g.w, h: g.h, layer: sl.layer }
      : { x: sl.c - g.w / 2, y: a, w: g.w, h: g.h, layer: sl.layer });
  }
  const pt = (along, cross) => (orientation === 'lr' ? { x: along, y: cross } : { x: cross, y: along });

  // 8. Edge routes: from the source's far side through the dummies to the target's near side,
  // ports spread along each node's side in the order of where the edges go.
  const ports = new Map(); // node id -> {out: [...], in: [...]}
  const port = (id) => ports.get(id) || ports.set(id, { out: [], in: [] }).get(id);
  for (const d of dag) {
    const nextC = slots.get(d.chain[1]).c;
    const prevC = slots.get(d.chain[d.chain.length - 2]).c;
    port(d.from).out.push({ d, c: nextC });
    port(d.to).in.push({ d, c: prevC });
  }
  const sideSize = orientation === 'lr' ? g.h : g.w;
  for (const p of ports.values()) {
    for (const side of ['out', 'in']) {
      const list = p[side].sort((a, b) => a.c - b.c);
      const span = Math.min(sideSize * 0.6, (list.length - 1) * 12);
      list.forEach((it, i) => { it.d[`${side}Offset`] = list.length > 1 ? -span / 2 + (span * i) / (list.length - 1) : 0; });
    }
  }
  const routes = [];
  for (const d of dag) {
    const pts = [];
    const src = slots.get(d.from);
    const dst = slots.get(d.to);
    pts.push(pt(start(src.layer) + depth, src.c + (d.outOffset || 0)));
    for (const id of d.chain.slice(1, -1)) {
      const sl = slots.get(id);
      pts.push(pt(start(sl.layer), sl.c), pt(start(sl.layer) + depth, sl.c));
    }
    pts.push(pt(start(dst.layer), dst.c + (d.inOffset || 0)));
    if (d.back) {
      // Drawn from the real source to the real target, a little apart from a forward twin.
      pts.reverse();
      for (const p of pts) {
        if (orientation === 'lr') p.y += 7;
        else p.x += 7;
      }
    }
    routes.push({ edge: d.edge, back: d.back, points: pts });
  }
  for (const e of es) {
    if (e.source !== e.target) continue;
    const b = box.get(e.source);
    routes.push({ edge: e, self: true, box: b });
  }

  // 9. Bounds.
  let maxX = 0;
  let maxY = 0;
  let minY = 0;
  for (const b of box.values()) {
    maxX = Math.max(maxX, b.x + b.w);
    maxY = Math.max(maxY, b.y + b.h);
  }
  for (const r of routes) {
    if (r.self) minY = Math.min(minY, r.box.y - 34);
    for (const p of r.points || []) {
      maxX = Math.max(maxX, p.x);
      maxY = Math.max(maxY, p.y);
    }
  }
  return { orientation, g, box, routes, width: maxX, height: maxY, minY, layers: nLayers };
}

function pathOf(points, orientation) {
  let d = `M${points[0].x.toFixed(1)},${points[0].y.toFixed(1)}`;
  for (let i = 1; i < points.length; i++) {
    const p = points[i - 1];
    const q = points[i];
    if (orientation === 'lr') {
      const mx = (q.x - p.x) / 2;
      d += ` C${(p.x + mx).toFixed(1)},${p.y.toFixed(1)} ${(q.x - mx).toFixed(1)},${q.y.toFixed(1)} ${q.x.toFixed(1)},${q.y.toFixed(1)}`;
    } else {
      const my = (q.y - p.y) / 2;
      d += ` C${p.x.toFixed(1)},${(p.y + my).toFixed(1)} ${q.x.toFixed(1)},${(q.y - my).toFixed(1)} ${q.x.toFixed(1)},${q.y.toFixed(1)}`;
    }
  }
  return d;
}

function selfLoop(b) {
  const x1 = b.x + b.w * 0.62;
  const x2 = b.x + b.w * 0.38;
  return `M${x1},${b.y} C${x1 + 8},${b.y - 34} ${x2 - 8},${b.y - 34} ${x2},${b.y}`;
}

const TYPE_CLASS = { RUNTIME: 'runtime', BUILDTIME: 'buildtime', DATA: 'data', OPTIONAL: 'optional', FALLBACK: 'fallback' };

// renderGraph draws the graph. components: [{componentId, name, componentType, version,
// health}], edges: Dependency[], topo: [componentId] | null, cycles: [[componentId]],
// critical: [componentId]. onSelect(componentId) runs when a node is activated.
export function renderGraph({ components, edges, topo, cycles = [], critical = [], orientation = 'lr', onSelect, label }) {
  const nodes = components.map((c) => ({ id: c.componentId }));
  const es = edges.map((e) => ({ ...e, source: e.sourceComponentId, target: e.targetComponentId }));
  const L = layout(nodes, es, topo, orientation);
  const { g } = L;
  const byId = new Map(components.map((c) => [c.componentId, c]));

  const cycleOf = new Map();
  cycles.forEach((cy, i) => cy.forEach((id) => cycleOf.set(id, i)));
  const criticalEdges = new Set();
  for (let i = 0; i + 1 < critical.length; i++) criticalEdges.add(`${critical[i]}\u0000${critical[i + 1]}`);

  const mk = uid('g');
  const marker = (name) => s('marker', {
    id: `${mk}-${name}`, class: `marker marker-${name}`, viewBox: '0 0 10 10', refX: '9.5', refY: '5',
    markerWidth: '9', markerHeight: '9', markerUnits: 'userSpaceOnUse', orient: 'auto',
  }, s('path', { d: 'M0,0.8 L10,5 L0,9.2 Z' }));
  const defs = s('defs', {}, ['default', 'critical', 'cycle', 'impact', 'muted', 'needed'].map(marker));

  const m = g.margin;
  const vbX = -m;
  const vbY = L.minY - m;
  const vbW = L.width + 2 * m;
  const vbH = L.height - L.minY + 2 * m;
  const svg = s('svg', {
    class: ['depgraph', `depgraph-${orientation}`],
    viewBox: `${vbX} ${vbY} ${vbW} ${vbH}`,
    width: String(Math.ceil(vbW)),
    height: String(Math.ceil(vbH)),
    role: 'group',
    'aria-label': label || `Dependency graph: ${components.length} components, ${edges.length} dependencies`,
    dataset: { testid: 'dependency-graph', orientation },
    style: { 'max-width': `${Math.ceil(vbW)}px` },
  }, defs);

  const edgeLayer = s('g', { class: 'edges' });
  const edgeEls = [];
  for (const r of L.routes) {
    const e = r.edge;
    const inCycle = e.source === e.target || (cycleOf.has(e.source) && cycleOf.get(e.source) === cycleOf.get(e.target));
    const isCritical = criticalEdges.has(`${e.source}\u0000${e.target}`);
    const state = inCycle ? 'cycle' : isCritical ? 'critical' : 'default';
    const d = r.self ? selfLoop(r.box) : pathOf(r.points, orientation);
    const srcName = byId.get(e.source)?.name || e.source;
    const dstName = byId.get(e.target)?.name || e.target;
    const el = s('g', {
      class: ['edge', `edge-${TYPE_CLASS[e.dependencyType] || 'runtime'}`, `crit-${String(e.criticality || '').toLowerCase()}`, inCycle && 'edge-cycle', isCritical && 'edge-critical', r.back && 'edge-back'],
      dataset: { source: e.source, target: e.target, type: e.dependencyType, criticality: e.criticality, state },
    },
    s('title', {}, `${srcName} → ${dstName}: ${String(e.dependencyType || '').toLowerCase()} dependency, ${String(e.criticality || '').toLowerCase()} criticality${e.fallback?.strategy ? `, fallback ${e.fallback.strategy}` : ''}${inCycle ? ' (in a cycle)' : ''}${isCritical ? ' (critical path)' : ''}`),
    s('path', { class: 'edge-hit', d }),
    s('path', { class: 'edge-line', d, 'marker-end': `url(#${mk}-${state})` }));
    el.dataset.marker = state;
    edgeEls.push(el);
    edgeLayer.appendChild(el);
  }

  const nodeLayer = s('g', { class: 'nodes' });
  const nodeEls = new Map();
  for (const c of components) {
    const b = L.box.get(c.componentId);
    if (!b) continue;
    const health = c.health?.status || 'UNKNOWN';
    const inCycle = cycleOf.has(c.componentId);
    const onCritical = critical.includes(c.componentId);
    const meta = [c.componentType, c.version && `v${c.version}`].filter(Boolean).join(' · ');
    const el = s('g', {
      class: ['node', `health-${health.toLowerCase()}`, inCycle && 'node-cycle', onCritical && 'node-critical'],
      transform: `translate(${b.x},${b.y})`,
      tabindex: '0',
      role: 'button',
      'aria-pressed': 'false',
      'aria-label': `${c.name}, ${c.componentType}, health ${health.toLowerCase()}${inCycle ? ', in a dependency cycle' : ''}. Show its blast radius.`,
      dataset: { component: c.componentId },
    },
    s('title', {}, `${c.name} (${c.componentId})`),
    s('rect', { class: 'node-box', width: String(b.w), height: String(b.h), rx: '10' }),
    s('rect', { class: 'node-stripe', x: '0', y: '0', width: '6', height: String(b.h), rx: '3' }),
    s('text', { class: 'node-name', x: '16', y: String(b.h / 2 - 5) }, c.name),
    s('text', { class: 'node-meta', x: '16', y: String(b.h / 2 + 13) }, meta),
    s('circle', { class: 'node-dot', cx: String(b.w - 14), cy: '14', r: '5' }),
    s('g', { class: 'node-pill', transform: `translate(${b.w - 10},-12)`, visibility: 'hidden' },
      s('rect', { class: 'node-pill-bg', y: '0', height: '19', rx: '9.5' }),
      s('text', { class: 'node-pill-text', y: '13.5' })));
    const activate = () => onSelect?.(c.componentId);
    el.addEventListener('click', activate);
    el.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        activate();
      }
    });
    nodeEls.set(c.componentId, el);
    nodeLayer.appendChild(el);
  }
  svg.append(edgeLayer, nodeLayer);

  // Once in the document, shorten names that do not fit their box.
  const fit = () => {
    for (const el of nodeEls.values()) {
      for (const [cls, max] of [['node-name', g.w - 42], ['node-meta', g.w - 26]]) {
        const t = el.querySelector(`.${cls}`);
        if (!t || typeof t.getComputedTextLength !== 'function') continue;
        const full = t.textContent;
        let n = full.length;
        while (n > 4 && t.getComputedTextLength() > max) {
          n -= 1;
          t.textContent = `${full.slice(0, n).trimEnd()}…`;
        }
      }
    }
  };

  // The impact overlay: root, affected components by outcome, and the edges on their paths.
  const setImpact = (impact) => {
    svg.classList.toggle('has-impact', !!impact);
    svg.classList.toggle('impact-dependencies', impact?.direction === 'DEPENDENCIES');
    const pill = (el, text) => {
      const g = el.querySelector('.node-pill');
      const t = g.querySelector('text');
      t.textContent = text || '';
      g.setAttribute('visibility', text ? 'visible' : 'hidden');
      if (!text) return;
      const w = Math.ceil((typeof t.getComputedTextLength === 'function' ? t.getComputedTextLength() : text.length * 6) + 16);
      g.querySelector('rect').setAttribute('x', String(-w));
      g.querySelector('rect').setAttribute('width', String(w));
      t.setAttribute('x', String(-w + 8));
    };
    for (const [id, el] of nodeEls) {
      el.classList.remove('impact-root', 'impact-failed', 'impact-degraded', 'impact-at-risk', 'impact-needed', 'impact-none');
      pill(el, '');
      if (!impact) continue;
      if (id === impact.root) {
        el.classList.add('impact-root');
        pill(el, impact.direction === 'DEPENDENCIES' ? 'analysed' : 'if this fails');
      } else if (impact.affected.has(id)) {
        const a = impact.affected.get(id);
        const hops = `${a.distance} hop${a.distance > 1 ? 's' : ''}`;
        // FAILED, DEGRADED and AT_RISK (a low edge, or a medium one with a fallback) each have a
        // class and a pill of their own.
        const o = { FAILED: ['failed', 'fails', 'hard'], DEGRADED: ['degraded', 'degrades', 'soft'], AT_RISK: ['at-risk', 'at risk', 'at risk'] }[a.outcome] || ['failed', 'fails', 'hard'];
        if (impact.direction === 'DEPENDENCIES') {
          el.classList.add('impact-needed');
          pill(el, `${o[2]} · ${hops}`);
        } else {
          el.classList.add(`impact-${o[0]}`);
          pill(el, `${o[1]} · ${hops}`);
        }
      } else el.classList.add('impact-none');
    }
    for (const el of edgeEls) {
      const key1 = `${el.dataset.source}\u0000${el.dataset.target}`;
      const key2 = `${el.dataset.target}\u0000${el.dataset.source}`;
      const on = !!impact && (impact.pathEdges.has(key1) || impact.pathEdges.has(key2));
      el.classList.toggle('edge-impact', on);
      const state = impact ? (on ? (impact.direction === 'DEPENDENCIES' ? 'needed' : 'impact') : 'muted') : el.dataset.state;
      el.querySelector('.edge-line').setAttribute('marker-end', `url(#${mk}-${state})`);
    }
  };
  const select = (id) => {
    for (const [nid, el] of nodeEls) {
      el.classList.toggle('selected', nid === id);
      el.setAttribute('aria-pressed', nid === id ? 'true' : 'false');
    }
  };
  const focus = (id) => nodeEls.get(id)?.focus();
  return { svg, fit, setImpact, select, focus, layout: L };
}
