package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// searchTestConfig is the search section at a tiny size: 200 capabilities, a few runs, no delay
// (the assertions are on answers and request counts, not on time).
func searchTestConfig() config {
	return config{
		search:  searchConfig{enabled: true, caps: 200, n1: 2, baseN: 1, perField: true},
		loaders: 2, writers: 4, backend: "memdyn", idleConns: 64, backendProcess: false,
	}
}

// The generated catalogue has what the shapes need: every status, priority and health status,
// 0-5 tags, accented names, names that share the prefix of "alert man", owners matched by
// folding, active jobs; and it is the same on every run.
func TestSearchCatalogue(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	a, b := searchCatalogue(2000, now), searchCatalogue(2000, now)
	status, prio, health, tagCounts := map[catalog.CapabilityStatus]int{}, map[catalog.Priority]int{}, map[catalog.HealthStatus]int{}, map[int]int{}
	accents, names := 0, map[string]bool{}
	for i, x := range a {
		x.Recount()
		c := x.Capability
		if c.Name != b[i].Capability.Name || c.Owner != b[i].Capability.Owner {
			t.Fatalf("capability %d differs between two generations", i)
		}
		status[c.Status]++
		prio[c.Priority]++
		health[c.Aggregates.HealthStatus]++
		tagCounts[len(c.Tags)]++
		if catalog.Fold(c.Name) != strings.ToLower(c.Name) {
			accents++
		}
		if names[catalog.Fold(c.Name)] {
			t.Errorf("two names fold to %q", catalog.Fold(c.Name))
		}
		names[catalog.Fold(c.Name)] = true
	}
	if len(status) != len(catalog.CapabilityStatuses) || len(prio) != len(catalog.Priorities) || len(health) != len(catalog.HealthStatuses) {
		t.Errorf("statuses %v, priorities %v, health %v: want every value", status, prio, health)
	}
	if len(tagCounts) != 6 {
		t.Errorf("tag counts %v, want 0 to 5", tagCounts)
	}
	if accents == 0 {
		t.Error("no accented name")
	}
	if n := truthCapabilities(a, capFilter{Search: "alert man"}, capOrder{}, 0, 50).Total; n < 5 {
		t.Errorf("search \"alert man\" matches %d, want several", n)
	}
	if n := truthCapabilities(a, capFilter{Owner: "BLUE LYNX"}, capOrder{}, 0, 50).Total; n == 0 {
		t.Error("owner \"BLUE LYNX\" (stored as \"Blue lynx\") matches nothing")
	}
	if n := truthActiveJobs(a, 50).Total; n < 20 {
		t.Errorf("%d active jobs, want a few dozen", n)
	}
}

// The brute force orders as the contract says: relevance (ID, name prefix, word prefix) for a
// search, no score last for HEALTH_SCORE either way (in name order), DESC reversing the rest,
// ties included.
func TestSearchTruthOrder(t *testing.T) {
	mk := func(id, name string, status catalog.HealthStatus, score float64) *catalog.Bundle {
		c := &catalog.Capability{CapabilityID: id, Name: name, Owner: "x"}
		c.Aggregates.HealthStatus, c.Aggregates.HealthScore = status, score
		return &catalog.Bundle{Capability: c}
	}
	bs := []*catalog.Bundle{
		mk("CAP-3", "Zeta Alert", catalog.HealthUnknown, 0),
		mk("ALERT", "Omega", catalog.HealthHealthy, 95),
		mk("CAP-1", "Alert Management", catalog.HealthDegraded, 80),
		mk("CAP-2", "Álert Zone", catalog.HealthHealthy, 95),
	}
	if got := truthCapabilities(bs, capFilter{Search: "alert"}, capOrder{}, 0, 50).IDs; strings.Join(got, " ") != "ALERT CAP-1 CAP-2 CAP-3" {
		t.Errorf("search order %v", got)
	}
	for _, desc := range []bool{false, true} {
		got := truthCapabilities(bs, capFilter{}, capOrder{Field: "HEALTH_SCORE", Desc: desc}, 0, 50).IDs
		want := "CAP-1 CAP-2 ALERT CAP-3" // ties by name: Álert Zone before Omega
		if desc {
			want = "ALERT CAP-2 CAP-1 CAP-3" // reversed, ties too; no score last
		}
		if strings.Join(got, " ") != want {
			t.Errorf("HEALTH_SCORE desc=%v: %v, want %s", desc, got, want)
		}
	}
}

// The baselines answer every shape as the brute force does (the per-field baseline exactly, the
// Scan with a full page of true matches), on a table the bench loaded: what makes their figures
// comparable with ours.
func TestSearchBaselinesAgreeWithBruteForce(t *testing.T) {
	ctx := context.Background()
	cfg := searchTestConfig()
	h, _, err := newSearchHarness(ctx, cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer h.be.Close()
	for _, s := range searchShapes(h.bundles) {
		// Each shape's own Scan that stops at its page of matches (with its FilterExpression)...
		if s.Scan.Whole {
			continue
		}
		_, matched, err := h.scanPass(ctx, s.Scan)
		if err != nil {
			t.Fatalf("%s: scan: %v", s.Name, err)
		}
		if err := s.Scan.check(matched); err != nil {
			t.Errorf("%s: scan: %v", s.Name, err)
		}
		if s.PerField != nil {
			if _, err := h.perFieldPass(ctx, s); err != nil {
				t.Errorf("%s: per-field: %v", s.Name, err)
			}
		}
	}
	// ... and the one whole-table Scan the section reads for the shapes that need it.
	if _, err := h.wholeScan(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range searchShapes(h.bundles) {
		if err := h.measureBaselines(ctx, s, &searchRow{}); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}

// The section at 200 capabilities: every shape's page equals the brute-force answer (run
// fails otherwise), our server sends no Scan (the backend counts them) and its request counts
// hold in every run; the Scan baseline reads the whole table where the answer needs it.
func TestSearchSection(t *testing.T) {
	rep, err := measureSearch(context.Background(), searchTestConfig(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.failed(); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != len(searchShapes(searchCatalogue(1, time.Now()))) {
		t.Fatalf("%d rows", len(rep.Rows))
	}
	for _, r := range rep.Rows {
		if r.Scans != 0 {
			t.Errorf("%s: %d Scans by our server", r.Shape.Name, r.Scans)
		}
		if r.Ours.Requests < 1 || r.Ours.Vary {
			t.Errorf("%s: %d requests (varies: %v)", r.Shape.Name, r.Ours.Requests, r.Ours.Vary)
		}
		if r.Scan == nil {
			t.Fatalf("%s: no Scan baseline", r.Shape.Name)
		}
		if r.Shape.Scan.Whole && r.Scan.Items < rep.Items-1 {
			t.Errorf("%s: the whole-table Scan read %d items of %d", r.Shape.Name, r.Scan.Items, rep.Items)
		}
	}
	var buf strings.Builder
	rep.write(func(format string, args ...any) { fmt.Fprintf(&buf, format+"\n", args...) })
	if !strings.Contains(buf.String(), strings.TrimSpace(searchHeading)) {
		t.Error("the section has no heading")
	}
}

// A page that differs from the brute force, or a Scan by our server, fails the run (after the
// report is written), naming the shape.
func TestSearchFailures(t *testing.T) {
	shape := &searchShape{Name: "tag"}
	ok := &searchReport{Rows: []*searchRow{{Shape: shape}}}
	if err := ok.failed(); err != nil {
		t.Fatalf("a clean report failed: %v", err)
	}
	bad := &searchReport{Rows: []*searchRow{{Shape: shape, Mismatch: "shape \"tag\": first difference at word 3"}, {Shape: &searchShape{Name: "status"}, Scans: 2}}}
	err := bad.failed()
	if err == nil || !strings.Contains(err.Error(), "DIFFERS FROM THE BRUTE FORCE: shape \"tag\"") || !strings.Contains(err.Error(), "SCAN ISSUED BY OUR SERVER: shape \"status\"") {
		t.Errorf("failed() = %v", err)
	}
	if got := firstDifference("3 nodes [a b c]", "3 nodes [a c b]"); !strings.Contains(got, "word 4") {
		t.Errorf("firstDifference = %q", got)
	}
}
