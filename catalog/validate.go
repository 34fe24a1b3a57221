package catalog

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Validation of entities before any write. Identifiers are checked by the stores as they build
// keys (with ValidateID); these check the domain's own rules and return *ValidationError.

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return Invalid(field, "is required")
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func enumErr(field string, valid bool, v any) error {
	if !valid {
		return Invalid(field, "%q is not an allowed value", v)
	}
	return nil
}

// ValidateCapability checks a capability's own fields, their bounds included.
func ValidateCapability(c *Capability) error {
	return firstErr(
		checkBounds(c),
		required("name", c.Name),
		required("businessDomain", c.BusinessDomain),
		enumErr("status", c.Status.Valid(), c.Status),
		enumErr("priority", c.Priority.Valid(), c.Priority),
		nonNegative("aggregates.totalIncidents", float64(c.Aggregates.TotalIncidents)),
		nonNegative("aggregates.userCount", float64(c.Aggregates.UserCount)),
		nonNegative("aggregates.monthlyOperationalCost", c.Aggregates.MonthlyOperationalCost),
	)
}

func nonNegative(field string, v float64) error {
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Invalid(field, "must not be negative")
	}
	return nil
}

func percent(field string, v float64) error {
	if v < 0 || v > 100 || math.IsNaN(v) {
		return Invalid(field, "must be a percentage between 0 and 100")
	}
	return nil
}

// ValidateRuleFields checks a rule's own fields (name, type, status, priority, their bounds),
// its effective window (ValidateRuleWindow) and its conditions, actions and order
// (ValidateRule).
func ValidateRuleFields(r *Rule) error { return validateRule(nil, r) }

// ValidateRuleUpdate checks r, the rule old as patched, as ValidateRuleFields does, except that
// a window the patch made empty or reversed while keeping old's effectiveUntil is reported on
// effectiveFrom, the field that moved.
func ValidateRuleUpdate(old, r *Rule) error { return validateRule(old, r) }

func validateRule(old, r *Rule) error {
	if err := checkBounds(r); err != nil {
		return err
	}
	if err := ValidateRule(r); err != nil {
		return err
	}
	return firstErr(
		required("name", r.Name),
		enumErr("ruleType", r.RuleType.Valid(), r.RuleType),
		enumErr("status", r.Status.Valid(), r.Status),
		enumErr("priority", r.Priority.Valid(), r.Priority),
		ruleWindow(old, r),
	)
}

// ValidateRuleWindow checks that a rule's effective window could hold now or later: each bound,
// when set, is at or after 1970-01-01T00:00:00Z (an earlier one is almost always a client's
// unset time, 0001-01-01T00:00:00Z in Go, sent where it meant "open"), and EffectiveUntil is
// after EffectiveFrom (the window is [from, until), so until == from could never be in force).
// It returns nil or a *ValidationError naming "effectiveFrom" or "effectiveUntil" (a reversed
// or empty window names effectiveUntil).
func ValidateRuleWindow(r *Rule) error { return ruleWindow(nil, r) }

// ruleWindow is ValidateRuleWindow for r, the rule old as patched (old is nil on create).
func ruleWindow(old, r *Rule) error {
	for _, b := range []struct {
		field string
		t     *Timestamp
	}{{"effectiveFrom", r.EffectiveFrom}, {"effectiveUntil", r.EffectiveUntil}} {
		if b.t == nil || b.t.Unix() >= 0 {
			continue
		}
		if b.t.IsZero() {
			return Invalid(b.field, "%s is the zero time, not a date: leave the field out (or null) for an open bound", b.t)
		}
		return Invalid(b.field, "%s is before 1970-01-01T00:00:00Z", b.t)
	}
	if r.EffectiveFrom == nil || r.EffectiveUntil == nil || r.EffectiveUntil.After(r.EffectiveFrom.Time) {
		return nil
	}
	if old != nil && old.EffectiveUntil != nil && old.EffectiveUntil.Equal(r.EffectiveUntil.Time) {
		return Invalid("effectiveFrom", "%s must be before effectiveUntil %s: the window [effectiveFrom, effectiveUntil) would never be in force", r.EffectiveFrom, r.EffectiveUntil)
	}
	return Invalid("effectiveUntil", "%s must be after effectiveFrom %s: the window [effectiveFrom, effectiveUntil) would never be in force", r.EffectiveUntil, r.EffectiveFrom)
}

// MaxOrder is the highest component order (two digits in the key).
const MaxOrder = 99

// ValidateComponent checks a component's own fields, their bounds included.
func ValidateComponent(c *Component) error {
	if err := checkBounds(c); err != nil {
		return err
	}
	if c.Order < 1 || c.Order > MaxOrder {
		return Invalid("order", "must be between 1 and %d, got %d", MaxOrder, c.Order)
	}
	err := firstErr(
		required("name", c.Name),
		required("componentType", c.ComponentType),
		enumErr("status", c.Status.Valid(), c.Status),
	)
	if err != nil {
		return err
	}
	if h := c.Health; h != nil {
		if err := firstErr(enumErr("health.status", h.Status.Valid(), h.Status), percent("health.availability", h.Availability),
			nonNegative("health.responseTime", h.ResponseTime), percent("health.errorRate", h.ErrorRate),
			nonNegative("health.activeAlerts", float64(h.ActiveAlerts))); err != nil {
			return err
		}
	}
	if s := c.Sla; s != nil {
		return firstErr(percent("sla.availability", s.Availability), nonNegative("sla.responseTime", s.ResponseTime), percent("sla.errorRate", s.ErrorRate))
	}
	return nil
}

// ValidateDependency checks an edge against the components of its capability: both ends must
// exist, differ, and the edge must not exist yet. Its fields must be within their bounds.
func ValidateDependency(d *Dependency, components []*Component, existing []*Dependency) error {
	if err := firstErr(checkBounds(d), enumErr("dependencyType", d.DependencyType.Valid(), d.DependencyType), enumErr("criticality", d.Criticality.Valid(), d.Criticality)); err != nil {
		return err
	}
	if d.SourceComponentID == d.TargetComponentID {
		return Invalid("targetComponentId", "a component cannot depend on itself (%s)", d.SourceComponentID)
	}
	if findComponent(components, d.SourceComponentID) == nil {
		return Invalid("sourceComponentId", "component %s is not part of capability %s", d.SourceComponentID, d.CapabilityID)
	}
	if findComponent(components, d.TargetComponentID) == nil {
		return Invalid("targetComponentId", "component %s is not part of capability %s", d.TargetComponentID, d.CapabilityID)
	}
	for _, e := range existing {
		if e.SourceComponentID == d.SourceComponentID && e.TargetComponentID == d.TargetComponentID {
			return Invalid("targetComponentId", "the dependency %s -> %s exists already", d.SourceComponentID, d.TargetComponentID)
		}
	}
	if d.Fallback != nil && d.Fallback.BackupComponent != nil && *d.Fallback.BackupComponent != "" &&
		findComponent(components, *d.Fallback.BackupComponent) == nil {
		return Invalid("fallback.backupComponent", "component %s is not part of capability %s", *d.Fallback.BackupComponent, d.CapabilityID)
	}
	return nil
}

func findComponent(cs []*Component, id string) *Component {
	for _, c := range cs {
		if c.ComponentID == id {
			return c
		}
	}
	return nil
}

// ValidateJob checks a job's fields, their bounds included, that no component is a target twice
// and that its target components belong to its capability.
func ValidateJob(j *Job, components []*Component) error {
	return ValidateJobUpdate(nil, j, components)
}

// ValidateJobUpdate is ValidateJob of j, old as changed, except that a target carried over from
// old unchanged (same componentId, fromVersion and toVersion) is not looked up among
// components: a job whose target component was removed since it started can still be moved on
// (cancelled, failed, finished). A target the change adds or changes must name a component of
// the capability. old is nil for a new job.
func ValidateJobUpdate(old, j *Job, components []*Component) error {
	if err := firstErr(checkBounds(j), enumErr("jobType", j.JobType.Valid(), j.JobType), enumErr("status", j.Status.Valid(), j.Status)); err != nil {
		return err
	}
	if j.Priority != "" && !j.Priority.Valid() {
		return Invalid("priority", "%q is not an allowed value", j.Priority)
	}
	if j.StartTime.IsZero() {
		return Invalid("startTime", "is required")
	}
	if j.EndTime != nil && j.EndTime.Before(j.StartTime.Time) {
		return Invalid("endTime", "must not be before startTime")
	}
	if err := checkTargets(j); err != nil {
		return err
	}
	for i, t := range j.TargetComponents {
		carried := old != nil && slices.ContainsFunc(old.TargetComponents, func(o TargetComponent) bool {
			return o.ComponentID == t.ComponentID && o.FromVersion == t.FromVersion && o.ToVersion == t.ToVersion
		})
		if !carried && findComponent(components, t.ComponentID) == nil {
			return Invalid(fmt.Sprintf("targetComponents[%d].componentId", i), "component %s is not part of capability %s", t.ComponentID, j.CapabilityID)
		}
	}
	return nil
}

// checkTargets checks a job's targets before their components are looked at: a gated job has
// at most MaxGatedTargets, and no component is a target twice (finishing would count it once
// per target in the maintained metrics and move it twice).
func checkTargets(j *Job) error {
	if Gated(j.JobType) && len(j.TargetComponents) > MaxGatedTargets {
		return Invalid("targetComponents", "a %s job targets at most %d components, got %d", j.JobType, MaxGatedTargets, len(j.TargetComponents))
	}
	seen := make(map[string]int, len(j.TargetComponents))
	for i, t := range j.TargetComponents {
		if first, ok := seen[t.ComponentID]; ok {
			return Invalid(fmt.Sprintf("targetComponents[%d].componentId", i), "component %s is already targetComponents[%d]: a component is a job's target once", t.ComponentID, first)
		}
		seen[t.ComponentID] = i
	}
	return nil
}

// JobTransitions are the moves of a job's status: pending -> running -> completed | failed |
// rolled_back | cancelled; a pending job may also be cancelled, or fail (a deployment's
// preDeployment gate that failed).
var JobTransitions = map[JobStatus][]JobStatus{
	JobPending: {JobRunning, JobFailed, JobCancelled},
	JobRunning: {JobCompleted, JobFailed, JobRolledBack, JobCancelled},
}

// Terminal reports whether a job in status s is finished.
func (s JobStatus) Terminal() bool { return len(JobTransitions[s]) == 0 }

// CheckJobTransition returns a *ValidationError naming the allowed moves unless from -> to is
// one (staying in the same status is allowed).
func CheckJobTransition(from, to JobStatus) error {
	if from == to {
		return nil
	}
	return checkMove("status", from, to, JobTransitions[from])
}

// CapabilityTransitions are the lifecycle moves: one step forward, and deprecated -> active as
// the one way back.
var CapabilityTransitions = map[CapabilityStatus][]CapabilityStatus{
	CapabilityPlanning:    {CapabilityDevelopment},
	CapabilityDevelopment: {CapabilityActive},
	CapabilityActive:      {CapabilityDeprecated},
	CapabilityDeprecated:  {CapabilityRetiring, CapabilityActive},
}

// CheckCapabilityTransition returns a *ValidationError naming the allowed moves unless
// from -> to is one.
func CheckCapabilityTransition(from, to CapabilityStatus) error {
	return checkMove("to", from, to, CapabilityTransitions[from])
}

func checkMove[T ~string](field string, from, to T, allowed []T) error {
	for _, a := range allowed {
		if a == to {
			return nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = strings.ToUpper(string(a))
	}
	if len(names) == 0 {
		return Invalid(field, "%s is final: no move is allowed from it", strings.ToUpper(string(from)))
	}
	return Invalid(field, "cannot move from %s to %s; allowed: %s", strings.ToUpper(string(from)), strings.ToUpper(string(to)), strings.Join(names, ", "))
}

// MaxMetricSkew is how far in the future a metric timestamp may lie.
const MaxMetricSkew = 5 * time.Minute

// MetricRetention is how long a metric sample stays in the table (its TTL): an older sample
// could never be read, so it is refused.
const MetricRetention = 90 * 24 * time.Hour

// ValidateMetric checks a metric sample, its bounds included, and truncates its timestamp to its
// interval.
func ValidateMetric(m *Metric, now time.Time) error {
	if err := checkBounds(m); err != nil {
		return err
	}
	if err := enumErr("metricType", m.MetricType.Valid(), m.MetricType); err != nil {
		return err
	}
	if m.Timestamp.IsZero() {
		return Invalid("timestamp", "is required")
	}
	if m.Timestamp.After(now.Add(MaxMetricSkew)) {
		return Invalid("timestamp", "%s is more than %s in the future", m.Timestamp, MaxMetricSkew)
	}
	if m.Timestamp.Before(now.Add(-MetricRetention)) {
		return Invalid("timestamp", "%s is older than the %d-day retention of metrics: it would expire unread", m.Timestamp, int(MetricRetention.Hours()/24))
	}
	t, err := TruncateToInterval(m.Timestamp.Time, m.Interval)
	if err != nil {
		return err
	}
	m.Timestamp = NewTimestamp(t)
	if v := m.Values; v != nil {
		if v.Availability != nil {
			if err := percent("values.availability.value", v.Availability.Value); err != nil {
				return err
			}
		}
		if v.Errors != nil {
			if err := measure("values.errors.rate", v.Errors.Rate); err != nil {
				return err
			}
		}
		if l := v.Latency; l != nil {
			for _, f := range []struct {
				name string
				v    float64
			}{{"p50", l.P50}, {"p95", l.P95}, {"p99", l.P99}, {"max", l.Max}} {
				if err := measure("values.latency."+f.name, f.v); err != nil {
					return err
				}
			}
		}
		if t := v.Throughput; t != nil {
			for _, f := range []struct {
				name string
				v    int
			}{{"requests", t.Requests}, {"successful", t.Successful}, {"failed", t.Failed}} {
				if err := measure("values.throughput."+f.name, float64(f.v)); err != nil {
					return err
				}
			}
		}
		if sat := v.Saturation; sat != nil {
			for _, f := range []struct {
				name string
				v    float64
			}{{"cpu", sat.CPU}, {"memory", sat.Memory}, {"connections", float64(sat.Connections)}} {
				if err := measure("values.saturation."+f.name, f.v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// MaxMeasure bounds every measured value of a metric sample. The rollups sum a day's samples
// of a value (at most 1,440 a day), so a bound far inside float64 keeps every sum, mean and
// fitted trend finite; it is also far inside DynamoDB's numbers (up to 9.99e125).
const MaxMeasure = 1e15

// measure refuses a measured value that is negative, not a number or above MaxMeasure.
func measure(field string, v float64) error {
	if v < 0 || v > MaxMeasure || math.IsNaN(v) {
		return Invalid(field, "must be a number from 0 to %g", MaxMeasure)
	}
	return nil
}

// HealthFromMetric returns c's health as observed by a performance sample m: availability from
// values.availability.value, responseTime from values.latency.p95, errorRate from
// values.errors.rate, activeAlerts from alerts.active, lastCheck = m.timestamp (values the sample
// lacks are kept). The status is healthy when no SLA objective is breached, degraded when one
// is, unhealthy when two or more are or availability is below 95%; without an SLA, availability
// decides: >= 99.9 healthy, >= 99 degraded, else unhealthy. It returns nil when m is not a
// performance sample or is older than the health already recorded.
func HealthFromMetric(c *Component, m *Metric) *ComponentHealth {
	if m.MetricType != MetricPerformance || m.Values == nil {
		return nil
	}
	h := ComponentHealth{Status: HealthUnknown}
	if c.Health != nil {
		if c.Health.LastCheck != nil && c.Health.LastCheck.After(m.Timestamp.Time) {
			return nil
		}
		h = *c.Health
	}
	v := m.Values
	if v.Availability != nil {
		h.Availability = v.Availability.Value
	}
	if v.Latency != nil {
		h.ResponseTime = v.Latency.P95
	}
	if v.Errors != nil {
		h.ErrorRate = v.Errors.Rate
	}
	if m.Alerts != nil {
		h.ActiveAlerts = len(m.Alerts.Active)
	}
	ts := m.Timestamp
	h.LastCheck = &ts
	h.Status = observedStatus(&h, c.Sla)
	return &h
}

func observedStatus(h *ComponentHealth, s *SLA) HealthStatus {
	if s == nil {
		switch {
		case h.Availability >= 99.9:
			return HealthHealthy
		case h.Availability >= 99:
			return HealthDegraded
		}
		return HealthUnhealthy
	}
	breaches := 0
	if s.Availability > 0 && h.Availability < s.Availability {
		breaches++
	}
	if s.ResponseTime > 0 && h.ResponseTime > s.ResponseTime {
		breaches++
	}
	if s.ErrorRate > 0 && h.ErrorRate > s.ErrorRate {
		breaches++
	}
	switch {
	case breaches >= 2 || h.Availability < 95:
		return HealthUnhealthy
	case breaches == 1:
		return HealthDegraded
	}
	return HealthHealthy
}
