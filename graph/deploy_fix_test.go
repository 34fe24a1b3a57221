package graph_test

import (
	"strings"
	"testing"
	"time"
)

// Regression tests of the defects a probe found in the deployment gates and the automatic
// rollback (issue 21, section 1).

// jobChangeDetails returns the details of the capability's job change records naming jobID.
func (h *harness) jobChangeDetails(t *testing.T, cap, jobID string) []string {
	t.Helper()
	var feed struct {
		Capability struct {
			Changes struct {
				Nodes []struct {
					Entity, EntityID string
					Detail           *string
				}
			}
		}
	}
	h.ok(t, `query($id: ID!) { capability(id: $id) { changes(first: 100, entities: [JOB]) { nodes { entity entityId detail } } } }`, map[string]any{"id": cap}, &feed)
	var out []string
	for _, c := range feed.Capability.Changes.Nodes {
		if c.EntityID == jobID && c.Detail != nil {
			out = append(out, *c.Detail)
		}
	}
	return out
}

func (h *harness) jobStatus(t *testing.T, id string) deployJob {
	t.Helper()
	var out struct{ Job deployJob }
	h.ok(t, `query($id: ID!) { job(id: $id) { `+jobView+` } }`, map[string]any{"id": id}, &out)
	return out.Job
}

// F4: a breaching sample timestamped before a job's startTime does not roll it back; one after
// it does.
func TestBreachIgnoresSamplesBeforeStart(t *testing.T) {
	h := deployHarness(t, "CAP-F4-001")
	h.ok(t, deployStart, map[string]any{"cap": "CAP-F4-001", "in": deployInput("CAP-F4-001", "JOB-F4-1", "DEPLOYMENT", "RUNNING", passedPre, nil, true)}, nil)
	h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-F4-001", "cap-f4-001-a", testNow.Add(-30*24*time.Hour), 50, 5000)}}, nil)
	if j := h.jobStatus(t, "JOB-F4-1"); j.Status != "RUNNING" || j.Revision != 1 {
		t.Fatalf("a sample 30 days before the job started moved it: %s revision %d", j.Status, j.Revision)
	}
	h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-F4-001", "cap-f4-001-a", testNow, 50, 5000)}}, nil)
	if j := h.jobStatus(t, "JOB-F4-1"); j.Status != "ROLLED_BACK" {
		t.Errorf("a sample at the job's start left it %s", j.Status)
	}
	h.check(t, "CAP-F4-001")
}

// F5: a job naming one component twice among its targets is refused (it would count the
// component once per target in deploymentsCompleted and totalArtifactsDeployed), by startJob and
// by updateJob, naming the duplicate, and nothing is written.
func TestDeploymentDuplicateTargetsRefused(t *testing.T) {
	h := deployHarness(t, "CAP-F5-001")
	targets := make([]any, 40)
	for i := range targets {
		targets[i] = map[string]any{"componentId": "cap-f5-001-a", "fromVersion": "1.0", "toVersion": "2.0"}
	}
	in := deployInput("CAP-F5-001", "JOB-F5-1", "DEPLOYMENT", "RUNNING", passedPre, nil, false)
	in["targetComponents"] = targets
	resp := h.do(t, deployStart, map[string]any{"cap": "CAP-F5-001", "in": in})
	if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "targetComponents[1].componentId" || h.writes() != 0 {
		t.Fatalf("40 targets of one component = %s (%d writes)", resp.Body, h.writes())
	}
	h.ok(t, deployStart, map[string]any{"cap": "CAP-F5-001", "in": deployInput("CAP-F5-001", "JOB-F5-2", "DEPLOYMENT", "RUNNING", passedPre, nil, false)}, nil)
	resp = h.do(t, deployUpdate, map[string]any{"id": "JOB-F5-2", "rev": 1, "in": map[string]any{"status": "COMPLETED", "targetComponents": []any{
		map[string]any{"componentId": "cap-f5-001-b", "toVersion": "2.0"}, map[string]any{"componentId": "cap-f5-001-a", "toVersion": "2.0"}, map[string]any{"componentId": "cap-f5-001-b", "toVersion": "3.0"}}}})
	if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "targetComponents[2].componentId" || h.writes() != 0 {
		t.Fatalf("updateJob with a duplicate target = %s (%d writes)", resp.Body, h.writes())
	}
	if j := h.jobStatus(t, "JOB-F5-2"); j.Status != "RUNNING" || j.Revision != 1 {
		t.Errorf("after the refusal the job is %s revision %d", j.Status, j.Revision)
	}
	if v := h.versions(t, "CAP-F5-001"); v["cap-f5-001-a"] != "1.0" || v["cap-f5-001-b"] != "1.0" {
		t.Errorf("versions after the refusals = %v", v)
	}
}

// F3: rolling back a deployment (a breach, a failed gate or a client) restores a target's
// fromVersion only while the component still has the job's toVersion: a RUNNING deployment
// rolled back after another job moved its component leaves the newer version, and its change
// record says so. A rollback job completing still sets fromVersion.
func TestRollbackKeepsNewerVersion(t *testing.T) {
	h := deployHarness(t, "CAP-F3-001")
	one := func(comp, from, to string) []any {
		return []any{map[string]any{"componentId": comp, "fromVersion": from, "toVersion": to}}
	}
	a := deployInput("CAP-F3-001", "JOB-F3-A", "DEPLOYMENT", "RUNNING", passedPre, nil, true)
	a["targetComponents"], a["startTime"] = one("cap-f3-001-a", "0.0.1", "2.0"), testNow.Add(-time.Hour).Format(time.RFC3339)
	h.ok(t, deployStart, map[string]any{"cap": "CAP-F3-001", "in": a}, nil)
	b := deployInput("CAP-F3-001", "JOB-F3-B", "DEPLOYMENT", "RUNNING", passedPre, nil, false)
	b["targetComponents"] = one("cap-f3-001-a", "1.0", "7.0")
	h.ok(t, deployStart, map[string]any{"cap": "CAP-F3-001", "in": b}, nil)
	h.ok(t, deployUpdate, map[string]any{"id": "JOB-F3-B", "rev": 1, "in": map[string]any{"status": "COMPLETED"}}, nil)
	if v := h.versions(t, "CAP-F3-001"); v["cap-f3-001-a"] != "7.0" {
		t.Fatalf("versions after job B = %v", v)
	}
	// A breach of A's target: A is rolled back, the component keeps B's 7.0.
	h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-F3-001", "cap-f3-001-a", testNow, 50, 5000)}}, nil)
	if j := h.jobStatus(t, "JOB-F3-A"); j.Status != "ROLLED_BACK" || j.TargetComponents[0].Status != "rolled_back" {
		t.Errorf("job A after the breach: %+v", j)
	}
	if v := h.versions(t, "CAP-F3-001"); v["cap-f3-001-a"] != "7.0" {
		t.Errorf("the automatic rollback of a RUNNING job moved the component: %v, want 7.0", v)
	}
	if d := strings.Join(h.jobChangeDetails(t, "CAP-F3-001", "JOB-F3-A"), "\n"); !strings.Contains(d, "automatic rollback: ") || !strings.Contains(d, "cap-f3-001-a left at 7.0") {
		t.Errorf("job A's change details = %q", d)
	}
	// A client rolls back a RUNNING deployment of b (at 1.0, the job's toVersion 2.0): b stays.
	c := deployInput("CAP-F3-001", "JOB-F3-C", "DEPLOYMENT", "RUNNING", passedPre, nil, false)
	c["targetComponents"] = one("cap-f3-001-b", "0.0.1", "2.0")
	h.ok(t, deployStart, map[string]any{"cap": "CAP-F3-001", "in": c}, nil)
	resp := h.ok(t, deployUpdate, map[string]any{"id": "JOB-F3-C", "rev": 1, "in": map[string]any{"status": "ROLLED_BACK"}}, nil)
	if n := resp.Extensions.DynamoDB.Requests; n != 5 {
		t.Errorf("updateJob to ROLLED_BACK: %d requests, want 5 (%v)", n, resp.Extensions.DynamoDB.Operations)
	}
	if v := h.versions(t, "CAP-F3-001"); v["cap-f3-001-b"] != "1.0" {
		t.Errorf("a client's rollback of a RUNNING job moved the component: %v, want 1.0", v)
	}
	// A rollback job completing sets fromVersion whatever the component has.
	d := deployInput("CAP-F3-001", "JOB-F3-D", "ROLLBACK", "RUNNING", nil, nil, false)
	d["targetComponents"] = one("cap-f3-001-a", "0.0.9", "5.0")
	h.ok(t, deployStart, map[string]any{"cap": "CAP-F3-001", "in": d}, nil)
	h.ok(t, deployUpdate, map[string]any{"id": "JOB-F3-D", "rev": 1, "in": map[string]any{"status": "COMPLETED"}}, nil)
	if v := h.versions(t, "CAP-F3-001"); v["cap-f3-001-a"] != "0.0.9" {
		t.Errorf("versions after the rollback job = %v, want a 0.0.9", v)
	}
	h.check(t, "CAP-F3-001")
}

// F6: a job whose target component was removed can still be moved on: cancelled, failed,
// completed, rolled back by a client or by a failed gate. The removed component is not written
// back (the job's change detail says it was skipped), and check holds. A target the update adds
// or changes must still name a component of the capability.
func TestJobOfRemovedComponentCloses(t *testing.T) {
	h := deployHarness(t, "CAP-F6-001")
	for _, j := range []struct {
		id        string
		automatic bool
	}{{"JOB-F6-X", false}, {"JOB-F6-Y", false}, {"JOB-F6-Z", false}, {"JOB-F6-W", true}, {"JOB-F6-V", false}} {
		h.ok(t, deployStart, map[string]any{"cap": "CAP-F6-001", "in": deployInput("CAP-F6-001", j.id, "DEPLOYMENT", "RUNNING", passedPre, nil, j.automatic)}, nil)
	}
	h.ok(t, `mutation { removeComponent(capabilityId: "CAP-F6-001", componentId: "cap-f6-001-b", cascade: true) }`, nil, nil)
	target := func(comp, to string) map[string]any {
		return map[string]any{"componentId": comp, "fromVersion": "1.0", "toVersion": to, "status": "pending"}
	}
	// Adding a target of a component that is not there, or changing the removed one's: refused.
	for _, tt := range []struct {
		targets []any
		field   string
	}{
		{[]any{target("cap-f6-001-a", "2.0"), target("cap-f6-001-b", "2.0"), target("cap-f6-001-ghost", "2.0")}, "targetComponents[2].componentId"},
		{[]any{target("cap-f6-001-a", "2.0"), target("cap-f6-001-b", "3.0")}, "targetComponents[1].componentId"},
	} {
		resp := h.do(t, deployUpdate, map[string]any{"id": "JOB-F6-V", "rev": 1, "in": map[string]any{"targetComponents": tt.targets}})
		if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != tt.field || h.writes() != 0 {
			t.Errorf("updateJob with targets %v = %s (%d writes)", tt.targets, resp.Body, h.writes())
		}
	}
	for _, tt := range []struct {
		id   string
		in   map[string]any
		want string
	}{
		{"JOB-F6-X", map[string]any{"status": "CANCELLED"}, "CANCELLED"},
		{"JOB-F6-V", map[string]any{"status": "FAILED", "targetComponents": []any{target("cap-f6-001-a", "2.0"), target("cap-f6-001-b", "2.0")}}, "FAILED"},
		{"JOB-F6-Z", map[string]any{"status": "ROLLED_BACK"}, "ROLLED_BACK"},
		{"JOB-F6-W", map[string]any{"validation": map[string]any{"preDeployment": passedPre, "postDeployment": map[string]any{"functionalTests": "failed"}}}, "ROLLED_BACK"},
		{"JOB-F6-Y", map[string]any{"status": "COMPLETED"}, "COMPLETED"},
	} {
		var out struct{ UpdateJob deployJob }
		resp := h.ok(t, deployUpdate, map[string]any{"id": tt.id, "rev": 1, "in": tt.in}, &out)
		if out.UpdateJob.Status != tt.want {
			t.Errorf("%s: status %s, want %s", tt.id, out.UpdateJob.Status, tt.want)
		}
		if n := resp.Extensions.DynamoDB.Requests; n != 5 {
			t.Errorf("%s: %d requests, want 5 (%v)", tt.id, n, resp.Extensions.DynamoDB.Operations)
		}
		if v := h.versions(t, "CAP-F6-001"); len(v) != 1 {
			t.Errorf("after %s the components are %v: the removed one is back", tt.id, v)
		}
	}
	if v := h.versions(t, "CAP-F6-001"); v["cap-f6-001-a"] != "2.0" {
		t.Errorf("versions = %v, want a 2.0 (job Y completed last)", v)
	}
	if d := strings.Join(h.jobChangeDetails(t, "CAP-F6-001", "JOB-F6-Y"), "\n"); !strings.Contains(d, "cap-f6-001-b no longer exists") {
		t.Errorf("job Y's change details = %q", d)
	}
	h.check(t, "CAP-F6-001")
}
