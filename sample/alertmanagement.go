package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
