// Unit tests of the explorer's pure functions, without a browser: the layered graph layout
// and the chart's tick rounding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layout } from '../assets/js/graph.js';
import { niceTicks } from '../assets/js/chart.js';

const nodes = (...ids) => ids.map((id) => ({ id }));
const edges = (...pairs) => pairs.map(([source, target]) => ({ source, target }));

// overlaps reports boxes of one layer that overlap.
function overlaps(L) {
  const boxes = [...L.box.entries()];
  const bad = [];
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i];
      const [b, q] = boxes[j];
      if (p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h) bad.push(`${a}/${b}`);
    }
  }
  return bad;
}

test('layers follow the topological order: every edge goes to a later layer', () => {
  const ns = nodes('ui', 'mcp', 'api', 'db');
  const es = edges(['ui', 'api'], ['api', 'db'], ['mcp', 'api'], ['mcp', 'db'], ['ui', 'mcp']);
  for (const o of ['lr', 'tb']) {
    const L = layout(ns, es, ['ui', 'mcp', 'api', 'db'], o);
    for (const e of es) assert.ok(L.box.get(e.source).layer < L.box.get(e.target).layer, `${e.source} -> ${e.target} in ${o}`);
    assert.equal(L.layers, 4);
    assert.deepEqual(overlaps(L), []);
    // An edge over two layers bends around the layer between: more than two points.
    const long = L.routes.find((r) => r.edge.source === 'ui' && r.edge.target === 'api');
    assert.ok(long.points.length > 2);
  }
});

test('left to right, a component sits left of what it depends on; top to bottom, above', () => {
  const L1 = layout(nodes('a', 'b'), edges(['a', 'b']), ['a', 'b'], 'lr');
  assert.ok(L1.box.get('a').x + L1.box.get('a').w <= L1.box.get('b').x);
  const L2 = layout(nodes('a', 'b'), edges(['a', 'b']), ['a', 'b'], 'tb');
  assert.ok(L2.box.get('a').y + L2.box.get('a').h <= L2.box.get('b').y);
});

test('a cycle without a topological order is laid out with its back edge reversed', () => {
  const ns = nodes('a', 'b', 'c', 'd');
  const es = edges(['a', 'b'], ['b', 'c'], ['c', 'a'], ['c', 'd'], ['d', 'd']);
  const L = layout(ns, es, null, 'lr');
  assert.equal(L.box.size, 4);
  assert.deepEqual(overlaps(L), []);
  assert.equal(L.routes.filter((r) => r.back).length, 1, 'one back edge');
  assert.equal(L.routes.filter((r) => r.self).length, 1, 'one self-loop');
  assert.ok(L.minY < 0, 'room above for the self-loop');
  for (const r of L.routes.filter((x) => !x.self)) {
    const first = r.points[0];
    const last = r.points[r.points.length - 1];
    // Routes start at their source's box and end at their target's box.
    const near = (p, b) => p.x >= b.x - 1 && p.x <= b.x + b.w + 1 && p.y >= b.y - 10 && p.y <= b.y + b.h + 10;
    assert.ok(near(first, L.box.get(r.edge.source)), `route ${r.edge.source}->${r.edge.target} starts off its source`);
    assert.ok(near(last, L.box.get(r.edge.target)), `route ${r.edge.source}->${r.edge.target} ends off its target`);
  }
});

test('isolated components and edges to unknown components do not break the layout', () => {
  const L = layout(nodes('a', 'b', 'lonely'), edges(['a', 'b'], ['a', 'ghost']), ['a', 'b', 'lonely'], 'lr');
  assert.equal(L.box.size, 3);
  assert.equal(L.routes.length, 1);
  assert.deepEqual(overlaps(L), []);
});

test('a wide random graph has no overlapping components', () => {
  let seed = 7;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed / 2 ** 31; };
  const ids = Array.from({ length: 40 }, (_, i) => `n${i}`);
  const es = [];
  for (let i = 0; i < 80; i++) {
    const a = Math.floor(rnd() * 40);
    const b = Math.floor(rnd() * 40);
    if (a < b) es.push({ source: ids[a], target: ids[b] });
  }
  for (const o of ['lr', 'tb']) {
    const L = layout(nodes(...ids), es, ids, o);
    assert.deepEqual(overlaps(L), [], o);
    for (const e of es) assert.ok(L.box.get(e.source).layer < L.box.get(e.target).layer);
  }
});

test('chart ticks are round numbers covering the data', () => {
  assert.deepEqual(niceTicks(0, 190, 4).ticks, [0, 50, 100, 150, 200]);
  const t = niceTicks(99.9, 100, 4);
  assert.ok(t.min <= 99.9 && t.max >= 100);
  assert.ok(t.ticks.length >= 3 && t.ticks.length <= 7, String(t.ticks));
  const flat = niceTicks(5, 5, 4);
  assert.ok(flat.min < 5 && flat.max > 5);
});
