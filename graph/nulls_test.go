package graph_test

import (
	"fmt"
	"testing"
)

// TestExplicitNullTakesDefault sends an explicit null, as a literal and through variables, for
// the defaulted arguments and input fields that clients met: createRule's status (DRAFT),
// addComponent's status (ACTIVE), capabilities(first:) (50).
func TestExplicitNullTakesDefault(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-NULL-001")

	t.Run("createRule status", func(t *testing.T) {
		for _, tt := range []struct {
			name, query string
			vars        map[string]any
		}{
			{"literal", `mutation { createRule(capabilityId: "CAP-NULL-001", input: {ruleId: "null-lit", name: "n", ruleType: BUSINESS, priority: LOW, order: 1, status: null, conditions: [], actions: []}) { ruleId status } }`, nil},
			{"variable field", `mutation($in: RuleInput!) { createRule(capabilityId: "CAP-NULL-001", input: $in) { ruleId status } }`,
				map[string]any{"in": map[string]any{"ruleId": "null-var", "name": "n", "ruleType": "BUSINESS", "priority": "LOW", "order": 2, "status": nil, "conditions": []any{}, "actions": []any{}}}},
			{"variable in literal", `mutation($s: RuleStatus) { createRule(capabilityId: "CAP-NULL-001", input: {ruleId: "null-in-lit", name: "n", ruleType: BUSINESS, priority: LOW, order: 3, status: $s, conditions: [], actions: []}) { ruleId status } }`,
				map[string]any{"s": nil}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var out struct {
					CreateRule struct{ RuleID, Status string }
				}
				h.ok(t, tt.query, tt.vars, &out)
				if out.CreateRule.Status != "DRAFT" {
					t.Errorf("createRule with status null: status %q, want DRAFT", out.CreateRule.Status)
				}
				var read struct {
					Capability struct{ Rules []struct{ RuleID string } }
				}
				h.ok(t, `{ capability(id: "CAP-NULL-001") { rules(status: DRAFT) { ruleId } } }`, nil, &read)
				found := false
				for _, r := range read.Capability.Rules {
					found = found || r.RuleID == out.CreateRule.RuleID
				}
				if !found {
					t.Errorf("stored rule %s is not among the DRAFT rules %+v", out.CreateRule.RuleID, read.Capability.Rules)
				}
			})
		}
	})

	t.Run("addComponent status", func(t *testing.T) {
		for i, tt := range []struct {
			name, query string
			vars        map[string]any
		}{
			{"literal", `mutation { addComponent(capabilityId: "CAP-NULL-001", input: {componentId: "null-c1", name: "c", componentType: "api-server", order: 1, status: null}) { status } }`, nil},
			{"variable field", `mutation($in: ComponentInput!) { addComponent(capabilityId: "CAP-NULL-001", input: $in) { status } }`,
				map[string]any{"in": map[string]any{"componentId": "null-c2", "name": "c", "componentType": "api-server", "order": 2, "status": nil}}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var out struct{ AddComponent struct{ Status string } }
				h.ok(t, tt.query, tt.vars, &out)
				if out.AddComponent.Status != "ACTIVE" {
					t.Errorf("addComponent %d with status null: status %q, want ACTIVE", i, out.AddComponent.Status)
				}
			})
		}
		agg, _ := h.aggregates(t, "CAP-NULL-001")
		if agg.ActiveComponents != 2 {
			t.Errorf("activeComponents = %d, want 2", agg.ActiveComponents)
		}
	})

	t.Run("capabilities first", func(t *testing.T) {
		for i := range 51 {
			h.createCapability(t, fmt.Sprintf("CAP-NULL-P%02d", i))
		}
		type page struct {
			Capabilities struct {
				Nodes    []struct{ ID string }
				PageInfo struct{ HasNextPage bool }
			}
		}
		var omitted page
		want := h.ok(t, `{ capabilities { nodes { id } pageInfo { hasNextPage } } }`, nil, &omitted).Extensions.DynamoDB.Requests
		t.Logf("capabilities with first left out: %d DynamoDB requests", want)
		for _, tt := range []struct {
			name, query string
			vars        map[string]any
		}{
			{"literal", `{ capabilities(first: null) { nodes { id } pageInfo { hasNextPage } } }`, nil},
			{"variable", `query($n: Int) { capabilities(first: $n) { nodes { id } pageInfo { hasNextPage } } }`, map[string]any{"n": nil}},
			{"variable with its own default", `query($n: Int = 3) { capabilities(first: $n) { nodes { id } pageInfo { hasNextPage } } }`, map[string]any{"n": nil}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var out page
				resp := h.ok(t, tt.query, tt.vars, &out)
				if n := len(out.Capabilities.Nodes); n != 50 || !out.Capabilities.PageInfo.HasNextPage {
					t.Errorf("capabilities(first: null): %d nodes, hasNextPage %v; want 50 and a next page", n, out.Capabilities.PageInfo.HasNextPage)
				}
				if n := resp.Extensions.DynamoDB.Requests; n != want {
					t.Errorf("capabilities(first: null): %d DynamoDB requests, want %d as with first left out", n, want)
				}
				if resp.Extensions.Cost.Requested != 50 {
					t.Errorf("extensions.cost.requested = %d, want 50 (the limiter sees the default)", resp.Extensions.Cost.Requested)
				}
			})
		}
	})
}

// TestNullWithoutDefaultStaysNull holds null semantics where there is no default: status null
// in updateComponent changes nothing, and a non-null argument with a default refuses null.
func TestNullWithoutDefaultStaysNull(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-NULL-002")
	h.ok(t, `mutation { addComponent(capabilityId: "CAP-NULL-002", input: {componentId: "nd-1", name: "c", componentType: "api-server", order: 1, status: DEPRECATED}) { status } }`, nil, nil)
	var out struct{ UpdateComponent struct{ Status, Name string } }
	h.ok(t, `mutation { updateComponent(capabilityId: "CAP-NULL-002", componentId: "nd-1", expectedRevision: 1, input: {name: "renamed", status: null}) { status name } }`, nil, &out)
	if out.UpdateComponent.Status != "DEPRECATED" || out.UpdateComponent.Name != "renamed" {
		t.Errorf("updateComponent with status null: %+v, want status DEPRECATED (unchanged) and name renamed", out.UpdateComponent)
	}
}
