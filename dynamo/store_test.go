package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// itemCount is how many items BulkLoad writes for bundles: the capability's METADATA, its two
// index items and its search cards, then one per component and its ID's claim, dependency, job,
// metric and rule, and the metrics' rollups: one per component, type and hour, and per
// component, type and day, that holds samples.
func itemCount(bundles []*catalog.Bundle) int {
	n := 0
	for _, b := range bundles {
		n += 3 + dynamo.CardCount(b.Capability) + 2*len(b.Components) + len(b.Dependencies) + len(b.Jobs) + len(b.Metrics) + len(b.Rules)
		n += componentIndexCount(b)
		rollups := map[string]bool{}
		for _, m := range b.Metrics {
			at := m.Timestamp.UTC()
			rollups[m.ComponentID+"/"+string(m.MetricType)+"/H/"+at.Truncate(time.Hour).String()] = true
			rollups[m.ComponentID+"/"+string(m.MetricType)+"/D/"+at.Truncate(24*time.Hour).String()] = true
		}
		n += len(rollups)
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
		for _, it := range out.Items {
			if pk, ok := it["PK"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(pk.Value, "COUNTERS#") {
				continue // the catalogue's counter shards: counters_test checks them
			}
			items = append(items, it)
		}
	}
	return items
}

// wantBulkLoadOps fails unless the counter saw what a BulkLoad sends: writes BatchWriteItem,
// then the counters' recount (a BatchGetItem of the shards before and after a Scan of the
// table, of one page or more) and, when update, the UpdateItem of the correction.
func wantBulkLoadOps(tb testing.TB, env *dynamotest.Env, call string, writes int, update bool) {
	tb.Helper()
	got := env.Counter.Ops()
	if got["Scan"] < 1 {
		tb.Errorf("%s: no Scan: the counters were not recounted (requests %v)", call, got)
	}
	want := map[string]int{"BatchWriteItem": writes, "BatchGetItem": 2, "Scan": got["Scan"]}
	if update {
		want["UpdateItem"] = 1
	}
	wantOps(tb, env, call, want)
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
