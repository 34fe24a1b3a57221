// Readable errors: GraphQL errors with their extensions.code and path, network and HTTP
// failures, and partial results. Never a blank page.
import { h } from './dom.js';

function errorItem(e) {
  const code = e?.extensions?.code;
  const path = Array.isArray(e?.path) ? e.path.join('.') : '';
  const extra = Object.entries(e?.extensions || {}).filter(([k]) => k !== 'code');
  return h('li', { class: 'error-item' },
    code ? h('span', { class: 'badge tone-bad code-badge', dataset: { code } }, code) : null,
    h('span', { class: 'error-message' }, e?.message || 'Unknown error'),
    path ? h('span', { class: 'error-path' }, ' at ', h('code', {}, path)) : null,
    extra.length ? h('span', { class: 'error-extra' }, ' ', extra.map(([k, v]) => h('code', {}, `${k}: ${JSON.stringify(v)}`))) : null);
}

// errorPanel renders an ApiError (or any Error) as an alert card.
export function errorPanel(err, { title, retry } = {}) {
  const errors = err?.errors?.length ? err.errors : [{ message: err?.message || String(err) }];
  const heading = title || (err?.kind === 'network' ? 'The API is unreachable'
    : err?.kind === 'http' ? 'The API answered with an error'
      : 'The API returned errors');
  return h('div', { class: 'card alert alert-error', role: 'alert', dataset: { testid: 'error' } },
    h('h2', { class: 'alert-title' }, heading),
    h('ul', { class: 'error-list' }, errors.map(errorItem)),
    err?.hint ? h('p', { class: 'alert-hint' }, err.hint) : null,
    h('p', { class: 'alert-meta' },
      err?.operationName ? h('span', {}, 'Operation ', h('code', {}, err.operationName)) : null,
      err?.status ? h('span', {}, ` · HTTP ${err.status}`) : null,
      err?.requestId ? h('span', {}, ' · request ID ', h('code', {}, err.requestId)) : null),
    retry ? h('p', {}, h('button', { type: 'button', class: 'btn', onclick: retry }, 'Try again')) : null);
}

// partialNotice shows the errors that came back next to data.
export function partialNotice(data) {
  const errs = data?.__errors;
  if (!errs?.length) return null;
  return h('div', { class: 'alert alert-warn', role: 'status' },
    h('strong', {}, `Part of this view failed (${errs.length} error${errs.length > 1 ? 's' : ''}); the rest is shown.`),
    h('ul', { class: 'error-list' }, errs.map(errorItem)));
}

// inlineError is a compact error for a panel inside a view (impact, evaluate, load more).
export function inlineError(err) {
  const errors = err?.errors?.length ? err.errors : [{ message: err?.message || String(err) }];
  return h('div', { class: 'alert alert-error alert-inline', role: 'alert', dataset: { testid: 'error' } },
    h('ul', { class: 'error-list' }, errors.map(errorItem)),
    err?.hint ? h('p', { class: 'alert-hint' }, err.hint) : null);
}
