package graph_test

import (
	"fmt"
	"slices"
	"testing"
)

// TestImpactFollowsCriticality reads the sample alert-management capability: its dependencies
// come most critical first, and impact tells a low optional edge (AT_RISK) from critical and
// high hard ones (FAILED). Before criticality counted, the dependencies came in key order and
// the MCP server's failure degraded the UI.
func TestImpactFollowsCriticality(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Capability struct {
			Dependencies []struct {
				SourceComponentID, TargetComponentID, Criticality string
			}
			Mcp, DB struct {
				Affected []struct {
					Component struct{ ComponentID string }
					Outcome   string
				}
			}
		}
	}
	resp := h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") {
		dependencies { sourceComponentId targetComponentId criticality }
		mcp: impact(componentId: "mcp-server-alert-001") { affected { component { componentId } outcome } }
		db: impact(componentId: "database-alert-001") { affected { component { componentId } outcome } } } }`, nil, &out)
	t.Logf("dependencies + two impacts: %d DynamoDB requests", h.env.Counter.Total())
	if n := h.env.Counter.Total(); n > 2 {
		t.Errorf("dependencies + two impacts cost %d DynamoDB requests, want at most 2", n)
	}
	if resp.Extensions.DynamoDB.Requests != h.env.Counter.Total() {
		t.Errorf("extensions.dynamodb.requests = %d, counted %d", resp.Extensions.DynamoDB.Requests, h.env.Counter.Total())
	}
	var deps []string
	for _, d := range out.Capability.Dependencies {
		deps = append(deps, fmt.Sprintf("%s>%s:%s", d.SourceComponentID, d.TargetComponentID, d.Criticality))
	}
	wantDeps := []string{
		"api-server-alert-001>database-alert-001:CRITICAL",
		"ui-dashboard-alert-001>api-server-alert-001:CRITICAL",
		"mcp-server-alert-001>api-server-alert-001:HIGH",
		"mcp-server-alert-001>database-alert-001:MEDIUM",
		"ui-dashboard-alert-001>mcp-server-alert-001:LOW",
	}
	if !slices.Equal(deps, wantDeps) {
		t.Errorf("dependencies = %v, want %v", deps, wantDeps)
	}
	outcomes := func(affected []struct {
		Component struct{ ComponentID string }
		Outcome   string
	}) []string {
		s := []string{}
		for _, a := range affected {
			s = append(s, a.Component.ComponentID+":"+a.Outcome)
		}
		return s
	}
	if got, want := outcomes(out.Capability.Mcp.Affected), []string{"ui-dashboard-alert-001:AT_RISK"}; !slices.Equal(got, want) {
		t.Errorf("impact(mcp-server-alert-001) = %v, want %v (optional, low)", got, want)
	}
	// The MCP server reads the database over a medium edge with a cache (AT_RISK alone), but also
	// needs the API over a high hard edge, and the API the database: the worst path wins.
	wantDB := []string{"api-server-alert-001:FAILED", "mcp-server-alert-001:FAILED", "ui-dashboard-alert-001:FAILED"}
	if got := outcomes(out.Capability.DB.Affected); !slices.Equal(got, wantDB) {
		t.Errorf("impact(database-alert-001) = %v, want %v", got, wantDB)
	}

	var one struct {
		Capability struct {
			Dependencies []struct{ Criticality string }
		}
	}
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { dependencies(criticality: CRITICAL) { criticality } } }`, nil, &one)
	if len(one.Capability.Dependencies) != 2 {
		t.Errorf("dependencies(criticality: CRITICAL) = %+v, want 2", one.Capability.Dependencies)
	}
}
