package catalog

import (
	"fmt"
	"maps"
	"time"
)

// Bundle is one capability with everything its partition holds: the unit of bulk loading.
type Bundle struct {
	Capability   *Capability
	Components   []*Component
	Dependencies []*Dependency
	Jobs         []*Job
	Metrics      []*Metric
	Rules        []*Rule
}

// Recount sets the capability's aggregates to what the bundle holds (see Aggregate) and stamps
// every entity with the bundle's capability ID.
func (b *Bundle) Recount() {
	id := b.Capability.CapabilityID
	for _, c := range b.Components {
		c.CapabilityID = id
	}
	for _, d := range b.Dependencies {
		d.CapabilityID = id
	}
	for _, j := range b.Jobs {
		j.CapabilityID = id
	}
	for _, m := range b.Metrics {
		m.CapabilityID = id
	}
	for _, r := range b.Rules {
		r.CapabilityID = id
	}
	Aggregate(&b.Capability.Aggregates, b.Components, len(b.Dependencies), b.Jobs, b.Rules)
}

// Aggregate sets the counters of a that are derived from the partition: totalComponents,
// activeComponents (status active), totalDependencies, totalJobs, successfulJobs (completed),
// failedJobs (failed or rolled back), lastDeployment (end time of the newest completed deployment
// job), totalRules, activeRules (status active), healthScore and healthStatus (HealthScore over
// the components and a.TotalIncidents). The other fields are kept as given.
func Aggregate(a *Aggregates, components []*Component, dependencies int, jobs []*Job, rules []*Rule) {
	a.TotalComponents, a.ActiveComponents = len(components), 0
	for _, c := range components {
		if c.Status == ComponentActive {
			a.ActiveComponents++
		}
	}
	a.TotalDependencies = dependencies
	a.TotalJobs, a.SuccessfulJobs, a.FailedJobs, a.LastDeployment = len(jobs), 0, 0, nil
	for _, j := range jobs {
		a.SuccessfulJobs += JobSucceeded(j.Status)
		a.FailedJobs += JobFailedCount(j.Status)
		if end := DeploymentEnd(j); end != nil && (a.LastDeployment == nil || end.After(a.LastDeployment.Time)) {
			a.LastDeployment = end
		}
	}
	a.TotalRules, a.ActiveRules = len(rules), 0
	for _, r := range rules {
		if r.Status == RuleActive {
			a.ActiveRules++
		}
	}
	a.HealthScore, a.HealthStatus = HealthScore(components, a.TotalIncidents)
	a.Components = TallyComponents(components)
	a.ActiveJobs = ActiveJobsByType(jobs)
}

// JobActive reports whether a job in status s counts as active: PENDING or RUNNING.
func JobActive(s JobStatus) bool { return s == JobPending || s == JobRunning }

// ActiveJobsByType counts the active jobs (JobActive) per job type; nil when there are none.
func ActiveJobsByType(jobs []*Job) map[JobType]int {
	var m map[JobType]int
	for _, j := range jobs {
		if JobActive(j.Status) {
			if m == nil {
				m = map[JobType]int{}
			}
			m[j.JobType]++
		}
	}
	return m
}

// MoveActiveJob adjusts a.ActiveJobs for a job that was (old) and is now (n) of the given
// types and statuses; an old status "" means the job is new. Types with no active job left
// are dropped. The map is replaced, never changed in place: a shallow copy of the aggregates
// (the old state a write compares with) keeps its own.
func MoveActiveJob(a *Aggregates, oldType JobType, oldStatus JobStatus, newType JobType, newStatus JobStatus) {
	if JobActive(oldStatus) == JobActive(newStatus) && oldType == newType {
		return
	}
	a.ActiveJobs = maps.Clone(a.ActiveJobs)
	add := func(t JobType, d int) {
		if a.ActiveJobs == nil {
			a.ActiveJobs = map[JobType]int{}
		}
		a.ActiveJobs[t] += d
		if a.ActiveJobs[t] == 0 {
			delete(a.ActiveJobs, t)
		}
		if len(a.ActiveJobs) == 0 {
			a.ActiveJobs = nil
		}
	}
	if JobActive(oldStatus) {
		add(oldType, -1)
	}
	if JobActive(newStatus) {
		add(newType, 1)
	}
}

// JobSucceeded is 1 for a status counted in successfulJobs, else 0.
func JobSucceeded(s JobStatus) int {
	if s == JobCompleted {
		return 1
	}
	return 0
}

// JobFailedCount is 1 for a status counted in failedJobs (failed, rolled back), else 0.
func JobFailedCount(s JobStatus) int {
	if s == JobFailed || s == JobRolledBack {
		return 1
	}
	return 0
}

// DeploymentEnd returns the end time of j when it is a completed deployment, else nil: the
// candidates for aggregates.lastDeployment.
func DeploymentEnd(j *Job) *Timestamp {
	if j.JobType == JobDeployment && j.Status == JobCompleted && j.EndTime != nil {
		return j.EndTime
	}
	return nil
}

// MetricIntervals are the sampling intervals a metric may have, with their durations.
var MetricIntervals = map[string]time.Duration{"1m": time.Minute, "5m": 5 * time.Minute, "1h": time.Hour}

// TruncateToInterval returns t truncated to the metric interval ("1m", "5m" or "1h"). It returns
// a *ValidationError for any other interval.
func TruncateToInterval(t time.Time, interval string) (time.Time, error) {
	d, ok := MetricIntervals[interval]
	if !ok {
		return time.Time{}, Invalid("interval", "%q is not one of 1m, 5m, 1h", interval)
	}
	return t.UTC().Truncate(d), nil
}

// String returns the bundle's capability ID, for messages.
func (b *Bundle) String() string { return fmt.Sprintf("bundle %s", b.Capability.CapabilityID) }
