package graph_test

import (
	"testing"
)

// The root fields of one mutation operation run one after another, each a write; each payload
// shows the catalogue as its own write left it. Before, they shared the request's loaders: the
// second rename of a component answered the first name under its capability, and a capability
// updated after addComponent counted the new component but did not list it (found by the
// probe, with or without the partition cache).
func TestMutationPayloadsReadAfterTheirOwnWrite(t *testing.T) {
	for _, cached := range []bool{false, true} {
		var h *harness
		if cached {
			h = newRetagHarness(t).harness
		} else {
			h = newHarness(t)
		}
		var got struct {
			A struct {
				Capability struct {
					Components []struct{ ComponentID, Name string }
				}
			}
			B struct {
				Name       string
				Capability struct {
					Components []struct{ ComponentID, Name string }
				}
			}
			C struct{ ComponentID string }
			D struct {
				Aggregates struct{ TotalComponents int }
				Components []struct{ ComponentID string }
			}
		}
		h.ok(t, `mutation {
  a: updateComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "api-server-alert-001", expectedRevision: 1, input: {name: "first"}) {
    capability { components { componentId name } } }
  b: updateComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "api-server-alert-001", expectedRevision: 2, input: {name: "second"}) {
    name capability { components { componentId name } } }
  c: addComponent(capabilityId: "CAP-ALERT-MGT-001", input: {componentId: "payload-new-1", name: "New", componentType: "api-server", order: 99}) { componentId }
  d: updateCapability(id: "CAP-ALERT-MGT-001", expectedRevision: 1, input: {description: "after the add"}) {
    aggregates { totalComponents } components { componentId } }
}`, nil, &got)
		name := func(cs []struct{ ComponentID, Name string }) string {
			for _, c := range cs {
				if c.ComponentID == "api-server-alert-001" {
					return c.Name
				}
			}
			return "(missing)"
		}
		if n := name(got.A.Capability.Components); n != "first" {
			t.Errorf("cache %v: a's capability lists the component as %q, want first", cached, n)
		}
		if n := name(got.B.Capability.Components); got.B.Name != "second" || n != "second" {
			t.Errorf("cache %v: b renamed the component %q, its capability lists it as %q; want second both", cached, got.B.Name, n)
		}
		listed := false
		for _, c := range got.D.Components {
			listed = listed || c.ComponentID == "payload-new-1"
		}
		if !listed || got.D.Aggregates.TotalComponents != len(got.D.Components) {
			t.Errorf("cache %v: after addComponent, d counts %d components and lists %d (new one listed: %v)",
				cached, got.D.Aggregates.TotalComponents, len(got.D.Components), listed)
		}
	}
}
