package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

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
