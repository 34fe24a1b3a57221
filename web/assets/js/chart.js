// A time-series line chart in SVG: axes with rounded ticks, grid, legend, an optional objective
// line, min/max bands around a series, vertical markers (a job's start and end), and a
// crosshair with the values under the pointer (or the arrow keys).
import { h, s, uid } from './dom.js';

// niceTicks returns about `count` round values covering [min, max].
export function niceTicks(min, max, count = 5) {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return { min: 0, max: 1, ticks: [0, 1], step: 1 };
  if (min === max) {
    const pad = Math.abs(min) * 0.1 || 1;
    min -= pad;
    max += pad;
  }
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10) * mag;
  const lo = Math.floor(min / step + 1e-9) * step;
  const hi = Math.ceil(max / step - 1e-9) * step;
  const ticks = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Number(v.toFixed(10)));
  return { min: lo, max: hi, ticks, step };
}

const MIN = 60e3;
const DAY = 1440 * MIN;
const TIME_STEPS = [MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, 60 * MIN, 120 * MIN, 180 * MIN, 360 * MIN, 720 * MIN, DAY, 2 * DAY, 7 * DAY, 14 * DAY];

export function timeTicks(t0, t1, count) {
  const step = TIME_STEPS.find((st) => (t1 - t0) / st <= count) || TIME_STEPS[TIME_STEPS.length - 1];
  const offset = new Date(t0).getTimezoneOffset() * MIN;
  const ticks = [];
  for (let t = Math.ceil((t0 - offset) / step) * step + offset; t <= t1; t += step) ticks.push(t);
  return ticks;
}

const hhmm = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const full = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

// lineChart returns a <figure>. series: [{key, label, cls, points: [{t (ms), v}], band?: [{t, lo, hi}]}]
// (a band is drawn as a shaded area from lo to hi behind its line); markers: [{t, label, key}]
// (vertical lines, such as a job's start and end); testid names the figure for tests.
export function lineChart({ title, series, unit = '', format = (v) => String(v), width = 560, height = 200, yMin, yMax, threshold, domain, describe, markers = [], testid = 'metrics-chart', data = {} }) {
  const pad = { top: 12, right: 14, bottom: 26, left: 50 };
  const W = Math.max(240, width);
  const H = height;
  const iw = W - pad.left - pad.right;
  const ih = H - pad.top - pad.bottom;
  const all = series.flatMap((se) => se.points);
  const times = all.map((p) => p.t);
  const [t0, t1] = domain || [Math.min(...times), Math.max(...times)];
  const vals = all.map((p) => p.v).filter(Number.isFinite);
  for (const se of series) for (const b of se.band || []) vals.push(...[b.lo, b.hi].filter(Number.isFinite));
  if (threshold && Number.isFinite(threshold.value)) vals.push(threshold.value);
  let lo = yMin ?? Math.min(...vals);
  let hi = yMax ?? Math.max(...vals);
  if (yMin === undefined && lo > 0 && lo < (hi - lo) * 0.6) lo = 0;
  const ny = niceTicks(lo, hi, 4);
  lo = yMin ?? ny.min;
  hi = yMax ?? ny.max;
  const yt = ny.ticks.filter((v) => v >= lo - 1e-9 && v <= hi + 1e-9);
  const x = (t) => pad.left + (t1 === t0 ? iw / 2 : ((t - t0) / (t1 - t0)) * iw);
  const y = (v) => pad.top + ih - ((v - lo) / (hi - lo || 1)) * ih;

  const id = uid('chart');
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, width: String(W), height: String(H), 'aria-hidden': 'true', focusable: 'false' });
  const clipId = `${id}-clip`;
  svg.appendChild(s('defs', {}, s('clipPath', { id: clipId }, s('rect', { x: String(pad.left), y: String(pad.top - 4), width: String(iw), height: String(ih + 8) }))));

  // Grid and axes.
  const grid = s('g', { class: 'chart-grid' });
  for (const v of yt) {
    grid.append(
      s('line', { x1: String(pad.left), x2: String(W - pad.right), y1: String(y(v)), y2: String(y(v)) }),
      s('text', { class: 'tick tick-y', x: String(pad.left - 8), y: String(y(v) + 4), 'text-anchor': 'end' }, format(v)));
  }
  const xt = timeTicks(t0, t1, Math.max(2, Math.floor(iw / 90)));
  for (const t of xt) {
    grid.append(
      s('line', { class: 'tick-x-line', x1: String(x(t)), x2: String(x(t)), y1: String(pad.top + ih), y2: String(pad.top + ih + 4) }),
      s('text', { class: 'tick tick-x', x: String(x(t)), y: String(H - 8), 'text-anchor': 'middle' }, (t1 - t0 > 2 * DAY ? dayFmt : hhmm).format(t)));
  }
  grid.append(s('line', { class: 'axis', x1: String(pad.left), x2: String(W - pad.right), y1: String(pad.top + ih), y2: String(pad.top + ih) }));
  svg.appendChild(grid);

  if (threshold && Number.isFinite(threshold.value) && threshold.value >= lo && threshold.value <= hi) {
    svg.appendChild(s('g', { class: 'chart-threshold' },
      s('line', { x1: String(pad.left), x2: String(W - pad.right), y1: String(y(threshold.value)), y2: String(y(threshold.value)) }),
      s('text', { x: String(W - pad.right - 4), y: String(y(threshold.value) - 5), 'text-anchor': 'end' }, threshold.label)));
  }

  // Bands (min to max), behind the lines, split like them where buckets are missing.
  const bands = s('g', { class: 'chart-bands', 'clip-path': `url(#${clipId})` });
  for (const se of series) {
    const pts = (se.band || []).filter((b) => Number.isFinite(b.lo) && Number.isFinite(b.hi)).sort((a, b) => a.t - b.t);
    if (!pts.length) continue;
    const gaps = pts.slice(1).map((p, i) => p.t - pts[i].t).sort((a, b) => a - b);
    const typical = gaps.length ? gaps[Math.floor(gaps.length / 2)] : 0;
    const runs = [[]];
    pts.forEach((p, i) => {
      if (i > 0 && typical && p.t - pts[i - 1].t > typical * 2.5) runs.push([]);
      runs[runs.length - 1].push(p);
    });
    let d = '';
    for (const run of runs) {
      const top = run.map((p, i) => `${i ? 'L' : 'M'}${x(p.t).toFixed(1)},${y(p.hi).toFixed(1)}`).join('');
      const bottom = run.slice().reverse().map((p) => `L${x(p.t).toFixed(1)},${y(p.lo).toFixed(1)}`).join('');
      d += `${top}${bottom}Z`;
    }
    bands.appendChild(s('path', { class: ['band', se.cls], d, dataset: { band: se.key, points: String(pts.length) } }));
  }
  svg.appendChild(bands);

  // Markers: a vertical line and its label at the top.
  if (markers.length) {
    const g = s('g', { class: 'chart-markers' });
    for (const m of markers) {
      if (!Number.isFinite(m.t) || m.t < t0 || m.t > t1) continue;
      g.append(s('g', { class: ['marker', `marker-${m.key}`], dataset: { marker: m.key } },
        s('line', { x1: String(x(m.t)), x2: String(x(m.t)), y1: String(pad.top), y2: String(pad.top + ih) }),
        s('text', { x: String(x(m.t) + 4), y: String(pad.top + 10) }, m.label)));
    }
    svg.appendChild(g);
  }

  // Lines, split where a sample is missing for more than two intervals.
  const lines = s('g', { class: 'chart-lines', 'clip-path': `url(#${clipId})` });
  for (const se of series) {
    const pts = se.points.filter((p) => Number.isFinite(p.v)).sort((a, b) => a.t - b.t);
    const gaps = pts.slice(1).map((p, i) => p.t - pts[i].t).sort((a, b) => a - b);
    const typical = gaps.length ? gaps[Math.floor(gaps.length / 2)] : 0;
    let d = '';
    pts.forEach((p, i) => {
      const jump = i === 0 || (typical && p.t - pts[i - 1].t > typical * 2.5);
      d += `${jump ? 'M' : 'L'}${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`;
    });
    lines.appendChild(s('path', { class: ['line', se.cls], d, dataset: { series: se.key, points: String(pts.length) } }));
    const last = pts[pts.length - 1];
    if (last) lines.appendChild(s('circle', { class: ['last-point', se.cls], cx: String(x(last.t)), cy: String(y(last.v)), r: '3' }));
  }
  svg.appendChild(lines);

  // Crosshair.
  const cross = s('g', { class: 'chart-cross', visibility: 'hidden' }, s('line', { y1: String(pad.top), y2: String(pad.top + ih) }));
  const dots = series.map((se) => {
    const c = s('circle', { class: ['cross-dot', se.cls], r: '4' });
    cross.appendChild(c);
    return c;
  });
  svg.appendChild(cross);
  const overlay = s('rect', { class: 'chart-overlay', x: String(pad.left), y: String(pad.top), width: String(iw), height: String(ih) });
  svg.appendChild(overlay);

  const stamps = [...new Set(all.map((p) => p.t))].sort((a, b) => a - b);
  const at = new Map(series.map((se) => [se.key, new Map(se.points.map((p) => [p.t, p.v]))]));
  const bandAt = new Map(series.map((se) => [se.key, new Map((se.band || []).map((b) => [b.t, b]))]));
  const tip = h('div', { class: 'chart-tip', hidden: true, 'aria-live': 'polite' });
  let cur = -1;
  const show = (i) => {
    if (!stamps.length) return;
    cur = Math.max(0, Math.min(stamps.length - 1, i));
    const t = stamps[cur];
    const cx = x(t);
    cross.setAttribute('visibility', 'visible');
    const line = cross.querySelector('line');
    line.setAttribute('x1', String(cx));
    line.setAttribute('x2', String(cx));
    series.forEach((se, k) => {
      const v = at.get(se.key).get(t);
      if (Number.isFinite(v)) {
        dots[k].setAttribute('cx', String(cx));
        dots[k].setAttribute('cy', String(y(v)));
        dots[k].setAttribute('visibility', 'visible');
      } else dots[k].setAttribute('visibility', 'hidden');
    });
    tip.replaceChildren(
      h('div', { class: 'chart-tip-time' }, full.format(t)),
      ...series.map((se) => {
        const v = at.get(se.key).get(t);
        const b = bandAt.get(se.key).get(t);
        return h('div', { class: 'chart-tip-row' }, h('span', { class: ['swatch', se.cls] }), `${se.label} `, h('strong', {}, Number.isFinite(v) ? `${format(v)}${unit ? ` ${unit}` : ''}` : '—'),
          b && Number.isFinite(b.lo) ? h('span', { class: 'muted' }, ` (${format(b.lo)}–${format(b.hi)})`) : null);
      }));
    tip.hidden = false;
    const rel = cx / W;
    tip.classList.toggle('flip', rel > 0.6);
    tip.style.setProperty('--x', `${(rel * 100).toFixed(2)}%`);
  };
  const hide = () => {
    cross.setAttribute('visibility', 'hidden');
    tip.hidden = true;
  };
  const nearest = (clientX) => {
    const r = svg.getBoundingClientRect();
    const px = ((clientX - r.left) / r.width) * W;
    const t = t0 + ((px - pad.left) / iw) * (t1 - t0);
    let best = 0;
    stamps.forEach((st, i) => { if (Math.abs(st - t) < Math.abs(stamps[best] - t)) best = i; });
    return best;
  };
  overlay.addEventListener('pointermove', (e) => show(nearest(e.clientX)));
  overlay.addEventListener('pointerleave', hide);

  const legend = h('ul', { class: 'legend', 'aria-hidden': 'true' },
    series.map((se) => h('li', {}, h('span', { class: ['swatch', se.cls] }), se.label, se.band?.length ? ' (band: min–max)' : '')),
    threshold ? h('li', {}, h('span', { class: 'swatch swatch-threshold' }), threshold.label) : null);

  const figure = h('figure', {
    class: 'chart-figure', tabindex: '0', role: 'group',
    'aria-label': `${title}. ${describe || ''} Use the left and right arrow keys to read values.`,
    dataset: { testid, ...data },
    onkeydown(e) {
      if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
        e.preventDefault();
        show(cur < 0 ? stamps.length - 1 : cur + (e.key === 'ArrowRight' ? 1 : -1));
      } else if (e.key === 'Home') { e.preventDefault(); show(0); }
      else if (e.key === 'End') { e.preventDefault(); show(stamps.length - 1); }
      else if (e.key === 'Escape') hide();
    },
    onblur: hide,
  },
  h('figcaption', { class: 'chart-title' }, h('span', {}, title), legend),
  h('div', { class: 'chart-box' }, svg, tip));
  return figure;
}
