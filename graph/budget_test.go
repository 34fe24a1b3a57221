package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/capcat/catalogue/catalog"
)

// The request budgets of DESIGN.md, counted by an http.Handler around minidyn (outside the code
// under test) and checked against extensions.dynamodb. When a change adds a request to one of
// these shapes, this test fails: it is the guard against N+1.
func TestRequestBudgets(t *testing.T) {
	h := newHarness(t)
	var list struct {
		Capabilities struct{ Nodes []struct{ ID string } }
	}
	h.ok(t, `{ capabilities(first: 100) { nodes { id } } }`, nil, &list)
	n := len(list.Capabilities.Nodes)
	if n < 6 {
		t.Fatalf("sample catalogue has %d capabilities, want at least 6", n)
	}
	tests := []struct {
		name  string
		query string
		want  int
	}{
		{"capability scalars", `{ capability(id: "CAP-ALERT-MGT-001") { id name status priority aggregates { healthScore } } }`, 1},
		{"capability id only", `{ capability(id: "CAP-ALERT-MGT-001") { id } }`, 1},
		{"complete view", `{ capability(id: "CAP-ALERT-MGT-001") { name components { name } dependencies { source { name } target { name } } rules { name } } }`, 3},
		{"components and dependencies share one range", `{ capability(id: "CAP-ALERT-MGT-001") { name components { name dependsOn { name } dependents { name } } dependencies { criticality } } }`, 2},
		{"rules only", `{ capability(id: "CAP-ALERT-MGT-001") { name rules { name conditions { field } } } }`, 2},
		{"list with nested components", fmt.Sprintf(`{ capabilities(first: %d) { nodes { name components { name dependsOn { name } } } } }`, n), 1 + n},
		{"list through edges", `{ capabilities(first: 3) { edges { cursor node { name components { name } } } } }`, 1 + 3},
		{"list scalars only", `{ capabilities(first: 50) { nodes { name aggregates { totalComponents } } } }`, 1},
		{"components by type with capability", `{ componentsByType(type: "api-server") { nodes { name capability { name } } } }`, 2},
		{"components by type, capability id only", `{ componentsByType(type: "api-server") { nodes { name capability { id } } } }`, 1},
		{"same capability twice", `{ a: capability(id: "CAP-ALERT-MGT-001") { name components { name } } b: capability(id: "CAP-ALERT-MGT-001") { owner components { order } } }`, 2},
		{"domain pattern", `{ capabilitiesByDomain(domain: "operations") { nodes { name aggregates { healthScore } } } }`, 1},
		{"health pattern", `{ capabilitiesByHealth(status: HEALTHY) { nodes { name } } }`, 1},
		{"job by id with capability", `{ job(id: "JOB-DEPLOY-456") { status capability { name } } }`, 2},
		{"jobs window", `{ capability(id: "CAP-ALERT-MGT-001") { name jobs(first: 2) { nodes { jobId } } } }`, 2},
		{"metrics window", `{ componentMetrics(componentId: "api-server-alert-001", first: 5) { nodes { timestamp } } }`, 1},
		{"validation error costs nothing", `{ capability(id: "bad#id") { name } }`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, nil)
			if tt.want > 0 && len(resp.Errors) > 0 {
				t.Fatalf("errors: %s", resp.Body)
			}
			if got := h.env.Counter.Total(); got != tt.want {
				t.Errorf("DynamoDB requests = %d (%v), want %d", got, h.env.Counter.Ops(), tt.want)
			}
			if got := resp.Extensions.DynamoDB.Requests; got != h.env.Counter.Total() {
				t.Errorf("extensions.dynamodb.requests = %d, counted %d", got, h.env.Counter.Total())
			}
		})
	}
}

// componentsByType with 100 distinct capabilities needs ceil(100/100) = 1 BatchGetItem.
func TestComponentsByTypeBatchesCapabilities(t *testing.T) {
	h := newHarness(t)
	var bundles []*catalog.Bundle
	for i := range 100 {
		id := fmt.Sprintf("CAP-BATCH-%03d", i)
		bundles = append(bundles, &catalog.Bundle{
			Capability: &catalog.Capability{CapabilityID: id, Name: "Batch " + id, BusinessDomain: "batch", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
			Components: []*catalog.Component{{ComponentID: "batch-worker-" + id, Name: "w", ComponentType: "batch-worker", Order: 1, Status: catalog.ComponentActive}},
		})
	}
	if _, err := h.env.Store.BulkLoad(context.Background(), bundles, 4); err != nil {
		t.Fatal(err)
	}
	var out struct {
		ComponentsByType struct {
			Nodes []struct{ Capability struct{ Name string } }
		}
	}
	resp := h.ok(t, `{ componentsByType(type: "batch-worker", first: 100) { nodes { capability { name } } } }`, nil, &out)
	if len(out.ComponentsByType.Nodes) != 100 {
		t.Fatalf("got %d components, want 100", len(out.ComponentsByType.Nodes))
	}
	ops := h.env.Counter.Ops()
	if ops["Query"] != 1 || ops["BatchGetItem"] != 1 || h.env.Counter.Total() != 2 {
		t.Errorf("requests = %v, want 1 Query + 1 BatchGetItem", ops)
	}
	if resp.Extensions.DynamoDB.Operations["BatchGetItem"] != 1 {
		t.Errorf("extensions.dynamodb.operations = %v", resp.Extensions.DynamoDB.Operations)
	}
	for i, n := range out.ComponentsByType.Nodes {
		if n.Capability.Name == "" {
			t.Errorf("node %d has no capability name", i)
		}
	}
}
