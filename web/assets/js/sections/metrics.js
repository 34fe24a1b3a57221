// The metrics card: for each component, latency p50/p95/p99 and availability over a window,
// from the capability's PERFORMANCE samples (one query for every component).
import { h, replace, card, onWidth } from '../dom.js';
import { gql } from '../api.js';
import { pct, ms, mono } from '../format.js';
import { inlineError } from '../errors.js';
import { lineChart } from '../chart.js';

// windowStart is the start of the window of `ms` that ends now, taken at the start of its
// minute: the loads of a page within one minute ask for the same window, which the server's
// read memo answers again without reading it (docs/performance.md).
export const windowStart = (ms) => new Date(Math.floor((Date.now() - ms) / 60e3) * 60e3).toISOString();

export const WINDOWS = {
  '1h': { ms: 3600e3, label: '1 hour' },
  '6h': { ms: 6 * 3600e3, label: '6 hours' },
  '24h': { ms: 24 * 3600e3, label: '24 hours' },
};
export const DEFAULT_WINDOW = '6h';
export const METRICS_FIRST = 1000;

export const METRIC_FIELDS = `
      nodes { componentId timestamp values { availability { value } latency { p50 p95 p99 } } }
      pageInfo { hasNextPage }`;

export const CAPABILITY_METRICS = `query CapabilityMetrics($id: ID!, $from: DateTime!, $first: Int!) {
  capability(id: $id) {
    metrics(metricType: PERFORMANCE, from: $from, first: $first) {${METRIC_FIELDS}
    }
  }
}`;

const fmtMs = (v) => (Math.abs(v) >= 100 ? String(Math.round(v)) : String(+v.toFixed(1)));
const fmtPct = (v) => `${+v.toFixed(3)}%`;

export function metricsSection({ cap, conn, windowKey, signal }) {
  const body = h('div', { class: 'metrics-body' });
  const status = h('p', { class: 'metrics-status muted', role: 'status' });
  let current = windowKey;
  let bodyCtrl = null;

  const windowPicker = h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': 'Time window' },
    Object.entries(WINDOWS).map(([key, w]) => h('button', {
      type: 'button', role: 'radio', class: 'segment', 'aria-checked': key === current ? 'true' : 'false',
      dataset: { window: key },
      onclick: () => load(key),
      onkeydown(e) {
        const keys = Object.keys(WINDOWS);
        const i = keys.indexOf(key);
        if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
          e.preventDefault();
          const next = keys[(i + (e.key === 'ArrowRight' ? 1 : keys.length - 1)) % keys.length];
          windowPicker.querySelector(`[data-window="${next}"]`).focus();
          load(next);
        }
      },
      tabindex: key === current ? '0' : '-1',
    }, `Last ${w.label}`)));

  const show = (connection, key) => {
    bodyCtrl?.abort();
    bodyCtrl = new AbortController();
    signal?.addEventListener('abort', () => bodyCtrl.abort(), { once: true });
    current = key;
    for (const b of windowPicker.querySelectorAll('.segment')) {
      const on = b.dataset.window === key;
      b.setAttribute('aria-checked', on ? 'true' : 'false');
      b.tabIndex = on ? 0 : -1;
    }
    const now = Date.now();
    const domain = [now - WINDOWS[key].ms, now];
    const byComp = new Map();
    for (const m of connection?.nodes || []) {
      if (!byComp.has(m.componentId)) byComp.set(m.componentId, []);
      byComp.get(m.componentId).push(m);
    }
    const total = connection?.nodes?.length || 0;
    status.textContent = `${total} performance sample${total === 1 ? '' : 's'} in the last ${WINDOWS[key].label}${connection?.pageInfo?.hasNextPage ? ` (the first ${METRICS_FIRST}; choose a shorter window for the rest)` : ''}.`;
    const withData = cap.components.filter((c) => byComp.has(c.componentId));
    const without = cap.components.filter((c) => !byComp.has(c.componentId));
    replace(body,
      withData.length
        ? h('div', { class: 'metrics-grid' }, withData.map((c) => panel(c, byComp.get(c.componentId), domain, bodyCtrl.signal, cap.capabilityId)))
        : h('p', { class: 'empty' }, `No performance samples in the last ${WINDOWS[key].label}.`),
      without.length && withData.length
        ? h('p', { class: 'muted metrics-missing' }, 'No samples in this window for: ', without.map((c, i) => [i ? ', ' : '', c.name]), '.')
        : null);
  };

  let seq = 0;
  async function load(key) {
    if (key === current && body.childElementCount) return;
    const mine = ++seq;
    status.textContent = `Loading the last ${WINDOWS[key].label}…`;
    body.setAttribute('aria-busy', 'true');
    try {
      const from = windowStart(WINDOWS[key].ms);
      const data = await gql(CAPABILITY_METRICS, { id: cap.capabilityId, from, first: METRICS_FIRST }, { signal });
      if (mine !== seq) return;
      show(data.capability?.metrics, key);
    } catch (err) {
      if (err?.name === 'AbortError' || mine !== seq) return;
      status.textContent = '';
      replace(body, inlineError(err));
    } finally {
      if (mine === seq) body.removeAttribute('aria-busy');
    }
  }

  show(conn, windowKey);
  return card({
    id: 'metrics', title: 'Metrics',
    description: 'Latency percentiles and availability per component, from PERFORMANCE samples; dashed lines are the component’s SLA objectives.',
    actions: windowPicker,
  }, status, body);
}

function panel(comp, samples, domain, signal, capabilityId) {
  const pts = (f) => samples.map((m) => ({ t: new Date(m.timestamp).getTime(), v: f(m.values) })).filter((p) => Number.isFinite(p.v));
  const p50 = pts((v) => v?.latency?.p50);
  const p95 = pts((v) => v?.latency?.p95);
  const p99 = pts((v) => v?.latency?.p99);
  const avail = pts((v) => v?.availability?.value);
  const last = samples[samples.length - 1]?.values;
  const sla = comp.sla;
  const charts = h('div', { class: 'metrics-charts' });
  const draw = (width) => {
    replace(charts,
      p95.length ? lineChart({
        title: 'Latency (ms)', width, height: 190, format: fmtMs, unit: 'ms', domain,
        describe: `${p95.length} samples; latest p50 ${last?.latency?.p50 ?? '—'} ms, p95 ${last?.latency?.p95 ?? '—'} ms, p99 ${last?.latency?.p99 ?? '—'} ms.`,
        threshold: sla ? { value: sla.responseTime, label: `SLA ${fmtMs(sla.responseTime)} ms` } : null,
        series: [
          { key: 'p50', label: 'p50', cls: 's-p50', points: p50 },
          { key: 'p95', label: 'p95', cls: 's-p95', points: p95 },
          { key: 'p99', label: 'p99', cls: 's-p99', points: p99 },
        ],
      }) : h('p', { class: 'muted' }, 'No latency samples.'),
      avail.length ? lineChart({
        title: 'Availability (%)', width, height: 140, format: fmtPct, domain, yMax: 100,
        describe: `latest ${last?.availability?.value ?? '—'}%.`,
        threshold: sla ? { value: sla.availability, label: `SLA ${fmtPct(sla.availability)}` } : null,
        series: [{ key: 'availability', label: 'Availability', cls: 's-avail', points: avail }],
      }) : h('p', { class: 'muted' }, 'No availability samples.'));
  };
  const el = h('article', { class: 'metrics-panel', dataset: { component: comp.componentId }, 'aria-label': `Metrics of ${comp.name}` },
    h('header', { class: 'metrics-panel-head' },
      h('div', {}, h('h3', {}, comp.name), h('div', { class: 'sub' }, mono(comp.componentId), ` · ${samples.length} samples · `,
        h('a', { href: `#/component/${encodeURIComponent(capabilityId)}/${encodeURIComponent(comp.componentId)}` }, 'up to 90 days'))),
      last ? h('dl', { class: 'latest' },
        h('div', {}, h('dt', {}, 'p95 now'), h('dd', {}, ms(last.latency?.p95))),
        h('div', {}, h('dt', {}, 'Availability'), h('dd', {}, pct(last.availability?.value)))) : null),
    charts);
  onWidth(charts, signal, draw, 16);
  return el;
}
