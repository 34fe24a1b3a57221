package main

import (
	"fmt"
	"math"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// shape is the size of a synthetic catalogue.
type shape struct {
	Capabilities     int           // regular capabilities
	Components       int           // per capability
	Dependencies     int           // per capability (a DAG over its components)
	Jobs             int           // per capability
	MetricComponents int           // components with metrics, per capability
	MetricWindow     time.Duration // how far back metrics go
	MetricInterval   time.Duration // sampling interval
	Rules            int           // per capability

	Large        bool // add the large capability
	LargeJobs    int
	LargeMetrics int // spread over the large capability's MetricComponents components, 1 m apart
}

// items returns how many table items the catalogue holds (3 per capability: METADATA and the two
// index items).
func (s shape) items() int {
	per := 3 + s.Components + s.Dependencies + s.Jobs + s.metricsPerCapability() + s.Rules
	n := s.Capabilities * per
	if s.Large {
		n += 3 + s.Components + s.Dependencies + s.LargeJobs + s.LargeMetrics + s.Rules
	}
	return n
}

func (s shape) metricsPerCapability() int {
	return min(s.MetricComponents, s.Components) * int(s.MetricWindow/s.MetricInterval)
}

// componentTypes are the component types of a synthetic capability, one of each for the first
// eight components: componentsByType("api-server") therefore meets every capability once.
var componentTypes = []string{"ui-dashboard", "api-server", "mcp-server", "database", "cache", "message-queue", "worker", "gateway"}

var (
	domains       = []string{"operations", "risk", "customer", "payments", "analytics", "security", "platform", "finance"}
	priorities    = []catalog.Priority{catalog.PriorityCritical, catalog.PriorityHigh, catalog.PriorityMedium, catalog.PriorityLow}
	criticalities = []catalog.Criticality{catalog.CriticalityCritical, catalog.CriticalityHigh, catalog.CriticalityMedium, catalog.CriticalityLow}
	depTypes      = []catalog.DependencyType{catalog.DependencyRuntime, catalog.DependencyRuntime, catalog.DependencyData, catalog.DependencyOptional, catalog.DependencyFallback}
	layers        = []string{"presentation", "business", "business", "data", "data", "integration", "business", "presentation"}
	jobTypes      = []catalog.JobType{catalog.JobDeployment, catalog.JobConfiguration, catalog.JobScaling, catalog.JobMaintenance, catalog.JobDeployment, catalog.JobRollback}
	ruleTypes     = []catalog.RuleType{catalog.RuleBusiness, catalog.RuleOperational, catalog.RuleSecurity, catalog.RuleCompliance, catalog.RuleRouting}
)

// capabilityID is the ID of the i-th regular capability; largeID that of the large one.
func capabilityID(i int) string { return fmt.Sprintf("CAP-BENCH-%04d", i) }

const largeID = "CAP-LARGE-0001"

func componentID(capIndex, k int) string {
	return fmt.Sprintf("%s-%04d-%02d", componentTypes[k%len(componentTypes)], capIndex, k)
}

// generator builds the synthetic bundles relative to now.
type generator struct {
	shape  shape
	now    time.Time // UTC, truncated to the minute
	newest time.Time // newest metric sample of regular capabilities
}

func newGenerator(s shape, now time.Time) *generator {
	now = now.UTC().Truncate(time.Minute)
	return &generator{shape: s, now: now, newest: now.Truncate(s.MetricInterval)}
}

// bundle returns the i-th regular capability with everything its partition holds.
func (g *generator) bundle(i int) *catalog.Bundle {
	s := g.shape
	return g.build(i, capabilityID(i), fmt.Sprintf("Bench Capability %04d", i), s.Jobs, func(comps []*catalog.Component) []*catalog.Metric {
		n := int(s.MetricWindow / s.MetricInterval)
		var out []*catalog.Metric
		for k := range min(s.MetricComponents, len(comps)) {
			for j := n - 1; j >= 0; j-- {
				out = append(out, g.metric(comps[k], g.newest.Add(-time.Duration(j)*s.MetricInterval), "5m", j+k))
			}
		}
		return out
	})
}

// largeBundle returns the large capability: the same components, dependencies and rules as a
// regular one, LargeJobs jobs and LargeMetrics one-minute samples.
func (g *generator) largeBundle() *catalog.Bundle {
	s := g.shape
	return g.build(s.Capabilities, largeID, "Large Partition Capability", s.LargeJobs, func(comps []*catalog.Component) []*catalog.Metric {
		k := max(min(s.MetricComponents, len(comps)), 1)
		per := (s.LargeMetrics + k - 1) / k
		newest := g.now.Truncate(time.Minute)
		out := make([]*catalog.Metric, 0, s.LargeMetrics)
		for c := range k {
			for j := per - 1; j >= 0 && len(out) < s.LargeMetrics; j-- {
				out = append(out, g.metric(comps[c], newest.Add(-time.Duration(j)*time.Minute), "1m", j+c))
			}
		}
		return out
	})
}

func (g *generator) build(i int, id, name string, jobs int, metrics func([]*catalog.Component) []*catalog.Metric) *catalog.Bundle {
	s := g.shape
	c := &catalog.Capability{
		CapabilityID:   id,
		Name:           name,
		Description:    "Synthetic capability for the benchmark: components, a dependency DAG, jobs, metrics and rules of realistic size",
		BusinessDomain: domains[i%len(domains)],
		Status:         catalog.CapabilityActive,
		Priority:       priorities[i%len(priorities)],
		Owner:          fmt.Sprintf("team-%02d", i%17),
		CreatedBy:      "bench",
		Version:        fmt.Sprintf("%d.%d.0", 1+i%3, i%10),
		Tags:           []string{"bench", domains[i%len(domains)], fmt.Sprintf("tier-%d", 1+i%3)},
		BusinessMetrics: &catalog.BusinessMetrics{
			Sla: "99.9%", Rto: "15 minutes", Rpo: "5 minutes", CriticalityLevel: fmt.Sprintf("tier-%d", 1+i%3),
		},
		Architecture: &catalog.Architecture{Pattern: "microservices", DeploymentModel: "multi-region", ScalabilityType: "horizontal", Redundancy: "active-passive"},
		Compliance:   &catalog.Compliance{Standards: []string{"ISO-27001", "SOC2"}, LastAudit: catalog.TimePtr(g.now.AddDate(0, -2, 0)), CertificationStatus: "certified"},
		Aggregates:   catalog.Aggregates{AverageDeploymentTime: "11.0m", TotalIncidents: i % 4, MonthlyOperationalCost: float64(5000 + 100*(i%50)), UserCount: 100 + i},
		Lifecycle:    &catalog.Lifecycle{Phase: "production", LastMajorUpdate: catalog.TimePtr(g.now.AddDate(0, -3, 0)), NextReview: catalog.TimePtr(g.now.AddDate(0, 3, 0))},
	}
	comps := make([]*catalog.Component, s.Components)
	for k := range comps {
		comps[k] = g.component(i, k)
	}
	b := &catalog.Bundle{Capability: c, Components: comps}
	b.Dependencies = g.dependencies(comps, s.Dependencies)
	for j := range jobs {
		b.Jobs = append(b.Jobs, g.job(i, id, j, comps))
	}
	b.Metrics = metrics(comps)
	for k := range s.Rules {
		b.Rules = append(b.Rules, g.rule(i, k))
	}
	return b
}

func (g *generator) component(i, k int) *catalog.Component {
	typ := componentTypes[k%len(componentTypes)]
	id := componentID(i, k)
	avail := 99.5 + 0.49*math.Sin(float64(i*7+k))
	rt := 40 + 30*(1+math.Sin(float64(i+3*k)))
	return &catalog.Component{
		ComponentID:   id,
		Name:          fmt.Sprintf("%s %04d/%02d", typ, i, k),
		Description:   "Synthetic " + typ + " component of a benchmark capability",
		ComponentType: typ,
		Order:         k + 1,
		Layer:         layers[k%len(layers)],
		Status:        catalog.ComponentActive,
		Version:       fmt.Sprintf("1.%d.%d", k, i%10),
		Technology:    &catalog.Technology{Stack: "golang", Framework: "net/http", Language: "go", Runtime: "go-1.26", Dependencies: []string{"otel@1.30.0", "pgx@5.6.0"}},
		Deployment: &catalog.Deployment{
			Type: "container", Platform: "kubernetes", Image: id + ":1.0.0", Replicas: 2 + k%3,
			Resources: &catalog.Resources{CPU: "500m", Memory: "1Gi"},
			Endpoints: []catalog.Endpoint{{Type: "https", URL: "https://" + id + ".svc.example.com", Port: 443, HealthCheck: "/health"}},
		},
		Configuration: &catalog.Configuration{Environment: "production", ConfigMap: id + "-config", Secrets: []string{id + "-secret"}, FeatureFlags: map[string]any{"fastPath": k%2 == 0, "beta": false}},
		Health: &catalog.ComponentHealth{
			Status: catalog.HealthHealthy, LastCheck: catalog.TimePtr(g.now.Add(-2 * time.Minute)),
			Availability: math.Round(avail*1000) / 1000, ResponseTime: math.Round(rt), ErrorRate: 0.05 + 0.01*float64(k),
		},
		Sla:        &catalog.SLA{Availability: 99.5, ResponseTime: 100, ErrorRate: 0.5},
		Ownership:  &catalog.Ownership{Team: fmt.Sprintf("team-%02d", i%17), LeadEngineer: "lead.engineer", OncallRotation: "oncall", SlackChannel: "#" + id},
		Repository: &catalog.Repository{Type: "github", URL: "https://github.com/example/" + id, Branch: "main", CicdPipeline: "ci/" + id},
	}
}

// dependencies returns n edges of a DAG over comps: source k depends on target k+d, by
// increasing distance d.
func (g *generator) dependencies(comps []*catalog.Component, n int) []*catalog.Dependency {
	var out []*catalog.Dependency
	for d := 1; d < len(comps) && len(out) < n; d++ {
		for k := 0; k+d < len(comps) && len(out) < n; k++ {
			src, dst := comps[k], comps[k+d]
			e := len(out)
			out = append(out, &catalog.Dependency{
				SourceComponentID: src.ComponentID, SourceComponentName: src.Name,
				TargetComponentID: dst.ComponentID, TargetComponentName: dst.Name,
				DependencyType: depTypes[e%len(depTypes)],
				Criticality:    criticalities[e%len(criticalities)],
				Interface:      &catalog.DependencyInterface{Type: "rest", Protocol: "https", ConnectionString: "https://" + dst.ComponentID + ".svc.example.com"},
				Requirements: &catalog.Requirements{MinVersion: "1.0.0", Features: []string{"v2"},
					Performance: &catalog.PerformanceRequirements{MaxLatency: "100ms", MinThroughput: "100 rps"}},
				Fallback:   &catalog.Fallback{Strategy: "circuit-breaker", Timeout: "5s", Retries: 2},
				Contract:   &catalog.Contract{SchemaVersion: "1.0.0", ValidationEnabled: true},
				Monitoring: &catalog.Monitoring{SliEnabled: true, AlertThreshold: &catalog.AlertThreshold{ErrorRate: 1, Latency: 200}},
			})
		}
	}
	return out
}

func (g *generator) job(i int, capID string, j int, comps []*catalog.Component) *catalog.Job {
	start := g.now.Add(-time.Duration(j+1) * 7 * time.Hour)
	status := catalog.JobCompleted
	switch {
	case j == 0:
		status = catalog.JobRunning
	case j%11 == 5:
		status = catalog.JobFailed
	case j%17 == 9:
		status = catalog.JobRolledBack
	}
	jobID := fmt.Sprintf("JOB-%04d-%05d", i, j)
	job := &catalog.Job{
		JobID: jobID, JobType: jobTypes[j%len(jobTypes)], Status: status, Priority: priorities[j%len(priorities)],
		TriggeredBy: "ci-pipeline", ApprovedBy: "release.manager", StartTime: catalog.NewTimestamp(start),
		Strategy:   &catalog.Strategy{Type: "rolling", Canary: &catalog.Canary{Enabled: true, Percentage: 10, Duration: "5m"}, Rollback: &catalog.Rollback{Automatic: true}},
		Validation: &catalog.Validation{PreDeployment: &catalog.PreDeployment{HealthChecks: "passed", SmokeTests: "passed", SecurityScan: "passed"}},
		Metrics:    &catalog.JobMetrics{DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
		Artifacts:  &catalog.JobArtifacts{DeploymentPlan: "s3://deployments/" + capID + "/" + jobID + "/plan.yaml", Logs: "s3://deployments/" + capID + "/" + jobID + "/logs/"},
	}
	if len(comps) > 0 {
		c := comps[j%len(comps)]
		job.TargetComponents = []catalog.TargetComponent{{ComponentID: c.ComponentID, FromVersion: "1.0.0", ToVersion: "1.0.1", Status: string(status)}}
	}
	if status != catalog.JobRunning {
		end := start.Add(time.Duration(5+j%20) * time.Minute)
		job.EndTime = catalog.TimePtr(end)
		d := int(end.Sub(start) / time.Second)
		job.Duration = &d
	}
	return job
}

func (g *generator) metric(c *catalog.Component, at time.Time, interval string, k int) *catalog.Metric {
	w := math.Sin(0.26*float64(k)) * 0.5
	p95 := 80 * (1 + 0.1*w)
	req := 10000 + int(1000*w)
	failed := req / 500
	return &catalog.Metric{
		ComponentID: c.ComponentID, ComponentName: c.Name, MetricType: catalog.MetricPerformance,
		Timestamp: catalog.NewTimestamp(at), Interval: interval,
		Dimensions: map[string]any{"environment": "production", "region": "us-east-1", "availability_zone": "us-east-1a"},
		Values: &catalog.MetricValues{
			Availability: &catalog.AvailabilityValue{Value: math.Round((99.9+0.09*w)*1000) / 1000, Unit: "percent", Status: "healthy"},
			Latency:      &catalog.LatencyValue{P50: math.Round(p95 * 0.4), P95: math.Round(p95), P99: math.Round(p95 * 1.6), Max: math.Round(p95 * 3), Unit: "milliseconds", Status: "healthy"},
			Throughput:   &catalog.ThroughputValue{Requests: req, Successful: req - failed, Failed: failed, Unit: "per_minute", Status: "healthy"},
			Errors:       &catalog.ErrorsValue{Rate: 0.2, Count: failed, Unit: "percent", Types: map[string]any{"4xx": float64(failed / 2), "5xx": float64(failed - failed/2)}, Status: "healthy"},
			Saturation:   &catalog.SaturationValue{CPU: math.Round((45+10*w)*10) / 10, Memory: 60, Connections: 100, Unit: "percent", Status: "healthy"},
		},
		Trends: &catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "stable"},
	}
}

func (g *generator) rule(i, k int) *catalog.Rule {
	status := catalog.RuleActive
	if k%5 == 4 {
		status = catalog.RuleInactive
	}
	return &catalog.Rule{
		RuleID:        fmt.Sprintf("rule-%04d-%02d", i, k),
		Name:          fmt.Sprintf("Severity rule %02d", k),
		Description:   "Maps incoming events to severities by weighted conditions",
		RuleType:      ruleTypes[k%len(ruleTypes)],
		Scope:         "capability",
		Priority:      priorities[k%len(priorities)],
		Order:         k + 1,
		Status:        status,
		Version:       "1.0.0",
		Author:        "bench",
		ApprovedBy:    "reviewer",
		EffectiveFrom: catalog.TimePtr(g.now.AddDate(0, -1, 0)),
		Conditions: []catalog.Condition{
			{Field: "source", Operator: "in", Values: []any{"production", "staging"}, Weight: 2},
			{Field: "error_count", Operator: ">=", Value: float64(10 * (k + 1)), Weight: 3},
			{Field: "customer_impact", Operator: "equals", Value: "high", Weight: 5},
		},
		Actions: []catalog.Action{
			{Type: "set_severity", Parameters: map[string]any{"calculation": "sum_weights", "mapping": map[string]any{"0-3": "low", "4-6": "medium", "7-9": "high", "10+": "critical"}}},
			{Type: "notify", Parameters: map[string]any{"channels": []any{"slack"}, "template": "bench-v1"}},
		},
		Metadata: &catalog.RuleMetadata{Tags: []string{"bench"}, Compliance: []string{"SOC2-CC7.2"}, TestCoverage: 90},
	}
}
