// The documented Apollo Client setup (typePolicies.mjs) against a running catalogue:
// CATALOGUE_URL is its /graphql, CATALOGUE_ADMIN_KEY an admin API key. Run in development mode
// (`node --conditions=development --test`), where Apollo Client prints its cache warnings
// ("Cache data may be lost ...") with console.warn/console.error: any of them fails the test.
import { test, after } from "node:test";
import assert from "node:assert/strict";

const warnings = [];
for (const level of ["warn", "error"]) {
  const orig = console[level];
  console[level] = (...args) => {
    warnings.push(`${level}: ${args.map(String).join(" ")}`);
    orig.apply(console, args);
  };
}

const { ApolloClient, InMemoryCache, HttpLink, gql } = await import("@apollo/client");
const { __DEV__ } = await import("@apollo/client/utilities/environment");
const { loadDevMessages, loadErrorMessages } = await import("@apollo/client/dev");
const { typePolicies } = await import("./typePolicies.mjs");
loadDevMessages();
loadErrorMessages();

const url = process.env.CATALOGUE_URL;
const key = process.env.CATALOGUE_ADMIN_KEY;
if (!url || !key) throw new Error("CATALOGUE_URL and CATALOGUE_ADMIN_KEY must be set");

let requests = 0;
const countingFetch = (...args) => {
  requests++;
  return fetch(...args);
};
const client = new ApolloClient({
  link: new HttpLink({ uri: url, fetch: countingFetch, headers: { Authorization: `Bearer ${key}` } }),
  cache: new InMemoryCache({ typePolicies }),
});

// post runs an operation outside the client (the set-up), failing on any error.
async function post(query, variables) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

const VIEW = gql`
  query View($id: ID!) {
    capability(id: $id) {
      id capabilityId name revision
      aggregates { totalComponents totalRules }
      components { id componentId capabilityId name revision configuration { environment } health { status availability } }
      rules { id ruleId capabilityId name revision }
    }
  }
`;
// OTHER selects other fields of the same id-less objects (Aggregates, Configuration, ComponentHealth).
const OTHER = gql`
  query Other($id: ID!) {
    capability(id: $id) {
      id
      aggregates { activeComponents activeRules healthStatus }
      components { id status configuration { secrets featureFlags } health { status errorRate } }
    }
  }
`;

const caps = ["CAP-APOLLO-A", "CAP-APOLLO-B"];
await (async () => {
  for (const [i, id] of caps.entries()) {
    await post(`mutation($in: CreateCapabilityInput!) { createCapability(input: $in) { id } }`, {
      in: { capabilityId: id, name: `Apollo ${id}`, businessDomain: "apollo", priority: "HIGH", status: "ACTIVE" },
    });
    await post(`mutation($c: ID!, $in: ComponentInput!) { addComponent(capabilityId: $c, input: $in) { id } }`, {
      c: id,
      in: {
        componentId: `apollo-${i}-api`, name: `API of ${id}`, componentType: "api-server", order: 1, status: "ACTIVE",
        configuration: { environment: "production", secrets: ["db"], featureFlags: { beta: i === 0 } },
        health: { status: "HEALTHY", availability: 99.9, responseTime: 120, errorRate: 0.1, activeAlerts: 0 },
      },
    });
    await post(`mutation($c: ID!, $in: RuleInput!) { createRule(capabilityId: $c, input: $in) { id } }`, {
      c: id,
      in: {
        ruleId: "RULE-APOLLO-SHARED", name: `Rule of ${id}`, ruleType: "OPERATIONAL", priority: "HIGH", order: 10, status: "ACTIVE",
        conditions: [{ field: "severity", operator: "equals", value: "high", weight: 1 }], actions: [{ type: "notify" }],
      },
    });
  }
})();

after(() => {
  assert.deepEqual(warnings, [], "Apollo Client printed warnings");
});

test("runs in development mode, where the cache warns", () => {
  assert.equal(__DEV__, true, "run node with --conditions=development");
});

test("two capabilities' components and rules with the same ruleId never merge", async () => {
  for (const id of caps) await client.query({ query: VIEW, variables: { id } });
  for (const id of caps) await client.query({ query: OTHER, variables: { id } });
  for (const id of caps) {
    const { data } = await client.query({ query: VIEW, variables: { id }, fetchPolicy: "cache-only" });
    const c = data.capability;
    assert.equal(c.components.length, 1);
    assert.equal(c.components[0].name, `API of ${id}`);
    assert.equal(c.components[0].capabilityId, id);
    assert.equal(c.rules.length, 1);
    assert.equal(c.rules[0].name, `Rule of ${id}`, `the cached view of ${id} shows another capability's rule`);
    assert.equal(c.rules[0].capabilityId, id);
    assert.equal(c.aggregates.totalRules, 1);
  }
  const other = await client.query({ query: OTHER, variables: { id: caps[0] }, fetchPolicy: "cache-only" });
  assert.equal(other.data.capability.aggregates.activeRules, 1, "the second view's aggregates fields stay next to the first's");
  assert.equal(other.data.capability.components[0].health.status, "HEALTHY");
});

test("a mutation's result updates the cached views without a refetch", async () => {
  const { data: before } = await client.query({ query: VIEW, variables: { id: caps[0] } });
  const comp = before.capability.components[0];
  const rule = before.capability.rules[0];
  const start = requests;
  await client.mutate({
    mutation: gql`mutation($c: ID!, $id: ID!, $rev: Int!) {
      updateComponent(capabilityId: $c, componentId: $id, expectedRevision: $rev, input: { name: "Renamed API" }) { id name revision }
    }`,
    variables: { c: caps[0], id: comp.componentId, rev: comp.revision },
  });
  await client.mutate({
    mutation: gql`mutation($c: ID!, $id: ID!, $rev: Int!) {
      updateRule(capabilityId: $c, ruleId: $id, expectedRevision: $rev, input: { name: "Renamed rule" }) { id name revision }
    }`,
    variables: { c: caps[0], id: rule.ruleId, rev: rule.revision },
  });
  assert.equal(requests - start, 2, "one request per mutation");
  const { data } = await client.query({ query: VIEW, variables: { id: caps[0] }, fetchPolicy: "cache-only" });
  assert.equal(data.capability.components[0].name, "Renamed API");
  assert.equal(data.capability.components[0].revision, comp.revision + 1);
  assert.equal(data.capability.rules[0].name, "Renamed rule");
  const { data: b } = await client.query({ query: VIEW, variables: { id: caps[1] }, fetchPolicy: "cache-only" });
  assert.equal(b.capability.rules[0].name, `Rule of ${caps[1]}`, "the other capability's rule kept its name");
  assert.equal(b.capability.components[0].name, `API of ${caps[1]}`);
  assert.equal(requests - start, 2, "the cached views were read without a request");
});

test("history versions stay distinct from the live entity and from each other", async () => {
  const { data: live } = await client.query({ query: VIEW, variables: { id: caps[1] }, fetchPolicy: "network-only" });
  await post(`mutation($id: ID!, $rev: Int!) { updateCapability(id: $id, expectedRevision: $rev, input: { name: "Apollo B v2" }) { id } }`,
    { id: caps[1], rev: live.capability.revision });
  await post(`mutation($c: ID!, $r: ID!, $rev: Int!) { updateRule(capabilityId: $c, ruleId: $r, expectedRevision: $rev, input: { name: "Rule of B v2" }) { id } }`,
    { c: caps[1], r: "RULE-APOLLO-SHARED", rev: live.capability.rules[0].revision });
  const HISTORY = gql`
    query History($id: ID!) {
      capabilityHistory(id: $id, first: 10) { nodes { id revision name } pageInfo { hasNextPage endCursor } }
      capability(id: $id) {
        id name revision
        history(first: 10) { nodes { id revision name } pageInfo { hasNextPage endCursor } }
        rules { id ruleId name revision history(first: 10) { nodes { id revision name ruleId capabilityId } pageInfo { hasNextPage endCursor } } }
      }
    }
  `;
  await client.query({ query: HISTORY, variables: { id: caps[1] } });
  const { data } = await client.query({ query: HISTORY, variables: { id: caps[1] }, fetchPolicy: "cache-only" });
  const c = data.capability;
  assert.equal(c.name, "Apollo B v2");
  assert.equal(c.history.nodes[0].name, `Apollo ${caps[1]}`, "the version keeps its own name");
  const ids = new Set([c.id]);
  for (const v of [...c.history.nodes, ...data.capabilityHistory.nodes.filter((v) => v.revision !== c.revision)]) {
    if (c.history.nodes.includes(v)) {
      assert.ok(!ids.has(v.id), `version ${v.revision} shares the id ${v.id}`);
    }
    ids.add(v.id);
  }
  const r = c.rules[0];
  assert.equal(r.name, "Rule of B v2");
  assert.equal(r.history.nodes.length, 1);
  assert.notEqual(r.history.nodes[0].id, r.id);
  assert.equal(r.history.nodes[0].name, `Rule of ${caps[1]}`, "the rule version keeps its own name");
  const { data: a } = await client.query({ query: VIEW, variables: { id: caps[0] }, fetchPolicy: "cache-only" });
  assert.equal(a.capability.rules[0].name, "Renamed rule", "the other capability's live rule is untouched");
});

test("fetchMore pages a connection into one list", async () => {
  const LIST = gql`
    query List($domain: String, $first: Int, $after: String) {
      capabilities(domain: $domain, first: $first, after: $after) {
        edges { cursor node { id capabilityId name } }
        nodes { id capabilityId }
        pageInfo { hasNextPage endCursor }
      }
    }
  `;
  const q = client.watchQuery({ query: LIST, variables: { domain: "apollo", first: 1 } });
  const sub = q.subscribe(() => {});
  const first = await client.query({ query: LIST, variables: { domain: "apollo", first: 1 } });
  assert.equal(first.data.capabilities.edges.length, 1);
  assert.equal(first.data.capabilities.pageInfo.hasNextPage, true);
  await q.fetchMore({ variables: { after: first.data.capabilities.pageInfo.endCursor } });
  sub.unsubscribe();
  const { data } = await client.query({ query: LIST, variables: { domain: "apollo", first: 1 }, fetchPolicy: "cache-only" });
  assert.deepEqual(data.capabilities.edges.map((e) => e.node.capabilityId).sort(), caps);
  assert.deepEqual(data.capabilities.nodes.map((n) => n.capabilityId).sort(), caps);
  assert.equal(data.capabilities.pageInfo.hasNextPage, false);
});
