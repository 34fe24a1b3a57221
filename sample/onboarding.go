package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
