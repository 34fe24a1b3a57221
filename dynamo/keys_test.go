package dynamo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
		{"tokenPK", tokenPK("tok-1"), "TOKEN#tok-1"},
		{"tokenSK", tokenSK, "TOKEN"},
		{"capabilityVersionSK", capabilityVersionSK(3), "VERSION#CAPABILITY#v000003"},
		{"ruleVersionSK", ruleVersionSK("rule-1", 12), "VERSION#RULE#rule-1#v000012"},
		{"changeSK", changeSK(start, 12345, 2), "CHANGE#2025-11-22T10:00:00.000000Z#0000000000012345#002"},
		{"changesPK", changesPK(at), "CHANGES#2025-11-22"},
		{"changeGSI1SK", changeGSI1SK(at, "CAP-1", changeSK(start, 7, 0)), "2025-11-22T14:30:00.000000Z#CAP-1#2025-11-22T10:00:00.000000Z#0000000000000007#000"},
		{"changeGSI1From", changeGSI1From(at), "2025-11-22T14:30:00.000000Z"},
		{"componentCardSK status", componentCardSK("api-1", compCardStatus), "INDEX#COMP#api-1#STATUS"},
		{"componentCardSK term", componentCardSK("api-1", compCardTerm+"pay"), "INDEX#COMP#api-1#T#pay"},
		{"componentStatusPK", componentStatusPK(catalog.ComponentActive), "CSTATUS#active"},
		{"componentHealthPK", componentHealthPK(catalog.HealthUnknown), "CHEALTH#unknown"},
		{"componentTeamPK", componentTeamPK("equipe paiements"), "CTEAM#equipe paiements"},
		{"componentTermPK", componentTermPK("ale"), "CTERM#ale"},
		{"activeJobSK", activeJobSK("JOB-DEPLOY-456"), "INDEX#ACTIVEJOB#JOB-DEPLOY-456"},
		{"activeJobsPK", activeJobsPK, "ACTIVEJOBS"},
		{"activeJobGSI1SK", activeJobGSI1SK(start, "CAP-1", "JOB-1"), "2025-11-22T10:00:00.000000Z#CAP-1#JOB-1"},
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
	t.Run("change", func(t *testing.T) {
		inc, seq, n, err := parseChangeSK("CHANGE#2025-11-22T10:00:00.000000Z#9007199254740991#003")
		if err != nil || seq != 1<<53-1 || n != 3 || !inc.Equal(time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)) {
			t.Errorf("parseChangeSK = %v, %d, %d, %v", inc, seq, n, err)
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
		{"change without number", func() error {
			_, _, _, err := parseChangeSK("CHANGE#2025-11-22T10:00:00.000000Z#0000000000000001")
			return err
		}},
		{"change short seq", func() error { _, _, _, err := parseChangeSK("CHANGE#2025-11-22T10:00:00.000000Z#1#000"); return err }},
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
	// METRIC# < RULE# < VERSION#.
	now := time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)
	keys := []string{
		componentSK(99, "zz"), dependencySK("a", "b"), domainIndexSK, healthIndexSK, jobSK(now, "j"),
		metadataSK, metricSK("a", catalog.MetricPerformance, now), ruleSK(1, "r"), capabilityVersionSK(1),
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
	for _, k := range []string{domainIndexSK, jobSK(now, "j"), metadataSK, changeSK(now, 1, 0)} {
		if k >= lo && k <= hi {
			t.Errorf("%q inside merged range [%q, %q]", k, lo, hi)
		}
	}
}

// A delete removes every range of rangesBesideHistory: never a change record or a capability
// version (they outlive the capability), always everything else.
func TestRangesBesideHistoryKeepChangesAndVersions(t *testing.T) {
	now := time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)
	in := func(k string) bool {
		for _, r := range rangesBesideHistory() {
			if k >= r[0] && k <= r[1] {
				return true
			}
		}
		return false
	}
	for _, k := range []string{changeSK(now, 1, 0), changeSK(now, 1<<53-1, 999), capabilityVersionSK(1)} {
		if in(k) {
			t.Errorf("a delete removes %q", k)
		}
	}
	for _, k := range []string{componentSK(1, "a"), dependencySK("a", "b"), domainIndexSK, jobSK(now, "j"), metadataSK,
		metricSK("a", catalog.MetricPerformance, now), ruleSK(1, "r"), ruleVersionSK("r", 1), tokenPK("old")} {
		if !in(k) {
			t.Errorf("a delete keeps %q", k)
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

// Every key builder, fed the longest input that validation lets through (and, for names, any
// input at all), builds a key within DynamoDB's limits, and the parsers still read it back.
func TestKeyLimits(t *testing.T) {
	id := "A" + strings.Repeat("z", 127) // the longest valid ID, domain and component type
	if err := ValidateID("id", id); err != nil {
		t.Fatalf("ValidateID(%q) = %v", id, err)
	}
	last := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	names := map[string]string{
		"10,000 characters":   strings.Repeat("n", 10_000),
		"10,000 words":        strings.Repeat("ab ", 10_000),
		"multi-byte UTF-8":    strings.Repeat("Zürich 日本語 🙂 ", 2_000),
		"200 characters":      strings.Repeat("x", 200),
		"200 four-byte runes": strings.Repeat("🙂", 200),
	}
	type row struct {
		name  string
		key   string
		limit int
		parse func() error // reads key back, when a parser exists
	}
	rows := []row{
		{"capabilityPK", capabilityPK(id), maxPartitionKeyBytes, func() error {
			got, err := parseCapabilityPK(capabilityPK(id))
			return roundTrip(got, id, err)
		}},
		{"metadataSK", metadataSK, maxSortKeyBytes, nil},
		{"capabilitiesPK", capabilitiesPK, maxPartitionKeyBytes, nil},
		{"domainIndexSK", domainIndexSK, maxSortKeyBytes, nil},
		{"healthIndexSK", healthIndexSK, maxSortKeyBytes, nil},
		{"domainPK", domainPK(id), maxPartitionKeyBytes, nil},
		{"healthGSI1SK", healthGSI1SK(1e12, id), maxSortKeyBytes, nil},
		{"componentSK", componentSK(catalog.MaxOrder, id), maxSortKeyBytes, func() error {
			order, got, err := parseComponentSK(componentSK(catalog.MaxOrder, id))
			return roundTrip(fmt.Sprint(order, got), fmt.Sprint(catalog.MaxOrder, id), err)
		}},
		{"componentTypePK", componentTypePK(id), maxPartitionKeyBytes, nil},
		{"componentGSI1SK", componentGSI1SK(id, id), maxSortKeyBytes, nil},
		{"dependencySK", dependencySK(id, id), maxSortKeyBytes, func() error {
			s, d, err := parseDependencySK(dependencySK(id, id))
			return roundTrip(s+">"+d, id+">"+id, err)
		}},
		{"dependenciesPK", dependenciesPK(id), maxPartitionKeyBytes, nil},
		{"jobSK", jobSK(last, id), maxSortKeyBytes, func() error {
			at, got, err := parseJobSK(jobSK(last, id))
			return roundTrip(keyTime(at)+got, keyTime(last)+id, err)
		}},
		{"jobPK", jobPK(id), maxPartitionKeyBytes, nil},
		{"job GSI1SK", keyTime(last), maxSortKeyBytes, nil},
		{"metricsPK", metricsPK(id), maxPartitionKeyBytes, nil},
		{"metric GSI1SK", keyTime(last), maxSortKeyBytes, nil},
		{"metricComponentPrefix", metricComponentPrefix(id), maxSortKeyBytes, nil},
		{"ruleSK", ruleSK(999, id), maxSortKeyBytes, func() error {
			order, got, err := parseRuleSK(ruleSK(999, id))
			return roundTrip(fmt.Sprint(order, got), fmt.Sprint(999, id), err)
		}},
		{"rulesPK", rulesPK(id), maxPartitionKeyBytes, nil},
		{"tokenPK", tokenPK(id), maxPartitionKeyBytes, nil},
		{"tokenSK", tokenSK, maxSortKeyBytes, nil},
		{"capabilityVersionSK", capabilityVersionSK(999_999), maxSortKeyBytes, func() error {
			n, err := parseVersionSK(capabilityVersionSK(999_999))
			return roundTrip(fmt.Sprint(n), "999999", err)
		}},
		{"capabilityVersionPrefix", capabilityVersionPrefix(), maxSortKeyBytes, nil},
		{"ruleVersionSK", ruleVersionSK(id, 999_999), maxSortKeyBytes, func() error {
			n, err := parseVersionSK(ruleVersionSK(id, 999_999))
			return roundTrip(fmt.Sprint(n), "999999", err)
		}},
		{"ruleVersionPrefix", ruleVersionPrefix(id), maxSortKeyBytes, nil},
	}
	for _, s := range catalog.HealthStatuses {
		rows = append(rows, row{"healthPK " + string(s), healthPK(s), maxPartitionKeyBytes, nil})
	}
	for _, c := range catalog.Criticalities {
		rows = append(rows, row{"dependencyGSI1SK " + string(c), dependencyGSI1SK(c, id, id), maxSortKeyBytes, nil})
	}
	for _, mt := range catalog.MetricTypes {
		rows = append(rows, row{"metricSK " + string(mt), metricSK(id, mt, last), maxSortKeyBytes, func() error {
			c, gotType, at, err := parseMetricSK(metricSK(id, mt, last))
			return roundTrip(c+string(gotType)+keyTime(at), id+string(mt)+keyTime(last), err)
		}})
		rows = append(rows, row{"metricTypePrefix " + string(mt), metricTypePrefix(id, mt), maxSortKeyBytes, nil})
	}
	for _, rt := range catalog.RuleTypes {
		rows = append(rows, row{"ruleGSI1SK " + string(rt), ruleGSI1SK(rt, 999, id), maxSortKeyBytes, nil})
	}
	for label, name := range names {
		for _, p := range catalog.Priorities {
			rows = append(rows,
				row{"capabilityGSI1SK " + label + " " + string(p), capabilityGSI1SK(id, p, name), maxSortKeyBytes, nil},
				row{"domainGSI1SK " + label + " " + string(p), domainGSI1SK(p, name), maxSortKeyBytes, nil})
		}
	}
	for _, tt := range rows {
		t.Run(tt.name, func(t *testing.T) {
			if n := len(tt.key); n > tt.limit {
				t.Errorf("%s = %d bytes, over DynamoDB's limit of %d", tt.name, n, tt.limit)
			}
			if tt.parse != nil {
				if err := tt.parse(); err != nil {
					t.Errorf("%s does not read back: %v", tt.name, err)
				}
			}
		})
	}
}

// roundTrip returns an error unless a parser returned want without error.
func roundTrip(got, want string, err error) error {
	if err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("parsed %q, want %q", got, want)
	}
	return nil
}

// A slug too long for the index keeps its head and ends with a hash of the whole slug: bounded,
// deterministic, ordered like the names as far as the head goes, and distinct for names that
// differ only past it.
func TestLongSlug(t *testing.T) {
	head := strings.Repeat("word ", 100)
	a, b := Slug(head+"alpha"), Slug(head+"beta")
	for _, s := range []string{a, b} {
		if len(s) != maxSlugBytes {
			t.Errorf("len(Slug(long name)) = %d, want %d", len(s), maxSlugBytes)
		}
		if want := Slug(head)[:150]; !strings.HasPrefix(s, want) {
			t.Errorf("Slug(long name) = %q, want it to begin with %q", s, want)
		}
	}
	if a == b {
		t.Errorf("Slug of two names differing past %d bytes = %q for both", maxSlugBytes, a)
	}
	if again := Slug(head + "alpha"); again != a {
		t.Errorf("Slug is not deterministic: %q then %q", a, again)
	}
	if exact := strings.Repeat("x", maxSlugBytes); Slug(exact) != exact {
		t.Errorf("Slug(%d x's) = %q, want it unchanged", maxSlugBytes, Slug(exact))
	}
	if Slug(strings.Repeat("a", 400)) >= Slug(strings.Repeat("b", 400)) {
		t.Errorf("long slugs lost the order of their names")
	}
}

// Whatever reaches an item, a key over DynamoDB's limits is refused before any request, as a
// *catalog.ValidationError (BAD_USER_INPUT), never sent to DynamoDB to come back as a
// ValidationException.
func TestKeySizeGuard(t *testing.T) {
	at := func(n int) string { return strings.Repeat("k", n) }
	tests := []struct {
		name             string
		pk, sk, gpk, gsk string
		ok               bool
	}{
		{"every key at its limit", at(maxPartitionKeyBytes), at(maxSortKeyBytes), at(maxPartitionKeyBytes), at(maxSortKeyBytes), true},
		{"no GSI1 keys", "CAPABILITY#C", "TOKEN", "", "", true},
		{"PK over", at(maxPartitionKeyBytes + 1), "s", "", "", false},
		{"SK over", "p", at(maxSortKeyBytes + 1), "", "", false},
		{"GSI1PK over", "p", "s", at(maxPartitionKeyBytes + 1), "g", false},
		{"GSI1SK over", "p", "s", "g", at(maxSortKeyBytes + 1), false},
		{"GSI1SK of a 10,000-character name in a forged domain", "p", "s", capabilitiesPK, capabilityGSI1SK(at(2000), catalog.PriorityLow, at(10_000)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it := &item{PK: tt.pk, SK: tt.sk, GSI1PK: tt.gpk, GSI1SK: tt.gsk, EntityType: entityCapability, Data: map[string]types.AttributeValue{}}
			_, err := it.av()
			var invalid *catalog.ValidationError
			if tt.ok && err != nil || !tt.ok && !errors.As(err, &invalid) {
				t.Errorf("item{%d, %d, %d, %d bytes}.av() = %v, want ok = %v or a *catalog.ValidationError", len(tt.pk), len(tt.sk), len(tt.gpk), len(tt.gsk), err, tt.ok)
			}
		})
	}
}

// A component's word prefixes: 1 to 3 runes of each folded word, without repeats; a search word
// reads the partition of its first 3 runes.
func TestWordPrefixes(t *testing.T) {
	got := wordPrefixes(catalog.Words("Gâteau-API gateway 7"))
	want := []string{"g", "ga", "gat", "a", "ap", "api", "7"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("wordPrefixes = %q, want %q", got, want)
	}
	for in, want := range map[string]string{"é": "é", "payments": "pay", "ab": "ab"} {
		if got := termPrefix(in); got != want {
			t.Errorf("termPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// nameSegments covers every name key once: consecutive, open at both ends, and each name key
// falls in exactly one segment as a count's key conditions select them.
func TestNameSegments(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{
		{0, `[["" ""]]`}, {1, `[["" ""]]`}, {2, `[["" "m"] ["m" ""]]`}, {4, `[["" "e"] ["e" "m"] ["m" "s"] ["s" ""]]`},
		{8, `[["" "c"] ["c" "e"] ["e" "i"] ["i" "m"] ["m" "p"] ["p" "s"] ["s" "u"] ["u" ""]]`}, {99, `[["" "c"] ["c" "e"] ["e" "i"] ["i" "m"] ["m" "p"] ["p" "s"] ["s" "u"] ["u" ""]]`},
	} {
		if got := fmt.Sprintf("%q", nameSegments(tt.n)); got != tt.want {
			t.Errorf("nameSegments(%d) = %s, want %s", tt.n, got, tt.want)
		}
	}
	in := func(key string, seg [2]string) bool {
		return (seg[0] == "" || key >= seg[0]) && (seg[1] == "" || key < seg[1])
	}
	for _, name := range []string{"alert", "c", "cable", "m", "zulu", "0 day", "élan", "ülm"} {
		key := nameKey(catalog.Fold(name), "CAP-X")
		for n := 1; n <= maxNameSegments; n++ {
			hits := 0
			for _, seg := range nameSegments(n) {
				if in(key, seg) {
					hits++
				}
			}
			if hits != 1 {
				t.Errorf("%q in %d of nameSegments(%d)", key, hits, n)
			}
		}
	}
}
