// Package sample builds the sample Business Capability Catalogue: the seed's Alert Management
// capability with its own IDs and values, plus six more capabilities across four business
// domains, so that every component type, dependency type, job type and status, rule type and
// health state appears at least once. LoadArtifacts writes its jobs' artifacts to the object
// store.
package sample

import (
	"math"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// MetricInterval is the sampling interval of the sample's performance metrics.
const MetricInterval = 5 * time.Minute

// MetricWindow is how far back before now the sample's metrics reach.
const MetricWindow = 6 * time.Hour

// Catalogue returns the sample catalogue relative to now: seven capabilities, each a
// *catalog.Bundle with its components, dependencies, jobs, metrics and rules, recounted (see
// catalog.Bundle.Recount) so that every capability's aggregates equal what its bundle holds.
//
// The seed's Alert Management capability (CAP-ALERT-MGT-001) keeps the seed's IDs, values and
// fixed timestamps: its four components, the api-server-alert-001 -> database-alert-001
// dependency, the JOB-DEPLOY-456 deployment (2025-11-22T10:00:00Z) and the
// rule-alert-severity-mapping rule. Everything else is placed relative to now: component health
// was last checked a few minutes before now, jobs started minutes to days before now (a pending
// job may be scheduled a few hours after now), and performance metrics are sampled every
// MetricInterval over the MetricWindow before now, the newest at now truncated to
// MetricInterval, for every component of Alert Management and one or two components of each
// other capability. Metric values vary deterministically (sums of sines of the sample index);
// the newest sample of api-server-alert-001 carries the seed's values.
//
// The capabilities are healthy (Alert Management, Customer Onboarding, Incident Response),
// degraded (Fraud Detection, Reporting & Analytics), unhealthy (Payment Processing) and unknown
// (Identity Verification, in planning, whose components report no health).
//
// Catalogue is deterministic: two calls with the same now return deep-equal results. Every call
// returns fresh values that the caller may modify.
func Catalogue(now time.Time) []*catalog.Bundle {
	now = now.UTC()
	g := &gen{now: now, newest: now.Truncate(MetricInterval)}
	bundles := []*catalog.Bundle{
		g.alertManagement(),
		g.fraudDetection(),
		g.customerOnboarding(),
		g.paymentProcessing(),
		g.incidentResponse(),
		g.identityVerification(),
		g.reportingAnalytics(),
	}
	for _, b := range bundles {
		b.Recount()
	}
	return bundles
}

// gen carries the reference instants of one Catalogue call.
type gen struct {
	now    time.Time // the caller's now, in UTC
	newest time.Time // the newest metric sample: now truncated to MetricInterval
}

// ago returns the timestamp d before now.
func (g *gen) ago(d time.Duration) *catalog.Timestamp { return catalog.TimePtr(g.now.Add(-d)) }

// day returns midnight UTC of the day n days after today (n may be negative).
func (g *gen) day(n int) *catalog.Timestamp {
	return catalog.TimePtr(g.now.Truncate(24*time.Hour).AddDate(0, 0, n))
}

// fixed parses one of the seed's RFC 3339 timestamps.
func fixed(s string) catalog.Timestamp {
	t, err := catalog.ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

func fixedPtr(s string) *catalog.Timestamp { t := fixed(s); return &t }

func intPtr(n int) *int { return &n }

func strPtr(s string) *string { return &s }

// ---------------------------------------------------------------------------------------------
// Component building blocks.

func tech(stack, framework, language, runtime string, deps ...string) *catalog.Technology {
	return &catalog.Technology{Stack: stack, Framework: framework, Language: language, Runtime: runtime, Dependencies: deps}
}

func endpoint(typ, url string, port int, healthCheck string) catalog.Endpoint {
	return catalog.Endpoint{Type: typ, URL: url, Port: port, HealthCheck: healthCheck}
}

// k8s is a container deployment on Kubernetes.
func k8s(image string, replicas int, cpu, memory string, endpoints ...catalog.Endpoint) *catalog.Deployment {
	return &catalog.Deployment{
		Type: "container", Platform: "kubernetes", Image: image, Replicas: replicas,
		Resources: &catalog.Resources{CPU: cpu, Memory: memory}, Endpoints: endpoints,
	}
}

// managed is a cloud-managed service deployment.
func managed(platform string, replicas int, cpu, memory string, endpoints ...catalog.Endpoint) *catalog.Deployment {
	return &catalog.Deployment{
		Type: "managed", Platform: platform, Replicas: replicas,
		Resources: &catalog.Resources{CPU: cpu, Memory: memory}, Endpoints: endpoints,
	}
}

func config(env, configMap string, secrets []string, flags map[string]any) *catalog.Configuration {
	return &catalog.Configuration{Environment: env, ConfigMap: configMap, Secrets: secrets, FeatureFlags: flags}
}

// health is a health observation checked `checked` before now.
func (g *gen) health(status catalog.HealthStatus, availability, responseTime, errorRate float64, alerts int, checked time.Duration) *catalog.ComponentHealth {
	return &catalog.ComponentHealth{
		Status: status, LastCheck: g.ago(checked), Availability: availability,
		ResponseTime: responseTime, ErrorRate: errorRate, ActiveAlerts: alerts,
	}
}

func sla(availability, responseTime, errorRate float64) *catalog.SLA {
	return &catalog.SLA{Availability: availability, ResponseTime: responseTime, ErrorRate: errorRate}
}

func owner(team, lead, oncall, slack string) *catalog.Ownership {
	return &catalog.Ownership{Team: team, LeadEngineer: lead, OncallRotation: oncall, SlackChannel: slack}
}

func repo(name string) *catalog.Repository {
	return &catalog.Repository{
		Type: "github", URL: "https://github.com/company/" + name, Branch: "main", CicdPipeline: "jenkins/" + name,
	}
}

// edge returns d as the dependency src -> dst, with the components' IDs and names.
func edge(src, dst *catalog.Component, d catalog.Dependency) *catalog.Dependency {
	d.SourceComponentID, d.SourceComponentName = src.ComponentID, src.Name
	d.TargetComponentID, d.TargetComponentName = dst.ComponentID, dst.Name
	return &d
}

func contract(schema string) *catalog.Contract {
	return &catalog.Contract{SchemaVersion: schema, ValidationEnabled: true, BreakingChanges: false}
}

func monitoring(errorRate, latency float64) *catalog.Monitoring {
	return &catalog.Monitoring{SliEnabled: true, AlertThreshold: &catalog.AlertThreshold{ErrorRate: errorRate, Latency: latency}}
}

func restAPI(url string) *catalog.DependencyInterface {
	return &catalog.DependencyInterface{Type: "rest", Protocol: "https", ConnectionString: url}
}

func circuitBreaker(timeout string, retries int) *catalog.Fallback {
	return &catalog.Fallback{Strategy: "circuit-breaker", Timeout: timeout, Retries: retries}
}

// ---------------------------------------------------------------------------------------------
// Job building blocks.

// span sets a finished job's start, end and duration (whole seconds).
func span(j *catalog.Job, start time.Time, d time.Duration) *catalog.Job {
	j.StartTime = catalog.NewTimestamp(start)
	j.EndTime = catalog.TimePtr(start.Add(d))
	j.Duration = intPtr(int(d / time.Second))
	return j
}

// started sets an unfinished job's start.
func started(j *catalog.Job, start time.Time) *catalog.Job {
	j.StartTime = catalog.NewTimestamp(start)
	return j
}

func artifacts(capabilityID, jobID string) *catalog.JobArtifacts {
	base := "s3://deployments/" + capabilityID + "/" + jobID + "/"
	return &catalog.JobArtifacts{DeploymentPlan: base + "plan.yaml", Logs: base + "logs/", Reports: base + "reports/"}
}

func target(id, from, to, status string) catalog.TargetComponent {
	return catalog.TargetComponent{ComponentID: id, FromVersion: from, ToVersion: to, Status: status}
}

func rolling(canaryPercent int, canaryDuration string, errorRate, latency float64) *catalog.Strategy {
	s := &catalog.Strategy{
		Type:     "rolling",
		Rollback: &catalog.Rollback{Automatic: true, Threshold: &catalog.AlertThreshold{ErrorRate: errorRate, Latency: latency}},
	}
	if canaryPercent > 0 {
		s.Canary = &catalog.Canary{Enabled: true, Percentage: canaryPercent, Duration: canaryDuration}
	} else {
		s.Canary = &catalog.Canary{Enabled: false}
	}
	return s
}

func validation(health, smoke, security, functional, performance, integration string) *catalog.Validation {
	v := &catalog.Validation{PreDeployment: &catalog.PreDeployment{HealthChecks: health, SmokeTests: smoke, SecurityScan: security}}
	if functional != "" || performance != "" || integration != "" {
		v.PostDeployment = &catalog.PostDeployment{FunctionalTests: functional, PerformanceTests: performance, IntegrationTests: integration}
	}
	return v
}

// ---------------------------------------------------------------------------------------------
// Rule building blocks.

// severityMapping is the seed's sum_weights severity bands.
func severityMapping() map[string]any {
	return map[string]any{"0-3": "low", "4-6": "medium", "7-9": "high", "10+": "critical"}
}

func list(v ...any) []any { return v }

// ---------------------------------------------------------------------------------------------
// Alert Management: the seed's capability.

const alertID = "CAP-ALERT-MGT-001"

func (g *gen) alertManagement() *catalog.Bundle {
	seedCreated := fixed("2025-11-22T09:00:00.000000Z")

	capability := &catalog.Capability{
		Meta:           catalog.Meta{CreatedAt: seedCreated, UpdatedAt: fixed("2025-11-22T14:30:00.000000Z")},
		CapabilityID:   alertID,
		Name:           "Alert Management",
		Description:    "End-to-end alert lifecycle management including creation, routing, escalation, and resolution",
		BusinessDomain: "operations",
		Status:         catalog.CapabilityActive,
		Priority:       catalog.PriorityCritical,
		Owner:          "operations-team",
		CreatedBy:      "john.smith",
		Version:        "2.1.0",
		Tags:           []string{"alerting", "monitoring", "incident-management"},
		BusinessMetrics: &catalog.BusinessMetrics{
			Sla: "99.99%", Rto: "5 minutes", Rpo: "1 minute", CriticalityLevel: "tier-1",
		},
		Architecture: &catalog.Architecture{
			Pattern: "microservices", DeploymentModel: "multi-region", ScalabilityType: "horizontal", Redundancy: "active-active",
		},
		Compliance: &catalog.Compliance{
			Standards:           []string{"ISO-27001", "SOC2", "GDPR"},
			LastAudit:           fixedPtr("2025-10-15T00:00:00Z"),
			CertificationStatus: "certified",
		},
		Aggregates: catalog.Aggregates{
			AverageDeploymentTime:  "12.5m",
			TotalIncidents:         5,
			MonthlyOperationalCost: 15000,
			UserCount:              500,
		},
		Lifecycle: &catalog.Lifecycle{
			Phase:             "production",
			PlannedRetirement: nil,
			LastMajorUpdate:   fixedPtr("2025-10-01T00:00:00Z"),
			NextReview:        fixedPtr("2025-12-01T00:00:00Z"),
		},
	}

	ui := &catalog.Component{
		Meta:          catalog.Meta{CreatedAt: seedCreated, UpdatedAt: fixed("2025-11-22T14:00:00.000000Z")},
		ComponentID:   "ui-dashboard-alert-001",
		Name:          "Alert Management Dashboard",
		Description:   "React-based dashboard for alert visualization and management",
		ComponentType: "ui-dashboard",
		Order:         1,
		Layer:         "presentation",
		Status:        catalog.ComponentActive,
		Version:       "2.3.1",
		Technology:    tech("react", "next.js", "typescript", "node-18", "react@18.2.0", "next@13.4.0", "mui@5.14.0"),
		Deployment:    k8s("alert-dashboard:2.3.1", 3, "500m", "1Gi", endpoint("https", "https://alerts.company.com", 443, "/health")),
		Configuration: config("production", "alert-dashboard-config", []string{"alert-api-key", "auth-secret"},
			map[string]any{"darkMode": true, "advancedFilters": true, "bulkActions": false}),
		Health:     g.health(catalog.HealthHealthy, 99.98, 125, 0.02, 0, 2*time.Minute),
		Sla:        sla(99.9, 200, 0.1),
		Ownership:  owner("frontend-team", "sarah.johnson", "frontend-oncall", "#alert-dashboard"),
		Repository: repo("alert-dashboard"),
	}
	api := &catalog.Component{
		Meta:          catalog.Meta{CreatedAt: seedCreated},
		ComponentID:   "api-server-alert-001",
		Name:          "Alert API Server",
		Description:   "REST and WebSocket API for alert ingestion, routing, acknowledgement and escalation",
		ComponentType: "api-server",
		Order:         2,
		Layer:         "business",
		Status:        catalog.ComponentActive,
		Version:       "1.6.0",
		Technology:    tech("golang", "gin", "go", "go-1.21", "gin@1.9.1", "pgx@5.4.3", "otel@1.19.0"),
		Deployment: k8s("alert-api:1.6.0", 4, "1000m", "2Gi",
			endpoint("https", "https://api.alerts.company.com", 443, "/health"),
			endpoint("grpc", "grpc://alert-api.alerts.svc.cluster.local", 9090, "/grpc.health.v1.Health/Check")),
		Configuration: config("production", "alert-api-config", []string{"alert-db-connection", "jwt-signing-key"},
			map[string]any{"asyncEscalation": true, "bulkAcknowledge": true, "aiTriage": false}),
		Health:     g.health(catalog.HealthHealthy, 99.99, 125, 0.13, 0, time.Minute),
		Sla:        sla(99.95, 150, 0.5),
		Ownership:  owner("backend-team", "michael.chen", "backend-oncall", "#alert-api"),
		Repository: repo("alert-api"),
	}
	mcp := &catalog.Component{
		Meta:          catalog.Meta{CreatedAt: seedCreated},
		ComponentID:   "mcp-server-alert-001",
		Name:          "Alert MCP Server",
		Description:   "Model Context Protocol server exposing alert search, triage and acknowledgement tools to AI assistants",
		ComponentType: "mcp-server",
		Order:         3,
		Layer:         "business",
		Status:        catalog.ComponentActive,
		Version:       "0.9.2",
		Technology:    tech("python", "fastmcp", "python", "python-3.11", "mcp@1.2.0", "httpx@0.27.0", "pydantic@2.6.0"),
		Deployment:    k8s("alert-mcp-server:0.9.2", 2, "250m", "512Mi", endpoint("sse", "https://mcp.alerts.company.com/sse", 443, "/health")),
		Configuration: config("production", "alert-mcp-config", []string{"alert-api-key", "mcp-oauth-client"},
			map[string]any{"writeTools": false, "summaries": true}),
		Health:     g.health(catalog.HealthHealthy, 99.95, 180, 0.05, 0, 3*time.Minute),
		Sla:        sla(99.5, 300, 0.5),
		Ownership:  owner("ai-platform-team", "priya.patel", "ai-platform-oncall", "#alert-mcp"),
		Repository: repo("alert-mcp-server"),
	}
	db := &catalog.Component{
		Meta:          catalog.Meta{CreatedAt: seedCreated},
		ComponentID:   "database-alert-001",
		Name:          "Alert Database",
		Description:   "PostgreSQL cluster holding alerts, escalation policies and their audit history, partitioned by month",
		ComponentType: "database",
		Order:         4,
		Layer:         "data",
		Status:        catalog.ComponentActive,
		Version:       "15.4",
		Technology:    tech("postgresql", "aws-rds", "sql", "postgresql-15", "pg_partman@4.7.0", "pg_stat_statements@1.10"),
		Deployment: managed("aws-rds", 2, "4", "32Gi",
			endpoint("postgresql", "postgresql://alert-db.cluster-abc123.us-east-1.rds.amazonaws.com:5432/alerts", 5432, "SELECT 1")),
		Configuration: config("production", "alert-db-parameters", []string{"alert-db-master-credentials"},
			map[string]any{"performanceInsights": true, "multiAz": true}),
		Health:     g.health(catalog.HealthHealthy, 99.999, 8, 0, 0, 4*time.Minute),
		Sla:        sla(99.99, 10, 0.01),
		Ownership:  owner("data-platform-team", "david.kim", "dba-oncall", "#alert-db"),
		Repository: repo("alert-db-migrations"),
	}

	deps := []*catalog.Dependency{
		edge(ui, api, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime,
			Criticality:    catalog.CriticalityCritical,
			Interface:      restAPI("https://api.alerts.company.com/v2"),
			Requirements: &catalog.Requirements{
				MinVersion: "1.5.0", Features: []string{"alerts-v2", "websocket-updates"},
				Performance: &catalog.PerformanceRequirements{MaxLatency: "200ms", MinThroughput: "500 rps"},
			},
			Fallback:   &catalog.Fallback{Strategy: "retry", Timeout: "10s", Retries: 2},
			Contract:   contract("2.0.0"),
			Monitoring: monitoring(1, 200),
		}),
		// The seed's dependency, exactly.
		{
			Meta:                catalog.Meta{CreatedAt: seedCreated, UpdatedAt: seedCreated},
			SourceComponentID:   "api-server-alert-001",
			SourceComponentName: "Alert API Server",
			TargetComponentID:   "database-alert-001",
			TargetComponentName: "Alert Database",
			DependencyType:      catalog.DependencyRuntime,
			Criticality:         catalog.CriticalityCritical,
			Interface: &catalog.DependencyInterface{
				Type: "database", Protocol: "postgresql", ConnectionString: "vault:alert-db-connection", PoolSize: 20,
			},
			Requirements: &catalog.Requirements{
				MinVersion:  "14.0",
				Features:    []string{"json", "partitioning", "full-text-search"},
				Performance: &catalog.PerformanceRequirements{MaxLatency: "10ms", MinThroughput: "1000 qps"},
			},
			Fallback:   &catalog.Fallback{Strategy: "circuit-breaker", Timeout: "30s", Retries: 3, BackupComponent: nil},
			Contract:   &catalog.Contract{SchemaVersion: "1.2.0", ValidationEnabled: true, BreakingChanges: false},
			Monitoring: &catalog.Monitoring{SliEnabled: true, AlertThreshold: &catalog.AlertThreshold{ErrorRate: 1, Latency: 100}},
		},
		edge(mcp, api, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime,
			Criticality:    catalog.CriticalityHigh,
			Interface:      restAPI("https://api.alerts.company.com/v2"),
			Requirements: &catalog.Requirements{
				MinVersion: "1.6.0", Features: []string{"alerts-v2", "search"},
				Performance: &catalog.PerformanceRequirements{MaxLatency: "250ms", MinThroughput: "50 rps"},
			},
			Fallback:   circuitBreaker("15s", 2),
			Contract:   contract("2.0.0"),
			Monitoring: monitoring(2, 250),
		}),
		edge(mcp, db, catalog.Dependency{
			DependencyType: catalog.DependencyData,
			Criticality:    catalog.CriticalityMedium,
			Interface: &catalog.DependencyInterface{
				Type: "database", Protocol: "postgresql", ConnectionString: "vault:alert-db-readonly", PoolSize: 5,
			},
			Requirements: &catalog.Requirements{
				MinVersion: "14.0", Features: []string{"full-text-search"},
				Performance: &catalog.PerformanceRequirements{MaxLatency: "50ms", MinThroughput: "100 qps"},
			},
			Fallback:   &catalog.Fallback{Strategy: "cache", Timeout: "5s", Retries: 1},
			Contract:   contract("1.2.0"),
			Monitoring: monitoring(2, 50),
		}),
		edge(ui, mcp, catalog.Dependency{
			DependencyType: catalog.DependencyOptional,
			Criticality:    catalog.CriticalityLow,
			Interface:      &catalog.DependencyInterface{Type: "mcp", Protocol: "sse", ConnectionString: "https://mcp.alerts.company.com/sse"},
			Requirements:   &catalog.Requirements{MinVersion: "0.9.0", Features: []string{"alert-summaries"}},
			Fallback:       &catalog.Fallback{Strategy: "graceful-degradation", Timeout: "3s"},
			Contract:       contract("0.3.0"),
			Monitoring:     monitoring(5, 1000),
		}),
	}

	seedJob := &catalog.Job{
		Meta:             catalog.Meta{CreatedAt: fixed("2025-11-22T10:00:00.000000Z"), UpdatedAt: fixed("2025-11-22T10:15:00.000000Z")},
		JobID:            "JOB-DEPLOY-456",
		JobType:          catalog.JobDeployment,
		Status:           catalog.JobCompleted,
		Priority:         catalog.PriorityHigh,
		TriggeredBy:      "ci-pipeline",
		ApprovedBy:       "john.smith",
		StartTime:        fixed("2025-11-22T10:00:00.000000Z"),
		EndTime:          fixedPtr("2025-11-22T10:15:00.000000Z"),
		Duration:         intPtr(900),
		TargetComponents: []catalog.TargetComponent{target("api-server-alert-001", "1.5.2", "1.6.0", "completed"), target("ui-dashboard-alert-001", "2.3.0", "2.3.1", "completed")},
		Strategy: &catalog.Strategy{
			Type:     "rolling",
			Canary:   &catalog.Canary{Enabled: true, Percentage: 10, Duration: "5m"},
			Rollback: &catalog.Rollback{Automatic: true, Threshold: &catalog.AlertThreshold{ErrorRate: 5, Latency: 500}},
		},
		Validation: &catalog.Validation{
			PreDeployment:  &catalog.PreDeployment{HealthChecks: "passed", SmokeTests: "passed", SecurityScan: "passed"},
			PostDeployment: &catalog.PostDeployment{FunctionalTests: "passed", PerformanceTests: "passed", IntegrationTests: "passed"},
		},
		Metrics: &catalog.JobMetrics{AffectedUsers: 0, Downtime: 0, RollbacksTriggered: 0, DeploymentsCompleted: 2, TotalArtifactsDeployed: 2},
		Artifacts: &catalog.JobArtifacts{
			DeploymentPlan: "s3://deployments/CAP-ALERT-MGT-001/JOB-456/plan.yaml",
			Logs:           "s3://deployments/CAP-ALERT-MGT-001/JOB-456/logs/",
			Reports:        "s3://deployments/CAP-ALERT-MGT-001/JOB-456/reports/",
		},
	}
	jobs := []*catalog.Job{
		seedJob,
		started(&catalog.Job{
			JobID: "JOB-DEPLOY-457", JobType: catalog.JobDeployment, Status: catalog.JobRunning, Priority: catalog.PriorityHigh,
			TriggeredBy: "ci-pipeline", ApprovedBy: "john.smith",
			TargetComponents: []catalog.TargetComponent{target("mcp-server-alert-001", "0.9.2", "1.0.0", "in_progress")},
			Strategy:         rolling(10, "5m", 5, 500),
			Validation:       validation("passed", "passed", "passed", "", "", ""),
			Metrics:          &catalog.JobMetrics{},
			Artifacts:        artifacts(alertID, "JOB-DEPLOY-457"),
		}, g.now.Add(-20*time.Minute)),
		span(&catalog.Job{
			JobID: "JOB-CONFIG-458", JobType: catalog.JobConfiguration, Status: catalog.JobFailed, Priority: catalog.PriorityMedium,
			TriggeredBy: "sarah.johnson", ApprovedBy: "john.smith",
			TargetComponents: []catalog.TargetComponent{target("ui-dashboard-alert-001", "2.3.1", "2.3.1", "failed")},
			Strategy:         &catalog.Strategy{Type: "in-place", Rollback: &catalog.Rollback{Automatic: true}},
			Validation:       validation("passed", "passed", "passed", "failed", "skipped", "skipped"),
			Metrics:          &catalog.JobMetrics{RollbacksTriggered: 1},
			Artifacts:        artifacts(alertID, "JOB-CONFIG-458"),
		}, g.now.Add(-3*time.Hour), 4*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-SCALE-459", JobType: catalog.JobScaling, Status: catalog.JobCompleted, Priority: catalog.PriorityLow,
			TriggeredBy:      "horizontal-pod-autoscaler",
			TargetComponents: []catalog.TargetComponent{target("api-server-alert-001", "1.6.0", "1.6.0", "completed")},
			Strategy:         &catalog.Strategy{Type: "horizontal"},
			Validation:       validation("passed", "", "", "", "passed", ""),
			Metrics:          &catalog.JobMetrics{},
			Artifacts:        artifacts(alertID, "JOB-SCALE-459"),
		}, g.now.Add(-26*time.Hour), 3*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-MAINT-460", JobType: catalog.JobMaintenance, Status: catalog.JobCompleted, Priority: catalog.PriorityLow,
			TriggeredBy: "maintenance-window", ApprovedBy: "david.kim",
			TargetComponents: []catalog.TargetComponent{target("database-alert-001", "15.3", "15.4", "completed")},
			Strategy:         &catalog.Strategy{Type: "blue-green", Rollback: &catalog.Rollback{Automatic: false}},
			Validation:       validation("passed", "passed", "", "passed", "passed", "passed"),
			Metrics:          &catalog.JobMetrics{Downtime: 12, DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(alertID, "JOB-MAINT-460"),
		}, g.now.Add(-74*time.Hour), 35*time.Minute),
	}

	rules := []*catalog.Rule{
		{
			Meta:           catalog.Meta{CreatedAt: seedCreated, UpdatedAt: fixed("2025-11-22T12:00:00.000000Z")},
			RuleID:         "rule-alert-severity-mapping",
			Name:           "Alert Severity Mapping",
			Description:    "Maps incoming alerts to severity levels based on criteria",
			RuleType:       catalog.RuleBusiness,
			Scope:          "capability",
			Priority:       catalog.PriorityHigh,
			Order:          1,
			Status:         catalog.RuleActive,
			Version:        "1.2.0",
			Author:         "operations-team",
			ApprovedBy:     "jane.doe",
			EffectiveFrom:  fixedPtr("2025-11-22T00:00:00Z"),
			EffectiveUntil: nil,
			Conditions: []catalog.Condition{
				{Field: "source", Operator: "in", Values: list("production", "staging"), Weight: 2},
				{Field: "error_count", Operator: ">=", Value: float64(100), Weight: 3},
				{Field: "customer_impact", Operator: "equals", Value: "high", Weight: 5},
			},
			Actions: []catalog.Action{
				{Type: "set_severity", Parameters: map[string]any{"calculation": "sum_weights", "mapping": severityMapping()}},
				{Type: "notify", Parameters: map[string]any{"channels": list("slack", "pagerduty"), "template": "alert-notification-v2"}},
			},
			Metadata: &catalog.RuleMetadata{
				Tags: []string{"alerting", "severity", "business-logic"}, Compliance: []string{"SOC2-CC7.2"},
				TestCoverage: 95, LastReview: fixedPtr("2025-11-01T00:00:00Z"),
			},
			Metrics: &catalog.RuleMetrics{
				ExecutionCount: 45230, AverageExecutionTime: 2.3, SuccessRate: 99.98, LastExecuted: fixedPtr("2025-11-22T14:29:55Z"),
			},
		},
		{
			RuleID:        "rule-alert-escalation-timeout",
			Name:          "Unacknowledged Alert Escalation",
			Description:   "Escalates high and critical alerts that stay unacknowledged past the response window",
			RuleType:      catalog.RuleOperational,
			Scope:         "capability",
			Priority:      catalog.PriorityMedium,
			Order:         2,
			Status:        catalog.RuleActive,
			Version:       "1.0.3",
			Author:        "operations-team",
			ApprovedBy:    "john.smith",
			EffectiveFrom: fixedPtr("2025-11-01T00:00:00Z"),
			Conditions: []catalog.Condition{
				{Field: "alert.severity", Operator: "in", Values: list("high", "critical"), Weight: 3},
				{Field: "alert.unacknowledged_minutes", Operator: ">=", Value: float64(15), Weight: 5},
			},
			Actions: []catalog.Action{
				{Type: "escalate", Parameters: map[string]any{"target": "incident-commander", "channel": "pagerduty"}},
				{Type: "notify", Parameters: map[string]any{"channels": list("slack"), "template": "escalation-notice-v1"}},
			},
			Metadata: &catalog.RuleMetadata{
				Tags: []string{"alerting", "escalation"}, Compliance: []string{"SOC2-CC7.3"},
				TestCoverage: 88, LastReview: g.day(-20),
			},
			Metrics: &catalog.RuleMetrics{ExecutionCount: 3120, AverageExecutionTime: 1.1, SuccessRate: 100, LastExecuted: g.ago(7 * time.Minute)},
		},
		{
			RuleID:        "rule-alert-webhook-allowlist",
			Name:          "Webhook Source Allow-list",
			Description:   "Rejects alert webhooks from sources outside the monitoring allow-list",
			RuleType:      catalog.RuleSecurity,
			Scope:         "component",
			Priority:      catalog.PriorityHigh,
			Order:         3,
			Status:        catalog.RuleInactive,
			Version:       "0.4.0",
			Author:        "security-team",
			ApprovedBy:    "jane.doe",
			EffectiveFrom: g.day(-45),
			Conditions: []catalog.Condition{
				{Field: "request.source", Operator: "not_in", Values: list("prometheus", "datadog", "cloudwatch", "grafana"), Weight: 10},
			},
			Actions: []catalog.Action{
				{Type: "reject", Parameters: map[string]any{"statusCode": float64(403), "reason": "source not allow-listed"}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"security", "webhooks"}, Compliance: []string{"ISO-27001-A.13.1"}, TestCoverage: 72},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 0},
		},
	}

	metrics := g.series(series{
		comp: api, cur: level{avail: 100, p95: 125, errRate: 0.13, rpm: 15420, cpu: 45.2, mem: 62.1, conns: 120},
		phase: 0.0, serverShare: 0.25,
		trends: catalog.Trends{Availability: "stable", Latency: "improving", Throughput: "increasing", Errors: "stable"},
		events: []event{
			{id: "ALT-789", condition: "latency.p99 > 500ms", from: g.newest.Add(-5 * time.Minute), to: g.newest.Add(-2 * time.Minute), latency: 2.8},
			{id: "ALT-741", condition: "errors.rate > 0.5%", from: g.newest.Add(-155 * time.Minute), to: g.newest.Add(-141 * time.Minute), errors: 5},
		},
	})
	metrics = append(metrics, g.series(series{
		comp: ui, cur: level{avail: 99.98, p95: 125, errRate: 0.02, rpm: 2400, cpu: 22.5, mem: 48.3, conns: 310},
		phase: 0.8, serverShare: 0.1,
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "stable"},
	})...)
	metrics = append(metrics, g.series(series{
		comp: mcp, cur: level{avail: 99.95, p95: 180, errRate: 0.05, rpm: 320, cpu: 18.4, mem: 41.7, conns: 24},
		phase: 1.7, serverShare: 0.4,
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "improving"},
	})...)
	metrics = append(metrics, g.series(series{
		comp: db, cur: level{avail: 100, p95: 8, errRate: 0, rpm: 42000, cpu: 38.6, mem: 71.2, conns: 180},
		phase:  2.6,
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "stable"},
	})...)

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{ui, api, mcp, db},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Fraud Detection: risk domain, active, degraded (a lagging model worker and event stream).

const fraudID = "CAP-FRAUD-DET-001"

func (g *gen) fraudDetection() *catalog.Bundle {
	capability := &catalog.Capability{
		CapabilityID:    fraudID,
		Name:            "Fraud Detection",
		Description:     "Real-time scoring of card and account transactions against fraud models, with case management for analysts",
		BusinessDomain:  "risk",
		Status:          catalog.CapabilityActive,
		Priority:        catalog.PriorityCritical,
		Owner:           "risk-engineering",
		CreatedBy:       "elena.garcia",
		Version:         "3.4.0",
		Tags:            []string{"fraud", "machine-learning", "real-time", "risk"},
		BusinessMetrics: &catalog.BusinessMetrics{Sla: "99.95%", Rto: "15 minutes", Rpo: "0 minutes", CriticalityLevel: "tier-1"},
		Architecture: &catalog.Architecture{
			Pattern: "event-driven", DeploymentModel: "multi-region", ScalabilityType: "horizontal", Redundancy: "active-passive",
		},
		Compliance: &catalog.Compliance{Standards: []string{"PCI-DSS", "SOC2"}, LastAudit: g.day(-60), CertificationStatus: "certified"},
		Aggregates: catalog.Aggregates{AverageDeploymentTime: "18.0m", TotalIncidents: 6, MonthlyOperationalCost: 42000, UserCount: 85},
		Lifecycle:  &catalog.Lifecycle{Phase: "production", LastMajorUpdate: g.day(-120), NextReview: g.day(30)},
	}

	api := &catalog.Component{
		ComponentID:   "api-server-fraud-001",
		Name:          "Fraud Scoring API",
		Description:   "Synchronous scoring endpoint called by the payment flow before authorisation",
		ComponentType: "api-server",
		Order:         1,
		Layer:         "business",
		Status:        catalog.ComponentActive,
		Version:       "3.4.0",
		Technology:    tech("java", "spring-boot", "java", "jvm-21", "spring-boot@3.2.1", "resilience4j@2.1.0"),
		Deployment:    k8s("fraud-scoring-api:3.4.0", 6, "2000m", "4Gi", endpoint("https", "https://fraud.internal.company.com", 443, "/actuator/health")),
		Configuration: config("production", "fraud-api-config", []string{"fraud-api-mtls", "feature-store-token"},
			map[string]any{"shadowModel": true, "explainScores": false}),
		Health:     g.health(catalog.HealthHealthy, 99.97, 85, 0.08, 0, time.Minute),
		Sla:        sla(99.95, 100, 0.2),
		Ownership:  owner("risk-engineering", "elena.garcia", "risk-oncall", "#fraud-api"),
		Repository: repo("fraud-scoring-api"),
	}
	mq := &catalog.Component{
		ComponentID:   "message-queue-fraud-001",
		Name:          "Transaction Event Stream",
		Description:   "Kafka topics carrying transaction events and scoring decisions",
		ComponentType: "message-queue",
		Order:         2,
		Layer:         "data",
		Status:        catalog.ComponentActive,
		Version:       "3.6.1",
		Technology:    tech("kafka", "aws-msk", "", "kafka-3.6", "schema-registry@7.5.0"),
		Deployment:    managed("aws-msk", 3, "kafka.m5.large", "8Gi", endpoint("kafka", "kafka://b-1.fraud-msk.internal:9094", 9094, "")),
		Configuration: config("production", "fraud-topics", []string{"msk-sasl-credentials"}, map[string]any{"tieredStorage": true}),
		Health:        g.health(catalog.HealthDegraded, 99.9, 45, 0.3, 1, 2*time.Minute),
		Sla:           sla(99.9, 50, 0.5),
		Ownership:     owner("streaming-platform", "tomas.novak", "streaming-oncall", "#fraud-stream"),
		Repository:    repo("fraud-stream-config"),
	}
	worker := &catalog.Component{
		ComponentID:   "worker-fraud-001",
		Name:          "Fraud Model Worker",
		Description:   "Consumes transaction events, computes features and runs the gradient-boosted fraud model",
		ComponentType: "worker",
		Order:         3,
		Layer:         "business",
		Status:        catalog.ComponentActive,
		Version:       "3.4.0",
		Technology:    tech("python", "pytorch", "python", "python-3.11", "torch@2.1.0", "xgboost@2.0.2", "confluent-kafka@2.3.0"),
		Deployment:    k8s("fraud-model-worker:3.4.0", 8, "4000m", "8Gi"),
		Configuration: config("production", "fraud-worker-config", []string{"msk-sasl-credentials", "model-registry-token"},
			map[string]any{"batchInference": true, "modelV5Canary": false}),
		Health:     g.health(catalog.HealthDegraded, 99.5, 340, 0.9, 2, 3*time.Minute),
		Sla:        sla(99.9, 250, 0.5),
		Ownership:  owner("risk-data-science", "arjun.mehta", "risk-ds-oncall", "#fraud-models"),
		Repository: repo("fraud-model-worker"),
	}
	cache := &catalog.Component{
		ComponentID:   "cache-fraud-001",
		Name:          "Risk Feature Cache",
		Description:   "Redis cluster of pre-computed customer and device risk features",
		ComponentType: "cache",
		Order:         4,
		Layer:         "data",
		Status:        catalog.ComponentActive,
		Version:       "7.2",
		Technology:    tech("redis", "aws-elasticache", "", "redis-7.2"),
		Deployment:    managed("aws-elasticache", 3, "cache.r6g.large", "13Gi", endpoint("redis", "rediss://fraud-features.cache.internal:6379", 6379, "PING")),
		Configuration: config("production", "fraud-cache-parameters", []string{"redis-auth-token"}, map[string]any{"clusterMode": true}),
		Health:        g.health(catalog.HealthHealthy, 99.99, 2, 0, 0, time.Minute),
		Sla:           sla(99.95, 5, 0.1),
		Ownership:     owner("risk-engineering", "elena.garcia", "risk-oncall", "#fraud-api"),
		Repository:    repo("fraud-infrastructure"),
	}
	db := &catalog.Component{
		ComponentID:   "database-fraud-001",
		Name:          "Fraud Case Database",
		Description:   "Scores, decisions and analyst cases for every scored transaction",
		ComponentType: "database",
		Order:         5,
		Layer:         "data",
		Status:        catalog.ComponentActive,
		Version:       "16.1",
		Technology:    tech("postgresql", "aws-aurora", "sql", "aurora-postgresql-16"),
		Deployment:    managed("aws-aurora", 3, "8", "64Gi", endpoint("postgresql", "postgresql://fraud-db.cluster.internal:5432/fraud", 5432, "SELECT 1")),
		Configuration: config("production", "fraud-db-parameters", []string{"fraud-db-credentials"}, map[string]any{"readReplicas": true}),
		Health:        g.health(catalog.HealthHealthy, 99.99, 12, 0.01, 0, 2*time.Minute),
		Sla:           sla(99.95, 20, 0.1),
		Ownership:     owner("data-platform-team", "david.kim", "dba-oncall", "#fraud-db"),
		Repository:    repo("fraud-db-migrations"),
	}

	deps := []*catalog.Dependency{
		edge(api, cache, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "cache", Protocol: "redis", ConnectionString: "vault:fraud-features-redis", PoolSize: 64},
			Requirements: &catalog.Requirements{MinVersion: "7.0", Performance: &catalog.PerformanceRequirements{MaxLatency: "5ms", MinThroughput: "20000 ops"}},
			Fallback:     &catalog.Fallback{Strategy: "failover", Timeout: "50ms", Retries: 1, BackupComponent: strPtr("database-fraud-001")},
			Contract:     contract("2.1.0"),
			Monitoring:   monitoring(0.5, 5),
		}),
		edge(api, mq, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "queue", Protocol: "kafka", ConnectionString: "vault:fraud-msk-producer"},
			Requirements: &catalog.Requirements{MinVersion: "3.5", Features: []string{"idempotent-producer", "avro"}},
			Fallback:     &catalog.Fallback{Strategy: "retry-queue", Timeout: "2s", Retries: 5},
			Contract:     contract("4.0.0"),
			Monitoring:   monitoring(1, 50),
		}),
		edge(api, db, catalog.Dependency{
			DependencyType: catalog.DependencyFallback, Criticality: catalog.CriticalityMedium,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:fraud-db-readonly", PoolSize: 10},
			Requirements: &catalog.Requirements{MinVersion: "15.0", Performance: &catalog.PerformanceRequirements{MaxLatency: "30ms"}},
			Fallback:     &catalog.Fallback{Strategy: "default-value", Timeout: "100ms"},
			Contract:     contract("2.1.0"),
			Monitoring:   monitoring(1, 30),
		}),
		edge(worker, mq, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "queue", Protocol: "kafka", ConnectionString: "vault:fraud-msk-consumer"},
			Requirements: &catalog.Requirements{MinVersion: "3.5", Performance: &catalog.PerformanceRequirements{MinThroughput: "5000 msg/s"}},
			Fallback:     circuitBreaker("30s", 10),
			Contract:     contract("4.0.0"),
			Monitoring:   monitoring(1, 500),
		}),
		edge(worker, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:fraud-db-writer", PoolSize: 30},
			Requirements: &catalog.Requirements{MinVersion: "15.0", Features: []string{"jsonb", "partitioning"}},
			Fallback:     &catalog.Fallback{Strategy: "queue", Timeout: "10s", Retries: 3},
			Contract:     contract("2.1.0"),
			Monitoring:   monitoring(0.5, 40),
		}),
		edge(worker, cache, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "cache", Protocol: "redis", ConnectionString: "vault:fraud-features-redis", PoolSize: 16},
			Requirements: &catalog.Requirements{MinVersion: "7.0"},
			Fallback:     &catalog.Fallback{Strategy: "retry", Timeout: "1s", Retries: 3},
			Contract:     contract("2.1.0"),
			Monitoring:   monitoring(1, 10),
		}),
	}

	failedAt := g.now.Add(-50 * time.Hour)
	jobs := []*catalog.Job{
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-FRAUD-101", JobType: catalog.JobDeployment, Status: catalog.JobRolledBack, Priority: catalog.PriorityHigh,
			TriggeredBy: "ci-pipeline", ApprovedBy: "elena.garcia",
			TargetComponents: []catalog.TargetComponent{target("worker-fraud-001", "3.4.0", "3.5.0", "rolled_back")},
			Strategy:         rolling(5, "15m", 1, 300),
			Validation:       validation("passed", "passed", "passed", "passed", "failed", "skipped"),
			Metrics:          &catalog.JobMetrics{AffectedUsers: 1200, RollbacksTriggered: 1},
			Artifacts:        artifacts(fraudID, "JOB-DEPLOY-FRAUD-101"),
		}, failedAt, 22*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-ROLLBACK-FRAUD-102", JobType: catalog.JobRollback, Status: catalog.JobCompleted, Priority: catalog.PriorityCritical,
			TriggeredBy: "deployment-controller", ApprovedBy: "elena.garcia",
			TargetComponents: []catalog.TargetComponent{target("worker-fraud-001", "3.5.0", "3.4.0", "completed")},
			Strategy:         &catalog.Strategy{Type: "recreate"},
			Validation:       validation("passed", "passed", "", "passed", "passed", "passed"),
			Metrics:          &catalog.JobMetrics{DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(fraudID, "JOB-ROLLBACK-FRAUD-102"),
		}, failedAt.Add(24*time.Minute), 8*time.Minute),
		started(&catalog.Job{
			JobID: "JOB-SCALE-FRAUD-103", JobType: catalog.JobScaling, Status: catalog.JobRunning, Priority: catalog.PriorityHigh,
			TriggeredBy: "arjun.mehta",
			TargetComponents: []catalog.TargetComponent{
				target("worker-fraud-001", "3.4.0", "3.4.0", "in_progress"),
				target("message-queue-fraud-001", "3.6.1", "3.6.1", "pending"),
			},
			Strategy:   &catalog.Strategy{Type: "horizontal"},
			Validation: validation("passed", "", "", "", "", ""),
			Metrics:    &catalog.JobMetrics{},
			Artifacts:  artifacts(fraudID, "JOB-SCALE-FRAUD-103"),
		}, g.now.Add(-10*time.Minute)),
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-FRAUD-100", JobType: catalog.JobDeployment, Status: catalog.JobCompleted, Priority: catalog.PriorityMedium,
			TriggeredBy: "ci-pipeline", ApprovedBy: "elena.garcia",
			TargetComponents: []catalog.TargetComponent{target("api-server-fraud-001", "3.3.2", "3.4.0", "completed")},
			Strategy:         rolling(10, "10m", 1, 150),
			Validation:       validation("passed", "passed", "passed", "passed", "passed", "passed"),
			Metrics:          &catalog.JobMetrics{DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(fraudID, "JOB-DEPLOY-FRAUD-100"),
		}, g.now.Add(-9*24*time.Hour), 18*time.Minute),
	}

	rules := []*catalog.Rule{
		{
			RuleID: "rule-fraud-risk-scoring", Name: "Transaction Risk Scoring",
			Description: "Scores transactions on amount, geography, velocity and device novelty",
			RuleType:    catalog.RuleBusiness, Scope: "capability", Priority: catalog.PriorityCritical, Order: 1,
			Status: catalog.RuleActive, Version: "2.0.1", Author: "risk-data-science", ApprovedBy: "elena.garcia",
			EffectiveFrom: g.day(-90),
			Conditions: []catalog.Condition{
				{Field: "transaction.amount", Operator: ">", Value: float64(10000), Weight: 4},
				{Field: "transaction.country", Operator: "not_in", Values: list("US", "CA", "GB"), Weight: 3},
				{Field: "customer.transactions_last_hour", Operator: ">=", Value: float64(5), Weight: 3},
				{Field: "device.is_new", Operator: "equals", Value: true, Weight: 2},
			},
			Actions: []catalog.Action{
				{Type: "set_severity", Parameters: map[string]any{"calculation": "sum_weights", "mapping": severityMapping()}},
				{Type: "flag_transaction", Parameters: map[string]any{"queue": "manual-review", "minSeverity": "high"}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"fraud", "scoring"}, Compliance: []string{"PCI-DSS-10.6"}, TestCoverage: 97, LastReview: g.day(-14)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 1284500, AverageExecutionTime: 0.8, SuccessRate: 99.99, LastExecuted: g.ago(4 * time.Second)},
		},
		{
			RuleID: "rule-fraud-card-velocity", Name: "Card Velocity Block",
			Description: "Blocks a card after repeated declined attempts in a short window",
			RuleType:    catalog.RuleSecurity, Scope: "capability", Priority: catalog.PriorityHigh, Order: 2,
			Status: catalog.RuleActive, Version: "1.3.0", Author: "security-team", ApprovedBy: "jane.doe",
			EffectiveFrom: g.day(-200),
			Conditions: []catalog.Condition{
				{Field: "card.declines_last_10m", Operator: ">", Value: float64(3), Weight: 10},
			},
			Actions: []catalog.Action{
				{Type: "block_card", Parameters: map[string]any{"durationMinutes": float64(30), "notifyCustomer": true}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"fraud", "velocity"}, Compliance: []string{"PCI-DSS-6.4"}, TestCoverage: 91, LastReview: g.day(-40)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 988210, AverageExecutionTime: 0.4, SuccessRate: 100, LastExecuted: g.ago(9 * time.Second)},
		},
		{
			RuleID: "rule-fraud-high-risk-routing", Name: "High-risk Review Routing",
			Description: "Routes high-risk transactions to the senior analyst queue",
			RuleType:    catalog.RuleRouting, Scope: "component", Priority: catalog.PriorityMedium, Order: 3,
			Status: catalog.RuleActive, Version: "1.0.0", Author: "risk-engineering", ApprovedBy: "elena.garcia",
			EffectiveFrom: g.day(-30),
			Conditions: []catalog.Condition{
				{Field: "risk.score", Operator: ">=", Value: float64(80), Weight: 1},
			},
			Actions: []catalog.Action{
				{Type: "route", Parameters: map[string]any{"queue": "senior-analysts", "sla": "15m"}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"fraud", "routing"}, TestCoverage: 80, LastReview: g.day(-30)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 15230, AverageExecutionTime: 0.6, SuccessRate: 99.9, LastExecuted: g.ago(2 * time.Minute)},
		},
	}

	metrics := g.series(series{
		comp: api, cur: level{avail: 99.97, p95: 85, errRate: 0.08, rpm: 52000, cpu: 58.3, mem: 66.9, conns: 410},
		phase: 0.4, serverShare: 0.3,
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "stable"},
	})
	metrics = append(metrics, g.series(series{
		comp: worker, cur: level{avail: 99.5, p95: 340, errRate: 0.9, rpm: 51000, cpu: 83.5, mem: 77.4, conns: 96},
		prev: &level{avail: 99.95, p95: 190, errRate: 0.2, rpm: 51000, cpu: 61.2, mem: 70.1, conns: 96}, onset: 95 * time.Minute,
		phase: 1.1, serverShare: 0.7, timeoutShare: 0.3,
		trends: catalog.Trends{Availability: "degrading", Latency: "degrading", Throughput: "stable", Errors: "increasing"},
		events: []event{
			{id: "ALT-1201", condition: "latency.p95 > 250ms", from: g.newest.Add(-90 * time.Minute)},
			{id: "ALT-1202", condition: "saturation.cpu > 80%", from: g.newest.Add(-35 * time.Minute)},
		},
	})...)

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{api, mq, worker, cache, db},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Customer Onboarding: customer domain, active, healthy.

const onboardingID = "CAP-CUST-ONB-001"

func (g *gen) customerOnboarding() *catalog.Bundle {
	capability := &catalog.Capability{
		CapabilityID:    onboardingID,
		Name:            "Customer Onboarding",
		Description:     "Digital account opening: application capture, document upload, KYC checks and account provisioning",
		BusinessDomain:  "customer",
		Status:          catalog.CapabilityActive,
		Priority:        catalog.PriorityHigh,
		Owner:           "customer-experience-team",
		CreatedBy:       "laura.bianchi",
		Version:         "4.2.0",
		Tags:            []string{"onboarding", "kyc", "customer-journey"},
		BusinessMetrics: &catalog.BusinessMetrics{Sla: "99.9%", Rto: "30 minutes", Rpo: "5 minutes", CriticalityLevel: "tier-2"},
		Architecture: &catalog.Architecture{
			Pattern: "microservices", DeploymentModel: "single-region", ScalabilityType: "horizontal", Redundancy: "active-passive",
		},
		Compliance: &catalog.Compliance{Standards: []string{"GDPR", "AML-5", "SOC2"}, LastAudit: g.day(-75), CertificationStatus: "certified"},
		Aggregates: catalog.Aggregates{AverageDeploymentTime: "13.0m", TotalIncidents: 2, MonthlyOperationalCost: 9800, UserCount: 12000},
		Lifecycle:  &catalog.Lifecycle{Phase: "production", LastMajorUpdate: g.day(-35), NextReview: g.day(55)},
	}

	ui := &catalog.Component{
		ComponentID: "ui-dashboard-onboarding-001", Name: "Onboarding Portal",
		Description:   "Customer-facing application wizard with document upload",
		ComponentType: "ui-dashboard", Order: 1, Layer: "presentation", Status: catalog.ComponentActive, Version: "5.0.3",
		Technology: tech("react", "next.js", "typescript", "node-20", "react@18.2.0", "next@14.0.4", "react-hook-form@7.48.0"),
		Deployment: k8s("onboarding-portal:5.0.3", 3, "500m", "1Gi", endpoint("https", "https://join.company.com", 443, "/api/health")),
		Configuration: config("production", "onboarding-portal-config", []string{"auth-secret", "recaptcha-key"},
			map[string]any{"selfieCapture": true, "savedApplications": true, "openBankingImport": false}),
		Health:     g.health(catalog.HealthHealthy, 99.95, 180, 0.05, 0, 2*time.Minute),
		Sla:        sla(99.9, 250, 0.2),
		Ownership:  owner("customer-experience-team", "laura.bianchi", "cx-oncall", "#onboarding-portal"),
		Repository: repo("onboarding-portal"),
	}
	api := &catalog.Component{
		ComponentID: "api-server-onboarding-001", Name: "Onboarding API",
		Description:   "Application state machine, KYC orchestration and account provisioning",
		ComponentType: "api-server", Order: 2, Layer: "business", Status: catalog.ComponentActive, Version: "4.2.0",
		Technology: tech("java", "spring-boot", "kotlin", "jvm-21", "spring-boot@3.2.1", "temporal-sdk@1.22.0"),
		Deployment: k8s("onboarding-api:4.2.0", 4, "1000m", "2Gi", endpoint("https", "https://api.join.company.com", 443, "/actuator/health")),
		Configuration: config("production", "onboarding-api-config", []string{"onboarding-db-credentials", "kyc-provider-key"},
			map[string]any{"instantAccount": true, "manualReviewFallback": true}),
		Health:     g.health(catalog.HealthHealthy, 99.98, 95, 0.1, 0, time.Minute),
		Sla:        sla(99.95, 150, 0.5),
		Ownership:  owner("customer-experience-team", "omar.haddad", "cx-oncall", "#onboarding-api"),
		Repository: repo("onboarding-api"),
	}
	worker := &catalog.Component{
		ComponentID: "worker-onboarding-001", Name: "Document Processing Worker",
		Description:   "OCR and authenticity checks of uploaded identity documents",
		ComponentType: "worker", Order: 3, Layer: "business", Status: catalog.ComponentActive, Version: "2.7.4",
		Technology: tech("python", "celery", "python", "python-3.11", "celery@5.3.6", "opencv-python@4.8.1", "tesseract@5.3.3"),
		Deployment: k8s("document-worker:2.7.4", 5, "2000m", "4Gi"),
		Configuration: config("production", "document-worker-config", []string{"ocr-license", "onboarding-db-credentials"},
			map[string]any{"mrzValidation": true, "hologramDetection": false}),
		Health:     g.health(catalog.HealthHealthy, 99.9, 850, 0.4, 1, 4*time.Minute),
		Sla:        sla(99.5, 1500, 1),
		Ownership:  owner("identity-team", "hannah.schmidt", "identity-oncall", "#document-processing"),
		Repository: repo("document-worker"),
	}
	db := &catalog.Component{
		ComponentID: "database-onboarding-001", Name: "Customer Profile Database",
		Description:   "Applications, customer profiles and KYC evidence references",
		ComponentType: "database", Order: 4, Layer: "data", Status: catalog.ComponentActive, Version: "15.5",
		Technology:    tech("postgresql", "aws-aurora", "sql", "aurora-postgresql-15"),
		Deployment:    managed("aws-aurora", 2, "4", "32Gi", endpoint("postgresql", "postgresql://onboarding-db.cluster.internal:5432/onboarding", 5432, "SELECT 1")),
		Configuration: config("production", "onboarding-db-parameters", []string{"onboarding-db-master-credentials"}, map[string]any{"encryptionAtRest": true}),
		Health:        g.health(catalog.HealthHealthy, 99.99, 6, 0, 0, 3*time.Minute),
		Sla:           sla(99.99, 10, 0.05),
		Ownership:     owner("data-platform-team", "david.kim", "dba-oncall", "#onboarding-db"),
		Repository:    repo("onboarding-db-migrations"),
	}

	deps := []*catalog.Dependency{
		edge(ui, api, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    restAPI("https://api.join.company.com/v4"),
			Requirements: &catalog.Requirements{MinVersion: "4.0.0", Performance: &catalog.PerformanceRequirements{MaxLatency: "250ms", MinThroughput: "200 rps"}},
			Fallback:     &catalog.Fallback{Strategy: "retry", Timeout: "10s", Retries: 2},
			Contract:     contract("4.1.0"),
			Monitoring:   monitoring(1, 250),
		}),
		edge(api, db, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:onboarding-db-connection", PoolSize: 25},
			Requirements: &catalog.Requirements{MinVersion: "14.0", Features: []string{"jsonb", "row-level-security"}},
			Fallback:     circuitBreaker("20s", 3),
			Contract:     contract("3.0.0"),
			Monitoring:   monitoring(1, 20),
		}),
		edge(worker, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:onboarding-db-worker", PoolSize: 10},
			Requirements: &catalog.Requirements{MinVersion: "14.0"},
			Fallback:     &catalog.Fallback{Strategy: "queue", Timeout: "30s", Retries: 5},
			Contract:     contract("3.0.0"),
			Monitoring:   monitoring(2, 100),
		}),
		edge(worker, api, catalog.Dependency{
			DependencyType: catalog.DependencyBuildtime, Criticality: catalog.CriticalityLow,
			Interface:    &catalog.DependencyInterface{Type: "sdk", Protocol: "openapi", ConnectionString: "artifactory:onboarding-api-client"},
			Requirements: &catalog.Requirements{MinVersion: "4.2.0", Features: []string{"generated-client"}},
			Contract:     &catalog.Contract{SchemaVersion: "4.2.0", ValidationEnabled: true},
			Monitoring:   &catalog.Monitoring{SliEnabled: false},
		}),
	}

	jobs := []*catalog.Job{
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-ONB-301", JobType: catalog.JobDeployment, Status: catalog.JobCompleted, Priority: catalog.PriorityMedium,
			TriggeredBy: "ci-pipeline", ApprovedBy: "laura.bianchi",
			TargetComponents: []catalog.TargetComponent{
				target("api-server-onboarding-001", "4.1.3", "4.2.0", "completed"),
				target("ui-dashboard-onboarding-001", "5.0.2", "5.0.3", "completed"),
			},
			Strategy:   rolling(10, "10m", 2, 400),
			Validation: validation("passed", "passed", "passed", "passed", "passed", "passed"),
			Metrics:    &catalog.JobMetrics{DeploymentsCompleted: 2, TotalArtifactsDeployed: 2},
			Artifacts:  artifacts(onboardingID, "JOB-DEPLOY-ONB-301"),
		}, g.now.Add(-5*24*time.Hour), 13*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-MAINT-ONB-302", JobType: catalog.JobMaintenance, Status: catalog.JobCompleted, Priority: catalog.PriorityLow,
			TriggeredBy: "maintenance-window", ApprovedBy: "david.kim",
			TargetComponents: []catalog.TargetComponent{target("database-onboarding-001", "15.4", "15.5", "completed")},
			Strategy:         &catalog.Strategy{Type: "blue-green", Rollback: &catalog.Rollback{Automatic: true}},
			Validation:       validation("passed", "passed", "", "passed", "passed", "passed"),
			Metrics:          &catalog.JobMetrics{Downtime: 30, DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(onboardingID, "JOB-MAINT-ONB-302"),
		}, g.now.Add(-2*24*time.Hour), 41*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-CONFIG-ONB-303", JobType: catalog.JobConfiguration, Status: catalog.JobCancelled, Priority: catalog.PriorityLow,
			TriggeredBy:      "omar.haddad",
			TargetComponents: []catalog.TargetComponent{target("api-server-onboarding-001", "4.2.0", "4.2.0", "cancelled")},
			Strategy:         &catalog.Strategy{Type: "in-place"},
			Validation:       validation("passed", "", "", "", "", ""),
			Metrics:          &catalog.JobMetrics{},
			Artifacts:        artifacts(onboardingID, "JOB-CONFIG-ONB-303"),
		}, g.now.Add(-8*time.Hour), 2*time.Minute),
	}

	rules := []*catalog.Rule{
		{
			RuleID: "rule-onboarding-kyc-level", Name: "KYC Verification Level",
			Description: "Requires enhanced due diligence for high-risk applications",
			RuleType:    catalog.RuleCompliance, Scope: "capability", Priority: catalog.PriorityCritical, Order: 1,
			Status: catalog.RuleActive, Version: "3.1.0", Author: "compliance-team", ApprovedBy: "mark.oconnor",
			EffectiveFrom: g.day(-180),
			Conditions: []catalog.Condition{
				{Field: "applicant.country", Operator: "in", Values: list("IR", "KP", "SY", "MM"), Weight: 10},
				{Field: "applicant.is_pep", Operator: "equals", Value: true, Weight: 7},
				{Field: "application.expected_monthly_volume", Operator: ">", Value: float64(50000), Weight: 4},
			},
			Actions: []catalog.Action{
				{Type: "set_severity", Parameters: map[string]any{"calculation": "sum_weights", "mapping": map[string]any{"0-3": "standard", "4-9": "enhanced", "10+": "prohibited"}}},
				{Type: "require_documents", Parameters: map[string]any{"documents": list("passport", "proof_of_address", "source_of_funds")}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"kyc", "aml"}, Compliance: []string{"AMLD5-Art18", "GDPR-Art6"}, TestCoverage: 98, LastReview: g.day(-21)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 86400, AverageExecutionTime: 3.4, SuccessRate: 99.97, LastExecuted: g.ago(40 * time.Second)},
		},
		{
			RuleID: "rule-onboarding-name-normalisation", Name: "Applicant Name Normalisation",
			Description: "Trims and title-cases applicant names and transliterates them to Latin script",
			RuleType:    catalog.RuleTransformation, Scope: "component", Priority: catalog.PriorityLow, Order: 2,
			Status: catalog.RuleActive, Version: "1.1.0", Author: "customer-experience-team", ApprovedBy: "laura.bianchi",
			EffectiveFrom: g.day(-300),
			Conditions: []catalog.Condition{
				{Field: "applicant.name", Operator: "exists", Weight: 1},
			},
			Actions: []catalog.Action{
				{Type: "transform", Parameters: map[string]any{"target": "applicant.name", "operations": list("trim", "transliterate", "title_case")}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"data-quality"}, TestCoverage: 100, LastReview: g.day(-90)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 86390, AverageExecutionTime: 0.2, SuccessRate: 100, LastExecuted: g.ago(40 * time.Second)},
		},
	}

	metrics := g.series(series{
		comp: api, cur: level{avail: 99.98, p95: 95, errRate: 0.1, rpm: 3800, cpu: 41.8, mem: 58.2, conns: 75},
		phase: 2.1, serverShare: 0.2,
		trends: catalog.Trends{Availability: "stable", Latency: "improving", Throughput: "increasing", Errors: "stable"},
	})
	metrics = append(metrics, g.series(series{
		comp: ui, cur: level{avail: 99.95, p95: 180, errRate: 0.05, rpm: 6200, cpu: 27.4, mem: 44.6, conns: 520},
		phase: 3.0, serverShare: 0.1,
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "stable"},
	})...)

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{ui, api, worker, db},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Payment Processing: finance domain, active, unhealthy (a failing gateway and SLA breaches).

const paymentID = "CAP-PAY-PROC-001"

func (g *gen) paymentProcessing() *catalog.Bundle {
	capability := &catalog.Capability{
		CapabilityID:    paymentID,
		Name:            "Payment Processing",
		Description:     "Card and bank-transfer payment authorisation, capture, settlement and ledger posting",
		BusinessDomain:  "finance",
		Status:          catalog.CapabilityActive,
		Priority:        catalog.PriorityCritical,
		Owner:           "payments-team",
		CreatedBy:       "nina.kowalski",
		Version:         "5.8.0",
		Tags:            []string{"payments", "pci", "settlement", "ledger"},
		BusinessMetrics: &catalog.BusinessMetrics{Sla: "99.99%", Rto: "5 minutes", Rpo: "0 minutes", CriticalityLevel: "tier-0"},
		Architecture: &catalog.Architecture{
			Pattern: "event-driven", DeploymentModel: "multi-region", ScalabilityType: "horizontal", Redundancy: "active-active",
		},
		Compliance: &catalog.Compliance{Standards: []string{"PCI-DSS", "SOC2", "PSD2"}, LastAudit: g.day(-100), CertificationStatus: "certified"},
		Aggregates: catalog.Aggregates{AverageDeploymentTime: "21.0m", TotalIncidents: 12, MonthlyOperationalCost: 68000, UserCount: 240000},
		Lifecycle:  &catalog.Lifecycle{Phase: "production", LastMajorUpdate: g.day(-60), NextReview: g.day(7)},
	}

	api := &catalog.Component{
		ComponentID: "api-server-payment-001", Name: "Payment Gateway API",
		Description:   "Authorisation and capture API in front of the acquirers",
		ComponentType: "api-server", Order: 1, Layer: "business", Status: catalog.ComponentActive, Version: "5.8.0",
		Technology: tech("golang", "grpc-gateway", "go", "go-1.22", "grpc@1.60.0", "pgx@5.5.1", "go-redis@9.3.0"),
		Deployment: k8s("payment-gateway:5.8.0", 8, "2000m", "2Gi",
			endpoint("https", "https://pay.company.com", 443, "/healthz"),
			endpoint("grpc", "grpc://payment-gateway.payments.svc.cluster.local", 9090, "/grpc.health.v1.Health/Check")),
		Configuration: config("production", "payment-gateway-config", []string{"acquirer-adyen-key", "acquirer-stripe-key", "hsm-credentials"},
			map[string]any{"networkTokens": true, "smartRetries": true, "applePay": true}),
		Health:     g.health(catalog.HealthUnhealthy, 97.2, 1450, 4.8, 5, time.Minute),
		Sla:        sla(99.99, 300, 0.5),
		Ownership:  owner("payments-team", "nina.kowalski", "payments-oncall", "#payments-gateway"),
		Repository: repo("payment-gateway"),
	}
	mq := &catalog.Component{
		ComponentID: "message-queue-payment-001", Name: "Payment Events Queue",
		Description:   "RabbitMQ exchanges for payment lifecycle events and settlement instructions",
		ComponentType: "message-queue", Order: 2, Layer: "data", Status: catalog.ComponentActive, Version: "3.12.10",
		Technology:    tech("rabbitmq", "amazon-mq", "", "rabbitmq-3.12"),
		Deployment:    managed("amazon-mq", 3, "mq.m5.large", "8Gi", endpoint("amqps", "amqps://payments-mq.internal:5671", 5671, "/api/health/checks/alarms")),
		Configuration: config("production", "payments-mq-definitions", []string{"payments-mq-credentials"}, map[string]any{"quorumQueues": true}),
		Health:        g.health(catalog.HealthHealthy, 99.99, 20, 0, 0, 2*time.Minute),
		Sla:           sla(99.95, 50, 0.1),
		Ownership:     owner("payments-team", "nina.kowalski", "payments-oncall", "#payments-gateway"),
		Repository:    repo("payments-mq-definitions"),
	}
	worker := &catalog.Component{
		ComponentID: "worker-payment-001", Name: "Settlement Worker",
		Description:   "Batches captured payments into settlement files and posts them to the ledger",
		ComponentType: "worker", Order: 3, Layer: "business", Status: catalog.ComponentActive, Version: "2.14.1",
		Technology: tech("java", "spring-batch", "java", "jvm-21", "spring-batch@5.1.0", "amqp-client@5.20.0"),
		Deployment: k8s("settlement-worker:2.14.1", 4, "1000m", "4Gi"),
		Configuration: config("production", "settlement-worker-config", []string{"payments-mq-credentials", "ledger-db-credentials", "sftp-acquirer-keys"},
			map[string]any{"intradaySettlement": true}),
		Health:     g.health(catalog.HealthHealthy, 99.95, 420, 0.2, 1, 3*time.Minute),
		Sla:        sla(99.9, 500, 0.5),
		Ownership:  owner("payments-team", "kenji.watanabe", "payments-oncall", "#settlement"),
		Repository: repo("settlement-worker"),
	}
	db := &catalog.Component{
		ComponentID: "database-payment-001", Name: "Payment Ledger Database",
		Description:   "Double-entry ledger of every payment, refund and settlement",
		ComponentType: "database", Order: 4, Layer: "data", Status: catalog.ComponentActive, Version: "16.2",
		Technology:    tech("postgresql", "aws-aurora", "sql", "aurora-postgresql-16"),
		Deployment:    managed("aws-aurora", 3, "16", "128Gi", endpoint("postgresql", "postgresql://ledger-db.cluster.internal:5432/ledger", 5432, "SELECT 1")),
		Configuration: config("production", "ledger-db-parameters", []string{"ledger-db-master-credentials"}, map[string]any{"globalDatabase": true}),
		Health:        g.health(catalog.HealthDegraded, 99.95, 38, 0.3, 2, 2*time.Minute),
		Sla:           sla(99.99, 20, 0.05),
		Ownership:     owner("data-platform-team", "david.kim", "dba-oncall", "#ledger-db"),
		Repository:    repo("ledger-db-migrations"),
	}
	cache := &catalog.Component{
		ComponentID: "cache-payment-001", Name: "Idempotency Cache",
		Description:   "Redis store of idempotency keys and in-flight authorisations",
		ComponentType: "cache", Order: 5, Layer: "data", Status: catalog.ComponentActive, Version: "7.2",
		Technology:    tech("redis", "aws-elasticache", "", "redis-7.2"),
		Deployment:    managed("aws-elasticache", 3, "cache.r6g.xlarge", "26Gi", endpoint("redis", "rediss://payments-idempotency.cache.internal:6379", 6379, "PING")),
		Configuration: config("production", "payments-cache-parameters", []string{"redis-auth-token"}, map[string]any{"clusterMode": true}),
		Health:        g.health(catalog.HealthDegraded, 99.9, 9, 0.6, 1, time.Minute),
		Sla:           sla(99.95, 5, 0.1),
		Ownership:     owner("payments-team", "nina.kowalski", "payments-oncall", "#payments-gateway"),
		Repository:    repo("payments-infrastructure"),
	}

	deps := []*catalog.Dependency{
		edge(api, db, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:ledger-db-connection", PoolSize: 40},
			Requirements: &catalog.Requirements{MinVersion: "15.0", Features: []string{"serializable-isolation", "logical-replication"}, Performance: &catalog.PerformanceRequirements{MaxLatency: "20ms", MinThroughput: "3000 tps"}},
			Fallback:     circuitBreaker("5s", 2),
			Contract:     contract("6.0.0"),
			Monitoring:   monitoring(0.5, 20),
		}),
		edge(api, cache, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "cache", Protocol: "redis", ConnectionString: "vault:payments-idempotency-redis", PoolSize: 100},
			Requirements: &catalog.Requirements{MinVersion: "7.0", Performance: &catalog.PerformanceRequirements{MaxLatency: "5ms"}},
			Fallback:     &catalog.Fallback{Strategy: "failover", Timeout: "50ms", Retries: 1, BackupComponent: strPtr("database-payment-001")},
			Contract:     contract("1.4.0"),
			Monitoring:   monitoring(0.5, 5),
		}),
		edge(api, mq, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "queue", Protocol: "amqp", ConnectionString: "vault:payments-mq-publisher"},
			Requirements: &catalog.Requirements{MinVersion: "3.11", Features: []string{"publisher-confirms", "quorum-queues"}},
			Fallback:     &catalog.Fallback{Strategy: "retry-queue", Timeout: "2s", Retries: 5},
			Contract:     contract("2.3.0"),
			Monitoring:   monitoring(1, 50),
		}),
		edge(worker, mq, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "queue", Protocol: "amqp", ConnectionString: "vault:payments-mq-consumer"},
			Requirements: &catalog.Requirements{MinVersion: "3.11"},
			Fallback:     circuitBreaker("60s", 10),
			Contract:     contract("2.3.0"),
			Monitoring:   monitoring(1, 1000),
		}),
		edge(worker, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:ledger-db-writer", PoolSize: 20},
			Requirements: &catalog.Requirements{MinVersion: "15.0", Features: []string{"serializable-isolation"}},
			Fallback:     &catalog.Fallback{Strategy: "retry", Timeout: "30s", Retries: 5},
			Contract:     contract("6.0.0"),
			Monitoring:   monitoring(0.5, 50),
		}),
	}

	jobs := []*catalog.Job{
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-PAY-200", JobType: catalog.JobDeployment, Status: catalog.JobFailed, Priority: catalog.PriorityCritical,
			TriggeredBy: "ci-pipeline", ApprovedBy: "nina.kowalski",
			TargetComponents: []catalog.TargetComponent{target("api-server-payment-001", "5.8.0", "5.9.0", "failed")},
			Strategy:         rolling(5, "10m", 0.5, 300),
			Validation:       validation("passed", "passed", "passed", "passed", "failed", "passed"),
			Metrics:          &catalog.JobMetrics{AffectedUsers: 3400, Downtime: 0, RollbacksTriggered: 1},
			Artifacts:        artifacts(paymentID, "JOB-DEPLOY-PAY-200"),
		}, g.now.Add(-3*time.Hour), 12*time.Minute),
		started(&catalog.Job{
			JobID: "JOB-EMERG-PAY-201", JobType: catalog.JobEmergency, Status: catalog.JobRunning, Priority: catalog.PriorityCritical,
			TriggeredBy: "payments-oncall", ApprovedBy: "nina.kowalski",
			TargetComponents: []catalog.TargetComponent{
				target("api-server-payment-001", "5.8.0", "5.8.1", "in_progress"),
				target("cache-payment-001", "7.2", "7.2", "pending"),
			},
			Strategy:   rolling(0, "", 2, 1500),
			Validation: validation("passed", "passed", "waived", "", "", ""),
			Metrics:    &catalog.JobMetrics{AffectedUsers: 18000},
			Artifacts:  artifacts(paymentID, "JOB-EMERG-PAY-201"),
		}, g.now.Add(-45*time.Minute)),
		span(&catalog.Job{
			JobID: "JOB-CONFIG-PAY-199", JobType: catalog.JobConfiguration, Status: catalog.JobCompleted, Priority: catalog.PriorityMedium,
			TriggeredBy: "kenji.watanabe", ApprovedBy: "nina.kowalski",
			TargetComponents: []catalog.TargetComponent{target("worker-payment-001", "2.14.1", "2.14.1", "completed")},
			Strategy:         &catalog.Strategy{Type: "in-place", Rollback: &catalog.Rollback{Automatic: true}},
			Validation:       validation("passed", "passed", "", "passed", "", "passed"),
			Metrics:          &catalog.JobMetrics{DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(paymentID, "JOB-CONFIG-PAY-199"),
		}, g.now.Add(-27*time.Hour), 5*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-PAY-198", JobType: catalog.JobDeployment, Status: catalog.JobCompleted, Priority: catalog.PriorityHigh,
			TriggeredBy: "ci-pipeline", ApprovedBy: "nina.kowalski",
			TargetComponents: []catalog.TargetComponent{target("api-server-payment-001", "5.7.4", "5.8.0", "completed")},
			Strategy:         rolling(5, "10m", 0.5, 300),
			Validation:       validation("passed", "passed", "passed", "passed", "passed", "passed"),
			Metrics:          &catalog.JobMetrics{DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(paymentID, "JOB-DEPLOY-PAY-198"),
		}, g.now.Add(-6*24*time.Hour), 24*time.Minute),
	}

	rules := []*catalog.Rule{
		{
			RuleID: "rule-payment-pan-masking", Name: "Card Number Masking",
			Description: "Masks primary account numbers everywhere outside the card vault",
			RuleType:    catalog.RuleCompliance, Scope: "capability", Priority: catalog.PriorityCritical, Order: 1,
			Status: catalog.RuleActive, Version: "2.0.0", Author: "security-team", ApprovedBy: "mark.oconnor",
			EffectiveFrom: g.day(-400),
			Conditions: []catalog.Condition{
				{Field: "payment.card.number", Operator: "exists", Weight: 10},
			},
			Actions: []catalog.Action{
				{Type: "mask", Parameters: map[string]any{"fields": list("payment.card.number"), "keepLast": float64(4)}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"pci", "masking"}, Compliance: []string{"PCI-DSS-3.4"}, TestCoverage: 100, LastReview: g.day(-10)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 5120000, AverageExecutionTime: 0.1, SuccessRate: 100, LastExecuted: g.ago(time.Second)},
		},
		{
			RuleID: "rule-payment-acquirer-routing", Name: "Acquirer Routing",
			Description: "Routes European currencies to the EU acquirer and large amounts to the low-fee acquirer",
			RuleType:    catalog.RuleRouting, Scope: "component", Priority: catalog.PriorityHigh, Order: 2,
			Status: catalog.RuleActive, Version: "1.7.2", Author: "payments-team", ApprovedBy: "nina.kowalski",
			EffectiveFrom: g.day(-50),
			Conditions: []catalog.Condition{
				{Field: "payment.currency", Operator: "in", Values: list("EUR", "GBP", "CHF"), Weight: 2},
				{Field: "payment.amount", Operator: ">", Value: float64(5000), Weight: 3},
			},
			Actions: []catalog.Action{
				{Type: "route", Parameters: map[string]any{"acquirer": "adyen-eu", "fallbackAcquirer": "stripe-global"}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"routing", "cost"}, TestCoverage: 89, LastReview: g.day(-50)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 5119000, AverageExecutionTime: 0.3, SuccessRate: 99.2, LastExecuted: g.ago(time.Second)},
		},
		{
			RuleID: "rule-payment-3ds-challenge", Name: "3-D Secure Challenge",
			Description: "Requires a 3-D Secure challenge for risky or large card payments",
			RuleType:    catalog.RuleSecurity, Scope: "capability", Priority: catalog.PriorityHigh, Order: 3,
			Status: catalog.RuleActive, Version: "1.2.0", Author: "security-team", ApprovedBy: "jane.doe",
			EffectiveFrom: g.day(-150),
			Conditions: []catalog.Condition{
				{Field: "risk.score", Operator: ">=", Value: float64(70), Weight: 5},
				{Field: "payment.amount", Operator: ">=", Value: float64(250), Weight: 2},
			},
			Actions: []catalog.Action{
				{Type: "require_3ds", Parameters: map[string]any{"version": "2.2", "exemptions": list("low-value", "trusted-beneficiary")}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"sca", "psd2"}, Compliance: []string{"PSD2-RTS-Art4"}, TestCoverage: 94, LastReview: g.day(-25)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 4870000, AverageExecutionTime: 0.5, SuccessRate: 99.95, LastExecuted: g.ago(2 * time.Second)},
		},
	}

	metrics := g.series(series{
		comp: api, cur: level{avail: 97.2, p95: 1450, errRate: 4.8, rpm: 28000, cpu: 91.4, mem: 84.7, conns: 950},
		prev: &level{avail: 99.99, p95: 240, errRate: 0.3, rpm: 31000, cpu: 55.1, mem: 63.5, conns: 620}, onset: 190 * time.Minute,
		phase: 0.9, serverShare: 0.6, timeoutShare: 0.35,
		trends: catalog.Trends{Availability: "degrading", Latency: "degrading", Throughput: "decreasing", Errors: "increasing"},
		events: []event{
			{id: "ALT-2301", condition: "errors.rate > 1%", from: g.newest.Add(-185 * time.Minute)},
			{id: "ALT-2302", condition: "latency.p95 > 300ms", from: g.newest.Add(-180 * time.Minute)},
			{id: "ALT-2303", condition: "availability < 99.99%", from: g.newest.Add(-170 * time.Minute)},
			{id: "ALT-2305", condition: "saturation.cpu > 85%", from: g.newest.Add(-60 * time.Minute)},
			{id: "ALT-2306", condition: "latency.p99 > 2000ms", from: g.newest.Add(-25 * time.Minute), latency: 1.15},
			{id: "ALT-2304", condition: "errors.timeout > 100", from: g.newest.Add(-120 * time.Minute), to: g.newest.Add(-92 * time.Minute), errors: 1.4},
		},
	})
	metrics = append(metrics, g.series(series{
		comp: db, cur: level{avail: 99.95, p95: 38, errRate: 0.3, rpm: 96000, cpu: 78.2, mem: 81.3, conns: 1450},
		prev: &level{avail: 99.999, p95: 14, errRate: 0.02, rpm: 104000, cpu: 52.7, mem: 74.9, conns: 980}, onset: 175 * time.Minute,
		phase: 1.9, serverShare: 0.5, timeoutShare: 0.2,
		trends: catalog.Trends{Availability: "degrading", Latency: "degrading", Throughput: "stable", Errors: "increasing"},
		events: []event{
			{id: "ALT-2311", condition: "latency.p95 > 20ms", from: g.newest.Add(-170 * time.Minute)},
			{id: "ALT-2312", condition: "saturation.connections > 1200", from: g.newest.Add(-80 * time.Minute)},
		},
	})...)

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{api, mq, worker, db, cache},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Incident Response: operations domain, in development (staging), healthy.

const incidentID = "CAP-INC-RESP-001"

func (g *gen) incidentResponse() *catalog.Bundle {
	capability := &catalog.Capability{
		CapabilityID:    incidentID,
		Name:            "Incident Response",
		Description:     "Coordinated incident handling: war rooms, on-call paging, AI-assisted timelines and postmortems",
		BusinessDomain:  "operations",
		Status:          catalog.CapabilityDevelopment,
		Priority:        catalog.PriorityHigh,
		Owner:           "sre-team",
		CreatedBy:       "john.smith",
		Version:         "0.8.0",
		Tags:            []string{"incident-management", "on-call", "postmortem", "ai-assistant"},
		BusinessMetrics: &catalog.BusinessMetrics{Sla: "99.9%", Rto: "15 minutes", Rpo: "5 minutes", CriticalityLevel: "tier-2"},
		Architecture: &catalog.Architecture{
			Pattern: "microservices", DeploymentModel: "single-region", ScalabilityType: "horizontal", Redundancy: "active-passive",
		},
		Compliance: &catalog.Compliance{Standards: []string{"SOC2"}, CertificationStatus: "in-progress"},
		Aggregates: catalog.Aggregates{AverageDeploymentTime: "7.5m", TotalIncidents: 0, MonthlyOperationalCost: 3200, UserCount: 60},
		Lifecycle:  &catalog.Lifecycle{Phase: "beta", LastMajorUpdate: g.day(-12), NextReview: g.day(18)},
	}

	ui := &catalog.Component{
		ComponentID: "ui-dashboard-incident-001", Name: "Incident War Room",
		Description:   "Live incident timeline, roles and stakeholder updates",
		ComponentType: "ui-dashboard", Order: 1, Layer: "presentation", Status: catalog.ComponentActive, Version: "0.8.0",
		Technology:    tech("react", "remix", "typescript", "node-20", "react@18.2.0", "@remix-run/react@2.4.0"),
		Deployment:    k8s("incident-war-room:0.8.0", 2, "250m", "512Mi", endpoint("https", "https://incidents.staging.company.com", 443, "/health")),
		Configuration: config("staging", "incident-ui-config", []string{"auth-secret"}, map[string]any{"liveTimeline": true, "statusPagePublish": false}),
		Health:        g.health(catalog.HealthHealthy, 99.8, 210, 0.15, 0, 2*time.Minute),
		Sla:           sla(99.5, 300, 0.5),
		Ownership:     owner("sre-team", "alex.morgan", "sre-oncall", "#incident-tooling"),
		Repository:    repo("incident-war-room"),
	}
	api := &catalog.Component{
		ComponentID: "api-server-incident-001", Name: "Incident API",
		Description:   "Incidents, roles, timelines and paging integrations",
		ComponentType: "api-server", Order: 2, Layer: "business", Status: catalog.ComponentActive, Version: "0.8.2",
		Technology:    tech("typescript", "nestjs", "typescript", "node-20", "@nestjs/core@10.3.0", "prisma@5.7.1"),
		Deployment:    k8s("incident-api:0.8.2", 2, "500m", "1Gi", endpoint("https", "https://api.incidents.staging.company.com", 443, "/health")),
		Configuration: config("staging", "incident-api-config", []string{"pagerduty-token", "slack-bot-token"}, map[string]any{"autoPaging": true}),
		Health:        g.health(catalog.HealthHealthy, 99.9, 110, 0.2, 1, time.Minute),
		Sla:           sla(99.5, 200, 0.5),
		Ownership:     owner("sre-team", "alex.morgan", "sre-oncall", "#incident-tooling"),
		Repository:    repo("incident-api"),
	}
	mcp := &catalog.Component{
		ComponentID: "mcp-server-incident-001", Name: "Incident Copilot MCP Server",
		Description:   "MCP tools that let assistants read incident timelines, draft updates and suggest runbooks",
		ComponentType: "mcp-server", Order: 3, Layer: "business", Status: catalog.ComponentActive, Version: "0.3.1",
		Technology:    tech("typescript", "mcp-typescript-sdk", "typescript", "node-20", "@modelcontextprotocol/sdk@1.0.3", "zod@3.22.4"),
		Deployment:    k8s("incident-mcp-server:0.3.1", 1, "250m", "512Mi", endpoint("http", "https://mcp.incidents.staging.company.com/mcp", 443, "/health")),
		Configuration: config("staging", "incident-mcp-config", []string{"incident-api-key"}, map[string]any{"draftUpdates": true, "runbookSearch": true}),
		Health:        g.health(catalog.HealthHealthy, 99.7, 260, 0.3, 0, 3*time.Minute),
		Sla:           sla(99.5, 400, 1),
		Ownership:     owner("ai-platform-team", "priya.patel", "ai-platform-oncall", "#incident-copilot"),
		Repository:    repo("incident-mcp-server"),
	}
	scheduler := &catalog.Component{
		ComponentID: "scheduler-incident-001", Name: "On-call Rotation Scheduler",
		Description:   "Rotates on-call schedules and fires follow-up reminders",
		ComponentType: "scheduler", Order: 4, Layer: "business", Status: catalog.ComponentActive, Version: "0.5.0",
		Technology:    tech("golang", "robfig-cron", "go", "go-1.22", "cron@3.0.1"),
		Deployment:    k8s("oncall-scheduler:0.5.0", 1, "100m", "128Mi"),
		Configuration: config("staging", "oncall-scheduler-config", []string{"incident-api-key"}, map[string]any{"followUpReminders": true}),
		Health:        g.health(catalog.HealthHealthy, 99.95, 40, 0, 0, 5*time.Minute),
		Sla:           sla(99.9, 100, 0.1),
		Ownership:     owner("sre-team", "alex.morgan", "sre-oncall", "#incident-tooling"),
		Repository:    repo("oncall-scheduler"),
	}
	worker := &catalog.Component{
		ComponentID: "worker-incident-001", Name: "Postmortem Worker",
		Description:   "Assembles postmortem drafts from incident timelines (not deployed yet)",
		ComponentType: "worker", Order: 5, Layer: "business", Status: catalog.ComponentPlanned, Version: "0.1.0",
		Technology: tech("python", "dramatiq", "python", "python-3.12", "dramatiq@1.15.0"),
		Sla:        sla(99, 5000, 2),
		Ownership:  owner("sre-team", "alex.morgan", "sre-oncall", "#incident-tooling"),
		Repository: repo("postmortem-worker"),
	}

	deps := []*catalog.Dependency{
		edge(ui, api, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    restAPI("https://api.incidents.staging.company.com/v1"),
			Requirements: &catalog.Requirements{MinVersion: "0.8.0", Features: []string{"server-sent-events"}},
			Fallback:     &catalog.Fallback{Strategy: "retry", Timeout: "10s", Retries: 3},
			Contract:     contract("0.8.0"),
			Monitoring:   monitoring(2, 300),
		}),
		edge(mcp, api, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityHigh,
			Interface:    restAPI("https://api.incidents.staging.company.com/v1"),
			Requirements: &catalog.Requirements{MinVersion: "0.8.0"},
			Fallback:     circuitBreaker("10s", 2),
			Contract:     contract("0.8.0"),
			Monitoring:   monitoring(2, 400),
		}),
		edge(ui, mcp, catalog.Dependency{
			DependencyType: catalog.DependencyOptional, Criticality: catalog.CriticalityLow,
			Interface:    &catalog.DependencyInterface{Type: "mcp", Protocol: "streamable-http", ConnectionString: "https://mcp.incidents.staging.company.com/mcp"},
			Requirements: &catalog.Requirements{MinVersion: "0.3.0", Features: []string{"draft-updates"}},
			Fallback:     &catalog.Fallback{Strategy: "graceful-degradation", Timeout: "5s"},
			Contract:     contract("0.2.0"),
			Monitoring:   monitoring(5, 2000),
		}),
		edge(scheduler, api, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityMedium,
			Interface:    restAPI("https://api.incidents.staging.company.com/v1"),
			Requirements: &catalog.Requirements{MinVersion: "0.7.0"},
			Fallback:     &catalog.Fallback{Strategy: "retry", Timeout: "30s", Retries: 5},
			Contract:     contract("0.8.0"),
			Monitoring:   monitoring(5, 1000),
		}),
		edge(worker, api, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityMedium,
			Interface:    restAPI("https://api.incidents.staging.company.com/v1"),
			Requirements: &catalog.Requirements{MinVersion: "0.9.0", Features: []string{"timeline-export"}},
			Fallback:     &catalog.Fallback{Strategy: "queue", Timeout: "60s", Retries: 3},
			Contract:     contract("0.9.0"),
			Monitoring:   monitoring(5, 5000),
		}),
		edge(worker, mcp, catalog.Dependency{
			DependencyType: catalog.DependencyBuildtime, Criticality: catalog.CriticalityLow,
			Interface:    &catalog.DependencyInterface{Type: "sdk", Protocol: "npm", ConnectionString: "artifactory:incident-mcp-schemas"},
			Requirements: &catalog.Requirements{MinVersion: "0.3.0", Features: []string{"tool-schemas"}},
			Contract:     &catalog.Contract{SchemaVersion: "0.3.0", ValidationEnabled: true},
			Monitoring:   &catalog.Monitoring{SliEnabled: false},
		}),
	}

	jobs := []*catalog.Job{
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-INC-401", JobType: catalog.JobDeployment, Status: catalog.JobCompleted, Priority: catalog.PriorityMedium,
			TriggeredBy: "ci-pipeline", ApprovedBy: "alex.morgan",
			TargetComponents: []catalog.TargetComponent{
				target("api-server-incident-001", "0.8.1", "0.8.2", "completed"),
				target("mcp-server-incident-001", "0.3.0", "0.3.1", "completed"),
			},
			Strategy:   rolling(0, "", 5, 800),
			Validation: validation("passed", "passed", "passed", "passed", "skipped", "passed"),
			Metrics:    &catalog.JobMetrics{DeploymentsCompleted: 2, TotalArtifactsDeployed: 2},
			Artifacts:  artifacts(incidentID, "JOB-DEPLOY-INC-401"),
		}, g.now.Add(-6*time.Hour), 7*time.Minute+30*time.Second),
		span(&catalog.Job{
			JobID: "JOB-DEPLOY-INC-402", JobType: catalog.JobDeployment, Status: catalog.JobCancelled, Priority: catalog.PriorityLow,
			TriggeredBy:      "alex.morgan",
			TargetComponents: []catalog.TargetComponent{target("ui-dashboard-incident-001", "0.8.0", "0.9.0-rc.1", "cancelled")},
			Strategy:         rolling(0, "", 5, 800),
			Validation:       validation("passed", "failed", "", "", "", ""),
			Metrics:          &catalog.JobMetrics{},
			Artifacts:        artifacts(incidentID, "JOB-DEPLOY-INC-402"),
		}, g.now.Add(-4*time.Hour), 90*time.Second),
	}

	rules := []*catalog.Rule{
		{
			RuleID: "rule-incident-auto-page", Name: "Automatic Paging",
			Description: "Pages the on-call engineer when a customer-facing incident is declared at SEV2 or above",
			RuleType:    catalog.RuleOperational, Scope: "capability", Priority: catalog.PriorityHigh, Order: 1,
			Status: catalog.RuleDraft, Version: "0.2.0", Author: "sre-team",
			Conditions: []catalog.Condition{
				{Field: "incident.severity", Operator: "in", Values: list("SEV1", "SEV2"), Weight: 5},
				{Field: "incident.customer_facing", Operator: "equals", Value: true, Weight: 3},
			},
			Actions: []catalog.Action{
				{Type: "page", Parameters: map[string]any{"rotation": "primary-oncall", "escalateAfterMinutes": float64(10)}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"paging"}, TestCoverage: 60},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 240, AverageExecutionTime: 1.8, SuccessRate: 100, LastExecuted: g.ago(5 * time.Hour)},
		},
	}

	metrics := g.series(series{
		comp: api, cur: level{avail: 99.9, p95: 110, errRate: 0.2, rpm: 140, cpu: 12.3, mem: 35.8, conns: 18},
		phase: 2.4, serverShare: 0.3, env: "staging", region: "eu-west-1", az: "eu-west-1b",
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "increasing", Errors: "stable"},
		events: []event{{id: "ALT-3101", condition: "errors.rate > 0.15%", from: g.newest.Add(-15 * time.Minute), errors: 1.1}},
	})
	metrics = append(metrics, g.series(series{
		comp: mcp, cur: level{avail: 99.7, p95: 260, errRate: 0.3, rpm: 45, cpu: 9.6, mem: 29.4, conns: 6},
		phase: 0.3, serverShare: 0.5, env: "staging", region: "eu-west-1", az: "eu-west-1b",
		trends: catalog.Trends{Availability: "stable", Latency: "improving", Throughput: "increasing", Errors: "stable"},
	})...)

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{ui, api, mcp, scheduler, worker},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Identity Verification: customer domain, in planning; no component reports health (unknown).

const identityID = "CAP-ID-VERIFY-001"

func (g *gen) identityVerification() *catalog.Bundle {
	capability := &catalog.Capability{
		CapabilityID:    identityID,
		Name:            "Identity Verification",
		Description:     "Document and biometric liveness verification shared by onboarding, account recovery and high-value payments",
		BusinessDomain:  "customer",
		Status:          catalog.CapabilityPlanning,
		Priority:        catalog.PriorityMedium,
		Owner:           "identity-team",
		CreatedBy:       "hannah.schmidt",
		Version:         "0.1.0",
		Tags:            []string{"identity", "biometrics", "kyc"},
		BusinessMetrics: &catalog.BusinessMetrics{Sla: "99.9%", Rto: "1 hour", Rpo: "15 minutes", CriticalityLevel: "tier-2"},
		Architecture: &catalog.Architecture{
			Pattern: "microservices", DeploymentModel: "single-region", ScalabilityType: "horizontal", Redundancy: "none",
		},
		Compliance: &catalog.Compliance{Standards: []string{"GDPR", "eIDAS", "ISO-27001"}, CertificationStatus: "not-started"},
		Aggregates: catalog.Aggregates{TotalIncidents: 0, MonthlyOperationalCost: 600, UserCount: 0},
		Lifecycle:  &catalog.Lifecycle{Phase: "design", NextReview: g.day(14)},
	}

	planned := func(c *catalog.Component) *catalog.Component {
		c.Status = catalog.ComponentPlanned
		c.Ownership = owner("identity-team", "hannah.schmidt", "identity-oncall", "#identity-verification")
		return c
	}
	api := planned(&catalog.Component{
		ComponentID: "api-server-idverify-001", Name: "Identity Verification API",
		Description:   "Verification sessions, provider orchestration and decision webhooks (sandbox prototype)",
		ComponentType: "api-server", Order: 1, Layer: "business", Version: "0.1.0",
		Technology:    tech("golang", "chi", "go", "go-1.22", "chi@5.0.11"),
		Deployment:    k8s("idverify-api:0.1.0", 1, "250m", "256Mi", endpoint("https", "https://idverify.sandbox.company.com", 443, "/health")),
		Configuration: config("sandbox", "idverify-api-config", []string{"idv-provider-sandbox-key"}, map[string]any{"livenessCheck": false}),
		Sla:           sla(99.9, 300, 0.5),
		Repository:    repo("idverify-api"),
	})
	worker := planned(&catalog.Component{
		ComponentID: "worker-idverify-001", Name: "Liveness Check Worker",
		Description:   "Runs passive liveness and face-match models on selfie captures",
		ComponentType: "worker", Order: 2, Layer: "business", Version: "0.0.1",
		Technology: tech("python", "ray", "python", "python-3.12", "onnxruntime@1.16.3"),
		Sla:        sla(99.5, 3000, 1),
		Repository: repo("idverify-liveness-worker"),
	})
	cache := planned(&catalog.Component{
		ComponentID: "cache-idverify-001", Name: "Verification Session Cache",
		Description:   "Short-lived verification session state",
		ComponentType: "cache", Order: 3, Layer: "data",
		Technology: tech("redis", "aws-elasticache", "", "redis-7.2"),
		Sla:        sla(99.9, 5, 0.1),
	})
	db := planned(&catalog.Component{
		ComponentID: "database-idverify-001", Name: "Verification Evidence Store",
		Description:   "Encrypted verification results and evidence references with 5-year retention",
		ComponentType: "database", Order: 4, Layer: "data",
		Technology: tech("dynamodb", "aws-dynamodb", "", "dynamodb"),
		Sla:        sla(99.99, 15, 0.05),
	})

	deps := []*catalog.Dependency{
		edge(api, db, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityCritical,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "dynamodb", ConnectionString: "arn:aws:dynamodb:eu-west-1:table/IdentityEvidence"},
			Requirements: &catalog.Requirements{Features: []string{"point-in-time-recovery", "kms-encryption"}},
			Fallback:     circuitBreaker("5s", 3),
			Contract:     contract("0.1.0"),
			Monitoring:   monitoring(1, 50),
		}),
		edge(api, cache, catalog.Dependency{
			DependencyType: catalog.DependencyOptional, Criticality: catalog.CriticalityMedium,
			Interface:    &catalog.DependencyInterface{Type: "cache", Protocol: "redis", ConnectionString: "vault:idverify-session-redis", PoolSize: 10},
			Requirements: &catalog.Requirements{MinVersion: "7.0"},
			Fallback:     &catalog.Fallback{Strategy: "fallback", Timeout: "50ms", BackupComponent: strPtr("database-idverify-001")},
			Contract:     contract("0.1.0"),
			Monitoring:   monitoring(1, 5),
		}),
		edge(worker, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityHigh,
			Interface:  &catalog.DependencyInterface{Type: "database", Protocol: "dynamodb", ConnectionString: "arn:aws:dynamodb:eu-west-1:table/IdentityEvidence"},
			Fallback:   &catalog.Fallback{Strategy: "retry", Timeout: "30s", Retries: 5},
			Contract:   contract("0.1.0"),
			Monitoring: monitoring(2, 100),
		}),
		edge(worker, api, catalog.Dependency{
			DependencyType: catalog.DependencyBuildtime, Criticality: catalog.CriticalityLow,
			Interface:    &catalog.DependencyInterface{Type: "sdk", Protocol: "protobuf", ConnectionString: "buf.build/company/idverify"},
			Requirements: &catalog.Requirements{MinVersion: "0.1.0"},
			Contract:     &catalog.Contract{SchemaVersion: "0.1.0", ValidationEnabled: true},
			Monitoring:   &catalog.Monitoring{SliEnabled: false},
		}),
	}

	jobs := []*catalog.Job{
		started(&catalog.Job{
			JobID: "JOB-CONFIG-IDV-501", JobType: catalog.JobConfiguration, Status: catalog.JobPending, Priority: catalog.PriorityLow,
			TriggeredBy: "hannah.schmidt",
			TargetComponents: []catalog.TargetComponent{
				target("api-server-idverify-001", "0.1.0", "0.1.0", "pending"),
				target("cache-idverify-001", "", "7.2", "pending"),
			},
			Strategy:  &catalog.Strategy{Type: "in-place"},
			Artifacts: artifacts(identityID, "JOB-CONFIG-IDV-501"),
		}, g.now.Add(24*time.Hour).Truncate(time.Hour)),
	}

	rules := []*catalog.Rule{
		{
			RuleID: "rule-idv-document-expiry", Name: "Expired Document Rejection",
			Description: "Rejects identity documents that are expired or expire within 30 days",
			RuleType:    catalog.RuleCompliance, Scope: "capability", Priority: catalog.PriorityMedium, Order: 1,
			Status: catalog.RuleDraft, Version: "0.1.0", Author: "identity-team",
			Conditions: []catalog.Condition{
				{Field: "document.days_to_expiry", Operator: "<", Value: float64(30), Weight: 10},
			},
			Actions: []catalog.Action{
				{Type: "reject", Parameters: map[string]any{"reason": "document-expired"}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"kyc", "documents"}, Compliance: []string{"AMLD5-Art13"}},
			Metrics:  &catalog.RuleMetrics{},
		},
	}

	metrics := g.series(series{
		comp: api, cur: level{avail: 99.5, p95: 220, errRate: 0.4, rpm: 12, cpu: 4.1, mem: 22.6, conns: 3},
		phase: 1.4, serverShare: 0.4, env: "sandbox", region: "eu-west-1", az: "eu-west-1a",
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "stable", Errors: "stable"},
	})

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{api, worker, cache, db},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Reporting & Analytics: finance domain, deprecated, degraded (a struggling scheduler).

const reportingID = "CAP-RPT-ANL-001"

func (g *gen) reportingAnalytics() *catalog.Bundle {
	capability := &catalog.Capability{
		CapabilityID:    reportingID,
		Name:            "Reporting & Analytics",
		Description:     "Legacy scheduled financial reports and dashboards, being replaced by the self-service data platform",
		BusinessDomain:  "finance",
		Status:          catalog.CapabilityDeprecated,
		Priority:        catalog.PriorityLow,
		Owner:           "finance-engineering",
		CreatedBy:       "robert.lee",
		Version:         "1.9.3",
		Tags:            []string{"reporting", "analytics", "legacy", "month-end"},
		BusinessMetrics: &catalog.BusinessMetrics{Sla: "99.0%", Rto: "4 hours", Rpo: "24 hours", CriticalityLevel: "tier-3"},
		Architecture: &catalog.Architecture{
			Pattern: "batch", DeploymentModel: "single-region", ScalabilityType: "vertical", Redundancy: "none",
		},
		Compliance: &catalog.Compliance{Standards: []string{"SOX"}, LastAudit: g.day(-200), CertificationStatus: "certified"},
		Aggregates: catalog.Aggregates{AverageDeploymentTime: "35.0m", TotalIncidents: 10, MonthlyOperationalCost: 7400, UserCount: 320},
		Lifecycle: &catalog.Lifecycle{
			Phase: "sunset", PlannedRetirement: g.day(180), LastMajorUpdate: g.day(-700), NextReview: g.day(60),
		},
	}

	ui := &catalog.Component{
		ComponentID: "ui-dashboard-reporting-001", Name: "Finance Reports Portal",
		Description:   "Server-rendered portal listing scheduled and ad-hoc finance reports",
		ComponentType: "ui-dashboard", Order: 1, Layer: "presentation", Status: catalog.ComponentDeprecated, Version: "1.9.3",
		Technology:    tech("angularjs", "angularjs", "javascript", "node-16", "angular@1.8.3", "d3@5.16.0"),
		Deployment:    k8s("reports-portal:1.9.3", 2, "500m", "1Gi", endpoint("https", "https://reports.company.com", 443, "/status")),
		Configuration: config("production", "reports-portal-config", []string{"sso-client-secret"}, map[string]any{"deprecationBanner": true, "pdfExport": true}),
		Health:        g.health(catalog.HealthHealthy, 99.5, 900, 0.3, 0, 4*time.Minute),
		Sla:           sla(99, 1500, 1),
		Ownership:     owner("finance-engineering", "robert.lee", "finance-eng-oncall", "#reports-portal"),
		Repository:    repo("reports-portal"),
	}
	scheduler := &catalog.Component{
		ComponentID: "scheduler-reporting-001", Name: "Report Scheduler",
		Description:   "Airflow DAGs that refresh warehouse extracts and trigger report rendering",
		ComponentType: "scheduler", Order: 2, Layer: "business", Status: catalog.ComponentActive, Version: "2.7.3",
		Technology:    tech("python", "airflow", "python", "python-3.10", "apache-airflow@2.7.3"),
		Deployment:    managed("aws-mwaa", 2, "mw1.medium", "4Gi", endpoint("https", "https://airflow.reports.internal", 443, "/health")),
		Configuration: config("production", "reports-airflow-variables", []string{"warehouse-credentials"}, map[string]any{"catchup": false}),
		Health:        g.health(catalog.HealthDegraded, 98.9, 60, 1.2, 1, 6*time.Minute),
		Sla:           sla(99, 120, 1),
		Ownership:     owner("finance-engineering", "robert.lee", "finance-eng-oncall", "#reports-portal"),
		Repository:    repo("reports-airflow-dags"),
	}
	worker := &catalog.Component{
		ComponentID: "worker-reporting-001", Name: "Report Rendering Worker",
		Description:   "Renders report templates to PDF and Excel",
		ComponentType: "worker", Order: 3, Layer: "business", Status: catalog.ComponentDeprecated, Version: "1.4.0",
		Technology:    tech("java", "jasperreports", "java", "jvm-11", "jasperreports@6.20.0", "poi@5.2.3"),
		Deployment:    k8s("report-renderer:1.4.0", 2, "2000m", "4Gi"),
		Configuration: config("production", "report-renderer-config", []string{"warehouse-credentials", "s3-reports-writer"}, map[string]any{"excelExport": true}),
		Health:        g.health(catalog.HealthHealthy, 99.2, 4200, 0.5, 0, 5*time.Minute),
		Sla:           sla(99, 5000, 1),
		Ownership:     owner("finance-engineering", "robert.lee", "finance-eng-oncall", "#reports-portal"),
		Repository:    repo("report-renderer"),
	}
	db := &catalog.Component{
		ComponentID: "database-reporting-001", Name: "Reporting Warehouse",
		Description:   "Redshift warehouse of finance facts and dimensions",
		ComponentType: "database", Order: 4, Layer: "data", Status: catalog.ComponentActive, Version: "1.0.56",
		Technology:    tech("redshift", "aws-redshift", "sql", "redshift"),
		Deployment:    managed("aws-redshift", 4, "ra3.xlplus", "32Gi", endpoint("postgresql", "redshift://finance-dw.internal:5439/finance", 5439, "SELECT 1")),
		Configuration: config("production", "finance-dw-parameters", []string{"warehouse-admin-credentials"}, map[string]any{"concurrencyScaling": true}),
		Health:        g.health(catalog.HealthHealthy, 99.9, 850, 0.05, 0, 3*time.Minute),
		Sla:           sla(99.5, 2000, 0.1),
		Ownership:     owner("data-platform-team", "david.kim", "dba-oncall", "#finance-dw"),
		Repository:    repo("finance-dw-models"),
	}

	deps := []*catalog.Dependency{
		edge(ui, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:finance-dw-readonly", PoolSize: 10},
			Requirements: &catalog.Requirements{Performance: &catalog.PerformanceRequirements{MaxLatency: "2s"}},
			Fallback:     &catalog.Fallback{Strategy: "cached-response", Timeout: "30s", Retries: 1},
			Contract:     contract("1.0.0"),
			Monitoring:   monitoring(2, 3000),
		}),
		edge(scheduler, worker, catalog.Dependency{
			DependencyType: catalog.DependencyRuntime, Criticality: catalog.CriticalityHigh,
			Interface:    &catalog.DependencyInterface{Type: "http", Protocol: "https", ConnectionString: "http://report-renderer.reports.svc.cluster.local:8080"},
			Requirements: &catalog.Requirements{MinVersion: "1.3.0"},
			Fallback:     &catalog.Fallback{Strategy: "retry", Timeout: "10m", Retries: 3},
			Contract:     contract("1.3.0"),
			Monitoring:   monitoring(5, 600000),
		}),
		edge(scheduler, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityMedium,
			Interface:  &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:finance-dw-etl", PoolSize: 4},
			Fallback:   &catalog.Fallback{Strategy: "retry", Timeout: "30m", Retries: 2},
			Contract:   contract("1.0.0"),
			Monitoring: monitoring(5, 60000),
		}),
		edge(worker, db, catalog.Dependency{
			DependencyType: catalog.DependencyData, Criticality: catalog.CriticalityCritical,
			Interface:  &catalog.DependencyInterface{Type: "database", Protocol: "postgresql", ConnectionString: "vault:finance-dw-readonly", PoolSize: 8},
			Fallback:   circuitBreaker("5m", 2),
			Contract:   contract("1.0.0"),
			Monitoring: monitoring(2, 5000),
		}),
		edge(ui, worker, catalog.Dependency{
			DependencyType: catalog.DependencyFallback, Criticality: catalog.CriticalityLow,
			Interface:    &catalog.DependencyInterface{Type: "http", Protocol: "https", ConnectionString: "http://report-renderer.reports.svc.cluster.local:8080"},
			Requirements: &catalog.Requirements{MinVersion: "1.2.0", Features: []string{"on-demand-render"}},
			Fallback:     &catalog.Fallback{Strategy: "static-content", Timeout: "60s"},
			Contract:     contract("1.3.0"),
			Monitoring:   monitoring(5, 60000),
		}),
	}

	jobs := []*catalog.Job{
		span(&catalog.Job{
			JobID: "JOB-EMERG-RPT-599", JobType: catalog.JobEmergency, Status: catalog.JobCompleted, Priority: catalog.PriorityHigh,
			TriggeredBy: "finance-eng-oncall", ApprovedBy: "robert.lee",
			TargetComponents: []catalog.TargetComponent{target("scheduler-reporting-001", "2.7.2", "2.7.3", "completed")},
			Strategy:         &catalog.Strategy{Type: "recreate", Rollback: &catalog.Rollback{Automatic: false}},
			Validation:       validation("passed", "passed", "waived", "passed", "", ""),
			Metrics:          &catalog.JobMetrics{AffectedUsers: 320, Downtime: 600, DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(reportingID, "JOB-EMERG-RPT-599"),
		}, g.now.Add(-12*24*time.Hour), 48*time.Minute),
		span(&catalog.Job{
			JobID: "JOB-MAINT-RPT-600", JobType: catalog.JobMaintenance, Status: catalog.JobCompleted, Priority: catalog.PriorityLow,
			TriggeredBy: "maintenance-window", ApprovedBy: "david.kim",
			TargetComponents: []catalog.TargetComponent{target("database-reporting-001", "1.0.55", "1.0.56", "completed")},
			Strategy:         &catalog.Strategy{Type: "in-place"},
			Validation:       validation("passed", "", "", "passed", "passed", ""),
			Metrics:          &catalog.JobMetrics{Downtime: 900, DeploymentsCompleted: 1, TotalArtifactsDeployed: 1},
			Artifacts:        artifacts(reportingID, "JOB-MAINT-RPT-600"),
		}, g.now.Add(-7*24*time.Hour), 35*time.Minute),
		started(&catalog.Job{
			JobID: "JOB-MAINT-RPT-601", JobType: catalog.JobMaintenance, Status: catalog.JobPending, Priority: catalog.PriorityLow,
			TriggeredBy: "maintenance-window", ApprovedBy: "david.kim",
			TargetComponents: []catalog.TargetComponent{target("database-reporting-001", "1.0.56", "1.0.57", "pending")},
			Strategy:         &catalog.Strategy{Type: "in-place"},
			Artifacts:        artifacts(reportingID, "JOB-MAINT-RPT-601"),
		}, g.now.Add(2*time.Hour).Truncate(time.Hour)),
	}

	rules := []*catalog.Rule{
		{
			RuleID: "rule-report-currency-normalisation", Name: "Reporting Currency Normalisation",
			Description: "Converts amounts to EUR at the month-end rate before aggregation",
			RuleType:    catalog.RuleTransformation, Scope: "capability", Priority: catalog.PriorityMedium, Order: 1,
			Status: catalog.RuleDeprecated, Version: "1.4.0", Author: "finance-engineering", ApprovedBy: "robert.lee",
			EffectiveFrom: g.day(-900), EffectiveUntil: g.day(90),
			Conditions: []catalog.Condition{
				{Field: "amount.currency", Operator: "not_equals", Value: "EUR", Weight: 1},
			},
			Actions: []catalog.Action{
				{Type: "transform", Parameters: map[string]any{"operation": "convert_currency", "target": "EUR", "rateSource": "ecb-month-end"}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"fx", "legacy"}, Compliance: []string{"SOX-404"}, TestCoverage: 70, LastReview: g.day(-150)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 2300000, AverageExecutionTime: 0.9, SuccessRate: 99.8, LastExecuted: g.ago(3 * time.Hour)},
		},
		{
			RuleID: "rule-report-retention", Name: "Report Retention",
			Description: "Archives generated reports older than seven years",
			RuleType:    catalog.RuleCompliance, Scope: "capability", Priority: catalog.PriorityLow, Order: 2,
			Status: catalog.RuleActive, Version: "1.0.0", Author: "compliance-team", ApprovedBy: "mark.oconnor",
			EffectiveFrom: g.day(-600),
			Conditions: []catalog.Condition{
				{Field: "report.age_days", Operator: ">", Value: float64(2555), Weight: 1},
			},
			Actions: []catalog.Action{
				{Type: "archive", Parameters: map[string]any{"storageClass": "GLACIER", "legalHoldCheck": true}},
			},
			Metadata: &catalog.RuleMetadata{Tags: []string{"retention"}, Compliance: []string{"SOX-802"}, TestCoverage: 85, LastReview: g.day(-120)},
			Metrics:  &catalog.RuleMetrics{ExecutionCount: 730, AverageExecutionTime: 15.2, SuccessRate: 100, LastExecuted: g.ago(20 * time.Hour)},
		},
	}

	metrics := g.series(series{
		comp: scheduler, cur: level{avail: 98.9, p95: 60, errRate: 1.2, rpm: 35, cpu: 71.4, mem: 68.2, conns: 12},
		prev: &level{avail: 99.6, p95: 45, errRate: 0.4, rpm: 35, cpu: 48.9, mem: 61.5, conns: 12}, onset: 130 * time.Minute,
		phase: 2.9, serverShare: 0.8, timeoutShare: 0.4, region: "eu-central-1", az: "eu-central-1a",
		trends: catalog.Trends{Availability: "degrading", Latency: "stable", Throughput: "stable", Errors: "increasing"},
		events: []event{{id: "ALT-6101", condition: "errors.rate > 1% (task failures)", from: g.newest.Add(-125 * time.Minute)}},
	})
	metrics = append(metrics, g.series(series{
		comp: db, cur: level{avail: 99.9, p95: 850, errRate: 0.05, rpm: 220, cpu: 34.7, mem: 55.1, conns: 40},
		phase: 0.6, serverShare: 0.5, region: "eu-central-1", az: "eu-central-1a",
		trends: catalog.Trends{Availability: "stable", Latency: "stable", Throughput: "decreasing", Errors: "stable"},
	})...)

	return &catalog.Bundle{
		Capability:   capability,
		Components:   []*catalog.Component{ui, scheduler, worker, db},
		Dependencies: deps,
		Jobs:         jobs,
		Metrics:      metrics,
		Rules:        rules,
	}
}

// ---------------------------------------------------------------------------------------------
// Performance metric series.

// level is a component's steady operating point.
type level struct {
	avail   float64 // availability, percent
	p95     float64 // latency p95, milliseconds (p50, p99 and max are derived from it)
	errRate float64 // error rate, percent
	rpm     int     // requests per minute
	cpu     float64 // percent
	mem     float64 // percent
	conns   int     // open connections
}

// event is a monitoring alert raised at from and resolved at to (never when to is zero); while
// it is active, latency and the error rate are multiplied by latency and errors (when not 0).
type event struct {
	id, condition   string
	from, to        time.Time
	latency, errors float64
}

// series describes the performance metrics of one component.
type series struct {
	comp *catalog.Component
	cur  level
	// prev, when set, is the level before the component's current trouble began, onset before
	// the newest sample.
	prev  *level
	onset time.Duration
	// phase offsets the component's wave so that charts differ between components.
	phase float64
	// serverShare and timeoutShare split failed requests into 4xx, 5xx and timeouts.
	serverShare, timeoutShare float64
	env, region, az           string // default production, us-east-1, us-east-1a
	trends                    catalog.Trends
	events                    []event
}

// wave is a deterministic oscillation of the k-th sample before the newest, 0 at k == 0.
func wave(k int, phase float64) float64 {
	f := func(a float64) float64 { return 0.6*math.Sin(0.26*a+phase) + 0.4*math.Sin(0.07*a+2*phase) }
	return f(float64(k)) - f(0)
}

// slowWave is a slower, daily-looking oscillation for throughput, 0 at k == 0.
func slowWave(k int, phase float64) float64 {
	return math.Sin(0.045*float64(k)+phase) - math.Sin(phase)
}

func round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

func clampf(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// grade returns "healthy", "degraded" or "unhealthy": healthy while v is within the objective
// (at least it when higher is better, at most it otherwise), degraded within slack of it.
func grade(v, objective, slack float64, higherIsBetter bool) string {
	if objective == 0 {
		return "healthy"
	}
	if higherIsBetter {
		switch {
		case v >= objective:
			return "healthy"
		case v >= objective-slack:
			return "degraded"
		}
		return "unhealthy"
	}
	switch {
	case v <= objective:
		return "healthy"
	case v <= objective+slack:
		return "degraded"
	}
	return "unhealthy"
}

// series returns the component's performance samples, oldest first: one every MetricInterval
// over the MetricWindow up to the newest sample, which is exactly at s.cur.
func (g *gen) series(s series) []*catalog.Metric {
	env, region, az := s.env, s.region, s.az
	if env == "" {
		env = "production"
	}
	if region == "" {
		region, az = "us-east-1", "us-east-1a"
	}
	objective := s.comp.Sla
	if objective == nil {
		objective = &catalog.SLA{}
	}
	n := int(MetricWindow / MetricInterval)
	out := make([]*catalog.Metric, 0, n)
	for k := n - 1; k >= 0; k-- {
		at := g.newest.Add(-time.Duration(k) * MetricInterval)
		lv := s.cur
		if s.prev != nil && time.Duration(k)*MetricInterval > s.onset {
			lv = *s.prev
		}
		w, tw := wave(k, s.phase), slowWave(k, s.phase)
		latF, errF := 1+0.08*w, 1+0.3*w

		active, resolved := []catalog.Alert{}, []catalog.Alert{}
		for _, e := range s.events {
			isActive := !e.from.After(at) && (e.to.IsZero() || e.to.After(at))
			if isActive {
				active = append(active, catalog.Alert{AlertID: e.id, Condition: e.condition, TriggeredAt: catalog.TimePtr(e.from)})
				if e.latency != 0 {
					latF *= e.latency
				}
				if e.errors != 0 {
					errF *= e.errors
				}
			}
			if !e.to.IsZero() && e.to.After(at.Add(-MetricInterval)) && !e.to.After(at) {
				resolved = append(resolved, catalog.Alert{
					AlertID: e.id, Condition: e.condition, TriggeredAt: catalog.TimePtr(e.from), ResolvedAt: catalog.TimePtr(e.to),
				})
			}
		}

		avail := round(clampf(lv.avail+w*(100-lv.avail)*0.4, 0, 100), 3)
		p95 := lv.p95 * math.Max(latF, 0.5)
		requests := int(math.Round(float64(lv.rpm) * math.Max(1+0.12*tw, 0.1)))
		rate := math.Max(lv.errRate*errF, 0)
		failed := int(math.Round(float64(requests) * rate / 100))
		failed = min(failed, requests)
		timeouts := int(math.Round(float64(failed) * s.timeoutShare))
		server := int(math.Round(float64(failed-timeouts) * s.serverShare))
		errorRate := 0.0
		if requests > 0 {
			errorRate = round(100*float64(failed)/float64(requests), 2)
		}
		cpu := round(clampf(lv.cpu+6*w, 0.5, 99.5), 1)
		mem := round(clampf(lv.mem+1.5*wave(k, s.phase+1), 0.5, 99.5), 1)
		conns := max(0, lv.conns+int(math.Round(float64(lv.conns)*0.1*w)))

		errStatus := grade(errorRate, objective.ErrorRate, 2*objective.ErrorRate, false)
		saturation := "healthy"
		switch peak := math.Max(cpu, mem); {
		case peak >= 90:
			saturation = "unhealthy"
		case peak >= 75:
			saturation = "degraded"
		}

		out = append(out, &catalog.Metric{
			Meta:          catalog.Meta{CreatedAt: catalog.NewTimestamp(at)},
			ComponentID:   s.comp.ComponentID,
			ComponentName: s.comp.Name,
			MetricType:    catalog.MetricPerformance,
			Timestamp:     catalog.NewTimestamp(at),
			Interval:      "5m",
			Dimensions:    map[string]any{"environment": env, "region": region, "availability_zone": az},
			Values: &catalog.MetricValues{
				Availability: &catalog.AvailabilityValue{
					Value: avail, Unit: "percent", Status: grade(avail, objective.Availability, 1, true),
				},
				Latency: &catalog.LatencyValue{
					P50: math.Round(p95 * 0.36), P95: math.Round(p95), P99: math.Round(p95 * 1.6), Max: math.Round(p95 * 3.6),
					Unit: "milliseconds", Status: grade(math.Round(p95), objective.ResponseTime, objective.ResponseTime/2, false),
				},
				Throughput: &catalog.ThroughputValue{
					Requests: requests, Successful: requests - failed, Failed: failed, Unit: "per_minute", Status: errStatus,
				},
				Errors: &catalog.ErrorsValue{
					Rate: errorRate, Count: failed, Unit: "percent",
					Types:  map[string]any{"4xx": float64(failed - timeouts - server), "5xx": float64(server), "timeout": float64(timeouts)},
					Status: errStatus,
				},
				Saturation: &catalog.SaturationValue{CPU: cpu, Memory: mem, Connections: conns, Unit: "percent", Status: saturation},
			},
			Alerts: &catalog.MetricAlerts{Active: active, Resolved: resolved},
			Trends: &catalog.Trends{
				Availability: s.trends.Availability, Latency: s.trends.Latency, Throughput: s.trends.Throughput, Errors: s.trends.Errors,
			},
		})
	}
	return out
}
