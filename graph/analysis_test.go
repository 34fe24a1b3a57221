package graph_test

import (
	"testing"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/sample"
)

func TestEvaluateRulesSeedExamples(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name     string
		input    map[string]any
		score    int
		severity string
		matched  bool
	}{
		{"production incident", map[string]any{"source": "production", "error_count": 150, "customer_impact": "high"}, 10, "critical", true},
		{"dev noise", map[string]any{"source": "dev", "error_count": 5}, 0, "low", false},
		{"staging burst", map[string]any{"source": "staging", "error_count": 100}, 5, "medium", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out struct {
				Capability struct {
					EvaluateRules []struct {
						Rule       struct{ RuleID string }
						Matched    bool
						Score      int
						Severity   *string
						Conditions []struct {
							Field string
							Held  bool
						}
						Actions []map[string]any
					}
				}
			}
			h.ok(t, `query($in: JSON!) { capability(id: "CAP-ALERT-MGT-001") { evaluateRules(input: $in, ruleType: BUSINESS) { rule { ruleId } matched score severity conditions { field held } actions } } }`, map[string]any{"in": tt.input}, &out)
			var found bool
			for _, ev := range out.Capability.EvaluateRules {
				if ev.Rule.RuleID != "rule-alert-severity-mapping" {
					continue
				}
				found = true
				if ev.Score != tt.score || ev.Severity == nil || *ev.Severity != tt.severity || ev.Matched != tt.matched {
					t.Errorf("evaluateRules(%v) = score %d severity %v matched %v, want %d %s %v", tt.input, ev.Score, ev.Severity, ev.Matched, tt.score, tt.severity, tt.matched)
				}
				if len(ev.Conditions) != 3 || len(ev.Actions) != 2 {
					t.Errorf("conditions %d, actions %d, want 3 and 2", len(ev.Conditions), len(ev.Actions))
				}
			}
			if !found {
				t.Fatalf("seed rule not evaluated: %+v", out.Capability.EvaluateRules)
			}
		})
	}
	resp := h.do(t, `{ capability(id: "CAP-ALERT-MGT-001") { evaluateRules(input: [1, 2]) { score } } }`, nil)
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("evaluateRules(input: [1,2]) code = %q, want BAD_USER_INPUT: %s", resp.code(0), resp.Body)
	}
}

func TestImpactAndGraph(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Capability struct {
			Impact struct {
				Root     struct{ ComponentID string }
				Affected []struct {
					Component struct{ ComponentID string }
					Distance  int
					Path      []struct{ ComponentID string }
					Outcome   string
				}
			}
			DependencyGraph struct {
				Nodes            []struct{ ComponentID string }
				Edges            []struct{ ID string }
				TopologicalOrder []struct{ ComponentID string }
				Cycles           [][]struct{ ComponentID string }
				CriticalPath     []struct{ ComponentID string }
			}
			SlaReport struct {
				CompositeAvailability *float64
				Target                *float64
				Components            []struct{ Met *bool }
			}
		}
	}
	resp := h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { name
		impact(componentId: "database-alert-001") { root { componentId } affected { component { componentId } distance path { componentId } outcome } }
		dependencyGraph { nodes { componentId } edges { id } topologicalOrder { componentId } cycles { componentId } criticalPath { componentId } }
		evaluateRules(input: {source: "production"}) { score }
		slaReport { compositeAvailability target components { met } } } }`, nil, &out)
	if n := h.env.Counter.Total(); n > 3 {
		t.Errorf("analysis query cost %d DynamoDB requests, want at most 3", n)
	}
	if resp.Extensions.DynamoDB.Requests != h.env.Counter.Total() {
		t.Errorf("extensions.dynamodb.requests = %d, counted %d", resp.Extensions.DynamoDB.Requests, h.env.Counter.Total())
	}
	c := out.Capability
	if c.Impact.Root.ComponentID != "database-alert-001" {
		t.Errorf("impact root = %q", c.Impact.Root.ComponentID)
	}
	var api bool
	for _, a := range c.Impact.Affected {
		if a.Component.ComponentID == "api-server-alert-001" {
			api = a.Distance == 1 && len(a.Path) == 2 && a.Path[0].ComponentID == "database-alert-001"
		}
	}
	if !api {
		t.Errorf("impact of database-alert-001 = %+v, want api-server-alert-001 at distance 1", c.Impact.Affected)
	}
	g := c.DependencyGraph
	if len(g.Cycles) != 0 || len(g.TopologicalOrder) != len(g.Nodes) || len(g.CriticalPath) == 0 {
		t.Errorf("acyclic sample graph = %+v", g)
	}
	if c.SlaReport.Target == nil || *c.SlaReport.Target != 99.99 || c.SlaReport.CompositeAvailability == nil {
		t.Errorf("slaReport = %+v", c.SlaReport)
	}

	// A cycle between two components shows in cycles and nulls topologicalOrder.
	alert := sample.Catalogue(testNow)[0]
	alert.Dependencies = append(alert.Dependencies, &catalog.Dependency{
		SourceComponentID: "database-alert-001", TargetComponentID: "api-server-alert-001",
		DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityLow,
	})
	if _, err := h.env.Store.BulkLoad(t.Context(), []*catalog.Bundle{alert}, 2); err != nil {
		t.Fatal(err)
	}
	var cyc struct {
		Capability struct {
			DependencyGraph struct {
				TopologicalOrder []struct{ ComponentID string }
				Cycles           [][]struct{ ComponentID string }
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { dependencyGraph { topologicalOrder { componentId } cycles { componentId } } } }`, nil, &cyc)
	if cyc.Capability.DependencyGraph.TopologicalOrder != nil {
		t.Errorf("topologicalOrder = %v, want null with a cycle", cyc.Capability.DependencyGraph.TopologicalOrder)
	}
	if len(cyc.Capability.DependencyGraph.Cycles) != 1 || len(cyc.Capability.DependencyGraph.Cycles[0]) != 2 {
		t.Errorf("cycles = %+v, want one of two components", cyc.Capability.DependencyGraph.Cycles)
	}
	bad := h.do(t, `{ capability(id: "CAP-ALERT-MGT-001") { impact(componentId: "database-alert-001", maxDepth: 51) { root { name } } } }`, nil)
	if bad.code(0) != "BAD_USER_INPUT" {
		t.Errorf("maxDepth 51 code = %q: %s", bad.code(0), bad.Body)
	}
	bad = h.do(t, `{ capability(id: "CAP-ALERT-MGT-001") { impact(componentId: "nope-001") { root { name } } } }`, nil)
	if bad.code(0) != "BAD_USER_INPUT" {
		t.Errorf("unknown component code = %q: %s", bad.code(0), bad.Body)
	}
}
