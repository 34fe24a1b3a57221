package graph_test

import (
	"fmt"
	"math"
	"sort"
	"testing"
)

type summary struct {
	CapabilityCount int
	ComponentCount  int
	ByDomain        []struct {
		Domain string
		Count  int
	}
	ByStatus []struct {
		Status string
		Count  int
	}
	ByPriority []struct {
		Priority string
		Count    int
	}
	ByHealthStatus []struct {
		Status string
		Count  int
	}
	MeanHealthScore  *float64
	ComponentsByType []struct {
		Type  string
		Count int
	}
	ComponentsByHealthStatus []struct {
		Status string
		Count  int
	}
	ActiveJobs       int
	ActiveJobsByType []struct {
		JobType string
		Count   int
	}
}

const summaryQuery = `{ catalogueSummary { capabilityCount componentCount byDomain { domain count } byStatus { status count }
	byPriority { priority count } byHealthStatus { status count } meanHealthScore componentsByType { type count }
	componentsByHealthStatus { status count } activeJobs activeJobsByType { jobType count } } }`

func readSummary(tb testing.TB, h *harness) summary {
	tb.Helper()
	var out struct{ CatalogueSummary summary }
	resp := h.ok(tb, summaryQuery, nil, &out)
	if resp.Extensions.DynamoDB.Requests != 1 {
		tb.Errorf("catalogueSummary read %d requests, want 1 (%v)", resp.Extensions.DynamoDB.Requests, resp.Extensions.DynamoDB.Operations)
	}
	return out.CatalogueSummary
}

// catalogueSummary equals what the capability list and the capabilities' components say, in
// the documented orders; a write moves it at once.
func TestCatalogueSummary(t *testing.T) {
	h := newHarness(t)
	var list struct {
		Capabilities struct {
			Nodes []struct {
				BusinessDomain, Status, Priority string
				Aggregates                       struct {
					HealthScore  *float64
					HealthStatus string
				}
				Components []struct {
					ComponentType string
					Health        *struct{ Status string }
				}
				Jobs struct {
					Nodes []struct{ JobType, Status string }
				}
			}
		}
	}
	h.ok(t, `{ capabilities(first: 100) { nodes { businessDomain status priority aggregates { healthScore healthStatus }
		components { componentType health { status } } jobs(first: 100) { nodes { jobType status } } } } }`, nil, &list)
	domains, statuses, priorities, health, types, compHealth, jobs := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	sum, n, comps, active := 0.0, 0, 0, 0
	for _, c := range list.Capabilities.Nodes {
		domains[c.BusinessDomain]++
		statuses[c.Status]++
		priorities[c.Priority]++
		health[c.Aggregates.HealthStatus]++
		if c.Aggregates.HealthScore != nil {
			sum += *c.Aggregates.HealthScore
			n++
		}
		for _, comp := range c.Components {
			comps++
			types[comp.ComponentType]++
			st := "UNKNOWN"
			if comp.Health != nil && comp.Health.Status != "" {
				st = comp.Health.Status
			}
			compHealth[st]++
		}
		for _, j := range c.Jobs.Nodes {
			if j.Status == "PENDING" || j.Status == "RUNNING" {
				jobs[j.JobType]++
				active++
			}
		}
	}
	s := readSummary(t, h)
	if s.CapabilityCount != len(list.Capabilities.Nodes) || s.ComponentCount != comps || s.ActiveJobs != active {
		t.Errorf("counts = %d capabilities, %d components, %d active jobs; want %d, %d, %d", s.CapabilityCount, s.ComponentCount, s.ActiveJobs, len(list.Capabilities.Nodes), comps, active)
	}
	if s.MeanHealthScore == nil || math.Abs(*s.MeanHealthScore-sum/float64(n)) > 1e-9 {
		t.Errorf("meanHealthScore = %v, want %v", s.MeanHealthScore, sum/float64(n))
	}
	var gotDomains []string
	for _, d := range s.ByDomain {
		gotDomains = append(gotDomains, d.Domain)
		if d.Count != domains[d.Domain] {
			t.Errorf("byDomain %s = %d, want %d", d.Domain, d.Count, domains[d.Domain])
		}
	}
	if !sort.StringsAreSorted(gotDomains) || len(gotDomains) != len(domains) {
		t.Errorf("byDomain = %v: want every domain once, in order", gotDomains)
	}
	check := func(name string, got []struct {
		Status string
		Count  int
	}, want map[string]int, order []string) {
		if len(got) != len(order) {
			t.Errorf("%s has %d entries, want %d (every value, zeros included)", name, len(got), len(order))
			return
		}
		for i, e := range got {
			if e.Status != order[i] || e.Count != want[e.Status] {
				t.Errorf("%s[%d] = %s %d, want %s %d", name, i, e.Status, e.Count, order[i], want[order[i]])
			}
		}
	}
	healthOrder := []string{"HEALTHY", "DEGRADED", "UNHEALTHY", "UNKNOWN"}
	check("byStatus", s.ByStatus, statuses, []string{"PLANNING", "DEVELOPMENT", "ACTIVE", "DEPRECATED", "RETIRING"})
	check("byHealthStatus", s.ByHealthStatus, health, healthOrder)
	check("componentsByHealthStatus", s.ComponentsByHealthStatus, compHealth, healthOrder)
	for i, p := range []string{"CRITICAL", "HIGH", "MEDIUM", "LOW"} {
		if s.ByPriority[i].Priority != p || s.ByPriority[i].Count != priorities[p] {
			t.Errorf("byPriority[%d] = %+v, want %s %d", i, s.ByPriority[i], p, priorities[p])
		}
	}
	for _, ct := range s.ComponentsByType {
		if ct.Count != types[ct.Type] {
			t.Errorf("componentsByType %s = %d, want %d", ct.Type, ct.Count, types[ct.Type])
		}
	}
	if len(s.ComponentsByType) != len(types) || len(s.ActiveJobsByType) != 6 {
		t.Errorf("componentsByType %d entries (want %d), activeJobsByType %d (want 6)", len(s.ComponentsByType), len(types), len(s.ActiveJobsByType))
	}
	for _, j := range s.ActiveJobsByType {
		if j.Count != jobs[j.JobType] {
			t.Errorf("activeJobsByType %s = %d, want %d", j.JobType, j.Count, jobs[j.JobType])
		}
	}

	// A component of a new type and team, and a job: the summary and the owner move at once.
	h.ok(t, `mutation { addComponent(capabilityId: "CAP-ALERT-MGT-001", input: {componentId: "counted-1", name: "c", componentType: "brand-new-type", order: 71,
		ownership: {team: "Équipe Comptée"}}) { componentId } }`, nil, nil)
	h.ok(t, `mutation { startJob(capabilityId: "CAP-ALERT-MGT-001", input: {jobId: "JOB-COUNTED-1", jobType: ROLLBACK, status: RUNNING}) { jobId } }`, nil, nil)
	after := readSummary(t, h)
	if after.ComponentCount != s.ComponentCount+1 || after.ActiveJobs != s.ActiveJobs+1 || after.CapabilityCount != s.CapabilityCount {
		t.Errorf("after a component and a job: %d components, %d active jobs; want %d, %d", after.ComponentCount, after.ActiveJobs, s.ComponentCount+1, s.ActiveJobs+1)
	}
	found := false
	for _, ct := range after.ComponentsByType {
		found = found || (ct.Type == "brand-new-type" && ct.Count == 1)
	}
	if !found {
		t.Errorf("componentsByType after the write = %+v: no brand-new-type 1", after.ComponentsByType)
	}
	var owner struct {
		Owner *struct {
			Name                            string
			CapabilityCount, ComponentCount int
		}
	}
	resp := h.ok(t, `{ owner(name: "EQUIPE comptée") { name capabilityCount componentCount } }`, nil, &owner)
	if owner.Owner == nil || owner.Owner.Name != "equipe comptee" || owner.Owner.CapabilityCount != 1 || owner.Owner.ComponentCount != 1 {
		t.Errorf("owner(EQUIPE comptée) = %s", resp.Data)
	}
	if resp.Extensions.DynamoDB.Requests != 1 {
		t.Errorf("owner(name) read %d requests, want 1", resp.Extensions.DynamoDB.Requests)
	}
	h.ok(t, `{ owner(name: "no such team") { name } }`, nil, &owner)
	if owner.Owner != nil {
		t.Errorf("owner(no such team) = %+v, want null", owner.Owner)
	}
}

// owners pages through every owner in name order, totalCount on each page, one request a page;
// a cursor of another query is BAD_USER_INPUT.
func TestOwnersConnection(t *testing.T) {
	h := newHarness(t)
	type page struct {
		Owners struct {
			TotalCount int
			Edges      []struct {
				Cursor string
				Node   struct {
					Name                            string
					CapabilityCount, ComponentCount int
				}
			}
			Nodes    []struct{ Name string }
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	var all page
	h.ok(t, `{ owners(first: 100) { totalCount edges { cursor node { name capabilityCount componentCount } } nodes { name } pageInfo { hasNextPage endCursor } } }`, nil, &all)
	if all.Owners.TotalCount != len(all.Owners.Edges) || all.Owners.PageInfo.HasNextPage || len(all.Owners.Edges) < 5 {
		t.Fatalf("owners(first: 100) = %d of totalCount %d, hasNextPage %v", len(all.Owners.Edges), all.Owners.TotalCount, all.Owners.PageInfo.HasNextPage)
	}
	var names []string
	for _, e := range all.Owners.Edges {
		names = append(names, e.Node.Name)
		if e.Node.CapabilityCount+e.Node.ComponentCount == 0 {
			t.Errorf("owner %q owns nothing", e.Node.Name)
		}
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("owners not in name order: %q", names)
	}
	var paged []string
	after := ""
	for i := 0; ; i++ {
		var p page
		resp := h.ok(t, `query($after: String) { owners(first: 3, after: $after) { totalCount edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"after": after}, &p)
		if resp.Extensions.DynamoDB.Requests != 1 {
			t.Errorf("page %d read %d requests, want 1", i, resp.Extensions.DynamoDB.Requests)
		}
		if p.Owners.TotalCount != len(names) {
			t.Errorf("page %d totalCount = %d, want %d", i, p.Owners.TotalCount, len(names))
		}
		for _, e := range p.Owners.Edges {
			paged = append(paged, e.Node.Name)
		}
		if !p.Owners.PageInfo.HasNextPage {
			break
		}
		if len(p.Owners.Edges) != 3 {
			t.Errorf("page %d is short (%d) while more follow", i, len(p.Owners.Edges))
		}
		after = *p.Owners.PageInfo.EndCursor
	}
	if fmt.Sprint(paged) != fmt.Sprint(names) {
		t.Errorf("paged owners = %q\nwant %q", paged, names)
	}
	var caps struct {
		Capabilities struct{ PageInfo struct{ EndCursor string } }
	}
	h.ok(t, `{ capabilities(first: 1) { pageInfo { endCursor } } }`, nil, &caps)
	resp := h.do(t, `query($after: String) { owners(after: $after) { totalCount } }`, map[string]any{"after": caps.Capabilities.PageInfo.EndCursor})
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("owners with a capabilities cursor = %s, want BAD_USER_INPUT", resp.Body)
	}
}
