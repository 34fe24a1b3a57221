package catalog

import (
	"math"
	"testing"
)

// withHealth returns a component reporting status with the given observations.
func withHealth(id string, status HealthStatus, availability, responseTime, errorRate float64, alerts int) *Component {
	c := comp(id)
	c.Health = &ComponentHealth{Status: status, Availability: availability, ResponseTime: responseTime, ErrorRate: errorRate, ActiveAlerts: alerts}
	return c
}

func withSLA(c *Component, availability, responseTime, errorRate float64) *Component {
	c.Sla = &SLA{Availability: availability, ResponseTime: responseTime, ErrorRate: errorRate}
	return c
}

func TestComponentScore(t *testing.T) {
	tests := []struct {
		name         string
		c            *Component
		wantScore    float64
		wantReported bool
	}{
		{"nil component", nil, 0, false},
		{"no health", comp("a"), 0, false},
		{"unknown status", withHealth("a", HealthUnknown, 99, 10, 0, 0), 0, false},
		{"empty status", withHealth("a", "", 99, 10, 0, 0), 0, false},
		{"bogus status", withHealth("a", "great", 99, 10, 0, 0), 0, false},
		{"healthy", withHealth("a", HealthHealthy, 99, 10, 0, 0), 100, true},
		{"degraded", withHealth("a", HealthDegraded, 99, 10, 0, 0), 75, true},
		{"unhealthy", withHealth("a", HealthUnhealthy, 99, 10, 0, 0), 40, true},
		{"SLA all met", withSLA(withHealth("a", HealthHealthy, 99.95, 100, 0.1, 0), 99.9, 200, 0.5), 100, true},
		{"SLA met at the bounds", withSLA(withHealth("a", HealthHealthy, 99.9, 200, 0.5, 0), 99.9, 200, 0.5), 100, true},
		{"availability breached", withSLA(withHealth("a", HealthHealthy, 99.8, 100, 0.1, 0), 99.9, 200, 0.5), 95, true},
		{"response time breached", withSLA(withHealth("a", HealthHealthy, 99.95, 201, 0.1, 0), 99.9, 200, 0.5), 95, true},
		{"error rate breached", withSLA(withHealth("a", HealthHealthy, 99.95, 100, 0.6, 0), 99.9, 200, 0.5), 95, true},
		{"all three breached", withSLA(withHealth("a", HealthDegraded, 90, 900, 5, 0), 99.9, 200, 0.5), 60, true},
		{"zero objectives are not set", withSLA(withHealth("a", HealthHealthy, 99.95, 900, 5, 0), 99.9, 0, 0), 100, true},
		{"one alert", withHealth("a", HealthHealthy, 99, 10, 0, 1), 98, true},
		{"three alerts", withHealth("a", HealthHealthy, 99, 10, 0, 3), 94, true},
		{"five alerts reach the cap", withHealth("a", HealthHealthy, 99, 10, 0, 5), 90, true},
		{"alerts capped at 10 points", withHealth("a", HealthHealthy, 99, 10, 0, 40), 90, true},
		{"negative alerts ignored", withHealth("a", HealthHealthy, 99, 10, 0, -3), 100, true},
		{"worst case", withSLA(withHealth("a", HealthUnhealthy, 10, 5000, 50, 99), 99.9, 200, 0.5), 15, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score, reported := ComponentScore(tt.c)
			if score != tt.wantScore || reported != tt.wantReported {
				t.Errorf("ComponentScore(%s) = %v, %v; want %v, %v", tt.name, score, reported, tt.wantScore, tt.wantReported)
			}
		})
	}
}

func TestHealthScore(t *testing.T) {
	h := func(status HealthStatus, alerts int) *Component { return withHealth("c", status, 99, 10, 0, alerts) }
	tests := []struct {
		name       string
		components []*Component
		incidents  int
		wantScore  float64
		wantStatus HealthStatus
	}{
		{"no components", nil, 0, 0, HealthUnknown},
		{"no components with incidents", nil, 5, 0, HealthUnknown},
		{"none reporting", []*Component{comp("a"), nil, withHealth("b", HealthUnknown, 0, 0, 0, 0)}, 0, 0, HealthUnknown},
		{"one healthy", []*Component{h(HealthHealthy, 0)}, 0, 100, HealthHealthy},
		{"non-reporting are left out of the mean", []*Component{h(HealthHealthy, 0), comp("x"), nil}, 0, 100, HealthHealthy},
		{"healthy and degraded", []*Component{h(HealthHealthy, 0), h(HealthDegraded, 0)}, 0, 87.5, HealthDegraded},
		{"incidents deduct half a point", []*Component{h(HealthHealthy, 0), h(HealthDegraded, 0)}, 3, 86, HealthDegraded},
		{"incident deduction capped at 10", []*Component{h(HealthHealthy, 0)}, 1000, 90, HealthHealthy},
		{"negative incidents ignored", []*Component{h(HealthHealthy, 0)}, -8, 100, HealthHealthy},
		{"rounded to one decimal", []*Component{h(HealthHealthy, 0), h(HealthDegraded, 0), h(HealthUnhealthy, 0)}, 0, 71.7, HealthDegraded},
		{"rounded after incidents", []*Component{h(HealthHealthy, 0), h(HealthDegraded, 0), h(HealthUnhealthy, 0)}, 1, 71.2, HealthDegraded},
		{"exactly 90 is healthy", []*Component{h(HealthHealthy, 5)}, 0, 90, HealthHealthy},
		{"just below 90 is degraded", []*Component{h(HealthHealthy, 5)}, 1, 89.5, HealthDegraded},
		{"exactly 70 is degraded", []*Component{withSLA(h(HealthDegraded, 0), 99.9, 0, 0)}, 0, 70, HealthDegraded},
		{"below 70 is unhealthy", []*Component{h(HealthDegraded, 0)}, 11, 69.5, HealthUnhealthy},
		{"unhealthy", []*Component{h(HealthUnhealthy, 10)}, 20, 20, HealthUnhealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score, status := HealthScore(tt.components, tt.incidents)
			if score != tt.wantScore || status != tt.wantStatus {
				t.Errorf("HealthScore(%s, %d) = %v, %s; want %v, %s", tt.name, tt.incidents, score, status, tt.wantScore, tt.wantStatus)
			}
		})
	}
}

func TestStatusForScore(t *testing.T) {
	tests := []struct {
		score    float64
		reported bool
		want     HealthStatus
	}{
		{0, false, HealthUnknown},
		{100, false, HealthUnknown},
		{100, true, HealthHealthy},
		{90, true, HealthHealthy},
		{89.99, true, HealthDegraded},
		{70, true, HealthDegraded},
		{69.9, true, HealthUnhealthy},
		{0, true, HealthUnhealthy},
		{-5, true, HealthUnhealthy},
		{math.NaN(), true, HealthUnhealthy},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			if got := StatusForScore(tt.score, tt.reported); got != tt.want {
				t.Errorf("StatusForScore(%v, %v) = %s, want %s", tt.score, tt.reported, got, tt.want)
			}
		})
	}
}

func TestReportedHealthScore(t *testing.T) {
	zero, ninety := 0.0, 90.0
	for _, tt := range []struct {
		a    Aggregates
		want *float64
	}{
		{Aggregates{HealthScore: 0, HealthStatus: HealthUnknown}, nil},
		{Aggregates{}, nil},
		{Aggregates{HealthScore: 0, HealthStatus: HealthUnhealthy}, &zero},
		{Aggregates{HealthScore: 90, HealthStatus: HealthHealthy}, &ninety},
	} {
		got := tt.a.ReportedHealthScore()
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("Aggregates{HealthScore: %v, HealthStatus: %q}.ReportedHealthScore() = %v, want %v", tt.a.HealthScore, tt.a.HealthStatus, got, tt.want)
		}
	}
}
