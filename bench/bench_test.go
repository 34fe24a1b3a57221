package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// tinyConfig is the harness at the smallest size that still has every shape: a list page, a
// jobs window with more pages, metrics, the large capability. No delay: the assertions are on
// request counts, which do not depend on timing.
func tinyConfig(backend string, now time.Time) config {
	return config{
		shape: shape{
			Capabilities: 3, Components: 4, Dependencies: 4, Jobs: 25,
			MetricComponents: 2, MetricWindow: 2 * time.Hour, MetricInterval: 5 * time.Minute, Rules: 3,
			Large: true, LargeJobs: 30, LargeMetrics: 400,
		},
		n: 2, c: 2, n1: 2, cpuN: 2, loaders: 2, writers: 4,
		backend: backend, idleConns: 64, now: now,
	}
}

func runTiny(t *testing.T, backend string, now time.Time) *report {
	t.Helper()
	rep, err := run(context.Background(), tinyConfig(backend, now))
	if err != nil {
		t.Fatalf("run on %s: %v", backend, err)
	}
	return rep
}

// The server sends the theoretical minimum of DynamoDB requests for every operation, the
// backend's own counter agrees, and the per-field baseline sends more (never fewer). The
// baseline reads the same data: run stops when its summary differs from the server's.
func TestRequestCounts(t *testing.T) {
	rep := runTiny(t, "memdyn", time.Now())
	// The load writes its groups without a recount each and recounts the counters once: one
	// Scan of the (small) table, not one per group (a load in n groups read the table n times,
	// quadratic in the catalogue's size: 14 minutes at 200 capabilities).
	if scans := rep.loadOps["Scan"]; scans != 1 {
		t.Errorf("the load sent %d Scan requests, want 1 (one recount of the counters)", scans)
	}
	byName := map[string]*opResult{}
	for _, r := range rep.results {
		byName[r.Op.Name] = r
		// Every operation ran by its hash (run compares its data with the full query's), and
		// the hash alone is the smaller request.
		if a := r.APQ; a == nil || a.Hashed >= a.Full || a.Register <= a.Full {
			t.Errorf("%s: persisted-query request bytes %+v, want hashed < full < register", r.Op.Name, a)
		}
		if r.Op.Once {
			continue
		}
		o := r.Ours
		if o.Requests != r.Op.MinRequests || o.RequestsVary {
			t.Errorf("%s: %d requests (varies: %v), want the minimum %d", r.Op.Name, o.Requests, o.RequestsVary, r.Op.MinRequests)
		}
		if o.Counted != float64(o.Requests) {
			t.Errorf("%s: the backend counted %.2f requests per operation, extensions.dynamodb said %d", r.Op.Name, o.Counted, o.Requests)
		}
		if r.Base == nil {
			t.Fatalf("%s: no baseline", r.Op.Name)
		}
		if r.Base.Requests < o.Requests || r.Base.RequestsVary {
			t.Errorf("%s: baseline %d requests (varies: %v), ours %d", r.Op.Name, r.Base.Requests, r.Base.RequestsVary, o.Requests)
		}
		if r.Base.Summary != o.Summary {
			t.Errorf("%s: baseline read %q, server %q", r.Op.Name, r.Base.Summary, o.Summary)
		}
	}
	for _, name := range []string{"complete view", "list 50 with components, dependsOn, dependencies", "componentsByType with capability name", "analysis: dependencyGraph, impact, evaluateRules, slaReport"} {
		r := byName[name]
		if r == nil {
			t.Fatalf("no operation %q", name)
		}
		if r.Base.Requests <= r.Ours.Requests {
			t.Errorf("%s: baseline %d requests, ours %d: the per-field baseline should send more", name, r.Base.Requests, r.Ours.Requests)
		}
	}
	// The large partition: the complete view reads what a small one reads; the window reads the
	// window.
	small, large := byName["complete view"], byName["large: complete view"]
	if large.Ours.Requests != small.Ours.Requests || large.Ours.Items != small.Ours.Items {
		t.Errorf("large complete view: %d requests, %d items; small: %d, %d", large.Ours.Requests, large.Ours.Items, small.Ours.Requests, small.Ours.Items)
	}
	w := byName["large: metrics(componentId, metricType, from, to), last hour"]
	if want := 61 + 1; w.Ours.Items != want || w.Ours.Requests != 2 {
		t.Errorf("large metrics window: %d requests, %d items read, want 2 and %d (61 one-minute samples and METADATA)", w.Ours.Requests, w.Ours.Items, want)
	}
	if !strings.Contains(w.Ours.Summary, "metrics=61 ") {
		t.Errorf("large metrics window returned %s, want 61 samples", w.Ours.Summary)
	}
}

// memdyn, the benchmark's backend, answers every operation with the same data as minidyn, the
// project's embedded backend.
func TestMemdynAgreesWithMinidyn(t *testing.T) {
	now := time.Now()
	a, b := runTiny(t, "memdyn", now), runTiny(t, "minidyn", now)
	if len(a.results) != len(b.results) {
		t.Fatalf("%d and %d operations", len(a.results), len(b.results))
	}
	for i := range a.results {
		x, y := a.results[i], b.results[i]
		if x.Ours.Summary != y.Ours.Summary {
			t.Errorf("%s: memdyn %q, minidyn %q", x.Op.Name, x.Ours.Summary, y.Ours.Summary)
		}
		if !x.Op.Once && (x.Ours.Requests != y.Ours.Requests || x.Base.Requests != y.Base.Requests) {
			t.Errorf("%s: requests memdyn %d/%d, minidyn %d/%d", x.Op.Name, x.Ours.Requests, x.Base.Requests, y.Ours.Requests, y.Base.Requests)
		}
	}
}

// requestsOf reads extensions.dynamodb.requests without decoding the response.
func TestRequestsOf(t *testing.T) {
	body := []byte(`{"data":{"x":{"dynamodb":{"requests":9}}},"extensions":{"cost":{},"dynamodb":{"requests":12,"readCapacityUnits":1}}}`)
	if n := requestsOf(body); n != 12 {
		t.Errorf("requestsOf = %d, want 12", n)
	}
	if n := requestsOf([]byte(`{}`)); n != -1 {
		t.Errorf("requestsOf({}) = %d, want -1", n)
	}
}
