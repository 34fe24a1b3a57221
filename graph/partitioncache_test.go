package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/memdyn"
	"github.com/capcat/catalogue/sample"
)

// cachedHarness is newHarness with a partition cache of maxBytes, its counters in reg.
func cachedHarness(t *testing.T, maxBytes int, reg prometheus.Registerer) *harness {
	t.Helper()
	return newHarnessWith(t, func(o *graph.Options) { o.PartitionCache = graph.NewPartitionCache(maxBytes, reg) })
}

const completeView = `{ capability(id: "CAP-ALERT-MGT-001") { name components { componentId name } dependencies { source { name } target { name } } rules { name } } }`

// cacheCounts returns the extensions.dynamodb.cache of a response, failing when it is absent.
func cacheCounts(t *testing.T, resp *gqlResponse) (hits, misses int) {
	t.Helper()
	c := resp.Extensions.DynamoDB.Cache
	if c == nil {
		t.Fatalf("extensions.dynamodb has no cache: %s", resp.Body)
	}
	return c.Hits, c.Misses
}

// The list of 50 capabilities with components, dependencies and rules: 1 + 1 + 2×50 requests
// cold (the index page, one consistent BatchGetItem of the versions, the ranges), 1 warm.
func TestListOf50Cached(t *testing.T) {
	h := cachedHarness(t, graph.DefaultCacheBytes, nil)
	loadBatch(t, h, 50)
	q := `{ capabilitiesByDomain(domain: "batch", first: 50) { nodes { name components { name dependsOn { name } } dependencies { criticality } rules { name } } } }`
	cold := h.ok(t, q, nil, nil)
	if got, ops := h.env.Counter.Total(), h.env.Counter.Ops(); got != 2+2*50 || ops["BatchGetItem"] != 1 {
		t.Errorf("cold list of 50: requests = %d (%v), want %d with 1 BatchGetItem", got, ops, 2+2*50)
	}
	if hits, misses := cacheCounts(t, cold); hits != 0 || misses != 100 {
		t.Errorf("cold: hits/misses = %d/%d, want 0/100", hits, misses)
	}
	warm := h.ok(t, q, nil, nil)
	if got := h.env.Counter.Total(); got != 1 {
		t.Errorf("warm list of 50: requests = %d (%v), want 1", got, h.env.Counter.Ops())
	}
	if hits, misses := cacheCounts(t, warm); hits != 100 || misses != 0 {
		t.Errorf("warm: hits/misses = %d/%d, want 100/0", hits, misses)
	}
	if string(warm.Data) != string(cold.Data) {
		t.Errorf("warm answer differs from the cold one")
	}
	// Uncached, for the record: 1 + 2×50.
	u := newHarness(t)
	loadBatch(t, u, 50)
	u.ok(t, q, nil, nil)
	if got := u.env.Counter.Total(); got != 1+2*50 {
		t.Errorf("uncached list of 50: requests = %d, want %d", got, 1+2*50)
	}
}

// loadBatch bulk-loads batchBundles(n).
func loadBatch(t testing.TB, h *harness, n int) {
	t.Helper()
	if _, err := h.env.Store.BulkLoad(context.Background(), batchBundles(n), 4); err != nil {
		t.Fatal(err)
	}
	h.env.Counter.Reset()
}

// batchBundles returns n capabilities of the business domain "batch", each with two
// components and a dependency.
func batchBundles(n int) []*catalog.Bundle {
	var bundles []*catalog.Bundle
	for i := range n {
		id := fmt.Sprintf("CAP-BATCH-%03d", i)
		bundles = append(bundles, &catalog.Bundle{
			Capability: &catalog.Capability{CapabilityID: id, Name: "Batch " + id, BusinessDomain: "batch", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
			Components: []*catalog.Component{
				{CapabilityID: id, ComponentID: "a-" + id, Name: "a", ComponentType: "api-server", Order: 1, Status: catalog.ComponentActive},
				{CapabilityID: id, ComponentID: "b-" + id, Name: "b", ComponentType: "database", Order: 2, Status: catalog.ComponentActive},
			},
			Dependencies: []*catalog.Dependency{{CapabilityID: id, SourceComponentID: "a-" + id, TargetComponentID: "b-" + id, Criticality: "high", DependencyType: "sync"}},
		})
	}
	return bundles
}

// componentIDs returns the component IDs the complete view answered.
func componentIDs(t *testing.T, resp *gqlResponse) []string {
	t.Helper()
	var out struct {
		Capability struct {
			Components []struct{ ComponentID string }
		}
	}
	if err := json.Unmarshal(resp.Data, &out); err != nil {
		t.Fatalf("decode %s: %v", resp.Data, err)
	}
	var ids []string
	for _, c := range out.Capability.Components {
		ids = append(ids, c.ComponentID)
	}
	return ids
}

// After a write, the first view costs the metadata read then the two ranges: one round trip
// more than without the cache (1 + 2 requests, the BatchGetItem first), and it answers the
// new state; the next view is one request again.
func TestCacheAfterWrite(t *testing.T) {
	h := cachedHarness(t, graph.DefaultCacheBytes, nil)
	h.ok(t, completeView, nil, nil)
	h.ok(t, completeView, nil, nil)
	h.ok(t, addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"componentId": "after-write-1", "name": "n", "componentType": "cache", "order": 61}}, nil)
	var order []string
	var mu sync.Mutex
	h.env.Counter.Before = func(op string, _ http.ResponseWriter) bool {
		mu.Lock()
		order = append(order, op)
		mu.Unlock()
		return false
	}
	resp := h.ok(t, completeView, nil, nil)
	h.env.Counter.Before = nil
	if !slices.Contains(componentIDs(t, resp), "after-write-1") {
		t.Fatalf("the view after the write misses the new component: %s", resp.Data)
	}
	if got := h.env.Counter.Total(); got != 3 || len(order) != 3 || order[0] != "BatchGetItem" {
		t.Errorf("first view after a write: %d requests in order %v, want BatchGetItem then 2 Query", got, order)
	}
	h.ok(t, completeView, nil, nil)
	if got := h.env.Counter.Total(); got != 1 {
		t.Errorf("second view after a write: %d requests, want 1", got)
	}
	// The written capability's DOMAIN# and HEALTH# index items carry the new WriteSeq: a
	// repeated list from them is its one Query.
	for _, list := range []string{`{ capabilitiesByDomain(domain: "operations") { nodes { name components { name } rules { name } } } }`,
		`{ capabilitiesByHealth(status: HEALTHY) { nodes { name components { name } rules { name } } } }`} {
		h.ok(t, list, nil, nil)
		h.ok(t, list, nil, nil)
		if got := h.env.Counter.Total(); got != 1 {
			t.Errorf("repeated %s after a write: %d requests (%v), want 1", list, got, h.env.Counter.Ops())
		}
	}
}

// interposer is an http.Handler in front of the test backend that runs hooks before and after
// each request it passes on.
type interposer struct {
	next          http.Handler
	before, after func(op string, body []byte)
}

func (p *interposer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := r.Header.Get("X-Amz-Target")
	op = op[strings.LastIndexByte(op, '.')+1:]
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if p.before != nil {
		p.before(op, body)
	}
	if p.after == nil {
		p.next.ServeHTTP(w, r)
		return
	}
	// The response is held until the hook is done: the caller sees it only afterwards.
	rec := httptest.NewRecorder()
	p.next.ServeHTTP(rec, r)
	p.after(op, body)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// secondStore returns a store on h's table through its own client and front (another server
// process), with the front's hooks.
func secondStore(t *testing.T, h *harness) (*dynamo.Store, *interposer) {
	t.Helper()
	if h.env.Mem == nil {
		t.Skip("needs the in-process memdyn backend")
	}
	front := &interposer{next: h.env.Mem}
	srv := httptest.NewServer(front)
	t.Cleanup(srv.Close)
	client, err := dynamo.NewClient(context.Background(), dynamo.ClientConfig{Options: awsconf.Options{Endpoint: srv.URL, MaxBackoff: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return dynamo.New(client, dynamo.Options{Table: h.env.Table, Now: func() time.Time { return testNow }, CursorSecret: []byte("test-secret"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}), front
}

// serve posts one operation to handler and decodes the response.
func serve(t *testing.T, handler http.Handler, query string, vars map[string]any) *gqlResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, req)
	resp := &gqlResponse{Status: w.Code, Body: w.Body.String()}
	if err := json.Unmarshal(w.Body.Bytes(), resp); err != nil {
		t.Fatalf("decode %q: %v", w.Body.String(), err)
	}
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %s", resp.Body)
	}
	return resp
}

// Two servers on one table, each with its own cache: a write through one is in the next read
// through the other, at once; so is a bulk load (the sample seeding) and an import by another
// process over a capability deleted since.
func TestCacheNeverStaleAcrossServers(t *testing.T) {
	h := cachedHarness(t, graph.DefaultCacheBytes, nil)
	store2, _ := secondStore(t, h)
	b := graph.NewHandler(store2, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }, PartitionCache: graph.NewPartitionCache(graph.DefaultCacheBytes, nil)})
	warm := func() []string {
		serve(t, b, completeView, nil)
		resp := serve(t, b, completeView, nil)
		if hits, misses := cacheCounts(t, resp); misses != 0 || hits != 2 {
			t.Fatalf("server B not warm: hits/misses %d/%d", hits, misses)
		}
		return componentIDs(t, resp)
	}
	warm()

	// A mutation through server A.
	h.ok(t, addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"componentId": "via-a-1", "name": "n", "componentType": "cache", "order": 61}}, nil)
	if got := componentIDs(t, serve(t, b, completeView, nil)); !slices.Contains(got, "via-a-1") {
		t.Fatalf("server B after a write through A = %v, want via-a-1 in it", got)
	}

	// Bulk loads by another process (the sample seeding) of the capability, deleted in
	// between: two loads at one clock give METADATA items alike but for their WriteSeq.
	reseed := func(component string) {
		var c struct{ Capability struct{ Revision int } }
		h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { revision } }`, nil, &c)
		h.ok(t, `mutation($r: Int!) { deleteCapability(id: "CAP-ALERT-MGT-001", expectedRevision: $r) }`, map[string]any{"r": c.Capability.Revision}, nil)
		bundle := &catalog.Bundle{
			Capability: &catalog.Capability{CapabilityID: "CAP-ALERT-MGT-001", Name: "Reseeded", BusinessDomain: "operations", Status: catalog.CapabilityActive, Priority: catalog.PriorityHigh},
			Components: []*catalog.Component{{CapabilityID: "CAP-ALERT-MGT-001", ComponentID: component, Name: "r", ComponentType: "cache", Order: 1, Status: catalog.ComponentActive}},
		}
		if _, err := h.env.Store.BulkLoad(context.Background(), []*catalog.Bundle{bundle}, 1); err != nil {
			t.Fatal(err)
		}
	}
	reseed("reseeded-1")
	if got := warm(); !slices.Equal(got, []string{"reseeded-1"}) {
		t.Fatalf("server B after a bulk load = %v, want [reseeded-1]", got)
	}
	reseed("reseeded-2")
	if got := componentIDs(t, serve(t, b, completeView, nil)); !slices.Equal(got, []string{"reseeded-2"}) {
		t.Fatalf("server B after the second bulk load = %v, want [reseeded-2]", got)
	}
}

// An import by another process (the import command, -data loading) of a capability deleted
// since is in the next read, even when the file's METADATA is the very one of a state the
// cache holds the ranges of another state for.
func TestCacheSeesImport(t *testing.T) {
	h := cachedHarness(t, graph.DefaultCacheBytes, nil)
	ctx := context.Background()
	export := func() []byte {
		var buf bytes.Buffer
		if _, err := h.env.Store.Export(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		// Keep one capability's lines only.
		var keep []string
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.Contains(line, `"CAP-ALERT-MGT-001"`) {
				keep = append(keep, line)
			}
		}
		return []byte(strings.Join(keep, "\n") + "\n")
	}
	deleteIt := func() {
		var c struct{ Capability struct{ Revision int } }
		h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { revision } }`, nil, &c)
		h.ok(t, `mutation($r: Int!) { deleteCapability(id: "CAP-ALERT-MGT-001", expectedRevision: $r) }`, map[string]any{"r": c.Capability.Revision}, nil)
	}
	importIt := func(file []byte) {
		if _, err := h.env.Store.Import(ctx, bytes.NewReader(file), 2); err != nil {
			t.Fatalf("import: %v", err)
		}
	}
	first := export()
	h.ok(t, addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"componentId": "second-state-1", "name": "n", "componentType": "cache", "order": 61}}, nil)
	second := export()

	deleteIt()
	importIt(second)
	h.ok(t, completeView, nil, nil)
	if got := componentIDs(t, h.ok(t, completeView, nil, nil)); !slices.Contains(got, "second-state-1") {
		t.Fatalf("after importing the second state = %v", got)
	}
	deleteIt()
	importIt(first)
	if got := componentIDs(t, h.ok(t, completeView, nil, nil)); slices.Contains(got, "second-state-1") {
		t.Fatalf("after importing the first state the view still shows the second: %v", got)
	}
}

// A write that commits between the metadata read and the range read of a cold view, or
// between the range read and anything after it, never leaves an entry that a later read
// serves: every later view shows the write.
func TestCacheRacingFill(t *testing.T) {
	for _, when := range []string{"before the range read", "after the range read"} {
		t.Run(when, func(t *testing.T) {
			h := newHarness(t)
			store2, front := secondStore(t, h)
			srv := graph.NewHandler(store2, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }, PartitionCache: graph.NewPartitionCache(graph.DefaultCacheBytes, nil)})
			var once sync.Once
			hook := func(op string, body []byte) {
				if op != "Query" || !bytes.Contains(body, []byte("CAPABILITY#CAP-ALERT-MGT-001")) || !bytes.Contains(body, []byte("COMPONENT#")) {
					return
				}
				once.Do(func() {
					// Through the first store: another server's write.
					if _, err := h.env.Store.AddComponent(context.Background(), &catalog.Component{CapabilityID: "CAP-ALERT-MGT-001", ComponentID: "racer-1",
						Name: "r", ComponentType: "cache", Order: 62, Status: catalog.ComponentActive}, dynamo.Idempotency{}); err != nil {
						t.Errorf("racing write: %v", err)
					}
				})
			}
			if when == "before the range read" {
				front.before = hook
			} else {
				front.after = hook
			}
			serve(t, srv, completeView, nil) // the racing read: either state is a correct answer
			front.before, front.after = nil, nil
			for i := range 3 {
				resp := serve(t, srv, completeView, nil)
				if got := componentIDs(t, resp); !slices.Contains(got, "racer-1") {
					t.Fatalf("view %d after the racing write = %v, want racer-1 in it", i+1, got)
				}
			}
		})
	}
}

// The cache holds at most its bytes, evicting the least recently used (counted), and /metrics
// carries its series.
func TestCacheBoundedByBytes(t *testing.T) {
	reg := prometheus.NewRegistry()
	pc := graph.NewPartitionCache(24<<10, reg)
	h := newHarnessWith(t, func(o *graph.Options) { o.PartitionCache = pc })
	ids := []string{"CAP-ALERT-MGT-001", "CAP-FRAUD-DET-001", "CAP-PAY-PROC-001"}
	for _, id := range ids {
		h.ok(t, fmt.Sprintf(`{ capability(id: %q) { components { name } dependencies { criticality } rules { name } } }`, id), nil, nil)
		if _, b := pc.Len(); b > 24<<10 {
			t.Fatalf("cache holds %d bytes, over its bound of %d", b, 24<<10)
		}
	}
	got := gather(t, reg)
	for _, name := range []string{"catalogue_partition_cache_hits_total", "catalogue_partition_cache_misses_total", "catalogue_partition_cache_evictions_total",
		"catalogue_partition_cache_bytes", "catalogue_partition_cache_entries"} {
		if _, ok := got[name]; !ok {
			t.Errorf("metric %s missing from %v", name, got)
		}
	}
	if got["catalogue_partition_cache_evictions_total"] == 0 {
		t.Errorf("no eviction counted with 3 capabilities in 24 KiB (entries, bytes: %v)", fmt.Sprint(pc.Len()))
	}
	if got["catalogue_partition_cache_misses_total"] != 6 {
		t.Errorf("misses = %v, want 6", got["catalogue_partition_cache_misses_total"])
	}
	// The first capability was evicted first: read again, it misses.
	resp := h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { components { name } } }`, nil, nil)
	if _, misses := cacheCounts(t, resp); misses != 1 {
		t.Errorf("the least recently used capability after evictions: %d misses, want 1", misses)
	}
}

func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			switch {
			case m.Counter != nil:
				out[mf.GetName()] += m.Counter.GetValue()
			case m.Gauge != nil:
				out[mf.GetName()] += m.Gauge.GetValue()
			}
		}
	}
	return out
}

// -cache-bytes 0: no cache, the requests of today, and no cache in extensions.dynamodb.
func TestCacheOff(t *testing.T) {
	if graph.NewPartitionCache(0, nil) != nil {
		t.Fatal("NewPartitionCache(0) is a cache")
	}
	h := newHarnessWith(t, func(o *graph.Options) { o.PartitionCache = graph.NewPartitionCache(0, nil) })
	for range 2 {
		resp := h.ok(t, completeView, nil, nil)
		if got := h.env.Counter.Total(); got != 3 {
			t.Errorf("complete view without the cache: %d requests, want 3", got)
		}
		if resp.Extensions.DynamoDB.Cache != nil || strings.Contains(resp.Body, `"cache"`) {
			t.Errorf("extensions.dynamodb reports a cache that is off: %s", resp.Body)
		}
	}
}

// Concurrent views, lists and writes share cached entries: run with -race, nothing a request
// does may change an entry another request reads, and every view after the writes shows them.
func TestCacheConcurrentReadersAndWriters(t *testing.T) {
	h := cachedHarness(t, graph.DefaultCacheBytes, nil)
	list := `{ capabilities(first: 20) { nodes { name components { name dependsOn { name } dependents { name } } dependencies { source { name } } rules { name conditions { field } } slaBreaches { name } } } }`
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 5 {
				serve(t, h.handler, completeView, nil)
				serve(t, h.handler, list, nil)
			}
		})
		wg.Go(func() {
			serve(t, h.handler, addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"componentId": fmt.Sprintf("conc-%d", w), "name": "n", "componentType": "cache", "order": 70 + w}})
		})
	}
	wg.Wait()
	got := componentIDs(t, serve(t, h.handler, completeView, nil))
	for w := range 4 {
		if !slices.Contains(got, fmt.Sprintf("conc-%d", w)) {
			t.Errorf("view after the writes = %v, want conc-%d in it", got, w)
		}
	}
	h.wrote = true
}

// The complete view and the list of 50 with components, dependencies and rules, with the
// partition cache (warm: nothing written between operations) and without it:
//
//	go test ./graph/ -run '^$' -bench PartitionCache -benchmem
func BenchmarkPartitionCache(b *testing.B) {
	list50 := `{ capabilitiesByDomain(domain: "batch", first: 50) { nodes { id name components { componentId name dependsOn { componentId } } dependencies { criticality } rules { name } } } }`
	for _, cached := range []bool{false, true} {
		name := "uncached"
		if cached {
			name = "cached"
		}
		b.Run("CompleteView/"+name, func(b *testing.B) {
			benchQuery(b, benchCacheHandler(b, cached), benchCompleteView, map[string]any{"id": "CAP-ALERT-MGT-001"})
		})
		b.Run("List50/"+name, func(b *testing.B) {
			benchQuery(b, benchCacheHandler(b, cached), list50, nil)
		})
	}
}

// benchCacheHandler is benchHandler with batchBundles(50) loaded too, and a partition cache
// when cached is set.
func benchCacheHandler(b *testing.B, cached bool) http.Handler {
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
	if _, err := store.BulkLoad(ctx, append(sample.Catalogue(testNow), batchBundles(50)...), 4); err != nil {
		b.Fatal(err)
	}
	opts := graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }}
	if cached {
		opts.PartitionCache = graph.NewPartitionCache(graph.DefaultCacheBytes, nil)
	}
	return graph.GraphQLHandler(store, opts)
}

// check -repair rewrites what it repairs through the writers' transaction, WriteSeq bumped:
// after a recount, a server's cached ranges of that capability are not used again.
func TestCacheAfterRepair(t *testing.T) {
	h := cachedHarness(t, graph.DefaultCacheBytes, nil)
	ctx := context.Background()
	h.ok(t, completeView, nil, nil)
	if _, misses := cacheCounts(t, h.ok(t, completeView, nil, nil)); misses != 0 {
		t.Fatalf("not warm: %d misses", misses)
	}
	_, err := h.env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(h.env.Table),
		Key:              map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CAPABILITY#CAP-ALERT-MGT-001"}, "SK": &types.AttributeValueMemberS{Value: "METADATA"}},
		UpdateExpression: aws.String("SET #d.#a.#t = :n"), ExpressionAttributeNames: map[string]string{"#d": "Data", "#a": "aggregates", "#t": "totalComponents"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "99"}}})
	if err != nil {
		t.Fatal(err)
	}
	report, err := h.env.Store.Check(ctx, true)
	if err != nil || len(report.Repaired) == 0 {
		t.Fatalf("check -repair: %v %+v", err, report)
	}
	resp := h.ok(t, completeView, nil, nil)
	if hits, misses := cacheCounts(t, resp); hits != 0 || misses != 2 {
		t.Errorf("view after check -repair: hits/misses %d/%d, want 0/2 (the repair changed the version)", hits, misses)
	}
}
