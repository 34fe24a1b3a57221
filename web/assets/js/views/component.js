// #/component/CAPABILITY-ID/COMPONENT-ID?range=30d : one component's performance over a range
// picked from 6 hours to 90 days, from Component.metricRollups: the interval follows the range
// (rollups.js), each chart draws the bucket averages with their min-max band. The page reads
// the component (ComponentPage) and its rollups (ComponentRollups) at once; a new range reads
// the rollups again and keeps the range in the hash.
import { h, replace, card, onWidth } from '../dom.js';
import { gql } from '../api.js';
import { badge, mono } from '../format.js';
import { inlineError, partialNotice } from '../errors.js';
import { lineChart } from '../chart.js';
import { RANGES, intervalFor, rangeKey, series } from '../rollups.js';

export const COMPONENT_PAGE = `query ComponentPage($cap: ID!, $id: ID!) {
  capability(id: $cap) {
    capabilityId name
    component(id: $id) { componentId name componentType layer version status sla { availability responseTime } }
  }
}`;

const STAT = 'min max avg';
export const COMPONENT_ROLLUPS = `query ComponentRollups($cap: ID!, $id: ID!, $interval: RollupInterval!, $from: DateTime!) {
  capability(id: $cap) {
    component(id: $id) {
      componentId
      metricRollups(metricType: PERFORMANCE, interval: $interval, from: $from) {
        start end count
        availability { ${STAT} } latencyP50 { avg } latencyP95 { ${STAT} } latencyP99 { avg }
      }
    }
  }
}`;

const INTERVAL_LABEL = { FIVE_MINUTES: '5-minute', HOUR: 'hourly', DAY: 'daily' };
const fmtMs = (v) => (Math.abs(v) >= 100 ? String(Math.round(v)) : String(+v.toFixed(1)));
const fmtPct = (v) => `${+v.toFixed(3)}%`;

export async function render(root, { args, params, signal }) {
  const [capID, compID] = args;
  let key = rangeKey(params?.get('range'));
  const rollupsOf = (k) => {
    const from = new Date(Date.now() - RANGES[k].ms).toISOString();
    return gql(COMPONENT_ROLLUPS, { cap: capID, id: compID, interval: intervalFor(RANGES[k].ms), from }, { signal });
  };
  const first = rollupsOf(key).then((d) => ({ d }), (err) => ({ err }));
  const data = await gql(COMPONENT_PAGE, { cap: capID, id: compID }, { signal });
  const cap = data.capability;
  const comp = cap?.component;
  if (!comp) {
    document.title = 'Component not found · Capability Catalogue';
    replace(root,
      h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Component not found')),
      h('div', { class: 'card notice', dataset: { testid: 'not-found' } },
        h('p', {}, 'There is no component ', mono(compID), ' in ', mono(capID), '.'),
        h('p', {}, h('a', { href: '#/', class: 'btn' }, 'Browse capabilities'))));
    return;
  }
  document.title = `${comp.name} · Capability Catalogue`;

  const status = h('p', { class: 'metrics-status muted', role: 'status' });
  const body = h('div', { class: 'rollup-body' });
  let seq = 0;
  let bodyCtrl = null;
  const picker = h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': 'Time range', dataset: { testid: 'range-picker' } },
    Object.entries(RANGES).map(([k, r]) => h('button', {
      type: 'button', role: 'radio', class: 'segment', dataset: { range: k }, 'aria-label': `Last ${r.label}`,
      'aria-checked': k === key ? 'true' : 'false', tabindex: k === key ? '0' : '-1',
      title: `Last ${r.label}, ${INTERVAL_LABEL[intervalFor(r.ms)]} buckets`,
      onclick: () => pick(k),
      onkeydown(e) {
        if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
        e.preventDefault();
        const keys = Object.keys(RANGES);
        const next = keys[(keys.indexOf(k) + (e.key === 'ArrowRight' ? 1 : keys.length - 1)) % keys.length];
        picker.querySelector(`[data-range="${next}"]`).focus();
        pick(next);
      },
    }, r.label.replace(/ hours?| days?/, (m) => (m.includes('hour') ? 'h' : 'd')))));

  const show = (result, k) => {
    bodyCtrl?.abort();
    bodyCtrl = new AbortController();
    signal?.addEventListener('abort', () => bodyCtrl.abort(), { once: true });
    for (const b of picker.querySelectorAll('.segment')) {
      const on = b.dataset.range === k;
      b.setAttribute('aria-checked', on ? 'true' : 'false');
      b.tabIndex = on ? 0 : -1;
    }
    if (result.err) {
      status.textContent = '';
      replace(body, inlineError(result.err));
      return;
    }
    const rollups = result.d.capability?.component?.metricRollups || [];
    const interval = intervalFor(RANGES[k].ms);
    const samples = rollups.reduce((n, r) => n + r.count, 0);
    status.textContent = `${rollups.length} ${INTERVAL_LABEL[interval]} bucket${rollups.length === 1 ? '' : 's'} of ${samples} performance sample${samples === 1 ? '' : 's'} in the last ${RANGES[k].label}.`;
    if (!rollups.length) {
      replace(body, partialNotice(result.d), h('p', { class: 'empty' }, `No performance samples in the last ${RANGES[k].label}.`));
      return;
    }
    const now = Date.now();
    const domain = [now - RANGES[k].ms, now];
    const p95 = series(rollups, 'latencyP95');
    const p50 = series(rollups, 'latencyP50');
    const p99 = series(rollups, 'latencyP99');
    const avail = series(rollups, 'availability');
    const charts = h('div', { class: 'metrics-charts' });
    const data = { interval, range: k };
    const draw = (width) => replace(charts,
      p95.points.length ? lineChart({
        title: 'Latency (ms)', width, height: 220, format: fmtMs, unit: 'ms', domain, testid: 'rollup-chart', data: { ...data, chart: 'latency' },
        describe: `${p95.points.length} ${INTERVAL_LABEL[interval]} averages of p95, shaded from the bucket's lowest to its highest p95; p50 and p99 averages as lines.`,
        threshold: comp.sla ? { value: comp.sla.responseTime, label: `SLA ${fmtMs(comp.sla.responseTime)} ms` } : null,
        series: [
          { key: 'p50', label: 'p50', cls: 's-p50', points: p50.points },
          { key: 'p95', label: 'p95', cls: 's-p95', points: p95.points, band: p95.band },
          { key: 'p99', label: 'p99', cls: 's-p99', points: p99.points },
        ],
      }) : h('p', { class: 'muted' }, 'No latency in these samples.'),
      avail.points.length ? lineChart({
        title: 'Availability (%)', width, height: 160, format: fmtPct, domain, yMax: 100, testid: 'rollup-chart', data: { ...data, chart: 'availability' },
        describe: `${avail.points.length} ${INTERVAL_LABEL[interval]} averages, shaded from the lowest to the highest.`,
        threshold: comp.sla ? { value: comp.sla.availability, label: `SLA ${fmtPct(comp.sla.availability)}` } : null,
        series: [{ key: 'availability', label: 'Availability', cls: 's-avail', points: avail.points, band: avail.band }],
      }) : h('p', { class: 'muted' }, 'No availability in these samples.'));
    replace(body, partialNotice(result.d), charts);
    onWidth(charts, bodyCtrl.signal, draw, 16);
  };

  async function pick(k) {
    if (k === key && body.childElementCount) return;
    key = k;
    const mine = ++seq;
    history.replaceState(null, '', `#/component/${encodeURIComponent(capID)}/${encodeURIComponent(compID)}?range=${k}`);
    status.textContent = `Loading the last ${RANGES[k].label}…`;
    body.setAttribute('aria-busy', 'true');
    const result = await rollupsOf(k).then((d) => ({ d }), (err) => ({ err }));
    if (mine !== seq || result.err?.name === 'AbortError') return;
    body.removeAttribute('aria-busy');
    show(result, k);
  }

  replace(root,
    h('nav', { class: 'breadcrumb', 'aria-label': 'Breadcrumb' },
      h('ol', {},
        h('li', {}, h('a', { href: '#/' }, 'Capabilities')),
        h('li', {}, h('a', { href: `#/capability/${encodeURIComponent(cap.capabilityId)}` }, cap.name)),
        h('li', { 'aria-current': 'page' }, comp.name))),
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, comp.name),
        h('p', { class: 'page-sub' }, mono(comp.componentId), ` · ${comp.componentType}`, comp.version ? [' · ', mono(comp.version)] : null, ' ', badge(comp.status)))),
    partialNotice(data),
    card({
      id: 'rollups', title: 'Performance',
      description: 'Averages per bucket with a band from the lowest to the highest value, from the component’s rollups: 5-minute buckets up to 6 hours, hourly up to 14 days, daily beyond.',
      actions: picker,
    }, status, body));
  const result = await first;
  if (result.err?.name === 'AbortError') return;
  if (seq === 0) show(result, key);
}
