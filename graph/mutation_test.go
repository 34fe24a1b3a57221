package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// writes returns the write requests the counter saw.
func (h *harness) writes() int {
	ops := h.env.Counter.Ops()
	return ops["TransactWriteItems"] + ops["BatchWriteItem"] + ops["PutItem"] + ops["DeleteItem"] + ops["UpdateItem"]
}

func (h *harness) check(tb testing.TB, id string) {
	tb.Helper()
	if err := h.env.Store.CheckPartition(context.Background(), id); err != nil {
		tb.Errorf("CheckPartition(%s): %v", id, err)
	}
}

type aggregates struct {
	TotalComponents, ActiveComponents, TotalDependencies, TotalJobs, SuccessfulJobs, FailedJobs, TotalRules, ActiveRules int
	HealthScore                                                                                                          float64
	HealthStatus                                                                                                         string
	LastDeployment                                                                                                       *string
}

func (h *harness) aggregates(tb testing.TB, id string) (aggregates, int) {
	tb.Helper()
	var out struct {
		Capability struct {
			Revision   int
			Aggregates aggregates
		}
	}
	h.ok(tb, `query($id: ID!) { capability(id: $id) { revision aggregates { totalComponents activeComponents totalDependencies totalJobs successfulJobs failedJobs totalRules activeRules healthScore healthStatus lastDeployment } } }`, map[string]any{"id": id}, &out)
	return out.Capability.Aggregates, out.Capability.Revision
}

const createCap = `mutation($in: CreateCapabilityInput!, $tok: String) { createCapability(input: $in, clientRequestToken: $tok) { id revision status aggregates { totalComponents healthStatus } } }`

func (h *harness) createCapability(tb testing.TB, id string) {
	tb.Helper()
	h.ok(tb, createCap, map[string]any{"in": map[string]any{"capabilityId": id, "name": "Test " + id, "businessDomain": "testing", "priority": "HIGH",
		"businessMetrics": map[string]any{"sla": "99.9%"}, "aggregates": map[string]any{"totalIncidents": 2}}}, nil)
}

func component(id string, order int, health string) map[string]any {
	c := map[string]any{"componentId": id, "name": "Component " + id, "componentType": "api-server", "order": order, "layer": "business",
		"sla": map[string]any{"availability": 99.9, "responseTime": 200, "errorRate": 1}}
	if health != "" {
		c["health"] = map[string]any{"status": health, "availability": 99.95, "responseTime": 100, "errorRate": 0.1}
	}
	return c
}

const addComp = `mutation($cap: ID!, $in: ComponentInput!, $tok: String) { addComponent(capabilityId: $cap, input: $in, clientRequestToken: $tok) { componentId revision order capability { aggregates { totalComponents } } } }`

func TestCapabilityLifecycle(t *testing.T) {
	h := newHarness(t)
	var created struct {
		CreateCapability struct {
			ID, Status string
			Revision   int
			Aggregates struct {
				TotalComponents int
				HealthStatus    string
			}
		}
	}
	h.ok(t, createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-NEW-001", "name": "New Capability", "businessDomain": "testing", "priority": "HIGH"}}, &created)
	c := created.CreateCapability
	if c.ID != "CAP-NEW-001" || c.Revision != 1 || c.Status != "PLANNING" || c.Aggregates.HealthStatus != "UNKNOWN" {
		t.Errorf("createCapability = %+v", c)
	}
	if n := h.env.Counter.Ops()["TransactWriteItems"]; n != 1 {
		t.Errorf("createCapability used %d transactions, want 1", n)
	}
	h.check(t, "CAP-NEW-001")

	// It is listed by every index at once.
	var lists struct {
		ByDomain struct{ Nodes []struct{ ID string } }
		ByHealth struct{ Nodes []struct{ ID string } }
	}
	h.ok(t, `{ byDomain: capabilitiesByDomain(domain: "testing") { nodes { id } } byHealth: capabilitiesByHealth(status: UNKNOWN) { nodes { id } } }`, nil, &lists)
	if len(lists.ByDomain.Nodes) != 1 || !containsNode(lists.ByHealth.Nodes, "CAP-NEW-001") {
		t.Errorf("indexes after create = %+v", lists)
	}

	t.Run("duplicate is CONFLICT and writes nothing", func(t *testing.T) {
		resp := h.do(t, createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-NEW-001", "name": "Again", "businessDomain": "testing", "priority": "LOW"}})
		if resp.code(0) != "CONFLICT" {
			t.Errorf("code = %q: %s", resp.code(0), resp.Body)
		}
		if w := h.writes(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})

	const update = `mutation($rev: Int!, $in: UpdateCapabilityInput!) { updateCapability(id: "CAP-NEW-001", expectedRevision: $rev, input: $in) { name owner priority revision businessDomain } }`
	var upd struct {
		UpdateCapability struct {
			Name, Owner, Priority, BusinessDomain string
			Revision                              int
		}
	}
	h.ok(t, update, map[string]any{"rev": 1, "in": map[string]any{"name": "Renamed", "owner": "team-x", "priority": "CRITICAL", "businessDomain": "moved"}}, &upd)
	if u := upd.UpdateCapability; u.Name != "Renamed" || u.Owner != "team-x" || u.Priority != "CRITICAL" || u.Revision != 2 || u.BusinessDomain != "moved" {
		t.Errorf("updateCapability = %+v", u)
	}
	h.check(t, "CAP-NEW-001")
	h.ok(t, `{ capabilitiesByDomain(domain: "moved") { nodes { id } } }`, nil, &lists)

	t.Run("stale revision is CONFLICT with the current revision", func(t *testing.T) {
		resp := h.do(t, update, map[string]any{"rev": 1, "in": map[string]any{"name": "Lost"}})
		if resp.code(0) != "CONFLICT" || resp.Errors[0].Extensions["currentRevision"] != float64(2) {
			t.Errorf("stale update = %s", resp.Body)
		}
		if w := h.writes(); w != 0 {
			t.Errorf("%d writes", w)
		}
	})

	t.Run("history keeps the previous version", func(t *testing.T) {
		var hist struct {
			Capability struct {
				History struct {
					Nodes []struct {
						Name     string
						Revision int
					}
				}
			}
		}
		h.ok(t, `{ capability(id: "CAP-NEW-001") { history { nodes { name revision } } } }`, nil, &hist)
		n := hist.Capability.History.Nodes
		if len(n) != 1 || n[0].Name != "New Capability" || n[0].Revision != 1 {
			t.Errorf("history = %+v", n)
		}
	})

	const transition = `mutation($to: CapabilityStatus!, $rev: Int!) { transitionCapability(id: "CAP-NEW-001", to: $to, expectedRevision: $rev) { status revision } }`
	t.Run("lifecycle moves one step", func(t *testing.T) {
		resp := h.do(t, transition, map[string]any{"to": "ACTIVE", "rev": 2})
		if resp.code(0) != "BAD_USER_INPUT" || !strings.Contains(resp.Errors[0].Message, "DEVELOPMENT") {
			t.Errorf("PLANNING -> ACTIVE = %s", resp.Body)
		}
		if w := h.writes(); w != 0 {
			t.Errorf("%d writes", w)
		}
		rev := 2
		for _, to := range []string{"DEVELOPMENT", "ACTIVE", "DEPRECATED", "ACTIVE", "DEPRECATED", "RETIRING"} {
			var out struct {
				TransitionCapability struct {
					Status   string
					Revision int
				}
			}
			h.ok(t, transition, map[string]any{"to": to, "rev": rev}, &out)
			rev++
			if out.TransitionCapability.Status != to || out.TransitionCapability.Revision != rev {
				t.Errorf("transition to %s = %+v", to, out.TransitionCapability)
			}
		}
		resp = h.do(t, transition, map[string]any{"to": "ACTIVE", "rev": rev})
		if resp.code(0) != "BAD_USER_INPUT" {
			t.Errorf("RETIRING -> ACTIVE = %s", resp.Body)
		}
	})

	t.Run("delete removes the partition", func(t *testing.T) {
		h.ok(t, addComp, map[string]any{"cap": "CAP-NEW-001", "in": component("new-api-1", 1, "HEALTHY")}, nil)
		_, rev := h.aggregates(t, "CAP-NEW-001")
		resp := h.do(t, `mutation($rev: Int!) { deleteCapability(id: "CAP-NEW-001", expectedRevision: $rev) }`, map[string]any{"rev": rev - 1})
		if resp.code(0) != "CONFLICT" {
			t.Errorf("stale delete = %s", resp.Body)
		}
		h.ok(t, `mutation($rev: Int!) { deleteCapability(id: "CAP-NEW-001", expectedRevision: $rev) }`, map[string]any{"rev": rev}, nil)
		resp = h.ok(t, `{ capability(id: "CAP-NEW-001") { id } componentsByType(type: "api-server", first: 100) { nodes { componentId } } capabilitiesByDomain(domain: "moved") { nodes { id } } }`, nil, nil)
		if strings.Contains(string(resp.Data), "CAP-NEW-001") || strings.Contains(string(resp.Data), "new-api-1") {
			t.Errorf("deleted capability still visible: %s", resp.Data)
		}
	})
}

func containsNode(nodes []struct{ ID string }, id string) bool {
	for _, n := range nodes {
		if n.ID == id {
			return true
		}
	}
	return false
}

func TestComponentsAndDependencies(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-C-001")
	for i, id := range []string{"c-ui-1", "c-api-1", "c-db-1"} {
		h.ok(t, addComp, map[string]any{"cap": "CAP-C-001", "in": component(id, i+1, "HEALTHY")}, nil)
	}
	a, _ := h.aggregates(t, "CAP-C-001")
	if a.TotalComponents != 3 || a.ActiveComponents != 3 || a.HealthStatus != "HEALTHY" {
		t.Errorf("aggregates = %+v", a)
	}
	h.check(t, "CAP-C-001")

	const addDep = `mutation($in: DependencyInput!) { addDependency(capabilityId: "CAP-C-001", input: $in) { id sourceComponentName targetComponentName source { componentId } } }`
	dep := func(s, d string) map[string]any {
		return map[string]any{"in": map[string]any{"sourceComponentId": s, "targetComponentId": d, "dependencyType": "RUNTIME", "criticality": "HIGH"}}
	}
	h.ok(t, addDep, dep("c-ui-1", "c-api-1"), nil)
	var out struct {
		AddDependency struct {
			ID, SourceComponentName, TargetComponentName string
		}
	}
	h.ok(t, addDep, dep("c-api-1", "c-db-1"), &out)
	if out.AddDependency.SourceComponentName != "Component c-api-1" || out.AddDependency.ID != "CAP-C-001/dependencies/c-api-1->c-db-1" {
		t.Errorf("addDependency = %+v", out.AddDependency)
	}
	rejections := []struct {
		name, query string
		vars        map[string]any
		code        string
	}{
		{"self dependency", addDep, dep("c-api-1", "c-api-1"), "BAD_USER_INPUT"},
		{"duplicate dependency", addDep, dep("c-api-1", "c-db-1"), "BAD_USER_INPUT"},
		{"unknown end", addDep, dep("c-api-1", "nope-1"), "BAD_USER_INPUT"},
		{"forged id", addDep, dep("c-api-1", "c-db-1#x"), "BAD_USER_INPUT"},
		{"duplicate component", addComp, map[string]any{"cap": "CAP-C-001", "in": component("c-db-1", 9, "")}, "CONFLICT"},
		{"order out of range", addComp, map[string]any{"cap": "CAP-C-001", "in": component("c-x-1", 100, "")}, "BAD_USER_INPUT"},
		{"availability over 100", addComp, map[string]any{"cap": "CAP-C-001", "in": map[string]any{"componentId": "c-x-2", "name": "x", "componentType": "cache", "order": 4, "health": map[string]any{"status": "HEALTHY", "availability": 101, "responseTime": 1, "errorRate": 0}}}, "BAD_USER_INPUT"},
		{"unknown capability", addComp, map[string]any{"cap": "CAP-NOPE", "in": component("c-x-3", 1, "")}, "NOT_FOUND"},
		{"component with dependencies, no cascade", `mutation { removeComponent(capabilityId: "CAP-C-001", componentId: "c-api-1") }`, nil, "BAD_USER_INPUT"},
		{"remove missing dependency", `mutation { removeDependency(capabilityId: "CAP-C-001", sourceComponentId: "c-db-1", targetComponentId: "c-ui-1") }`, nil, "NOT_FOUND"},
		{"bad enum in patch", `mutation { updateComponent(capabilityId: "CAP-C-001", componentId: "c-db-1", expectedRevision: 1, input: {status: BROKEN}) { status } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
	}
	for _, tt := range rejections {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, tt.vars)
			if resp.code(0) != tt.code {
				t.Errorf("code = %q, want %q: %s", resp.code(0), tt.code, resp.Body)
			}
			if w := h.writes(); w != 0 {
				t.Errorf("rejected mutation made %d writes", w)
			}
		})
	}
	a, _ = h.aggregates(t, "CAP-C-001")
	if a.TotalDependencies != 2 {
		t.Errorf("totalDependencies = %d, want 2", a.TotalDependencies)
	}

	// Re-keying: a new order moves the item in the same transaction.
	var upd struct {
		UpdateComponent struct {
			Order, Revision int
			Status          string
			Health          struct{ Status string }
		}
	}
	h.ok(t, `mutation { updateComponent(capabilityId: "CAP-C-001", componentId: "c-db-1", expectedRevision: 1, input: {order: 7, status: INACTIVE, health: {status: UNHEALTHY, availability: 80, responseTime: 900, errorRate: 12}}) { order revision status health { status } } }`, nil, &upd)
	if u := upd.UpdateComponent; u.Order != 7 || u.Revision != 2 || u.Status != "INACTIVE" || u.Health.Status != "UNHEALTHY" {
		t.Errorf("updateComponent = %+v", u)
	}
	if n := h.env.Counter.Ops()["TransactWriteItems"]; n != 1 {
		t.Errorf("re-keying used %d transactions, want 1", n)
	}
	var comps struct {
		Capability struct {
			Components []struct {
				ComponentID string
				Order       int
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-C-001") { components { componentId order } } }`, nil, &comps)
	if cs := comps.Capability.Components; len(cs) != 3 || cs[2].ComponentID != "c-db-1" || cs[2].Order != 7 {
		t.Errorf("components after re-keying = %+v", cs)
	}
	a, _ = h.aggregates(t, "CAP-C-001")
	if a.ActiveComponents != 2 || a.HealthStatus == "HEALTHY" {
		t.Errorf("aggregates after an unhealthy, inactive component = %+v", a)
	}
	h.check(t, "CAP-C-001")
	resp := h.do(t, `mutation { updateComponent(capabilityId: "CAP-C-001", componentId: "c-db-1", expectedRevision: 1, input: {name: "late"}) { name } }`, nil)
	if resp.code(0) != "CONFLICT" || resp.Errors[0].Extensions["currentRevision"] != float64(2) {
		t.Errorf("stale updateComponent = %s", resp.Body)
	}

	h.ok(t, `mutation { removeComponent(capabilityId: "CAP-C-001", componentId: "c-api-1", cascade: true) }`, nil, nil)
	a, _ = h.aggregates(t, "CAP-C-001")
	if a.TotalComponents != 2 || a.TotalDependencies != 0 {
		t.Errorf("after cascade removal = %+v", a)
	}
	h.check(t, "CAP-C-001")
}

func TestJobsAndMetrics(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-J-001")
	h.ok(t, addComp, map[string]any{"cap": "CAP-J-001", "in": component("j-api-1", 1, "HEALTHY")}, nil)
	const start = `mutation($in: JobInput!) { startJob(capabilityId: "CAP-J-001", input: $in) { jobId status revision startTime } }`
	h.ok(t, start, map[string]any{"in": map[string]any{"jobId": "JOB-T-1", "jobType": "DEPLOYMENT", "status": "RUNNING", "targetComponents": []any{map[string]any{"componentId": "j-api-1", "toVersion": "2.0"}}}}, nil)
	for _, tt := range []struct {
		name string
		in   map[string]any
		code string
	}{
		{"duplicate job id", map[string]any{"jobId": "JOB-DEPLOY-456", "jobType": "DEPLOYMENT"}, "CONFLICT"},
		{"unknown target", map[string]any{"jobId": "JOB-T-2", "jobType": "DEPLOYMENT", "targetComponents": []any{map[string]any{"componentId": "nope"}}}, "BAD_USER_INPUT"},
		{"starts completed", map[string]any{"jobId": "JOB-T-3", "jobType": "SCALING", "status": "COMPLETED"}, "BAD_USER_INPUT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, start, map[string]any{"in": tt.in})
			if resp.code(0) != tt.code || h.writes() != 0 {
				t.Errorf("code %q (want %q), %d writes: %s", resp.code(0), tt.code, h.writes(), resp.Body)
			}
		})
	}
	const update = `mutation($rev: Int!, $in: UpdateJobInput!) { updateJob(jobId: "JOB-T-1", expectedRevision: $rev, input: $in) { status revision endTime duration } }`
	resp := h.do(t, update, map[string]any{"rev": 1, "in": map[string]any{"status": "PENDING"}})
	if resp.code(0) != "BAD_USER_INPUT" || !strings.Contains(resp.Errors[0].Message, "COMPLETED") {
		t.Errorf("RUNNING -> PENDING = %s", resp.Body)
	}
	var done struct {
		UpdateJob struct {
			Status   string
			Revision int
			EndTime  string
			Duration *int
		}
	}
	h.ok(t, update, map[string]any{"rev": 1, "in": map[string]any{"status": "COMPLETED"}}, &done)
	if d := done.UpdateJob; d.Status != "COMPLETED" || d.Revision != 2 || d.EndTime == "" || d.Duration == nil {
		t.Errorf("updateJob = %+v", d)
	}
	a, _ := h.aggregates(t, "CAP-J-001")
	if a.TotalJobs != 1 || a.SuccessfulJobs != 1 || a.LastDeployment == nil || *a.LastDeployment != done.UpdateJob.EndTime {
		t.Errorf("aggregates after a completed deployment = %+v", a)
	}
	resp = h.do(t, update, map[string]any{"rev": 2, "in": map[string]any{"status": "FAILED"}})
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("COMPLETED -> FAILED = %s", resp.Body)
	}
	h.check(t, "CAP-J-001")

	// Metrics: timestamps truncated, TTL set, health updated from the newest sample.
	now := time.Now().UTC()
	metric := func(at time.Time, avail, p95 float64) map[string]any {
		return map[string]any{"capabilityId": "CAP-J-001", "componentId": "j-api-1", "metricType": "PERFORMANCE", "timestamp": at.Format(time.RFC3339Nano), "interval": "5m",
			"values": map[string]any{"availability": map[string]any{"value": avail}, "latency": map[string]any{"p50": 10, "p95": p95, "p99": p95 * 2, "max": p95 * 3}, "errors": map[string]any{"rate": 0.5, "count": 3}}}
	}
	const record = `mutation($in: [MetricInput!]!, $tok: String) { recordMetrics(inputs: $in, clientRequestToken: $tok) { recorded metrics { timestamp } components { componentId health { status availability responseTime } } } }`
	var rec struct {
		RecordMetrics struct {
			Recorded   int
			Metrics    []struct{ Timestamp string }
			Components []struct {
				ComponentID string
				Health      struct {
					Status       string
					Availability float64
					ResponseTime float64
				}
			}
		}
	}
	h.ok(t, record, map[string]any{"in": []any{metric(now.Add(-7*time.Minute), 99.99, 120), metric(now.Add(-2*time.Minute), 97, 450)}}, &rec)
	r := rec.RecordMetrics
	if r.Recorded != 2 || len(r.Components) != 1 || r.Components[0].Health.Availability != 97 || r.Components[0].Health.Status != "UNHEALTHY" {
		t.Errorf("recordMetrics = %+v", r)
	}
	for _, m := range r.Metrics {
		ts, _ := time.Parse(time.RFC3339Nano, m.Timestamp)
		if ts.Minute()%5 != 0 || ts.Second() != 0 {
			t.Errorf("timestamp %s not truncated to 5m", m.Timestamp)
		}
	}
	a, _ = h.aggregates(t, "CAP-J-001")
	if a.HealthStatus == "HEALTHY" {
		t.Errorf("health after an unhealthy sample = %+v", a)
	}
	h.check(t, "CAP-J-001")
	for _, tt := range []struct {
		name string
		in   []any
	}{
		{"future timestamp", []any{metric(now.Add(10*time.Minute), 99, 1)}},
		{"unknown component", []any{map[string]any{"capabilityId": "CAP-J-001", "componentId": "nope-9", "metricType": "PERFORMANCE", "timestamp": now.Format(time.RFC3339), "interval": "5m"}}},
		{"bad interval", []any{map[string]any{"capabilityId": "CAP-J-001", "componentId": "j-api-1", "metricType": "PERFORMANCE", "timestamp": now.Format(time.RFC3339), "interval": "2m"}}},
		{"one bad among good", []any{metric(now.Add(-time.Minute), 99, 1), metric(now.Add(time.Hour), 99, 1)}},
		{"none", []any{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, record, map[string]any{"in": tt.in})
			if resp.code(0) != "BAD_USER_INPUT" || h.writes() != 0 {
				t.Errorf("code %q, %d writes: %s", resp.code(0), h.writes(), resp.Body)
			}
		})
	}
}

func TestRulesAndHistory(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-R-001")
	rule := map[string]any{"ruleId": "rule-1", "name": "Severity", "ruleType": "BUSINESS", "priority": "HIGH", "order": 5, "status": "ACTIVE",
		"conditions": []any{map[string]any{"field": "error_count", "operator": ">=", "value": 100, "weight": 3}},
		"actions":    []any{map[string]any{"type": "set_severity", "parameters": map[string]any{"calculation": "sum_weights", "mapping": map[string]any{"0-2": "low", "3+": "high"}}}}}
	const create = `mutation($in: RuleInput!) { createRule(capabilityId: "CAP-R-001", input: $in) { ruleId revision order } }`
	h.ok(t, create, map[string]any{"in": rule}, nil)
	a, _ := h.aggregates(t, "CAP-R-001")
	if a.TotalRules != 1 || a.ActiveRules != 1 {
		t.Errorf("aggregates = %+v", a)
	}
	for _, tt := range []struct {
		name   string
		change func(map[string]any) map[string]any
	}{
		{"unknown operator", func(r map[string]any) map[string]any {
			r["ruleId"] = "rule-2"
			r["conditions"] = []any{map[string]any{"field": "x", "operator": "resembles", "value": 1, "weight": 1}}
			return r
		}},
		{"gap in mapping", func(r map[string]any) map[string]any {
			r["ruleId"] = "rule-3"
			r["actions"] = []any{map[string]any{"type": "set_severity", "parameters": map[string]any{"calculation": "sum_weights", "mapping": map[string]any{"0-2": "low", "5+": "high"}}}}
			return r
		}},
		{"order zero", func(r map[string]any) map[string]any { r["ruleId"] = "rule-4"; r["order"] = 0; return r }},
		{"duplicate", func(r map[string]any) map[string]any { return r }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := map[string]any{}
			b, _ := json.Marshal(rule)
			_ = json.Unmarshal(b, &in)
			resp := h.do(t, create, map[string]any{"in": tt.change(in)})
			if len(resp.Errors) == 0 || h.writes() != 0 {
				t.Errorf("accepted or wrote: %d writes: %s", h.writes(), resp.Body)
			}
		})
	}
	const update = `mutation($rev: Int!, $in: UpdateRuleInput!) { updateRule(capabilityId: "CAP-R-001", ruleId: "rule-1", expectedRevision: $rev, input: $in) { revision order status name } }`
	h.ok(t, update, map[string]any{"rev": 1, "in": map[string]any{"name": "Severity v2", "order": 2}}, nil)
	h.ok(t, update, map[string]any{"rev": 2, "in": map[string]any{"status": "INACTIVE"}}, nil)
	var hist struct {
		Capability struct {
			Rules []struct {
				Order   int
				History struct {
					Nodes []struct {
						Name     string
						Revision int
						Order    int
					}
				}
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-R-001") { rules { order history { nodes { name revision order } } } } }`, nil, &hist)
	rs := hist.Capability.Rules
	if len(rs) != 1 || rs[0].Order != 2 || len(rs[0].History.Nodes) != 2 || rs[0].History.Nodes[0].Revision != 2 || rs[0].History.Nodes[1].Name != "Severity" || rs[0].History.Nodes[1].Order != 5 {
		t.Errorf("rules with history = %+v", rs)
	}
	a, _ = h.aggregates(t, "CAP-R-001")
	if a.TotalRules != 1 || a.ActiveRules != 0 {
		t.Errorf("aggregates after deactivation = %+v", a)
	}
	h.ok(t, `mutation { deleteRule(capabilityId: "CAP-R-001", ruleId: "rule-1") }`, nil, nil)
	a, _ = h.aggregates(t, "CAP-R-001")
	if a.TotalRules != 0 {
		t.Errorf("aggregates after delete = %+v", a)
	}
	h.check(t, "CAP-R-001")
}

func TestIdempotentRetries(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-I-001")
	vars := map[string]any{"cap": "CAP-I-001", "in": component("i-api-1", 1, "HEALTHY"), "tok": "tok-add-1"}
	var first, second struct {
		AddComponent struct {
			ComponentID string
			Revision    int
		}
	}
	h.ok(t, addComp, vars, &first)
	h.ok(t, addComp, vars, &second)
	if first != second {
		t.Errorf("retry returned %+v, first %+v", second, first)
	}
	if w := h.writes(); w != 0 {
		t.Errorf("retry made %d writes", w)
	}
	a, _ := h.aggregates(t, "CAP-I-001")
	if a.TotalComponents != 1 {
		t.Errorf("totalComponents = %d after a retried add, want 1", a.TotalComponents)
	}
	other := map[string]any{"cap": "CAP-I-001", "in": component("i-api-2", 2, ""), "tok": "tok-add-1"}
	resp := h.do(t, addComp, other)
	if len(resp.Errors) == 0 || h.writes() != 0 {
		t.Errorf("same token, other input = %s (%d writes)", resp.Body, h.writes())
	}
	// Concurrent retries of one request: one effect.
	var wg sync.WaitGroup
	vars3 := map[string]any{"cap": "CAP-I-001", "in": component("i-api-3", 3, ""), "tok": "tok-add-3"}
	for range 8 {
		wg.Go(func() { h.do(t, addComp, vars3) })
	}
	wg.Wait()
	a, _ = h.aggregates(t, "CAP-I-001")
	if a.TotalComponents != 2 {
		t.Errorf("totalComponents = %d after concurrent retries, want 2", a.TotalComponents)
	}
	h.check(t, "CAP-I-001")
	// Create and delete retried.
	cvars := map[string]any{"in": map[string]any{"capabilityId": "CAP-I-002", "name": "Two", "businessDomain": "testing", "priority": "LOW"}, "tok": "tok-create-2"}
	h.ok(t, createCap, cvars, nil)
	h.ok(t, createCap, cvars, nil)
	const del = `mutation($tok: String) { deleteCapability(id: "CAP-I-002", expectedRevision: 1, clientRequestToken: $tok) }`
	h.ok(t, del, map[string]any{"tok": "tok-del-2"}, nil)
	h.ok(t, del, map[string]any{"tok": "tok-del-2"}, nil)
}

// Twenty-four writers run mixed mutations against one capability; afterwards no update is lost
// and every aggregate equals a recount of the partition.
func TestConcurrentMutations(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-X-001")
	const writers = 24
	var wg sync.WaitGroup
	errs := make(chan string, writers*4)
	for w := range writers {
		wg.Go(func() {
			comp := fmt.Sprintf("x-c-%02d", w)
			if r := h.do(t, addComp, map[string]any{"cap": "CAP-X-001", "in": component(comp, w%90+1, []string{"HEALTHY", "DEGRADED", "UNHEALTHY"}[w%3])}); len(r.Errors) > 0 {
				errs <- r.Body
				return
			}
			switch w % 4 {
			case 0:
				r := h.do(t, `mutation($id: ID!) { startJob(capabilityId: "CAP-X-001", input: {jobId: $id, jobType: DEPLOYMENT, status: RUNNING}) { revision } }`, map[string]any{"id": "JOB-X-" + comp})
				if len(r.Errors) == 0 {
					r = h.do(t, `mutation($id: ID!) { updateJob(jobId: $id, expectedRevision: 1, input: {status: COMPLETED}) { status } }`, map[string]any{"id": "JOB-X-" + comp})
				}
				if len(r.Errors) > 0 {
					errs <- r.Body
				}
			case 1:
				r := h.do(t, `mutation($id: ID!) { createRule(capabilityId: "CAP-X-001", input: {ruleId: $id, name: "r", ruleType: OPERATIONAL, priority: LOW, order: 9, status: ACTIVE, conditions: [], actions: []}) { revision } }`, map[string]any{"id": "rule-" + comp})
				if len(r.Errors) > 0 {
					errs <- r.Body
				}
			case 2:
				r := h.do(t, `mutation($id: ID!) { updateComponent(capabilityId: "CAP-X-001", componentId: $id, expectedRevision: 1, input: {status: INACTIVE}) { revision } }`, map[string]any{"id": comp})
				if len(r.Errors) > 0 {
					errs <- r.Body
				}
			case 3:
				r := h.do(t, `mutation($id: ID!) { startJob(capabilityId: "CAP-X-001", input: {jobId: $id, jobType: SCALING}) { revision } }`, map[string]any{"id": "JOB-X-" + comp})
				if len(r.Errors) > 0 {
					errs <- r.Body
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent mutation failed: %s", e)
	}
	a, _ := h.aggregates(t, "CAP-X-001")
	if a.TotalComponents != writers || a.ActiveComponents != writers-writers/4 || a.TotalJobs != writers/2 || a.SuccessfulJobs != writers/4 || a.TotalRules != writers/4 {
		t.Errorf("aggregates after %d writers = %+v", writers, a)
	}
	h.check(t, "CAP-X-001")
}

// Eight writers update the same capability at once, each adding its tag by reading the
// capability and writing with expectedRevision, again on CONFLICT: on memdyn the conditions
// serialise them, so every tag is kept, each write is one revision, and the partition checks.
func TestConcurrentUpdatesOfOneCapability(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-W-001")
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan string, writers)
	for w := range writers {
		wg.Go(func() {
			tag := fmt.Sprintf("tag-%d", w)
			for attempt := 0; attempt < 100; attempt++ {
				var cur struct {
					Capability struct {
						Revision int
						Tags     []string
					}
				}
				r := h.do(t, `query { capability(id: "CAP-W-001") { revision tags } }`, nil)
				if err := json.Unmarshal(r.Data, &cur); err != nil || len(r.Errors) > 0 {
					errs <- r.Body
					return
				}
				r = h.do(t, `mutation($rev: Int!, $tags: [String!]) { updateCapability(id: "CAP-W-001", expectedRevision: $rev, input: {tags: $tags}) { revision } }`,
					map[string]any{"rev": cur.Capability.Revision, "tags": append(cur.Capability.Tags, tag)})
				if len(r.Errors) == 0 {
					return
				}
				if r.code(0) != "CONFLICT" {
					errs <- r.Body
					return
				}
			}
			errs <- tag + ": still conflicting after 100 attempts"
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent update failed: %s", e)
	}
	var out struct {
		Capability struct {
			Revision int
			Tags     []string
			History  struct{ Nodes []struct{ Revision int } }
		}
	}
	h.ok(t, `query { capability(id: "CAP-W-001") { revision tags history(first: 50) { nodes { revision } } } }`, nil, &out)
	if out.Capability.Revision != 1+writers || len(out.Capability.Tags) != writers {
		t.Errorf("after %d writers: revision %d, tags %v; want revision %d and every tag", writers, out.Capability.Revision, out.Capability.Tags, 1+writers)
	}
	if n := len(out.Capability.History.Nodes); n != writers {
		t.Errorf("history has %d versions, want %d (one per replaced revision)", n, writers)
	}
	h.check(t, "CAP-W-001")
}
