// #/console : run any operation, see the JSON result and what it cost in DynamoDB.
import { h, replace, uid } from '../dom.js';
import { execute, auth, pageKey, endpoint, ApiError } from '../api.js';
import { errorPanel } from '../errors.js';

const hourAgo = () => new Date(Date.now() - 3600e3).toISOString().replace(/\.\d+Z$/, 'Z');

// The seed's six access patterns, then a few more.
export const EXAMPLES = [
  {
    id: 'complete-capability', group: 'patterns', title: 'Complete capability',
    query: `# Access pattern 1: a capability with what its partition holds.
query CompleteCapability($id: ID!) {
  capability(id: $id) {
    capabilityId name description businessDomain
    status priority owner version tags
    businessMetrics { sla rto rpo criticalityLevel }
    aggregates {
      healthScore healthStatus totalComponents activeComponents
      totalDependencies totalJobs totalRules lastDeployment
    }
    components {
      componentId name componentType layer version status
      health { status availability responseTime errorRate }
    }
    dependencies {
      sourceComponentId targetComponentId
      dependencyType criticality
    }
    rules { ruleId name ruleType status order }
    jobs(first: 5) {
      nodes { jobId jobType status startTime }
    }
  }
}`,
    variables: () => ({ id: 'CAP-ALERT-MGT-001' }),
  },
  {
    id: 'list-capabilities', group: 'patterns', title: 'List capabilities',
    query: `# Access pattern 2: every capability (the CAPABILITIES
# index), a page at a time.
query ListCapabilities($first: Int, $after: String) {
  capabilities(first: $first, after: $after) {
    nodes {
      capabilityId name businessDomain status priority
      aggregates { healthScore healthStatus totalComponents }
    }
    pageInfo { hasNextPage endCursor }
  }
}`,
    variables: () => ({ first: 20 }),
  },
  {
    id: 'components-by-type', group: 'patterns', title: 'Components by type: mcp-server',
    query: `# Access pattern 3: one component type across all
# capabilities (the COMPONENT# index).
query ComponentsByType($type: String!) {
  componentsByType(type: $type) {
    nodes {
      componentId name capabilityId version status
      health { status availability responseTime }
    }
    pageInfo { hasNextPage endCursor }
  }
}`,
    variables: () => ({ type: 'mcp-server' }),
  },
  {
    id: 'capabilities-by-domain', group: 'patterns', title: 'Capabilities by domain: operations',
    query: `# Access pattern 4: the capabilities of one business
# domain (the DOMAIN# index).
query CapabilitiesByDomain($domain: String!) {
  capabilitiesByDomain(domain: $domain) {
    nodes {
      capabilityId name status priority
      aggregates { healthScore healthStatus }
    }
    pageInfo { hasNextPage endCursor }
  }
}`,
    variables: () => ({ domain: 'operations' }),
  },
  {
    id: 'component-health', group: 'patterns', title: 'Component health and metrics, last hour',
    query: `# Access pattern 5: a component's health, and its
# metrics in the last hour (the METRICS# index).
query ComponentHealth(
  $capabilityId: ID!, $componentId: ID!, $from: DateTime!
) {
  capability(id: $capabilityId) {
    component(id: $componentId) {
      name
      health {
        status availability responseTime errorRate
        activeAlerts lastCheck
      }
      sla { availability responseTime errorRate }
    }
  }
  componentMetrics(
    componentId: $componentId, from: $from, first: 100
  ) {
    nodes {
      metricType timestamp
      values {
        availability { value }
        latency { p50 p95 p99 }
        errors { rate }
      }
    }
  }
}`,
    variables: () => ({ capabilityId: 'CAP-ALERT-MGT-001', componentId: 'api-server-alert-001', from: hourAgo() }),
  },
  {
    id: 'deployment-history', group: 'patterns', title: 'Deployment history, newest first',
    query: `# Access pattern 6: a capability's deployments,
# newest first.
query DeploymentHistory($id: ID!, $first: Int) {
  capability(id: $id) {
    name
    jobs(first: $first, jobType: DEPLOYMENT) {
      nodes {
        jobId status startTime endTime duration triggeredBy
        targetComponents {
          componentId fromVersion toVersion status
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}`,
    variables: () => ({ id: 'CAP-ALERT-MGT-001', first: 10 }),
  },
  {
    id: 'blast-radius', group: 'more', title: 'Blast radius of the alert database',
    query: `query BlastRadius($id: ID!, $componentId: ID!) {
  capability(id: $id) {
    impact(componentId: $componentId, direction: DEPENDENTS) {
      root { name }
      affected {
        component { componentId name }
        distance outcome
        path { componentId }
      }
    }
  }
}`,
    variables: () => ({ id: 'CAP-ALERT-MGT-001', componentId: 'database-alert-001' }),
  },
  {
    id: 'evaluate-rules', group: 'more', title: 'Evaluate the severity rule',
    query: `query EvaluateRules($id: ID!, $input: JSON!) {
  capability(id: $id) {
    evaluateRules(input: $input, ruleType: BUSINESS) {
      rule { ruleId name }
      matched score severity
      conditions { field operator actual held weight }
    }
  }
}`,
    variables: () => ({ id: 'CAP-ALERT-MGT-001', input: { source: 'production', error_count: 150, customer_impact: 'high' } }),
  },
  {
    id: 'node', group: 'more', title: 'Fetch any object again by its id (node)',
    query: `query Refetch($ids: [ID!]!) {
  nodes(ids: $ids) {
    __typename id
    ... on Component { name status }
    ... on Rule { ruleId name order }
    ... on Dependency { criticality source { name } target { name } }
  }
}`,
    variables: () => ({ ids: ['CAP-ALERT-MGT-001/components/api-server-alert-001', 'CAP-ALERT-MGT-001/rules/rule-alert-severity-mapping', 'CAP-ALERT-MGT-001/dependencies/api-server-alert-001->database-alert-001'] }),
  },
  {
    id: 'degraded', group: 'more', title: 'Degraded capabilities',
    query: `query Degraded {
  capabilitiesByHealth(status: DEGRADED) {
    nodes {
      capabilityId name businessDomain
      aggregates { healthScore healthStatus }
    }
  }
}`,
    variables: () => ({}),
  },
];

const STATE = 'catalogue.console';

function loadState() {
  try { return JSON.parse(sessionStorage.getItem(STATE) || 'null'); } catch { return null; }
}

function saveState(st) {
  sessionStorage.setItem(STATE, JSON.stringify(st));
}

// codeEditor is a textarea with line numbers; Tab indents, Escape then Tab leaves.
function codeEditor({ id, value, rows, label: aria, describedBy, testid }) {
  const gutter = h('pre', { class: 'gutter', 'aria-hidden': 'true' });
  const ta = h('textarea', {
    id, class: 'code', rows: String(rows), wrap: 'off', spellcheck: 'false', autocapitalize: 'off', autocomplete: 'off',
    'aria-label': aria, 'aria-describedby': describedBy, dataset: { testid },
  });
  ta.value = value;
  const lines = () => {
    const n = ta.value.split('\n').length;
    ta.rows = Math.max(rows, Math.min(n + 1, rows + 12));
    if (gutter.dataset.n !== String(n)) {
      gutter.dataset.n = String(n);
      gutter.textContent = Array.from({ length: n }, (_, i) => i + 1).join('\n');
    }
  };
  const sync = () => { gutter.style.setProperty('transform', `translateY(${-ta.scrollTop}px)`); };
  let escaped = false;
  ta.addEventListener('input', () => { lines(); sync(); });
  ta.addEventListener('scroll', sync);
  ta.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') { escaped = true; return; }
    if (e.key === 'Tab' && !escaped && !e.ctrlKey && !e.altKey && !e.metaKey) {
      e.preventDefault();
      if (e.shiftKey) {
        const start = ta.value.lastIndexOf('\n', ta.selectionStart - 1) + 1;
        if (ta.value.startsWith('  ', start)) {
          ta.setSelectionRange(start, start + 2);
          if (!document.execCommand('delete')) ta.setRangeText('', start, start + 2, 'end');
        }
      } else if (!document.execCommand('insertText', false, '  ')) {
        ta.setRangeText('  ', ta.selectionStart, ta.selectionEnd, 'end');
      }
      lines();
      return;
    }
    escaped = false;
  });
  lines();
  return { el: h('div', { class: 'code-editor' }, gutter, ta), textarea: ta, refresh: () => { lines(); sync(); } };
}

// highlight renders pretty JSON with token classes, as text nodes only.
function highlight(text) {
  const frag = document.createDocumentFragment();
  const re = /("(?:\\u[0-9a-fA-F]{4}|\\[^u]|[^\\"])*")(\s*:)?|\b(true|false)\b|\b(null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
  let last = 0;
  let m;
  while ((m = re.exec(text))) {
    if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
    const cls = m[1] ? (m[2] ? 'j-key' : 'j-str') : m[3] ? 'j-bool' : m[4] ? 'j-null' : 'j-num';
    frag.appendChild(h('span', { class: cls }, m[1] || m[0]));
    if (m[2]) frag.appendChild(document.createTextNode(m[2]));
    last = re.lastIndex;
  }
  if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
  return frag;
}

const operationNames = (q) => [...q.matchAll(/\b(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/g)].map((m) => m[1]);

function costTiles(ddb, extensions) {
  if (!ddb) return h('p', { class: 'muted' }, 'The response has no extensions.dynamodb report.');
  const ops = Object.entries(ddb.operations || {});
  const cost = extensions?.cost;
  return h('div', { class: 'cost', dataset: { testid: 'console-cost', requests: String(ddb.requests) } },
    h('div', { class: 'cost-tile cost-main' }, h('span', { class: 'cost-value' }, String(ddb.requests)), h('span', { class: 'cost-label' }, `DynamoDB request${ddb.requests === 1 ? '' : 's'}`)),
    h('div', { class: 'cost-tile' }, h('span', { class: 'cost-value' }, String(+(ddb.readCapacityUnits || 0).toFixed(2))), h('span', { class: 'cost-label' }, 'read capacity units')),
    h('div', { class: 'cost-tile' }, h('span', { class: 'cost-value' }, String(+(ddb.writeCapacityUnits || 0).toFixed(2))), h('span', { class: 'cost-label' }, 'write capacity units')),
    cost !== undefined && cost !== null ? costTile(cost) : null,
    h('div', { class: 'cost-tile cost-ops' },
      h('span', { class: 'cost-label' }, 'DynamoDB operations'),
      ops.length ? h('ul', {}, ops.map(([k, v]) => h('li', {}, h('code', {}, k), ` ×${v}`))) : h('span', { class: 'muted' }, 'none')));
}

// costTile shows extensions.cost: the nodes an operation may request against the server's limit.
function costTile(cost) {
  const fmt = (n) => (typeof n === 'number' ? n.toLocaleString() : String(n));
  if (typeof cost === 'object' && 'requested' in cost) {
    return h('div', { class: 'cost-tile cost-limit', title: 'Nodes the operation may request (connection sizes multiplied), against the server\u2019s limit' },
      h('span', { class: 'cost-value' }, fmt(cost.requested), cost.limit !== undefined ? h('span', { class: 'cost-of' }, ` / ${fmt(cost.limit)}`) : null),
      h('span', { class: 'cost-label' }, 'query cost / limit'));
  }
  return h('div', { class: 'cost-tile' },
    h('span', { class: 'cost-value cost-small' }, typeof cost === 'object' ? JSON.stringify(cost) : String(cost)),
    h('span', { class: 'cost-label' }, 'query cost'));
}

export async function render(root, { params }) {
  document.title = 'Query console · Capability Catalogue';
  const saved = loadState();
  const wanted = EXAMPLES.find((e) => e.id === params.get('example'));
  const initial = wanted || EXAMPLES.find((e) => e.id === saved?.example) || EXAMPLES[0];
  const fresh = !!wanted || !saved;
  const qid = uid('query');
  const vid = uid('vars');
  const aid = uid('auth');

  const exampleSel = h('select', { id: uid('example'), dataset: { testid: 'console-example' } },
    h('optgroup', { label: 'The seed’s access patterns' }, EXAMPLES.filter((e) => e.group === 'patterns').map((e, i) => h('option', { value: e.id }, `${i + 1}. ${e.title}`))),
    h('optgroup', { label: 'More' }, EXAMPLES.filter((e) => e.group === 'more').map((e) => h('option', { value: e.id }, e.title))));
  exampleSel.value = initial.id;

  const queryEd = codeEditor({ id: qid, value: fresh ? initial.query : saved.query, rows: 14, label: 'GraphQL operation', describedBy: `${qid}-hint`, testid: 'console-query' });
  const varsEd = codeEditor({ id: vid, value: fresh ? JSON.stringify(initial.variables(), null, 2) : saved.variables, rows: 4, label: 'Variables as JSON', testid: 'console-variables' });
  const varsError = h('p', { class: 'field-error', id: `${vid}-error`, hidden: true });
  const defaultAuth = pageKey ? `Bearer ${pageKey}` : '';
  const authInput = h('input', {
    id: aid, type: 'password', class: 'mono-input', value: auth.header, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'Bearer <API key>', 'aria-describedby': `${aid}-hint`, dataset: { testid: 'console-auth' },
  });
  const showAuth = h('button', {
    type: 'button', class: 'btn btn-small btn-ghost', 'aria-pressed': 'false', 'aria-controls': aid,
    onclick(e) {
      const on = authInput.type === 'password';
      authInput.type = on ? 'text' : 'password';
      e.currentTarget.setAttribute('aria-pressed', on ? 'true' : 'false');
      e.currentTarget.textContent = on ? 'Hide' : 'Show';
    },
  }, 'Show');
  const resetAuth = h('button', {
    type: 'button', class: 'btn btn-small btn-ghost', hidden: !auth.overridden,
    onclick() {
      auth.reset();
      authInput.value = defaultAuth;
      resetAuth.hidden = true;
    },
  }, pageKey ? 'Use the page’s key' : 'Clear');
  authInput.addEventListener('change', () => {
    if (authInput.value === defaultAuth) auth.reset();
    else auth.header = authInput.value;
    resetAuth.hidden = !auth.overridden;
  });
  const opSel = h('select', { id: uid('op') });
  const opField = h('div', { class: 'field', hidden: true }, h('label', { for: opSel.id }, 'Operation to run'), opSel);
  const refreshOps = () => {
    const names = operationNames(queryEd.textarea.value);
    opField.hidden = names.length < 2;
    const cur = opSel.value;
    replace(opSel, names.map((n) => h('option', { value: n, selected: n === cur }, n)));
  };
  const persist = () => saveState({ example: exampleSel.value, query: queryEd.textarea.value, variables: varsEd.textarea.value });
  queryEd.textarea.addEventListener('input', () => { refreshOps(); persist(); });
  varsEd.textarea.addEventListener('input', persist);
  exampleSel.addEventListener('change', () => {
    const ex = EXAMPLES.find((e) => e.id === exampleSel.value);
    queryEd.textarea.value = ex.query;
    varsEd.textarea.value = JSON.stringify(ex.variables(), null, 2);
    queryEd.refresh();
    varsEd.refresh();
    refreshOps();
    persist();
  });
  refreshOps();

  const result = h('div', { class: 'console-result', dataset: { testid: 'console-result' } },
    h('p', { class: 'muted' }, 'Run the operation to see its result and its DynamoDB cost.'));
  const runBtn = h('button', { type: 'submit', class: 'btn btn-primary', dataset: { testid: 'console-run' } }, 'Run', h('kbd', { class: 'kbd' }, 'Ctrl+Enter'));
  const curlBtn = h('button', { type: 'button', class: 'btn btn-ghost' }, 'Copy as curl');

  const readVars = () => {
    const text = varsEd.textarea.value.trim();
    if (!text) return {};
    const v = JSON.parse(text);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('variables must be a JSON object');
    return v;
  };

  const run = async () => {
    let variables;
    try {
      variables = readVars();
      varsError.hidden = true;
      varsEd.textarea.removeAttribute('aria-invalid');
    } catch (e) {
      varsError.textContent = `Variables are not valid JSON: ${e.message}`;
      varsError.hidden = false;
      varsEd.textarea.setAttribute('aria-invalid', 'true');
      varsEd.textarea.setAttribute('aria-errormessage', varsError.id);
      varsEd.textarea.focus();
      return;
    }
    runBtn.disabled = true;
    result.setAttribute('aria-busy', 'true');
    replace(result, h('p', { class: 'loading-inline', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Running…'));
    try {
      const r = await execute(queryEd.textarea.value, variables, { operationName: opField.hidden ? undefined : opSel.value, authorization: authInput.value });
      const text = JSON.stringify(r.body, null, 2);
      replace(result,
        h('div', { class: 'result-status' },
          h('span', { class: ['badge', r.status < 300 && !r.errors.length ? 'tone-good' : r.data ? 'tone-warn' : 'tone-bad'] }, `HTTP ${r.status}`),
          h('span', {}, h('strong', {}, r.operationName)),
          h('span', { class: 'muted' }, `${r.ms} ms`),
          r.requestId ? h('span', { class: 'muted' }, 'request ', h('code', {}, r.requestId)) : null,
          r.errors.length ? h('span', { class: 'text-bad' }, `${r.errors.length} error${r.errors.length > 1 ? 's' : ''}`) : null),
        costTiles(r.extensions?.dynamodb, r.extensions),
        r.errors.length ? errorPanel(new ApiError(r.errors[0]?.message, { kind: 'graphql', errors: r.errors, status: r.status, requestId: r.requestId, operationName: r.operationName }), { title: r.data ? 'The operation returned errors next to data' : 'The operation failed' }) : null,
        h('div', { class: 'json-head' }, h('h3', {}, 'Response'), h('span', { class: 'muted' }, `${new Blob([text]).size.toLocaleString()} bytes`)),
        h('pre', { class: 'json', tabindex: '0', 'aria-label': 'JSON response', dataset: { testid: 'console-json' } }, highlight(text)));
    } catch (err) {
      replace(result, errorPanel(err));
    } finally {
      runBtn.disabled = false;
      result.removeAttribute('aria-busy');
    }
  };

  curlBtn.addEventListener('click', async () => {
    const body = JSON.stringify({ query: queryEd.textarea.value, variables: (() => { try { return readVars(); } catch { return {}; } })() });
    const url = new URL(endpoint, location.href).href;
    const q = (s) => `'${s.replace(/'/g, "'\\''")}'`;
    const cmd = [`curl -sS ${q(url)}`, `-H 'Content-Type: application/json'`, authInput.value ? `-H ${q(`Authorization: ${authInput.value}`)}` : null, `--data-raw ${q(body)}`].filter(Boolean).join(' \\\n  ');
    try {
      await navigator.clipboard.writeText(cmd);
      curlBtn.textContent = 'Copied';
      setTimeout(() => { curlBtn.textContent = 'Copy as curl'; }, 1500);
    } catch {
      replace(result, h('p', {}, 'Copy this command:'), h('pre', { class: 'json', tabindex: '0' }, cmd));
    }
  });

  const form = h('form', {
    class: 'console-form', 'aria-label': 'GraphQL operation',
    onsubmit: (e) => { e.preventDefault(); run(); },
    onkeydown: (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); } },
  },
  h('div', { class: 'field' }, h('label', { for: exampleSel.id }, 'Example'), exampleSel),
  h('div', { class: 'field' },
    h('label', { for: qid }, 'Operation'),
    queryEd.el,
    h('span', { class: 'field-hint', id: `${qid}-hint` }, 'Tab indents; press Esc then Tab to leave the editor. Ctrl+Enter (⌘+Enter) runs.')),
  opField,
  h('div', { class: 'field' }, h('label', { for: vid }, 'Variables (JSON)'), varsEd.el, varsError),
  h('div', { class: 'field' },
    h('label', { for: aid }, 'Authorization header'),
    h('div', { class: 'input-row' }, authInput, showAuth, resetAuth),
    h('span', { class: 'field-hint', id: `${aid}-hint` }, pageKey
      ? 'Prefilled with the key this server gave the page. A change applies to every view in this tab.'
      : 'Empty sends no header. A value applies to every view in this tab.')),
  h('div', { class: 'form-actions' }, runBtn, curlBtn));

  replace(root,
    h('div', { class: 'page-head' },
      h('div', {},
        h('h1', { tabindex: '-1' }, 'Query console'),
        h('p', { class: 'page-sub' }, 'Run any operation against ', h('code', {}, endpoint), '. Every response reports what it cost in DynamoDB: requests, operations and capacity.'))),
    h('div', { class: 'console' },
      h('section', { class: 'card console-editor', 'aria-label': 'Operation' }, form),
      h('section', { class: 'card console-output', 'aria-label': 'Result', 'aria-live': 'polite' }, h('h2', { class: 'card-title' }, 'Result'), result)));
  if (params.get('run') === '1') run();
}
