package sample

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// testNow is deliberately not aligned to the metric interval.
var testNow = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

func bundleByID(t *testing.T, bundles []*catalog.Bundle, id string) *catalog.Bundle {
	t.Helper()
	for _, b := range bundles {
		if b.Capability.CapabilityID == id {
			return b
		}
	}
	t.Fatalf("capability %s not in the sample", id)
	return nil
}

func componentByID(b *catalog.Bundle, id string) *catalog.Component {
	for _, c := range b.Components {
		if c.ComponentID == id {
			return c
		}
	}
	return nil
}

func TestSeedIDsAndOrders(t *testing.T) {
	b := bundleByID(t, Catalogue(testNow), "CAP-ALERT-MGT-001")
	c := b.Capability
	if c.Name != "Alert Management" || c.BusinessDomain != "operations" || c.Status != catalog.CapabilityActive || c.Priority != catalog.PriorityCritical {
		t.Errorf("capability = %q %q %q %q", c.Name, c.BusinessDomain, c.Status, c.Priority)
	}
	for _, tc := range []struct {
		id, typ, name, layer string
		order                int
	}{
		{"ui-dashboard-alert-001", "ui-dashboard", "Alert Management Dashboard", "presentation", 1},
		{"api-server-alert-001", "api-server", "Alert API Server", "business", 2},
		{"mcp-server-alert-001", "mcp-server", "", "", 3},
		{"database-alert-001", "database", "Alert Database", "data", 4},
	} {
		t.Run(tc.id, func(t *testing.T) {
			got := componentByID(b, tc.id)
			if got == nil {
				t.Fatal("missing")
			}
			if got.Order != tc.order || got.ComponentType != tc.typ {
				t.Errorf("order, type = %d, %q; want %d, %q", got.Order, got.ComponentType, tc.order, tc.typ)
			}
			if tc.name != "" && got.Name != tc.name {
				t.Errorf("name = %q, want %q", got.Name, tc.name)
			}
			if tc.layer != "" && got.Layer != tc.layer {
				t.Errorf("layer = %q, want %q", got.Layer, tc.layer)
			}
			h := got.Health
			if h == nil || h.LastCheck == nil {
				t.Fatal("no health")
			}
			if age := testNow.Sub(h.LastCheck.Time); age <= 0 || age > 10*time.Minute {
				t.Errorf("health.lastCheck %s is %s before now, want a few minutes", h.LastCheck, age)
			}
		})
	}

	var job *catalog.Job
	for _, j := range b.Jobs {
		if j.JobID == "JOB-DEPLOY-456" {
			job = j
		}
	}
	if job == nil {
		t.Fatal("JOB-DEPLOY-456 missing")
	}
	if want := time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC); !job.StartTime.Equal(want) || job.StartTime.String() != "2025-11-22T10:00:00.000000Z" {
		t.Errorf("JOB-DEPLOY-456 start = %s, want %s", job.StartTime, want)
	}
	if job.EndTime == nil || job.EndTime.String() != "2025-11-22T10:15:00.000000Z" || job.Duration == nil || *job.Duration != 900 {
		t.Errorf("JOB-DEPLOY-456 end/duration = %v/%v", job.EndTime, job.Duration)
	}

	var rule *catalog.Rule
	for _, r := range b.Rules {
		if r.RuleID == "rule-alert-severity-mapping" {
			rule = r
		}
	}
	if rule == nil || rule.Order != 1 || rule.Status != catalog.RuleActive || rule.EffectiveUntil != nil {
		t.Fatalf("rule-alert-severity-mapping = %+v", rule)
	}
	ev := catalog.EvaluateRule(rule, map[string]any{"source": "production", "error_count": 150, "customer_impact": "high"})
	if !ev.Matched || ev.Score != 10 || ev.Severity == nil || *ev.Severity != "critical" {
		t.Errorf("evaluation = matched %v score %d severity %v", ev.Matched, ev.Score, ev.Severity)
	}

	var seedDep *catalog.Dependency
	for _, d := range b.Dependencies {
		if d.SourceComponentID == "api-server-alert-001" && d.TargetComponentID == "database-alert-001" {
			seedDep = d
		}
	}
	if seedDep == nil || seedDep.Fallback == nil || seedDep.Fallback.BackupComponent != nil {
		t.Fatalf("seed dependency = %+v", seedDep)
	}
}

// TestSeedExamples checks that every field of the seed's JSON examples (testdata) is carried,
// with the seed's value, by the sample's corresponding entity. Paths listed in skip are values
// that the sample recomputes or places relative to now.
func TestSeedExamples(t *testing.T) {
	raw, err := os.ReadFile("testdata/seed_examples.json")
	if err != nil {
		t.Fatal(err)
	}
	var seed map[string]any
	if err := json.Unmarshal(raw, &seed); err != nil {
		t.Fatal(err)
	}
	b := bundleByID(t, Catalogue(testNow), "CAP-ALERT-MGT-001")
	newest := testNow.Truncate(5 * time.Minute)
	var metric *catalog.Metric
	for _, m := range b.Metrics {
		if m.ComponentID == "api-server-alert-001" && m.Timestamp.Equal(newest) {
			metric = m
		}
	}
	if metric == nil {
		t.Fatal("no newest api-server-alert-001 metric")
	}
	find := func(ok func(any) bool, list any) any {
		v := reflect.ValueOf(list)
		for i := range v.Len() {
			if x := v.Index(i).Interface(); ok(x) {
				return x
			}
		}
		return nil
	}
	for _, tc := range []struct {
		entity string
		got    any
		skip   []string
	}{
		{"Capability", b.Capability, []string{
			"aggregates.totalComponents", "aggregates.activeComponents", "aggregates.healthScore",
			"aggregates.totalDependencies", "aggregates.totalJobs", "aggregates.successfulJobs",
			"aggregates.failedJobs", "aggregates.totalRules", "aggregates.activeRules", "aggregates.lastDeployment",
		}},
		{"SoftwareComponent", componentByID(b, "ui-dashboard-alert-001"), []string{"health.lastCheck"}},
		{"ComponentDependency", find(func(x any) bool {
			d := x.(*catalog.Dependency)
			return d.SourceComponentID == "api-server-alert-001" && d.TargetComponentID == "database-alert-001"
		}, b.Dependencies), nil},
		{"ImplementationJob", find(func(x any) bool { return x.(*catalog.Job).JobID == "JOB-DEPLOY-456" }, b.Jobs), nil},
		{"ConfigurationRule", find(func(x any) bool { return x.(*catalog.Rule).RuleID == "rule-alert-severity-mapping" }, b.Rules), nil},
		{"PerformanceMetric", metric, []string{
			"timestamp", "interval", "alerts.resolved[0].triggeredAt", "alerts.resolved[0].resolvedAt",
		}},
	} {
		t.Run(tc.entity, func(t *testing.T) {
			want, ok := seed[tc.entity]
			if !ok {
				t.Fatalf("no seed example %s", tc.entity)
			}
			if tc.got == nil || reflect.ValueOf(tc.got).IsNil() {
				t.Fatal("sample entity missing")
			}
			js, err := json.Marshal(tc.got)
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(js, &got); err != nil {
				t.Fatal(err)
			}
			skip := map[string]bool{}
			for _, p := range tc.skip {
				skip[p] = true
			}
			for _, diff := range covers("", want, got, skip) {
				t.Error(diff)
			}
		})
	}

	// The seed's resolved alert keeps its offsets from the sample: triggered 5, resolved 2
	// minutes before.
	res := metric.Alerts.Resolved
	if len(res) != 1 || res[0].AlertID != "ALT-789" || res[0].TriggeredAt == nil || res[0].ResolvedAt == nil ||
		!res[0].TriggeredAt.Equal(newest.Add(-5*time.Minute)) || !res[0].ResolvedAt.Equal(newest.Add(-2*time.Minute)) {
		t.Errorf("resolved alerts = %+v", res)
	}
}

// covers returns the differences by which got fails to hold every value of want.
func covers(path string, want, got any, skip map[string]bool) []string {
	if skip[path] {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var diffs []string
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if skip[p] {
				continue
			}
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s: missing", p))
				continue
			}
			diffs = append(diffs, covers(p, w[k], gv, skip)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, covers(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], skip)...)
		}
		return diffs
	case string:
		if g, ok := got.(string); ok && g != w {
			wt, err1 := time.Parse(time.RFC3339Nano, w)
			gt, err2 := time.Parse(time.RFC3339Nano, g)
			if err1 == nil && err2 == nil && wt.Equal(gt) {
				return nil
			}
		}
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
	}
	return nil
}

func TestVocabularyCoverage(t *testing.T) {
	seen := map[string]map[string]bool{}
	add := func(kind, v string) {
		if seen[kind] == nil {
			seen[kind] = map[string]bool{}
		}
		seen[kind][v] = true
	}
	for _, b := range Catalogue(testNow) {
		add("capability status", string(b.Capability.Status))
		add("health status", string(b.Capability.Aggregates.HealthStatus))
		for _, c := range b.Components {
			add("component type", c.ComponentType)
		}
		for _, d := range b.Dependencies {
			add("dependency type", string(d.DependencyType))
		}
		for _, j := range b.Jobs {
			add("job type", string(j.JobType))
			add("job status", string(j.Status))
		}
		for _, r := range b.Rules {
			add("rule type", string(r.RuleType))
			add("rule status", string(r.Status))
		}
	}
	strs := func(vs ...any) []string {
		out := []string{}
		for _, v := range vs {
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	toStrings := func(v any) []string {
		rv := reflect.ValueOf(v)
		out := make([]string, rv.Len())
		for i := range out {
			out[i] = rv.Index(i).String()
		}
		return out
	}
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{"component type", strs("ui-dashboard", "api-server", "mcp-server", "database", "message-queue", "cache", "scheduler", "worker")},
		{"dependency type", toStrings(catalog.DependencyTypes)},
		{"job type", toStrings(catalog.JobTypes)},
		{"job status", toStrings(catalog.JobStatuses)},
		{"rule type", toStrings(catalog.RuleTypes)},
		{"health status", toStrings(catalog.HealthStatuses)},
		{"capability status", strs("planning", "development", "active", "deprecated")},
		{"rule status", strs("draft", "active", "inactive", "deprecated")},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			for _, w := range tc.want {
				if !seen[tc.kind][w] {
					t.Errorf("no %s %q in the sample", tc.kind, w)
				}
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	bundles := Catalogue(testNow)
	if len(bundles) < 6 {
		t.Fatalf("%d capabilities, want at least 6", len(bundles))
	}
	domains := map[string]bool{}
	for _, b := range bundles {
		c := b.Capability
		domains[c.BusinessDomain] = true
		if !c.Status.Valid() || !c.Priority.Valid() || c.Name == "" || c.BusinessDomain == "" {
			t.Errorf("%s: status %q priority %q name %q domain %q", c.CapabilityID, c.Status, c.Priority, c.Name, c.BusinessDomain)
		}
	}
	if len(domains) < 3 {
		t.Errorf("domains = %v, want at least 3", domains)
	}
	for _, tc := range []struct {
		id     string
		health catalog.HealthStatus
	}{
		{"CAP-ALERT-MGT-001", catalog.HealthHealthy},
		{"CAP-FRAUD-DET-001", catalog.HealthDegraded},
		{"CAP-CUST-ONB-001", catalog.HealthHealthy},
		{"CAP-PAY-PROC-001", catalog.HealthUnhealthy},
		{"CAP-INC-RESP-001", catalog.HealthHealthy},
		{"CAP-ID-VERIFY-001", catalog.HealthUnknown},
		{"CAP-RPT-ANL-001", catalog.HealthDegraded},
	} {
		t.Run(tc.id, func(t *testing.T) {
			b := bundleByID(t, bundles, tc.id)
			if got := b.Capability.Aggregates.HealthStatus; got != tc.health {
				t.Errorf("health = %q (score %.1f), want %q", got, b.Capability.Aggregates.HealthScore, tc.health)
			}
			if tc.health == catalog.HealthUnknown {
				for _, c := range b.Components {
					if c.Health != nil {
						t.Errorf("%s reports health", c.ComponentID)
					}
				}
			}
		})
	}
	// The unhealthy capability breaches SLAs.
	breaches := 0
	for _, c := range bundleByID(t, bundles, "CAP-PAY-PROC-001").Components {
		if c.Health != nil && c.Sla != nil && (c.Health.Availability < c.Sla.Availability || c.Health.ResponseTime > c.Sla.ResponseTime || c.Health.ErrorRate > c.Sla.ErrorRate) {
			breaches++
		}
	}
	if breaches == 0 {
		t.Error("CAP-PAY-PROC-001 has no SLA breach")
	}
}

func TestIDsAndOrders(t *testing.T) {
	bundles := Catalogue(testNow)
	check := func(kind, id string) {
		if !idPattern.MatchString(id) {
			t.Errorf("%s ID %q does not match %s", kind, id, idPattern)
		}
	}
	capabilities, components, jobs := map[string]bool{}, map[string]string{}, map[string]bool{}
	for _, b := range bundles {
		capID := b.Capability.CapabilityID
		check("capability", capID)
		if capabilities[capID] {
			t.Errorf("capability %s repeated", capID)
		}
		capabilities[capID] = true

		orders := map[int]bool{}
		for _, c := range b.Components {
			check("component", c.ComponentID)
			if other, dup := components[c.ComponentID]; dup {
				t.Errorf("component %s in %s and %s", c.ComponentID, other, capID)
			}
			components[c.ComponentID] = capID
			if c.Order < 1 || c.Order > 99 || orders[c.Order] {
				t.Errorf("%s: component %s order %d out of range or repeated", capID, c.ComponentID, c.Order)
			}
			orders[c.Order] = true
			if !c.Status.Valid() || c.Name == "" || c.ComponentType == "" {
				t.Errorf("%s: status %q name %q type %q", c.ComponentID, c.Status, c.Name, c.ComponentType)
			}
			if c.Health != nil && !c.Health.Status.Valid() {
				t.Errorf("%s: health status %q", c.ComponentID, c.Health.Status)
			}
		}

		for _, j := range b.Jobs {
			check("job", j.JobID)
			if jobs[j.JobID] {
				t.Errorf("job %s repeated", j.JobID)
			}
			jobs[j.JobID] = true
		}

		ruleOrders, ruleIDs := map[int]bool{}, map[string]bool{}
		for _, r := range b.Rules {
			check("rule", r.RuleID)
			if ruleIDs[r.RuleID] {
				t.Errorf("%s: rule %s repeated", capID, r.RuleID)
			}
			ruleIDs[r.RuleID] = true
			if r.Order < 1 || r.Order > 999 || ruleOrders[r.Order] {
				t.Errorf("%s: rule %s order %d out of range or repeated", capID, r.RuleID, r.Order)
			}
			ruleOrders[r.Order] = true
		}

		for _, m := range b.Metrics {
			check("metric component", m.ComponentID)
		}
	}
}

func TestDependencies(t *testing.T) {
	for _, b := range Catalogue(testNow) {
		t.Run(b.Capability.CapabilityID, func(t *testing.T) {
			pairs := map[string]bool{}
			for _, d := range b.Dependencies {
				key := d.SourceComponentID + " -> " + d.TargetComponentID
				src, dst := componentByID(b, d.SourceComponentID), componentByID(b, d.TargetComponentID)
				switch {
				case src == nil || dst == nil:
					t.Errorf("%s: an end is not a component of the capability", key)
				case d.SourceComponentID == d.TargetComponentID:
					t.Errorf("%s: self edge", key)
				case pairs[key]:
					t.Errorf("%s: repeated", key)
				case d.SourceComponentName != src.Name || d.TargetComponentName != dst.Name:
					t.Errorf("%s: names %q -> %q, want %q -> %q", key, d.SourceComponentName, d.TargetComponentName, src.Name, dst.Name)
				case !d.DependencyType.Valid() || !d.Criticality.Valid():
					t.Errorf("%s: type %q criticality %q", key, d.DependencyType, d.Criticality)
				}
				pairs[key] = true
			}
			g := catalog.AnalyzeGraph(b.Components, b.Dependencies, nil)
			if len(g.Cycles) != 0 || g.TopologicalOrder == nil {
				t.Errorf("dependency graph has cycles: %v", g.Cycles)
			}
			if len(g.Edges) != len(b.Dependencies) {
				t.Errorf("graph kept %d of %d dependencies", len(g.Edges), len(b.Dependencies))
			}
		})
	}
}

func TestJobs(t *testing.T) {
	for _, b := range Catalogue(testNow) {
		for _, j := range b.Jobs {
			t.Run(j.JobID, func(t *testing.T) {
				if !j.JobType.Valid() || !j.Status.Valid() || (j.Priority != "" && !j.Priority.Valid()) {
					t.Errorf("type %q status %q priority %q", j.JobType, j.Status, j.Priority)
				}
				if j.StartTime.IsZero() {
					t.Error("no start time")
				}
				if len(j.TargetComponents) == 0 {
					t.Error("no target components")
				}
				for _, tc := range j.TargetComponents {
					if componentByID(b, tc.ComponentID) == nil {
						t.Errorf("target %s is not a component of %s", tc.ComponentID, b.Capability.CapabilityID)
					}
				}
				switch j.Status {
				case catalog.JobPending, catalog.JobRunning:
					if j.EndTime != nil || j.Duration != nil {
						t.Errorf("unfinished job has end %v duration %v", j.EndTime, j.Duration)
					}
				default:
					if j.EndTime == nil || j.Duration == nil {
						t.Fatalf("finished job has end %v duration %v", j.EndTime, j.Duration)
					}
					if got := int(j.EndTime.Sub(j.StartTime.Time) / time.Second); got != *j.Duration {
						t.Errorf("duration %d, end - start = %d", *j.Duration, got)
					}
					if j.EndTime.After(testNow) {
						t.Errorf("finished job ends at %s, after now", j.EndTime)
					}
				}
				if j.Status == catalog.JobRunning && j.StartTime.After(testNow) {
					t.Errorf("running job starts at %s, after now", j.StartTime)
				}
			})
		}
	}
	alert := bundleByID(t, Catalogue(testNow), "CAP-ALERT-MGT-001")
	running := false
	for _, j := range alert.Jobs {
		if j.JobType == catalog.JobDeployment && j.Status == catalog.JobRunning && j.StartTime.Equal(testNow.Add(-20*time.Minute).Truncate(time.Microsecond)) {
			running = true
		}
	}
	if !running {
		t.Error("Alert Management has no deployment running since 20 minutes ago")
	}
}

func TestRules(t *testing.T) {
	for _, b := range Catalogue(testNow) {
		for _, r := range b.Rules {
			t.Run(r.RuleID, func(t *testing.T) {
				if err := catalog.ValidateRule(r); err != nil {
					t.Error(err)
				}
				if !r.RuleType.Valid() || !r.Status.Valid() || !r.Priority.Valid() || r.Name == "" {
					t.Errorf("type %q status %q priority %q name %q", r.RuleType, r.Status, r.Priority, r.Name)
				}
			})
		}
	}
}

func TestMetrics(t *testing.T) {
	now := testNow
	newest := now.Truncate(5 * time.Minute)
	for _, b := range Catalogue(now) {
		t.Run(b.Capability.CapabilityID, func(t *testing.T) {
			if len(b.Metrics) == 0 {
				t.Fatal("no metrics")
			}
			seen := map[string]bool{}
			perComponent := map[string]int{}
			for _, m := range b.Metrics {
				key := m.ComponentID + "@" + m.Timestamp.String()
				if seen[key] {
					t.Errorf("%s repeated", key)
				}
				seen[key] = true
				perComponent[m.ComponentID]++
				c := componentByID(b, m.ComponentID)
				switch {
				case c == nil:
					t.Errorf("%s: not a component of the capability", key)
				case m.ComponentName != c.Name:
					t.Errorf("%s: component name %q, want %q", key, m.ComponentName, c.Name)
				case m.Timestamp.After(now):
					t.Errorf("%s: after now", key)
				case !m.Timestamp.Truncate(5 * time.Minute).Equal(m.Timestamp.Time):
					t.Errorf("%s: not on a 5-minute boundary", key)
				case m.Timestamp.Before(now.Add(-6*time.Hour - 5*time.Minute)):
					t.Errorf("%s: more than 6 hours before now", key)
				case m.MetricType != catalog.MetricPerformance || m.Interval != "5m":
					t.Errorf("%s: type %q interval %q", key, m.MetricType, m.Interval)
				case m.Values == nil || m.Values.Availability == nil || m.Values.Latency == nil || m.Values.Throughput == nil || m.Values.Errors == nil || m.Values.Saturation == nil:
					t.Errorf("%s: values incomplete", key)
				case m.Alerts == nil || m.Alerts.Active == nil || m.Alerts.Resolved == nil || m.Trends == nil:
					t.Errorf("%s: alerts or trends missing", key)
				case len(m.Dimensions) != 3 || m.Dimensions["environment"] == nil || m.Dimensions["region"] == nil || m.Dimensions["availability_zone"] == nil:
					t.Errorf("%s: dimensions %v", key, m.Dimensions)
				}
				if m.Values != nil && m.Values.Errors != nil {
					e, tp := m.Values.Errors, m.Values.Throughput
					sum := 0.0
					for _, k := range []string{"4xx", "5xx", "timeout"} {
						n, ok := e.Types[k].(float64)
						if !ok || n < 0 {
							t.Errorf("%s: errors.types[%s] = %v", key, k, e.Types[k])
						}
						sum += n
					}
					if int(sum) != e.Count || e.Count != tp.Failed || tp.Successful+tp.Failed != tp.Requests {
						t.Errorf("%s: error counts inconsistent: %+v %+v", key, e, tp)
					}
				}
			}
			for id, n := range perComponent {
				if n != 72 {
					t.Errorf("%s has %d samples, want 72 (6 hours of 5 minutes)", id, n)
				}
				if !seen[id+"@"+catalog.NewTimestamp(newest).String()] {
					t.Errorf("%s has no sample at %s", id, newest)
				}
			}
		})
	}

	alert := bundleByID(t, Catalogue(now), "CAP-ALERT-MGT-001")
	lastHour := 0
	latencies := map[float64]bool{}
	for _, m := range alert.Metrics {
		if m.ComponentID == "api-server-alert-001" {
			latencies[m.Values.Latency.P95] = true
			if !m.Timestamp.Before(now.Add(-time.Hour)) {
				lastHour++
			}
		}
	}
	if lastHour < 12 {
		t.Errorf("api-server-alert-001 has %d samples in the last hour, want 12", lastHour)
	}
	if len(latencies) < 5 {
		t.Errorf("api-server-alert-001 latency p95 takes only %d values; the chart looks flat", len(latencies))
	}
	for _, c := range alert.Components {
		found := false
		for _, m := range alert.Metrics {
			found = found || m.ComponentID == c.ComponentID
		}
		if !found {
			t.Errorf("Alert Management component %s has no metrics", c.ComponentID)
		}
	}
}

func TestAggregatesEqualRecount(t *testing.T) {
	for _, b := range Catalogue(testNow) {
		t.Run(b.Capability.CapabilityID, func(t *testing.T) {
			a := b.Capability.Aggregates
			want := a
			catalog.Aggregate(&want, b.Components, len(b.Dependencies), b.Jobs, b.Rules)
			if !reflect.DeepEqual(a, want) {
				t.Errorf("aggregates = %+v, recount = %+v", a, want)
			}
			if a.TotalComponents != len(b.Components) || a.TotalDependencies != len(b.Dependencies) ||
				a.TotalJobs != len(b.Jobs) || a.TotalRules != len(b.Rules) {
				t.Errorf("counters %+v do not match the bundle", a)
			}
			id := b.Capability.CapabilityID
			stamped := true
			for _, c := range b.Components {
				stamped = stamped && c.CapabilityID == id
			}
			for _, d := range b.Dependencies {
				stamped = stamped && d.CapabilityID == id
			}
			for _, j := range b.Jobs {
				stamped = stamped && j.CapabilityID == id
			}
			for _, m := range b.Metrics {
				stamped = stamped && m.CapabilityID == id
			}
			for _, r := range b.Rules {
				stamped = stamped && r.CapabilityID == id
			}
			if !stamped {
				t.Error("an entity does not carry the capability ID")
			}
		})
	}
	alert := bundleByID(t, Catalogue(testNow), "CAP-ALERT-MGT-001").Capability.Aggregates
	if alert.TotalIncidents != 5 || alert.AverageDeploymentTime != "12.5m" || alert.MonthlyOperationalCost != 15000 || alert.UserCount != 500 {
		t.Errorf("Alert Management kept aggregates = %+v", alert)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, b := range Catalogue(testNow) {
		for _, v := range []any{b.Capability, b.Components, b.Dependencies, b.Jobs, b.Metrics[:3], b.Rules} {
			js, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("%s: %v", b.Capability.CapabilityID, err)
			}
			if strings.Contains(string(js), "0001-01-01") {
				t.Errorf("%s: zero timestamp in %s", b.Capability.CapabilityID, js)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, now := range []time.Time{testNow, time.Now(), time.Date(2025, 11, 22, 14, 30, 0, 0, time.UTC)} {
		a, b := Catalogue(now), Catalogue(now)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("two calls with now = %s differ", now)
		}
		zoned := Catalogue(now.In(time.FixedZone("UTC+5:30", 5*3600+1800)))
		if !reflect.DeepEqual(a, zoned) {
			t.Errorf("the same instant in another zone gives a different catalogue (now = %s)", now)
		}
	}
	// Fresh values: changing one result does not change the next.
	a := Catalogue(testNow)
	a[0].Components[0].Configuration.FeatureFlags["darkMode"] = false
	a[0].Rules[0].Actions[0].Parameters["mapping"].(map[string]any)["0-3"] = "none"
	b := Catalogue(testNow)
	if b[0].Components[0].Configuration.FeatureFlags["darkMode"] != true || b[0].Rules[0].Actions[0].Parameters["mapping"].(map[string]any)["0-3"] != "low" {
		t.Error("results share mutable state")
	}
}

// Every entity of the sample passes the validation the mutations apply, bounds included, so that
// a sample entity can be changed through the API.
func TestEveryEntityValidates(t *testing.T) {
	for _, b := range Catalogue(testNow) {
		t.Run(b.Capability.CapabilityID, func(t *testing.T) {
			check := func(what string, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("%s: %v", what, err)
				}
			}
			check("capability", catalog.ValidateCapability(b.Capability))
			for _, c := range b.Components {
				check("component "+c.ComponentID, catalog.ValidateComponent(c))
			}
			for i, d := range b.Dependencies {
				others := append(append([]*catalog.Dependency{}, b.Dependencies[:i]...), b.Dependencies[i+1:]...)
				check("dependency "+d.ID(), catalog.ValidateDependency(d, b.Components, others))
			}
			for _, j := range b.Jobs {
				check("job "+j.JobID, catalog.ValidateJob(j, b.Components))
			}
			for _, m := range b.Metrics {
				c := *m
				check("metric "+m.ComponentID+"@"+m.Timestamp.String(), catalog.ValidateMetric(&c, testNow))
			}
			for _, r := range b.Rules {
				check("rule "+r.RuleID, catalog.ValidateRuleFields(r))
			}
		})
	}
}
