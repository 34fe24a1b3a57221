// The rollup charts' range rules and series, under Node (no browser).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RANGES, intervalFor, rangeKey, series } from '../assets/js/rollups.js';

test('the interval follows the range: FIVE_MINUTES up to 6 h, HOUR up to 14 d, DAY beyond', () => {
  const H = 3600e3;
  assert.equal(intervalFor(H), 'FIVE_MINUTES');
  assert.equal(intervalFor(6 * H), 'FIVE_MINUTES');
  assert.equal(intervalFor(6 * H + 1), 'HOUR');
  assert.equal(intervalFor(14 * 24 * H), 'HOUR');
  assert.equal(intervalFor(14 * 24 * H + 1), 'DAY');
  assert.deepEqual(Object.fromEntries(Object.entries(RANGES).map(([k, r]) => [k, intervalFor(r.ms)])),
    { '6h': 'FIVE_MINUTES', '24h': 'HOUR', '7d': 'HOUR', '30d': 'DAY', '90d': 'DAY' });
  assert.ok(Math.max(...Object.values(RANGES).map((r) => r.ms)) <= 90 * 24 * H, 'no range beyond 90 days');
});

test('rangeKey keeps known ranges only', () => {
  assert.equal(rangeKey('30d'), '30d');
  assert.equal(rangeKey('1y'), '24h');
  assert.equal(rangeKey('__proto__'), '24h');
  assert.equal(rangeKey(undefined), '24h');
});

test('series: the average at the bucket middle, min and max as the band, buckets without the value left out', () => {
  const rollups = [
    { start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z', count: 3, latencyP95: { min: 10, max: 30, avg: 20, last: 30 } },
    { start: '2026-01-02T00:00:00Z', end: '2026-01-03T00:00:00Z', count: 1, latencyP95: null },
    { start: '2026-01-03T00:00:00Z', end: '2026-01-04T00:00:00Z', count: 1, latencyP95: { min: 5, max: 5, avg: 5, last: 5 } },
  ];
  const { points, band } = series(rollups, 'latencyP95');
  assert.deepEqual(points, [{ t: Date.parse('2026-01-01T12:00:00Z'), v: 20 }, { t: Date.parse('2026-01-03T12:00:00Z'), v: 5 }]);
  assert.deepEqual(band, [{ t: Date.parse('2026-01-01T12:00:00Z'), lo: 10, hi: 30 }, { t: Date.parse('2026-01-03T12:00:00Z'), lo: 5, hi: 5 }]);
  assert.deepEqual(series(null, 'cpu'), { points: [], band: [] });
});
