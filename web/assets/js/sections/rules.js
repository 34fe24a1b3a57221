// The rules card: each configuration rule with its weighted conditions and actions, and a form
// that evaluates the rules in force against a JSON input (one `evaluateRules` operation); the
// others are listed with why they are not in force. "Run rules" executes them (`executeRules`:
// actions carried out, metrics counted, notifications queued), shown only to a caller whose role
// may (`me.allowedMutations`, read in the page's operation); Evaluate and Run rules are never in
// flight together. The capability's notifications are listed with their delivery state.
import { h, replace, card, field, uid } from '../dom.js';
import { gql } from '../api.js';
import { badge, label, mono, json, day } from '../format.js';
import { inlineError } from '../errors.js';

export const RULE_FIELDS = `
      ruleId name description ruleType status priority order version effectiveFrom effectiveUntil
      conditions { field operator value values weight }
      actions { type parameters }`;

export const EVALUATE = `query EvaluateRules($id: ID!, $input: JSON!, $ruleType: RuleType) {
  capability(id: $id) {
    evaluateRules(input: $input, ruleType: $ruleType) {
      rule { ruleId name ruleType }
      inForce notInForceReason
      matched score severity
      conditions { field operator expected actual held weight error }
      actions
      error
    }
  }
}`;

export const EXECUTE = `mutation ExecuteRules($id: ID!, $input: JSON!, $ruleType: RuleType) {
  executeRules(capabilityId: $id, input: $input, ruleType: $ruleType) {
    rule { ruleId name metrics { executionCount successRate lastExecuted } }
    matched score severity succeeded error
    actions { type status message severity channels deliveryIds }
  }
}`;

// The capability page reads the notifications with the page (CapabilityPage); NOTIFICATIONS
// reads them again after "Run rules".
export const NOTIFICATION_FIELDS = `deliveryId kind channel status attempts lastError createdAt deliveredAt ruleId severity`;

export const NOTIFICATIONS = `query Notifications($id: ID!) {
  capability(id: $id) {
    notifications(first: 20) { nodes { ${NOTIFICATION_FIELDS} } }
  }
}`;

const ACTION_BADGE = { APPLIED: 'COMPLETED', QUEUED: 'PENDING', UNKNOWN_ACTION: 'FAILED', FAILED: 'FAILED' };
const DELIVERY_BADGE = { DELIVERED: 'COMPLETED', PENDING: 'PENDING', FAILED: 'FAILED' };

function executionItem(x) {
  return h('li', { class: ['evaluation', x.matched ? 'matched' : 'unmatched'], dataset: { rule: x.rule.ruleId, testid: 'execution' } },
    h('div', { class: 'evaluation-head' },
      h('strong', {}, x.rule.name),
      x.matched ? badge('COMPLETED', { text: 'Matched' }) : badge('CANCELLED', { text: 'No match' }),
      h('span', { class: 'score' }, 'Score ', h('strong', {}, String(x.score))),
      x.severity ? h('span', { class: 'severity' }, 'Severity ', badge(x.severity, { kind: 'severity', text: x.severity })) : null,
      x.succeeded ? null : badge('FAILED', { text: 'Not succeeded' })),
    x.error ? h('p', { class: 'text-bad' }, x.error) : null,
    x.actions.length ? h('ul', { class: 'actions' }, x.actions.map((a) => h('li', { dataset: { action: a.type, status: a.status } },
      mono(a.type), ' ', badge(ACTION_BADGE[a.status] || 'CANCELLED', { text: label(a.status) }),
      a.severity ? [' ', badge(a.severity, { kind: 'severity', text: a.severity })] : null,
      a.channels.length ? h('span', { class: 'muted' }, ` to ${a.channels.join(', ')}`) : null,
      a.deliveryIds.length ? h('span', { class: 'muted' }, ` · ${a.deliveryIds.length} queued`) : null,
      a.message ? h('span', { class: 'text-bad' }, ` — ${a.message}`) : null))) : null,
    x.rule.metrics ? h('p', { class: 'muted' }, `Executions ${x.rule.metrics.executionCount} · success ${x.rule.metrics.successRate.toFixed(2)}%`) : null);
}

function notificationRow(n) {
  return h('tr', { dataset: { delivery: n.deliveryId, status: n.status } },
    h('td', { 'data-label': 'Channel' }, mono(n.channel)),
    h('td', { 'data-label': 'Delivery' }, badge(DELIVERY_BADGE[n.status] || 'CANCELLED', { text: label(n.status) })),
    h('td', { 'data-label': 'Raised by' }, n.kind === 'health' ? 'health' : mono(n.ruleId || '')),
    h('td', { 'data-label': 'Severity' }, n.severity ? badge(n.severity, { kind: 'severity', text: n.severity }) : ''),
    h('td', { 'data-label': 'Attempts', class: 'num' }, String(n.attempts)),
    h('td', { 'data-label': 'Last error' }, n.lastError ? h('span', { class: 'text-bad' }, n.lastError) : h('span', { class: 'muted' }, '—')),
    h('td', { 'data-label': 'When' }, day(n.deliveredAt || n.createdAt)));
}

const RULE_TYPES = ['BUSINESS', 'SECURITY', 'COMPLIANCE', 'OPERATIONAL', 'ROUTING', 'TRANSFORMATION'];

// exampleInput builds an input that exercises the active rules' conditions.
export function exampleInput(rules) {
  const out = {};
  const set = (path, v) => {
    const keys = path.split('.');
    let o = out;
    keys.slice(0, -1).forEach((k) => {
      if (typeof o[k] !== 'object' || o[k] === null) o[k] = {};
      o = o[k];
    });
    const last = keys[keys.length - 1];
    if (!(last in o)) o[last] = v;
  };
  for (const r of rules) {
    if (r.status !== 'ACTIVE') continue;
    for (const c of r.conditions || []) {
      let v = c.value ?? (Array.isArray(c.values) ? c.values[0] : null);
      switch (c.operator) {
        case 'exists': v = true; break;
        case 'not_in': case 'not_equals': v = 'other'; break;
        case '>': v = typeof v === 'number' ? v + 1 : v; break;
        case '<': v = typeof v === 'number' ? v - 1 : v; break;
        default:
      }
      set(c.field, v);
    }
  }
  return out;
}

function mappingChips(mapping) {
  const low = (range) => parseFloat(range) || 0;
  return h('ul', { class: 'bands', 'aria-label': 'Severity by score' },
    Object.entries(mapping).sort(([a], [b]) => low(a) - low(b)).map(([range, sev]) => h('li', {}, h('span', { class: 'band-range' }, range), badge(sev, { text: sev }))));
}

const paramValue = (v) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : json(x))).join(', ') : typeof v === 'string' ? v : json(v));

function actionItem(a) {
  const p = a.parameters || {};
  if (a.type === 'set_severity' && p.mapping && typeof p.mapping === 'object') {
    return h('li', {}, mono(a.type), h('span', { class: 'muted' }, ` by ${String(p.calculation || 'mapping').replace(/_/g, ' ')}`), mappingChips(p.mapping));
  }
  const entries = Object.entries(p);
  return h('li', {}, mono(a.type),
    entries.length ? h('dl', { class: 'action-params' }, entries.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, paramValue(v))))) : null);
}

function conditionText(c) {
  const expected = c.values ? `[${c.values.map((v) => JSON.stringify(v)).join(', ')}]` : c.value === undefined || c.value === null ? '' : JSON.stringify(c.value);
  return [mono(c.field), ' ', h('span', { class: 'op' }, c.operator), expected ? [' ', mono(expected, 'expected')] : null];
}

function ruleCard(r) {
  return h('article', { class: ['rule', `rule-${r.status.toLowerCase()}`], dataset: { rule: r.ruleId }, 'aria-labelledby': `rule-${r.ruleId}` },
    h('header', { class: 'rule-head' },
      h('div', {},
        h('h3', { id: `rule-${r.ruleId}` }, h('span', { class: 'rule-order', title: 'Execution order' }, `#${r.order}`), ' ', r.name),
        h('div', { class: 'sub' }, mono(r.ruleId), r.version ? ` · v${r.version}` : '', r.effectiveFrom ? ` · in force from ${day(r.effectiveFrom)}` : '', r.effectiveUntil ? ` until ${day(r.effectiveUntil)}` : '')),
      h('div', { class: 'rule-badges' }, badge(r.ruleType, { text: label(r.ruleType) }), badge(r.status), badge(r.priority, { kind: 'priority', text: `${label(r.priority)} priority` }))),
    r.description ? h('p', { class: 'rule-desc' }, r.description) : null,
    h('div', { class: 'rule-body' },
      h('div', {},
        h('h4', {}, 'Conditions'),
        h('ul', { class: 'conditions' }, (r.conditions || []).map((c) => h('li', {}, h('span', { class: 'weight', title: 'Weight' }, `+${c.weight}`), ' ', conditionText(c))))),
      h('div', {},
        h('h4', {}, 'Actions'),
        h('ul', { class: 'actions' }, (r.actions || []).map(actionItem)))));
}

const NOT_IN_FORCE = { NOT_ACTIVE: 'status not active', NOT_YET_IN_FORCE: 'not yet in force', EXPIRED: 'expired' };

function evaluationItem(ev) {
  if (!ev.inForce) {
    const reason = NOT_IN_FORCE[ev.notInForceReason] || label(ev.notInForceReason);
    return h('li', { class: ['evaluation', 'not-in-force'], dataset: { rule: ev.rule.ruleId, reason: ev.notInForceReason || '' } },
      h('div', { class: 'evaluation-head' },
        h('strong', {}, ev.rule.name),
        badge('CANCELLED', { text: `Not evaluated: ${reason}` })));
  }
  const sev = ev.severity;
  return h('li', { class: ['evaluation', ev.matched ? 'matched' : 'unmatched'], dataset: { rule: ev.rule.ruleId, severity: sev || '', score: String(ev.score) } },
    h('div', { class: 'evaluation-head' },
      h('strong', {}, ev.rule.name),
      ev.matched ? badge('COMPLETED', { text: 'Matched' }) : badge('CANCELLED', { text: 'No match' }),
      h('span', { class: 'score' }, 'Score ', h('strong', { dataset: { testid: 'eval-score' } }, String(ev.score))),
      sev ? h('span', { class: 'severity' }, 'Severity ', badge(sev, { kind: 'severity', text: sev })) : null),
    ev.error ? h('p', { class: 'text-bad' }, ev.error) : null,
    h('table', { class: 'table compact' },
      h('thead', {}, h('tr', {}, ['Condition', 'Input value', 'Held', 'Weight'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, (ev.conditions || []).map((c) => h('tr', { class: c.held ? 'held' : 'not-held' },
        h('td', {}, mono(c.field), ' ', h('span', { class: 'op' }, c.operator), ' ', mono(json(c.expected), 'expected')),
        h('td', {}, c.actual === null || c.actual === undefined ? h('span', { class: 'muted' }, 'absent') : mono(json(c.actual))),
        h('td', {}, c.error ? h('span', { class: 'text-bad' }, c.error) : c.held ? h('span', { class: 'text-good' }, '✓ yes') : h('span', { class: 'muted' }, '✕ no')),
        h('td', { class: 'num' }, c.held ? `+${c.weight}` : h('span', { class: 'muted' }, `(${c.weight})`)))))),
    ev.matched && ev.actions?.length ? h('div', { class: 'fire' }, h('span', { class: 'muted' }, 'Actions to fire: '), ev.actions.map((a, i) => [i ? ', ' : '', mono(a?.type || json(a))])) : null);
}

// inFlight holds, per capability, the evaluation or run the user started and that has not
// answered yet: a card rebuilt by a live refresh meanwhile keeps both buttons disabled until it
// answers.
const inFlight = new Map();

export function rulesSection({ cap, me, signal }) {
  const mayRun = (me?.allowedMutations || []).includes('executeRules');
  const rules = cap.rules || [];
  const inputId = uid('eval-input');
  const input = h('textarea', {
    id: inputId, class: 'code', rows: '7', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    name: 'input', 'aria-describedby': `${inputId}-hint`, dataset: { testid: 'eval-input' },
  });
  input.value = JSON.stringify(exampleInput(rules), null, 2);
  input.rows = Math.min(14, Math.max(5, input.value.split('\n').length + 1));
  const typeSel = h('select', { name: 'ruleType', dataset: { testid: 'eval-type' } }, h('option', { value: '' }, 'Every rule type'), RULE_TYPES.map((t) => h('option', { value: t }, label(t))));
  const inputError = h('p', { class: 'field-error', id: `${inputId}-error`, hidden: true });
  const out = h('div', { class: 'evaluation-result', 'aria-live': 'polite', dataset: { testid: 'eval-result' } });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Evaluate');

  const parseInput = () => {
    let parsed;
    try {
      parsed = JSON.parse(input.value);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the input must be a JSON object, e.g. {"source": "production"}');
      inputError.hidden = true;
      input.removeAttribute('aria-invalid');
    } catch (e) {
      inputError.textContent = `Not valid input: ${e.message}`;
      inputError.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-errormessage', inputError.id);
      input.focus();
      return undefined;
    }
    return parsed;
  };

  const notifications = h('div', { class: 'notifications', 'aria-live': 'polite', dataset: { testid: 'notifications' } });
  const showNotifications = (ns) => {
    replace(notifications, ns.length
      ? h('div', { class: 'table-wrap' }, h('table', { class: 'table compact responsive' },
        h('thead', {}, h('tr', {}, ['Channel', 'Delivery', 'Raised by', 'Severity', 'Attempts', 'Last error', 'When'].map((t) => h('th', { scope: 'col' }, t)))),
        h('tbody', {}, ns.map(notificationRow))))
      : h('p', { class: 'muted' }, 'No notifications yet.'));
  };
  showNotifications(cap.notifications?.nodes || []);
  const loadNotifications = async () => {
    try {
      const data = await gql(NOTIFICATIONS, { id: cap.capabilityId }, { signal });
      showNotifications(data.capability?.notifications?.nodes || []);
    } catch (err) {
      if (err?.name === 'AbortError') return;
      replace(notifications, inlineError(err));
    }
  };

  const run = mayRun ? h('button', { type: 'button', class: 'btn', title: 'Execute the rules: carry out the matched rules’ actions and count the executions (devops role)', dataset: { testid: 'run-rules' } }, 'Run rules') : null;
  // busy disables Evaluate and Run rules while either is in flight (here or in the card this one
  // replaced), and enables them again once it answered.
  const setBusy = (on) => {
    submit.disabled = on;
    if (run) run.disabled = on;
  };
  const busy = (p) => {
    inFlight.set(cap.capabilityId, p);
    setBusy(true);
    p.finally(() => {
      if (inFlight.get(cap.capabilityId) === p) inFlight.delete(cap.capabilityId);
      setBusy(false);
    }).catch(() => {}); // the caller reports the error
    return p;
  };
  if (inFlight.has(cap.capabilityId)) {
    setBusy(true);
    inFlight.get(cap.capabilityId).finally(() => setBusy(false)).catch(() => {});
  }
  const execute = async () => {
    if (inFlight.has(cap.capabilityId)) return;
    const parsed = parseInput();
    if (parsed === undefined) return;
    replace(out, h('p', { class: 'loading-inline', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Running…'));
    try {
      const data = await busy(gql(EXECUTE, { id: cap.capabilityId, input: parsed, ruleType: typeSel.value || null }, { signal }));
      const xs = data.executeRules || [];
      replace(out, xs.length
        ? h('ol', { class: 'evaluations', dataset: { testid: 'executions' } }, xs.map(executionItem))
        : h('p', { class: 'muted' }, 'No rule of this type in force.'));
      loadNotifications();
    } catch (err) {
      if (err?.name === 'AbortError') return;
      replace(out, inlineError(err));
    }
  };
  run?.addEventListener('click', execute);

  const evaluate = async () => {
    if (inFlight.has(cap.capabilityId)) return;
    const parsed = parseInput();
    if (parsed === undefined) return;
    replace(out, h('p', { class: 'loading-inline', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Evaluating…'));
    try {
      const data = await busy(gql(EVALUATE, { id: cap.capabilityId, input: parsed, ruleType: typeSel.value || null }, { signal }));
      const evs = data.capability?.evaluateRules || [];
      replace(out, evs.length
        ? h('ol', { class: 'evaluations' }, evs.map(evaluationItem))
        : h('p', { class: 'muted' }, 'No rule of this type.'));
    } catch (err) {
      if (err?.name === 'AbortError') return;
      replace(out, inlineError(err));
    }
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      evaluate();
    }
  });

  const form = h('form', { class: 'evaluate', 'aria-label': 'Evaluate rules', onsubmit: (e) => { e.preventDefault(); evaluate(); } },
    h('h3', {}, 'Evaluate against an input'),
    h('div', { class: 'field' },
      h('label', { for: inputId }, 'Input (JSON object)'),
      input,
      h('span', { class: 'field-hint', id: `${inputId}-hint` }, 'Conditions read dot paths from this object. Ctrl+Enter evaluates.'),
      inputError),
    h('div', { class: 'form-row' }, field('Rule type', typeSel), submit, run),
    out,
    h('h3', {}, 'Notifications'),
    notifications);

  return card({ id: 'rules', title: 'Rules', description: 'Configuration rules in execution order. Only active rules in force are evaluated, the others are listed with the reason; a rule’s score is the sum of the weights of the conditions that hold.' },
    h('div', { class: 'rules-layout' },
      h('div', { class: 'rules-list' }, rules.length ? rules.map(ruleCard) : h('p', { class: 'empty' }, 'No rules.')),
      form));
}

// keepRulesState carries what the user did in a rules card into the card rebuilt from a live
// refresh (a change of the rules, such as the executions counted by the user's own "Run rules"):
// the input, the rule type, and the result shown — the element itself, so that an evaluation or a
// run still in flight lands in the new card. The notifications are the new card's own.
export function keepRulesState(from, to) {
  const pick = (el, id) => el.querySelector(`[data-testid=${id}]`);
  const [input, type, out] = ['eval-input', 'eval-type', 'eval-result'].map((id) => [pick(from, id), pick(to, id)]);
  if (input[0] && input[1]) {
    input[1].value = input[0].value;
    input[1].rows = input[0].rows;
  }
  if (type[0] && type[1]) type[1].value = type[0].value;
  if (out[0] && out[1]) out[1].replaceWith(out[0]);
}
