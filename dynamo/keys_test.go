package dynamo

import (
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

func TestKeyBuilders(t *testing.T) {
	start := time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)
	at := time.Date(2025, 11, 22, 14, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"capabilityPK", capabilityPK("CAP-ALERT-MGT-001"), "CAPABILITY#CAP-ALERT-MGT-001"},
		{"metadataSK", metadataSK, "METADATA"},
		{"capabilitiesPK", capabilitiesPK, "CAPABILITIES"},
		{"capabilityGSI1SK", capabilityGSI1SK("operations", catalog.PriorityCritical, "Alert Management"), "operations#01#alert-management"},
		{"domainIndexSK", domainIndexSK, "INDEX#DOMAIN"},
		{"domainPK", domainPK("operations"), "DOMAIN#operations"},
		{"domainGSI1SK", domainGSI1SK(catalog.PriorityLow, "Fraud & Risk"), "04#fraud-risk"},
		{"healthIndexSK", healthIndexSK, "INDEX#HEALTH"},
		{"healthPK", healthPK(catalog.HealthDegraded), "HEALTH#degraded"},
		{"healthGSI1SK", healthGSI1SK(98.5, "CAP-1"), "098#CAP-1"},
		{"healthGSI1SK floor", healthGSI1SK(7.99, "CAP-1"), "007#CAP-1"},
		{"healthGSI1SK hundred", healthGSI1SK(100, "CAP-1"), "100#CAP-1"},
		{"componentSK", componentSK(1, "ui-dashboard-alert-001"), "COMPONENT#01#ui-dashboard-alert-001"},
		{"componentTypePK", componentTypePK("ui-dashboard"), "COMPONENT#ui-dashboard"},
		{"componentGSI1SK", componentGSI1SK("CAP-ALERT-MGT-001", "ui-dashboard-alert-001"), "CAP-ALERT-MGT-001#ui-dashboard-alert-001"},
		{"dependencySK", dependencySK("api-server-alert-001", "database-alert-001"), "DEPENDENCY#api-server-alert-001#database-alert-001"},
		{"dependenciesPK", dependenciesPK("CAP-ALERT-MGT-001"), "CAPABILITY#CAP-ALERT-MGT-001#DEPENDENCIES"},
		{"dependencyGSI1SK", dependencyGSI1SK(catalog.CriticalityCritical, "api-server-alert-001", "database-alert-001"), "01#api-server-alert-001#database-alert-001"},
		{"jobSK", jobSK(start, "JOB-DEPLOY-456"), "JOB#2025-11-22T10:00:00.000000Z#JOB-DEPLOY-456"},
		{"jobPK", jobPK("JOB-DEPLOY-456"), "JOB#JOB-DEPLOY-456"},
		{"job GSI1SK", keyTime(start), "2025-11-22T10:00:00.000000Z"},
		{"metricSK", metricSK("api-server-alert-001", catalog.MetricPerformance, at), "METRIC#api-server-alert-001#performance#2025-11-22T14:30:00.000000Z"},
		{"metricsPK", metricsPK("api-server-alert-001"), "METRICS#api-server-alert-001"},
		{"metricComponentPrefix", metricComponentPrefix("api-1"), "METRIC#api-1#"},
		{"metricTypePrefix", metricTypePrefix("api-1", catalog.MetricResource), "METRIC#api-1#resource#"},
		{"ruleSK", ruleSK(1, "rule-alert-severity-mapping"), "RULE#001#rule-alert-severity-mapping"},
		{"rulesPK", rulesPK("CAP-ALERT-MGT-001"), "CAPABILITY#CAP-ALERT-MGT-001#RULES"},
		{"ruleGSI1SK", ruleGSI1SK(catalog.RuleBusiness, 1, "rule-alert-severity-mapping"), "business#001#rule-alert-severity-mapping"},
		{"tokenSK", tokenSK("tok-1"), "TOKEN#tok-1"},
		{"capabilityVersionSK", capabilityVersionSK(3), "VERSION#CAPABILITY#v000003"},
		{"ruleVersionSK", ruleVersionSK("rule-1", 12), "VERSION#RULE#rule-1#v000012"},
		{"keyTime microseconds", keyTime(time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))), "2025-01-02T02:04:05.123456Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
			}
		})
	}
}

func TestKeyParsers(t *testing.T) {
	t.Run("component", func(t *testing.T) {
		order, id, err := parseComponentSK("COMPONENT#04#database-alert-001")
		if err != nil || order != 4 || id != "database-alert-001" {
			t.Errorf("parseComponentSK = %d, %q, %v; want 4, database-alert-001, nil", order, id, err)
		}
	})
	t.Run("dependency", func(t *testing.T) {
		s, d, err := parseDependencySK("DEPENDENCY#api-server-alert-001#database-alert-001")
		if err != nil || s != "api-server-alert-001" || d != "database-alert-001" {
			t.Errorf("parseDependencySK = %q, %q, %v", s, d, err)
		}
	})
	t.Run("job", func(t *testing.T) {
		at, id, err := parseJobSK("JOB#2025-11-22T10:00:00.000000Z#JOB-DEPLOY-456")
		if err != nil || id != "JOB-DEPLOY-456" || !at.Equal(time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)) {
			t.Errorf("parseJobSK = %v, %q, %v", at, id, err)
		}
	})
	t.Run("metric", func(t *testing.T) {
		c, mt, at, err := parseMetricSK("METRIC#api-server-alert-001#performance#2025-11-22T14:30:00.000000Z")
		if err != nil || c != "api-server-alert-001" || mt != catalog.MetricPerformance || at.Minute() != 30 {
			t.Errorf("parseMetricSK = %q, %q, %v, %v", c, mt, at, err)
		}
	})
	t.Run("rule", func(t *testing.T) {
		order, id, err := parseRuleSK("RULE#001#rule-alert-severity-mapping")
		if err != nil || order != 1 || id != "rule-alert-severity-mapping" {
			t.Errorf("parseRuleSK = %d, %q, %v", order, id, err)
		}
	})
	t.Run("version", func(t *testing.T) {
		for sk, want := range map[string]int{"VERSION#CAPABILITY#v000003": 3, "VERSION#RULE#rule-1#v000012": 12} {
			if n, err := parseVersionSK(sk); err != nil || n != want {
				t.Errorf("parseVersionSK(%q) = %d, %v; want %d", sk, n, err, want)
			}
		}
	})
	t.Run("capability PK", func(t *testing.T) {
		if id, err := parseCapabilityPK("CAPABILITY#CAP-1"); err != nil || id != "CAP-1" {
			t.Errorf("parseCapabilityPK = %q, %v", id, err)
		}
	})
	bad := []struct {
		name  string
		parse func() error
	}{
		{"component without order", func() error { _, _, err := parseComponentSK("COMPONENT#x"); return err }},
		{"component forged id", func() error { _, _, err := parseComponentSK("COMPONENT#01#a#b"); return err }},
		{"dependency one end", func() error { _, _, err := parseDependencySK("DEPENDENCY#a"); return err }},
		{"job bad time", func() error { _, _, err := parseJobSK("JOB#2025-11-22T10:00:00Z#J1"); return err }},
		{"metric unknown type", func() error { _, _, _, err := parseMetricSK("METRIC#a#speed#2025-11-22T14:30:00.000000Z"); return err }},
		{"rule two digits", func() error { _, _, err := parseRuleSK("RULE#01#r"); return err }},
		{"version short", func() error { _, err := parseVersionSK("VERSION#CAPABILITY#v3"); return err }},
		{"capability PK other", func() error { _, err := parseCapabilityPK("COMPONENT#x"); return err }},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.parse(); err == nil {
				t.Errorf("%s: parse succeeded, want error", tt.name)
			}
		})
	}
}

func TestValidateID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"CAP-ALERT-MGT-001", true},
		{"api-server-alert-001", true},
		{"a.b_c:d-e", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{"a#b", false},
		{"-leading", false},
		{"has space", false},
		{"x/y", false},
		{"ünïcode", false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			err := ValidateID("id", tt.id)
			if (err == nil) != tt.ok {
				t.Errorf("ValidateID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
			}
		})
	}
}

func TestSortOrderOfSegments(t *testing.T) {
	// The planner relies on this order: COMPONENT# < DEPENDENCY# < INDEX# < JOB# < METADATA <
	// METRIC# < RULE# < TOKEN# < VERSION#.
	now := time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)
	keys := []string{
		componentSK(99, "zz"), dependencySK("a", "b"), domainIndexSK, healthIndexSK, jobSK(now, "j"),
		metadataSK, metricSK("a", catalog.MetricPerformance, now), ruleSK(1, "r"), tokenSK("t"), capabilityVersionSK(1),
	}
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Errorf("%q sorts after %q", keys[i-1], keys[i])
		}
	}
	lo, hi, _ := (SegComponents | SegDependencies).bounds()
	for _, k := range []string{componentSK(1, "a"), dependencySK("z", "y")} {
		if k < lo || k > hi {
			t.Errorf("%q outside merged range [%q, %q]", k, lo, hi)
		}
	}
	for _, k := range []string{domainIndexSK, jobSK(now, "j"), metadataSK} {
		if k >= lo && k <= hi {
			t.Errorf("%q inside merged range [%q, %q]", k, lo, hi)
		}
	}
}

func TestPlanRanges(t *testing.T) {
	tests := []struct {
		want Segment
		got  []Segment
	}{
		{SegComponents, []Segment{SegComponents}},
		{SegDependencies, []Segment{SegDependencies}},
		{SegComponents | SegDependencies, []Segment{SegComponents | SegDependencies}},
		{SegRules, []Segment{SegRules}},
		{SegComponents | SegRules, []Segment{SegComponents, SegRules}},
		{SegComponents | SegDependencies | SegRules, []Segment{SegComponents | SegDependencies, SegRules}},
		{0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.want.String(), func(t *testing.T) {
			got := PlanRanges(tt.want)
			if len(got) != len(tt.got) {
				t.Fatalf("PlanRanges(%v) = %v, want %v", tt.want, got, tt.got)
			}
			for i := range got {
				if got[i] != tt.got[i] {
					t.Errorf("PlanRanges(%v) = %v, want %v", tt.want, got, tt.got)
				}
			}
		})
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Alert Management": "alert-management", "Reporting & Analytics": "reporting-analytics", "  X  ": "x", "API v2.0": "api-v2-0"} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
