package graph_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/capcat/catalogue/graph"
)

// me answers who is calling and which mutations the role may call, from the credentials alone:
// no DynamoDB request. A request without a key has the anonymous role.
func TestMe(t *testing.T) {
	h := rolesHarness(t)
	const q = `{ me { name role allowedMutations } }`
	tests := []struct {
		key, name, role string
		// mutations that must be allowed and refused
		allowed, refused []string
	}{
		{"", "anonymous", "VIEWER", nil, []string{"executeRules", "recordMetrics", "createRule"}},
		{"v-key", "dashboards", "VIEWER", nil, []string{"executeRules", "updateJob", "deleteCapability"}},
		{"d-key", "pipeline", "DEVOPS", []string{"executeRules", "recordMetrics", "startJob", "updateJob"}, []string{"createRule", "deleteCapability", "archiveMetrics"}},
		{"a-key", "ops lead", "ADMIN", []string{"executeRules", "createRule", "deleteCapability", "archiveMetrics"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.doAs(t, tt.key, q, nil)
			if len(resp.Errors) > 0 {
				t.Fatalf("errors: %v", resp.Errors)
			}
			var data struct {
				Me struct {
					Name             string
					Role             string
					AllowedMutations []string
				}
			}
			if err := json.Unmarshal(resp.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data.Me.Name != tt.name || data.Me.Role != tt.role {
				t.Errorf("me = %s %s, want %s %s", data.Me.Name, data.Me.Role, tt.name, tt.role)
			}
			for _, m := range tt.allowed {
				if !slices.Contains(data.Me.AllowedMutations, m) {
					t.Errorf("%s may not call %s: %v", tt.role, m, data.Me.AllowedMutations)
				}
			}
			for _, m := range tt.refused {
				if slices.Contains(data.Me.AllowedMutations, m) {
					t.Errorf("%s may call %s: %v", tt.role, m, data.Me.AllowedMutations)
				}
			}
			if tt.role == "VIEWER" && len(data.Me.AllowedMutations) != 0 {
				t.Errorf("a viewer may call %v", data.Me.AllowedMutations)
			}
			if n := resp.Extensions.DynamoDB.Requests; n != 0 {
				t.Errorf("me made %d DynamoDB requests, want 0", n)
			}
			// What me allows is what the server does: the viewer's executeRules is FORBIDDEN,
			// the devops' is not.
			x := h.doAs(t, tt.key, `mutation { executeRules(capabilityId: "NO-SUCH-CAP", input: {}) { succeeded } }`, nil)
			forbidden := x.code(0) == "FORBIDDEN"
			if forbidden == slices.Contains(data.Me.AllowedMutations, "executeRules") {
				t.Errorf("me says executeRules allowed = %v, the server answered %v", !forbidden, x.Errors)
			}
		})
	}
}

// A notification's inputSummary holds what a devops caller passed to executeRules: viewers and
// anonymous callers read null there (it was readable by any caller), devops and admins the
// summary; the rest of the notification stays readable by all.
func TestNotificationInputSummaryByRole(t *testing.T) {
	h := rolesHarness(t)
	h.env.RequireTransactions(t)
	in := map[string]any{"source": "production", "error_count": 150, "password": "hunter2"}
	if resp := h.doAs(t, "d-key", executeRules, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": in, "type": "BUSINESS"}); len(resp.Errors) > 0 {
		t.Fatalf("executeRules: %v", resp.Errors)
	}
	const q = `{ capability(id: "CAP-ALERT-MGT-001") { notifications(first: 20) { nodes { deliveryId channel inputSummary } } } }`
	for _, tt := range []struct {
		key  string
		sees bool
	}{{"", false}, {"v-key", false}, {"d-key", true}, {"a-key", true}} {
		resp := h.doAs(t, tt.key, q, nil)
		if len(resp.Errors) > 0 {
			t.Fatalf("%q: %v", tt.key, resp.Errors)
		}
		var data struct {
			Capability struct {
				Notifications struct {
					Nodes []struct {
						DeliveryID   string
						Channel      string
						InputSummary map[string]any
					}
				}
			}
		}
		if err := json.Unmarshal(resp.Data, &data); err != nil {
			t.Fatal(err)
		}
		nodes := data.Capability.Notifications.Nodes
		if len(nodes) == 0 {
			t.Fatalf("%q: no notifications", tt.key)
		}
		for _, n := range nodes {
			if n.DeliveryID == "" || n.Channel == "" {
				t.Errorf("%q: notification without its ID or channel: %+v", tt.key, n)
			}
			if got := n.InputSummary["password"] == "hunter2"; got != tt.sees {
				t.Errorf("%q: inputSummary %v, want it shown: %v", tt.key, n.InputSummary, tt.sees)
			}
		}
	}
}

// rolesHarness serves the sample with a key of each role (v-key viewer "dashboards", d-key
// devops "pipeline", a-key admin "ops lead") and viewer as the anonymous role.
func rolesHarness(t *testing.T) *harness {
	return newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t,
			"viewer "+graph.HashKey("v-key")+" dashboards",
			"devops "+graph.HashKey("d-key")+" pipeline",
			"admin "+graph.HashKey("a-key")+" ops lead"), Anonymous: graph.RoleViewer}
	})
}
