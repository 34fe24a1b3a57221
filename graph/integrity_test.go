package graph_test

import (
	"context"
	"testing"
)

// checkCatalogue fails tb unless the whole catalogue is consistent: every GSI1 listing equals a
// recount from a full scan of the table, and every capability's aggregates and index items
// equal a recount of its partition.
func checkCatalogue(tb testing.TB, h *harness) {
	tb.Helper()
	ctx := context.Background()
	findings, err := h.env.Store.CheckIndexes(ctx)
	if err != nil {
		tb.Fatalf("CheckIndexes: %v", err)
	}
	for _, f := range findings {
		tb.Errorf("index: %s", f)
	}
	var out struct {
		Capabilities struct{ Nodes []struct{ ID string } }
	}
	h.ok(tb, `{ capabilities(first: 100) { nodes { id } } }`, nil, &out)
	for _, c := range out.Capabilities.Nodes {
		if err := h.env.Store.CheckPartition(ctx, c.ID); err != nil {
			tb.Errorf("partition %s: %v", c.ID, err)
		}
	}
}

// listings counts what the catalogue's listings return.
type listings struct {
	capabilities, apiServers, customer int
	job                                bool
}

func countListings(tb testing.TB, h *harness) listings {
	tb.Helper()
	var out struct {
		Capabilities     struct{ Nodes []struct{ ID string } }
		ComponentsByType struct {
			Nodes []struct{ ComponentID string }
		}
		CapabilitiesByDomain struct{ Nodes []struct{ ID string } }
		Job                  *struct{ JobID string }
	}
	h.ok(tb, `{
		capabilities(first: 100) { nodes { id } }
		componentsByType(type: "api-server", first: 100) { nodes { componentId } }
		capabilitiesByDomain(domain: "customer", first: 100) { nodes { id } }
		job(id: "JOB-DEPLOY-456") { jobId }
	}`, nil, &out)
	return listings{len(out.Capabilities.Nodes), len(out.ComponentsByType.Nodes), len(out.CapabilitiesByDomain.Nodes), out.Job != nil}
}

// Deleting one capability removes it, and only it, from every listing: on minidyn a METADATA
// put without its GSI1 keys once left a stale index entry that hid every later entry of GSI1
// (capabilities, other domains' capabilities, other capabilities' components and jobs).
func TestDeleteCapabilityKeepsEveryListing(t *testing.T) {
	h := newHarness(t)
	checkCatalogue(t, h)
	before := countListings(t, h)
	var comps struct {
		Capability struct {
			Revision   int
			Components []struct{ ComponentType string }
		}
	}
	h.ok(t, `{ capability(id: "CAP-ID-VERIFY-001") { revision components { componentType } } }`, nil, &comps)
	apiServers := 0
	for _, c := range comps.Capability.Components {
		if c.ComponentType == "api-server" {
			apiServers++
		}
	}
	h.ok(t, `mutation($rev: Int!) { deleteCapability(id: "CAP-ID-VERIFY-001", expectedRevision: $rev) }`, map[string]any{"rev": comps.Capability.Revision}, nil)
	after := countListings(t, h)
	want := listings{before.capabilities - 1, before.apiServers - apiServers, before.customer - 1, true}
	if after != want || !before.job {
		t.Errorf("listings after the delete = %+v, want %+v (before %+v)", after, want, before)
	}
	checkCatalogue(t, h)
}
