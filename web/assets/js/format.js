// Formatting and the small badges every view uses.
import { h } from './dom.js';

const nf = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
const nf1 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1, minimumFractionDigits: 1 });
const dtf = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
const dayf = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto', style: 'short' });

export const num = (v) => (v === null || v === undefined ? '—' : nf.format(v));
export const score = (v) => (v === null || v === undefined ? '—' : nf1.format(v));
export const pct = (v, digits = 3) =>
  v === null || v === undefined ? '—' : `${new Intl.NumberFormat(undefined, { maximumFractionDigits: digits }).format(v)}%`;
export const ms = (v) => (v === null || v === undefined ? '—' : `${nf.format(v)} ms`);
export const money = (v) =>
  v === null || v === undefined ? '—' : new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumFractionDigits: 0 }).format(v);

export function date(v) {
  if (!v) return '—';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? String(v) : dtf.format(d);
}

export function day(v) {
  if (!v) return '—';
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? String(v) : dayf.format(d);
}

export function relative(v, now = Date.now()) {
  if (!v) return '—';
  const t = new Date(v).getTime();
  if (Number.isNaN(t)) return String(v);
  const sec = Math.round((t - now) / 1000);
  const abs = Math.abs(sec);
  if (abs < 45) return rtf.format(sec, 'second');
  if (abs < 45 * 60) return rtf.format(Math.round(sec / 60), 'minute');
  if (abs < 36 * 3600) return rtf.format(Math.round(sec / 3600), 'hour');
  if (abs < 45 * 86400) return rtf.format(Math.round(sec / 86400), 'day');
  if (abs < 400 * 86400) return rtf.format(Math.round(sec / (30 * 86400)), 'month');
  return rtf.format(Math.round(sec / (365 * 86400)), 'year');
}

// A <time> showing a relative time, the exact instant in its title.
export function timeEl(v) {
  if (!v) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: v, title: date(v) }, relative(v));
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined) return '—';
  if (seconds < 60) return `${seconds} s`;
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  if (m < 60) return s ? `${m} m ${s} s` : `${m} m`;
  const hr = Math.floor(m / 60);
  return `${hr} h ${m % 60} m`;
}

// "ROLLED_BACK" -> "Rolled back"
export function label(v) {
  if (v === null || v === undefined || v === '') return '—';
  const t = String(v).replace(/_/g, ' ').toLowerCase();
  return t.charAt(0).toUpperCase() + t.slice(1);
}

// Tones map values to the badge colours of app.css.
const TONES = {
  HEALTHY: 'good', DEGRADED: 'warn', UNHEALTHY: 'bad', UNKNOWN: 'neutral',
  ACTIVE: 'good', PLANNING: 'info', DEVELOPMENT: 'info', DEPRECATED: 'warn', RETIRING: 'bad',
  PLANNED: 'info', INACTIVE: 'neutral', MAINTENANCE: 'warn', RETIRED: 'neutral',
  COMPLETED: 'good', RUNNING: 'info', PENDING: 'neutral', FAILED: 'bad', ROLLED_BACK: 'warn', CANCELLED: 'neutral',
  DRAFT: 'neutral',
  CRITICAL: 'bad', HIGH: 'warn', MEDIUM: 'info', LOW: 'neutral',
  critical: 'bad', high: 'warn', medium: 'info', low: 'good',
  DEGRADED_OUTCOME: 'warn',
  AT_RISK: 'info',
};

export function tone(v) {
  return TONES[v] || 'neutral';
}

export function badge(value, { kind = '', title, text } = {}) {
  return h('span', { class: ['badge', `tone-${tone(value)}`, kind && `badge-${kind}`], title, dataset: { value } },
    text ?? label(value));
}

const HEALTH_TEXT = { HEALTHY: 'Healthy', DEGRADED: 'Degraded', UNHEALTHY: 'Unhealthy', UNKNOWN: 'Unknown' };

// The health badge: a coloured dot, the status and, when known, the score.
export function healthBadge(status, value) {
  const st = status || 'UNKNOWN';
  const showScore = value !== null && value !== undefined && st !== 'UNKNOWN';
  return h('span', {
    class: ['badge', 'health', `tone-${tone(st)}`],
    dataset: { health: st },
    'aria-label': `Health ${HEALTH_TEXT[st] || st}${showScore ? `, score ${score(value)} of 100` : ''}`,
  },
  h('span', { class: 'dot', 'aria-hidden': 'true' }),
  h('span', { 'aria-hidden': 'true' }, HEALTH_TEXT[st] || label(st)),
  showScore ? h('span', { class: 'badge-score', 'aria-hidden': 'true' }, score(value)) : null);
}

export function mono(text, cls) {
  return h('code', { class: ['mono', cls] }, text);
}

// The compact JSON of a value (conditions, parameters).
export function json(v) {
  if (v === undefined) return '—';
  return JSON.stringify(v);
}
