package graph_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/sweep"
)

// An automatic rollback can never be lost (issue 21, section 1): a recordMetrics call that
// stops between its health transaction and its rollback transaction leaves the job RUNNING;
// updateJob re-checks the breach before COMPLETED, and the sweeper finishes the rollback.

const recordMetricsTok = `mutation($in: [MetricInput!]!, $tok: String) { recordMetrics(inputs: $in, clientRequestToken: $tok) { recorded } }`

// interruptRollbacks makes the backend refuse every transaction that rolls a job back
// automatically (its change record names the breach), as a recordMetrics call that dies
// between its two transactions would leave it; the returned func lifts it.
func interruptRollbacks(h *harness) func() {
	h.env.Counter.Inspect = func(op string, body []byte, w http.ResponseWriter) bool {
		if op != "TransactWriteItems" || !strings.Contains(string(body), "automatic rollback: ") {
			return false
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":"injected: the process died here"}`)
		return true
	}
	return func() { h.env.Counter.Inspect = nil }
}

// breachInterrupted starts automatic deployment jobID of cap (started an hour ago, component a
// at 2.0 already) and records a breaching sample of component a whose rollback transaction
// fails: the job stays RUNNING.
func breachInterrupted(t *testing.T, h *harness, cap, jobID, token string) map[string]any {
	t.Helper()
	in := deployInput(cap, jobID, "DEPLOYMENT", "RUNNING", passedPre, nil, true)
	in["startTime"] = testNow.Add(-time.Hour).Format(time.RFC3339)
	h.ok(t, deployStart, map[string]any{"cap": cap, "in": in}, nil)
	comp := strings.ToLower(cap) + "-a"
	h.ok(t, `mutation($cap: ID!, $comp: ID!) { updateComponent(capabilityId: $cap, componentId: $comp, expectedRevision: 1, input: {version: "2.0"}) { version } }`,
		map[string]any{"cap": cap, "comp": comp}, nil)
	call := map[string]any{"in": []any{perfSample(cap, comp, testNow.Add(-10*time.Minute), 20, 100)}, "tok": token}
	lift := interruptRollbacks(h)
	resp := h.do(t, recordMetricsTok, call)
	lift()
	h.wrote = true
	if len(resp.Errors) == 0 {
		t.Fatalf("the interrupted recordMetrics succeeded: %s", resp.Body)
	}
	if j := h.jobStatus(t, jobID); j.Status != "RUNNING" || j.Revision != 1 {
		t.Fatalf("after the interrupted call the job is %s revision %d, want RUNNING 1", j.Status, j.Revision)
	}
	return call
}

// rolledBackOnce checks that jobID was rolled back once: ROLLED_BACK at revision 2,
// rollbacksTriggered 1, component a back at 1.0 and b untouched, one job change naming the
// breach.
func rolledBackOnce(t *testing.T, h *harness, cap, jobID string) {
	t.Helper()
	j := h.jobStatus(t, jobID)
	if j.Status != "ROLLED_BACK" || j.Revision != 2 || j.Metrics == nil || j.Metrics.RollbacksTriggered != 1 {
		t.Errorf("job = %s revision %d %+v, want ROLLED_BACK 2 with rollbacksTriggered 1", j.Status, j.Revision, j.Metrics)
	}
	comp := strings.ToLower(cap)
	if v := h.versions(t, cap); v[comp+"-a"] != "1.0" || v[comp+"-b"] != "1.0" {
		t.Errorf("versions = %v, want 1.0", v)
	}
	var rollbacks []string
	for _, d := range h.jobChangeDetails(t, cap, jobID) {
		if strings.HasPrefix(d, "automatic rollback: ") {
			rollbacks = append(rollbacks, d)
		}
	}
	if len(rollbacks) != 1 || !strings.Contains(rollbacks[0], comp+"-a") {
		t.Errorf("rollback change records = %q, want one naming %s-a", rollbacks, comp)
	}
}

var completeJob = map[string]any{"status": "COMPLETED", "validation": map[string]any{"preDeployment": passedPre, "postDeployment": passedPost}}

// updateJob moving a RUNNING automatic deployment to COMPLETED reads its targets' samples since
// its startTime (one Query per target, in parallel): a breach left unrolled by an interrupted
// recordMetrics rolls it back instead, exactly once, and the mutation fails with CONFLICT
// naming the breach, with the job's new revision.
func TestCompleteRollsBackALostBreach(t *testing.T) {
	h := deployHarness(t, "CAP-LB-001")
	breachInterrupted(t, h, "CAP-LB-001", "JOB-LB-1", "lost-breach-1")
	resp := h.do(t, deployUpdate, map[string]any{"id": "JOB-LB-1", "rev": 1, "in": completeJob})
	if resp.code(0) != "CONFLICT" || !strings.Contains(resp.Errors[0].Message, "rolled back, not completed") ||
		!strings.Contains(resp.Errors[0].Message, "errorRate 20% > 5% of cap-lb-001-a") || resp.Errors[0].Extensions["currentRevision"] != float64(2) {
		t.Fatalf("updateJob to COMPLETED after a lost breach: %s", resp.Body)
	}
	// What a completion reads (5 requests less its transaction: 4), one sample Query per
	// target (2), then the rollback with its reads (partition Query, 2 GetItem, the
	// transaction: 4, as rollbackOnBreach's): 10.
	if n := resp.Extensions.DynamoDB.Requests; n != 10 {
		t.Errorf("updateJob that rolls back: %d requests, want 10 (%v)", n, resp.Extensions.DynamoDB.Operations)
	}
	rolledBackOnce(t, h, "CAP-LB-001", "JOB-LB-1")
	// Asked again: the job is finished, nothing moves.
	if resp := h.do(t, deployUpdate, map[string]any{"id": "JOB-LB-1", "rev": 2, "in": completeJob}); len(resp.Errors) == 0 {
		t.Errorf("a rolled-back job completed: %s", resp.Body)
	}
	rolledBackOnce(t, h, "CAP-LB-001", "JOB-LB-1")
	h.check(t, "CAP-LB-001")
}

// A deployment without automatic rollback, or without a breach, or whose only breach came
// before its startTime, completes as before; the request cost of completing is measured: an
// automatic deployment's completion costs one sample Query per target more.
func TestCompleteWithoutBreachCompletes(t *testing.T) {
	h := deployHarness(t, "CAP-NB-001")
	addDeployCapability(t, h, "CAP-NB-002")
	for _, tc := range []struct {
		cap, job  string
		automatic bool
		requests  int
	}{
		// The job found by ID (GSI1 Query, GetItem), the partition (Query), the job (GetItem),
		// the transaction: 5, as before.
		{"CAP-NB-001", "JOB-NB-1", false, 5},
		// And one sample Query per target (2): 7, was 5.
		{"CAP-NB-002", "JOB-NB-2", true, 7},
	} {
		comp := strings.ToLower(tc.cap)
		// A breaching sample 30 minutes before the job starts (now), then one within the
		// threshold after the start.
		h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample(tc.cap, comp+"-a", testNow.Add(-30*time.Minute), 50, 5000)}}, nil)
		h.ok(t, deployStart, map[string]any{"cap": tc.cap, "in": deployInput(tc.cap, tc.job, "DEPLOYMENT", "RUNNING", passedPre, nil, tc.automatic)}, nil)
		h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample(tc.cap, comp+"-b", testNow, 1, 100)}}, nil)
		var out struct{ UpdateJob deployJob }
		resp := h.ok(t, deployUpdate, map[string]any{"id": tc.job, "rev": 1, "in": completeJob}, &out)
		if j := out.UpdateJob; j.Status != "COMPLETED" || j.Metrics.RollbacksTriggered != 0 {
			t.Errorf("%s: %s %+v", tc.job, j.Status, j.Metrics)
		}
		if n := resp.Extensions.DynamoDB.Requests; n != tc.requests {
			t.Errorf("%s (automatic %v): updateJob to COMPLETED made %d requests, want %d (%v)", tc.job, tc.automatic, n, tc.requests, resp.Extensions.DynamoDB.Operations)
		}
		if v := h.versions(t, tc.cap); v[comp+"-a"] != "2.0" || v[comp+"-b"] != "2.0" {
			t.Errorf("%s: versions = %v, want 2.0", tc.job, v)
		}
		h.check(t, tc.cap)
	}
}

// addDeployCapability adds capability cap with components {cap}-a and {cap}-b at version 1.0,
// as deployHarness does.
func addDeployCapability(t *testing.T, h *harness, cap string) {
	t.Helper()
	h.createCapability(t, cap)
	for i, id := range []string{"a", "b"} {
		c := component(strings.ToLower(cap)+"-"+id, i+1, "HEALTHY")
		c["version"] = "1.0"
		h.ok(t, addComp, map[string]any{"cap": cap, "in": c}, nil)
	}
}

// The sweeper finishes an interrupted rollback in one pass, exactly once: a second pass and a
// late retry of the recordMetrics call with its token change nothing more. Its requests are
// counted in /metrics.
func TestSweeperFinishesInterruptedRollback(t *testing.T) {
	h := deployHarness(t, "CAP-SW-001")
	call := breachInterrupted(t, h, "CAP-SW-001", "JOB-SW-1", "sweep-breach-1")
	// Not involved: a non-automatic deployment with a breach, an automatic one whose only breach
	// came before its start (now), and a PENDING one.
	addDeployCapability(t, h, "CAP-SW-002")
	manual := deployInput("CAP-SW-002", "JOB-SW-2", "DEPLOYMENT", "RUNNING", passedPre, nil, false)
	manual["targetComponents"] = []any{map[string]any{"componentId": "cap-sw-002-a", "fromVersion": "1.0", "toVersion": "2.0", "status": "pending"}}
	manual["startTime"] = testNow.Add(-time.Hour).Format(time.RFC3339)
	h.ok(t, deployStart, map[string]any{"cap": "CAP-SW-002", "in": manual}, nil)
	h.ok(t, recordMetrics, map[string]any{"in": []any{perfSample("CAP-SW-002", "cap-sw-002-a", testNow.Add(-10*time.Minute), 50, 5000),
		perfSample("CAP-SW-002", "cap-sw-002-b", testNow.Add(-5*time.Minute), 50, 5000)}}, nil)
	early := deployInput("CAP-SW-002", "JOB-SW-3", "DEPLOYMENT", "RUNNING", passedPre, nil, true)
	early["targetComponents"] = []any{map[string]any{"componentId": "cap-sw-002-b", "fromVersion": "1.0", "toVersion": "2.0", "status": "pending"}}
	h.ok(t, deployStart, map[string]any{"cap": "CAP-SW-002", "in": early}, nil)
	h.ok(t, deployStart, map[string]any{"cap": "CAP-SW-002", "in": deployInput("CAP-SW-002", "JOB-SW-4", "DEPLOYMENT", "PENDING", nil, nil, true)}, nil)

	reg := prometheus.NewRegistry()
	sw := sweep.New(h.env.Store, reg)
	ctx := context.Background()
	h.env.Counter.Reset()
	res, err := sw.RunOnce(ctx)
	if err != nil {
		t.Fatalf("sweep: %v", err)
	}
	// The active-job index (1 Query); the three RUNNING automatic deployments with a threshold
	// (JOB-SW-1, JOB-SW-3 and the sample's JOB-DEPLOY-457) one sample Query per target (2 + 1
	// + 1); the rollback of JOB-SW-1 with its reads (partition Query, 2 GetItem, the
	// transaction: 4, as rollbackOnBreach's).
	if res.Checked != 3 || res.RolledBack != 1 || res.Requests != 9 || h.env.Counter.Total() != 9 {
		t.Errorf("first pass = %+v, %d requests counted at the backend (%v), want 3 checked, 1 rolled back, 9 requests", res, h.env.Counter.Total(), h.env.Counter.Ops())
	}
	rolledBackOnce(t, h, "CAP-SW-001", "JOB-SW-1")
	for _, id := range []string{"JOB-SW-2", "JOB-SW-3"} {
		if j := h.jobStatus(t, id); j.Status != "RUNNING" || j.Revision != 1 {
			t.Errorf("%s = %s revision %d, want RUNNING 1", id, j.Status, j.Revision)
		}
	}
	res, err = sw.RunOnce(ctx)
	if err != nil || res.Checked != 2 || res.RolledBack != 0 || res.Requests != 3 {
		t.Errorf("second pass = %+v, %v; want 2 checked, none rolled back, 3 requests", res, err)
	}
	h.ok(t, recordMetricsTok, call, nil)
	rolledBackOnce(t, h, "CAP-SW-001", "JOB-SW-1")
	for name, want := range map[string]float64{"catalogue_rollback_sweep_requests_total": 12, "catalogue_rollback_sweep_passes_total": 2,
		"catalogue_rollback_sweep_jobs_checked_total": 5, "catalogue_rollback_sweep_rolled_back_total": 1} {
		if got := counterValue(t, reg, name); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	h.check(t, "CAP-SW-001")
	h.check(t, "CAP-SW-002")
}

// The sweeper runs on one instance at a time: a holder that cannot take the lease makes no pass.
func TestSweeperHoldsTheLease(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	if ok, err := h.env.Store.AcquireLease(ctx, sweep.Lease, "other", time.Hour); err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	reg := prometheus.NewRegistry()
	sw := sweep.New(h.env.Store, reg)
	passes := make(chan sweep.Result, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go sw.Run(ctx, time.Millisecond, "me", func(r sweep.Result, err error) { passes <- r })
	// Wait until this instance tried the lease a few times, then check no pass ran.
	deadline := time.Now().Add(5 * time.Second)
	for counterValue(t, reg, "catalogue_rollback_sweep_requests_total") < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	select {
	case r := <-passes:
		t.Errorf("a pass ran without the lease: %+v", r)
	default:
	}
	cancel()
}

// counterValue returns the value of the counter name in reg (-1 when it has none).
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return -1
}

// A pass checks at most dynamo.SweepJobs deployments; the next resumes after the last one
// checked, and the one after the end starts over.
func TestSweeperBoundsAPass(t *testing.T) {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	addDeployCapability(t, h, "CAP-BD-001")
	for i := range dynamo.SweepJobs + 1 {
		in := deployInput("CAP-BD-001", fmt.Sprintf("JOB-BD-%d", i), "DEPLOYMENT", "RUNNING", passedPre, nil, true)
		in["targetComponents"] = []any{map[string]any{"componentId": "cap-bd-001-a", "fromVersion": "1.0", "toVersion": "2.0", "status": "pending"}}
		in["startTime"] = testNow.Add(-time.Hour + time.Duration(i)*time.Second).Format(time.RFC3339)
		h.ok(t, deployStart, map[string]any{"cap": "CAP-BD-001", "in": in}, nil)
	}
	// With the sample's running automatic deployment, 27 to check.
	sw := sweep.New(h.env.Store, nil)
	var checked []int
	for range 3 {
		h.env.Counter.Reset()
		res, err := sw.RunOnce(context.Background())
		if err != nil {
			t.Fatalf("sweep: %v", err)
		}
		if res.Requests != 1+res.Checked || res.RolledBack != 0 {
			t.Errorf("pass %+v: want one index Query and one sample Query per job", res)
		}
		checked = append(checked, res.Checked)
	}
	if want := []int{dynamo.SweepJobs, 2, dynamo.SweepJobs}; !slices.Equal(checked, want) {
		t.Errorf("jobs checked by three passes = %v, want %v", checked, want)
	}
}
