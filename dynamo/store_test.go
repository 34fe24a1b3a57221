package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	miniserver "github.com/truora/minidyn/server"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/sample"
)

// sampleNow is the clock of every test here: the sample catalogue is built relative to it and
// the store reads with it, so that metric TTLs and relative times are deterministic. Two
// minutes after the seed's 14:30 so that the newest metric sample is the seed's.
var sampleNow = time.Date(2025, 11, 22, 14, 32, 0, 0, time.UTC)

const alertID = "CAP-ALERT-MGT-001"

// ---------------------------------------------------------------------------------------------
// Helpers.

// newEnv starts a backend (minidyn, or DYNAMODB_TEST_ENDPOINT) whose store's clock is sampleNow.
func newEnv(tb testing.TB) *dynamotest.Env {
	tb.Helper()
	return dynamotest.New(tb, dynamotest.Options{Now: func() time.Time { return sampleNow }})
}

// itemCount is how many items BulkLoad writes for bundles: the capability's METADATA and its two
// index items, then one per component and its ID's claim, dependency, job, metric and rule.
func itemCount(bundles []*catalog.Bundle) int {
	n := 0
	for _, b := range bundles {
		n += 3 + 2*len(b.Components) + len(b.Dependencies) + len(b.Jobs) + len(b.Metrics) + len(b.Rules)
	}
	return n
}

// load bulk-loads bundles, checks the count BulkLoad returns and resets the request counter.
func load(tb testing.TB, env *dynamotest.Env, bundles []*catalog.Bundle) {
	tb.Helper()
	n, err := env.Store.BulkLoad(context.Background(), bundles, 4)
	if err != nil {
		tb.Fatalf("BulkLoad(%d bundles) = %v", len(bundles), err)
	}
	if want := itemCount(bundles); n != want {
		tb.Fatalf("BulkLoad(%d bundles) = %d, want %d", len(bundles), n, want)
	}
	env.Counter.Reset()
}

// loadSample loads sample.Catalogue(sampleNow) and returns its bundles, recounted as loaded.
func loadSample(tb testing.TB, env *dynamotest.Env) []*catalog.Bundle {
	tb.Helper()
	bundles := sample.Catalogue(sampleNow)
	load(tb, env, bundles)
	return bundles
}

// bundleOf returns the bundle of capabilityID.
func bundleOf(tb testing.TB, bundles []*catalog.Bundle, capabilityID string) *catalog.Bundle {
	tb.Helper()
	for _, b := range bundles {
		if b.Capability.CapabilityID == capabilityID {
			return b
		}
	}
	tb.Fatalf("no bundle %s in the sample", capabilityID)
	return nil
}

// smallCapabilities returns n bundles holding nothing but a capability, CAP-T-000 onwards.
func smallCapabilities(n int) []*catalog.Bundle {
	bundles := make([]*catalog.Bundle, n)
	for i := range bundles {
		bundles[i] = &catalog.Bundle{Capability: &catalog.Capability{
			CapabilityID:   fmt.Sprintf("CAP-T-%03d", i),
			Name:           fmt.Sprintf("Test Capability %03d", i),
			BusinessDomain: "testing",
			Status:         catalog.CapabilityActive,
			Priority:       catalog.PriorityLow,
		}}
	}
	return bundles
}

// scanAll returns every item of the table, following pages.
func scanAll(tb testing.TB, env *dynamotest.Env) []map[string]types.AttributeValue {
	tb.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(env.Client, &dynamodb.ScanInput{TableName: aws.String(env.Table)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			tb.Fatalf("Scan(%s) = %v", env.Table, err)
		}
		items = append(items, out.Items...)
	}
	return items
}

// partitionItems returns the raw items of a capability's partition by SK, read with a plain
// Query on PK through env.Client.
func partitionItems(tb testing.TB, env *dynamotest.Env, pk string) map[string]map[string]types.AttributeValue {
	tb.Helper()
	items := map[string]map[string]types.AttributeValue{}
	p := dynamodb.NewQueryPaginator(env.Client, &dynamodb.QueryInput{
		TableName:                 aws.String(env.Table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}},
	})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			tb.Fatalf("Query(PK = %q) = %v", pk, err)
		}
		for _, it := range out.Items {
			items[render(it["SK"])] = it
		}
	}
	return items
}

// attrAt returns the attribute at a dotted path (Data.businessMetrics.sla), or nil.
func attrAt(item map[string]types.AttributeValue, path string) types.AttributeValue {
	var cur types.AttributeValue = &types.AttributeValueMemberM{Value: item}
	for _, name := range strings.Split(path, ".") {
		m, ok := cur.(*types.AttributeValueMemberM)
		if !ok {
			return nil
		}
		if cur, ok = m.Value[name]; !ok {
			return nil
		}
	}
	return cur
}

// render shows a scalar attribute value as its text; other kinds show their type.
func render(av types.AttributeValue) string {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	case *types.AttributeValueMemberBOOL:
		return strconv.FormatBool(v.Value)
	case nil:
		return "<missing>"
	}
	return fmt.Sprintf("<%T>", av)
}

// kind names the DynamoDB type of av (S, N, M, ...).
func kind(av types.AttributeValue) string {
	switch av.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberM:
		return "M"
	case *types.AttributeValueMemberL:
		return "L"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case nil:
		return "missing"
	}
	return fmt.Sprintf("%T", av)
}

// keys maps items to their identifying strings; a nil item shows as "<nil>".
func keys[T comparable](items []T, key func(T) string) []string {
	out := make([]string, len(items))
	var zero T
	for i, it := range items {
		if it == zero {
			out[i] = "<nil>"
			continue
		}
		out[i] = key(it)
	}
	return out
}

func capabilityID(c *catalog.Capability) string { return c.CapabilityID }
func componentID(c *catalog.Component) string   { return c.CapabilityID + "/" + c.ComponentID }
func dependencyID(d *catalog.Dependency) string {
	return d.SourceComponentID + "->" + d.TargetComponentID
}
func jobID(j *catalog.Job) string   { return j.JobID }
func ruleID(r *catalog.Rule) string { return r.RuleID }
func metricID(m *catalog.Metric) string {
	return m.ComponentID + "/" + string(m.MetricType) + "/" + m.Timestamp.String()
}

// sortedBy returns the keys of items ordered by sortKey (descending when desc).
func sortedBy[T any](items []T, sortKey func(T) string, key func(T) string, desc bool) []string {
	s := slices.Clone(items)
	sort.SliceStable(s, func(i, j int) bool {
		if desc {
			return sortKey(s[i]) > sortKey(s[j])
		}
		return sortKey(s[i]) < sortKey(s[j])
	})
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = key(x)
	}
	return out
}

// sameJSON fails unless got and want have the same JSON (the Data of an entity: Meta is not
// part of it), empty lists and maps counting as absent: the store does not write them (an empty
// list reads back as nil).
func sameJSON(tb testing.TB, call string, got, want any) {
	tb.Helper()
	g, w := prunedJSON(tb, got), prunedJSON(tb, want)
	if !bytes.Equal(g, w) {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		lo := max(i-60, 0)
		tb.Errorf("%s = %s..., want %s... (first difference at byte %d)", call, g[lo:min(i+60, len(g))], w[lo:min(i+60, len(w))], i)
	}
}

// prunedJSON returns the JSON of v without nulls, empty lists and empty maps.
func prunedJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal %T: %v", v, err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		tb.Fatalf("unmarshal %T: %v", v, err)
	}
	var prune func(any) (any, bool)
	prune = func(x any) (any, bool) {
		switch t := x.(type) {
		case nil:
			return nil, false
		case map[string]any:
			for k, e := range t {
				if p, ok := prune(e); ok {
					t[k] = p
				} else {
					delete(t, k)
				}
			}
			return t, len(t) > 0
		case []any:
			kept := t[:0]
			for _, e := range t {
				if p, ok := prune(e); ok {
					kept = append(kept, p)
				}
			}
			return kept, len(kept) > 0
		}
		return x, true
	}
	x, _ = prune(x)
	b, _ = json.Marshal(x)
	return b
}

// wantOps fails unless the counter saw exactly the operations in want since its last reset.
func wantOps(tb testing.TB, env *dynamotest.Env, call string, want map[string]int) {
	tb.Helper()
	got := env.Counter.Ops()
	for op, n := range got {
		if n == 0 {
			delete(got, op)
		}
	}
	if !mapsEqual(got, want) {
		tb.Errorf("%s: DynamoDB requests = %v, want %v", call, got, want)
	}
}

// wantOneQuery fails unless the counter saw exactly one Query since its last reset. minidyn
// counts Limit against every item of the table or index it walks once a FilterExpression is set
// (not only those in the key range, as DynamoDB and dynalite do), so a filtered read there
// follows LastEvaluatedKey through many pages: for filtered reads on minidyn it only checks that
// Query was all that was sent.
func wantOneQuery(tb testing.TB, env *dynamotest.Env, call string, filtered bool) {
	tb.Helper()
	if filtered && !env.External {
		if ops := env.Counter.Ops(); ops["Query"] != env.Counter.Total() || ops["Query"] == 0 {
			tb.Errorf("%s: DynamoDB requests = %v, want only Query", call, ops)
		}
		return
	}
	wantOps(tb, env, call, map[string]int{"Query": 1})
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// collect reads every page of a connection, first items a page, and returns the keys of all the
// items in order. It fails on a page larger than first, a short page claiming a next one, a
// missing cursor or an item seen twice.
func collect[T comparable](tb testing.TB, call string, first int, fetch func(first int, after string) (*dynamo.Page[T], error), key func(T) string) (all []string, pages int) {
	tb.Helper()
	seen := map[string]bool{}
	after := ""
	for {
		p, err := fetch(first, after)
		if err != nil {
			tb.Fatalf("%s(first: %d, after: %q) = %v", call, first, after, err)
		}
		pages++
		if len(p.Items) != len(p.Cursors) {
			tb.Fatalf("%s(first: %d) page %d: %d items, %d cursors", call, first, pages, len(p.Items), len(p.Cursors))
		}
		if len(p.Items) > first || (p.HasNext && len(p.Items) != first) {
			tb.Fatalf("%s(first: %d) page %d: %d items, hasNext %v", call, first, pages, len(p.Items), p.HasNext)
		}
		for _, it := range p.Items {
			k := key(it)
			if seen[k] {
				tb.Fatalf("%s(first: %d) page %d repeats %s", call, first, pages, k)
			}
			seen[k] = true
			all = append(all, k)
		}
		if !p.HasNext {
			return all, pages
		}
		if pages > 10000 {
			tb.Fatalf("%s(first: %d): more than %d pages", call, first, pages)
		}
		after = p.Cursors[len(p.Cursors)-1]
	}
}

// isValidation reports whether err is a *catalog.ValidationError on field (any field if empty).
func isValidation(err error, field string) bool {
	var ve *catalog.ValidationError
	return errors.As(err, &ve) && (field == "" || ve.Field == field)
}

// ---------------------------------------------------------------------------------------------
// Loading and point reads.

func TestBulkLoadWritesEveryItem(t *testing.T) {
	env := newEnv(t)
	bundles := sample.Catalogue(sampleNow)
	n, err := env.Store.BulkLoad(context.Background(), bundles, 4)
	if err != nil {
		t.Fatalf("BulkLoad(sample) = %v", err)
	}
	want := itemCount(bundles)
	if n != want {
		t.Errorf("BulkLoad(sample) = %d, want %d", n, want)
	}
	// 25 items a BatchWriteItem, nothing else.
	wantOps(t, env, "BulkLoad(sample)", map[string]int{"BatchWriteItem": (want + 24) / 25})
	if got := len(scanAll(t, env)); got != want {
		t.Errorf("Scan after BulkLoad(sample) = %d items, want %d", got, want)
	}

	// Loading again overwrites: same items, no duplicates.
	if _, err := env.Store.BulkLoad(context.Background(), sample.Catalogue(sampleNow), 2); err != nil {
		t.Fatalf("BulkLoad(sample) again = %v", err)
	}
	if got := len(scanAll(t, env)); got != want {
		t.Errorf("Scan after a second BulkLoad(sample) = %d items, want %d", got, want)
	}
}

func TestBulkLoadRejectsBadIDs(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name   string
		bundle *catalog.Bundle
	}{
		{"hash in capability ID", &catalog.Bundle{Capability: &catalog.Capability{CapabilityID: "CAP#1", Name: "x", BusinessDomain: "d"}}},
		{"empty capability ID", &catalog.Bundle{Capability: &catalog.Capability{Name: "x", BusinessDomain: "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.Counter.Reset()
			n, err := env.Store.BulkLoad(context.Background(), []*catalog.Bundle{tt.bundle}, 1)
			if !isValidation(err, "") {
				t.Errorf("BulkLoad(%s) = %d, %v, want a *catalog.ValidationError", tt.bundle.Capability.CapabilityID, n, err)
			}
			if got := env.Counter.Total(); got != 0 {
				t.Errorf("BulkLoad(%s) sent %d requests, want 0", tt.bundle.Capability.CapabilityID, got)
			}
		})
	}
}

func TestCapability(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()

	for _, b := range bundles {
		id := b.Capability.CapabilityID
		t.Run(id, func(t *testing.T) {
			env.Counter.Reset()
			got, err := env.Store.Capability(ctx, id)
			if err != nil {
				t.Fatalf("Capability(%q) = %v", id, err)
			}
			wantOps(t, env, fmt.Sprintf("Capability(%q)", id), map[string]int{"GetItem": 1})
			sameJSON(t, fmt.Sprintf("Capability(%q)", id), got, b.Capability)
			if got.Revision != 1 {
				t.Errorf("Capability(%q).Revision = %d, want 1", id, got.Revision)
			}
			wantCreated := b.Capability.CreatedAt.Time
			if wantCreated.IsZero() {
				wantCreated = sampleNow
			}
			if !got.CreatedAt.Equal(wantCreated) {
				t.Errorf("Capability(%q).CreatedAt = %v, want %v", id, got.CreatedAt, wantCreated)
			}
		})
	}

	errTests := []struct {
		name string
		id   string
		want func(error) bool
	}{
		{"missing", "CAP-NOPE-001", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"prefix of an existing ID", "CAP-ALERT-MGT", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"hash forges a key", "CAP-ALERT-MGT-001#METADATA", func(err error) bool { return isValidation(err, "id") }},
		{"empty", "", func(err error) bool { return isValidation(err, "id") }},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := env.Store.Capability(ctx, tt.id)
			if !tt.want(err) || got != nil {
				t.Errorf("Capability(%q) = %v, %v; want nil and the %s error", tt.id, got, err, tt.name)
			}
		})
	}
}

func TestCapabilitiesByID(t *testing.T) {
	ctx := context.Background()

	t.Run("sample", func(t *testing.T) {
		env := newEnv(t)
		loadSample(t, env)
		tests := []struct {
			name    string
			ids     []string
			want    []string
			batches int
		}{
			{"none", nil, []string{}, 0},
			{"one present", []string{alertID}, []string{alertID}, 1},
			{"one missing", []string{"CAP-NOPE-001"}, []string{"<nil>"}, 1},
			{
				"present and missing in key order",
				[]string{"CAP-RPT-ANL-001", "CAP-NOPE-001", alertID, "CAP-FRAUD-DET-001", "CAP-NOPE-002"},
				[]string{"CAP-RPT-ANL-001", "<nil>", alertID, "CAP-FRAUD-DET-001", "<nil>"},
				1,
			},
			{
				"duplicates",
				[]string{alertID, "CAP-PAY-PROC-001", alertID, "CAP-NOPE-001", "CAP-NOPE-001", alertID},
				[]string{alertID, "CAP-PAY-PROC-001", alertID, "<nil>", "<nil>", alertID},
				1,
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env.Counter.Reset()
				got, err := env.Store.CapabilitiesByID(ctx, tt.ids)
				if err != nil {
					t.Fatalf("CapabilitiesByID(%v) = %v", tt.ids, err)
				}
				if g := keys(got, capabilityID); !slices.Equal(g, tt.want) {
					t.Errorf("CapabilitiesByID(%v) = %v, want %v", tt.ids, g, tt.want)
				}
				if n := env.Counter.Ops()["BatchGetItem"]; n != tt.batches {
					t.Errorf("CapabilitiesByID(%v) sent %d BatchGetItem, want %d", tt.ids, n, tt.batches)
				}
				if n, b := env.Counter.Total(), env.Counter.Ops()["BatchGetItem"]; n != b {
					t.Errorf("CapabilitiesByID(%v) sent %v, want only BatchGetItem", tt.ids, env.Counter.Ops())
				}
			})
		}
		t.Run("invalid ID", func(t *testing.T) {
			env.Counter.Reset()
			ids := []string{alertID, "CAP#X"}
			got, err := env.Store.CapabilitiesByID(ctx, ids)
			if !isValidation(err, "id") {
				t.Errorf("CapabilitiesByID(%v) = %v, %v; want a *catalog.ValidationError on id", ids, got, err)
			}
			if n := env.Counter.Total(); n != 0 {
				t.Errorf("CapabilitiesByID(%v) sent %d requests, want 0", ids, n)
			}
		})
	})

	t.Run("more than 100", func(t *testing.T) {
		env := newEnv(t)
		bundles := smallCapabilities(150)
		load(t, env, bundles)
		all := make([]string, len(bundles))
		for i, b := range bundles {
			all[i] = b.Capability.CapabilityID
		}
		missing := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("CAP-NOPE-%03d", i)
			}
			return out
		}
		nils := func(n int) []string { return slices.Repeat([]string{"<nil>"}, n) }
		reversed := slices.Clone(all)
		slices.Reverse(reversed)
		tests := []struct {
			name string
			ids  []string
			want []string
		}{
			{"150 present", all, all},
			{"150 present, reversed", reversed, reversed},
			{"100 present", all[:100], all[:100]},
			{"101 present", all[:101], all[:101]},
			{"150 present and 50 missing", slices.Concat(all, missing(50)), slices.Concat(all, nils(50))},
			{"150 present and 51 missing", slices.Concat(missing(51), all), slices.Concat(nils(51), all)},
			{"100 distinct, one repeated past the 100th key", slices.Concat(all[:100], all[:1]), slices.Concat(all[:100], all[:1])},
			{"150 distinct, each twice", slices.Concat(all, all), slices.Concat(all, all)},
			{"one ID 250 times", slices.Repeat(all[7:8], 250), slices.Repeat(all[7:8], 250)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env.Counter.Reset()
				got, err := env.Store.CapabilitiesByID(ctx, tt.ids)
				if err != nil {
					t.Fatalf("CapabilitiesByID(%d IDs) = %v", len(tt.ids), err)
				}
				if g := keys(got, capabilityID); !slices.Equal(g, tt.want) {
					t.Errorf("CapabilitiesByID(%d IDs) = %v, want %v", len(tt.ids), g, tt.want)
				}
				distinct := map[string]bool{}
				for _, id := range tt.ids {
					distinct[id] = true
				}
				want := (len(distinct) + 99) / 100
				wantOps(t, env, fmt.Sprintf("CapabilitiesByID(%d IDs, %d distinct)", len(tt.ids), len(distinct)), map[string]int{"BatchGetItem": want})
			})
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Partition reads.

func TestReadPartition(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()

	sets := []dynamo.Segment{
		dynamo.SegComponents,
		dynamo.SegDependencies,
		dynamo.SegRules,
		dynamo.SegComponents | dynamo.SegDependencies,
		dynamo.SegComponents | dynamo.SegRules,
		dynamo.SegDependencies | dynamo.SegRules,
		dynamo.SegComponents | dynamo.SegDependencies | dynamo.SegRules,
	}
	wantRanges := map[dynamo.Segment]int{
		dynamo.SegComponents:                                            1,
		dynamo.SegDependencies:                                          1,
		dynamo.SegRules:                                                 1,
		dynamo.SegComponents | dynamo.SegDependencies:                   1,
		dynamo.SegComponents | dynamo.SegRules:                          2,
		dynamo.SegDependencies | dynamo.SegRules:                        2,
		dynamo.SegComponents | dynamo.SegDependencies | dynamo.SegRules: 2,
	}

	for _, b := range bundles {
		id := b.Capability.CapabilityID
		wantComponents := sortedBy(b.Components, func(c *catalog.Component) string {
			return fmt.Sprintf("%02d#%s", c.Order, c.ComponentID)
		}, componentID, false)
		wantDependencies := sortedBy(b.Dependencies, func(d *catalog.Dependency) string {
			return d.SourceComponentID + "#" + d.TargetComponentID
		}, dependencyID, false)
		wantRules := sortedBy(b.Rules, func(r *catalog.Rule) string { return fmt.Sprintf("%03d#%s", r.Order, r.RuleID) }, ruleID, false)

		check := func(t *testing.T, call string, want dynamo.Segment, p *dynamo.Partition) {
			t.Helper()
			expect := func(seg dynamo.Segment, all []string) []string {
				if want.Has(seg) {
					return all
				}
				return []string{}
			}
			if g, w := keys(p.Components, componentID), expect(dynamo.SegComponents, wantComponents); !slices.Equal(g, w) {
				t.Errorf("%s.Components = %v, want %v", call, g, w)
			}
			if g, w := keys(p.Dependencies, dependencyID), expect(dynamo.SegDependencies, wantDependencies); !slices.Equal(g, w) {
				t.Errorf("%s.Dependencies = %v, want %v", call, g, w)
			}
			if g, w := keys(p.Rules, ruleID), expect(dynamo.SegRules, wantRules); !slices.Equal(g, w) {
				t.Errorf("%s.Rules = %v, want %v", call, g, w)
			}
		}

		for _, want := range sets {
			t.Run(id+"/"+want.String(), func(t *testing.T) {
				ranges := dynamo.PlanRanges(want)
				if len(ranges) != wantRanges[want] {
					t.Errorf("PlanRanges(%v) = %v, want %d ranges", want, ranges, wantRanges[want])
				}
				env.Counter.Reset()
				call := fmt.Sprintf("ReadPartition(%q, %v)", id, want)
				p, err := env.Store.ReadPartition(ctx, id, want)
				if err != nil {
					t.Fatalf("%s = %v", call, err)
				}
				wantOps(t, env, call, map[string]int{"Query": len(ranges)})
				check(t, call, want, p)

				var union dynamo.Segment
				for _, r := range ranges {
					union |= r
					env.Counter.Reset()
					call := fmt.Sprintf("ReadRange(%q, %v)", id, r)
					p, err := env.Store.ReadRange(ctx, id, r, dynamo.Fields{})
					if err != nil {
						t.Fatalf("%s = %v", call, err)
					}
					wantOps(t, env, call, map[string]int{"Query": 1})
					check(t, call, r, p)
				}
				if union != want {
					t.Errorf("PlanRanges(%v) = %v, covering %v", want, ranges, union)
				}
			})
		}
	}

	t.Run("entities round-trip", func(t *testing.T) {
		b := bundleOf(t, bundles, alertID)
		all := dynamo.SegComponents | dynamo.SegDependencies | dynamo.SegRules
		p, err := env.Store.ReadPartition(ctx, alertID, all)
		if err != nil {
			t.Fatalf("ReadPartition(%q, %v) = %v", alertID, all, err)
		}
		for i, c := range p.Components {
			sameJSON(t, fmt.Sprintf("ReadPartition(%q).Components[%d]", alertID, i), c, b.Components[i])
			if c.Revision != 1 || c.CreatedAt.IsZero() || c.UpdatedAt.IsZero() {
				t.Errorf("ReadPartition(%q).Components[%d].Meta = %+v, want revision 1 and both times", alertID, i, c.Meta)
			}
		}
		byEdge := map[string]*catalog.Dependency{}
		for _, d := range b.Dependencies {
			byEdge[dependencyID(d)] = d
		}
		for i, d := range p.Dependencies {
			sameJSON(t, fmt.Sprintf("ReadPartition(%q).Dependencies[%d]", alertID, i), d, byEdge[dependencyID(d)])
		}
		for i, r := range p.Rules {
			sameJSON(t, fmt.Sprintf("ReadPartition(%q).Rules[%d]", alertID, i), r, b.Rules[i])
		}
	})

	t.Run("named Data keys only", func(t *testing.T) {
		b := bundleOf(t, bundles, alertID)
		env.Counter.Reset()
		rng := dynamo.SegComponents | dynamo.SegDependencies
		p, err := env.Store.ReadRange(ctx, alertID, rng, dynamo.Fields{Components: []string{"name", "health"}, Dependencies: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		wantOps(t, env, "ReadRange with Fields", map[string]int{"Query": 1})
		if len(p.Components) != len(b.Components) || len(p.Dependencies) != len(b.Dependencies) {
			t.Fatalf("read %d components, %d dependencies; want %d, %d", len(p.Components), len(p.Dependencies), len(b.Components), len(b.Dependencies))
		}
		for i, c := range p.Components {
			w := b.Components[i]
			want := catalog.Component{Meta: c.Meta, ComponentID: w.ComponentID, CapabilityID: w.CapabilityID, Name: w.Name, ComponentType: w.ComponentType,
				Order: w.Order, Layer: w.Layer, Status: w.Status, Health: w.Health}
			sameJSON(t, fmt.Sprintf("component %d with name and health", i), c, &want)
			if c.Revision != 1 || c.CreatedAt.IsZero() {
				t.Errorf("component %d: Meta = %+v, want the envelope read", i, c.Meta)
			}
		}
		for i, d := range p.Dependencies {
			want := catalog.Dependency{CapabilityID: d.CapabilityID, SourceComponentID: d.SourceComponentID, TargetComponentID: d.TargetComponentID, Criticality: d.Criticality}
			if d.SourceComponentID == "" || d.Criticality == "" || d.DependencyType != "" || d.Interface != nil {
				t.Errorf("dependency %d = %+v, want only its required keys", i, d)
			}
			sameJSON(t, fmt.Sprintf("dependency %d with required keys", i), d, &want)
		}
		whole, err := env.Store.ReadRange(ctx, alertID, rng, dynamo.Fields{Components: []string{"name"}}) // dependencies nil: whole items
		if err != nil {
			t.Fatal(err)
		}
		if whole.Components[0].Technology == nil || whole.Dependencies[0].Interface == nil {
			t.Errorf("a nil key list must read whole items: %+v", whole.Components[0])
		}
	})

	t.Run("empty partition", func(t *testing.T) {
		env.Counter.Reset()
		p, err := env.Store.ReadPartition(ctx, "CAP-NOPE-001", dynamo.SegComponents|dynamo.SegRules)
		if err != nil {
			t.Fatalf("ReadPartition(%q) = %v", "CAP-NOPE-001", err)
		}
		if len(p.Components)+len(p.Dependencies)+len(p.Rules) != 0 {
			t.Errorf("ReadPartition(%q) = %+v, want nothing", "CAP-NOPE-001", p)
		}
		wantOps(t, env, "ReadPartition(CAP-NOPE-001)", map[string]int{"Query": 2})
	})

	t.Run("errors", func(t *testing.T) {
		env.Counter.Reset()
		if _, err := env.Store.ReadRange(ctx, alertID, dynamo.SegComponents|dynamo.SegRules, dynamo.Fields{}); err == nil {
			t.Errorf("ReadRange(%q, components+rules) = nil error, want an error: not one range", alertID)
		}
		if _, err := env.Store.ReadRange(ctx, "CAP#1", dynamo.SegComponents, dynamo.Fields{}); !isValidation(err, "capabilityId") {
			t.Errorf("ReadRange(%q) = %v, want a *catalog.ValidationError", "CAP#1", err)
		}
		if _, err := env.Store.ReadPartition(ctx, "", dynamo.SegRules); !isValidation(err, "capabilityId") {
			t.Errorf("ReadPartition(%q) = %v, want a *catalog.ValidationError", "", err)
		}
		if n := env.Counter.Total(); n != 0 {
			t.Errorf("rejected reads sent %d requests, want 0", n)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// GSI1 patterns.

func TestCapabilityIndexes(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	var caps []*catalog.Capability
	for _, b := range bundles {
		caps = append(caps, b.Capability)
	}
	byCapabilities := func(c *catalog.Capability) string {
		return fmt.Sprintf("%s#%02d#%s", c.BusinessDomain, c.Priority.Rank(), dynamo.Slug(c.Name))
	}
	byDomain := func(c *catalog.Capability) string {
		return fmt.Sprintf("%02d#%s", c.Priority.Rank(), dynamo.Slug(c.Name))
	}
	byHealth := func(c *catalog.Capability) string {
		return fmt.Sprintf("%03d#%s", int(math.Floor(c.Aggregates.HealthScore)), c.CapabilityID)
	}
	where := func(keep func(*catalog.Capability) bool) []*catalog.Capability {
		var out []*catalog.Capability
		for _, c := range caps {
			if keep(c) {
				out = append(out, c)
			}
		}
		return out
	}
	inDomain := func(d string) []*catalog.Capability {
		return where(func(c *catalog.Capability) bool { return c.BusinessDomain == d })
	}
	inHealth := func(h catalog.HealthStatus) []*catalog.Capability {
		return where(func(c *catalog.Capability) bool { return c.Aggregates.HealthStatus == h })
	}

	type fetch = func(first int, after string) (*dynamo.Page[*catalog.Capability], error)
	type testCase struct {
		name  string
		fetch fetch
		want  []string
	}
	tests := []testCase{{"Capabilities()", func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
		return env.Store.Capabilities(ctx, "", first, after)
	}, sortedBy(caps, byCapabilities, capabilityID, false)}}
	for _, d := range []string{"operations", "customer", "finance", "risk", "nowhere"} {
		tests = append(tests,
			testCase{fmt.Sprintf("Capabilities(domain: %q)", d), func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
				return env.Store.Capabilities(ctx, d, first, after)
			}, sortedBy(inDomain(d), byCapabilities, capabilityID, false)},
			testCase{fmt.Sprintf("CapabilitiesByDomain(%q)", d), func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
				return env.Store.CapabilitiesByDomain(ctx, d, first, after)
			}, sortedBy(inDomain(d), byDomain, capabilityID, false)},
		)
	}
	for _, h := range catalog.HealthStatuses {
		tests = append(tests, testCase{fmt.Sprintf("CapabilitiesByHealth(%q)", h), func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
			return env.Store.CapabilitiesByHealth(ctx, h, first, after)
		}, sortedBy(inHealth(h), byHealth, capabilityID, false)})
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == nil {
				tt.want = []string{}
			}
			env.Counter.Reset()
			p, err := tt.fetch(dynamo.MaxPage, "")
			if err != nil {
				t.Fatalf("%s = %v", tt.name, err)
			}
			if g := keys(p.Items, capabilityID); !slices.Equal(g, tt.want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", tt.name, g, p.HasNext, tt.want)
			}
			wantOps(t, env, tt.name, map[string]int{"Query": 1})
			for _, c := range p.Items {
				sameJSON(t, tt.name+" item "+c.CapabilityID, c, bundleOf(t, bundles, c.CapabilityID).Capability)
			}
			for _, first := range []int{1, 2, 3} {
				all, pages := collect(t, tt.name, first, tt.fetch, capabilityID)
				if all == nil {
					all = []string{}
				}
				if !slices.Equal(all, tt.want) {
					t.Errorf("%s paged by %d = %v, want %v", tt.name, first, all, tt.want)
				}
				if want := max(1, (len(tt.want)+first-1)/first); pages != want {
					t.Errorf("%s paged by %d took %d pages, want %d", tt.name, first, pages, want)
				}
			}
		})
	}

	t.Run("every status appears", func(t *testing.T) {
		for _, h := range catalog.HealthStatuses {
			if len(inHealth(h)) == 0 {
				t.Errorf("sample has no %s capability: CapabilitiesByHealth(%q) is not exercised", h, h)
			}
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		env.Counter.Reset()
		errTests := []struct {
			call  string
			err   error
			field string
		}{
			{"Capabilities(domain: \"ops#01\")", second(env.Store.Capabilities(ctx, "ops#01", 10, "")), "domain"},
			{"Capabilities(first: 0)", second(env.Store.Capabilities(ctx, "", 0, "")), "first"},
			{"Capabilities(first: 101)", second(env.Store.Capabilities(ctx, "", dynamo.MaxPage+1, "")), "first"},
			{"CapabilitiesByDomain(\"\")", second(env.Store.CapabilitiesByDomain(ctx, "", 10, "")), "domain"},
			{"CapabilitiesByHealth(\"sick\")", second(env.Store.CapabilitiesByHealth(ctx, "sick", 10, "")), "status"},
			{"CapabilitiesByHealth(first: -1)", second(env.Store.CapabilitiesByHealth(ctx, catalog.HealthHealthy, -1, "")), "first"},
		}
		for _, tt := range errTests {
			if !isValidation(tt.err, tt.field) {
				t.Errorf("%s = %v, want a *catalog.ValidationError on %s", tt.call, tt.err, tt.field)
			}
		}
		if n := env.Counter.Total(); n != 0 {
			t.Errorf("rejected reads sent %d requests, want 0", n)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func TestComponentsByType(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	byType := map[string][]*catalog.Component{}
	for _, b := range bundles {
		for _, c := range b.Components {
			byType[c.ComponentType] = append(byType[c.ComponentType], c)
		}
	}
	types := []string{"no-such-type"}
	for typ := range byType {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		t.Run(typ, func(t *testing.T) {
			want := sortedBy(byType[typ], func(c *catalog.Component) string { return c.CapabilityID + "#" + c.ComponentID }, componentID, false)
			if want == nil {
				want = []string{}
			}
			call := fmt.Sprintf("ComponentsByType(%q)", typ)
			env.Counter.Reset()
			p, err := env.Store.ComponentsByType(ctx, typ, dynamo.MaxPage, "")
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			if g := keys(p.Items, componentID); !slices.Equal(g, want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", call, g, p.HasNext, want)
			}
			wantOps(t, env, call, map[string]int{"Query": 1})
			for _, c := range p.Items {
				if c.ComponentType != typ || c.Revision != 1 {
					t.Errorf("%s item %s: type %q revision %d, want %q and 1", call, componentID(c), c.ComponentType, c.Revision, typ)
				}
			}
			all, _ := collect(t, call, 2, func(first int, after string) (*dynamo.Page[*catalog.Component], error) {
				return env.Store.ComponentsByType(ctx, typ, first, after)
			}, componentID)
			if all == nil {
				all = []string{}
			}
			if !slices.Equal(all, want) {
				t.Errorf("%s paged by 2 = %v, want %v", call, all, want)
			}
		})
	}
	if _, err := env.Store.ComponentsByType(ctx, "COMPONENT#x", 10, ""); !isValidation(err, "type") {
		t.Errorf("ComponentsByType(%q) = %v, want a *catalog.ValidationError on type", "COMPONENT#x", err)
	}
}

func TestJobByID(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	for _, b := range bundles {
		for _, want := range b.Jobs {
			t.Run(want.JobID, func(t *testing.T) {
				env.Counter.Reset()
				got, err := env.Store.JobByID(ctx, want.JobID)
				if err != nil {
					t.Fatalf("JobByID(%q) = %v", want.JobID, err)
				}
				wantOps(t, env, fmt.Sprintf("JobByID(%q)", want.JobID), map[string]int{"Query": 1})
				sameJSON(t, fmt.Sprintf("JobByID(%q)", want.JobID), got, want)
				if got.CapabilityID != b.Capability.CapabilityID {
					t.Errorf("JobByID(%q).CapabilityID = %q, want %q", want.JobID, got.CapabilityID, b.Capability.CapabilityID)
				}
				for i, tc := range got.TargetComponents {
					if tc.CapabilityID != got.CapabilityID {
						t.Errorf("JobByID(%q).TargetComponents[%d].CapabilityID = %q, want %q", want.JobID, i, tc.CapabilityID, got.CapabilityID)
					}
				}
			})
		}
	}
	errTests := []struct {
		id   string
		want func(error) bool
	}{
		{"JOB-NOPE-1", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"JOB-DEPLOY-45", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"JOB#1", func(err error) bool { return isValidation(err, "id") }},
	}
	for _, tt := range errTests {
		if got, err := env.Store.JobByID(ctx, tt.id); !tt.want(err) {
			t.Errorf("JobByID(%q) = %v, %v; want the matching error", tt.id, got, err)
		}
	}
}

func TestJobs(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	newestFirst := func(j *catalog.Job) string { return j.StartTime.String() + "#" + j.JobID }

	type tc struct {
		name   string
		id     string
		filter dynamo.JobFilter
	}
	var tests []tc
	for _, b := range bundles {
		id := b.Capability.CapabilityID
		tests = append(tests,
			tc{id + "/all", id, dynamo.JobFilter{}},
			tc{id + "/completed", id, dynamo.JobFilter{Status: catalog.JobCompleted}},
			tc{id + "/deployment", id, dynamo.JobFilter{JobType: catalog.JobDeployment}},
			tc{id + "/completed deployment", id, dynamo.JobFilter{Status: catalog.JobCompleted, JobType: catalog.JobDeployment}},
			tc{id + "/cancelled", id, dynamo.JobFilter{Status: catalog.JobCancelled}},
		)
	}
	tests = append(tests, tc{"no such capability", "CAP-NOPE-001", dynamo.JobFilter{}})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var jobs []*catalog.Job
			for _, b := range bundles {
				if b.Capability.CapabilityID != tt.id {
					continue
				}
				for _, j := range b.Jobs {
					if (tt.filter.Status == "" || j.Status == tt.filter.Status) && (tt.filter.JobType == "" || j.JobType == tt.filter.JobType) {
						jobs = append(jobs, j)
					}
				}
			}
			want := sortedBy(jobs, newestFirst, jobID, true)
			if want == nil {
				want = []string{}
			}
			call := fmt.Sprintf("Jobs(%q, %+v)", tt.id, tt.filter)
			env.Counter.Reset()
			p, err := env.Store.Jobs(ctx, tt.id, tt.filter, dynamo.MaxPage, "")
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			if g := keys(p.Items, jobID); !slices.Equal(g, want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", call, g, p.HasNext, want)
			}
			wantOneQuery(t, env, call, tt.filter != dynamo.JobFilter{})
			for _, first := range []int{1, 2} {
				all, _ := collect(t, call, first, func(first int, after string) (*dynamo.Page[*catalog.Job], error) {
					return env.Store.Jobs(ctx, tt.id, tt.filter, first, after)
				}, jobID)
				if all == nil {
					all = []string{}
				}
				if !slices.Equal(all, want) {
					t.Errorf("%s paged by %d = %v, want %v", call, first, all, want)
				}
			}
		})
	}

	t.Run("page of a larger history", func(t *testing.T) {
		// Enough jobs that a page stops inside the JOB# range while METADATA, METRIC# and RULE#
		// items follow it in the partition.
		b := bundleOf(t, sample.Catalogue(sampleNow), alertID)
		b.Capability.CapabilityID = "CAP-JOBS-001"
		base := b.Jobs[0]
		for i := range 40 {
			j := *base
			j.JobID = fmt.Sprintf("JOB-BULK-%03d", i)
			j.StartTime = catalog.NewTimestamp(sampleNow.Add(-time.Duration(i) * time.Hour))
			if i%3 == 0 {
				j.Status = catalog.JobFailed
			}
			b.Jobs = append(b.Jobs, &j)
		}
		load(t, env, []*catalog.Bundle{b})
		want := sortedBy(b.Jobs, newestFirst, jobID, true)
		all, pages := collect(t, "Jobs(CAP-JOBS-001)", 7, func(first int, after string) (*dynamo.Page[*catalog.Job], error) {
			return env.Store.Jobs(ctx, "CAP-JOBS-001", dynamo.JobFilter{}, first, after)
		}, jobID)
		if !slices.Equal(all, want) || pages != (len(want)+6)/7 {
			t.Errorf("Jobs(%q) paged by 7 = %v in %d pages, want %v", "CAP-JOBS-001", all, pages, want)
		}
		var failed []*catalog.Job
		for _, j := range b.Jobs {
			if j.Status == catalog.JobFailed {
				failed = append(failed, j)
			}
		}
		wantFailed := sortedBy(failed, newestFirst, jobID, true)
		f := dynamo.JobFilter{Status: catalog.JobFailed}
		all, _ = collect(t, "Jobs(CAP-JOBS-001, failed)", 4, func(first int, after string) (*dynamo.Page[*catalog.Job], error) {
			return env.Store.Jobs(ctx, "CAP-JOBS-001", f, first, after)
		}, jobID)
		if !slices.Equal(all, wantFailed) {
			t.Errorf("Jobs(%q, %+v) paged by 4 = %v, want %v", "CAP-JOBS-001", f, all, wantFailed)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Metrics.

func TestMetrics(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	b := bundleOf(t, bundles, alertID)
	newest := sampleNow.Truncate(sample.MetricInterval)
	from, to := newest.Add(-30*time.Minute), newest.Add(-10*time.Minute)
	bySK := func(m *catalog.Metric) string {
		return m.ComponentID + "#" + string(m.MetricType) + "#" + m.Timestamp.String()
	}
	metricsWhere := func(keep func(*catalog.Metric) bool) []string {
		var ms []*catalog.Metric
		for _, m := range b.Metrics {
			if keep(m) {
				ms = append(ms, m)
			}
		}
		out := sortedBy(ms, bySK, metricID, false)
		if out == nil {
			out = []string{}
		}
		return out
	}
	inWindow := func(m *catalog.Metric, lo, hi *time.Time) bool {
		return (lo == nil || !m.Timestamp.Before(*lo)) && (hi == nil || !m.Timestamp.After(*hi))
	}
	const api = "api-server-alert-001"

	tests := []struct {
		name   string
		filter dynamo.MetricFilter
		keep   func(*catalog.Metric) bool
	}{
		{"whole capability", dynamo.MetricFilter{}, func(*catalog.Metric) bool { return true }},
		{"whole capability, window", dynamo.MetricFilter{From: &from, To: &to}, func(m *catalog.Metric) bool { return inWindow(m, &from, &to) }},
		{"whole capability, performance", dynamo.MetricFilter{MetricType: catalog.MetricPerformance}, func(m *catalog.Metric) bool { return m.MetricType == catalog.MetricPerformance }},
		{"whole capability, resource", dynamo.MetricFilter{MetricType: catalog.MetricResource}, func(m *catalog.Metric) bool { return m.MetricType == catalog.MetricResource }},
		{"component", dynamo.MetricFilter{ComponentID: api}, func(m *catalog.Metric) bool { return m.ComponentID == api }},
		{"component, window", dynamo.MetricFilter{ComponentID: api, From: &from, To: &to}, func(m *catalog.Metric) bool { return m.ComponentID == api && inWindow(m, &from, &to) }},
		{"component, from only", dynamo.MetricFilter{ComponentID: api, From: &to}, func(m *catalog.Metric) bool { return m.ComponentID == api && inWindow(m, &to, nil) }},
		{"component, to only", dynamo.MetricFilter{ComponentID: api, To: &from}, func(m *catalog.Metric) bool { return m.ComponentID == api && inWindow(m, nil, &from) }},
		{"component and type (key range)", dynamo.MetricFilter{ComponentID: api, MetricType: catalog.MetricPerformance}, func(m *catalog.Metric) bool { return m.ComponentID == api }},
		{"component and type, window (key range)", dynamo.MetricFilter{ComponentID: api, MetricType: catalog.MetricPerformance, From: &from, To: &to}, func(m *catalog.Metric) bool { return m.ComponentID == api && inWindow(m, &from, &to) }},
		{"component and other type", dynamo.MetricFilter{ComponentID: api, MetricType: catalog.MetricSecurity}, func(*catalog.Metric) bool { return false }},
		{"component prefix does not match a longer ID", dynamo.MetricFilter{ComponentID: "api-server-alert-00"}, func(*catalog.Metric) bool { return false }},
		{"no such component", dynamo.MetricFilter{ComponentID: "nobody-001"}, func(*catalog.Metric) bool { return false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := metricsWhere(tt.keep)
			call := fmt.Sprintf("Metrics(%q, %s)", alertID, tt.name)
			env.Counter.Reset()
			p, err := env.Store.Metrics(ctx, alertID, tt.filter, dynamo.MaxMetricsPage, "")
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			if g := keys(p.Items, metricID); !slices.Equal(g, want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", call, g, p.HasNext, want)
			}
			if tt.filter.ComponentID != "" && tt.filter.MetricType != "" {
				// A key range: nothing outside the window is read.
				wantOps(t, env, call, map[string]int{"Query": 1})
			}
			all, _ := collect(t, call, 50, func(first int, after string) (*dynamo.Page[*catalog.Metric], error) {
				return env.Store.Metrics(ctx, alertID, tt.filter, first, after)
			}, metricID)
			if all == nil {
				all = []string{}
			}
			if !slices.Equal(all, want) {
				t.Errorf("%s paged by 50 = %d metrics, want %d", call, len(all), len(want))
			}
		})
	}

	t.Run("window is inclusive and aligned", func(t *testing.T) {
		f := dynamo.MetricFilter{ComponentID: api, MetricType: catalog.MetricPerformance, From: &from, To: &to}
		p, err := env.Store.Metrics(ctx, alertID, f, 100, "")
		if err != nil {
			t.Fatalf("Metrics(%q, %v..%v) = %v", alertID, from, to, err)
		}
		var got []string
		for _, m := range p.Items {
			got = append(got, m.Timestamp.String())
		}
		var want []string
		for at := from; !at.After(to); at = at.Add(sample.MetricInterval) {
			want = append(want, catalog.NewTimestamp(at).String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("Metrics(%q, %v..%v) timestamps = %v, want %v", alertID, from, to, got, want)
		}
	})

	t.Run("round-trip", func(t *testing.T) {
		f := dynamo.MetricFilter{ComponentID: api, MetricType: catalog.MetricPerformance, From: &newest, To: &newest}
		p, err := env.Store.Metrics(ctx, alertID, f, 10, "")
		if err != nil || len(p.Items) != 1 {
			t.Fatalf("Metrics(%q, at %v) = %v, %v; want one metric", alertID, newest, p, err)
		}
		for _, m := range b.Metrics {
			if m.ComponentID == api && m.Timestamp.Equal(newest) {
				sameJSON(t, fmt.Sprintf("Metrics(%q, at %v)[0]", alertID, newest), p.Items[0], m)
			}
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		env.Counter.Reset()
		errTests := []struct {
			name   string
			filter dynamo.MetricFilter
			first  int
			field  string
		}{
			{"bad component", dynamo.MetricFilter{ComponentID: "a#b"}, 10, "componentId"},
			{"bad type", dynamo.MetricFilter{MetricType: "latency"}, 10, "metricType"},
			{"to before from", dynamo.MetricFilter{From: &to, To: &from}, 10, "to"},
			{"first 0", dynamo.MetricFilter{}, 0, "first"},
			{"first over the cap", dynamo.MetricFilter{}, dynamo.MaxMetricsPage + 1, "first"},
		}
		for _, tt := range errTests {
			if _, err := env.Store.Metrics(ctx, alertID, tt.filter, tt.first, ""); !isValidation(err, tt.field) {
				t.Errorf("Metrics(%q, %s) = %v, want a *catalog.ValidationError on %s", alertID, tt.name, err, tt.field)
			}
		}
		if n := env.Counter.Total(); n != 0 {
			t.Errorf("rejected reads sent %d requests, want 0", n)
		}
	})
}

func TestComponentMetrics(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	newest := sampleNow.Truncate(sample.MetricInterval)
	from, to := newest.Add(-30*time.Minute), newest.Add(-10*time.Minute)
	fromOdd, toOdd := newest.Add(-32*time.Minute), newest.Add(-8*time.Minute)

	for _, b := range bundles {
		byComponent := map[string][]*catalog.Metric{}
		for _, m := range b.Metrics {
			byComponent[m.ComponentID] = append(byComponent[m.ComponentID], m)
		}
		for comp, ms := range byComponent {
			tests := []struct {
				name     string
				filter   dynamo.MetricFilter
				lo, hi   *time.Time
				wantType catalog.MetricType
			}{
				{"all", dynamo.MetricFilter{ComponentID: comp}, nil, nil, ""},
				{"window", dynamo.MetricFilter{ComponentID: comp, From: &from, To: &to}, &from, &to, ""},
				{"unaligned window", dynamo.MetricFilter{ComponentID: comp, From: &fromOdd, To: &toOdd}, &fromOdd, &toOdd, ""},
				{"from only", dynamo.MetricFilter{ComponentID: comp, From: &to}, &to, nil, ""},
				{"performance in window", dynamo.MetricFilter{ComponentID: comp, MetricType: catalog.MetricPerformance, From: &from, To: &to}, &from, &to, catalog.MetricPerformance},
				{"quality", dynamo.MetricFilter{ComponentID: comp, MetricType: catalog.MetricQuality}, nil, nil, catalog.MetricQuality},
			}
			for _, tt := range tests {
				t.Run(comp+"/"+tt.name, func(t *testing.T) {
					var keep []*catalog.Metric
					for _, m := range ms {
						if (tt.lo == nil || !m.Timestamp.Before(*tt.lo)) && (tt.hi == nil || !m.Timestamp.After(*tt.hi)) &&
							(tt.wantType == "" || m.MetricType == tt.wantType) {
							keep = append(keep, m)
						}
					}
					want := sortedBy(keep, func(m *catalog.Metric) string { return m.Timestamp.String() }, metricID, false)
					if want == nil {
						want = []string{}
					}
					call := fmt.Sprintf("ComponentMetrics(%q, %s)", comp, tt.name)
					env.Counter.Reset()
					p, err := env.Store.ComponentMetrics(ctx, tt.filter, dynamo.MaxMetricsPage, "")
					if err != nil {
						t.Fatalf("%s = %v", call, err)
					}
					if g := keys(p.Items, metricID); !slices.Equal(g, want) || p.HasNext {
						t.Errorf("%s = %v (hasNext %v), want %v", call, g, p.HasNext, want)
					}
					wantOneQuery(t, env, call, tt.filter.MetricType != "")
					if tt.name == "window" && len(want) != 5 {
						t.Errorf("%s = %d metrics, want the 5 samples from %v to %v", call, len(want), from, to)
					}
					all, _ := collect(t, call, 16, func(first int, after string) (*dynamo.Page[*catalog.Metric], error) {
						return env.Store.ComponentMetrics(ctx, tt.filter, first, after)
					}, metricID)
					if all == nil {
						all = []string{}
					}
					if !slices.Equal(all, want) {
						t.Errorf("%s paged by 16 = %v, want %v", call, all, want)
					}
				})
			}
		}
	}

	errTests := []struct {
		name   string
		filter dynamo.MetricFilter
		field  string
	}{
		{"no component", dynamo.MetricFilter{}, "componentId"},
		{"bad component", dynamo.MetricFilter{ComponentID: "x#y"}, "componentId"},
		{"to before from", dynamo.MetricFilter{ComponentID: "api-server-alert-001", From: &to, To: &from}, "to"},
	}
	for _, tt := range errTests {
		if _, err := env.Store.ComponentMetrics(ctx, tt.filter, 10, ""); !isValidation(err, tt.field) {
			t.Errorf("ComponentMetrics(%s) = %v, want a *catalog.ValidationError on %s", tt.name, err, tt.field)
		}
	}
}

func TestExpiredMetricsHidden(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	const capID, comp = "CAP-TTL-001", "api-ttl-001"
	at := func(d time.Duration) catalog.Timestamp {
		return catalog.NewTimestamp(sampleNow.Add(-d).Truncate(time.Minute))
	}
	metric := func(ts catalog.Timestamp) *catalog.Metric {
		return &catalog.Metric{ComponentID: comp, MetricType: catalog.MetricPerformance, Timestamp: ts, Interval: "1m"}
	}
	expired := at(100 * 24 * time.Hour)
	almost := at(89 * 24 * time.Hour)
	fresh := at(time.Hour)
	b := &catalog.Bundle{
		Capability: &catalog.Capability{CapabilityID: capID, Name: "TTL", BusinessDomain: "testing", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
		Components: []*catalog.Component{{ComponentID: comp, Name: "API", ComponentType: "api-server", Order: 1, Status: catalog.ComponentActive}},
		Metrics:    []*catalog.Metric{metric(expired), metric(almost), metric(fresh)},
	}
	load(t, env, []*catalog.Bundle{b})

	// The expired sample is in the table (DynamoDB deletes lazily; these backends never do).
	raw := partitionItems(t, env, "CAPABILITY#"+capID)
	sk := "METRIC#" + comp + "#performance#" + expired.String()
	if it, ok := raw[sk]; !ok {
		t.Fatalf("Query(PK = CAPABILITY#%s) has no %s: the expired metric was not loaded", capID, sk)
	} else if got, want := render(it["TTL"]), strconv.FormatInt(expired.Add(90*24*time.Hour).Unix(), 10); got != want {
		t.Errorf("item %s TTL = %s, want %s", sk, got, want)
	}

	want := []string{metricID(metric(almost)), metricID(metric(fresh))}
	tests := []struct {
		call  string
		fetch func() (*dynamo.Page[*catalog.Metric], error)
	}{
		{"Metrics(capability)", func() (*dynamo.Page[*catalog.Metric], error) {
			return env.Store.Metrics(ctx, capID, dynamo.MetricFilter{}, 100, "")
		}},
		{"Metrics(component)", func() (*dynamo.Page[*catalog.Metric], error) {
			return env.Store.Metrics(ctx, capID, dynamo.MetricFilter{ComponentID: comp}, 100, "")
		}},
		{"Metrics(component, type)", func() (*dynamo.Page[*catalog.Metric], error) {
			return env.Store.Metrics(ctx, capID, dynamo.MetricFilter{ComponentID: comp, MetricType: catalog.MetricPerformance}, 100, "")
		}},
		{"Metrics(component, type, first 1)", func() (*dynamo.Page[*catalog.Metric], error) {
			p, err := env.Store.Metrics(ctx, capID, dynamo.MetricFilter{ComponentID: comp, MetricType: catalog.MetricPerformance}, 1, "")
			if err == nil && p.HasNext {
				var q *dynamo.Page[*catalog.Metric]
				q, err = env.Store.Metrics(ctx, capID, dynamo.MetricFilter{ComponentID: comp, MetricType: catalog.MetricPerformance}, 1, p.Cursors[0])
				if err == nil {
					p.Items = append(p.Items, q.Items...)
					p.HasNext = q.HasNext
				}
			}
			return p, err
		}},
		{"ComponentMetrics", func() (*dynamo.Page[*catalog.Metric], error) {
			return env.Store.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: comp}, 100, "")
		}},
		{"ComponentMetrics(from 200 days ago)", func() (*dynamo.Page[*catalog.Metric], error) {
			from := sampleNow.Add(-200 * 24 * time.Hour)
			return env.Store.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: comp, From: &from}, 100, "")
		}},
	}
	for _, tt := range tests {
		p, err := tt.fetch()
		if err != nil {
			t.Fatalf("%s = %v", tt.call, err)
		}
		if g := keys(p.Items, metricID); !slices.Equal(g, want) || p.HasNext {
			t.Errorf("%s = %v (hasNext %v), want %v", tt.call, g, p.HasNext, want)
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Cursors.

func TestCursors(t *testing.T) {
	env := newEnv(t)
	loadSample(t, env)
	ctx := context.Background()
	newest := sampleNow.Truncate(sample.MetricInterval)
	from := newest.Add(-time.Hour)

	cursor := func(call string) func(string, error) string {
		return func(c string, err error) string {
			t.Helper()
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			return c
		}
	}
	capsCursor := cursor("Capabilities()")(firstCursor(env.Store.Capabilities(ctx, "", 1, "")))
	opsCursor := cursor("Capabilities(operations)")(firstCursor(env.Store.Capabilities(ctx, "operations", 1, "")))
	domainCursor := cursor("CapabilitiesByDomain(operations)")(firstCursor(env.Store.CapabilitiesByDomain(ctx, "operations", 1, "")))
	jobsCursor := cursor("Jobs(alert)")(firstCursor(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{}, 1, "")))
	completedCursor := cursor("Jobs(alert, completed)")(firstCursor(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 1, "")))
	metricsCursor := cursor("ComponentMetrics(api, from)")(firstCursor(env.Store.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: "api-server-alert-001", From: &from}, 1, "")))
	typeCursor := cursor("ComponentsByType(database)")(firstCursor(env.Store.ComponentsByType(ctx, "database", 1, "")))
	other := dynamo.New(env.Client, dynamo.Options{Table: env.Table, CursorSecret: []byte("another-secret")})
	foreignCursor := cursor("other store Capabilities()")(firstCursor(other.Capabilities(ctx, "", 1, "")))

	// The cursors work where they were issued.
	if _, err := env.Store.Capabilities(ctx, "", 1, capsCursor); err != nil {
		t.Errorf("Capabilities(after: its own cursor) = %v", err)
	}
	if _, err := env.Store.Jobs(ctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 1, completedCursor); err != nil {
		t.Errorf("Jobs(completed, after: its own cursor) = %v", err)
	}

	tampered := []byte(capsCursor)
	i := len(tampered) / 2
	if tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}

	env.Counter.Reset()
	tests := []struct {
		name string
		call func() error
	}{
		{"not base64", func() error { return second(env.Store.Capabilities(ctx, "", 10, "!!not a cursor!!")) }},
		{"too short", func() error { return second(env.Store.Capabilities(ctx, "", 10, "AAAA")) }},
		{"tampered", func() error { return second(env.Store.Capabilities(ctx, "", 10, string(tampered))) }},
		{"other secret", func() error { return second(env.Store.Capabilities(ctx, "", 10, foreignCursor)) }},
		{"Capabilities cursor to another domain", func() error { return second(env.Store.Capabilities(ctx, "customer", 10, opsCursor)) }},
		{"Capabilities cursor to CapabilitiesByDomain", func() error {
			return second(env.Store.CapabilitiesByDomain(ctx, "operations", 10, opsCursor))
		}},
		{"CapabilitiesByDomain cursor to another domain", func() error {
			return second(env.Store.CapabilitiesByDomain(ctx, "customer", 10, domainCursor))
		}},
		{"CapabilitiesByDomain cursor to CapabilitiesByHealth", func() error {
			return second(env.Store.CapabilitiesByHealth(ctx, catalog.HealthHealthy, 10, domainCursor))
		}},
		{"Jobs cursor with another filter", func() error {
			return second(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 10, jobsCursor))
		}},
		{"Jobs cursor without its filter", func() error {
			return second(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{}, 10, completedCursor))
		}},
		{"Jobs cursor to another capability", func() error {
			return second(env.Store.Jobs(ctx, "CAP-FRAUD-DET-001", dynamo.JobFilter{}, 10, jobsCursor))
		}},
		{"ComponentMetrics cursor to another window", func() error {
			return second(env.Store.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: "api-server-alert-001"}, 10, metricsCursor))
		}},
		{"ComponentMetrics cursor to Metrics", func() error {
			return second(env.Store.Metrics(ctx, alertID, dynamo.MetricFilter{ComponentID: "api-server-alert-001", From: &from}, 10, metricsCursor))
		}},
		{"ComponentsByType cursor to another type", func() error {
			return second(env.Store.ComponentsByType(ctx, "api-server", 10, typeCursor))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !isValidation(err, "after") {
				t.Errorf("%s: err = %v, want a *catalog.ValidationError on after", tt.name, err)
			}
		})
	}
	if n := env.Counter.Total(); n != 0 {
		t.Errorf("rejected cursors sent %d requests, want 0", n)
	}
}

// firstCursor returns the cursor of the first item of a page.
func firstCursor[T any](p *dynamo.Page[T], err error) (string, error) {
	if err != nil {
		return "", err
	}
	if len(p.Cursors) == 0 {
		return "", errors.New("page has no cursor")
	}
	return p.Cursors[0], nil
}

// ---------------------------------------------------------------------------------------------
// Items in the table.

func TestItemsFollowKeyPatterns(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	items := partitionItems(t, env, "CAPABILITY#"+alertID)
	alert := bundleOf(t, bundles, alertID)
	if want := itemCount([]*catalog.Bundle{alert}) - len(alert.Components); len(items) != want { // the claims live outside
		t.Errorf("Query(PK = CAPABILITY#%s) = %d items, want %d", alertID, len(items), want)
	}
	metricAt := "2025-11-22T14:30:00.000000Z"
	metricTTL := strconv.FormatInt(time.Date(2025, 11, 22, 14, 30, 0, 0, time.UTC).Add(90*24*time.Hour).Unix(), 10)

	tests := []struct {
		sk, entity, gsi1pk, gsi1sk string
		attrs                      map[string]string // path -> rendered scalar
	}{
		{"METADATA", "Capability", "CAPABILITIES", "operations#01#alert-management", map[string]string{
			"CreatedAt":                       "2025-11-22T09:00:00.000000Z",
			"UpdatedAt":                       "2025-11-22T14:30:00.000000Z",
			"Data.capabilityId":               alertID,
			"Data.name":                       "Alert Management",
			"Data.businessDomain":             "operations",
			"Data.priority":                   "critical",
			"Data.businessMetrics.sla":        "99.99%",
			"Data.architecture.redundancy":    "active-active",
			"Data.compliance.lastAudit":       "2025-10-15T00:00:00.000000Z",
			"Data.aggregates.totalComponents": "4",
			"Data.aggregates.healthStatus":    "healthy",
			"Data.lifecycle.phase":            "production",
		}},
		{"INDEX#DOMAIN", "CapabilityDomainIndex", "DOMAIN#operations", "01#alert-management", map[string]string{
			"Data.capabilityId":               alertID,
			"Data.aggregates.totalComponents": "4",
		}},
		{"INDEX#HEALTH", "CapabilityHealthIndex", "HEALTH#healthy", "097#" + alertID, map[string]string{
			"Data.capabilityId":           alertID,
			"Data.aggregates.healthScore": "97.5",
		}},
		{"COMPONENT#01#ui-dashboard-alert-001", "SoftwareComponent", "COMPONENT#ui-dashboard", alertID + "#ui-dashboard-alert-001", map[string]string{
			"Data.componentId":                         "ui-dashboard-alert-001",
			"Data.capabilityId":                        alertID,
			"Data.componentType":                       "ui-dashboard",
			"Data.order":                               "1",
			"Data.technology.framework":                "next.js",
			"Data.configuration.featureFlags.darkMode": "true",
		}},
		{"DEPENDENCY#api-server-alert-001#database-alert-001", "ComponentDependency", "CAPABILITY#" + alertID + "#DEPENDENCIES", "01#api-server-alert-001#database-alert-001", map[string]string{
			"Data.sourceComponentId":                   "api-server-alert-001",
			"Data.targetComponentId":                   "database-alert-001",
			"Data.criticality":                         "critical",
			"Data.interface.poolSize":                  "20",
			"Data.requirements.performance.maxLatency": "10ms",
		}},
		{"JOB#2025-11-22T10:00:00.000000Z#JOB-DEPLOY-456", "ImplementationJob", "JOB#JOB-DEPLOY-456", "2025-11-22T10:00:00.000000Z", map[string]string{
			"CreatedAt":                       "2025-11-22T10:00:00.000000Z",
			"Data.jobId":                      "JOB-DEPLOY-456",
			"Data.jobType":                    "deployment",
			"Data.status":                     "completed",
			"Data.startTime":                  "2025-11-22T10:00:00.000000Z",
			"Data.duration":                   "900",
			"Data.strategy.canary.percentage": "10",
		}},
		{"METRIC#api-server-alert-001#performance#" + metricAt, "PerformanceMetric", "METRICS#api-server-alert-001", metricAt, map[string]string{
			"CreatedAt":                     metricAt,
			"TTL":                           metricTTL,
			"Data.componentId":              "api-server-alert-001",
			"Data.metricType":               "performance",
			"Data.timestamp":                metricAt,
			"Data.dimensions.region":        "us-east-1",
			"Data.values.availability.unit": "percent",
		}},
		{"RULE#001#rule-alert-severity-mapping", "ConfigurationRule", "CAPABILITY#" + alertID + "#RULES", "business#001#rule-alert-severity-mapping", map[string]string{
			"Data.ruleId":                 "rule-alert-severity-mapping",
			"Data.ruleType":               "business",
			"Data.priority":               "high",
			"Data.order":                  "1",
			"Data.metrics.executionCount": "45230",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.sk, func(t *testing.T) {
			it, ok := items[tt.sk]
			if !ok {
				var sks []string
				for sk := range items {
					if !strings.HasPrefix(sk, "METRIC#") {
						sks = append(sks, sk)
					}
				}
				sort.Strings(sks)
				t.Fatalf("item (CAPABILITY#%s, %q) missing; non-metric SKs: %v", alertID, tt.sk, sks)
			}
			want := map[string]string{
				"PK":         "CAPABILITY#" + alertID,
				"SK":         tt.sk,
				"EntityType": tt.entity,
				"GSI1PK":     tt.gsi1pk,
				"GSI1SK":     tt.gsi1sk,
				"Revision":   "1",
			}
			for k, v := range tt.attrs {
				want[k] = v
			}
			for path, w := range want {
				if got := render(attrAt(it, path)); got != w {
					t.Errorf("item %s: %s = %q, want %q", tt.sk, path, got, w)
				}
			}
			if tt.entity != "PerformanceMetric" {
				if ttl, ok := it["TTL"]; ok {
					t.Errorf("item %s: TTL = %s, want none (only metrics expire)", tt.sk, render(ttl))
				}
			}
		})
	}

	t.Run("index items copy METADATA's Data", func(t *testing.T) {
		meta := items["METADATA"]["Data"]
		for _, sk := range []string{"INDEX#DOMAIN", "INDEX#HEALTH"} {
			if !jsonEqualAV(meta, items[sk]["Data"]) {
				t.Errorf("item %s: Data differs from METADATA's", sk)
			}
		}
	})

	t.Run("every item has the envelope", func(t *testing.T) {
		all := scanAll(t, env)
		if want := itemCount(bundles); len(all) != want {
			t.Errorf("Scan = %d items, want %d", len(all), want)
		}
		prefixes := map[string]string{
			"METADATA": "Capability", "INDEX#DOMAIN": "CapabilityDomainIndex", "INDEX#HEALTH": "CapabilityHealthIndex",
			"COMPONENT#": "SoftwareComponent", "DEPENDENCY#": "ComponentDependency", "JOB#": "ImplementationJob",
			"METRIC#": "PerformanceMetric", "RULE#": "ConfigurationRule",
		}
		owners := map[string]string{}
		for _, b := range bundles {
			for _, c := range b.Components {
				owners[c.ComponentID] = b.Capability.CapabilityID
			}
		}
		bad, claims := 0, 0
		for _, it := range all {
			pk, sk := render(it["PK"]), render(it["SK"])
			var problems []string
			if id, ok := strings.CutPrefix(pk, "COMPONENTID#"); ok {
				// A component ID's claim: outside every partition, naming its capability.
				claims++
				if sk != "CLAIM" || render(it["EntityType"]) != "ComponentClaim" || render(attrAt(it, "Data.componentId")) != id ||
					render(attrAt(it, "Data.capabilityId")) != owners[id] || it["GSI1PK"] != nil {
					t.Errorf("claim item (%s, %s) = %v", pk, sk, it)
				}
				continue
			}
			if !strings.HasPrefix(pk, "CAPABILITY#") {
				problems = append(problems, "PK not CAPABILITY#")
			}
			for _, a := range []string{"PK", "SK", "EntityType", "GSI1PK", "GSI1SK", "CreatedAt", "UpdatedAt"} {
				if k := kind(it[a]); k != "S" || render(it[a]) == "" {
					problems = append(problems, fmt.Sprintf("%s is %s %q", a, k, render(it[a])))
				}
			}
			for _, a := range []string{"CreatedAt", "UpdatedAt"} {
				if _, err := time.Parse(catalog.TimeLayout, render(it[a])); err != nil {
					problems = append(problems, fmt.Sprintf("%s %q not in %s", a, render(it[a]), catalog.TimeLayout))
				}
			}
			if k := kind(it["Revision"]); k != "N" || render(it["Revision"]) != "1" {
				problems = append(problems, fmt.Sprintf("Revision is %s %s", k, render(it["Revision"])))
			}
			if k := kind(it["Data"]); k != "M" {
				problems = append(problems, "Data is "+k)
			}
			matched := false
			for p, entity := range prefixes {
				if sk == p || (strings.HasSuffix(p, "#") && strings.HasPrefix(sk, p)) {
					matched = true
					if got := render(it["EntityType"]); got != entity {
						problems = append(problems, fmt.Sprintf("EntityType %q, want %q", got, entity))
					}
				}
			}
			if !matched {
				problems = append(problems, "unknown SK")
			}
			if id := render(attrAt(it, "Data.capabilityId")); "CAPABILITY#"+id != pk {
				problems = append(problems, fmt.Sprintf("Data.capabilityId %q", id))
			}
			if strings.HasPrefix(sk, "METRIC#") {
				ts, err := time.Parse(catalog.TimeLayout, render(attrAt(it, "Data.timestamp")))
				if err != nil || render(it["TTL"]) != strconv.FormatInt(ts.Add(90*24*time.Hour).Unix(), 10) || kind(it["TTL"]) != "N" {
					problems = append(problems, fmt.Sprintf("TTL %s %s for timestamp %s", kind(it["TTL"]), render(it["TTL"]), render(attrAt(it, "Data.timestamp"))))
				}
				if !strings.HasSuffix(sk, "#"+render(attrAt(it, "Data.timestamp"))) || render(it["GSI1SK"]) != render(attrAt(it, "Data.timestamp")) {
					problems = append(problems, "metric keys do not carry Data.timestamp")
				}
			}
			if len(problems) > 0 {
				bad++
				if bad <= 10 {
					t.Errorf("item (%s, %s): %s", pk, sk, strings.Join(problems, "; "))
				}
			}
		}
		if bad > 10 {
			t.Errorf("... %d items with problems in all", bad)
		}
		if claims != len(owners) {
			t.Errorf("%d claims, want one per component ID (%d)", claims, len(owners))
		}
	})
}

// jsonEqualAV reports whether two attribute values hold the same data.
func jsonEqualAV(a, b types.AttributeValue) bool {
	var x, y any
	if err := attributevalue.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := attributevalue.Unmarshal(b, &y); err != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// ---------------------------------------------------------------------------------------------
// Leftovers and throttling.

// flaky returns an EmulateUnprocessedItems predicate that leaves a sub-request unprocessed the
// first `times` times its key (PK, SK) is seen, for the sub-requests pick selects, and the
// number of sub-requests it left unprocessed.
func flaky(times int, pick func(n int, raw map[string]*miniserver.AttributeValue) bool) (func(int, map[string]*miniserver.AttributeValue) bool, func() int) {
	var mu sync.Mutex
	seen := map[string]int{}
	left := 0
	match := func(n int, raw map[string]*miniserver.AttributeValue) bool {
		pk, sk := miniS(raw["PK"]), miniS(raw["SK"])
		mu.Lock()
		defer mu.Unlock()
		k := pk + "\x00" + sk
		if seen[k] >= times || !pick(n, raw) {
			return false
		}
		seen[k]++
		left++
		return true
	}
	return match, func() int { mu.Lock(); defer mu.Unlock(); return left }
}

// hasEmptyList reports whether an attribute of raw, at any depth, is an empty list.
func hasEmptyList(raw map[string]*miniserver.AttributeValue) bool {
	var walk func(av *miniserver.AttributeValue) bool
	walk = func(av *miniserver.AttributeValue) bool {
		switch {
		case av == nil:
			return false
		case av.L != nil:
			if len(av.L) == 0 {
				return true
			}
			for _, e := range av.L {
				if walk(e) {
					return true
				}
			}
		case av.M != nil:
			for _, e := range av.M {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for _, av := range raw {
		if walk(av) {
			return true
		}
	}
	return false
}

func miniS(av *miniserver.AttributeValue) string {
	if av == nil || av.S == nil {
		return ""
	}
	return *av.S
}

func requireMinidyn(tb testing.TB, env *dynamotest.Env) {
	tb.Helper()
	if env.External {
		tb.Skip("DYNAMODB_TEST_ENDPOINT backend: leftovers are injected with minidyn's EmulateUnprocessedItems, which an external server does not have")
	}
}

func TestLeftoversRetried(t *testing.T) {
	ctx := context.Background()

	t.Run("BulkLoad", func(t *testing.T) {
		env := newEnv(t)
		requireMinidyn(t, env)
		match, left := flaky(2, func(n int, raw map[string]*miniserver.AttributeValue) bool {
			// minidyn writes an empty list of an unprocessed item back as {} (its L field is
			// omitempty), and the SDK then re-sends that attribute as invalid JSON. DynamoDB
			// echoes items faithfully; the store drops empty lists before writing today, but
			// should one reach the table, leave that item alone rather than test minidyn.
			return n%3 == 0 && !hasEmptyList(raw)
		})
		env.Mini.EmulateUnprocessedItems(env.Table, match)
		bundles := sample.Catalogue(sampleNow)
		n, err := env.Store.BulkLoad(ctx, bundles, 4)
		if err != nil {
			t.Fatalf("BulkLoad(sample) with leftovers = %v", err)
		}
		want := itemCount(bundles)
		if n != want {
			t.Errorf("BulkLoad(sample) with leftovers = %d, want %d", n, want)
		}
		if left() == 0 {
			t.Fatalf("EmulateUnprocessedItems left nothing unprocessed: the test tests nothing")
		}
		if calls, min := env.Counter.Ops()["BatchWriteItem"], (want+24)/25; calls <= min {
			t.Errorf("BulkLoad(sample) with %d leftovers sent %d BatchWriteItem, want more than %d", left(), calls, min)
		}
		env.Mini.EmulateUnprocessedItems(env.Table, nil)
		if got := len(scanAll(t, env)); got != want {
			t.Errorf("Scan after BulkLoad(sample) with leftovers = %d items, want %d", got, want)
		}
	})

	t.Run("CapabilitiesByID", func(t *testing.T) {
		env := newEnv(t)
		requireMinidyn(t, env)
		bundles := smallCapabilities(150)
		load(t, env, bundles)
		ids := make([]string, 0, len(bundles)+1)
		for _, b := range bundles {
			ids = append(ids, b.Capability.CapabilityID)
		}
		ids = append(ids, "CAP-NOPE-001")
		match, left := flaky(1, func(n int, _ map[string]*miniserver.AttributeValue) bool { return n%2 == 1 })
		env.Mini.EmulateUnprocessedItems(env.Table, match)
		got, err := env.Store.CapabilitiesByID(ctx, ids)
		if err != nil {
			t.Fatalf("CapabilitiesByID(%d IDs) with leftovers = %v", len(ids), err)
		}
		want := slices.Concat(ids[:len(ids)-1], []string{"<nil>"})
		if g := keys(got, capabilityID); !slices.Equal(g, want) {
			t.Errorf("CapabilitiesByID(%d IDs) with leftovers = %v, want %v", len(ids), g, want)
		}
		if left() == 0 {
			t.Fatalf("EmulateUnprocessedItems left nothing unprocessed: the test tests nothing")
		}
		if calls := env.Counter.Ops()["BatchGetItem"]; calls <= 2 {
			t.Errorf("CapabilitiesByID(%d IDs) with %d leftovers sent %d BatchGetItem, want more than 2", len(ids), left(), calls)
		}
	})

	t.Run("BulkLoad leftovers that never clear", func(t *testing.T) {
		t.Parallel()
		env := newEnv(t)
		requireMinidyn(t, env)
		stuck := func(_ int, raw map[string]*miniserver.AttributeValue) bool {
			return miniS(raw["PK"]) == "CAPABILITY#CAP-FRAUD-DET-001" && miniS(raw["SK"]) == "METADATA"
		}
		env.Mini.EmulateUnprocessedItems(env.Table, stuck)
		n, err := env.Store.BulkLoad(ctx, sample.Catalogue(sampleNow), 4)
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Errorf("BulkLoad(sample) with an item never processed = %d, %v; want an error wrapping ErrUnavailable", n, err)
		}
		if calls, min := env.Counter.Ops()["BatchWriteItem"], (itemCount(sample.Catalogue(sampleNow))+24)/25; calls <= min {
			t.Errorf("BulkLoad(sample) with an item never processed sent %d BatchWriteItem, want retries past %d", calls, min)
		}
	})

	t.Run("CapabilitiesByID leftovers that never clear", func(t *testing.T) {
		t.Parallel()
		env := newEnv(t)
		requireMinidyn(t, env)
		loadSample(t, env)
		env.Mini.EmulateUnprocessedItems(env.Table, func(_ int, raw map[string]*miniserver.AttributeValue) bool {
			return miniS(raw["PK"]) == "CAPABILITY#"+alertID
		})
		ids := []string{"CAP-FRAUD-DET-001", alertID}
		got, err := env.Store.CapabilitiesByID(ctx, ids)
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Errorf("CapabilitiesByID(%v) with a key never processed = %v, %v; want an error wrapping ErrUnavailable", ids, got, err)
		}
		if calls := env.Counter.Ops()["BatchGetItem"]; calls < 2 {
			t.Errorf("CapabilitiesByID(%v) with a key never processed sent %d BatchGetItem, want retries", ids, calls)
		}
	})
}

// throttle makes the counter answer the first n requests of operation op with DynamoDB's
// ProvisionedThroughputExceededException, then pass requests through. It returns how many it
// answered.
func throttle(env *dynamotest.Env, op string, n int) func() int {
	var mu sync.Mutex
	done := 0
	env.Counter.Before = func(o string, w http.ResponseWriter) bool {
		if o != op {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if n >= 0 && done >= n {
			return false
		}
		done++
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"throttled"}`))
		return true
	}
	// Reset takes the counter's lock after Before is set: requests served later see it.
	env.Counter.Reset()
	return func() int { mu.Lock(); defer mu.Unlock(); return done }
}

func TestThrottlingRetried(t *testing.T) {
	ctx := context.Background()

	t.Run("BatchWriteItem", func(t *testing.T) {
		env := newEnv(t)
		throttled := throttle(env, "BatchWriteItem", 2)
		bundles := smallCapabilities(30)
		sctx, stats := dynamo.WithStats(ctx)
		n, err := env.Store.BulkLoad(sctx, bundles, 2)
		if err != nil {
			t.Fatalf("BulkLoad(30 capabilities) throttled twice = %v", err)
		}
		if want := itemCount(bundles); n != want {
			t.Errorf("BulkLoad(30 capabilities) throttled twice = %d, want %d", n, want)
		}
		if got := throttled(); got != 2 {
			t.Errorf("throttled %d BatchWriteItem requests, want 2", got)
		}
		want := (itemCount(bundles)+24)/25 + 2
		wantOps(t, env, "BulkLoad(30 capabilities) throttled twice", map[string]int{"BatchWriteItem": want})
		if got := stats.Snapshot().Operations["BatchWriteItem"]; got != want {
			t.Errorf("WithStats: BulkLoad(30 capabilities) throttled twice counted %d BatchWriteItem, want %d", got, want)
		}
		env.Counter.Before = nil
		if got := len(scanAll(t, env)); got != itemCount(bundles) {
			t.Errorf("Scan after throttled BulkLoad = %d items, want %d", got, itemCount(bundles))
		}
	})

	t.Run("Query", func(t *testing.T) {
		env := newEnv(t)
		loadSample(t, env)
		throttled := throttle(env, "Query", 2)
		p, err := env.Store.ReadPartition(ctx, alertID, dynamo.SegComponents)
		if err != nil {
			t.Fatalf("ReadPartition(%q) throttled twice = %v", alertID, err)
		}
		if len(p.Components) != 4 {
			t.Errorf("ReadPartition(%q) throttled twice = %d components, want 4", alertID, len(p.Components))
		}
		if got := throttled(); got != 2 {
			t.Errorf("throttled %d Query requests, want 2", got)
		}
		wantOps(t, env, fmt.Sprintf("ReadPartition(%q) throttled twice", alertID), map[string]int{"Query": 3})
	})

	t.Run("throttled past the retries", func(t *testing.T) {
		env := newEnv(t)
		loadSample(t, env)
		throttle(env, "Query", -1)
		_, err := env.Store.ReadPartition(ctx, alertID, dynamo.SegComponents)
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Errorf("ReadPartition(%q) always throttled = %v, want an error wrapping ErrUnavailable", alertID, err)
		}
		if got := env.Counter.Ops()["Query"]; got < 2 {
			t.Errorf("ReadPartition(%q) always throttled sent %d Query, want the SDK's retries", alertID, got)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Stats, bootstrap.

func TestStatsMatchCounter(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()

	wctx, wstats := dynamo.WithStats(ctx)
	bundles := sample.Catalogue(sampleNow)
	if _, err := env.Store.BulkLoad(wctx, bundles, 4); err != nil {
		t.Fatalf("BulkLoad(sample) = %v", err)
	}
	w := wstats.Snapshot()
	if w.Requests != env.Counter.Total() || !mapsEqual(w.Operations, env.Counter.Ops()) {
		t.Errorf("WithStats: BulkLoad(sample) counted %d %v, counter saw %d %v", w.Requests, w.Operations, env.Counter.Total(), env.Counter.Ops())
	}
	if w.WriteCapacityUnits < float64(itemCount(bundles)) {
		t.Errorf("WithStats: BulkLoad(sample) write capacity = %v, want at least one unit an item (%d)", w.WriteCapacityUnits, itemCount(bundles))
	}
	if w.ReadCapacityUnits != 0 {
		t.Errorf("WithStats: BulkLoad(sample) read capacity = %v, want 0", w.ReadCapacityUnits)
	}

	env.Counter.Reset()
	rctx, rstats := dynamo.WithStats(ctx)
	from := sampleNow.Add(-time.Hour)
	reads := []struct {
		call string
		err  error
	}{
		{"Capability", second(env.Store.Capability(rctx, alertID))},
		{"Capability(missing)", func() error {
			if _, err := env.Store.Capability(rctx, "CAP-NOPE-001"); !errors.Is(err, dynamo.ErrNotFound) {
				return fmt.Errorf("want ErrNotFound, got %v", err)
			}
			return nil
		}()},
		{"CapabilitiesByID", second(env.Store.CapabilitiesByID(rctx, []string{alertID, "CAP-FRAUD-DET-001"}))},
		{"ReadPartition", second(env.Store.ReadPartition(rctx, alertID, dynamo.SegComponents|dynamo.SegDependencies|dynamo.SegRules))},
		{"Capabilities", second(env.Store.Capabilities(rctx, "", 10, ""))},
		{"Jobs", second(env.Store.Jobs(rctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 2, ""))},
		{"Metrics", second(env.Store.Metrics(rctx, alertID, dynamo.MetricFilter{From: &from}, 100, ""))},
		{"ComponentMetrics", second(env.Store.ComponentMetrics(rctx, dynamo.MetricFilter{ComponentID: "api-server-alert-001"}, 10, ""))},
		{"JobByID", second(env.Store.JobByID(rctx, "JOB-DEPLOY-456"))},
	}
	for _, r := range reads {
		if r.err != nil {
			t.Fatalf("%s = %v", r.call, r.err)
		}
	}
	r := rstats.Snapshot()
	if r.Requests != env.Counter.Total() || !mapsEqual(r.Operations, env.Counter.Ops()) {
		t.Errorf("WithStats: reads counted %d %v, counter saw %d %v", r.Requests, r.Operations, env.Counter.Total(), env.Counter.Ops())
	}
	if r.Requests < len(reads) {
		t.Errorf("WithStats: reads counted %d requests, want at least %d", r.Requests, len(reads))
	}
	if r.ReadCapacityUnits <= 0 || r.WriteCapacityUnits != 0 {
		t.Errorf("WithStats: reads used %v RCU and %v WCU, want RCU > 0 and no WCU", r.ReadCapacityUnits, r.WriteCapacityUnits)
	}
	if got := r.OperationNames(); !slices.IsSorted(got) || len(got) != len(r.Operations) {
		t.Errorf("StatsSnapshot.OperationNames() = %v, want the sorted keys of %v", got, r.Operations)
	}
	if w.Requests == 0 || dynamo.StatsFrom(ctx) != nil || dynamo.StatsFrom(rctx) != rstats {
		t.Errorf("StatsFrom: want nil for a plain context and the Stats of WithStats")
	}
	t.Logf("backend external=%v: BulkLoad %+v; reads %+v", env.External, w, r)
}

func TestCreateTableIdempotentAndPing(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, smallCapabilities(3))
	if err := env.Store.CreateTable(ctx, time.Minute); err != nil {
		t.Fatalf("CreateTable(%s) a second time = %v, want nil", env.Table, err)
	}
	if err := env.Store.Ping(ctx); err != nil {
		t.Errorf("Ping() = %v, want nil", err)
	}
	if got, err := env.Store.CapabilitiesByID(ctx, []string{"CAP-T-000", "CAP-T-002"}); err != nil || got[0] == nil || got[1] == nil {
		t.Errorf("CapabilitiesByID after a second CreateTable = %v, %v; want both capabilities kept", got, err)
	}
	missing := dynamo.New(env.Client, dynamo.Options{Table: "missing-" + env.Table})
	if err := missing.Ping(ctx); err == nil {
		t.Errorf("Ping() on table %s that does not exist = nil, want an error", missing.Table())
	}
	if got := dynamo.New(env.Client, dynamo.Options{}).Table(); got != dynamo.DefaultTable {
		t.Errorf("New(Options{}).Table() = %q, want %q", got, dynamo.DefaultTable)
	}
}
