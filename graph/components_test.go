package graph_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/sample"
)

// Query.components over the sample, page by page through GraphQL, equals a brute force over
// the sample's components, with an exact totalCount on every page.
func TestComponentsFilterEndToEnd(t *testing.T) {
	h := newHarness(t)
	var all []*catalog.Component
	for _, b := range sample.Catalogue(testNow) {
		all = append(all, b.Components...)
	}
	tests := []struct {
		name   string
		filter map[string]any
		match  func(c *catalog.Component) bool
	}{
		{"everything", nil, func(*catalog.Component) bool { return true }},
		{"team, folded", map[string]any{"team": "BACKEND team"}, func(c *catalog.Component) bool {
			return c.Ownership != nil && catalog.Fold(c.Ownership.Team) == "backend team"
		}},
		{"search by prefix", map[string]any{"search": "Alert"}, func(c *catalog.Component) bool {
			return slices.ContainsFunc(catalog.Words(c.ComponentID+" "+c.Name+" "+c.ComponentType), func(w string) bool { return strings.HasPrefix(w, "alert") })
		}},
		{"types and statuses", map[string]any{"types": []string{"api-server", "database"}, "statuses": []string{"ACTIVE"}}, func(c *catalog.Component) bool {
			return (c.ComponentType == "api-server" || c.ComponentType == "database") && c.Status == catalog.ComponentActive
		}},
		{"health", map[string]any{"healthStatuses": []string{"HEALTHY"}}, func(c *catalog.Component) bool {
			return catalog.ComponentHealthStatus(c) == catalog.HealthHealthy
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []string
			for _, c := range all {
				if tt.match(c) {
					want = append(want, c.CapabilityID+"/"+c.ComponentID)
				}
			}
			slices.Sort(want)
			if len(want) == 0 {
				t.Fatal("the filter matches nothing in the sample: pick another")
			}
			var got []string
			var after any
			for {
				var out struct {
					Components struct {
						TotalCount int
						Nodes      []struct{ ComponentID, CapabilityID string }
						PageInfo   struct {
							HasNextPage bool
							EndCursor   string
						}
					}
				}
				h.ok(t, `query($f: ComponentFilter, $after: String) { components(filter: $f, first: 3, after: $after) {
					totalCount nodes { componentId capabilityId } pageInfo { hasNextPage endCursor } } }`,
					map[string]any{"f": tt.filter, "after": after}, &out)
				if out.Components.TotalCount != len(want) {
					t.Errorf("totalCount = %d, want %d", out.Components.TotalCount, len(want))
				}
				for _, n := range out.Components.Nodes {
					got = append(got, n.CapabilityID+"/"+n.ComponentID)
				}
				if !out.Components.PageInfo.HasNextPage {
					break
				}
				after = out.Components.PageInfo.EndCursor
			}
			if !slices.Equal(got, want) {
				t.Errorf("components = %v\nwant %v", got, want)
			}
		})
	}
}

// Query.activeJobs lists the sample's PENDING and RUNNING jobs oldest first, filtered by type,
// with their totalCount; starting one adds it, finishing it removes it.
func TestActiveJobsEndToEnd(t *testing.T) {
	h := newHarness(t)
	type jobs struct {
		ActiveJobs struct {
			TotalCount int
			Nodes      []struct {
				JobID, StartTime string
				Status           string
			}
		}
	}
	var want []*catalog.Job
	for _, b := range sample.Catalogue(testNow) {
		for _, j := range b.Jobs {
			if j.Status == catalog.JobPending || j.Status == catalog.JobRunning {
				want = append(want, j)
			}
		}
	}
	slices.SortFunc(want, func(a, b *catalog.Job) int { return a.StartTime.Compare(b.StartTime.Time) })
	var out jobs
	h.ok(t, `{ activeJobs { totalCount nodes { jobId startTime status } } }`, nil, &out)
	if out.ActiveJobs.TotalCount != len(want) || len(out.ActiveJobs.Nodes) != len(want) {
		t.Fatalf("activeJobs = %+v, want %d jobs", out.ActiveJobs, len(want))
	}
	for i, n := range out.ActiveJobs.Nodes {
		if n.JobID != want[i].JobID {
			t.Errorf("activeJobs[%d] = %s, want %s (oldest first)", i, n.JobID, want[i].JobID)
		}
	}
	h.ok(t, `{ activeJobs(jobTypes: [SCALING, EMERGENCY]) { totalCount nodes { jobId } } }`, nil, &out)
	if out.ActiveJobs.TotalCount != 2 || len(out.ActiveJobs.Nodes) != 2 {
		t.Errorf("activeJobs(SCALING, EMERGENCY) = %+v, want JOB-SCALE-FRAUD-103 and JOB-EMERG-PAY-201", out.ActiveJobs)
	}

	var started struct {
		StartJob struct{ JobID, Status string }
	}
	h.ok(t, `mutation { startJob(capabilityId: "CAP-ALERT-MGT-001", input: {jobId: "JOB-NEW-1", jobType: ROLLBACK, status: PENDING}) { jobId status } }`, nil, &started)
	h.ok(t, `{ activeJobs(jobTypes: [ROLLBACK]) { totalCount nodes { jobId status } } }`, nil, &out)
	if out.ActiveJobs.TotalCount != 1 || len(out.ActiveJobs.Nodes) != 1 || out.ActiveJobs.Nodes[0].JobID != "JOB-NEW-1" {
		t.Fatalf("activeJobs(ROLLBACK) after startJob = %+v", out.ActiveJobs)
	}
	h.ok(t, `mutation { updateJob(jobId: "JOB-NEW-1", expectedRevision: 1, input: {status: CANCELLED}) { status } }`, nil, nil)
	h.ok(t, `{ activeJobs(jobTypes: [ROLLBACK]) { totalCount nodes { jobId } } }`, nil, &out)
	if out.ActiveJobs.TotalCount != 0 || len(out.ActiveJobs.Nodes) != 0 {
		t.Errorf("activeJobs(ROLLBACK) after the cancel = %+v, want none", out.ActiveJobs)
	}
}

// Bad filters and cursors are BAD_USER_INPUT, answered before any request.
func TestComponentsAndActiveJobsBadInput(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Components struct{ PageInfo struct{ EndCursor string } }
	}
	h.ok(t, `{ components(filter: {types: ["api-server"]}, first: 1) { pageInfo { endCursor } } }`, nil, &out)
	for _, q := range []string{
		`{ components(filter: {team: "--"}) { nodes { name } } }`,
		`{ components(filter: {types: ["bad#type"]}) { nodes { name } } }`,
		`{ components(first: 0) { nodes { name } } }`,
		`{ components(first: 101) { nodes { name } } }`,
		`{ components(filter: {types: ["database"]}, after: "` + out.Components.PageInfo.EndCursor + `") { nodes { name } } }`,
		`{ activeJobs(first: 0) { nodes { jobId } } }`,
		`{ activeJobs(after: "garbage") { nodes { jobId } } }`,
	} {
		h.env.Counter.Reset()
		resp := h.do(t, q, nil)
		if resp.code(0) != "BAD_USER_INPUT" {
			t.Errorf("%s = %s, want BAD_USER_INPUT", q, resp.Body)
		}
		if n := h.env.Counter.Total(); n != 0 {
			t.Errorf("%s sent %d requests, want 0", q, n)
		}
	}
}
