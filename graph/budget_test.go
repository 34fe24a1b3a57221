package graph_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/sample"
)

// The request budgets of docs/design.md, counted by an http.Handler around the backend (outside the code
// under test) and checked against extensions.dynamodb. When a change adds a request to one of
// these shapes, this test fails: it is the guard against N+1.
func TestRequestBudgets(t *testing.T) {
	runBudgets(t, newHarness(t), false)
}

// With a batch window of an hour, every budgeted shape still answers at once with the same
// requests: no read of a known set of capabilities (root capability(id:) fields, aliased or
// not, and each list level) waits for the window; it serves only IDs learnt one by one (a
// job's capability), and the shapes marked so are left out here: they would wait the hour.
func TestKnownKeysSkipTheBatchWindow(t *testing.T) {
	runBudgets(t, newHarnessWith(t, func(o *graph.Options) { o.BatchWindow = time.Hour }), true)
}

// What does wait for a long window (a mutation result's capability) still ends at the request
// deadline, with TIMEOUT on the field that waited.
func TestLongBatchWindowKeepsTheDeadline(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) {
		o.BatchWindow = time.Hour
		// Long enough for the mutation itself on a loaded machine: the window, not the
		// mutation, must be what runs into the deadline.
		o.Deadline = 2 * time.Second
	})
	resp := h.do(t, `mutation { addComponent(capabilityId: "CAP-ALERT-MGT-001", input: {componentId: "window-1", name: "w", componentType: "cache", order: 61}) { componentId capability { name } } }`, nil)
	if resp.code(0) != "TIMEOUT" || !strings.Contains(resp.Body, `"path":["addComponent","capability"]`) {
		t.Fatalf("a capability waiting for an hour-long window past the deadline = %s", resp.Body)
	}
}

func runBudgets(t *testing.T, h *harness, skipWindowed bool) {
	var list struct {
		Capabilities struct{ Nodes []struct{ ID string } }
	}
	h.ok(t, `{ capabilities(first: 100) { nodes { id } } }`, nil, &list)
	n := len(list.Capabilities.Nodes)
	if n < 6 {
		t.Fatalf("sample catalogue has %d capabilities, want at least 6", n)
	}
	tests := []struct {
		name  string
		query string
		want  int
		// windowed: the capability ID is only known once a parent resolved, one at a time.
		windowed bool
	}{
		{"capability scalars", `{ capability(id: "CAP-ALERT-MGT-001") { id name status priority aggregates { healthScore } } }`, 1, false},
		{"capability id only", `{ capability(id: "CAP-ALERT-MGT-001") { id } }`, 1, false},
		{"complete view", `{ capability(id: "CAP-ALERT-MGT-001") { name components { name } dependencies { source { name } target { name } } rules { name } } }`, 3, false},
		{"components and dependencies share one range", `{ capability(id: "CAP-ALERT-MGT-001") { name components { name dependsOn { name } dependents { name } } dependencies { criticality } } }`, 2, false},
		{"neighbours of the components that break their SLA", `{ capability(id: "CAP-FRAUD-DET-001") { name slaBreaches { name dependsOn { name } } } }`, 2, false},
		{"rules only", `{ capability(id: "CAP-ALERT-MGT-001") { name rules { name conditions { field } } } }`, 2, false},
		{"list with nested components", fmt.Sprintf(`{ capabilities(first: %d) { nodes { name components { name dependsOn { name } } } } }`, n), 1 + n, false},
		{"list through edges", `{ capabilities(first: 3) { edges { cursor node { name components { name } } } } }`, 1 + 3, false},
		{"list scalars only", `{ capabilities(first: 50) { nodes { name aggregates { totalComponents } } } }`, 1, false},
		{"components by type with capability", `{ componentsByType(type: "api-server") { nodes { name capability { name } } } }`, 2, false},
		{"components by type, capability id only", `{ componentsByType(type: "api-server") { nodes { name capability { id } } } }`, 1, false},
		{"same capability twice", `{ a: capability(id: "CAP-ALERT-MGT-001") { name components { name } } b: capability(id: "CAP-ALERT-MGT-001") { owner components { order } } }`, 2, false},
		{"three aliased roots, one BatchGetItem", `{ a: capability(id: "CAP-ALERT-MGT-001") { name } b: capability(id: "CAP-FRAUD-DET-001") { name } ...F }
			fragment F on Query { c: capability(id: "CAP-PAY-PROC-001") { name } }`, 1, false},
		{"root through a variable", `query($id: ID!) { capability(id: $id) { name } }`, 1, false},
		{"domain pattern", `{ capabilitiesByDomain(domain: "operations") { nodes { name aggregates { healthScore } } } }`, 1, false},
		{"health pattern", `{ capabilitiesByHealth(status: HEALTHY) { nodes { name } } }`, 1, false},
		{"job by id with capability", `{ job(id: "JOB-DEPLOY-456") { status capability { name } } }`, 2, false},
		{"jobs window", `{ capability(id: "CAP-ALERT-MGT-001") { name jobs(first: 2) { nodes { jobId } } } }`, 2, false},
		{"metrics window", `{ componentMetrics(componentId: "api-server-alert-001", first: 5) { nodes { timestamp } } }`, 1, false},
		{"node of a capability, complete view", `{ node(id: "CAP-ALERT-MGT-001") { ... on Capability { name components { name } dependencies { source { name } target { name } } rules { name } } } }`, 3, false},
		{"node of a component with its neighbours", `{ node(id: "CAP-ALERT-MGT-001/components/api-server-alert-001") { id ... on Component { name dependsOn { name } dependents { name } } } }`, 1, false},
		{"node of a dependency with its ends", `{ node(id: "CAP-ALERT-MGT-001/dependencies/api-server-alert-001->database-alert-001") { ... on Dependency { criticality source { name } target { name } } } }`, 1, false},
		{"node of a rule", `{ node(id: "CAP-ALERT-MGT-001/rules/rule-alert-severity-mapping") { ... on Rule { name conditions { field } } } }`, 1, false},
		{"node of a job", `{ node(id: "CAP-ALERT-MGT-001/jobs/JOB-DEPLOY-456") { ... on Job { status } } }`, 1, false},
		{"nodes of two capabilities", `{ nodes(ids: ["CAP-ALERT-MGT-001", "CAP-FRAUD-DET-001/components/api-server-fraud-001", "CAP-ALERT-MGT-001/rules/rule-alert-severity-mapping",
			"CAP-FRAUD-DET-001", "CAP-ALERT-MGT-001/components/database-alert-001"]) { id } }`, 4, false},
		// The change feed: a capability's from its partition, the catalogue's one Query per day
		// bucket walked (today only; the whole 30-day retention window, empty, by default).
		{"changes of a capability", `{ changes(capabilityId: "CAP-ALERT-MGT-001", first: 10) { nodes { id entity action actor { name } fields } pageInfo { endCursor } } }`, 1, false},
		{"capability with its changes", `{ capability(id: "CAP-ALERT-MGT-001") { name changes(first: 10, entities: [RULE]) { nodes { id action } } } }`, 2, false},
		{"catalogue changes since today", fmt.Sprintf(`{ changes(since: %q) { nodes { id capabilityId } } }`, testNow.Truncate(24*time.Hour).Format(time.RFC3339)), 1, false},
		{"catalogue changes, whole retention window", `{ changes { nodes { id } pageInfo { hasNextPage endCursor } } }`, 31, false},
		// Newest first (last/before): the same ranges read backwards; a page of the catalogue's
		// walks the day buckets from today back until it is full and has seen one change more,
		// or reaches the start of the window (31 for the empty window).
		{"changes of a capability, newest first", `{ changes(capabilityId: "CAP-ALERT-MGT-001", last: 10) { edges { cursor node { id } } pageInfo { hasPreviousPage startCursor } } }`, 1, false},
		{"capability with its last changes", `{ capability(id: "CAP-ALERT-MGT-001") { name changes(last: 5) { nodes { id action } } } }`, 2, false},
		{"catalogue changes newest first, whole retention window", `{ changes(last: 10) { nodes { id } pageInfo { hasPreviousPage startCursor } } }`, 31, false},
		{"catalogue changes newest first since today", fmt.Sprintf(`{ changes(last: 10, since: %q) { nodes { id } pageInfo { hasPreviousPage } } }`, testNow.Truncate(24*time.Hour).Format(time.RFC3339)), 1, false},
		// The catalogue's counters: one BatchGetItem of the 16 shards, whatever the catalogue.
		{"catalogue summary", `{ catalogueSummary { capabilityCount componentCount byDomain { domain count } byStatus { status count } byPriority { priority count }
			byHealthStatus { status count } meanHealthScore componentsByType { type count } componentsByHealthStatus { status count } activeJobs activeJobsByType { jobType count } } }`, 1, false},
		{"owners page", `{ owners(first: 5) { totalCount edges { cursor node { name capabilityCount componentCount } } pageInfo { hasNextPage endCursor } } }`, 1, false},
		{"owner by name", `{ owner(name: "Data Platform Team") { name capabilityCount componentCount } }`, 1, false},
		// One query reads the counters once, whichever fields need them (each field read them
		// again before: 3, 4, 4, 13 and 3 requests).
		{"summary, owners and an owner share one counters read", `{ catalogueSummary { capabilityCount } owners(first: 5) { totalCount } owner(name: "Data Platform Team") { name } }`, 1, false},
		{"owner with its capabilities counted by the counters", `{ owner(name: "Data Platform Team") { name capabilities(first: 2) { totalCount } } }`, 3, false},
		{"owner with its components counted by the counters", `{ owner(name: "Data Platform Team") { name components(first: 2) { totalCount } } }`, 3, false},
		{"owners with their pages counted", `{ owners(first: 2) { nodes { name capabilities(first: 2) { totalCount } components(first: 2) { totalCount } } } }`, 9, false},
		{"summary beside counted active jobs", `{ catalogueSummary { activeJobs } activeJobs { totalCount } }`, 2, false},
		// Query.components (docs/api.md): one Query per partition of the most selective filter,
		// in parallel, then one BatchGetItem of the page's components (none for types, whose
		// index entries are the components); totalCount re-reads the partitions (keys only when
		// they serve the whole filter).
		{"components by types", `{ components(filter: {types: ["api-server", "database"]}, first: 10) { nodes { name } } }`, 2, false},
		{"components by team", `{ components(filter: {team: "Backend Team"}, first: 10) { nodes { name } } }`, 2, false},
		{"components by search and status", `{ components(filter: {search: "alert", statuses: [ACTIVE]}, first: 10) { nodes { name } } }`, 2, false},
		{"components by health with totalCount", `{ components(filter: {healthStatuses: [HEALTHY]}, first: 5) { totalCount nodes { name } } }`, 3, false},
		{"components, no filter (the four health partitions)", `{ components(first: 10) { nodes { name } } }`, 5, false},
		{"components with capability", `{ components(filter: {search: "fraud"}, first: 10) { nodes { name capability { name } } } }`, 3, false},
		// Query.activeJobs: one Query of ACTIVEJOBS (a copy of each job); totalCount one more.
		{"active jobs", `{ activeJobs(first: 10) { nodes { jobId status } } }`, 1, false},
		{"active jobs of two types with totalCount", `{ activeJobs(jobTypes: [DEPLOYMENT, SCALING], first: 10) { totalCount nodes { jobId } } }`, 2, false},
		{"jobs window with totalCount", `{ capability(id: "CAP-ALERT-MGT-001") { name jobs(first: 2, status: COMPLETED) { totalCount nodes { jobId } } } }`, 3, false},
		// Query.capabilities with a filter, a search or an order (docs/api.md): cards by Query,
		// the page's capabilities by one BatchGetItem; totalCount adds its own reads.
		{"search page (3 groups read in parallel + 1 BatchGetItem)", `{ capabilities(filter: {search: "alert"}) { nodes { name } } }`, 4, false},
		{"search page with totalCount (no ID group: the search is not an ID)", `{ capabilities(filter: {search: "alert man"}) { nodes { name } totalCount } }`, 4, false},
		{"search ordered by health score (the term range read whole and sorted)", `{ capabilities(filter: {search: "fraud"}, orderBy: {field: HEALTH_SCORE, direction: DESC}) { nodes { name } } }`, 2, false},
		{"filtered page: one domain, counted", `{ capabilities(filter: {domains: ["operations"]}) { nodes { name } totalCount } }`, 3, false},
		{"filtered page: a tag, counted", `{ capabilities(filter: {tags: ["Alerting"]}) { nodes { name } totalCount } }`, 3, false},
		{"filtered page: an owner, counted", `{ capabilities(filter: {owner: "Operations Team"}) { nodes { name } totalCount } }`, 3, false},
		{"filtered page: status and priorities, counted", `{ capabilities(filter: {statuses: [ACTIVE], priorities: [CRITICAL, HIGH]}) { nodes { name } totalCount } }`, 3, false},
		{"filtered page: health (HEALTH# items of 2 statuses, sorted), counted by the counters", `{ capabilities(filter: {healthStatuses: [HEALTHY, DEGRADED]}) { nodes { name } totalCount } }`, 3, false},
		{"filtered page: a tag and a status, counted from the tag's cards", `{ capabilities(filter: {tags: ["monitoring"], statuses: [ACTIVE]}) { nodes { name } totalCount } }`, 3, false},
		{"components of one type, counted by the counters", `{ components(filter: {types: ["database"]}) { nodes { componentId } totalCount } }`, 2, false},
		{"active jobs, counted by the counters", `{ activeJobs { nodes { jobId } totalCount } }`, 2, false},
		{"filtered page: the domain argument with a filter", `{ capabilities(domain: "operations", filter: {statuses: [ACTIVE, PLANNING]}) { nodes { name } } }`, 2, false},
		{"ordered page: priority", `{ capabilities(orderBy: {field: PRIORITY, direction: DESC}) { nodes { name } } }`, 2, false},
		{"ordered page: health score (2 parts in parallel)", `{ capabilities(orderBy: {field: HEALTH_SCORE}) { nodes { name } } }`, 3, false},
		{"ordered page: updated, counted", `{ capabilities(orderBy: {field: UPDATED_AT, direction: DESC}, first: 3) { nodes { name } totalCount } }`, 3, false},
		{"list with totalCount", `{ capabilities(first: 3) { nodes { name } totalCount } }`, 2, false},
		{"domain pattern with totalCount", `{ capabilitiesByDomain(domain: "operations") { nodes { name } totalCount } }`, 2, false},
		{"validation error costs nothing", `{ capability(id: "bad#id") { name } }`, 0, false},
		{"bad component filter costs nothing", `{ components(filter: {team: "--"}) { nodes { name } } }`, 0, false},
		{"malformed node id costs nothing", `{ node(id: "CAP-ALERT-MGT-001/widgets/x") { id } }`, 0, false},
	}
	for _, tt := range tests {
		if skipWindowed && tt.windowed {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, map[string]any{"id": "CAP-FRAUD-DET-001"})
			if tt.want > 0 && len(resp.Errors) > 0 {
				t.Fatalf("errors: %s", resp.Body)
			}
			if got := h.env.Counter.Total(); got != tt.want {
				t.Errorf("DynamoDB requests = %d (%v), want %d", got, h.env.Counter.Ops(), tt.want)
			}
			if got := resp.Extensions.DynamoDB.Requests; got != h.env.Counter.Total() {
				t.Errorf("extensions.dynamodb.requests = %d, counted %d", got, h.env.Counter.Total())
			}
		})
	}
}

// componentsByType with 100 distinct capabilities needs ceil(100/100) = 1 BatchGetItem.
func TestComponentsByTypeBatchesCapabilities(t *testing.T) {
	h := newHarness(t)
	var bundles []*catalog.Bundle
	for i := range 100 {
		id := fmt.Sprintf("CAP-BATCH-%03d", i)
		bundles = append(bundles, &catalog.Bundle{
			Capability: &catalog.Capability{CapabilityID: id, Name: "Batch " + id, BusinessDomain: "batch", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
			Components: []*catalog.Component{{ComponentID: "batch-worker-" + id, Name: "w", ComponentType: "batch-worker", Order: 1, Status: catalog.ComponentActive}},
		})
	}
	if _, err := h.env.Store.BulkLoad(context.Background(), bundles, 4); err != nil {
		t.Fatal(err)
	}
	var out struct {
		ComponentsByType struct {
			Nodes []struct{ Capability struct{ Name string } }
		}
	}
	resp := h.ok(t, `{ componentsByType(type: "batch-worker", first: 100) { nodes { capability { name } } } }`, nil, &out)
	if len(out.ComponentsByType.Nodes) != 100 {
		t.Fatalf("got %d components, want 100", len(out.ComponentsByType.Nodes))
	}
	ops := h.env.Counter.Ops()
	if ops["Query"] != 1 || ops["BatchGetItem"] != 1 || h.env.Counter.Total() != 2 {
		t.Errorf("requests = %v, want 1 Query + 1 BatchGetItem", ops)
	}
	if resp.Extensions.DynamoDB.Operations["BatchGetItem"] != 1 {
		t.Errorf("extensions.dynamodb.operations = %v", resp.Extensions.DynamoDB.Operations)
	}
	for i, n := range out.ComponentsByType.Nodes {
		if n.Capability.Name == "" {
			t.Errorf("node %d has no capability name", i)
		}
	}
}

// With the cache on, each shape costs its cold requests the first time and its warm requests
// the second (nothing written in between); extensions.dynamodb.cache reports the ranges found
// and read. The uncached rows of the same shapes are TestRequestBudgets'.
func TestRequestBudgetsCached(t *testing.T) {
	n := len(sample.Catalogue(testNow))
	tests := []struct {
		name                 string
		query                string
		cold, warm           int    // requests
		coldMisses, warmHits int    // ranges; the list's are TestListOf50Cached's
		coldFirst            string // the operation of the cold read's first request
	}{
		{name: "capability scalars", query: `{ capability(id: "CAP-FRAUD-DET-001") { name aggregates { healthScore } } }`, cold: 1, warm: 1},
		{name: "complete view", query: completeView, cold: 3, warm: 1, coldMisses: 2, warmHits: 2, coldFirst: "BatchGetItem"},
		{name: "rules only", query: `{ capability(id: "CAP-PAY-PROC-001") { name rules { name } } }`, cold: 2, warm: 1, coldMisses: 1, warmHits: 1, coldFirst: "BatchGetItem"},
		// The range alone: node(id:) keeps its one request, past the cache (validating an entry
		// would cost the capability's metadata read first).
		{name: "node of a component with its neighbours", query: `{ node(id: "CAP-FRAUD-DET-001/components/api-server-fraud-001") { ... on Component { name dependsOn { name } } } }`,
			cold: 1, warm: 1, coldFirst: "Query"},
		{name: "nodes of a rule and a dependency", query: `{ nodes(ids: ["CAP-FRAUD-DET-001/rules/rule-fraud-risk-scoring", "CAP-FRAUD-DET-001/dependencies/api-server-fraud-001->cache-fraud-001"]) { id } }`,
			cold: 2, warm: 2, coldFirst: "Query"},
		// The capability is read anyway: its ranges go through the cache.
		{name: "node of a capability with its components", query: `{ node(id: "CAP-FRAUD-DET-001") { ... on Capability { name components { name } } } }`,
			cold: 2, warm: 1, coldMisses: 1, warmHits: 1, coldFirst: "BatchGetItem"},
		{name: "list with components, dependencies and rules", query: fmt.Sprintf(`{ capabilities(first: %d) { nodes { name components { name dependsOn { name } } dependencies { criticality } rules { name } } } }`, n),
			cold: 1 + 1 + 2*n, warm: 1, coldMisses: 2 * n, warmHits: 2 * n, coldFirst: "Query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := cachedHarness(t, graph.DefaultCacheBytes, nil)
			var order []string
			var mu sync.Mutex
			h.env.Counter.Before = func(op string, _ http.ResponseWriter) bool {
				mu.Lock()
				order = append(order, op)
				mu.Unlock()
				return false
			}
			defer func() { h.env.Counter.Before = nil }()
			cold := h.do(t, tt.query, nil)
			if len(cold.Errors) > 0 {
				t.Fatalf("errors: %s", cold.Body)
			}
			if strings.Contains(string(cold.Data), "null") {
				t.Fatalf("an object is missing: %s", cold.Data)
			}
			if got := h.env.Counter.Total(); got != tt.cold {
				t.Errorf("cold: DynamoDB requests = %d (%v), want %d", got, h.env.Counter.Ops(), tt.cold)
			}
			if tt.coldFirst != "" && (len(order) == 0 || order[0] != tt.coldFirst) {
				t.Errorf("cold: requests in order %v, want %s first", order, tt.coldFirst)
			}
			hits, misses := cacheCounts(t, cold)
			if tt.coldMisses > 0 && (hits != 0 || misses != tt.coldMisses) {
				t.Errorf("cold: cache hits/misses = %d/%d, want 0/%d", hits, misses, tt.coldMisses)
			}
			warm := h.do(t, tt.query, nil)
			if got := h.env.Counter.Total(); got != tt.warm {
				t.Errorf("warm: DynamoDB requests = %d (%v), want %d", got, h.env.Counter.Ops(), tt.warm)
			}
			if got := warm.Extensions.DynamoDB.Requests; got != tt.warm {
				t.Errorf("warm: extensions.dynamodb.requests = %d, want %d", got, tt.warm)
			}
			if string(warm.Data) != string(cold.Data) {
				t.Errorf("warm answer differs from the cold one:\n%s\n%s", warm.Data, cold.Data)
			}
			if hits, misses := cacheCounts(t, warm); misses != 0 || (tt.warmHits > 0 && hits != tt.warmHits) {
				t.Errorf("warm: cache hits/misses = %d/%d, want %d/0", hits, misses, tt.warmHits)
			}
		})
	}
}

// With the cache following this server's own writes (PartitionCache.Retag, as server.go builds
// it), the first read after a write costs what the write left to read: the capability's version
// alone after a METADATA-only write (1 request, where 3 for the view and 4 for the list page
// were spent before: metadata, then every range again), and the ranges the write touched.
func TestRequestBudgetsAfterOwnWrite(t *testing.T) {
	n := len(sample.Catalogue(testNow))
	list := fmt.Sprintf(`{ capabilities(first: %d) { nodes { name description components { name dependsOn { name } } dependencies { criticality } rules { name } } } }`, n)
	const describe = `mutation { updateCapability(id: "CAP-FRAUD-DET-001", expectedRevision: 1, input: {description: "budget"}) { revision } }`
	const component = `mutation { updateComponent(capabilityId: "CAP-FRAUD-DET-001", componentId: "api-server-fraud-001", expectedRevision: 1, input: {version: "9.9"}) { revision } }`
	view := `{ capability(id: "CAP-FRAUD-DET-001") { name description components { componentId name } dependencies { source { name } target { name } } rules { name } } }`
	tests := []struct {
		name, query, write string
		requests, misses   int
	}{
		{"complete view after updateCapability", view, describe, 1, 0},
		{"complete view after updateComponent", view, component, 2, 1},
		{"list after updateCapability", list, describe, 1, 0},
		// The page, the written capability's version (one BatchGetItem), its components range.
		{"list after updateComponent", list, component, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newRetagHarness(t)
			h.ok(t, tt.query, nil, nil)
			h.ok(t, tt.write, nil, nil)
			resp := h.do(t, tt.query, nil)
			if len(resp.Errors) > 0 {
				t.Fatalf("errors: %s", resp.Body)
			}
			if got := h.env.Counter.Total(); got != tt.requests {
				t.Errorf("DynamoDB requests = %d (%v), want %d", got, h.env.Counter.Ops(), tt.requests)
			}
			if _, misses := cacheCounts(t, resp); misses != tt.misses {
				t.Errorf("cache misses = %d, want %d", misses, tt.misses)
			}
			if plain := h.uncached.do(t, tt.query, nil); string(plain.Data) != string(resp.Data) {
				t.Errorf("the cached answer differs from the uncached one:\n%s\n%s", resp.Data, plain.Data)
			}
		})
	}
}
