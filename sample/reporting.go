package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
