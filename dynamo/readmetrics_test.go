package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/sample"
)

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
	env.KeepExpired() // DynamoDB deletes expired items days late: the store must hide them itself
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

	// The expired sample is in the table (DynamoDB deletes lazily; KeepExpired has the backend do so).
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
