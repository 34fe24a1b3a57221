// The capability list's state (filters, order, page size) and its URL hash: parsed from and
// written to the hash's parameters, and turned into Query.capabilities' filter. No DOM: the
// round trip is tested under Node (test/liststate.test.mjs).

export const STATUSES = ['PLANNING', 'DEVELOPMENT', 'ACTIVE', 'DEPRECATED', 'RETIRING'];
export const PRIORITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'];
export const HEALTH = ['HEALTHY', 'DEGRADED', 'UNHEALTHY', 'UNKNOWN'];
export const SORTS = ['NAME', 'PRIORITY', 'HEALTH_SCORE', 'UPDATED_AT'];
export const uniq = (xs) => [...new Set(xs.map((x) => String(x).trim()).filter(Boolean))];

// parseState reads the list's state from the hash's parameters.
export function parseState(params) {
  // Enum lists may also come comma-separated (?status=ACTIVE,PLANNING); domains and tags are
  // taken whole, so a value with a comma survives the round trip.
  const all = (k, allowed) => (allowed
    ? uniq(params.getAll(k).flatMap((v) => v.split(','))).filter((v) => allowed.includes(v))
    : uniq(params.getAll(k)));
  const asked = Number.parseInt(params.get('first'), 10);
  const sort = SORTS.includes(params.get('sort')) ? params.get('sort') : '';
  return {
    q: (params.get('q') || '').trim(),
    domains: all('domain'),
    statuses: all('status', STATUSES),
    priorities: all('priority', PRIORITIES),
    healths: all('health', HEALTH),
    owner: (params.get('owner') || '').trim(),
    tags: all('tag'),
    sort,
    dir: sort && params.get('dir') === 'DESC' ? 'DESC' : 'ASC',
    first: asked >= 1 && asked <= 100 ? asked : 20,
  };
}

// listHash builds the hash of a list state; listHash({domain}) and listHash({health}) still work.
export function listHash(st = {}) {
  const p = new URLSearchParams();
  if (st.q) p.set('q', st.q);
  for (const d of st.domains || (st.domain ? [st.domain] : [])) p.append('domain', d);
  for (const s of st.statuses || []) p.append('status', s);
  for (const s of st.priorities || []) p.append('priority', s);
  for (const s of st.healths || (st.health ? [st.health] : [])) p.append('health', s);
  if (st.owner) p.set('owner', st.owner);
  for (const t of st.tags || []) p.append('tag', t);
  if (st.sort) {
    p.set('sort', st.sort);
    if (st.dir === 'DESC') p.set('dir', 'DESC');
  }
  if (st.first && st.first !== 20) p.set('first', String(st.first));
  const q = p.toString();
  return q ? `#/?${q}` : '#/';
}

// filterOf is the CapabilityFilter of a state, or null without any filter.
export function filterOf(st) {
  const f = {};
  if (st.q) f.search = st.q;
  if (st.domains.length) f.domains = st.domains;
  if (st.statuses.length) f.statuses = st.statuses;
  if (st.priorities.length) f.priorities = st.priorities;
  if (st.healths.length) f.healthStatuses = st.healths;
  if (st.owner) f.owner = st.owner;
  if (st.tags.length) f.tags = st.tags;
  return Object.keys(f).length ? f : null;
}

