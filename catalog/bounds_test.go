package catalog

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fill sets every text field of v to its bound in two-byte characters, every list to
// MaxListLength items and every free-form JSON value to just under MaxJSONBytes: the largest
// entity the bounds let through.
func fill(v reflect.Value, name string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), name)
	case reflect.String:
		v.SetString(strings.Repeat("é", textLimit(name)))
	case reflect.Map, reflect.Interface:
		free := reflect.ValueOf(map[string]any{"k": strings.Repeat("j", MaxJSONBytes-8)})
		if free.Type().AssignableTo(v.Type()) { // a free-form JSON value, not a server-kept tally
			v.Set(free)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Interface {
			v.Set(reflect.ValueOf([]any{strings.Repeat("j", MaxJSONBytes-4)}))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), MaxListLength, MaxListLength))
		for i := range v.Len() {
			fill(v.Index(i), name)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[Timestamp]() {
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			field, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && field != "-" {
				fill(v.Field(i), field)
			}
		}
	}
}

func TestBoundsAtTheLimit(t *testing.T) {
	for _, e := range []any{&Capability{}, &Component{}, &Dependency{}, &Job{}, &Metric{}, &Rule{}} {
		fill(reflect.ValueOf(e), "")
		t.Run(reflect.TypeOf(e).Elem().Name(), func(t *testing.T) {
			if err := checkBounds(e); err != nil {
				t.Errorf("checkBounds(an entity at every bound) = %v, want nil", err)
			}
		})
	}
}

func TestBoundsOverTheLimit(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	over := []struct {
		name   string
		entity any
		field  string
	}{
		{"capability name", &Capability{Name: long(MaxNameLength + 1)}, "name"},
		{"capability name of 10,000 characters", &Capability{Name: long(10_000)}, "name"},
		{"capability name in four-byte characters", &Capability{Name: strings.Repeat("🙂", MaxNameLength+1)}, "name"},
		{"capability description", &Capability{Description: long(MaxDescriptionLength + 1)}, "description"},
		{"capability owner", &Capability{Owner: long(MaxTextLength + 1)}, "owner"},
		{"capability tags", &Capability{Tags: make([]string, MaxListLength+1)}, "tags"},
		{"capability tag", &Capability{Tags: []string{"a", long(MaxTextLength + 1)}}, "tags[1]"},
		{"capability SLA", &Capability{BusinessMetrics: &BusinessMetrics{Sla: long(MaxTextLength + 1)}}, "businessMetrics.sla"},
		{"capability standards", &Capability{Compliance: &Compliance{Standards: make([]string, MaxListLength+1)}}, "compliance.standards"},
		{"component name", &Component{Name: long(MaxNameLength + 1)}, "name"},
		{"component endpoint URL", &Component{Deployment: &Deployment{Endpoints: []Endpoint{{}, {URL: long(MaxTextLength + 1)}}}}, "deployment.endpoints[1].url"},
		{"component feature flags", &Component{Configuration: &Configuration{FeatureFlags: map[string]any{"f": long(MaxJSONBytes)}}}, "configuration.featureFlags"},
		{"component secrets", &Component{Configuration: &Configuration{Secrets: make([]string, MaxListLength+1)}}, "configuration.secrets"},
		{"dependency connection string", &Dependency{Interface: &DependencyInterface{ConnectionString: long(MaxTextLength + 1)}}, "interface.connectionString"},
		{"dependency features", &Dependency{Requirements: &Requirements{Features: make([]string, MaxListLength+1)}}, "requirements.features"},
		{"job target components", &Job{TargetComponents: make([]TargetComponent, MaxListLength+1)}, "targetComponents"},
		{"job target version", &Job{TargetComponents: []TargetComponent{{ToVersion: long(MaxTextLength + 1)}}}, "targetComponents[0].toVersion"},
		{"job logs URI", &Job{Artifacts: &JobArtifacts{Logs: long(MaxTextLength + 1)}}, "artifacts.logs"},
		{"metric dimensions", &Metric{Dimensions: map[string]any{"d": long(MaxJSONBytes)}}, "dimensions"},
		{"metric alerts", &Metric{Alerts: &MetricAlerts{Active: make([]Alert, MaxListLength+1)}}, "alerts.active"},
		{"metric error types", &Metric{Values: &MetricValues{Errors: &ErrorsValue{Types: map[string]any{"t": long(MaxJSONBytes)}}}}, "values.errors.types"},
		{"rule name", &Rule{Name: long(MaxNameLength + 1)}, "name"},
		{"rule conditions", &Rule{Conditions: make([]Condition, MaxListLength+1)}, "conditions"},
		{"rule condition values", &Rule{Conditions: []Condition{{Values: []any{long(MaxJSONBytes)}}}}, "conditions[0].values"},
		{"rule condition value", &Rule{Conditions: []Condition{{}, {Value: long(MaxJSONBytes)}}}, "conditions[1].value"},
		{"rule action parameters", &Rule{Actions: []Action{{Parameters: map[string]any{"p": long(MaxJSONBytes)}}}}, "actions[0].parameters"},
		{"rule metadata tags", &Rule{Metadata: &RuleMetadata{Tags: make([]string, MaxListLength+1)}}, "metadata.tags"},
	}
	for _, tt := range over {
		t.Run(tt.name, func(t *testing.T) {
			err := checkBounds(tt.entity)
			var v *ValidationError
			if !errors.As(err, &v) || v.Field != tt.field {
				t.Errorf("checkBounds(%s) = %v, want a *ValidationError on %q", tt.name, err, tt.field)
			}
		})
	}
}

// The validators apply the bounds.
func TestValidatorsCheckBounds(t *testing.T) {
	name := strings.Repeat("n", 10_000)
	now := time.Date(2025, 11, 22, 14, 30, 0, 0, time.UTC)
	tests := []struct {
		validator string
		err       error
		field     string
	}{
		{"ValidateCapability", ValidateCapability(&Capability{Name: name, BusinessDomain: "d", Status: CapabilityActive, Priority: PriorityLow}), "name"},
		{"ValidateComponent", ValidateComponent(&Component{Name: name, ComponentType: "t", Order: 1, Status: ComponentActive}), "name"},
		{"ValidateDependency", ValidateDependency(&Dependency{SourceComponentName: name, DependencyType: DependencyRuntime, Criticality: CriticalityLow}, nil, nil), "sourceComponentName"},
		{"ValidateJob", ValidateJob(&Job{TriggeredBy: name, JobType: JobDeployment, Status: JobPending, StartTime: NewTimestamp(now)}, nil), "triggeredBy"},
		{"ValidateMetric", ValidateMetric(&Metric{ComponentName: name, MetricType: MetricPerformance, Timestamp: NewTimestamp(now), Interval: "5m"}, now), "componentName"},
		{"ValidateRuleFields", ValidateRuleFields(&Rule{Name: name, RuleType: RuleBusiness, Status: RuleActive, Priority: PriorityLow, Order: 1}), "name"},
	}
	for _, tt := range tests {
		var v *ValidationError
		if !errors.As(tt.err, &v) || v.Field != tt.field {
			t.Errorf("%s(10,000 characters in %s) = %v, want a *ValidationError on %q", tt.validator, tt.field, tt.err, tt.field)
		}
	}
}

// A timestamp parses only when its UTC form has four-digit years, as keys and stored text need.
func TestParseTimestampRange(t *testing.T) {
	for s, ok := range map[string]bool{
		"2025-11-22T10:00:00Z":        true,
		"0000-01-01T00:00:00Z":        true,
		"9999-12-31T23:59:59.999999Z": true,
		"9999-12-31T23:30:00-01:00":   false,
		"0000-01-01T00:30:00+01:00":   false,
	} {
		ts, err := ParseTimestamp(s)
		if (err == nil) != ok {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want ok = %v", s, ts, err, ok)
		}
		if err == nil {
			if back, err := ParseTimestamp(ts.String()); err != nil || !back.Equal(ts.Time) {
				t.Errorf("ParseTimestamp(%q) does not read back: %v, %v", ts.String(), back, err)
			}
		}
	}
}

// A sample older than the retention would expire unread: it is refused, as one from the far
// future is. (recordMetrics once answered recorded: 1 for samples 91 days, 10 and 100 years old.)
func TestMetricRetentionRefused(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"now", now, true},
		{"89 days old", now.Add(-89 * 24 * time.Hour), true},
		{"91 days old", now.Add(-91 * 24 * time.Hour), false},
		{"10 years old", now.AddDate(-10, 0, 0), false},
		{"100 years old", now.AddDate(-100, 0, 0), false},
		{"an hour ahead", now.Add(time.Hour), false},
	} {
		m := &Metric{CapabilityID: "CAP-X", ComponentID: "c", MetricType: MetricPerformance, Interval: "5m", Timestamp: NewTimestamp(tt.at)}
		err := ValidateMetric(m, now)
		var invalid *ValidationError
		if ok := err == nil; ok != tt.ok || (err != nil && (!errors.As(err, &invalid) || invalid.Field != "timestamp")) {
			t.Errorf("ValidateMetric(%s) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
