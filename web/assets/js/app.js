// The explorer: hash routes (#/, #/capability/ID, #/component/CAP/ID, #/job/ID,
// #/components/TYPE, #/deployments, #/owners, #/owner/NAME, #/dashboard, #/activity, #/console), one view at a time, the header's search box,
// and the status bar that shows each operation's DynamoDB cost.
import { h, replace } from './dom.js';
import { errorPanel } from './errors.js';
import * as capabilities from './views/capabilities.js';
import * as capability from './views/capability.js';
import * as components from './views/components.js';
import * as component from './views/component.js';
import * as job from './views/job.js';
import * as consoleView from './views/console.js';
import * as activity from './views/activity.js';
import * as deployments from './views/deployments.js';
import * as dashboard from './views/dashboard.js';
import { renderOwner, renderOwners } from './views/owners.js';
import { mount as mountSearch } from './search.js';
import { mount as mountSignIn } from './sso.js';

const main = document.getElementById('main');
const status = document.getElementById('op-status');

// route parses location.hash: "#/capability/CAP-1?x=1" -> {name, args, params}.
export function route(hash = location.hash) {
  const raw = hash.replace(/^#/, '');
  const [pathPart, query = ''] = raw.split('?');
  const parts = pathPart.split('/').filter(Boolean).map((p) => {
    try { return decodeURIComponent(p); } catch { return p; }
  });
  const params = new URLSearchParams(query);
  const [head, ...args] = parts;
  switch (head) {
    case undefined:
    case 'capabilities':
      return { name: 'capabilities', nav: 'capabilities', view: capabilities, args, params };
    case 'capability':
      if (args.length === 1) return { name: 'capability', nav: 'capabilities', view: capability, args, params };
      break;
    case 'component':
      if (args.length === 2) return { name: 'component', nav: 'capabilities', view: component, args, params };
      break;
    case 'job':
      if (args.length === 1) return { name: 'job', nav: 'deployments', view: job, args, params };
      break;
    case 'components':
      return { name: 'components', nav: 'components', view: components, args, params };
    case 'console':
      return { name: 'console', nav: 'console', view: consoleView, args, params };
    case 'deployments':
      if (args.length === 0) return { name: 'deployments', nav: 'deployments', view: deployments, args, params };
      break;
    case 'dashboard':
      if (args.length === 0) return { name: 'dashboard', nav: 'dashboard', view: dashboard, args, params };
      break;
    case 'owners':
      if (args.length === 0) return { name: 'owners', nav: 'owners', view: { render: renderOwners }, args, params };
      break;
    case 'owner':
      if (args.length === 1) return { name: 'owner', nav: 'owners', view: { render: renderOwner }, args, params };
      break;
    case 'activity':
      if (args.length === 0) return { name: 'activity', nav: 'activity', view: activity, args, params };
      break;
    default:
  }
  return { name: 'notfound', nav: '', view: { render: notFound }, args: parts, params };
}

function notFound(root) {
  document.title = 'Not found · Capability Catalogue';
  replace(root,
    h('div', { class: 'page-head' }, h('h1', { tabindex: '-1' }, 'Nothing here')),
    h('div', { class: 'card notice' },
      h('p', {}, 'The explorer has no page at ', h('code', {}, location.hash || '#/'), '.'),
      h('p', {}, h('a', { href: '#/' }, 'Browse capabilities'), ' · ', h('a', { href: '#/components' }, 'components by type'), ' · ', h('a', { href: '#/dashboard' }, 'dashboard'), ' · ', h('a', { href: '#/deployments' }, 'deployments now'), ' · ', h('a', { href: '#/activity' }, 'activity'), ' · ', h('a', { href: '#/console' }, 'query console'))));
}

let current = null; // AbortController of the view on screen
let first = true;

async function show() {
  current?.abort();
  const ctrl = new AbortController();
  current = ctrl;
  const r = route();
  for (const a of document.querySelectorAll('.mainnav a')) {
    if (a.dataset.nav === r.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.body.dataset.view = r.name;
  delete main.dataset.rendered;
  main.setAttribute('aria-busy', 'true');
  replace(main, h('div', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading…'));
  try {
    await r.view.render(main, { args: r.args, params: r.params, signal: ctrl.signal });
  } catch (err) {
    if (err?.name === 'AbortError' || ctrl.signal.aborted) return;
    console.error(err);
    replace(main, errorPanel(err, { retry: show }));
  } finally {
    if (!ctrl.signal.aborted) main.setAttribute('aria-busy', 'false');
  }
  if (ctrl.signal.aborted) return;
  // For tests and tools: the view for this hash is on screen (or its error is).
  main.dataset.rendered = location.hash || '#/';
  if (!first) {
    // Move focus to the new view's heading, as a page load would, and start at the top.
    window.scrollTo(0, 0);
    (main.querySelector('h1') || main).focus({ preventScroll: true });
  }
  first = false;
}

// The status bar: the last operation, its DynamoDB requests, operations and capacity.
function showOperation(d) {
  if (d.failed) {
    status.dataset.requests = '';
    replace(status, h('span', { class: 'op-name' }, d.operationName), h('span', { class: 'op-failed' }, ` failed: ${d.failed}`));
    return;
  }
  const ddb = d.extensions?.dynamodb;
  const errs = d.errors?.length || 0;
  const parts = [h('span', { class: 'op-name', title: 'GraphQL operation' }, d.operationName)];
  if (ddb && typeof ddb.requests === 'number') {
    status.dataset.requests = String(ddb.requests);
    status.dataset.operation = d.operationName;
    const ops = Object.entries(ddb.operations || {}).map(([k, v]) => `${k} ×${v}`).join(', ');
    parts.push(
      h('span', { class: 'op-sep', 'aria-hidden': 'true' }, '·'),
      h('strong', { class: 'op-requests', dataset: { testid: 'footer-requests' } }, `${ddb.requests} DynamoDB request${ddb.requests === 1 ? '' : 's'}`),
      ops ? h('span', { class: 'op-detail' }, ` (${ops})`) : null,
      h('span', { class: 'op-sep', 'aria-hidden': 'true' }, '·'),
      h('span', { class: 'op-detail' }, `${fmtCap(ddb.readCapacityUnits)} RCU`),
      ddb.writeCapacityUnits ? h('span', { class: 'op-detail' }, ` · ${fmtCap(ddb.writeCapacityUnits)} WCU`) : null);
  } else {
    status.dataset.requests = '';
    parts.push(h('span', { class: 'op-detail' }, ' · no DynamoDB report'));
  }
  if (typeof d.ms === 'number') parts.push(h('span', { class: 'op-sep', 'aria-hidden': 'true' }, '·'), h('span', { class: 'op-detail' }, `${d.ms} ms`));
  if (errs) parts.push(h('span', { class: 'op-failed' }, ` · ${errs} error${errs > 1 ? 's' : ''}`));
  replace(status, ...parts);
}

const fmtCap = (v) => (typeof v === 'number' ? new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 }).format(v) : '—');

document.addEventListener('catalogue:operation', (e) => showOperation(e.detail));
window.addEventListener('hashchange', show);
const searchRoot = document.querySelector('[data-search]');
if (searchRoot) mountSearch(searchRoot);
document.querySelector('[data-skip]')?.addEventListener('click', (e) => {
  e.preventDefault();
  (main.querySelector('h1') || main).focus();
});
// A sign-in coming back from the identity provider completes before the first view, so that
// the view already sends the token; without a provider this is one GET of /auth/config.
const signInRoot = document.querySelector('[data-signin]');
(signInRoot ? mountSignIn(signInRoot) : Promise.resolve()).catch((e) => console.error(e)).finally(() => {
  show();
  document.addEventListener('catalogue:signin', show);
});
