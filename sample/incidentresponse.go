package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
