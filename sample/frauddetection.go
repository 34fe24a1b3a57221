package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
