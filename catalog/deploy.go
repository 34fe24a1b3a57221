package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// Deployments drive the catalogue (docs/design.md, "Deployments"): a deployment or rollback
// job moves through its validation gates, and finishing it moves its target components'
// versions, in the transaction that records the job.

// Gate results. A gate a job does not have is "" (absent); any other value is one of these.
const (
	GatePassed  = "passed"
	GateFailed  = "failed"
	GatePending = "pending"
)

// Target statuses the server sets when a gated job finishes.
const (
	TargetCompleted  = "completed"
	TargetRolledBack = "rolled_back"
	TargetFailed     = "failed"
)

// MaxGatedTargets bounds the target components of a deployment or rollback job: finishing one
// writes, in one transaction of at most 100 actions, each target component and its change
// record besides the job, its change record, its active-job index item, the capability's
// METADATA, index and search items, the counters and the token.
const MaxGatedTargets = 40

// Gate is one validation gate of a job: its field path and its result.
type Gate struct {
	Field  string // e.g. validation.preDeployment.smokeTests
	Result string
}

// Gated reports whether jobs of type t go through validation gates and move versions.
func Gated(t JobType) bool { return t == JobDeployment || t == JobRollback }

// PreGates returns the preDeployment gates j has (those with a result), in schema order.
func PreGates(j *Job) []Gate {
	if j.Validation == nil || j.Validation.PreDeployment == nil {
		return nil
	}
	p := j.Validation.PreDeployment
	return present("validation.preDeployment.", [][2]string{{"healthChecks", p.HealthChecks}, {"smokeTests", p.SmokeTests}, {"securityScan", p.SecurityScan}})
}

// PostGates returns the postDeployment gates j has (those with a result), in schema order.
func PostGates(j *Job) []Gate {
	if j.Validation == nil || j.Validation.PostDeployment == nil {
		return nil
	}
	p := j.Validation.PostDeployment
	return present("validation.postDeployment.", [][2]string{{"functionalTests", p.FunctionalTests}, {"performanceTests", p.PerformanceTests}, {"integrationTests", p.IntegrationTests}})
}

func present(prefix string, gates [][2]string) []Gate {
	var out []Gate
	for _, g := range gates {
		if g[1] != "" {
			out = append(out, Gate{Field: prefix + g[0], Result: g[1]})
		}
	}
	return out
}

// normalizeGates stores n's gate results trimmed and lower-cased ("Passed" is passed), on
// copies of its validation.
func normalizeGates(n *Job) {
	if n.Validation == nil {
		return
	}
	v := *n.Validation
	norm := func(s *string) { *s = strings.ToLower(strings.TrimSpace(*s)) }
	if v.PreDeployment != nil {
		p := *v.PreDeployment
		norm(&p.HealthChecks)
		norm(&p.SmokeTests)
		norm(&p.SecurityScan)
		v.PreDeployment = &p
	}
	if v.PostDeployment != nil {
		p := *v.PostDeployment
		norm(&p.FunctionalTests)
		norm(&p.PerformanceTests)
		norm(&p.IntegrationTests)
		v.PostDeployment = &p
	}
	n.Validation = &v
}

// AutomaticRollback reports whether j rolls itself back (strategy.rollback.automatic).
func AutomaticRollback(j *Job) bool {
	return j.Strategy != nil && j.Strategy.Rollback != nil && j.Strategy.Rollback.Automatic
}

// SettleGatedJob applies the gate rules to n, the job as a client changed it from old, for a
// deployment or rollback job (other jobs are left as they are):
//
//   - every gate result is passed, failed or pending, in any case (stored lower-case;
//     BAD_USER_INPUT naming the gate otherwise);
//   - a failed gate on a job that is not finished moves it to FAILED, or ROLLED_BACK when it
//     rolls back automatically and was RUNNING; a client asking for RUNNING or COMPLETED with
//     a failed gate is refused, naming the gate;
//   - the move to RUNNING needs every preDeployment gate passed, the move to COMPLETED every
//     postDeployment gate (and every preDeployment gate) passed: BAD_USER_INPUT naming the
//     first gate that is not;
//   - a job has at most MaxGatedTargets target components.
//
// It returns whether the job was rolled back automatically (by a failed gate).
func SettleGatedJob(old, n *Job) (automatic bool, err error) {
	if !Gated(n.JobType) {
		return false, nil
	}
	if len(n.TargetComponents) > MaxGatedTargets {
		return false, checkTargets(n)
	}
	normalizeGates(n)
	pre, post := PreGates(n), PostGates(n)
	for _, g := range append(append([]Gate{}, pre...), post...) {
		switch g.Result {
		case GatePassed, GateFailed, GatePending:
		default:
			return false, Invalid(g.Field, "%q is not a gate result: give passed, failed or pending", g.Result)
		}
	}
	if old != nil && old.Status.Terminal() {
		return false, nil // a finished job keeps its status (CheckJobTransition says so)
	}
	for _, g := range append(append([]Gate{}, pre...), post...) {
		if g.Result != GateFailed {
			continue
		}
		asked := old == nil || n.Status != old.Status // the client asks for this status
		switch {
		case asked && (n.Status == JobRunning || n.Status == JobCompleted):
			return false, Invalid(g.Field, "the gate failed: a %s job with a failed gate cannot be %s (it moves to FAILED, or ROLLED_BACK when it rolls back automatically)", n.JobType, strings.ToUpper(string(n.Status)))
		case n.Status == JobRunning && AutomaticRollback(n):
			n.Status = JobRolledBack
			return true, nil
		case n.Status == JobRunning, n.Status == JobPending:
			n.Status = JobFailed
		}
		return false, nil
	}
	wasRunning := old != nil && old.Status == JobRunning
	if n.Status == JobRunning && !wasRunning || n.Status == JobCompleted {
		for _, g := range pre {
			if g.Result != GatePassed {
				return false, Invalid(g.Field, "the gate is %s: a %s job moves to %s only when every preDeployment gate is passed", g.Result, n.JobType, strings.ToUpper(string(n.Status)))
			}
		}
	}
	if n.Status == JobCompleted {
		for _, g := range post {
			if g.Result != GatePassed {
				return false, Invalid(g.Field, "the gate is %s: a %s job moves to COMPLETED only when every postDeployment gate is passed", g.Result, n.JobType)
			}
		}
	}
	return false, nil
}

// VersionMove is a target component's version change when a gated job finishes.
type VersionMove struct {
	ComponentID string
	Version     string
	// IfAt, for a rolled-back deployment's restore, is the version the job put there (the
	// target's toVersion): the component moves only while it still has it. A deployment that
	// never moved it (it was RUNNING), or that another job moved on since, leaves it alone.
	IfAt  string
	Guard bool // IfAt applies
}

// FinishGatedJob sets what the server maintains on a gated job n that has just finished
// (COMPLETED, FAILED or ROLLED_BACK; n.Status is the new status): the targets' statuses,
// metrics.deploymentsCompleted and metrics.totalArtifactsDeployed (and rollbacksTriggered + 1
// when automatic), and returns the component versions to set: a completed deployment installs
// each target's toVersion, a completed rollback sets each target's fromVersion, and a
// rolled-back deployment restores each target's fromVersion only while the component has the
// target's toVersion (VersionMove.IfAt). Targets without the version in question are not moved.
func FinishGatedJob(n *Job, automatic bool) []VersionMove {
	if !Gated(n.JobType) {
		return nil
	}
	if n.Metrics == nil {
		n.Metrics = &JobMetrics{}
	}
	if automatic {
		n.Metrics.RollbacksTriggered++
	}
	var moves []VersionMove
	targets := make([]TargetComponent, len(n.TargetComponents))
	copy(targets, n.TargetComponents)
	n.TargetComponents = targets
	completed, artifacts := 0, 0
	for i := range targets {
		t := &targets[i]
		switch {
		case n.Status == JobCompleted:
			t.Status = TargetCompleted
			completed++
			v := t.ToVersion
			if n.JobType == JobRollback {
				v = t.FromVersion
			}
			if v != "" {
				artifacts++
				moves = append(moves, VersionMove{ComponentID: t.ComponentID, Version: v})
			}
		case n.Status == JobRolledBack && n.JobType == JobDeployment:
			t.Status = TargetRolledBack
			if t.FromVersion != "" && t.ToVersion != "" { // without a toVersion the job put nothing there
				moves = append(moves, VersionMove{ComponentID: t.ComponentID, Version: t.FromVersion, IfAt: t.ToVersion, Guard: true})
			}
		case n.Status == JobFailed || n.Status == JobRolledBack:
			t.Status = TargetFailed
		}
	}
	if n.Status == JobCompleted {
		n.Metrics.DeploymentsCompleted, n.Metrics.TotalArtifactsDeployed = completed, artifacts
	}
	return moves
}

// KeepMaintainedMetrics restores on n the job metrics the server maintains
// (deploymentsCompleted, totalArtifactsDeployed, rollbacksTriggered) from old (zero for a new
// job, old nil): what a client sends for them is ignored, for gated jobs.
func KeepMaintainedMetrics(old, n *Job) {
	if !Gated(n.JobType) || n.Metrics == nil && (old == nil || old.Metrics == nil) {
		return
	}
	if n.Metrics == nil {
		n.Metrics = &JobMetrics{}
	} else {
		m := *n.Metrics
		n.Metrics = &m
	}
	var was JobMetrics
	if old != nil && old.Metrics != nil {
		was = *old.Metrics
	}
	n.Metrics.DeploymentsCompleted, n.Metrics.TotalArtifactsDeployed, n.Metrics.RollbacksTriggered = was.DeploymentsCompleted, was.TotalArtifactsDeployed, was.RollbacksTriggered
}

// AddDeploymentTime folds the duration of a completed deployment job into the capability's
// averageDeploymentTime (minutes with one decimal, e.g. "12.5m"), weighting the average it had
// by completedDeployments (1 when it had an average, e.g. an imported one, but no count).
func AddDeploymentTime(a *Aggregates, seconds int) {
	n := a.CompletedDeployments
	avg, ok := parseMinutes(a.AverageDeploymentTime)
	if !ok {
		n = 0
	} else if n == 0 {
		n = 1
	}
	total := avg*float64(n) + float64(seconds)/60
	a.CompletedDeployments = n + 1
	a.AverageDeploymentTime = strconv.FormatFloat(total/float64(n+1), 'f', 1, 64) + "m"
}

func parseMinutes(s string) (float64, bool) {
	v, ok := strings.CutSuffix(strings.TrimSpace(s), "m")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, false
	}
	return f, true
}

// Breaches reports whether a performance sample breaches a rollback threshold, and how: its
// error rate (values.errors.rate, percent) above threshold.errorRate, or its p95 latency
// (values.latency.p95, ms) above threshold.latency. A zero threshold is not checked.
func Breaches(m *Metric, th *AlertThreshold) (string, bool) {
	if th == nil || m.MetricType != MetricPerformance || m.Values == nil {
		return "", false
	}
	if e := m.Values.Errors; e != nil && th.ErrorRate > 0 && e.Rate > th.ErrorRate {
		return fmt.Sprintf("errorRate %g%% > %g%%", e.Rate, th.ErrorRate), true
	}
	if l := m.Values.Latency; l != nil && th.Latency > 0 && l.P95 > th.Latency {
		return fmt.Sprintf("latency p95 %gms > %gms", l.P95, th.Latency), true
	}
	return "", false
}
