package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/memdyn"
	"github.com/capcat/catalogue/sample"
)

// Benchmarks of the GraphQL layer. The end-to-end ones run the real handler over the real store
// against internal/memdyn, an in-memory DynamoDB behind a loopback HTTP server in this process
// (the embedded default; minidyn would scan its whole table on every Query), so
// their CPU and allocations include that backend. `go run ./bench` measures the server alone.
//
//	go test ./graph/ -run '^$' -bench . -benchmem
//	go test ./graph/ -run '^$' -bench CompleteView -cpuprofile cpu.out -memprofile mem.out

const benchCompleteView = `query CompleteView($id: ID!) {
  capability(id: $id) {
    id name description businessDomain status priority owner version tags
    businessMetrics { sla rto rpo criticalityLevel }
    aggregates { totalComponents activeComponents healthScore healthStatus totalDependencies totalJobs totalRules activeRules }
    components { componentId name componentType order layer status version
      health { status availability responseTime errorRate } sla { availability responseTime errorRate } }
    dependencies { sourceComponentId targetComponentId dependencyType criticality
      source { componentId name status } target { componentId name status } }
    rules { ruleId name ruleType status priority order conditions { field operator weight } actions { type } }
  }
}`

// benchHandler loads the sample catalogue into memdyn and returns the GraphQL handler over it.
func benchHandler(b *testing.B) http.Handler {
	b.Helper()
	ctx := context.Background()
	srv := httptest.NewServer(memdyn.New())
	b.Cleanup(srv.Close)
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: srv.URL}})
	if err != nil {
		b.Fatal(err)
	}
	store := dynamo.New(client, dynamo.Options{Logger: testLogger(), CursorSecret: []byte("bench")})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		b.Fatal(err)
	}
	if _, err := store.BulkLoad(ctx, sample.Catalogue(testNow), 4); err != nil {
		b.Fatal(err)
	}
	return graph.GraphQLHandler(store, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }})
}

func benchQuery(b *testing.B, h http.Handler, query string, vars map[string]any) {
	b.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	do := func() {
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || bytes.Contains(w.Body.Bytes(), []byte(`"errors":[`)) {
			b.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
	}
	do()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		do()
	}
}

// BenchmarkCompleteView serves the complete capability view: metadata, components, dependencies
// with both ends, rules (3 DynamoDB requests).
func BenchmarkCompleteView(b *testing.B) {
	benchQuery(b, benchHandler(b), benchCompleteView, map[string]any{"id": "CAP-ALERT-MGT-001"})
}

// BenchmarkCapabilityScalars serves one capability's own fields (1 request): the fixed cost of a
// request through the handler, the metadata batch window (1 ms) included.
func BenchmarkCapabilityScalars(b *testing.B) {
	benchQuery(b, benchHandler(b), `query($id: ID!) { capability(id: $id) { id name status priority aggregates { healthScore } } }`,
		map[string]any{"id": "CAP-ALERT-MGT-001"})
}

// BenchmarkListWithComponents serves the capabilities list with each one's components and their
// dependencies (1 GSI query + one partition query per capability).
func BenchmarkListWithComponents(b *testing.B) {
	benchQuery(b, benchHandler(b), `{ capabilities(first: 50) { nodes { id name components { componentId name dependsOn { componentId } } dependencies { criticality } } } }`, nil)
}

// plannerStore answers partition reads from memory, so that the planner benchmarks measure the
// loaders alone. Other Store methods are not used (the embedded nil interface would panic).
type plannerStore struct {
	graph.Store
	part *dynamo.Partition
	cap  *catalog.Capability
}

func (s plannerStore) ReadRange(_ context.Context, _ string, _ dynamo.Segment, _ dynamo.Fields) (*dynamo.Partition, error) {
	return s.part, nil
}

func (s plannerStore) CapabilitiesByID(_ context.Context, ids []string) ([]*catalog.Capability, error) {
	out := make([]*catalog.Capability, len(ids))
	for i := range ids {
		out[i] = s.cap
	}
	return out, nil
}

func newPlannerStore() plannerStore {
	b := sample.Catalogue(testNow)[0]
	return plannerStore{cap: b.Capability, part: &dynamo.Partition{Components: b.Components, Dependencies: b.Dependencies, Rules: b.Rules}}
}

// BenchmarkFetchPlanner plans and serves the reads of one complete view through a request's
// loaders: look-ahead prefetch of components+dependencies and rules, the metadata, then the
// resolvers' reads of each segment (the dependencies' ends included), from an in-memory store.
// The metadata is read as a root capability field reads it (PrefetchCapabilities: at once, no
// batch window); the allocations are the planner's own.
func BenchmarkFetchPlanner(b *testing.B) {
	store := newPlannerStore()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l := graph.NewLoaders(store, graph.LoaderOptions{})
		l.PrefetchCapabilities(ctx, []string{"CAP-ALERT-MGT-001"})
		l.Prefetch(ctx, "CAP-ALERT-MGT-001", dynamo.SegComponents|dynamo.SegDependencies|dynamo.SegRules)
		if _, err := l.Capability(ctx, "CAP-ALERT-MGT-001"); err != nil {
			b.Fatal(err)
		}
		for _, want := range []dynamo.Segment{dynamo.SegComponents, dynamo.SegDependencies, dynamo.SegRules} {
			if _, err := l.Partition(ctx, "CAP-ALERT-MGT-001", want); err != nil {
				b.Fatal(err)
			}
		}
		for range 2 * len(store.part.Dependencies) {
			if _, err := l.Partition(ctx, "CAP-ALERT-MGT-001", dynamo.SegComponents); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkFetchPlannerList plans the partition reads of a 50-capability list: one range per
// capability, issued together.
func BenchmarkFetchPlannerList(b *testing.B) {
	store := newPlannerStore()
	ctx := context.Background()
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = "CAP-" + string(rune('A'+i%26)) + string(rune('A'+i/26))
	}
	b.ReportAllocs()
	for b.Loop() {
		l := graph.NewLoaders(store, graph.LoaderOptions{})
		for _, id := range ids {
			l.Prefetch(ctx, id, dynamo.SegComponents|dynamo.SegDependencies)
		}
		for _, id := range ids {
			if _, err := l.Partition(ctx, id, dynamo.SegComponents); err != nil {
				b.Fatal(err)
			}
		}
	}
}
