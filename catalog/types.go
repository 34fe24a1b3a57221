// Package catalog holds the domain of the Business Capability Catalogue: the six entity types
// with the seed's field names, their closed vocabularies, and the pure rules over them (input
// validation, health scoring, dependency-graph analysis, rule evaluation, SLA views). It knows
// nothing of DynamoDB or GraphQL transport.
package catalog

// Meta is what every stored entity carries beside its Data: the optimistic-lock revision and
// the envelope's timestamps. It is filled from the item envelope, never stored inside Data.
type Meta struct {
	Revision  int       `json:"-"`
	CreatedAt Timestamp `json:"-"`
	UpdatedAt Timestamp `json:"-"`
}

// Capability is a business capability (SK METADATA).
type Capability struct {
	Meta            `json:"-"`
	CapabilityID    string           `json:"capabilityId"`
	Name            string           `json:"name"`
	Description     string           `json:"description,omitempty"`
	BusinessDomain  string           `json:"businessDomain"`
	Status          CapabilityStatus `json:"status"`
	Priority        Priority         `json:"priority"`
	Owner           string           `json:"owner,omitempty"`
	CreatedBy       string           `json:"createdBy,omitempty"`
	Version         string           `json:"version,omitempty"`
	Tags            []string         `json:"tags,omitempty"`
	BusinessMetrics *BusinessMetrics `json:"businessMetrics,omitempty"`
	Architecture    *Architecture    `json:"architecture,omitempty"`
	Compliance      *Compliance      `json:"compliance,omitempty"`
	Aggregates      Aggregates       `json:"aggregates"`
	Lifecycle       *Lifecycle       `json:"lifecycle,omitempty"`
	// WriteSeq is the partition's write sequence as the item read carried it (METADATA and
	// its index items): every write to the partition changes it, so it names the state of the
	// capability's components, dependencies and rules. It is never part of the entity's JSON.
	WriteSeq int `json:"-"`
}

// BusinessMetrics are a capability's service objectives.
type BusinessMetrics struct {
	Sla              string `json:"sla,omitempty"`
	Rto              string `json:"rto,omitempty"`
	Rpo              string `json:"rpo,omitempty"`
	CriticalityLevel string `json:"criticalityLevel,omitempty"`
}

// Architecture describes how a capability is built and deployed.
type Architecture struct {
	Pattern         string `json:"pattern,omitempty"`
	DeploymentModel string `json:"deploymentModel,omitempty"`
	ScalabilityType string `json:"scalabilityType,omitempty"`
	Redundancy      string `json:"redundancy,omitempty"`
}

// Compliance records a capability's standards and audits.
type Compliance struct {
	Standards           []string   `json:"standards,omitempty"`
	LastAudit           *Timestamp `json:"lastAudit,omitempty"`
	CertificationStatus string     `json:"certificationStatus,omitempty"`
}

// Aggregates are a capability's counters, kept equal to what its partition holds.
type Aggregates struct {
	TotalComponents        int          `json:"totalComponents"`
	ActiveComponents       int          `json:"activeComponents"`
	HealthScore            float64      `json:"healthScore"`
	HealthStatus           HealthStatus `json:"healthStatus"`
	TotalDependencies      int          `json:"totalDependencies"`
	TotalJobs              int          `json:"totalJobs"`
	SuccessfulJobs         int          `json:"successfulJobs"`
	FailedJobs             int          `json:"failedJobs"`
	AverageDeploymentTime  string       `json:"averageDeploymentTime,omitempty"`
	TotalIncidents         int          `json:"totalIncidents"`
	TotalRules             int          `json:"totalRules"`
	ActiveRules            int          `json:"activeRules"`
	LastDeployment         *Timestamp   `json:"lastDeployment"`
	MonthlyOperationalCost float64      `json:"monthlyOperationalCost"`
	UserCount              int          `json:"userCount"`
	// Components tallies the components by team, type and health (TallyComponents), kept with
	// the other counters; not part of the GraphQL schema.
	Components *ComponentTally `json:"componentTally,omitempty"`
	// ActiveJobs counts the jobs PENDING or RUNNING, per job type (ActiveJobsByType), kept
	// for the catalogue's counters; not part of the GraphQL schema.
	ActiveJobs map[JobType]int `json:"activeJobs,omitempty"`
	// CompletedDeployments counts the completed deployment jobs folded into
	// AverageDeploymentTime (AddDeploymentTime); not part of the GraphQL schema.
	CompletedDeployments int `json:"completedDeployments,omitempty"`
}

// ReportedHealthScore returns the health score, or nil when no component reports health: the
// status is then unknown (HealthScore gives a score of 0 and the unknown status exactly when no
// component reports, and never the unknown status otherwise). A reported 0 is a real score.
func (a Aggregates) ReportedHealthScore() *float64 {
	if a.HealthStatus == HealthUnknown || a.HealthStatus == "" {
		return nil
	}
	score := a.HealthScore
	return &score
}

// Lifecycle holds a capability's lifecycle dates.
type Lifecycle struct {
	Phase             string     `json:"phase,omitempty"`
	PlannedRetirement *Timestamp `json:"plannedRetirement"`
	LastMajorUpdate   *Timestamp `json:"lastMajorUpdate,omitempty"`
	NextReview        *Timestamp `json:"nextReview,omitempty"`
}

// Component is a software component delivering a capability (SK COMPONENT#...).
type Component struct {
	Meta          `json:"-"`
	ComponentID   string           `json:"componentId"`
	CapabilityID  string           `json:"capabilityId"`
	Name          string           `json:"name"`
	Description   string           `json:"description,omitempty"`
	ComponentType string           `json:"componentType"`
	Order         int              `json:"order"`
	Layer         string           `json:"layer,omitempty"`
	Status        ComponentStatus  `json:"status"`
	Version       string           `json:"version,omitempty"`
	Technology    *Technology      `json:"technology,omitempty"`
	Deployment    *Deployment      `json:"deployment,omitempty"`
	Configuration *Configuration   `json:"configuration,omitempty"`
	Health        *ComponentHealth `json:"health,omitempty"`
	Sla           *SLA             `json:"sla,omitempty"`
	Ownership     *Ownership       `json:"ownership,omitempty"`
	Repository    *Repository      `json:"repository,omitempty"`
}

// Technology is a component's stack.
type Technology struct {
	Stack        string   `json:"stack,omitempty"`
	Framework    string   `json:"framework,omitempty"`
	Language     string   `json:"language,omitempty"`
	Runtime      string   `json:"runtime,omitempty"`
	Dependencies []string `json:"dependencies,omitempty"`
}

// Deployment is where and how a component runs.
type Deployment struct {
	Type      string     `json:"type,omitempty"`
	Platform  string     `json:"platform,omitempty"`
	Image     string     `json:"image,omitempty"`
	Replicas  int        `json:"replicas,omitempty"`
	Resources *Resources `json:"resources,omitempty"`
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// Resources are a deployment's resource requests.
type Resources struct {
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Endpoint is one address a component serves.
type Endpoint struct {
	Type        string `json:"type,omitempty"`
	URL         string `json:"url,omitempty"`
	Port        int    `json:"port,omitempty"`
	HealthCheck string `json:"healthCheck,omitempty"`
}

// Configuration is a component's runtime configuration.
type Configuration struct {
	Environment  string         `json:"environment,omitempty"`
	ConfigMap    string         `json:"configMap,omitempty"`
	Secrets      []string       `json:"secrets,omitempty"`
	FeatureFlags map[string]any `json:"featureFlags,omitempty"`
}

// ComponentHealth is a component's latest observed health.
type ComponentHealth struct {
	Status       HealthStatus `json:"status"`
	LastCheck    *Timestamp   `json:"lastCheck,omitempty"`
	Availability float64      `json:"availability"`
	ResponseTime float64      `json:"responseTime"`
	ErrorRate    float64      `json:"errorRate"`
	ActiveAlerts int          `json:"activeAlerts"`
}

// SLA are a component's service-level objectives: availability (percent, at least),
// responseTime (milliseconds, at most) and errorRate (percent, at most).
type SLA struct {
	Availability float64 `json:"availability"`
	ResponseTime float64 `json:"responseTime"`
	ErrorRate    float64 `json:"errorRate"`
}

// Ownership names who runs a component.
type Ownership struct {
	Team           string `json:"team,omitempty"`
	LeadEngineer   string `json:"leadEngineer,omitempty"`
	OncallRotation string `json:"oncallRotation,omitempty"`
	SlackChannel   string `json:"slackChannel,omitempty"`
}

// Repository is where a component's source lives.
type Repository struct {
	Type         string `json:"type,omitempty"`
	URL          string `json:"url,omitempty"`
	Branch       string `json:"branch,omitempty"`
	CicdPipeline string `json:"cicdPipeline,omitempty"`
}

// Dependency is a directed edge source -> target between two components of one capability
// (SK DEPENDENCY#...).
type Dependency struct {
	Meta                `json:"-"`
	CapabilityID        string               `json:"capabilityId"`
	SourceComponentID   string               `json:"sourceComponentId"`
	SourceComponentName string               `json:"sourceComponentName,omitempty"`
	TargetComponentID   string               `json:"targetComponentId"`
	TargetComponentName string               `json:"targetComponentName,omitempty"`
	DependencyType      DependencyType       `json:"dependencyType"`
	Criticality         Criticality          `json:"criticality"`
	Interface           *DependencyInterface `json:"interface,omitempty"`
	Requirements        *Requirements        `json:"requirements,omitempty"`
	Fallback            *Fallback            `json:"fallback,omitempty"`
	Contract            *Contract            `json:"contract,omitempty"`
	Monitoring          *Monitoring          `json:"monitoring,omitempty"`
}

// DependencyInterface is how the source talks to the target.
type DependencyInterface struct {
	Type             string `json:"type,omitempty"`
	Protocol         string `json:"protocol,omitempty"`
	ConnectionString string `json:"connectionString,omitempty"`
	PoolSize         int    `json:"poolSize,omitempty"`
}

// Requirements are what the source needs of the target.
type Requirements struct {
	MinVersion  string                   `json:"minVersion,omitempty"`
	Features    []string                 `json:"features,omitempty"`
	Performance *PerformanceRequirements `json:"performance,omitempty"`
}

// PerformanceRequirements are a dependency's latency and throughput needs.
type PerformanceRequirements struct {
	MaxLatency    string `json:"maxLatency,omitempty"`
	MinThroughput string `json:"minThroughput,omitempty"`
}

// Fallback is the resilience pattern protecting a dependency.
type Fallback struct {
	Strategy        string  `json:"strategy,omitempty"`
	Timeout         string  `json:"timeout,omitempty"`
	Retries         int     `json:"retries,omitempty"`
	BackupComponent *string `json:"backupComponent"`
}

// Contract is the interface contract of a dependency.
type Contract struct {
	SchemaVersion     string `json:"schemaVersion,omitempty"`
	ValidationEnabled bool   `json:"validationEnabled"`
	BreakingChanges   bool   `json:"breakingChanges"`
}

// Monitoring is how a dependency is watched.
type Monitoring struct {
	SliEnabled     bool            `json:"sliEnabled"`
	AlertThreshold *AlertThreshold `json:"alertThreshold,omitempty"`
}

// AlertThreshold are the thresholds that raise an alert.
type AlertThreshold struct {
	ErrorRate float64 `json:"errorRate"`
	Latency   float64 `json:"latency"`
}

// Job is an implementation job: deployment, rollback, scaling... (SK JOB#...).
type Job struct {
	Meta             `json:"-"`
	JobID            string            `json:"jobId"`
	CapabilityID     string            `json:"capabilityId"`
	JobType          JobType           `json:"jobType"`
	Status           JobStatus         `json:"status"`
	Priority         Priority          `json:"priority,omitempty"`
	TriggeredBy      string            `json:"triggeredBy,omitempty"`
	ApprovedBy       string            `json:"approvedBy,omitempty"`
	StartTime        Timestamp         `json:"startTime"`
	EndTime          *Timestamp        `json:"endTime,omitempty"`
	Duration         *int              `json:"duration,omitempty"`
	TargetComponents []TargetComponent `json:"targetComponents,omitempty"`
	Strategy         *Strategy         `json:"strategy,omitempty"`
	Validation       *Validation       `json:"validation,omitempty"`
	Metrics          *JobMetrics       `json:"metrics,omitempty"`
	Artifacts        *JobArtifacts     `json:"artifacts,omitempty"`
}

// TargetComponent is one component a job changes.
type TargetComponent struct {
	// CapabilityID is the job's capability, set when the job is read; not stored.
	CapabilityID string `json:"-"`
	ComponentID  string `json:"componentId"`
	FromVersion  string `json:"fromVersion,omitempty"`
	ToVersion    string `json:"toVersion,omitempty"`
	Status       string `json:"status,omitempty"`
}

// Strategy is how a job rolls out.
type Strategy struct {
	Type     string    `json:"type,omitempty"`
	Canary   *Canary   `json:"canary,omitempty"`
	Rollback *Rollback `json:"rollback,omitempty"`
}

// Canary is a canary stage of a rollout.
type Canary struct {
	Enabled    bool   `json:"enabled"`
	Percentage int    `json:"percentage,omitempty"`
	Duration   string `json:"duration,omitempty"`
}

// Rollback is when a rollout reverts itself.
type Rollback struct {
	Automatic bool            `json:"automatic"`
	Threshold *AlertThreshold `json:"threshold,omitempty"`
}

// Validation are a job's gate results.
type Validation struct {
	PreDeployment  *PreDeployment  `json:"preDeployment,omitempty"`
	PostDeployment *PostDeployment `json:"postDeployment,omitempty"`
}

// PreDeployment are the gates before a rollout.
type PreDeployment struct {
	HealthChecks string `json:"healthChecks,omitempty"`
	SmokeTests   string `json:"smokeTests,omitempty"`
	SecurityScan string `json:"securityScan,omitempty"`
}

// PostDeployment are the gates after a rollout.
type PostDeployment struct {
	FunctionalTests  string `json:"functionalTests,omitempty"`
	PerformanceTests string `json:"performanceTests,omitempty"`
	IntegrationTests string `json:"integrationTests,omitempty"`
}

// JobMetrics are a job's business impact.
type JobMetrics struct {
	AffectedUsers          int `json:"affectedUsers"`
	Downtime               int `json:"downtime"`
	RollbacksTriggered     int `json:"rollbacksTriggered"`
	DeploymentsCompleted   int `json:"deploymentsCompleted"`
	TotalArtifactsDeployed int `json:"totalArtifactsDeployed"`
}

// JobArtifacts are the S3 URIs of a job's plan, logs and reports.
type JobArtifacts struct {
	DeploymentPlan string `json:"deploymentPlan,omitempty"`
	Logs           string `json:"logs,omitempty"`
	Reports        string `json:"reports,omitempty"`
}

// Metric is one performance metric sample of a component (SK METRIC#...).
type Metric struct {
	Meta          `json:"-"`
	CapabilityID  string         `json:"capabilityId"`
	ComponentID   string         `json:"componentId"`
	ComponentName string         `json:"componentName,omitempty"`
	MetricType    MetricType     `json:"metricType"`
	Timestamp     Timestamp      `json:"timestamp"`
	Interval      string         `json:"interval"`
	Dimensions    map[string]any `json:"dimensions,omitempty"`
	Values        *MetricValues  `json:"values,omitempty"`
	Alerts        *MetricAlerts  `json:"alerts,omitempty"`
	Trends        *Trends        `json:"trends,omitempty"`
}

// MetricValues are the measured values of a sample.
type MetricValues struct {
	Availability *AvailabilityValue `json:"availability,omitempty"`
	Latency      *LatencyValue      `json:"latency,omitempty"`
	Throughput   *ThroughputValue   `json:"throughput,omitempty"`
	Errors       *ErrorsValue       `json:"errors,omitempty"`
	Saturation   *SaturationValue   `json:"saturation,omitempty"`
}

// AvailabilityValue is availability in percent.
type AvailabilityValue struct {
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Status string  `json:"status,omitempty"`
}

// LatencyValue are latency percentiles.
type LatencyValue struct {
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	Max    float64 `json:"max"`
	Unit   string  `json:"unit,omitempty"`
	Status string  `json:"status,omitempty"`
}

// ThroughputValue are request counts.
type ThroughputValue struct {
	Requests   int    `json:"requests"`
	Successful int    `json:"successful"`
	Failed     int    `json:"failed"`
	Unit       string `json:"unit,omitempty"`
	Status     string `json:"status,omitempty"`
}

// ErrorsValue are error rate and counts; types maps "4xx", "5xx", "timeout" to counts.
type ErrorsValue struct {
	Rate   float64        `json:"rate"`
	Count  int            `json:"count"`
	Unit   string         `json:"unit,omitempty"`
	Types  map[string]any `json:"types,omitempty"`
	Status string         `json:"status,omitempty"`
}

// SaturationValue is resource use.
type SaturationValue struct {
	CPU         float64 `json:"cpu"`
	Memory      float64 `json:"memory"`
	Connections int     `json:"connections"`
	Unit        string  `json:"unit,omitempty"`
	Status      string  `json:"status,omitempty"`
}

// MetricAlerts are the alerts active at, and resolved before, a sample.
type MetricAlerts struct {
	Active   []Alert `json:"active"`
	Resolved []Alert `json:"resolved"`
}

// Alert is one monitoring alert.
type Alert struct {
	AlertID     string     `json:"alertId"`
	Condition   string     `json:"condition,omitempty"`
	TriggeredAt *Timestamp `json:"triggeredAt,omitempty"`
	ResolvedAt  *Timestamp `json:"resolvedAt,omitempty"`
}

// Trends are the directions of a component's metrics.
type Trends struct {
	Availability string `json:"availability,omitempty"`
	Latency      string `json:"latency,omitempty"`
	Throughput   string `json:"throughput,omitempty"`
	Errors       string `json:"errors,omitempty"`
}

// Rule is a configuration rule (SK RULE#...). Order (1..999, lower first) places it in the
// partition; Priority keeps the seed's label.
type Rule struct {
	Meta           `json:"-"`
	RuleID         string        `json:"ruleId"`
	CapabilityID   string        `json:"capabilityId"`
	Name           string        `json:"name"`
	Description    string        `json:"description,omitempty"`
	RuleType       RuleType      `json:"ruleType"`
	Scope          string        `json:"scope,omitempty"`
	Priority       Priority      `json:"priority"`
	Order          int           `json:"order"`
	Status         RuleStatus    `json:"status"`
	Version        string        `json:"version,omitempty"`
	Author         string        `json:"author,omitempty"`
	ApprovedBy     string        `json:"approvedBy,omitempty"`
	EffectiveFrom  *Timestamp    `json:"effectiveFrom,omitempty"`
	EffectiveUntil *Timestamp    `json:"effectiveUntil"`
	Conditions     []Condition   `json:"conditions"`
	Actions        []Action      `json:"actions"`
	Metadata       *RuleMetadata `json:"metadata,omitempty"`
	Metrics        *RuleMetrics  `json:"metrics,omitempty"`
}

// Condition is one weighted test of a rule: field (a dot path into the input), an operator,
// and value or values.
type Condition struct {
	Field    string `json:"field"`
	Operator string `json:"operator"`
	Value    any    `json:"value,omitempty"`
	Values   []any  `json:"values,omitempty"`
	Weight   int    `json:"weight"`
}

// Action is what a rule does when it matches.
type Action struct {
	Type       string         `json:"type"`
	Parameters map[string]any `json:"parameters,omitempty"`
}

// RuleMetadata are a rule's tags and review facts.
type RuleMetadata struct {
	Tags         []string   `json:"tags,omitempty"`
	Compliance   []string   `json:"compliance,omitempty"`
	TestCoverage float64    `json:"testCoverage,omitempty"`
	LastReview   *Timestamp `json:"lastReview,omitempty"`
}

// RuleMetrics are a rule's execution statistics.
type RuleMetrics struct {
	ExecutionCount       int        `json:"executionCount"`
	AverageExecutionTime float64    `json:"averageExecutionTime"`
	SuccessRate          float64    `json:"successRate"`
	LastExecuted         *Timestamp `json:"lastExecuted,omitempty"`
}
