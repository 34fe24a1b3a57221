package graph_test

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
)

// resolverFields returns, by type, the fields that have a resolver of their own: the methods
// of the type's resolver interface (graph.CapabilityResolver for Capability), which gqlgen
// generates for every field it cannot read off the Go value.
func resolverFields(tb testing.TB, s *ast.Schema) map[string][]string {
	tb.Helper()
	out := map[string][]string{}
	root := reflect.TypeFor[graph.ResolverRoot]()
	for i := range root.NumMethod() {
		m := root.Method(i)
		def := s.Types[m.Name]
		if def == nil {
			tb.Fatalf("ResolverRoot.%s names no type of the schema", m.Name)
		}
		iface := m.Type.Out(0)
		for j := range iface.NumMethod() {
			name := iface.Method(j).Name
			k := slices.IndexFunc(def.Fields, func(f *ast.FieldDefinition) bool { return strings.EqualFold(f.Name, name) })
			if k < 0 {
				tb.Fatalf("%sResolver.%s matches no field of %s", m.Name, name, m.Name)
			}
			out[m.Name] = append(out[m.Name], def.Fields[k].Name)
		}
	}
	return out
}

// declaredReads returns, by type and field, the segments of the schema's @reads declarations.
func declaredReads(tb testing.TB, s *ast.Schema) map[string]map[string]dynamo.Segment {
	tb.Helper()
	out := map[string]map[string]dynamo.Segment{}
	directiveArgs(tb, s, "reads", "segments", func(typ, field string, v *ast.Value) {
		values := []string{v.Raw} // a single value stands for a list of one
		if v.Kind == ast.ListValue {
			values = values[:0]
			for _, c := range v.Children {
				values = append(values, c.Value.Raw)
			}
		}
		var want dynamo.Segment
		for _, name := range values {
			seg, ok := map[string]dynamo.Segment{"COMPONENTS": dynamo.SegComponents, "DEPENDENCIES": dynamo.SegDependencies, "RULES": dynamo.SegRules}[name]
			if !ok {
				tb.Errorf("%s.%s: @reads names segment %s, which this test does not know", typ, field, name)
			}
			want |= seg
		}
		if out[typ] == nil {
			out[typ] = map[string]dynamo.Segment{}
		}
		out[typ][field] = want
	})
	return out
}

// TestPartitionReadsDeclared holds the schema to the rule that keeps the look-ahead whole:
// every field with a resolver, below Query, Mutation and Subscription, declares with @reads the partition
// segments it reads ([] for none), and only fields with a resolver declare it (a field read
// off its parent's Go value reads nothing). A new resolver without a declaration fails here.
func TestPartitionReadsDeclared(t *testing.T) {
	s := schema(t)
	declared := declaredReads(t, s)
	resolved := resolverFields(t, s)
	for _, typ := range slices.Sorted(maps.Keys(resolved)) {
		if typ == "Query" || typ == "Mutation" || typ == "Subscription" {
			continue
		}
		for _, f := range resolved[typ] {
			if _, ok := declared[typ][f]; !ok {
				t.Errorf("%s.%s has a resolver but no @reads: declare the partition segments it reads (@reads(segments: [COMPONENTS]), or [] for none)", typ, f)
			}
		}
	}
	for typ, fields := range declared {
		for f := range fields {
			if !slices.Contains(resolved[typ], f) || typ == "Query" || typ == "Mutation" || typ == "Subscription" {
				t.Errorf("%s.%s declares @reads but has no resolver below the root", typ, f)
			}
		}
	}
}

// rangeRecorder is the store with every partition range read recorded.
type rangeRecorder struct {
	*dynamo.Store
	mu     sync.Mutex
	ranges []dynamo.Segment
}

func (r *rangeRecorder) ReadRange(ctx context.Context, capabilityID string, rng dynamo.Segment, f dynamo.Fields) (*dynamo.Partition, error) {
	r.mu.Lock()
	r.ranges = append(r.ranges, rng)
	r.mu.Unlock()
	return r.Store.ReadRange(ctx, capabilityID, rng, f)
}

func (r *rangeRecorder) take() []dynamo.Segment {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.ranges
	r.ranges = nil
	slices.Sort(out)
	return out
}

// TestPartitionReadsMatchDeclarations selects each field that declares @reads, alone under a
// capability of the sample, and requires the partition ranges read to be exactly those its
// declaration and the path to it plan: a resolver that reads a segment it does not declare
// reads it late, in a range of its own, and fails here.
func TestPartitionReadsMatchDeclarations(t *testing.T) {
	h := newHarness(t)
	// One write, so that the capability has a change to probe (the sample is bulk-loaded).
	c, err := h.env.Store.Capability(context.Background(), "CAP-ALERT-MGT-001")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.env.Store.UpdateCapability(context.Background(), c.CapabilityID, c.Revision, func(c *catalog.Capability) error { c.Owner = "probe"; return nil }, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	// And notifications to probe (the sample queues none).
	h.env.RequireTransactions(t)
	business := catalog.RuleBusiness
	if _, err := h.env.Store.ExecuteRules(context.Background(), c.CapabilityID, map[string]any{"source": "production", "error_count": 150}, &business, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	h.wrote = true
	rec := &rangeRecorder{Store: h.env.Store}
	h.handler = graph.NewHandler(rec, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }})
	s := schema(t)
	// Where an object of each type is found under a capability of the sample, and what that
	// path itself reads.
	paths := map[string]struct {
		query string
		reads dynamo.Segment
	}{
		"Capability":      {"%s", 0},
		"Component":       {"components { %s }", dynamo.SegComponents},
		"Dependency":      {"dependencies { %s }", dynamo.SegDependencies},
		"Rule":            {"rules { %s }", dynamo.SegRules},
		"Job":             {"jobs { nodes { %s } }", 0},
		"TargetComponent": {"jobs { nodes { targetComponents { %s } } }", 0},
		"Metric":          {"metrics(first: 5) { nodes { %s } }", 0},
		"Change":          {"changes(first: 5) { nodes { %s } }", 0},
		"Notification":    {"notifications(first: 5) { nodes { %s } }", 0},
	}
	unreachable := map[string]string{"ArtifactUpload": "only a mutation returns it, and no resolver of it reads the table",
		"Owner":  "reached from the root (owner, owners), never under a capability: its connections read their own ranges, none of a capability's partition",
		"Caller": "reached from the root (me), never under a capability: it reads nothing from the table (TestMe counts 0 requests)"}
	declared := declaredReads(t, s)
	for _, typ := range slices.Sorted(maps.Keys(declared)) {
		path, ok := paths[typ]
		if !ok {
			if unreachable[typ] == "" {
				t.Errorf("%s declares @reads but this test has no path to it: add one", typ)
			}
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(declared[typ])) {
			t.Run(typ+"."+name, func(t *testing.T) {
				probe := call(s, s.Types[typ].Fields.ForName(name), "api-server-alert-001")
				if typ+"."+name == "Component.metricRollups" {
					// Its range is bounded (FIVE_MINUTES, the first interval: 7 days).
					probe = `metricRollups(interval: FIVE_MINUTES, from: "` + testNow.Add(-time.Hour).Format(time.RFC3339) + `") { __typename }`
				}
				q := `{ capability(id: "CAP-ALERT-MGT-001") { ` + fmt.Sprintf(path.query, "probe: "+probe) + ` } }`
				rec.take()
				resp := h.do(t, q, nil)
				if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"probe"`) {
					t.Fatalf("%s: the probe did not resolve: %s", q, resp.Body)
				}
				want := dynamo.PlanRanges(path.reads | declared[typ][name])
				if got := rec.take(); !slices.Equal(got, want) {
					t.Errorf("%s read the ranges %v, want %v: does %s.%s read what its @reads declares (%v)?", q, got, want, typ, name, declared[typ][name])
				}
			})
		}
	}
}
