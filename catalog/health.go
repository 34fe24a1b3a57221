package catalog

import "math"

// ComponentScore returns the health score of c and whether c reports health at all. It never
// fails: a nil component, or one that does not report, scores (0, false).
//
// The formula:
//
//   - A component reports health when Health != nil and Health.Status is healthy, degraded
//     or unhealthy.
//   - Component score = base (healthy 100, degraded 75, unhealthy 40)
//     − 5 for each SLA objective breached when Sla != nil (availability < sla.availability;
//     responseTime > sla.responseTime; errorRate > sla.errorRate)
//     − min(10, 2 × activeAlerts);
//     clamped to 0..100.
//   - An SLA objective of 0 (the zero value) is not set and cannot be breached.
func ComponentScore(c *Component) (score float64, reported bool) {
	if c == nil || c.Health == nil {
		return 0, false
	}
	h := c.Health
	switch h.Status {
	case HealthHealthy:
		score = 100
	case HealthDegraded:
		score = 75
	case HealthUnhealthy:
		score = 40
	default:
		return 0, false
	}
	av, rt, er := slaChecks(h, c.Sla)
	for _, met := range []*bool{av, rt, er} {
		if met != nil && !*met {
			score -= 5
		}
	}
	alerts := float64(max(h.ActiveAlerts, 0))
	score -= math.Min(10, 2*alerts)
	return clamp(score, 0, 100), true
}

// HealthScore returns the health score and status of a capability made of components with
// totalIncidents recorded incidents. It never fails.
//
// The formula:
//
//   - Capability score = mean of the reporting components' scores (see ComponentScore)
//     − min(10, 0.5 × totalIncidents); clamped to 0..100; rounded to one decimal.
//   - Status: unknown when no component reports (score 0); healthy >= 90; degraded >= 70;
//     unhealthy below.
//
// A negative totalIncidents counts as 0.
func HealthScore(components []*Component, totalIncidents int) (score float64, status HealthStatus) {
	sum, n := 0.0, 0
	for _, c := range components {
		if s, ok := ComponentScore(c); ok {
			sum += s
			n++
		}
	}
	if n == 0 {
		return 0, HealthUnknown
	}
	score = sum/float64(n) - math.Min(10, 0.5*float64(max(totalIncidents, 0)))
	score = math.Round(clamp(score, 0, 100)*10) / 10
	return score, StatusForScore(score, true)
}

// StatusForScore returns the health status of a score: unknown when nothing reported, healthy
// at 90 or more, degraded at 70 or more, unhealthy below (a NaN score is unhealthy). It never
// fails.
func StatusForScore(score float64, reported bool) HealthStatus {
	switch {
	case !reported:
		return HealthUnknown
	case score >= 90:
		return HealthHealthy
	case score >= 70:
		return HealthDegraded
	}
	return HealthUnhealthy
}

// reportsHealth reports whether c carries a usable health observation.
func reportsHealth(c *Component) bool {
	if c == nil || c.Health == nil {
		return false
	}
	switch c.Health.Status {
	case HealthHealthy, HealthDegraded, HealthUnhealthy:
		return true
	}
	return false
}

// slaChecks compares observed health with SLA objectives, one result per objective
// (availability, response time, error rate): nil when not measurable (no health, no SLA, or an
// objective of 0), else whether it is met.
func slaChecks(h *ComponentHealth, sla *SLA) (availability, responseTime, errorRate *bool) {
	if h == nil || sla == nil {
		return nil, nil, nil
	}
	check := func(target float64, met bool) *bool {
		if target == 0 || math.IsNaN(target) {
			return nil
		}
		return &met
	}
	return check(sla.Availability, h.Availability >= sla.Availability),
		check(sla.ResponseTime, h.ResponseTime <= sla.ResponseTime),
		check(sla.ErrorRate, h.ErrorRate <= sla.ErrorRate)
}

func clamp(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return math.Max(lo, math.Min(hi, v))
}
