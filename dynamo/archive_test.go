package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// archiveBundles returns two capabilities whose components share an ID (api-1), with samples of
// several types: CAP-ARC-A has api-1 (performance and resource every 5 minutes for 3 hours),
// api-10 (performance, hourly) and old-1, a removed component (business, hourly); CAP-ARC-B has
// api-1 (performance every 10 minutes for 2 hours).
func archiveBundles() []*catalog.Bundle {
	base := sampleNow.Add(-6 * time.Hour).Truncate(time.Hour)
	series := func(comp string, types []catalog.MetricType, from time.Time, n int, step time.Duration) []*catalog.Metric {
		var ms []*catalog.Metric
		for i := range n {
			for _, t := range types {
				ms = append(ms, &catalog.Metric{
					ComponentID: comp, MetricType: t, Timestamp: catalog.NewTimestamp(from.Add(time.Duration(i) * step)), Interval: "5m",
					Dimensions: map[string]any{"region": "eu-west-1", "sample": float64(i)},
				})
			}
		}
		return ms
	}
	capability := func(id string) *catalog.Capability {
		return &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "testing", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow}
	}
	component := func(id string, order int) *catalog.Component {
		return &catalog.Component{ComponentID: id, Name: id, ComponentType: "api-server", Order: order, Status: catalog.ComponentActive}
	}
	a := &catalog.Bundle{
		Capability: capability("CAP-ARC-A"),
		Components: []*catalog.Component{component("api-1", 1), component("api-10", 2)},
		Metrics: slices.Concat(
			series("api-1", []catalog.MetricType{catalog.MetricPerformance, catalog.MetricResource}, base, 36, 5*time.Minute),
			series("api-10", []catalog.MetricType{catalog.MetricPerformance}, base, 4, time.Hour),
			series("old-1", []catalog.MetricType{catalog.MetricBusiness}, base, 3, time.Hour),
		),
	}
	b := &catalog.Bundle{
		Capability: capability("CAP-ARC-B"),
		Components: []*catalog.Component{component("api-1", 1)},
		Metrics:    series("api-1", []catalog.MetricType{catalog.MetricPerformance}, base, 12, 10*time.Minute),
	}
	return []*catalog.Bundle{a, b}
}

// inTimeOrder returns the IDs of the metrics of capabilityID and componentID accepted by keep,
// ordered by timestamp then metric type.
func inTimeOrder(bundles []*catalog.Bundle, capabilityID, componentID string, keep func(*catalog.Metric) bool) []string {
	var ms []*catalog.Metric
	for _, b := range bundles {
		if b.Capability.CapabilityID != capabilityID {
			continue
		}
		for _, m := range b.Metrics {
			if m.ComponentID == componentID && keep(m) {
				ms = append(ms, m)
			}
		}
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if !ms[i].Timestamp.Equal(ms[j].Timestamp.Time) {
			return ms[i].Timestamp.Before(ms[j].Timestamp.Time)
		}
		return ms[i].MetricType < ms[j].MetricType
	})
	return keys(ms, metricID)
}

// rangeAll reads r with MetricsInRange, limit items a page, continuing from the last
// timestamp as the method's contract says, and returns the IDs in order and the page count.
func rangeAll(tb testing.TB, env interface {
	MetricsInRange(context.Context, dynamo.MetricRange, int) ([]*catalog.Metric, bool, error)
}, r dynamo.MetricRange, limit int) (ids []string, pages int) {
	tb.Helper()
	for {
		ms, more, err := env.MetricsInRange(context.Background(), r, limit)
		if err != nil {
			tb.Fatalf("MetricsInRange(%s/%s from %v, %d) = %v", r.CapabilityID, r.ComponentID, r.From, limit, err)
		}
		pages++
		if len(ms) > limit {
			tb.Fatalf("MetricsInRange(%s/%s, %d) returned %d metrics", r.CapabilityID, r.ComponentID, limit, len(ms))
		}
		ids = append(ids, keys(ms, metricID)...)
		if !more {
			return ids, pages
		}
		if len(ms) == 0 {
			tb.Fatalf("MetricsInRange(%s/%s, %d) = no metrics and more", r.CapabilityID, r.ComponentID, limit)
		}
		r.From = ms[len(ms)-1].Timestamp.Add(time.Microsecond)
		if pages > 1000 {
			tb.Fatalf("MetricsInRange(%s/%s, %d): more than 1000 pages", r.CapabilityID, r.ComponentID, limit)
		}
	}
}

func TestMetricsInRange(t *testing.T) {
	env := newEnv(t)
	bundles := archiveBundles()
	load(t, env, bundles)
	base := sampleNow.Add(-6 * time.Hour).Truncate(time.Hour)
	all := func(*catalog.Metric) bool { return true }

	tests := []struct {
		name  string
		r     dynamo.MetricRange
		limit int
		want  []string
	}{
		{"one capability's api-1, not the other's", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1"}, 1000,
			inTimeOrder(bundles, "CAP-ARC-A", "api-1", all)},
		{"pages of whole timestamps", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1"}, 11,
			inTimeOrder(bundles, "CAP-ARC-A", "api-1", all)},
		{"the other capability's api-1", dynamo.MetricRange{CapabilityID: "CAP-ARC-B", ComponentID: "api-1"}, 10,
			inTimeOrder(bundles, "CAP-ARC-B", "api-1", all)},
		{"a half-open hour", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: base.Add(time.Hour), Before: base.Add(2 * time.Hour)}, 10,
			inTimeOrder(bundles, "CAP-ARC-A", "api-1", func(m *catalog.Metric) bool {
				return !m.Timestamp.Before(base.Add(time.Hour)) && m.Timestamp.Before(base.Add(2*time.Hour))
			})},
		{"one type", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: catalog.MetricResource}, 10,
			inTimeOrder(bundles, "CAP-ARC-A", "api-1", func(m *catalog.Metric) bool { return m.MetricType == catalog.MetricResource })},
		{"one type of a half-open hour (its key range)", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: catalog.MetricPerformance, From: base.Add(time.Hour), Before: base.Add(2 * time.Hour)}, 10,
			inTimeOrder(bundles, "CAP-ARC-A", "api-1", func(m *catalog.Metric) bool {
				return m.MetricType == catalog.MetricPerformance && !m.Timestamp.Before(base.Add(time.Hour)) && m.Timestamp.Before(base.Add(2*time.Hour))
			})},
		{"one type of the other capability's api-1", dynamo.MetricRange{CapabilityID: "CAP-ARC-B", ComponentID: "api-1", MetricType: catalog.MetricPerformance}, 10,
			inTimeOrder(bundles, "CAP-ARC-B", "api-1", func(m *catalog.Metric) bool { return m.MetricType == catalog.MetricPerformance })},
		{"a removed component", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "old-1"}, 10,
			inTimeOrder(bundles, "CAP-ARC-A", "old-1", all)},
		{"nothing", dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-2"}, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pages := rangeAll(t, env.Store, tt.r, tt.limit)
			if !slices.Equal(got, tt.want) {
				t.Errorf("MetricsInRange(%+v, %d) pages = %v, want %v", tt.r, tt.limit, got, tt.want)
			}
			if tt.limit < len(tt.want) && pages < 2 {
				t.Errorf("MetricsInRange(%+v, %d) took %d pages for %d metrics", tt.r, tt.limit, pages, len(tt.want))
			}
		})
	}

	t.Run("rejects", func(t *testing.T) {
		for _, tt := range []struct {
			r     dynamo.MetricRange
			limit int
			field string
		}{
			{dynamo.MetricRange{CapabilityID: "CAP#X", ComponentID: "api-1"}, 10, "capabilityId"},
			{dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: ""}, 10, "componentId"},
			{dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: "latency"}, 10, "metricType"},
			{dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: base, Before: base}, 10, "before"},
			{dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1"}, dynamo.MinMetricRangePage - 1, "limit"},
			{dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "api-1"}, dynamo.MaxMetricRangePage + 1, "limit"},
		} {
			if _, _, err := env.Store.MetricsInRange(context.Background(), tt.r, tt.limit); !isValidation(err, tt.field) {
				t.Errorf("MetricsInRange(%+v, %d) = %v, want a validation error on %q", tt.r, tt.limit, err, tt.field)
			}
		}
	})
}

func TestMetricsInRangeExpired(t *testing.T) {
	env := newEnv(t)
	env.KeepExpired() // DynamoDB deletes expired items days late: the store must hide them itself
	const capID, comp = "CAP-ARC-TTL", "api-1"
	old := catalog.NewTimestamp(sampleNow.Add(-100 * 24 * time.Hour).Truncate(time.Hour))
	fresh := catalog.NewTimestamp(sampleNow.Add(-time.Hour).Truncate(time.Hour))
	metric := func(ts catalog.Timestamp) *catalog.Metric {
		return &catalog.Metric{ComponentID: comp, MetricType: catalog.MetricPerformance, Timestamp: ts, Interval: "1h"}
	}
	load(t, env, []*catalog.Bundle{{
		Capability: &catalog.Capability{CapabilityID: capID, Name: "TTL", BusinessDomain: "testing", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
		Metrics:    []*catalog.Metric{metric(old), metric(fresh)},
	}})
	for _, tt := range []struct {
		include bool
		want    []string
	}{
		{false, []string{metricID(metric(fresh))}},
		{true, []string{metricID(metric(old)), metricID(metric(fresh))}},
	} {
		for _, typ := range []catalog.MetricType{"", catalog.MetricPerformance} {
			r := dynamo.MetricRange{CapabilityID: capID, ComponentID: comp, MetricType: typ, IncludeExpired: tt.include}
			if got, _ := rangeAll(t, env.Store, r, 10); !slices.Equal(got, tt.want) {
				t.Errorf("MetricsInRange(MetricType: %q, IncludeExpired: %v) = %v, want %v", typ, tt.include, got, tt.want)
			}
		}
	}
}

func TestMetricComponentIDs(t *testing.T) {
	env := newEnv(t)
	load(t, env, archiveBundles())
	ctx := context.Background()
	tests := []struct {
		capabilityID string
		want         []string
		queries      int
	}{
		{"CAP-ARC-A", []string{"api-1", "api-10", "old-1"}, 4},
		{"CAP-ARC-B", []string{"api-1"}, 2},
		{"CAP-ARC-NONE", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.capabilityID, func(t *testing.T) {
			env.Counter.Reset()
			got, err := env.Store.MetricComponentIDs(ctx, tt.capabilityID)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("MetricComponentIDs(%q) = %v, %v; want %v", tt.capabilityID, got, err, tt.want)
			}
			wantOps(t, env, fmt.Sprintf("MetricComponentIDs(%q)", tt.capabilityID), map[string]int{"Query": tt.queries})
		})
	}
	if _, err := env.Store.MetricComponentIDs(ctx, "CAP#A"); !isValidation(err, "capabilityId") {
		t.Errorf("MetricComponentIDs(%q) = %v, want a validation error on capabilityId", "CAP#A", err)
	}
}

func TestDeleteMetrics(t *testing.T) {
	ctx := context.Background()
	keysOf := func(bundles []*catalog.Bundle, capabilityID, componentID string) []dynamo.MetricKey {
		var ks []dynamo.MetricKey
		for _, b := range bundles {
			for _, m := range b.Metrics {
				if b.Capability.CapabilityID == capabilityID && m.ComponentID == componentID {
					ks = append(ks, dynamo.MetricKeyOf(m))
				}
			}
		}
		return ks
	}
	remaining := func(tb testing.TB, env interface {
		MetricsInRange(context.Context, dynamo.MetricRange, int) ([]*catalog.Metric, bool, error)
	}, capabilityID, componentID string) int {
		tb.Helper()
		ids, _ := rangeAll(tb, env, dynamo.MetricRange{CapabilityID: capabilityID, ComponentID: componentID}, 1000)
		return len(ids)
	}

	t.Run("25 a call", func(t *testing.T) {
		env := newEnv(t)
		bundles := archiveBundles()
		load(t, env, bundles)
		ks := keysOf(bundles, "CAP-ARC-A", "api-1") // 72 keys
		ks = append(ks, dynamo.MetricKey{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: catalog.MetricQuality, Timestamp: sampleNow})
		n, err := env.Store.DeleteMetrics(ctx, ks)
		if err != nil || n != len(ks) {
			t.Fatalf("DeleteMetrics(%d keys) = %d, %v; want %d, nil", len(ks), n, err, len(ks))
		}
		wantOps(t, env, fmt.Sprintf("DeleteMetrics(%d keys)", len(ks)), map[string]int{"BatchWriteItem": (len(ks) + 24) / 25})
		if got := remaining(t, env.Store, "CAP-ARC-A", "api-1"); got != 0 {
			t.Errorf("MetricsInRange(CAP-ARC-A/api-1) after DeleteMetrics = %d metrics, want 0", got)
		}
		if got, want := remaining(t, env.Store, "CAP-ARC-B", "api-1"), len(keysOf(bundles, "CAP-ARC-B", "api-1")); got != want {
			t.Errorf("MetricsInRange(CAP-ARC-B/api-1) after deleting CAP-ARC-A's = %d metrics, want %d", got, want)
		}
	})

	t.Run("UnprocessedItems retried", func(t *testing.T) {
		env := newEnv(t)
		requireFaults(t, env)
		bundles := archiveBundles()
		load(t, env, bundles)
		match, left := flaky(1, func(n int, _ dynamotest.Item) bool { return n%4 == 0 })
		env.EmulateUnprocessedItems(match)
		ks := keysOf(bundles, "CAP-ARC-A", "api-1")
		n, err := env.Store.DeleteMetrics(ctx, ks)
		env.EmulateUnprocessedItems(nil)
		if err != nil || n != len(ks) {
			t.Fatalf("DeleteMetrics(%d keys) with leftovers = %d, %v; want %d, nil", len(ks), n, err, len(ks))
		}
		if left() == 0 {
			t.Fatalf("EmulateUnprocessedItems left nothing unprocessed: the test tests nothing")
		}
		if calls, min := env.Counter.Ops()["BatchWriteItem"], (len(ks)+24)/25; calls <= min {
			t.Errorf("DeleteMetrics(%d keys) with %d leftovers sent %d BatchWriteItem, want more than %d", len(ks), left(), calls, min)
		}
		if got := remaining(t, env.Store, "CAP-ARC-A", "api-1"); got != 0 {
			t.Errorf("MetricsInRange(CAP-ARC-A/api-1) after DeleteMetrics with leftovers = %d metrics, want 0", got)
		}
	})

	t.Run("bad keys delete nothing", func(t *testing.T) {
		env := newEnv(t)
		good := dynamo.MetricKey{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: catalog.MetricPerformance, Timestamp: sampleNow}
		for _, tt := range []struct {
			name  string
			key   dynamo.MetricKey
			field string
		}{
			{"forged capability", dynamo.MetricKey{CapabilityID: "A#B", ComponentID: "api-1", MetricType: catalog.MetricPerformance, Timestamp: sampleNow}, "keys[1].capabilityId"},
			{"forged component", dynamo.MetricKey{CapabilityID: "CAP-ARC-A", ComponentID: "api#1", MetricType: catalog.MetricPerformance, Timestamp: sampleNow}, "keys[1].componentId"},
			{"unknown type", dynamo.MetricKey{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: "latency", Timestamp: sampleNow}, "keys[1].metricType"},
			{"no time", dynamo.MetricKey{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", MetricType: catalog.MetricPerformance}, "keys[1].timestamp"},
		} {
			n, err := env.Store.DeleteMetrics(ctx, []dynamo.MetricKey{good, tt.key})
			if n != 0 || !isValidation(err, tt.field) {
				t.Errorf("DeleteMetrics(%s) = %d, %v; want 0 and a validation error on %q", tt.name, n, err, tt.field)
			}
		}
		wantOps(t, env, "DeleteMetrics(bad keys)", map[string]int{})
	})
}
