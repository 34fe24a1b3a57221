// Rollup charts: the range picker's ranges, the interval each range reads (FIVE_MINUTES up to
// 6 hours, HOUR up to 14 days, DAY beyond), and the chart series of a component's
// Component.metricRollups (the average as the line, min to max as the band). No DOM here: it is
// tested under Node (test/rollups.test.mjs).

const HOUR = 3600e3;
const DAY = 24 * HOUR;

export const RANGES = {
  '6h': { ms: 6 * HOUR, label: '6 hours' },
  '24h': { ms: DAY, label: '24 hours' },
  '7d': { ms: 7 * DAY, label: '7 days' },
  '30d': { ms: 30 * DAY, label: '30 days' },
  '90d': { ms: 90 * DAY, label: '90 days' },
};
export const DEFAULT_RANGE = '24h';

// intervalFor returns the rollup interval a chart of a range of ms milliseconds reads: a few
// hundred points at most (72 for 6 hours, 336 for 14 days, 90 for 90 days).
export function intervalFor(ms) {
  if (ms <= 6 * HOUR) return 'FIVE_MINUTES';
  if (ms <= 14 * DAY) return 'HOUR';
  return 'DAY';
}

// rangeKey returns a known range key, or the default for anything else.
export function rangeKey(key) {
  return Object.hasOwn(RANGES, key) ? key : DEFAULT_RANGE;
}

// series returns the line (each bucket's average at the bucket's middle) and the band (its
// min and max) of one statistic of rollups, e.g. series(rollups, 'latencyP95'); buckets
// without the value are left out.
export function series(rollups, stat) {
  const points = [];
  const band = [];
  for (const r of rollups || []) {
    const st = r[stat];
    if (!st || !Number.isFinite(st.avg)) continue;
    const start = Date.parse(r.start);
    const end = Date.parse(r.end);
    const t = start + (end - start) / 2;
    points.push({ t, v: st.avg });
    if (Number.isFinite(st.min) && Number.isFinite(st.max)) band.push({ t, lo: st.min, hi: st.max });
  }
  return { points, band };
}
