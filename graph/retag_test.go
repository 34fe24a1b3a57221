package graph_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/sample"
)

// retagHarness is the server as server.go builds it: the sample catalogue, a partition cache
// that follows the store's own writes (dynamo.Options.OnCommit → PartitionCache.Retag), and
// beside it, on the same store, a server without the cache (uncached) to compare answers with.
type retagHarness struct {
	*harness
	cache    *graph.PartitionCache
	uncached *harness
}

func newRetagHarness(t *testing.T) *retagHarness {
	t.Helper()
	cache := graph.NewPartitionCache(graph.DefaultCacheBytes, nil)
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return testNow }, OnCommit: cache.Retag})
	if _, err := env.Store.BulkLoad(context.Background(), sample.Catalogue(testNow), 4); err != nil {
		t.Fatalf("BulkLoad: %v", err)
	}
	env.Counter.Reset()
	opts := graph.Options{Logger: testLogger(), Introspection: true, Now: func() time.Time { return testNow }}
	plain := &harness{env: env, handler: graph.NewHandler(env.Store, opts)}
	opts.PartitionCache = cache
	return &retagHarness{harness: &harness{env: env, handler: graph.NewHandler(env.Store, opts)}, cache: cache, uncached: plain}
}

// fullView reads what each kind of write can change of a capability: its own fields and
// aggregates, and every field of its ranges that a write moves.
const fullView = `query($id: ID!) { capability(id: $id) { name description status revision updatedAt
  aggregates { totalComponents activeComponents healthScore healthStatus totalDependencies totalJobs successfulJobs totalRules activeRules lastDeployment }
  components { componentId name order version status revision updatedAt health { status availability responseTime errorRate } dependsOn { componentId } dependents { componentId } }
  dependencies { sourceComponentId targetComponentId criticality dependencyType revision }
  rules { ruleId name order status revision updatedAt metrics { executionCount lastExecuted } } } }`

// view reads fullView through the cached server and checks it against the uncached one; it
// returns the cache's hits and misses and the DynamoDB requests of the cached read.
func (h *retagHarness) view(t *testing.T, what, id string) (hits, misses, requests int) {
	t.Helper()
	vars := map[string]any{"id": id}
	cached := h.do(t, fullView, vars)
	requests = h.env.Counter.Total()
	if len(cached.Errors) > 0 {
		t.Fatalf("%s: errors: %s", what, cached.Body)
	}
	hits, misses = cacheCounts(t, cached)
	plain := h.uncached.do(t, fullView, vars)
	if string(cached.Data) != string(plain.Data) {
		t.Errorf("%s: the cached server answers\n%s\nthe uncached one\n%s", what, cached.Data, plain.Data)
	}
	return hits, misses, requests
}

// After a write through this server, the ranges it did not touch are still cached at the
// capability's new version: a description change costs the next complete view only its
// metadata read, and the answer is the new one; a component write misses the components and
// dependencies range only, a rule write the rules range only.
func TestRetagAfterOwnWrite(t *testing.T) {
	h := newRetagHarness(t)
	const id = "CAP-ALERT-MGT-001"
	if _, misses, n := h.view(t, "cold", id); misses != 2 || n != 3 {
		t.Fatalf("cold view: %d misses, %d requests, want 2 and 3", misses, n)
	}
	h.ok(t, `mutation { updateCapability(id: "CAP-ALERT-MGT-001", expectedRevision: 1, input: {description: "retagged"}) { revision } }`, nil, nil)
	resp := h.do(t, completeView, nil)
	if n := h.env.Counter.Total(); n != 1 {
		t.Errorf("view after updateCapability: %d requests (%v), want 1 (the metadata)", n, h.env.Counter.Ops())
	}
	if hits, misses := cacheCounts(t, resp); hits != 2 || misses != 0 {
		t.Errorf("view after updateCapability: hits/misses %d/%d, want 2/0", hits, misses)
	}
	if hits, misses, _ := h.view(t, "after updateCapability", id); hits != 2 || misses != 0 {
		t.Errorf("full view after updateCapability: hits/misses %d/%d, want 2/0", hits, misses)
	}
	if d := h.do(t, `{ capability(id: "CAP-ALERT-MGT-001") { description } }`, nil); string(d.Data) != `{"capability":{"description":"retagged"}}` {
		t.Errorf("description after the write: %s", d.Data)
	}

	h.ok(t, `mutation { updateComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "api-server-alert-001", expectedRevision: 1, input: {version: "9.9"}) { revision } }`, nil, nil)
	if hits, misses, n := h.view(t, "after updateComponent", id); hits != 1 || misses != 1 || n != 2 {
		t.Errorf("view after updateComponent: hits/misses %d/%d, %d requests (%v); want 1/1 and 2 (metadata, components)", hits, misses, n, h.env.Counter.Ops())
	}
	h.ok(t, `mutation { createRule(capabilityId: "CAP-ALERT-MGT-001", input: {ruleId: "retag-rule", name: "R", ruleType: BUSINESS, priority: LOW, order: 90, status: ACTIVE, conditions: [], actions: []}) { revision } }`, nil, nil)
	if hits, misses, n := h.view(t, "after createRule", id); hits != 1 || misses != 1 || n != 2 {
		t.Errorf("view after createRule: hits/misses %d/%d, %d requests (%v); want 1/1 and 2 (metadata, rules)", hits, misses, n, h.env.Counter.Ops())
	}
	if hits, misses, n := h.view(t, "warm", id); hits != 2 || misses != 0 || n != 1 {
		t.Errorf("warm view: hits/misses %d/%d, %d requests; want 2/0 and 1", hits, misses, n)
	}
}

// Every mutation that commits through the store, in turn on one capability: after each, the
// cached server's complete view equals the uncached server's (a range the write touched and
// the cache still served would differ), and it reads again exactly the ranges the write
// touched. Re-tagging every range (touched or not) fails here.
func TestRetagEveryMutation(t *testing.T) {
	h := newRetagHarness(t)
	const id = "CAP-FEED-001"
	const none, cd, rules, both = 0, 1, 1, 2
	steps := []struct {
		name   string
		query  string
		misses int // ranges read again by the next view: components+dependencies, rules
	}{
		{"createCapability", `mutation { createCapability(input: {capabilityId: "CAP-FEED-001", name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`, both},
		{"updateCapability", `mutation { updateCapability(id: "CAP-FEED-001", expectedRevision: 1, input: {owner: "feed-team", description: "d"}) { revision } }`, none},
		{"transitionCapability", `mutation { transitionCapability(id: "CAP-FEED-001", to: DEVELOPMENT, expectedRevision: 2) { revision } }`, none},
		{"addComponent", `mutation { addComponent(capabilityId: "CAP-FEED-001", input: {componentId: "feed-api-1", name: "API", componentType: "api-server", order: 1, sla: {availability: 99.9, responseTime: 200, errorRate: 1}}) { revision } }`, cd},
		{"addComponent 2", `mutation { addComponent(capabilityId: "CAP-FEED-001", input: {componentId: "feed-db-1", name: "DB", componentType: "database", order: 2}) { revision } }`, cd},
		{"updateComponent", `mutation { updateComponent(capabilityId: "CAP-FEED-001", componentId: "feed-db-1", expectedRevision: 1, input: {order: 3, version: "15.2"}) { revision } }`, cd},
		{"addDependency", `mutation { addDependency(capabilityId: "CAP-FEED-001", input: {sourceComponentId: "feed-api-1", targetComponentId: "feed-db-1", dependencyType: RUNTIME, criticality: HIGH}) { id } }`, cd},
		{"startJob", `mutation { startJob(capabilityId: "CAP-FEED-001", input: {jobId: "JOB-FEED-1", jobType: DEPLOYMENT, status: RUNNING, targetComponents: [{componentId: "feed-api-1", fromVersion: "1", toVersion: "2"}]}) { revision } }`, none},
		{"updateJob", `mutation { updateJob(jobId: "JOB-FEED-1", expectedRevision: 1, input: {status: COMPLETED}) { revision } }`, cd},
		{"recordMetrics", fmt.Sprintf(`mutation { recordMetrics(inputs: [
			{capabilityId: "CAP-FEED-001", componentId: "feed-api-1", metricType: PERFORMANCE, timestamp: %q, interval: "1m", values: {availability: {value: 42}, latency: {p50: 50, p95: 100, p99: 150, max: 300}, errors: {rate: 30, count: 1}}},
			{capabilityId: "CAP-FEED-001", componentId: "feed-db-1", metricType: BUSINESS, timestamp: %q, interval: "1m", values: {availability: {value: 50}}}]) { recorded } }`,
			testNow.Add(-2*time.Minute).Format(time.RFC3339), testNow.Add(-time.Minute).Format(time.RFC3339)), cd},
		{"createRule", `mutation { createRule(capabilityId: "CAP-FEED-001", input: {ruleId: "feed-rule", name: "R", ruleType: BUSINESS, priority: HIGH, order: 1, status: ACTIVE, conditions: [{field: "amount", operator: ">=", value: 1, weight: 1}], actions: [{type: "notify", parameters: {channel: "ops"}}]}) { revision } }`, rules},
		{"executeRules", `mutation { executeRules(capabilityId: "CAP-FEED-001", input: {amount: 5}) { matched } }`, rules},
		{"updateRule", `mutation { updateRule(capabilityId: "CAP-FEED-001", ruleId: "feed-rule", expectedRevision: 1, input: {order: 2}) { revision } }`, rules},
		{"updateCapability again", `mutation { updateCapability(id: "CAP-FEED-001", expectedRevision: REV, input: {description: "e"}) { revision } }`, none},
		{"deleteRule", `mutation { deleteRule(capabilityId: "CAP-FEED-001", ruleId: "feed-rule") }`, rules},
		{"removeDependency", `mutation { removeDependency(capabilityId: "CAP-FEED-001", sourceComponentId: "feed-api-1", targetComponentId: "feed-db-1") }`, cd},
		{"removeComponent", `mutation { removeComponent(capabilityId: "CAP-FEED-001", componentId: "feed-db-1", cascade: true) }`, cd},
	}
	for _, s := range steps {
		if strings.Contains(s.query, "REV") {
			var cur struct{ Capability struct{ Revision int } }
			h.ok(t, `{ capability(id: "CAP-FEED-001") { revision } }`, nil, &cur)
			s.query = strings.Replace(s.query, "REV", strconv.Itoa(cur.Capability.Revision), 1)
		}
		h.ok(t, s.query, nil, nil)
		hits, misses, n := h.view(t, "after "+s.name, id)
		if misses != s.misses || hits != 2-s.misses || n != 1+s.misses {
			t.Errorf("view after %s: hits/misses %d/%d, %d requests; want %d/%d and %d", s.name, hits, misses, n, 2-s.misses, s.misses, 1+s.misses)
		}
		if hits, misses, n := h.view(t, "again after "+s.name, id); hits != 2 || misses != 0 || n != 1 {
			t.Errorf("second view after %s: hits/misses %d/%d, %d requests; want 2/0 and 1", s.name, hits, misses, n)
		}
	}
}
