package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
