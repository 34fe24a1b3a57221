package dynamo_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// ComponentsMetrics pages through some components' window in (time, component, type) order with
// every page size, with and without a type: full pages while samples remain, hasNext exact, and
// none of CAP-ARC-B's samples although its api-1 shares CAP-ARC-A's index partition (read past
// as the merge needs).
func TestComponentsMetrics(t *testing.T) {
	env := newEnv(t)
	bundles := archiveBundles()
	load(t, env, bundles)
	base := sampleNow.Add(-6 * time.Hour).Truncate(time.Hour)
	from, to := base.Add(10*time.Minute), base.Add(2*time.Hour)
	for _, typ := range []catalog.MetricType{"", catalog.MetricPerformance, catalog.MetricBusiness} {
		var want []*catalog.Metric
		for _, m := range bundles[0].Metrics {
			if (typ == "" || m.MetricType == typ) && !m.Timestamp.Before(from) && !m.Timestamp.After(to) {
				want = append(want, m)
			}
		}
		slices.SortFunc(want, func(a, b *catalog.Metric) int {
			if c := a.Timestamp.Compare(b.Timestamp.Time); c != 0 {
				return c
			}
			if c := strings.Compare(a.ComponentID, b.ComponentID); c != 0 {
				return c
			}
			return strings.Compare(string(a.MetricType), string(b.MetricType))
		})
		wantIDs := keys(want, metricID)
		if len(wantIDs) < 2 {
			t.Fatalf("type %q: %d samples in the window, too few to test", typ, len(wantIDs))
		}
		w := dynamo.ComponentsWindow{CapabilityID: "CAP-ARC-A", ComponentIDs: []string{"old-1", "api-1", "api-10", "api-1"}, MetricType: typ, From: from, To: to, Scope: "test|" + string(typ)}
		for _, first := range []int{1, 2, 3, 7, 50, 1000} {
			var got []string
			after := ""
			for page := 0; ; page++ {
				p, err := env.Store.ComponentsMetrics(context.Background(), w, first, after)
				if err != nil {
					t.Fatalf("type %q, first %d, page %d: %v", typ, first, page, err)
				}
				remaining := len(wantIDs) - len(got)
				if len(p.Items) != min(first, remaining) || p.HasNext != (remaining > first) || len(p.Cursors) != len(p.Items) {
					t.Fatalf("type %q, first %d, page %d: %d items (hasNext %v), want %d (hasNext %v)", typ, first, page, len(p.Items), p.HasNext, min(first, remaining), remaining > first)
				}
				for _, m := range p.Items {
					if m.CapabilityID != "CAP-ARC-A" {
						t.Fatalf("a sample of %s: %+v", m.CapabilityID, m)
					}
				}
				got = append(got, keys(p.Items, metricID)...)
				if !p.HasNext {
					break
				}
				after = p.Cursors[len(p.Cursors)-1]
			}
			if !slices.Equal(got, wantIDs) {
				t.Errorf("type %q, first %d: pages =\n%v\nwant\n%v", typ, first, got, wantIDs)
			}
		}
	}
}

func TestComponentsMetricsRejects(t *testing.T) {
	env := newEnv(t)
	load(t, env, archiveBundles())
	base := sampleNow.Add(-6 * time.Hour).Truncate(time.Hour)
	w := dynamo.ComponentsWindow{CapabilityID: "CAP-ARC-A", ComponentIDs: []string{"api-1"}, From: base, To: base.Add(time.Hour), Scope: "job|1"}
	p, err := env.Store.ComponentsMetrics(context.Background(), w, 2, "")
	if err != nil || !p.HasNext {
		t.Fatalf("ComponentsMetrics = %v, %v", p, err)
	}
	cursor := p.Cursors[1]
	other := w
	other.Scope = "job|2"
	otherCap := w
	otherCap.CapabilityID = "CAP-ARC-B"
	badType, badID, backwards := w, w, w
	badType.MetricType = "latency"
	badID.ComponentIDs = []string{"api#1"}
	backwards.To = base.Add(-time.Second)
	for _, tt := range []struct {
		name  string
		w     dynamo.ComponentsWindow
		first int
		after string
		field string
	}{
		{"a cursor of another scope", other, 2, cursor, "after"},
		{"a cursor of another capability", otherCap, 2, cursor, "after"},
		{"a tampered cursor", w, 2, cursor[:len(cursor)-2] + "xy", "after"},
		{"an unknown metric type", badType, 2, "", "metricType"},
		{"a bad component ID", badID, 2, "", "componentIds[0]"},
		{"to before from", backwards, 2, "", "to"},
		{"first 0", w, 0, "", "first"},
		{"first over the limit", w, dynamo.MaxMetricsPage + 1, "", "first"},
	} {
		if _, err := env.Store.ComponentsMetrics(context.Background(), tt.w, tt.first, tt.after); !isValidation(err, tt.field) {
			t.Errorf("%s: ComponentsMetrics = %v, want a validation error on %q", tt.name, err, tt.field)
		}
	}
	if p, err := env.Store.ComponentsMetrics(context.Background(), w, 2, cursor); err != nil || len(p.Items) == 0 {
		t.Errorf("the cursor on its own query = %v, %v", p, err)
	}
	empty := w
	empty.ComponentIDs = nil
	if p, err := env.Store.ComponentsMetrics(context.Background(), empty, 2, ""); err != nil || len(p.Items) != 0 || p.HasNext {
		t.Errorf("no components = %+v, %v; want an empty page", p, err)
	}
}

// A component whose index partition is crowded by another capability's samples of the same ID
// (a table loaded before claims) is read again until the page is full: the first read holds one
// of its samples among the other's.
func TestComponentsMetricsSharedIndex(t *testing.T) {
	env := newEnv(t)
	base := sampleNow.Add(-6 * time.Hour).Truncate(time.Hour)
	sample := func(i int, step time.Duration) *catalog.Metric {
		return &catalog.Metric{ComponentID: "shared-1", MetricType: catalog.MetricPerformance, Timestamp: catalog.NewTimestamp(base.Add(time.Duration(i) * step)), Interval: "1m"}
	}
	bundle := func(id string, ms []*catalog.Metric) *catalog.Bundle {
		return &catalog.Bundle{
			Capability: &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "testing", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
			Components: []*catalog.Component{{ComponentID: "shared-1", Name: "shared", ComponentType: "api-server", Order: 1, Status: catalog.ComponentActive}},
			Metrics:    ms,
		}
	}
	var sparse, dense []*catalog.Metric
	for i := range 4 {
		sparse = append(sparse, sample(i, time.Hour))
	}
	for i := range 150 {
		dense = append(dense, sample(i, time.Minute))
	}
	load(t, env, []*catalog.Bundle{bundle("CAP-DENSE", dense), bundle("CAP-SPARSE", sparse)})
	w := dynamo.ComponentsWindow{CapabilityID: "CAP-SPARSE", ComponentIDs: []string{"shared-1"}, From: base, To: base.Add(4 * time.Hour), Scope: "shared"}
	p, err := env.Store.ComponentsMetrics(context.Background(), w, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(p.Items, metricID), keys(sparse[:2], metricID); !slices.Equal(got, want) || !p.HasNext {
		t.Errorf("first page = %v (hasNext %v), want %v and more", got, p.HasNext, want)
	}
	p, err = env.Store.ComponentsMetrics(context.Background(), w, 2, p.Cursors[1])
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(p.Items, metricID), keys(sparse[2:], metricID); !slices.Equal(got, want) || p.HasNext {
		t.Errorf("second page = %v (hasNext %v), want %v and no more", got, p.HasNext, want)
	}
}
