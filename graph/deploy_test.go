package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Deployments drive the catalogue (issue 21, section 1): gates, version moves, maintained
// metrics and automatic rollback.

const (
	deployStart  = `mutation($cap: ID!, $in: JobInput!) { startJob(capabilityId: $cap, input: $in) { jobId status revision } }`
	deployUpdate = `mutation($id: ID!, $rev: Int!, $in: UpdateJobInput!) { updateJob(jobId: $id, expectedRevision: $rev, input: $in) { ` + jobView + ` } }`
	jobView      = `jobId jobType status revision duration targetComponents { componentId fromVersion toVersion status } metrics { affectedUsers downtime rollbacksTriggered deploymentsCompleted totalArtifactsDeployed } validation { preDeployment { healthChecks smokeTests securityScan } postDeployment { functionalTests performanceTests integrationTests } }`
)

type deployJob struct {
	JobID, JobType, Status string
	Revision               int
	Duration               *int
	TargetComponents       []struct{ ComponentID, FromVersion, ToVersion, Status string }
	Metrics                *struct{ AffectedUsers, Downtime, RollbacksTriggered, DeploymentsCompleted, TotalArtifactsDeployed int }
}

// deployHarness is a harness with capability cap holding components {cap}-a and {cap}-b at
// version 1.0.
func deployHarness(t *testing.T, cap string) *harness {
	t.Helper()
	h := newHarness(t)
	h.env.RequireTransactions(t)
	h.createCapability(t, cap)
	for i, id := range []string{"a", "b"} {
		c := component(strings.ToLower(cap)+"-"+id, i+1, "HEALTHY")
		c["version"] = "1.0"
		h.ok(t, addComp, map[string]any{"cap": cap, "in": c}, nil)
	}
	return h
}

// deployInput is a deployment job of both components (1.0 -> 2.0) with the given gates.
func deployInput(cap, id, jobType, status string, pre, post map[string]any, automatic bool) map[string]any {
	comp := strings.ToLower(cap)
	in := map[string]any{"jobId": id, "jobType": jobType, "status": status,
		"targetComponents": []any{
			map[string]any{"componentId": comp + "-a", "fromVersion": "1.0", "toVersion": "2.0", "status": "pending"},
			map[string]any{"componentId": comp + "-b", "fromVersion": "1.0", "toVersion": "2.0", "status": "pending"},
		},
		"strategy": map[string]any{"type": "rolling", "rollback": map[string]any{"automatic": automatic, "threshold": map[string]any{"errorRate": 5, "latency": 500}}},
		"metrics":  map[string]any{"affectedUsers": 3, "downtime": 0, "rollbacksTriggered": 7, "deploymentsCompleted": 9, "totalArtifactsDeployed": 9},
	}
	v := map[string]any{}
	if pre != nil {
		v["preDeployment"] = pre
	}
	if post != nil {
		v["postDeployment"] = post
	}
	if len(v) > 0 {
		in["validation"] = v
	}
	return in
}

func (h *harness) versions(t *testing.T, cap string) map[string]string {
	t.Helper()
	var out struct {
		Capability struct {
			Components []struct{ ComponentID, Version string }
		}
	}
	h.ok(t, `query($id: ID!) { capability(id: $id) { components { componentId version } } }`, map[string]any{"id": cap}, &out)
	m := map[string]string{}
	for _, c := range out.Capability.Components {
		m[c.ComponentID] = c.Version
	}
	return m
}

var passedPre = map[string]any{"healthChecks": "passed", "smokeTests": "passed", "securityScan": "passed"}
var passedPost = map[string]any{"functionalTests": "passed", "performanceTests": "passed", "integrationTests": "passed"}

// Every gate rule, as a table: a job started as given, then updateJob with the given input.
// A refusal is BAD_USER_INPUT naming the gate and writes nothing; a failed gate moves the job
// itself.
func TestDeploymentGates(t *testing.T) {
	h := deployHarness(t, "CAP-G-001")
	pendingPre := map[string]any{"healthChecks": "passed", "smokeTests": "pending", "securityScan": "passed"}
	failedPre := map[string]any{"healthChecks": "passed", "smokeTests": "passed", "securityScan": "failed"}
	pendingPost := map[string]any{"functionalTests": "passed", "performanceTests": "pending"}
	failedPost := map[string]any{"functionalTests": "failed"}
	for i, tt := range []struct {
		name            string
		jobType, status string // the job as started
		pre, post       map[string]any
		automatic       bool
		update          map[string]any
		want            string // the status after, or the refusal's field
		code            string
	}{
		{"running with pre gates passed", "DEPLOYMENT", "PENDING", passedPre, nil, false, map[string]any{"status": "RUNNING"}, "RUNNING", ""},
		{"running without gates", "DEPLOYMENT", "PENDING", nil, nil, false, map[string]any{"status": "RUNNING"}, "RUNNING", ""},
		{"running with a pre gate pending", "DEPLOYMENT", "PENDING", pendingPre, nil, false, map[string]any{"status": "RUNNING"}, "validation.preDeployment.smokeTests", "BAD_USER_INPUT"},
		{"rollback job running with a pre gate pending", "ROLLBACK", "PENDING", pendingPre, nil, false, map[string]any{"status": "RUNNING"}, "validation.preDeployment.smokeTests", "BAD_USER_INPUT"},
		{"scaling job is not gated", "SCALING", "PENDING", pendingPre, nil, false, map[string]any{"status": "RUNNING"}, "RUNNING", ""},
		{"pending gate passed with the move", "DEPLOYMENT", "PENDING", pendingPre, nil, false, map[string]any{"status": "RUNNING", "validation": map[string]any{"preDeployment": passedPre}}, "RUNNING", ""},
		{"completed with post gates passed", "DEPLOYMENT", "RUNNING", passedPre, passedPost, false, map[string]any{"status": "COMPLETED"}, "COMPLETED", ""},
		{"completed with a post gate pending", "DEPLOYMENT", "RUNNING", passedPre, pendingPost, false, map[string]any{"status": "COMPLETED"}, "validation.postDeployment.performanceTests", "BAD_USER_INPUT"},
		{"completed with the post gates reported", "DEPLOYMENT", "RUNNING", passedPre, pendingPost, false, map[string]any{"status": "COMPLETED", "validation": map[string]any{"preDeployment": passedPre, "postDeployment": passedPost}}, "COMPLETED", ""},
		{"completed with a failed post gate", "DEPLOYMENT", "RUNNING", passedPre, pendingPost, false, map[string]any{"status": "COMPLETED", "validation": map[string]any{"preDeployment": passedPre, "postDeployment": failedPost}}, "validation.postDeployment.functionalTests", "BAD_USER_INPUT"},
		{"a failed post gate reported fails it", "DEPLOYMENT", "RUNNING", passedPre, nil, false, map[string]any{"validation": map[string]any{"preDeployment": passedPre, "postDeployment": failedPost}}, "FAILED", ""},
		{"a failed post gate rolls back an automatic job", "DEPLOYMENT", "RUNNING", passedPre, nil, true, map[string]any{"validation": map[string]any{"preDeployment": passedPre, "postDeployment": failedPost}}, "ROLLED_BACK", ""},
		{"a failed pre gate fails a pending job", "DEPLOYMENT", "PENDING", pendingPre, nil, true, map[string]any{"validation": map[string]any{"preDeployment": failedPre}}, "FAILED", ""},
		{"running asked with a failed gate", "DEPLOYMENT", "PENDING", pendingPre, nil, false, map[string]any{"status": "RUNNING", "validation": map[string]any{"preDeployment": failedPre}}, "validation.preDeployment.securityScan", "BAD_USER_INPUT"},
		{"gate results in any case", "DEPLOYMENT", "PENDING", nil, nil, false, map[string]any{"status": "RUNNING", "validation": map[string]any{"preDeployment": map[string]any{"smokeTests": " Passed", "healthChecks": "PASSED"}}}, "RUNNING", ""},
		{"not a gate result", "DEPLOYMENT", "PENDING", nil, nil, false, map[string]any{"validation": map[string]any{"preDeployment": map[string]any{"smokeTests": "ok"}}}, "validation.preDeployment.smokeTests", "BAD_USER_INPUT"},
		{"failed explicitly", "DEPLOYMENT", "RUNNING", passedPre, pendingPost, false, map[string]any{"status": "FAILED"}, "FAILED", ""},
		{"cancelled with a gate pending", "DEPLOYMENT", "PENDING", pendingPre, nil, false, map[string]any{"status": "CANCELLED"}, "CANCELLED", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := fmt.Sprintf("JOB-G-%d", i)
			in := deployInput("CAP-G-001", id, tt.jobType, tt.status, tt.pre, tt.post, tt.automatic)
			h.ok(t, deployStart, map[string]any{"cap": "CAP-G-001", "in": in}, nil)
			resp := h.do(t, deployUpdate, map[string]any{"id": id, "rev": 1, "in": tt.update})
			if tt.code != "" {
				if resp.code(0) != tt.code || resp.Errors[0].Extensions["field"] != tt.want || h.writes() != 0 {
					t.Fatalf("code %q field %v (want %s %s), %d writes: %s", resp.code(0), resp.Errors[0].Extensions["field"], tt.code, tt.want, h.writes(), resp.Body)
				}
				var after struct{ Job struct{ Status string } }
				h.ok(t, `query($id: ID!) { job(id: $id) { status } }`, map[string]any{"id": id}, &after)
				if after.Job.Status != tt.status {
					t.Errorf("after a refusal the job is %s, want %s", after.Job.Status, tt.status)
				}
				return
			}
			if len(resp.Errors) > 0 {
				t.Fatalf("updateJob: %s", resp.Body)
			}
			var out struct{ UpdateJob deployJob }
			if err := json.Unmarshal(resp.Data, &out); err != nil {
				t.Fatal(err)
			}
			if out.UpdateJob.Status != tt.want {
				t.Errorf("status %s, want %s", out.UpdateJob.Status, tt.want)
			}
		})
	}
	// A job does not start RUNNING with a gate pending, nor at all with a failed gate.
	for _, tt := range []struct {
		status, field string
		pre           map[string]any
	}{{"RUNNING", "validation.preDeployment.smokeTests", pendingPre}, {"PENDING", "validation.preDeployment.securityScan", failedPre}} {
		resp := h.do(t, deployStart, map[string]any{"cap": "CAP-G-001", "in": deployInput("CAP-G-001", "JOB-G-START", "DEPLOYMENT", tt.status, tt.pre, nil, false)})
		if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != tt.field || h.writes() != 0 {
			t.Errorf("startJob %s with gates %v = %s (%d writes)", tt.status, tt.pre, resp.Body, h.writes())
		}
	}
}

// A deployment completing moves each target component to its toVersion and marks the target
// completed, in the job's transaction; the metrics and aggregates the server maintains follow
// (client-sent values of deploymentsCompleted, totalArtifactsDeployed and rollbacksTriggered are
// ignored). A rollback job completing restores fromVersion. updateJob costs 5 requests (the
// job's GSI1 lookup, METADATA and the components, the job, the transaction).
func TestDeploymentMovesVersions(t *testing.T) {
	h := deployHarness(t, "CAP-V-001")
	in := deployInput("CAP-V-001", "JOB-V-1", "DEPLOYMENT", "RUNNING", passedPre, map[string]any{"functionalTests": "pending"}, false)
	var started struct{ StartJob deployJob }
	h.ok(t, `mutation($cap: ID!, $in: JobInput!) { startJob(capabilityId: $cap, input: $in) { `+jobView+` } }`, map[string]any{"cap": "CAP-V-001", "in": in}, &started)
	if m := started.StartJob.Metrics; m == nil || m.DeploymentsCompleted != 0 || m.TotalArtifactsDeployed != 0 || m.RollbacksTriggered != 0 || m.AffectedUsers != 3 {
		t.Errorf("a new job's maintained metrics = %+v, want zeros (affectedUsers as sent)", m)
	}
	// Still running: nothing moves.
	if v := h.versions(t, "CAP-V-001"); v["cap-v-001-a"] != "1.0" || v["cap-v-001-b"] != "1.0" {
		t.Errorf("versions while running = %v", v)
	}
	var done struct{ UpdateJob deployJob }
	resp := h.ok(t, deployUpdate, map[string]any{"id": "JOB-V-1", "rev": 1, "in": map[string]any{"status": "COMPLETED",
		"validation": map[string]any{"preDeployment": passedPre, "postDeployment": map[string]any{"functionalTests": "passed"}},
		"metrics":    map[string]any{"affectedUsers": 4, "downtime": 1, "rollbacksTriggered": 5, "deploymentsCompleted": 50, "totalArtifactsDeployed": 50}}}, &done)
	if n, tx := resp.Extensions.DynamoDB.Requests, resp.Extensions.DynamoDB.Operations["TransactWriteItems"]; n != 5 || tx != 1 {
		t.Errorf("updateJob to COMPLETED took %d requests (%d transactions), want 5 (1): %v", n, tx, resp.Extensions.DynamoDB.Operations)
	}
	j := done.UpdateJob
	if j.Status != "COMPLETED" || j.Metrics == nil || *j.Metrics != (struct{ AffectedUsers, Downtime, RollbacksTriggered, DeploymentsCompleted, TotalArtifactsDeployed int }{4, 1, 0, 2, 2}) {
		t.Errorf("completed job = %+v %+v", j, j.Metrics)
	}
	for _, tc := range j.TargetComponents {
		if tc.Status != "completed" {
			t.Errorf("target %s status %q, want completed", tc.ComponentID, tc.Status)
		}
	}
	if v := h.versions(t, "CAP-V-001"); v["cap-v-001-a"] != "2.0" || v["cap-v-001-b"] != "2.0" {
		t.Errorf("versions after the deployment = %v, want 2.0", v)
	}
	var agg struct {
		Capability struct {
			Aggregates struct {
				SuccessfulJobs        int
				LastDeployment        *string
				AverageDeploymentTime *string
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-V-001") { aggregates { successfulJobs lastDeployment averageDeploymentTime } } }`, nil, &agg)
	if a := agg.Capability.Aggregates; a.SuccessfulJobs != 1 || a.LastDeployment == nil || a.AverageDeploymentTime == nil || *a.AverageDeploymentTime != fmt.Sprintf("%.1fm", float64(*j.Duration)/60) {
		t.Errorf("aggregates = %+v (duration %v)", a, *j.Duration)
	}

	// A rollback job completing restores fromVersion (2.0 -> 1.0 here: from is what it restores).
	rb := deployInput("CAP-V-001", "JOB-V-2", "ROLLBACK", "RUNNING", nil, nil, false)
	h.ok(t, deployStart, map[string]any{"cap": "CAP-V-001", "in": rb}, nil)
	h.ok(t, deployUpdate, map[string]any{"id": "JOB-V-2", "rev": 1, "in": map[string]any{"status": "COMPLETED"}}, &done)
	if v := h.versions(t, "CAP-V-001"); v["cap-v-001-a"] != "1.0" || v["cap-v-001-b"] != "1.0" {
		t.Errorf("versions after the rollback job = %v, want 1.0", v)
	}
	if m := done.UpdateJob.Metrics; m == nil || m.DeploymentsCompleted != 2 || m.TotalArtifactsDeployed != 2 {
		t.Errorf("rollback job metrics = %+v", m)
	}
	// The change feed has the job's transition and one update per component moved.
	var feed struct {
		Capability struct {
			Changes struct {
				Nodes []struct {
					Entity, Action, EntityID string
					Fields                   []string
					Detail                   *string
				}
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-V-001") { changes(first: 100, entities: [JOB, COMPONENT]) { nodes { entity action entityId fields detail } } } }`, nil, &feed)
	var moved []string
	for _, c := range feed.Capability.Changes.Nodes {
		if c.Entity == "COMPONENT" && c.Action == "UPDATED" && c.Detail != nil {
			moved = append(moved, c.EntityID+": "+*c.Detail)
		}
	}
	want := []string{
		"cap-v-001-a: version 1.0 -> 2.0 by job JOB-V-1 (COMPLETED)", "cap-v-001-b: version 1.0 -> 2.0 by job JOB-V-1 (COMPLETED)",
		"cap-v-001-a: version 2.0 -> 1.0 by job JOB-V-2 (COMPLETED)", "cap-v-001-b: version 2.0 -> 1.0 by job JOB-V-2 (COMPLETED)",
	}
	if strings.Join(moved, "\n") != strings.Join(want, "\n") {
		t.Errorf("version changes =\n%s\nwant\n%s", strings.Join(moved, "\n"), strings.Join(want, "\n"))
	}
	h.check(t, "CAP-V-001")
}

// A job with more targets than MaxGatedTargets (40) is refused before anything is written.
func TestDeploymentTargetsBounded(t *testing.T) {
	h := deployHarness(t, "CAP-B-001")
	targets := make([]any, 41)
	for i := range targets {
		targets[i] = map[string]any{"componentId": "cap-b-001-a", "toVersion": "2.0"}
	}
	resp := h.do(t, deployStart, map[string]any{"cap": "CAP-B-001", "in": map[string]any{"jobId": "JOB-B-1", "jobType": "DEPLOYMENT", "targetComponents": targets}})
	if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "targetComponents" || h.writes() != 0 {
		t.Errorf("41 targets = %s", resp.Body)
	}
}

const recordMetrics = `mutation($in: [MetricInput!]!) { recordMetrics(inputs: $in) { recorded } }`

func perfSample(cap, comp string, at time.Time, errorRate, p95 float64) map[string]any {
	return map[string]any{"capabilityId": cap, "componentId": comp, "metricType": "PERFORMANCE", "timestamp": at.Format(time.RFC3339), "interval": "1m",
		"values": map[string]any{"availability": map[string]any{"value": 99.9}, "latency": map[string]any{"p50": 10, "p95": p95, "p99": p95, "max": p95}, "errors": map[string]any{"rate": errorRate, "count": 1}}}
}

// While an automatic deployment is RUNNING, samples within its threshold, or of a component it
// does not target, change nothing; concurrent breaching samples of a target roll it back
// exactly once: ROLLED_BACK, rollbacksTriggered 1, the target's fromVersion restored once, one
// change record of the rollback naming the breach.
func TestBreachRollsBackOnce(t *testing.T) {
	h := deployHarness(t, "CAP-R-001")
	h.createCapability(t, "CAP-R-002")
	h.ok(t, addComp, map[string]any{"cap": "CAP-R-002", "in": component("cap-r-002-x", 1, "HEALTHY")}, nil)
	// Without a deployment running recordMetrics costs what it did: 7 (6 before the metric
	// rollups of #22, which read the hour and day items with one BatchGetItem and write them
	// with the samples in one TransactWriteItems, where a BatchWriteItem wrote the samples).
	resp := h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-R-002", "cap-r-002-x", testNow.Add(-30*time.Minute), 50, 2000)}}, nil)
	if n := resp.Extensions.DynamoDB.Requests; n != 7 {
		t.Errorf("recordMetrics without a deployment: %d requests, want 7 (%v)", n, resp.Extensions.DynamoDB.Operations)
	}
	in := deployInput("CAP-R-001", "JOB-R-1", "DEPLOYMENT", "RUNNING", passedPre, nil, true)
	in["startTime"] = testNow.Add(-time.Hour).Format(time.RFC3339) // the samples below are after it
	h.ok(t, deployStart, map[string]any{"cap": "CAP-R-001", "in": in}, nil)
	// The canary is out: component a runs 2.0.
	h.ok(t, `mutation { updateComponent(capabilityId: "CAP-R-001", componentId: "cap-r-001-a", expectedRevision: 1, input: {version: "2.0"}) { version } }`, nil, nil)
	h.createCapability(t, "CAP-R-003") // not involved
	status := func() deployJob {
		var out struct{ Job deployJob }
		h.ok(t, `query { job(id: "JOB-R-1") { `+jobView+` } }`, nil, &out)
		return out.Job
	}
	// Within the threshold (errorRate 5%, p95 500 ms), and a breach of another capability's
	// component: nothing; the active-job Query is the one more request (8: 7 before rollups).
	resp = h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-R-001", "cap-r-001-a", testNow.Add(-20*time.Minute), 5, 500)}}, nil)
	if n := resp.Extensions.DynamoDB.Requests; n != 8 {
		t.Errorf("recordMetrics with a deployment running: %d requests, want 8 (%v)", n, resp.Extensions.DynamoDB.Operations)
	}
	h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-R-002", "cap-r-002-x", testNow.Add(-20*time.Minute), 50, 2000)}}, nil)
	if j := status(); j.Status != "RUNNING" {
		t.Fatalf("job after samples within the threshold = %s", j.Status)
	}
	var wg sync.WaitGroup
	codes := make([]string, 6)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// errorRate breaches on even i, p95 latency on odd i.
			rate, p95 := 9.0, 100.0
			if i%2 == 1 {
				rate, p95 = 1, 900
			}
			r := postAs(t, h.handler, "", recordMetrics, map[string]any{"in": []any{perfSample("CAP-R-001", "cap-r-001-a", testNow.Add(-time.Duration(10-i)*time.Minute), rate, p95)}})
			codes[i] = r.code(0)
		}()
	}
	wg.Wait()
	h.wrote = true
	for i, c := range codes {
		if c != "" {
			t.Errorf("sample %d: %s", i, c)
		}
	}
	j := status()
	if j.Status != "ROLLED_BACK" || j.Metrics == nil || j.Metrics.RollbacksTriggered != 1 || j.Duration == nil {
		t.Errorf("job after the breach = %+v %+v", j, j.Metrics)
	}
	for _, tc := range j.TargetComponents {
		if tc.Status != "rolled_back" {
			t.Errorf("target %s status %q, want rolled_back", tc.ComponentID, tc.Status)
		}
	}
	if v := h.versions(t, "CAP-R-001"); v["cap-r-001-a"] != "1.0" || v["cap-r-001-b"] != "1.0" {
		t.Errorf("versions after the rollback = %v, want 1.0", v)
	}
	var feed struct {
		Capability struct {
			Changes struct {
				Nodes []struct {
					Entity, Action, EntityID string
					Detail                   *string
				}
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-R-001") { changes(first: 100, entities: [JOB, COMPONENT]) { nodes { entity action entityId detail } } } }`, nil, &feed)
	rollbacks, restores := 0, 0
	for _, c := range feed.Capability.Changes.Nodes {
		d := ""
		if c.Detail != nil {
			d = *c.Detail
		}
		switch {
		case c.Entity == "JOB" && c.Action == "TRANSITIONED":
			rollbacks++
			if !strings.HasPrefix(d, "automatic rollback: ") || !strings.Contains(d, "cap-r-001-a") {
				t.Errorf("the rollback's change detail = %q", d)
			}
		case c.Entity == "COMPONENT" && strings.Contains(d, "JOB-R-1"):
			restores++
			if d != "version 2.0 -> 1.0 by job JOB-R-1 (ROLLED_BACK)" {
				t.Errorf("restore detail = %q", d)
			}
		}
	}
	if rollbacks != 1 || restores != 1 {
		t.Errorf("%d rollback changes and %d version restores, want 1 and 1", rollbacks, restores)
	}
	// A later breach leaves the rolled-back job alone.
	h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-R-001", "cap-r-001-a", testNow.Add(-time.Minute), 50, 5000)}}, nil)
	if j := status(); j.Metrics.RollbacksTriggered != 1 || j.Revision != 2 {
		t.Errorf("after a later breach: %+v revision %d", j.Metrics, j.Revision)
	}
	h.check(t, "CAP-R-001")
}

// recordMetrics retried with its clientRequestToken after a breach rolled a deployment back
// answers as before and does not roll back again; a failed gate of an automatic deployment rolls
// it back through updateJob, restoring fromVersion and counting the rollback.
func TestRollbackRetriesAndGateRollback(t *testing.T) {
	h := deployHarness(t, "CAP-T-001")
	started := deployInput("CAP-T-001", "JOB-T-9", "DEPLOYMENT", "RUNNING", passedPre, nil, true)
	started["startTime"] = testNow.Add(-time.Hour).Format(time.RFC3339) // the sample below is after it
	h.ok(t, deployStart, map[string]any{"cap": "CAP-T-001", "in": started}, nil)
	h.ok(t, `mutation { updateComponent(capabilityId: "CAP-T-001", componentId: "cap-t-001-b", expectedRevision: 1, input: {version: "2.0"}) { version } }`, nil, nil)
	call := map[string]any{"in": []any{perfSample("CAP-T-001", "cap-t-001-b", testNow.Add(-5*time.Minute), 20, 100)}, "tok": "retry-breach-1"}
	const withToken = `mutation($in: [MetricInput!]!, $tok: String) { recordMetrics(inputs: $in, clientRequestToken: $tok) { recorded } }`
	h.ok(t, withToken, call, nil)
	h.ok(t, withToken, call, nil)
	var out struct{ Job deployJob }
	h.ok(t, `query { job(id: "JOB-T-9") { `+jobView+` } }`, nil, &out)
	if out.Job.Status != "ROLLED_BACK" || out.Job.Revision != 2 || out.Job.Metrics.RollbacksTriggered != 1 {
		t.Errorf("after a retried breach: %s revision %d %+v", out.Job.Status, out.Job.Revision, out.Job.Metrics)
	}
	if v := h.versions(t, "CAP-T-001"); v["cap-t-001-b"] != "1.0" {
		t.Errorf("versions = %v", v)
	}

	// A failed post gate of another automatic deployment: ROLLED_BACK through updateJob.
	h.ok(t, deployStart, map[string]any{"cap": "CAP-T-001", "in": deployInput("CAP-T-001", "JOB-T-10", "DEPLOYMENT", "RUNNING", passedPre, nil, true)}, nil)
	h.ok(t, `mutation { updateComponent(capabilityId: "CAP-T-001", componentId: "cap-t-001-a", expectedRevision: 1, input: {version: "2.0"}) { version } }`, nil, nil)
	var done struct{ UpdateJob deployJob }
	h.ok(t, deployUpdate, map[string]any{"id": "JOB-T-10", "rev": 1, "in": map[string]any{"validation": map[string]any{"preDeployment": passedPre, "postDeployment": map[string]any{"integrationTests": "failed"}}}}, &done)
	if j := done.UpdateJob; j.Status != "ROLLED_BACK" || j.Metrics.RollbacksTriggered != 1 || j.TargetComponents[0].Status != "rolled_back" {
		t.Errorf("a failed gate of an automatic deployment: %+v %+v", j, j.Metrics)
	}
	if v := h.versions(t, "CAP-T-001"); v["cap-t-001-a"] != "1.0" {
		t.Errorf("versions after the gate rollback = %v", v)
	}
	h.check(t, "CAP-T-001")
}
