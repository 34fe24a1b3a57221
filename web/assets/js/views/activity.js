// #/activity : the catalogue's changes newest first (Query.changes with last/before, the page's
// edges reversed), filtered by capability (?capability=) and entity (?entity=), with "load
// older" by startCursor, and new changes added on top as they happen (a subscription).
import { h, replace, field } from '../dom.js';
import { gql } from '../api.js';
import { label, mono, timeEl, date } from '../format.js';
import { inlineError, partialNotice } from '../errors.js';
import { liveSection, CHANGE_FIELDS } from '../sections/live.js';

export const ACTIVITY_PAGE = 25;

export const ACTIVITY = `query Activity($last: Int!, $before: String, $capabilityId: ID, $entities: [ChangeEntity!]) {
  changes(capabilityId: $capabilityId, entities: $entities, last: $last, before: $before) {
    edges { cursor node { ${CHANGE_FIELDS} } }
    pageInfo { hasPreviousPage startCursor endCursor }
  }
}`;

export const ACTIVITY_LIVE = `subscription ActivityLive($capabilityId: ID, $entities: [ChangeEntity!], $after: String) {
  changes(capabilityId: $capabilityId, entities: $entities, after: $after) { ${CHANGE_FIELDS} }
}`;

export const ENTITIES = ['CAPABILITY', 'COMPONENT', 'DEPENDENCY', 'JOB', 'METRIC', 'RULE', 'ARTIFACT', 'NOTIFICATION'];

// The badge colour of each action (app.css tones).
const ACTION_TONE = { CREATED: 'good', UPDATED: 'info', DELETED: 'bad', TRANSITIONED: 'warn', RECORDED: 'neutral', ARCHIVED: 'neutral' };

// activityHash returns the route of the view with these filters.
export function activityHash({ capability, entity, last } = {}) {
  const p = new URLSearchParams();
  if (capability) p.set('capability', capability);
  if (entity) p.set('entity', entity);
  if (last) p.set('last', String(last));
  const q = p.toString();
  return `#/activity${q ? `?${q}` : ''}`;
}

export async function render(root, { params, signal }) {
  const capability = (params.get('capability') || '').trim();
  const entity = ENTITIES.includes(params.get('entity')) ? params.get('entity') : '';
  // ?last= sets the page size (1..100), kept across filters.
  const size = Math.min(100, Math.max(1, Number.parseInt(params.get('last'), 10) || ACTIVITY_PAGE));
  const last = size === ACTIVITY_PAGE ? 0 : size;
  document.title = 'Activity · Capability Catalogue';
  const vars = { capabilityId: capability || null, entities: entity ? [entity] : null };
  const fetchPage = (before) => gql(ACTIVITY, { last: size, before: before || null, ...vars }, { signal });
  const data = await fetchPage(null);
  const conn = data.changes;

  const capInput = h('input', { type: 'text', name: 'capability', value: capability, placeholder: 'e.g. CAP-ALERT-MGT-001', autocomplete: 'off', spellcheck: 'false' });
  const entitySelect = h('select', { name: 'entity' },
    h('option', { value: '' }, 'All entities'),
    ENTITIES.map((e) => h('option', { value: e, selected: e === entity }, label(e))));
  const go = () => { location.hash = activityHash({ capability: capInput.value.trim(), entity: entitySelect.value, last }); };
  const form = h('form', {
    class: 'filters', role: 'search', 'aria-label': 'Filter the activity',
    onsubmit(e) { e.preventDefault(); go(); },
  },
  field('Capability ID', capInput, 'Empty for every capability'),
  field('Entity', entitySelect),
  h('div', { class: 'field' }, h('button', { type: 'submit', class: 'btn' }, 'Apply')),
  capability || entity ? h('div', { class: 'field' }, h('a', { class: 'btn btn-ghost', href: activityHash({ last }) }, 'Clear filters')) : null);
  entitySelect.addEventListener('change', go);

  const tbody = h('tbody');
  const shownIds = new Set();
  let count = 0;
  const summary = h('p', { class: 'list-summary', role: 'status' });
  const more = h('div', { class: 'load-more' });
  const describe = (info) => {
    summary.textContent = `${count} change${count === 1 ? '' : 's'} shown, newest first${info.hasPreviousPage ? '; older ones available' : ''}.`;
  };
  // addOlder appends a page (its edges oldest first) below what is shown, newest first.
  const addOlder = (c) => {
    const firstNew = tbody.children.length;
    for (const e of [...c.edges].reverse()) {
      if (shownIds.has(e.node.id)) continue;
      shownIds.add(e.node.id);
      tbody.appendChild(row(e.node));
      count += 1;
    }
    foot(c.pageInfo);
    return firstNew;
  };
  const foot = (info) => {
    lastInfo = info;
    describe(info);
    replace(more, info.hasPreviousPage ? h('button', {
      type: 'button', class: 'btn', dataset: { testid: 'activity-more' },
      async onclick(e) {
        const btn = e.currentTarget;
        btn.disabled = true;
        btn.textContent = 'Loading…';
        try {
          const next = (await fetchPage(info.startCursor)).changes;
          const firstNew = addOlder(next);
          tbody.children[firstNew]?.querySelector('a')?.focus();
        } catch (err) {
          if (err?.name === 'AbortError') return;
          btn.disabled = false;
          btn.textContent = 'Retry';
          more.prepend(inlineError(err));
        }
      },
    }, `Load ${size} older`) : null);
  };
  let lastInfo = conn.pageInfo;
  addOlder(conn);
  const table = h('div', { class: 'table-wrap', hidden: count === 0 }, h('table', { class: 'table responsive', dataset: { testid: 'activity-table' } },
    h('caption', { class: 'sr-only' }, 'Changes, newest first'),
    h('thead', {}, h('tr', {}, ['When', 'Capability', 'Entity', 'Action', 'Revision', 'Actor', 'Fields'].map((t) => h('th', { scope: 'col' }, t)))),
    tbody));
  const empty = h('p', { class: 'empty', hidden: count > 0 }, capability || entity ? 'No change matches these filters in the retention window (30 days).' : 'No change in the retention window (30 days).');

  // Live: changes after the newest one shown go on top.
  const live = liveSection({
    query: ACTIVITY_LIVE,
    variables: (cursor) => ({ ...vars, ...(cursor ? { after: cursor } : {}) }),
    after: conn.pageInfo.endCursor || '',
    signal,
    what: 'New changes',
    onChange(c) {
      if (shownIds.has(c.id)) return;
      shownIds.add(c.id);
      const tr = row(c);
      tr.classList.add('activity-new');
      tbody.prepend(tr);
      count += 1;
      empty.hidden = true;
      table.hidden = false;
      describe(lastInfo);
    },
  });

  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, 'Activity'),
        h('p', { class: 'page-sub' }, 'Every committed write to the catalogue, newest first, kept 30 days. ',
          h('span', { class: 'muted' }, 'From the change feed: ', mono('changes(last:, before:)'), capability ? ' of one capability’s partition' : ', one index bucket per day', '.')))),
    h('div', { class: 'live-bar' }, live.el),
    partialNotice(data),
    h('section', { class: 'card', 'aria-label': 'Changes' },
      form,
      table,
      empty,
      h('div', { class: 'list-foot' }, summary, more)));
}

function row(c) {
  const actor = c.actor ? `${c.actor.name} (${c.actor.role})` : '—';
  return h('tr', { dataset: { change: c.id, entity: c.entity, action: c.action, capability: c.capabilityId, at: c.at } },
    h('td', { 'data-label': 'When', class: 'activity-time' }, timeEl(c.at), h('div', { class: 'sub' }, date(c.at))),
    h('td', { 'data-label': 'Capability', class: 'cell-main' }, h('a', { href: `#/capability/${encodeURIComponent(c.capabilityId)}` }, c.capabilityId)),
    h('td', { 'data-label': 'Entity' }, h('div', { class: 'strong' }, label(c.entity)), h('div', { class: 'sub' }, mono(c.entityId))),
    h('td', { 'data-label': 'Action' }, h('span', { class: ['badge', `tone-${ACTION_TONE[c.action] || 'neutral'}`], dataset: { value: c.action } }, label(c.action)), c.detail ? h('div', { class: 'sub' }, c.detail) : null),
    h('td', { 'data-label': 'Revision' }, c.revision == null ? '—' : String(c.revision)),
    h('td', { 'data-label': 'Actor' }, actor, c.requestId ? h('div', { class: 'sub' }, 'request ', mono(c.requestId)) : null),
    h('td', { 'data-label': 'Fields' }, c.fields?.length ? h('div', { class: 'activity-fields' }, c.fields.map((f) => mono(f))) : h('span', { class: 'muted' }, '—')));
}
