package graph_test

import (
	"testing"
	"time"
)

// A clientRequestToken names one request across the whole catalogue: used on capability A, it is
// BAD_USER_INPUT on capability B, whatever the mutation, and nothing is written on B; the same
// request on A still returns its first result.
func TestTokenReusedOnAnotherCapability(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-TA-001")
	h.createCapability(t, "CAP-TB-001")
	const tok = "tok-shared-1"
	type added struct {
		AddComponent struct {
			ComponentID     string
			Revision, Order int
			Capability      struct{ Aggregates struct{ TotalComponents int } }
		}
	}
	onA := map[string]any{"cap": "CAP-TA-001", "in": component("ta-api-1", 1, "HEALTHY"), "tok": tok}
	var first added
	h.ok(t, addComp, onA, &first)

	metric := map[string]any{"capabilityId": "CAP-ALERT-MGT-001", "componentId": "api-server-alert-001", "metricType": "PERFORMANCE",
		"timestamp": testNow.Add(-time.Minute).Format(time.RFC3339), "interval": "1m", "values": map[string]any{"availability": map[string]any{"value": 12.5}}}
	reuses := []struct {
		name, query string
		vars        map[string]any
	}{
		{"same input on another capability", addComp, map[string]any{"cap": "CAP-TB-001", "in": component("ta-api-1", 1, "HEALTHY"), "tok": tok}},
		{"other input on another capability", addComp, map[string]any{"cap": "CAP-TB-001", "in": component("tb-api-1", 1, ""), "tok": tok}},
		{"updateCapability", `mutation($tok: String) { updateCapability(id: "CAP-TB-001", expectedRevision: 1, input: {owner: "someone"}, clientRequestToken: $tok) { revision } }`, map[string]any{"tok": tok}},
		{"createRule", `mutation($tok: String) { createRule(capabilityId: "CAP-TB-001", input: {ruleId: "tb-rule-1", name: "r", ruleType: OPERATIONAL, priority: LOW, order: 1, conditions: [], actions: []}, clientRequestToken: $tok) { revision } }`, map[string]any{"tok": tok}},
		{"recordMetrics", `mutation($in: [MetricInput!]!, $tok: String) { recordMetrics(inputs: $in, clientRequestToken: $tok) { recorded } }`, map[string]any{"in": []any{metric}, "tok": tok}},
		{"createCapability", createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-TC-001", "name": "C", "businessDomain": "testing", "priority": "LOW"}, "tok": tok}},
		{"deleteCapability", `mutation($tok: String) { deleteCapability(id: "CAP-TB-001", expectedRevision: 1, clientRequestToken: $tok) }`, map[string]any{"tok": tok}},
	}
	for _, tt := range reuses {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, tt.vars)
			if resp.code(0) != "BAD_USER_INPUT" {
				t.Errorf("code = %q, want BAD_USER_INPUT: %.300s", resp.code(0), resp.Body)
			}
			if w := h.writes(); w != 0 {
				t.Errorf("reused token made %d writes", w)
			}
		})
	}

	var b struct {
		B *struct {
			Revision   int
			Owner      string
			Components []struct{ ComponentID string }
			Rules      []struct{ RuleID string }
		}
		C *struct{ ID string }
	}
	h.ok(t, `{ b: capability(id: "CAP-TB-001") { revision owner components { componentId } rules { ruleId } } c: capability(id: "CAP-TC-001") { id } }`, nil, &b)
	if b.B == nil || b.B.Revision != 1 || b.B.Owner == "someone" || len(b.B.Components) != 0 || len(b.B.Rules) != 0 || b.C != nil {
		t.Errorf("after the reuses: B = %+v, C = %+v; want B unchanged at revision 1 and no C", b.B, b.C)
	}
	var m struct {
		ComponentMetrics struct {
			Nodes []struct {
				Values struct{ Availability struct{ Value float64 } }
			}
		}
	}
	h.ok(t, `{ componentMetrics(componentId: "api-server-alert-001", first: 500) { nodes { values { availability { value } } } } }`, nil, &m)
	for _, n := range m.ComponentMetrics.Nodes {
		if n.Values.Availability.Value == 12.5 {
			t.Errorf("the refused recordMetrics wrote its sample")
		}
	}

	var again added
	h.ok(t, addComp, onA, &again)
	if again != first {
		t.Errorf("retry on A returned %+v, first %+v", again, first)
	}
	if w := h.writes(); w != 0 {
		t.Errorf("retry on A made %d writes", w)
	}
	h.check(t, "CAP-TA-001")
	h.check(t, "CAP-TB-001")
}
