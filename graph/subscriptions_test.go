package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// writesFeed is the sequence of mutations the subscription tests send through server B.
func writesFeed(capID string) []string {
	return []string{
		fmt.Sprintf(`mutation { createCapability(input: {capabilityId: %q, name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`, capID),
		fmt.Sprintf(`mutation { updateCapability(id: %q, expectedRevision: 1, input: {owner: "feed-team", description: "d"}) { revision } }`, capID),
		fmt.Sprintf(`mutation { addComponent(capabilityId: %q, input: {componentId: "feed-api-1", name: "API", componentType: "api-server", order: 1}) { revision } }`, capID),
	}
}

// allChanges reads every change of the catalogue (capabilityID empty) or of a capability with
// Query.changes through s.
func allChanges(t *testing.T, s *subsServer, capabilityID, after string) []changeNode {
	t.Helper()
	var all []changeNode
	for range 1000 {
		vars := map[string]any{"first": 100}
		if capabilityID != "" {
			vars["cap"] = capabilityID
		}
		if after != "" {
			vars["after"] = after
		}
		resp := s.post(t, "", `query($cap: ID, $first: Int, $after: String) { changes(capabilityId: $cap, first: $first, after: $after) { nodes { `+changeFields+` } pageInfo { hasNextPage endCursor } } }`, vars)
		if len(resp.Errors) > 0 {
			t.Fatalf("changes: %s", resp.Body)
		}
		var out struct {
			Changes struct {
				Nodes    []changeNode
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		if err := json.Unmarshal(resp.Data, &out); err != nil {
			t.Fatal(err)
		}
		all = append(all, out.Changes.Nodes...)
		if !out.Changes.PageInfo.HasNextPage || out.Changes.PageInfo.EndCursor == nil {
			return all
		}
		after = *out.Changes.PageInfo.EndCursor
	}
	t.Fatal("changes: too many pages")
	return nil
}

func ids(cs []changeNode) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func sameChanges(t *testing.T, what string, got, want []changeNode) {
	t.Helper()
	if !slices.Equal(ids(got), ids(want)) {
		var g, w []string
		for _, c := range got {
			g = append(g, c.String())
		}
		for _, c := range want {
			w = append(w, c.String())
		}
		t.Fatalf("%s: got\n%s\nwant\n%s", what, strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	for i := range got {
		if got[i].String() != want[i].String() || got[i].At != want[i].At {
			t.Errorf("%s: change %d = %s at %s, Query.changes says %s at %s", what, i, got[i], got[i].At, want[i], want[i].At)
		}
	}
}

// TestSubscriptionAcrossInstances: a subscriber on server A receives, exactly once and in
// order, what mutations through server B wrote, as Query.changes lists it; for a capability and
// for the whole catalogue.
func TestSubscriptionAcrossInstances(t *testing.T) {
	h := newSubsHarness(t, subsConfig{run: true})
	const capID = "CAP-SUBS-001"
	c := connect(t, h.a, "")
	c.subscribe("cap", `subscription($cap: ID) { changes(capabilityId: $cap) { `+subChangeFields+` } }`, map[string]any{"cap": capID})
	c.subscribe("all", `subscription { changes { `+subChangeFields+` } }`, nil)
	before := allChanges(t, h.b, "", "")
	writes := writesFeed(capID)
	for _, w := range writes {
		if resp := h.b.post(t, "", w, nil); len(resp.Errors) > 0 {
			t.Fatalf("%s: %s", w, resp.Body)
		}
	}
	want := allChanges(t, h.b, capID, "")
	if len(want) != len(writes) {
		t.Fatalf("Query.changes lists %d changes, want %d", len(want), len(writes))
	}
	var gotCap, gotAll []changeNode
	for len(gotCap) < len(want) || len(gotAll) < len(want) {
		m := c.next()
		got := c.decode(m)
		switch m.ID {
		case "cap":
			gotCap = append(gotCap, got)
		case "all":
			gotAll = append(gotAll, got)
		}
	}
	sameChanges(t, "capability subscription", gotCap, want)
	sameChanges(t, "catalogue subscription", gotAll, want)
	allAfter := allChanges(t, h.b, "", "")
	sameChanges(t, "catalogue subscription against Query.changes", gotAll, allAfter[len(before):])
}
