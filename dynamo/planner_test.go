package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// plannerCatalogue bulk-loads 600 capabilities shaped for the planner's budgets: every one
// tagged "pci"; domain "common" but for 6 in "rare-a" and 6 in "rare-b"; ACTIVE but for 10
// DEPRECATED; one in five DEGRADED, 12 UNHEALTHY, the others HEALTHY. It returns them.
func plannerCatalogue(t *testing.T, env *dynamotest.Env) []*catalog.Capability {
	t.Helper()
	var bundles []*catalog.Bundle
	for i := range 600 {
		id := fmt.Sprintf("CAP-PLAN-%04d", i)
		c := &catalog.Capability{CapabilityID: id, Name: fmt.Sprintf("Plan %04d", i), BusinessDomain: "common", Status: catalog.CapabilityActive,
			Priority: catalog.PriorityMedium, Tags: []string{"pci"}}
		switch i % 100 {
		case 0:
			c.BusinessDomain = "rare-a"
		case 50:
			c.BusinessDomain = "rare-b"
		}
		if i%60 == 7 {
			c.Status = catalog.CapabilityDeprecated
		}
		h := catalog.HealthHealthy
		switch {
		case i%50 == 3:
			h = catalog.HealthUnhealthy
		case i%5 == 0:
			h = catalog.HealthDegraded
		}
		bundles = append(bundles, &catalog.Bundle{Capability: c, Components: []*catalog.Component{{CapabilityID: id, ComponentID: id + "-c", Name: "C",
			ComponentType: "worker", Order: 1, Status: catalog.ComponentActive,
			Health: &catalog.ComponentHealth{Status: h, Availability: 99, ResponseTime: 50}}}})
	}
	ctx := context.Background()
	if _, err := env.Store.BulkLoad(ctx, bundles, 4); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(bundles))
	for i, b := range bundles {
		ids[i] = b.Capability.CapabilityID
	}
	caps, err := env.Store.CapabilitiesByID(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	return caps
}

// roundTripDelay is how long each request waits at the counter in the round-trip budgets.
const roundTripDelay = 40 * time.Millisecond

// The planner on the counters, at a catalogue where the fixed order was worse: requests and
// round trips of a first page with the statistics missing (the fixed order of before) and
// with them, each page equal to the brute force.
func TestPlannerBudgets(t *testing.T) {
	env := newEnv(t)
	all := plannerCatalogue(t, env)
	health := map[catalog.HealthStatus]int{}
	for _, c := range all {
		health[c.Aggregates.HealthStatus]++
	}
	t.Logf("health: %v", health)
	ctx := context.Background()
	truth, err := env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	statuses := func(s ...catalog.CapabilityStatus) []catalog.CapabilityStatus { return s }
	healths := func(h ...catalog.HealthStatus) []catalog.HealthStatus { return h }
	tests := []struct {
		name  string
		q     dynamo.CapabilityQuery
		first int
		// cold: requests and round trips without statistics (at least); warm: with them (at
		// most).
		coldReq, coldRT, warmReq, warmRT int
		// sortLimit, when set, lowers maxSorted and maxHealthSorted.
		sortLimit int
	}{
		{"several domains, merged from their ranges (cold too)", dynamo.CapabilityQuery{Domains: []string{"rare-a", "rare-b"}}, 5, 3, 2, 3, 2, 0},
		{"a big domain and a small status: the status drives", dynamo.CapabilityQuery{Domains: []string{"common"}, Statuses: statuses(catalog.CapabilityDeprecated)}, 5, 3, 3, 2, 2, 0},
		{"tag and a fifth of health: the first batch sized by the health share", dynamo.CapabilityQuery{Tags: []string{"pci"}, HealthStatuses: healths(catalog.HealthDegraded)}, 10, 3, 3, 2, 2, 100},
		{"tag and a fifth of health: HEALTH# items drive (120 at most 200)", dynamo.CapabilityQuery{Tags: []string{"pci"}, HealthStatuses: healths(catalog.HealthDegraded)}, 10, 3, 3, 1, 1, 0},
		{"tag and a small health range: HEALTH# items drive", dynamo.CapabilityQuery{Tags: []string{"pci"}, HealthStatuses: healths(catalog.HealthUnhealthy)}, 5, 3, 3, 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dynamo.SetSortLimit(env.Store, tt.sortLimit)
			defer dynamo.SetSortLimit(env.Store, 0)
			want := bruteForce(all, tt.q)
			for _, warm := range []bool{false, true} {
				stats := (*dynamo.Counts)(nil)
				if warm {
					stats = truth
				}
				dynamo.SetStats(env.Store, stats)
				env.Counter.Reset()
				stop := env.RoundTrips(roundTripDelay)
				p, err := env.Store.SearchCapabilities(ctx, tt.q, tt.first, "")
				req, rt := stop()
				if err != nil {
					t.Fatal(err)
				}
				var got, wantIDs []string
				for _, c := range p.Items {
					got = append(got, c.CapabilityID)
				}
				for _, c := range want[:min(tt.first, len(want))] {
					wantIDs = append(wantIDs, c.CapabilityID)
				}
				if !slices.Equal(got, wantIDs) || p.HasNext != (len(want) > tt.first) {
					t.Errorf("warm %v: page %v hasNext %v, want %v %v", warm, got, p.HasNext, wantIDs, len(want) > tt.first)
				}
				t.Logf("warm %v: %d requests (%v), %d round trips", warm, req, env.Counter.Ops(), rt)
				switch {
				case warm && (req > tt.warmReq || rt > tt.warmRT):
					t.Errorf("with statistics: %d requests, %d round trips; want at most %d, %d", req, rt, tt.warmReq, tt.warmRT)
				case !warm && (req < tt.coldReq || rt < tt.coldRT):
					t.Errorf("without statistics: %d requests, %d round trips; the fixed order costs at least %d, %d", req, rt, tt.coldReq, tt.coldRT)
				}
			}
		})
	}
}

// A cold Store plans by the fixed order and sends no extra request in the operation; the
// search that would have used statistics starts one read of the counters in the background
// (one BatchGetItem), and the next search plans with them.
func TestPlannerStatsRefreshInTheBackground(t *testing.T) {
	env := newEnv(t)
	all := plannerCatalogue(t, env)
	ctx := context.Background()
	store := dynamo.New(env.Client, dynamo.Options{Table: env.Table, Now: func() time.Time { return sampleNow }, StatsTTL: time.Hour})
	q := dynamo.CapabilityQuery{Domains: []string{"common"}, Statuses: []catalog.CapabilityStatus{catalog.CapabilityDeprecated}}
	want := bruteForce(all, q)[:5]
	page := func() (map[string]int, []*catalog.Capability) {
		env.Counter.Reset()
		p, err := store.SearchCapabilities(ctx, q, 5, "")
		if err != nil {
			t.Fatal(err)
		}
		return env.Counter.Ops(), p.Items
	}
	cold, items := page()
	if !slices.EqualFunc(items, want, func(a, b *catalog.Capability) bool { return a.CapabilityID == b.CapabilityID }) {
		t.Errorf("cold page differs from the brute force")
	}
	dynamo.WaitStats(store)
	if n := env.Counter.Ops()["BatchGetItem"]; n != 2 {
		t.Errorf("BatchGetItems with the background refresh = %d, want the page's 1 + 1 (the counters)", n)
	}
	if cold["Query"] < 2 {
		t.Errorf("cold page: %v, want the domain's range walked (2 Queries at least)", cold)
	}
	warm, items := page()
	if !slices.EqualFunc(items, want, func(a, b *catalog.Capability) bool { return a.CapabilityID == b.CapabilityID }) {
		t.Errorf("warm page differs from the brute force")
	}
	dynamo.WaitStats(store)
	if warm["Query"] != 1 || warm["BatchGetItem"] != 1 || env.Counter.Total() != 2 {
		t.Errorf("warm page: %v, want the status's range (1 Query) and 1 BatchGetItem, no refresh", env.Counter.Ops())
	}
}
