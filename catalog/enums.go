package catalog

import (
	"io"
	"strconv"
	"strings"
)

// The closed vocabularies of the catalogue. Each is stored in Data as the seed's lower-case
// string and shown in GraphQL as an UPPER_CASE enum value.

// CapabilityStatus is a capability's lifecycle stage.
type CapabilityStatus string

// The capability lifecycle stages, in their forward order.
const (
	CapabilityPlanning    CapabilityStatus = "planning"
	CapabilityDevelopment CapabilityStatus = "development"
	CapabilityActive      CapabilityStatus = "active"
	CapabilityDeprecated  CapabilityStatus = "deprecated"
	CapabilityRetiring    CapabilityStatus = "retiring"
)

// Priority is a business priority: of a capability, a job or a rule.
type Priority string

// The priorities, most urgent first.
const (
	PriorityCritical Priority = "critical"
	PriorityHigh     Priority = "high"
	PriorityMedium   Priority = "medium"
	PriorityLow      Priority = "low"
)

// Criticality is the impact of a dependency's failure.
type Criticality string

// The criticalities, highest first.
const (
	CriticalityCritical Criticality = "critical"
	CriticalityHigh     Criticality = "high"
	CriticalityMedium   Criticality = "medium"
	CriticalityLow      Criticality = "low"
)

// HealthStatus is the health of a component or a capability.
type HealthStatus string

// The health statuses.
const (
	HealthHealthy   HealthStatus = "healthy"
	HealthDegraded  HealthStatus = "degraded"
	HealthUnhealthy HealthStatus = "unhealthy"
	HealthUnknown   HealthStatus = "unknown"
)

// ComponentStatus is a component's operational state.
type ComponentStatus string

// The component states.
const (
	ComponentPlanned     ComponentStatus = "planned"
	ComponentActive      ComponentStatus = "active"
	ComponentInactive    ComponentStatus = "inactive"
	ComponentMaintenance ComponentStatus = "maintenance"
	ComponentDeprecated  ComponentStatus = "deprecated"
	ComponentRetired     ComponentStatus = "retired"
)

// DependencyType is the kind of a dependency between two components.
type DependencyType string

// The dependency types of the seed.
const (
	DependencyRuntime   DependencyType = "runtime"
	DependencyBuildtime DependencyType = "buildtime"
	DependencyData      DependencyType = "data"
	DependencyOptional  DependencyType = "optional"
	DependencyFallback  DependencyType = "fallback"
)

// JobType is the kind of an implementation job.
type JobType string

// The job types of the seed.
const (
	JobDeployment    JobType = "deployment"
	JobRollback      JobType = "rollback"
	JobConfiguration JobType = "configuration"
	JobScaling       JobType = "scaling"
	JobMaintenance   JobType = "maintenance"
	JobEmergency     JobType = "emergency"
)

// JobStatus is a job's state: pending -> running -> completed | failed | rolled_back | cancelled.
type JobStatus string

// The job states.
const (
	JobPending    JobStatus = "pending"
	JobRunning    JobStatus = "running"
	JobCompleted  JobStatus = "completed"
	JobFailed     JobStatus = "failed"
	JobRolledBack JobStatus = "rolled_back"
	JobCancelled  JobStatus = "cancelled"
)

// MetricType is the kind of a performance metric.
type MetricType string

// The metric types of the seed.
const (
	MetricPerformance MetricType = "performance"
	MetricResource    MetricType = "resource"
	MetricBusiness    MetricType = "business"
	MetricQuality     MetricType = "quality"
	MetricSecurity    MetricType = "security"
)

// RuleType is the kind of a configuration rule.
type RuleType string

// The rule types of the seed.
const (
	RuleBusiness       RuleType = "business"
	RuleSecurity       RuleType = "security"
	RuleCompliance     RuleType = "compliance"
	RuleOperational    RuleType = "operational"
	RuleRouting        RuleType = "routing"
	RuleTransformation RuleType = "transformation"
)

// RuleStatus is a rule's state; only active rules are evaluated.
type RuleStatus string

// The rule states.
const (
	RuleDraft      RuleStatus = "draft"
	RuleActive     RuleStatus = "active"
	RuleInactive   RuleStatus = "inactive"
	RuleDeprecated RuleStatus = "deprecated"
)

// Values lists every value of each vocabulary, in a stable order.
var (
	CapabilityStatuses = []CapabilityStatus{CapabilityPlanning, CapabilityDevelopment, CapabilityActive, CapabilityDeprecated, CapabilityRetiring}
	Priorities         = []Priority{PriorityCritical, PriorityHigh, PriorityMedium, PriorityLow}
	Criticalities      = []Criticality{CriticalityCritical, CriticalityHigh, CriticalityMedium, CriticalityLow}
	HealthStatuses     = []HealthStatus{HealthHealthy, HealthDegraded, HealthUnhealthy, HealthUnknown}
	ComponentStatuses  = []ComponentStatus{ComponentPlanned, ComponentActive, ComponentInactive, ComponentMaintenance, ComponentDeprecated, ComponentRetired}
	DependencyTypes    = []DependencyType{DependencyRuntime, DependencyBuildtime, DependencyData, DependencyOptional, DependencyFallback}
	JobTypes           = []JobType{JobDeployment, JobRollback, JobConfiguration, JobScaling, JobMaintenance, JobEmergency}
	JobStatuses        = []JobStatus{JobPending, JobRunning, JobCompleted, JobFailed, JobRolledBack, JobCancelled}
	MetricTypes        = []MetricType{MetricPerformance, MetricResource, MetricBusiness, MetricQuality, MetricSecurity}
	RuleTypes          = []RuleType{RuleBusiness, RuleSecurity, RuleCompliance, RuleOperational, RuleRouting, RuleTransformation}
	RuleStatuses       = []RuleStatus{RuleDraft, RuleActive, RuleInactive, RuleDeprecated}
)

// Rank returns the two-digit key rank of a priority: critical=1, high=2, medium=3, low=4, and
// 9 for an unknown value, so unknown values sort last.
func (p Priority) Rank() int { return rank(string(p)) }

// Rank returns the key rank of a criticality, on the same scale as Priority.Rank.
func (c Criticality) Rank() int { return rank(string(c)) }

func rank(s string) int {
	switch s {
	case "critical":
		return 1
	case "high":
		return 2
	case "medium":
		return 3
	case "low":
		return 4
	}
	return 9
}

func contains[T ~string](all []T, v T) bool {
	for _, a := range all {
		if a == v {
			return true
		}
	}
	return false
}

// Valid reports whether s is one of the vocabulary's values.
func (s CapabilityStatus) Valid() bool { return contains(CapabilityStatuses, s) }

// Valid reports whether p is one of the vocabulary's values.
func (p Priority) Valid() bool { return contains(Priorities, p) }

// Valid reports whether c is one of the vocabulary's values.
func (c Criticality) Valid() bool { return contains(Criticalities, c) }

// Valid reports whether h is one of the vocabulary's values.
func (h HealthStatus) Valid() bool { return contains(HealthStatuses, h) }

// Valid reports whether s is one of the vocabulary's values.
func (s ComponentStatus) Valid() bool { return contains(ComponentStatuses, s) }

// Valid reports whether t is one of the vocabulary's values.
func (t DependencyType) Valid() bool { return contains(DependencyTypes, t) }

// Valid reports whether t is one of the vocabulary's values.
func (t JobType) Valid() bool { return contains(JobTypes, t) }

// Valid reports whether s is one of the vocabulary's values.
func (s JobStatus) Valid() bool { return contains(JobStatuses, s) }

// Valid reports whether t is one of the vocabulary's values.
func (t MetricType) Valid() bool { return contains(MetricTypes, t) }

// Valid reports whether t is one of the vocabulary's values.
func (t RuleType) Valid() bool { return contains(RuleTypes, t) }

// Valid reports whether s is one of the vocabulary's values.
func (s RuleStatus) Valid() bool { return contains(RuleStatuses, s) }

// marshalEnum writes a stored lower-case value as its GraphQL enum name: a value of the
// vocabularies from enumJSON, written once (a list of nested objects marshals thousands of
// them per request), anything else spelt out.
func marshalEnum(w io.Writer, s string) {
	if b, ok := enumJSON[s]; ok {
		_, _ = w.Write(b)
		return
	}
	_, _ = io.WriteString(w, strconv.Quote(strings.ToUpper(s)))
}

// enumJSON is every vocabulary value as marshalEnum writes it (a JSON string of its upper-case
// name). Built once, only read.
var enumJSON = func() map[string][]byte {
	m := map[string][]byte{}
	add := func(vs ...string) {
		for _, v := range vs {
			m[v] = []byte(strconv.Quote(strings.ToUpper(v)))
		}
	}
	add(enumStrings(CapabilityStatuses)...)
	add(enumStrings(Priorities)...)
	add(enumStrings(Criticalities)...)
	add(enumStrings(HealthStatuses)...)
	add(enumStrings(ComponentStatuses)...)
	add(enumStrings(DependencyTypes)...)
	add(enumStrings(JobTypes)...)
	add(enumStrings(JobStatuses)...)
	add(enumStrings(MetricTypes)...)
	add(enumStrings(RuleTypes)...)
	add(enumStrings(RuleStatuses)...)
	return m
}()

func enumStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// unmarshalEnum reads a GraphQL enum name into its stored lower-case value.
func unmarshalEnum[T ~string](v any, all []T, what string) (T, error) {
	s, ok := v.(string)
	if !ok {
		return "", Invalid("", "%s must be an enum value", what)
	}
	t := T(strings.ToLower(s))
	if !contains(all, t) {
		return "", Invalid("", "%q is not a valid %s", s, what)
	}
	return t, nil
}

// MarshalGQL implements graphql.Marshaler.
func (s CapabilityStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (s *CapabilityStatus) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(v, CapabilityStatuses, "CapabilityStatus")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (p Priority) MarshalGQL(w io.Writer) { marshalEnum(w, string(p)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (p *Priority) UnmarshalGQL(v any) (err error) {
	*p, err = unmarshalEnum(v, Priorities, "Priority")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (c Criticality) MarshalGQL(w io.Writer) { marshalEnum(w, string(c)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (c *Criticality) UnmarshalGQL(v any) (err error) {
	*c, err = unmarshalEnum(v, Criticalities, "Criticality")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (h HealthStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(h)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (h *HealthStatus) UnmarshalGQL(v any) (err error) {
	*h, err = unmarshalEnum(v, HealthStatuses, "HealthStatus")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (s ComponentStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (s *ComponentStatus) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(v, ComponentStatuses, "ComponentStatus")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (t DependencyType) MarshalGQL(w io.Writer) { marshalEnum(w, string(t)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (t *DependencyType) UnmarshalGQL(v any) (err error) {
	*t, err = unmarshalEnum(v, DependencyTypes, "DependencyType")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (t JobType) MarshalGQL(w io.Writer) { marshalEnum(w, string(t)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (t *JobType) UnmarshalGQL(v any) (err error) {
	*t, err = unmarshalEnum(v, JobTypes, "JobType")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (s JobStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (s *JobStatus) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(v, JobStatuses, "JobStatus")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (t MetricType) MarshalGQL(w io.Writer) { marshalEnum(w, string(t)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (t *MetricType) UnmarshalGQL(v any) (err error) {
	*t, err = unmarshalEnum(v, MetricTypes, "MetricType")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (t RuleType) MarshalGQL(w io.Writer) { marshalEnum(w, string(t)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (t *RuleType) UnmarshalGQL(v any) (err error) {
	*t, err = unmarshalEnum(v, RuleTypes, "RuleType")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (s RuleStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (s *RuleStatus) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(v, RuleStatuses, "RuleStatus")
	return err
}

// unmarshalEnumJSON reads a JSON string in either case (GraphQL names arrive upper-case in
// patches) as the stored lower-case value. A JSON null changes nothing, as for the types that
// encoding/json decodes itself: in an update input, status: null means "no change".
func unmarshalEnumJSON(b []byte, dst *string) error {
	if string(b) == "null" {
		return nil
	}
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return Invalid("", "enum value %s must be a string", b)
	}
	*dst = strings.ToLower(s)
	return nil
}

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (s *CapabilityStatus) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(s)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (p *Priority) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(p)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (c *Criticality) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(c)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (h *HealthStatus) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(h)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (s *ComponentStatus) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(s)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (t *DependencyType) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(t)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (t *JobType) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(t)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (s *JobStatus) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(s)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (t *MetricType) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(t)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (t *RuleType) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(t)) }

// UnmarshalJSON implements json.Unmarshaler, accepting either case.
func (s *RuleStatus) UnmarshalJSON(b []byte) error { return unmarshalEnumJSON(b, (*string)(s)) }
