package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
