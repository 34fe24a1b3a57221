package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo"
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

// A write through another server instance on the same table is not seen by this one's cache:
// its next view finds the capability at a version none of its entries carries and reads every
// range again (as without Retag), and answers the new state.
func TestRetagWriteThroughAnotherInstance(t *testing.T) {
	h := newRetagHarness(t)
	const id = "CAP-ALERT-MGT-001"
	h.view(t, "cold", id)
	otherCache := graph.NewPartitionCache(graph.DefaultCacheBytes, nil)
	other := dynamo.New(h.env.Client, dynamo.Options{Table: h.env.Table, Now: func() time.Time { return testNow }, CursorSecret: []byte("test-secret"),
		Logger: testLogger(), StatsTTL: -1, OnCommit: otherCache.Retag})
	otherServer := graph.NewHandler(other, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }, PartitionCache: otherCache})
	serve(t, otherServer, `mutation { updateCapability(id: "CAP-ALERT-MGT-001", expectedRevision: 1, input: {description: "elsewhere"}) { revision } }`, nil)
	if hits, misses, n := h.view(t, "after a description change elsewhere", id); hits != 0 || misses != 2 || n != 3 {
		t.Errorf("view after a write through another instance: hits/misses %d/%d, %d requests; want 0/2 and 3", hits, misses, n)
	}
	h.view(t, "warm", id)
	serve(t, otherServer, addComp, map[string]any{"cap": id, "in": map[string]any{"componentId": "elsewhere-1", "name": "n", "componentType": "cache", "order": 62}})
	if hits, misses, _ := h.view(t, "after addComponent elsewhere", id); hits != 0 || misses != 2 {
		t.Errorf("view after addComponent through another instance: hits/misses %d/%d, want 0/2", hits, misses)
	}
	if ids := componentIDs(t, h.do(t, completeView, nil)); !slices.Contains(ids, "elsewhere-1") {
		t.Errorf("components after the write elsewhere: %v", ids)
	}
	h.wrote = true
}

// A reader that read the capability's version before two writes (one of METADATA only, one
// of the components) and reads its components range after them caches that range under the
// old version: the writes' Retag ran before it was filled and must not have created it, and
// no later Retag moves it (no write commits from the old version again). The next view reads
// the components again and answers the writes (as the uncached server does: view compares).
// The reader's rules range is read beside its components range: filled before the writes'
// Retag it was moved along with them and hits, filled after it is at the old version and
// misses; both are right, and which one comes is up to the scheduler.
func TestRetagReaderFillingAtTheOldVersion(t *testing.T) {
	h := newRetagHarness(t)
	const id = "CAP-ALERT-MGT-001"
	// The first Query of the components range (the reader's) waits for release; the
	// write's own read of that range, later, passes.
	var armed atomic.Bool
	armed.Store(true)
	held, release := make(chan struct{}), make(chan struct{})
	h.env.Counter.Inspect = func(op string, body []byte, _ http.ResponseWriter) bool {
		if op == "Query" && strings.Contains(string(body), "COMPONENT#") && armed.CompareAndSwap(true, false) {
			close(held)
			<-release
		}
		return false
	}
	done := make(chan *gqlResponse)
	go func() { done <- serve(t, h.handler, fullView, map[string]any{"id": id}) }()
	<-held
	h.ok(t, `mutation { updateCapability(id: "CAP-ALERT-MGT-001", expectedRevision: 1, input: {description: "during the read"}) { revision } }`, nil, nil)
	h.ok(t, addComp, map[string]any{"cap": id, "in": map[string]any{"componentId": "during-read-1", "name": "n", "componentType": "cache", "order": 63}}, nil)
	close(release)
	<-done
	hits, misses, _ := h.view(t, "after the reader filled at the old version", id)
	if misses < 1 || hits+misses != 2 {
		t.Errorf("view after: hits/misses %d/%d, want the components read again (a miss) and 2 ranges in all", hits, misses)
	}
	if ids := componentIDs(t, h.do(t, completeView, nil)); !slices.Contains(ids, "during-read-1") {
		t.Errorf("components after the writes: %v", ids)
	}
}

// Writers of the components and writers of METADATA only race with readers, each writer
// reading right after its own write; every such read shows the write, and after each round the
// cached server answers as the uncached one. Run with -race.
func TestRetagRacingWritersAndReaders(t *testing.T) {
	h := newRetagHarness(t)
	const id = "CAP-ALERT-MGT-001"
	h.view(t, "cold", id)
	for round := range 4 {
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				for range 3 {
					serve(t, h.handler, fullView, map[string]any{"id": id})
				}
			})
		}
		wg.Go(func() {
			comp := fmt.Sprintf("race-%d", round)
			serve(t, h.handler, addComp, map[string]any{"cap": id, "in": map[string]any{"componentId": comp, "name": "n", "componentType": "cache", "order": 70 + round}})
			if ids := componentIDs(t, serve(t, h.handler, completeView, nil)); !slices.Contains(ids, comp) {
				t.Errorf("round %d: the view right after addComponent %s has %v", round, comp, ids)
			}
		})
		wg.Go(func() {
			desc := fmt.Sprintf("round %d", round)
			for attempt := 0; ; attempt++ {
				var cur struct{ Capability struct{ Revision int } }
				if err := decodeData(serve(t, h.handler, `{ capability(id: "CAP-ALERT-MGT-001") { revision } }`, nil), &cur); err != nil {
					t.Error(err)
					return
				}
				resp := h.uncached.do(t, `mutation($id: ID!, $rev: Int!, $d: String!) { updateCapability(id: $id, expectedRevision: $rev, input: {description: $d}) { revision } }`,
					map[string]any{"id": id, "rev": cur.Capability.Revision, "d": desc})
				if len(resp.Errors) == 0 {
					break
				}
				if attempt > 20 {
					t.Errorf("round %d: updateCapability kept failing: %s", round, resp.Body)
					return
				}
			}
			var got struct{ Capability struct{ Description string } }
			if err := decodeData(serve(t, h.handler, fullView, map[string]any{"id": id}), &got); err != nil {
				t.Error(err)
			} else if got.Capability.Description != desc {
				// Another round's write cannot come in between: rounds do not overlap.
				t.Errorf("round %d: the view right after updateCapability has description %q", round, got.Capability.Description)
			}
		})
		wg.Wait()
		h.view(t, fmt.Sprintf("after round %d", round), id)
	}
	h.wrote = true
}

// decodeData decodes a response's data into out.
func decodeData(resp *gqlResponse, out any) error { return json.Unmarshal(resp.Data, out) }
