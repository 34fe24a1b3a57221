package graph_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// The six access patterns of the seed, as docs/api.md gives them.
func TestSeedAccessPatterns(t *testing.T) {
	h := newHarness(t)

	t.Run("1 complete capability", func(t *testing.T) {
		var out struct {
			Capability struct {
				CapabilityID, Name, BusinessDomain, Status, Priority string
				BusinessMetrics                                      struct{ Sla string }
				Aggregates                                           struct {
					TotalComponents, TotalDependencies, TotalRules int
					HealthStatus                                   string
				}
				Components []struct {
					ComponentID string
					Order       int
				}
				Dependencies []struct {
					SourceComponentID, TargetComponentID, DependencyType, Criticality string
					Source                                                            struct{ Name string }
					Target                                                            struct{ Name string }
				}
				Rules []struct{ RuleID string }
			}
		}
		h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { capabilityId name businessDomain status priority businessMetrics { sla }
			aggregates { totalComponents totalDependencies totalRules healthStatus }
			components { componentId order } dependencies { sourceComponentId targetComponentId dependencyType criticality source { name } target { name } }
			rules(status: ACTIVE) { ruleId } } }`, nil, &out)
		c := out.Capability
		if c.Name != "Alert Management" || c.BusinessDomain != "operations" || c.Status != "ACTIVE" || c.Priority != "CRITICAL" || c.BusinessMetrics.Sla != "99.99%" {
			t.Errorf("capability = %+v", c)
		}
		wantComps := []string{"ui-dashboard-alert-001", "api-server-alert-001", "mcp-server-alert-001", "database-alert-001"}
		if len(c.Components) < 4 {
			t.Fatalf("components = %+v", c.Components)
		}
		for i, id := range wantComps {
			if c.Components[i].ComponentID != id || c.Components[i].Order != i+1 {
				t.Errorf("components[%d] = %+v, want %s order %d", i, c.Components[i], id, i+1)
			}
		}
		if c.Aggregates.TotalComponents != len(c.Components) || c.Aggregates.TotalDependencies != len(c.Dependencies) {
			t.Errorf("aggregates %+v disagree with %d components, %d dependencies", c.Aggregates, len(c.Components), len(c.Dependencies))
		}
		found := false
		for _, d := range c.Dependencies {
			if d.SourceComponentID == "api-server-alert-001" && d.TargetComponentID == "database-alert-001" {
				found = d.DependencyType == "RUNTIME" && d.Criticality == "CRITICAL" && d.Source.Name == "Alert API Server" && d.Target.Name != ""
			}
		}
		if !found {
			t.Errorf("dependency api-server-alert-001 -> database-alert-001 missing or wrong: %+v", c.Dependencies)
		}
		if len(c.Rules) == 0 || c.Rules[0].RuleID != "rule-alert-severity-mapping" {
			t.Errorf("rules = %+v", c.Rules)
		}
	})

	t.Run("2 list capabilities", func(t *testing.T) {
		var out struct {
			Capabilities struct {
				Nodes []struct {
					BusinessDomain string
					Priority       string
				}
			}
		}
		h.ok(t, `{ capabilities { nodes { businessDomain priority } } }`, nil, &out)
		nodes := out.Capabilities.Nodes
		domains := map[string]bool{}
		for i, n := range nodes {
			domains[n.BusinessDomain] = true
			if i > 0 && nodes[i-1].BusinessDomain > n.BusinessDomain {
				t.Errorf("not ordered by domain: %q before %q", nodes[i-1].BusinessDomain, n.BusinessDomain)
			}
		}
		if len(nodes) < 6 || len(domains) < 3 {
			t.Errorf("got %d capabilities in %d domains, want >= 6 in >= 3", len(nodes), len(domains))
		}
	})

	t.Run("3 components by type", func(t *testing.T) {
		var out struct {
			ComponentsByType struct {
				Nodes []struct {
					ComponentType, CapabilityID string
					Capability                  struct{ Name string }
				}
			}
		}
		h.ok(t, `{ componentsByType(type: "mcp-server") { nodes { componentType capabilityId capability { name } } } }`, nil, &out)
		if len(out.ComponentsByType.Nodes) == 0 {
			t.Fatal("no mcp-server components")
		}
		for _, n := range out.ComponentsByType.Nodes {
			if n.ComponentType != "mcp-server" || n.Capability.Name == "" {
				t.Errorf("node = %+v", n)
			}
		}
	})

	t.Run("4 capabilities by domain", func(t *testing.T) {
		var out struct {
			CapabilitiesByDomain struct {
				Nodes []struct{ CapabilityID, BusinessDomain string }
			}
		}
		h.ok(t, `{ capabilitiesByDomain(domain: "operations") { nodes { capabilityId businessDomain } } }`, nil, &out)
		ids := []string{}
		for _, n := range out.CapabilitiesByDomain.Nodes {
			if n.BusinessDomain != "operations" {
				t.Errorf("node in domain %q", n.BusinessDomain)
			}
			ids = append(ids, n.CapabilityID)
		}
		if !contains(ids, "CAP-ALERT-MGT-001") {
			t.Errorf("operations domain = %v, want CAP-ALERT-MGT-001", ids)
		}
	})

	t.Run("5 component health in the last hour", func(t *testing.T) {
		from := testNow.Add(-time.Hour).Format(time.RFC3339)
		var out struct {
			Capability struct {
				Components []struct {
					ComponentID string
					Health      struct{ Status string }
				}
				Metrics struct {
					Nodes []struct {
						Timestamp string
						Values    struct{ Latency struct{ P99 float64 } }
					}
				}
			}
		}
		h.ok(t, `query($from: DateTime) { capability(id: "CAP-ALERT-MGT-001") { components { componentId health { status } }
			metrics(componentId: "api-server-alert-001", metricType: PERFORMANCE, from: $from) { nodes { timestamp values { latency { p99 } } } } } }`,
			map[string]any{"from": from}, &out)
		nodes := out.Capability.Metrics.Nodes
		if len(nodes) == 0 {
			t.Fatal("no metrics in the last hour")
		}
		for _, n := range nodes {
			ts, err := time.Parse(time.RFC3339Nano, n.Timestamp)
			if err != nil || ts.Before(testNow.Add(-time.Hour)) {
				t.Errorf("metric at %s outside the window", n.Timestamp)
			}
		}
	})

	t.Run("6 deployment history newest first", func(t *testing.T) {
		var out struct {
			Capability struct {
				Jobs struct {
					Nodes    []struct{ JobID, StartTime string }
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
		}
		q := `query($after: String) { capability(id: "CAP-ALERT-MGT-001") { jobs(first: 2, after: $after) { nodes { jobId startTime } pageInfo { hasNextPage endCursor } } } }`
		var all []string
		var starts []string
		after := any(nil)
		for range 20 {
			h.ok(t, q, map[string]any{"after": after}, &out)
			for _, n := range out.Capability.Jobs.Nodes {
				all = append(all, n.JobID)
				starts = append(starts, n.StartTime)
			}
			if !out.Capability.Jobs.PageInfo.HasNextPage {
				break
			}
			after = out.Capability.Jobs.PageInfo.EndCursor
		}
		if !contains(all, "JOB-DEPLOY-456") {
			t.Errorf("jobs = %v, want JOB-DEPLOY-456", all)
		}
		for i := 1; i < len(starts); i++ {
			if starts[i-1] < starts[i] {
				t.Errorf("jobs not newest first: %v", starts)
			}
		}
		seen := map[string]bool{}
		for _, id := range all {
			if seen[id] {
				t.Errorf("job %s returned twice across pages", id)
			}
			seen[id] = true
		}
	})
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestSeedJobExactly(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Job struct {
			JobID, JobType, Status, StartTime, CapabilityID string
			Duration                                        int
			TargetComponents                                []struct {
				ComponentID string
				Component   struct{ Name string }
			}
			ArtifactLocations struct{ DeploymentPlan string }
			Capability        struct{ Name string }
		}
	}
	h.ok(t, `{ job(id: "JOB-DEPLOY-456") { jobId jobType status startTime capabilityId duration targetComponents { componentId component { name } } artifactLocations { deploymentPlan } capability { name } } }`, nil, &out)
	j := out.Job
	if j.StartTime != "2025-11-22T10:00:00.000000Z" || j.JobType != "DEPLOYMENT" || j.Status != "COMPLETED" || j.Duration != 900 || j.Capability.Name != "Alert Management" {
		t.Errorf("job = %+v", j)
	}
	if len(j.TargetComponents) != 2 || j.TargetComponents[0].Component.Name == "" {
		t.Errorf("targetComponents = %+v", j.TargetComponents)
	}
	if j.ArtifactLocations.DeploymentPlan != "s3://deployments/CAP-ALERT-MGT-001/JOB-456/plan.yaml" {
		t.Errorf("artifactLocations = %+v", j.ArtifactLocations)
	}
}

func TestNullsAndFilters(t *testing.T) {
	h := newHarness(t)
	t.Run("unknown capability is null", func(t *testing.T) {
		resp := h.ok(t, `{ capability(id: "CAP-NOPE") { name components { name } } }`, nil, nil)
		if string(resp.Data) != `{"capability":null}` {
			t.Errorf("data = %s", resp.Data)
		}
	})
	t.Run("unknown job is null", func(t *testing.T) {
		resp := h.ok(t, `{ job(id: "JOB-NOPE") { status } }`, nil, nil)
		if string(resp.Data) != `{"job":null}` {
			t.Errorf("data = %s", resp.Data)
		}
	})
	t.Run("component filters", func(t *testing.T) {
		var out struct {
			Capability struct {
				Byt    []struct{ ComponentType string } `json:"byType"`
				Layer  []struct{ Layer string }
				Status []struct{ Status string }
				One    *struct{ Name string }
			}
		}
		h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { byType: components(type: "database") { componentType } layer: components(layer: "data") { layer } status: components(status: ACTIVE) { status } one: component(id: "database-alert-001") { name } } }`, nil, &out)
		c := out.Capability
		if len(c.Byt) != 1 || c.Byt[0].ComponentType != "database" {
			t.Errorf("components(type: database) = %+v", c.Byt)
		}
		for _, l := range c.Layer {
			if l.Layer != "data" {
				t.Errorf("components(layer: data) returned layer %q", l.Layer)
			}
		}
		for _, s := range c.Status {
			if s.Status != "ACTIVE" {
				t.Errorf("components(status: ACTIVE) returned %q", s.Status)
			}
		}
		if c.One == nil || c.One.Name == "" {
			t.Errorf("component(id) = %+v", c.One)
		}
	})
	t.Run("dependency criticality filter", func(t *testing.T) {
		var out struct {
			Capability struct {
				Dependencies []struct{ Criticality string }
			}
		}
		h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { dependencies(criticality: CRITICAL) { criticality } } }`, nil, &out)
		if len(out.Capability.Dependencies) == 0 {
			t.Fatal("no critical dependencies")
		}
		for _, d := range out.Capability.Dependencies {
			if d.Criticality != "CRITICAL" {
				t.Errorf("got criticality %s", d.Criticality)
			}
		}
	})
	t.Run("dependents and dependsOn", func(t *testing.T) {
		var out struct {
			Capability struct {
				Component struct {
					Dependents []struct{ ComponentID string }
					DependsOn  []struct{ ComponentID string }
				}
			}
		}
		h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { component(id: "database-alert-001") { dependents { componentId } dependsOn { componentId } } } }`, nil, &out)
		var ids []string
		for _, d := range out.Capability.Component.Dependents {
			ids = append(ids, d.ComponentID)
		}
		if !contains(ids, "api-server-alert-001") {
			t.Errorf("dependents of database-alert-001 = %v, want api-server-alert-001", ids)
		}
	})
}

func TestCursors(t *testing.T) {
	h := newHarness(t)
	var first struct {
		Capabilities struct {
			Edges    []struct{ Cursor string }
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
	}
	h.ok(t, `{ capabilities(first: 2) { edges { cursor } pageInfo { hasNextPage endCursor } } }`, nil, &first)
	cursor := first.Capabilities.PageInfo.EndCursor
	if !first.Capabilities.PageInfo.HasNextPage || cursor == "" || first.Capabilities.Edges[1].Cursor != cursor {
		t.Fatalf("first page = %+v", first.Capabilities)
	}

	t.Run("walks every capability once", func(t *testing.T) {
		var all []string
		after := any(nil)
		for range 50 {
			var out struct {
				Capabilities struct {
					Nodes    []struct{ ID string }
					PageInfo struct {
						HasNextPage bool
						EndCursor   string
					}
				}
			}
			h.ok(t, `query($a: String) { capabilities(first: 2, after: $a) { nodes { id } pageInfo { hasNextPage endCursor } } }`, map[string]any{"a": after}, &out)
			for _, n := range out.Capabilities.Nodes {
				all = append(all, n.ID)
			}
			if !out.Capabilities.PageInfo.HasNextPage {
				break
			}
			after = out.Capabilities.PageInfo.EndCursor
		}
		var whole struct {
			Capabilities struct{ Nodes []struct{ ID string } }
		}
		h.ok(t, `{ capabilities(first: 100) { nodes { id } } }`, nil, &whole)
		if len(all) != len(whole.Capabilities.Nodes) {
			t.Errorf("paged %d capabilities, whole list has %d", len(all), len(whole.Capabilities.Nodes))
		}
		for i, n := range whole.Capabilities.Nodes {
			if i < len(all) && all[i] != n.ID {
				t.Errorf("page order differs at %d: %s vs %s", i, all[i], n.ID)
			}
		}
	})

	bad := []struct {
		name, query string
		vars        map[string]any
	}{
		{"tampered", `query($a: String) { capabilities(first: 2, after: $a) { nodes { id } } }`, map[string]any{"a": tamper(cursor)}},
		{"garbage", `query($a: String) { capabilities(first: 2, after: $a) { nodes { id } } }`, map[string]any{"a": "not-a-cursor!"}},
		{"other query: domain filter", `query($a: String) { capabilities(domain: "operations", first: 2, after: $a) { nodes { id } } }`, map[string]any{"a": cursor}},
		{"other query: by domain", `query($a: String) { capabilitiesByDomain(domain: "operations", first: 2, after: $a) { nodes { id } } }`, map[string]any{"a": cursor}},
		{"other query: jobs", `query($a: String) { capability(id: "CAP-ALERT-MGT-001") { jobs(after: $a) { nodes { jobId } } } }`, map[string]any{"a": cursor}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, tt.vars)
			if resp.code(0) != "BAD_USER_INPUT" {
				t.Fatalf("code = %q, want BAD_USER_INPUT: %s", resp.code(0), resp.Body)
			}
			if !strings.Contains(resp.Errors[0].Message, "cursor") {
				t.Errorf("message = %q", resp.Errors[0].Message)
			}
		})
	}
}

func tamper(c string) string {
	b := []byte(c)
	i := len(b) - 3
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func TestBadInputBeforeAnyRequest(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name, query string
		vars        map[string]any
		code        string
	}{
		{"hash in id", `{ capability(id: "CAP#1") { name } }`, nil, "BAD_USER_INPUT"},
		{"empty id", `{ capability(id: "") { name } }`, nil, "BAD_USER_INPUT"},
		{"first zero", `{ capabilities(first: 0) { nodes { id } } }`, nil, "BAD_USER_INPUT"},
		{"first too large", `{ capabilities(first: 101) { nodes { id } } }`, nil, "BAD_USER_INPUT"},
		{"metrics first too large", `{ componentMetrics(componentId: "api-server-alert-001", first: 1001) { nodes { timestamp } } }`, nil, "BAD_USER_INPUT"},
		{"bad component type", `{ componentsByType(type: "a#b") { nodes { name } } }`, nil, "BAD_USER_INPUT"},
		{"bad date", `query($f: DateTime) { componentMetrics(componentId: "api-server-alert-001", from: $f) { nodes { timestamp } } }`, map[string]any{"f": "yesterday"}, "BAD_USER_INPUT"},
		{"to before from", `{ componentMetrics(componentId: "api-server-alert-001", from: "2025-01-02T00:00:00Z", to: "2025-01-01T00:00:00Z") { nodes { timestamp } } }`, nil, "BAD_USER_INPUT"},
		{"bad domain", `{ capabilitiesByDomain(domain: "a b") { nodes { id } } }`, nil, "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, tt.vars)
			if len(resp.Errors) == 0 {
				t.Fatalf("no error: %s", resp.Body)
			}
			if got := resp.code(0); got != tt.code {
				t.Errorf("code = %q, want %q: %s", got, tt.code, resp.Body)
			}
			if n := h.env.Counter.Total(); n != 0 {
				t.Errorf("%d DynamoDB requests before rejecting bad input, want 0", n)
			}
		})
	}
}

// A database failure reaches the client as UNAVAILABLE with no AWS text, and the server keeps
// serving once it recovers.
func TestNoAWSTextReachesClients(t *testing.T) {
	h := newHarness(t)
	h.env.EmulateFailure(true)
	resp := h.do(t, `{ capability(id: "CAP-ALERT-MGT-001") { name components { name } } capabilities { nodes { id } } }`, nil)
	if len(resp.Errors) == 0 {
		t.Fatalf("no error under an emulated failure: %s", resp.Body)
	}
	for i, e := range resp.Errors {
		if resp.code(i) != "UNAVAILABLE" {
			t.Errorf("error %d code = %q, want UNAVAILABLE", i, resp.code(i))
		}
		for _, leak := range []string{"DynamoDB", "dynamodb", "RequestID", "BusinessCapabilitySystem", "operation error", "InternalServerError", "api error"} {
			if strings.Contains(e.Message, leak) {
				t.Errorf("error %q leaks %q", e.Message, leak)
			}
		}
	}
	if strings.Contains(resp.Body, "BusinessCapabilitySystem") || strings.Contains(resp.Body, "RequestID") {
		t.Errorf("response leaks AWS text: %s", resp.Body)
	}
	h.env.EmulateFailure(false)
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil, nil)
}

func TestExtensionsOnEveryResponse(t *testing.T) {
	h := newHarness(t)
	for _, q := range []string{`{ capability(id: "CAP-ALERT-MGT-001") { name } }`, `{ nope }`, `{ capability(id: "x#") { name } }`} {
		resp := h.do(t, q, nil)
		var raw map[string]json.RawMessage
		_ = json.Unmarshal([]byte(resp.Body), &raw)
		var ext map[string]json.RawMessage
		_ = json.Unmarshal(raw["extensions"], &ext)
		if _, ok := ext["dynamodb"]; !ok {
			t.Errorf("%s: no extensions.dynamodb in %s", q, resp.Body)
		}
	}
}

// Expired metrics (TTL passed, not yet deleted by DynamoDB) are not shown.
func TestExpiredMetricsHidden(t *testing.T) {
	h := newHarness(t)
	old := testNow.Add(-100 * 24 * time.Hour).Truncate(5 * time.Minute)
	b := &catalog.Bundle{
		Capability: &catalog.Capability{CapabilityID: "CAP-TTL-001", Name: "TTL", BusinessDomain: "ttl", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
		Components: []*catalog.Component{{ComponentID: "ttl-api-001", Name: "api", ComponentType: "api-server", Order: 1, Status: catalog.ComponentActive}},
		Metrics: []*catalog.Metric{
			{ComponentID: "ttl-api-001", MetricType: catalog.MetricPerformance, Timestamp: catalog.NewTimestamp(old), Interval: "5m"},
			{ComponentID: "ttl-api-001", MetricType: catalog.MetricPerformance, Timestamp: catalog.NewTimestamp(testNow.Add(-10 * time.Minute).Truncate(5 * time.Minute)), Interval: "5m"},
		},
	}
	if _, err := h.env.Store.BulkLoad(t.Context(), []*catalog.Bundle{b}, 1); err != nil {
		t.Fatal(err)
	}
	var out struct {
		ComponentMetrics struct{ Nodes []struct{ Timestamp string } }
		Capability       struct {
			Metrics struct{ Nodes []struct{ Timestamp string } }
		}
	}
	h.ok(t, `{ componentMetrics(componentId: "ttl-api-001") { nodes { timestamp } } capability(id: "CAP-TTL-001") { metrics { nodes { timestamp } } } }`, nil, &out)
	if len(out.ComponentMetrics.Nodes) != 1 || len(out.Capability.Metrics.Nodes) != 1 {
		t.Errorf("got %d and %d metrics, want 1 each (the expired one hidden)", len(out.ComponentMetrics.Nodes), len(out.Capability.Metrics.Nodes))
	}
}
