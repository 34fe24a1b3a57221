// The capability list's URL state (assets/js/liststate.js) under Node: no browser needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseState, listHash, filterOf } from '../assets/js/liststate.js';

const parse = (hash) => parseState(new URLSearchParams(hash.replace(/^#\/\??/, '')));

test('an empty hash is the unfiltered list in the default order, 20 a page', () => {
  const st = parse('#/');
  assert.deepEqual(st, { q: '', domains: [], statuses: [], priorities: [], healths: [], owner: '', tags: [], sort: '', dir: 'ASC', first: 20 });
  assert.equal(filterOf(st), null);
  assert.equal(listHash(st), '#/');
});

test('every filter, the order and the page size survive a round trip through the hash', () => {
  const st = {
    q: 'alert man', domains: ['operations', 'risk, compliance'], statuses: ['ACTIVE', 'PLANNING'], priorities: ['CRITICAL'],
    healths: ['DEGRADED'], owner: 'sre-team', tags: ['kyc', 'real-time'], sort: 'HEALTH_SCORE', dir: 'DESC', first: 50,
  };
  const hash = listHash(st);
  assert.deepEqual(parse(hash), st);
  assert.deepEqual(filterOf(parse(hash)), {
    search: 'alert man', domains: ['operations', 'risk, compliance'], statuses: ['ACTIVE', 'PLANNING'], priorities: ['CRITICAL'],
    healthStatuses: ['DEGRADED'], owner: 'sre-team', tags: ['kyc', 'real-time'],
  });
});

test('the old links still work: ?domain= and ?health=, and listHash({domain}) writes them', () => {
  assert.equal(listHash({ domain: 'operations' }), '#/?domain=operations');
  assert.equal(listHash({ health: 'DEGRADED' }), '#/?health=DEGRADED');
  assert.deepEqual(filterOf(parse('#/?health=DEGRADED')), { healthStatuses: ['DEGRADED'] });
  assert.deepEqual(filterOf(parse('#/?domain=operations')), { domains: ['operations'] });
});

test('unknown values, sorts and sizes are dropped, not sent', () => {
  const st = parse('#/?status=ACTIVE,NOPE&priority=URGENT&health=&sort=COLOUR&dir=DESC&first=1000');
  assert.deepEqual(st.statuses, ['ACTIVE']);
  assert.deepEqual(st.priorities, []);
  assert.deepEqual(st.healths, []);
  assert.equal(st.sort, '');
  assert.equal(st.dir, 'ASC', 'a direction without a sort');
  assert.equal(st.first, 20);
  assert.equal(listHash(st), '#/?status=ACTIVE');
});

test('ascending is the default direction and is left out of the hash', () => {
  assert.equal(listHash({ sort: 'NAME', dir: 'ASC' }), '#/?sort=NAME');
  assert.equal(listHash({ sort: 'NAME', dir: 'DESC', first: 50 }), '#/?sort=NAME&dir=DESC&first=50');
  assert.equal(parse('#/?sort=NAME').dir, 'ASC');
});
