// The GraphQL client: one POST per operation, the Authorization header when the page has a
// key, and a report of every operation's DynamoDB cost (extensions.dynamodb) for the status bar.
// Operations are sent as automatic persisted queries (Apollo's protocol): the SHA-256 of the
// document first, and the document itself only when the server answers
// PERSISTED_QUERY_NOT_FOUND (then it keeps it for every later load of every page).

function meta(name) {
  return document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') || '';
}

export const endpoint = meta('catalogue-endpoint') || '/graphql';

// The key the server rendered into the page (the embedded default's), if any.
export const pageKey = meta('catalogue-api-key');

const AUTH_STORAGE = 'catalogue.authorization';

// The Authorization header every request sends: what the console set in this tab, else
// "Bearer <page key>", else nothing.
export const auth = {
  get header() {
    const stored = sessionStorage.getItem(AUTH_STORAGE);
    if (stored !== null) return stored;
    return pageKey ? `Bearer ${pageKey}` : '';
  },
  set header(v) {
    sessionStorage.setItem(AUTH_STORAGE, v);
  },
  get overridden() {
    return sessionStorage.getItem(AUTH_STORAGE) !== null;
  },
  reset() {
    sessionStorage.removeItem(AUTH_STORAGE);
  },
};

// ApiError is an operation that produced no usable data: the network failed, the server did
// not answer JSON, or GraphQL returned errors and no data.
export class ApiError extends Error {
  constructor(message, { kind, status, errors = [], requestId, operationName, hint } = {}) {
    super(message);
    this.name = 'ApiError';
    this.kind = kind; // 'network' | 'http' | 'graphql'
    this.status = status;
    this.errors = errors;
    this.requestId = requestId;
    this.operationName = operationName;
    this.hint = hint;
  }
}

// operationNameOf returns the name of the document's first named operation.
export function operationNameOf(query) {
  const m = /\b(query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(query || '');
  return m ? m[2] : '';
}

function hintFor(status, errors) {
  const codes = errors.map((e) => e?.extensions?.code).filter(Boolean);
  if (status === 401 || codes.includes('UNAUTHENTICATED')) {
    return 'The server wants an API key or a token: sign in (when the header offers it), or set the Authorization header in the query console (it applies to every view in this tab).';
  }
  if (status === 403 || codes.includes('FORBIDDEN')) {
    return 'Your key does not allow this operation.';
  }
  return '';
}

// The hashes of the documents sent, by document.
const hashes = new Map();

// persisted is false once the server said it does not keep persisted queries.
let persisted = true;

// sha256Hex returns the lower-case hex SHA-256 of text, or '' where the page cannot compute it:
// crypto.subtle exists only in secure contexts (https, and http on localhost or 127.0.0.1).
async function sha256Hex(text) {
  if (!globalThis.crypto?.subtle) return '';
  let hash = hashes.get(text);
  if (hash === undefined) {
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
    hash = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
    hashes.set(text, hash);
  }
  return hash;
}

// persistedQueryError returns the persisted-query code of an answer: PERSISTED_QUERY_NOT_FOUND
// or PERSISTED_QUERY_NOT_SUPPORTED (by code, or by message as Apollo's servers also send it),
// else ''.
function persistedQueryError(body) {
  for (const e of Array.isArray(body?.errors) ? body.errors : []) {
    const code = e?.extensions?.code;
    if (code === 'PERSISTED_QUERY_NOT_FOUND' || e?.message === 'PersistedQueryNotFound') return 'PERSISTED_QUERY_NOT_FOUND';
    if (code === 'PERSISTED_QUERY_NOT_SUPPORTED' || e?.message === 'PersistedQueryNotSupported') return 'PERSISTED_QUERY_NOT_SUPPORTED';
  }
  return '';
}

// execute runs one operation and returns {data, errors, extensions, status, requestId, ms,
// operationName}. It throws ApiError only when there is no JSON answer; GraphQL errors are in
// the result. Every answer is reported to listeners of 'catalogue:operation'.
export async function execute(query, variables = {}, { operationName, signal, authorization } = {}) {
  const name = operationName || operationNameOf(query) || 'anonymous';
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  const authz = authorization ?? auth.header;
  if (authz) headers.Authorization = authz;
  const started = performance.now();
  const post = (body) => fetch(endpoint, {
    method: 'POST',
    headers,
    body: JSON.stringify({ ...body, variables, ...(operationName ? { operationName } : {}) }),
    signal,
    credentials: 'same-origin',
  });
  let res;
  let text;
  try {
    const hash = persisted ? await sha256Hex(query) : '';
    const extensions = hash ? { persistedQuery: { version: 1, sha256Hash: hash } } : undefined;
    if (extensions) {
      res = await post({ extensions });
      text = await res.text();
      let first = null;
      try { first = JSON.parse(text); } catch { /* answered below */ }
      const missing = persistedQueryError(first);
      if (missing === 'PERSISTED_QUERY_NOT_SUPPORTED') persisted = false;
      if (missing) {
        res = await post(missing === 'PERSISTED_QUERY_NOT_FOUND' ? { query, extensions } : { query });
        text = await res.text();
      }
    } else {
      res = await post({ query });
      text = await res.text();
    }
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    const err = new ApiError(`Could not reach the API at ${endpoint}: ${e?.message || e}`, { kind: 'network', operationName: name, hint: 'Is the server running? Reload the page when it is back.' });
    report({ operationName: name, failed: err.message });
    throw err;
  }
  const requestId = res.headers.get('X-Request-ID') || '';
  const took = Math.round(performance.now() - started);
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    const err = new ApiError(`HTTP ${res.status} ${res.statusText}: the API did not answer with JSON.`, { kind: 'http', status: res.status, requestId, operationName: name, hint: text.slice(0, 160) });
    report({ operationName: name, failed: err.message, ms: took });
    throw err;
  }
  const result = {
    data: body?.data ?? null,
    errors: Array.isArray(body?.errors) ? body.errors : [],
    extensions: body?.extensions ?? {},
    status: res.status,
    requestId,
    ms: took,
    operationName: name,
    body,
  };
  report(result);
  return result;
}

// gql runs an operation for a view: it returns the data, and throws ApiError when there is
// none. Errors next to data are kept in data.__errors for the view to show.
export async function gql(query, variables, opts = {}) {
  const r = await execute(query, variables, opts);
  if (r.errors.length && (r.data === null || r.status >= 400)) {
    const first = r.errors[0];
    throw new ApiError(first?.message || `HTTP ${r.status}`, {
      kind: 'graphql', status: r.status, errors: r.errors, requestId: r.requestId, operationName: r.operationName, hint: hintFor(r.status, r.errors),
    });
  }
  if (r.data && r.errors.length) Object.defineProperty(r.data, '__errors', { value: r.errors, enumerable: false });
  return r.data;
}

function report(detail) {
  document.dispatchEvent(new CustomEvent('catalogue:operation', { detail }));
}
