package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// specMapping is the severity mapping of the spec's example rule.
func specMapping() map[string]any {
	return map[string]any{"0-3": "low", "4-6": "medium", "7-9": "high", "10+": "critical"}
}

// specRule is the spec's example rule.
func specRule() *Rule {
	return &Rule{
		RuleID: "RULE-001", Name: "alert severity", RuleType: RuleOperational, Order: 1, Status: RuleActive,
		Conditions: []Condition{
			{Field: "source", Operator: "in", Values: []any{"production", "staging"}, Weight: 2},
			{Field: "error_count", Operator: ">=", Value: 100, Weight: 3},
			{Field: "customer_impact", Operator: "equals", Value: "high", Weight: 5},
		},
		Actions: []Action{
			{Type: "set_severity", Parameters: map[string]any{"calculation": "sum_weights", "mapping": specMapping()}},
			{Type: "notify", Parameters: map[string]any{"channels": []any{"slack", "pagerduty"}, "template": "alert-notification-v2"}},
		},
	}
}

const specRuleJSON = `{
  "ruleId": "RULE-001", "name": "alert severity", "ruleType": "operational", "order": 1, "status": "active",
  "conditions": [
    {"field": "source", "operator": "in", "values": ["production", "staging"], "weight": 2},
    {"field": "error_count", "operator": ">=", "value": 100, "weight": 3},
    {"field": "customer_impact", "operator": "equals", "value": "high", "weight": 5}
  ],
  "actions": [
    {"type": "set_severity", "parameters": {"calculation": "sum_weights", "mapping": {"0-3": "low", "4-6": "medium", "7-9": "high", "10+": "critical"}}},
    {"type": "notify", "parameters": {"channels": ["slack", "pagerduty"], "template": "alert-notification-v2"}}
  ]
}`

func deref[T ~string](s *T) string {
	if s == nil {
		return "<nil>"
	}
	return string(*s)
}

func TestEvaluateRuleSpecExamples(t *testing.T) {
	var fromJSON Rule
	if err := json.Unmarshal([]byte(specRuleJSON), &fromJSON); err != nil {
		t.Fatal(err)
	}
	decodeInput := func(s string) map[string]any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name         string
		rule         *Rule
		input        map[string]any
		wantMatched  bool
		wantScore    int
		wantSeverity string
		wantHeld     []bool
	}{
		{
			name:        "critical",
			rule:        specRule(),
			input:       map[string]any{"source": "production", "error_count": 150, "customer_impact": "high"},
			wantMatched: true, wantScore: 10, wantSeverity: "critical", wantHeld: []bool{true, true, true},
		},
		{
			name:        "low",
			rule:        specRule(),
			input:       map[string]any{"source": "dev", "error_count": 5},
			wantMatched: false, wantScore: 0, wantSeverity: "low", wantHeld: []bool{false, false, false},
		},
		{
			name:        "medium",
			rule:        specRule(),
			input:       map[string]any{"source": "staging", "error_count": "100"},
			wantMatched: true, wantScore: 5, wantSeverity: "medium", wantHeld: []bool{true, true, false},
		},
		{
			name:        "critical from JSON",
			rule:        &fromJSON,
			input:       decodeInput(`{"source":"production","error_count":150,"customer_impact":"high"}`),
			wantMatched: true, wantScore: 10, wantSeverity: "critical", wantHeld: []bool{true, true, true},
		},
		{
			name:        "low from JSON",
			rule:        &fromJSON,
			input:       decodeInput(`{"source":"dev","error_count":5}`),
			wantMatched: false, wantScore: 0, wantSeverity: "low", wantHeld: []bool{false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := ValidateRule(tt.rule); err != nil {
				t.Fatalf("ValidateRule(%s) = %v, want nil", tt.name, err)
			}
			got := EvaluateRule(tt.rule, tt.input)
			if got.Error != nil {
				t.Fatalf("EvaluateRule(%s, %v).Error = %q, want nil", tt.name, tt.input, *got.Error)
			}
			if got.Matched != tt.wantMatched || got.Score != tt.wantScore || deref(got.Severity) != tt.wantSeverity {
				t.Errorf("EvaluateRule(%s, %v) = matched %v, score %d, severity %s; want %v, %d, %s",
					tt.name, tt.input, got.Matched, got.Score, deref(got.Severity), tt.wantMatched, tt.wantScore, tt.wantSeverity)
			}
			var held []bool
			for _, c := range got.Conditions {
				held = append(held, c.Held)
			}
			if fmt.Sprint(held) != fmt.Sprint(tt.wantHeld) {
				t.Errorf("EvaluateRule(%s, %v) held = %v, want %v", tt.name, tt.input, held, tt.wantHeld)
			}
			if len(got.Actions) != 2 {
				t.Fatalf("EvaluateRule(%s, %v).Actions = %v, want 2 actions", tt.name, tt.input, got.Actions)
			}
			if sev := got.Actions[0]["severity"]; sev != tt.wantSeverity || got.Actions[0]["type"] != "set_severity" {
				t.Errorf("EvaluateRule(%s, %v).Actions[0] = %v, want set_severity with severity %s", tt.name, tt.input, got.Actions[0], tt.wantSeverity)
			}
			if _, has := got.Actions[1]["severity"]; has || got.Actions[1]["type"] != "notify" {
				t.Errorf("EvaluateRule(%s, %v).Actions[1] = %v, want notify without severity", tt.name, tt.input, got.Actions[1])
			}
			params, _ := got.Actions[1]["parameters"].(map[string]any)
			if params["template"] != "alert-notification-v2" {
				t.Errorf("EvaluateRule(%s, %v).Actions[1].parameters = %v, want the notify parameters", tt.name, tt.input, params)
			}
			if _, has := tt.rule.Actions[0].Parameters["severity"]; has {
				t.Errorf("EvaluateRule(%s, %v) wrote severity into the rule's parameters", tt.name, tt.input)
			}
		})
	}
}

// ruleInput exercises every value type a decoded input may hold.
func ruleInput() map[string]any {
	return map[string]any{
		"source":      "production",
		"error_count": 150,
		"latency":     12.5,
		"count64":     int64(7),
		"count32":     int32(7),
		"jn":          json.Number("42"),
		"numstr":      "150",
		"flag":        true,
		"flagstr":     "true",
		"tags":        []any{"a", "b", float64(3)},
		"strtags":     []string{"x", "y"},
		"nested":      map[string]any{"level": map[string]any{"deep": "x"}},
		"items":       []any{map[string]any{"name": "first"}, map[string]any{"name": "second"}},
		"nullval":     nil,
		"empty":       "",
		"meta":        map[string]any{"k": 1},
		"typed":       map[string]string{"region": "eu-west-1"},
	}
}

func TestEvaluateRuleOperators(t *testing.T) {
	c := func(field, op string, value any) Condition {
		return Condition{Field: field, Operator: op, Value: value, Weight: 1}
	}
	cl := func(field, op string, values ...any) Condition {
		return Condition{Field: field, Operator: op, Values: values, Weight: 1}
	}
	tests := []struct {
		name string
		cond Condition
		want bool
	}{
		// equals and aliases
		{"equals", c("source", "equals", "production"), true},
		{"equals mismatch", c("source", "equals", "staging"), false},
		{"equals is case-sensitive", c("source", "equals", "Production"), false},
		{"= alias", c("source", "=", "production"), true},
		{"== alias", c("source", "==", "production"), true},
		{"eq alias", c("source", "eq", "production"), true},
		{"equal alias", c("source", "equal", "production"), true},
		{"operator case and spaces", c("source", "  EQUALS ", "production"), true},
		{"int equals float64", c("error_count", "equals", float64(150)), true},
		{"int equals numeric string", c("error_count", "equals", "150"), true},
		{"int equals json.Number", c("error_count", "equals", json.Number("150")), true},
		{"numeric string equals int", c("numstr", "equals", 150), true},
		{"json.Number equals int64", c("jn", "equals", int64(42)), true},
		{"int32 equals float", c("count32", "equals", 7.0), true},
		{"bool equals bool", c("flag", "equals", true), true},
		{"bool equals string", c("flag", "equals", "true"), true},
		{"string equals bool", c("flagstr", "equals", true), true},
		{"bool differs", c("flag", "equals", false), false},
		{"array equals array", c("tags", "equals", []any{"a", "b", 3}), true},
		{"array differs by length", c("tags", "equals", []any{"a", "b"}), false},
		{"map equals map", c("meta", "equals", map[string]any{"k": 1.0}), true},
		{"empty string equals empty", c("empty", "equals", ""), true},
		// not_equals and aliases
		{"not_equals", c("source", "not_equals", "staging"), true},
		{"not_equals same", c("source", "not_equals", "production"), false},
		{"!= alias", c("source", "!=", "staging"), true},
		{"ne alias", c("error_count", "ne", "151"), true},
		{"not_equal alias", c("error_count", "not_equal", 150.0), false},
		// in / not_in
		{"in values", cl("source", "in", "production", "staging"), true},
		{"in values miss", cl("source", "in", "dev", "staging"), false},
		{"in value array", c("source", "in", []any{"staging", "production"}), true},
		{"in typed value array", c("source", "IN", []string{"production"}), true},
		{"in coerces numbers", cl("error_count", "in", "150", 200), true},
		{"not_in", cl("source", "not_in", "dev"), true},
		{"not_in hit", cl("source", "not_in", "production"), false},
		{"nin alias", cl("error_count", "nin", 1, 2), true},
		// ordering and aliases
		{"> int", c("error_count", ">", 100), true},
		{"> equal", c("error_count", ">", 150), false},
		{"gt alias", c("error_count", "gt", 149.5), true},
		{"greater_than alias", c("error_count", "greater_than", "100"), true},
		{"numeric string > int", c("numstr", ">", 100), true},
		{"numeric string vs 100 numerically, not lexically", c("numstr", ">", "20"), true},
		{"json.Number >", c("jn", ">", 41.5), true},
		{">=", c("count64", ">=", 7), true},
		{"gte alias", c("count64", "gte", 8), false},
		{"greater_than_or_equal alias", c("latency", "greater_than_or_equal", 12.5), true},
		{"<", c("latency", "<", 13), true},
		{"lt alias", c("latency", "lt", 12.5), false},
		{"less_than alias", c("count32", "less_than", json.Number("8")), true},
		{"<=", c("latency", "<=", 12.5), true},
		{"lte alias", c("latency", "lte", 12), false},
		{"less_than_or_equal alias", c("error_count", "less_than_or_equal", "150"), true},
		{"strings compare lexically", c("source", ">", "dev"), true},
		{"string against number is false", c("source", ">", 5), false},
		{"array against number is false", c("tags", "<", 5), false},
		{"bool against number is false", c("flag", ">", 0), false},
		// contains / not_contains
		{"string contains", c("source", "contains", "duct"), true},
		{"string contains miss", c("source", "contains", "dev"), false},
		{"array contains", c("tags", "contains", "b"), true},
		{"array contains number", c("tags", "contains", 3), true},
		{"typed array contains", c("strtags", "contains", "y"), true},
		{"array contains miss", c("tags", "contains", "z"), false},
		{"map contains key", c("meta", "contains", "k"), true},
		{"number contains is false", c("error_count", "contains", 1), false},
		{"not_contains", c("tags", "not_contains", "z"), true},
		{"not_contains hit", c("tags", "not_contains", "a"), false},
		{"string not_contains", c("source", "not_contains", "dev"), true},
		// exists / not_exists
		{"exists", c("source", "exists", nil), true},
		{"exists true", c("source", "exists", true), true},
		{"exists empty string", c("empty", "exists", nil), true},
		{"exists false on present", c("source", "exists", false), false},
		{"exists null", c("nullval", "exists", nil), false},
		{"not_exists present", c("source", "not_exists", nil), false},
		{"not_exists null", c("nullval", "not_exists", nil), true},
		{"not_exists false on present", c("source", "not_exists", false), true},
		{"exists string false on missing", c("nope", "exists", "false"), true},
		// starts_with / ends_with / matches
		{"starts_with", c("source", "starts_with", "prod"), true},
		{"starts_with miss", c("source", "starts_with", "dev"), false},
		{"starts_with number text", c("error_count", "starts_with", "15"), true},
		{"starts_with array is false", c("tags", "starts_with", "a"), false},
		{"ends_with", c("source", "ends_with", "tion"), true},
		{"ends_with number value", c("numstr", "ends_with", 50), true},
		{"matches", c("source", "matches", "^prod.*n$"), true},
		{"matches unanchored", c("source", "matches", "duc"), true},
		{"matches miss", c("source", "matches", "^dev"), false},
		{"matches number text", c("error_count", "matches", `^1\d+$`), true},
		// nested paths
		{"nested map", c("nested.level.deep", "equals", "x"), true},
		{"array index", c("items.1.name", "equals", "second"), true},
		{"array index out of range", c("items.5.name", "not_exists", nil), true},
		{"array bad index", c("items.x.name", "exists", nil), false},
		{"path through scalar", c("source.sub", "exists", nil), false},
		{"typed map path", c("typed.region", "starts_with", "eu-"), true},
		{"spaces around field", c("  source ", "equals", "production"), true},
	}
	missing := []struct {
		op   string
		cond Condition
		want bool
	}{
		{"equals", c("nope", "equals", "x"), false},
		{"not_equals", c("nope", "not_equals", "x"), false},
		{"in", cl("nope", "in", "x"), false},
		{"not_in", cl("nope", "not_in", "x"), true},
		{">", c("nope", ">", 1), false},
		{">=", c("nope", ">=", 1), false},
		{"<", c("nope", "<", 1), false},
		{"<=", c("nope", "<=", 1), false},
		{"contains", c("nope", "contains", "x"), false},
		{"not_contains", c("nope", "not_contains", "x"), false},
		{"exists", c("nope", "exists", nil), false},
		{"exists false", c("nope", "exists", false), true},
		{"not_exists", c("nope", "not_exists", nil), true},
		{"starts_with", c("nope", "starts_with", "x"), false},
		{"ends_with", c("nope", "ends_with", "x"), false},
		{"matches", c("nope", "matches", ".*"), false},
		{"null equals", c("nullval", "equals", "x"), false},
		{"null not_equals", c("nullval", "not_equals", "x"), false},
		{"null not_in", cl("nullval", "not_in", "x"), true},
	}
	for _, m := range missing {
		tests = append(tests, struct {
			name string
			cond Condition
			want bool
		}{"missing field " + m.op, m.cond, m.want})
	}
	input := ruleInput()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Rule{Order: 1, Conditions: []Condition{tt.cond}}
			got := EvaluateRule(r, input)
			if got.Error != nil {
				t.Fatalf("EvaluateRule(%s %s %v).Error = %q, want nil", tt.cond.Field, tt.cond.Operator, tt.cond.Value, *got.Error)
			}
			if held := got.Conditions[0].Held; held != tt.want || got.Matched != tt.want {
				t.Errorf("EvaluateRule(%s %s %v) held = %v, matched = %v; want %v", tt.cond.Field, tt.cond.Operator, tt.cond.Value, held, got.Matched, tt.want)
			}
			wantScore := 0
			if tt.want {
				wantScore = 1
			}
			if got.Score != wantScore {
				t.Errorf("EvaluateRule(%s %s %v).Score = %d, want %d", tt.cond.Field, tt.cond.Operator, tt.cond.Value, got.Score, wantScore)
			}
		})
	}
}

func TestEvaluateRuleConditionResult(t *testing.T) {
	r := &Rule{Order: 1, Conditions: []Condition{
		{Field: "error_count", Operator: "GTE", Value: 100, Weight: 3},
		{Field: "source", Operator: "nin", Values: []any{"dev"}, Weight: 2},
		{Field: "gone", Operator: "exists", Weight: 4},
	}}
	got := EvaluateRule(r, ruleInput())
	want := []ConditionResult{
		{Field: "error_count", Operator: ">=", Expected: 100, Actual: 150, Held: true, Weight: 3},
		{Field: "source", Operator: "not_in", Expected: []any{"dev"}, Actual: "production", Held: true, Weight: 2},
		{Field: "gone", Operator: "exists", Expected: nil, Actual: nil, Held: false, Weight: 4},
	}
	if len(got.Conditions) != len(want) {
		t.Fatalf("EvaluateRule(%v).Conditions = %d results, want %d", r.Conditions, len(got.Conditions), len(want))
	}
	for i, w := range want {
		g := got.Conditions[i]
		if g.Field != w.Field || g.Operator != w.Operator || fmt.Sprint(g.Expected) != fmt.Sprint(w.Expected) ||
			fmt.Sprint(g.Actual) != fmt.Sprint(w.Actual) || g.Held != w.Held || g.Weight != w.Weight || g.Error != nil {
			t.Errorf("EvaluateRule(...).Conditions[%d] = %+v, want %+v", i, *g, w)
		}
	}
	if got.Score != 5 || !got.Matched || got.Severity != nil {
		t.Errorf("EvaluateRule(...) = score %d, matched %v, severity %s; want 5, true, <nil>", got.Score, got.Matched, deref(got.Severity))
	}
}

func TestEvaluateRuleSeverityRanges(t *testing.T) {
	tests := []struct {
		name    string
		mapping any
		score   int
		want    string
	}{
		{"0 in 0-3", specMapping(), 0, "low"},
		{"3 in 0-3", specMapping(), 3, "low"},
		{"4 in 4-6", specMapping(), 4, "medium"},
		{"6 in 4-6", specMapping(), 6, "medium"},
		{"7 in 7-9", specMapping(), 7, "high"},
		{"9 in 7-9", specMapping(), 9, "high"},
		{"10 in 10+", specMapping(), 10, "critical"},
		{"1000 in 10+", specMapping(), 1000, "critical"},
		{"single open range", map[string]any{"0+": "info"}, 42, "info"},
		{"single-point range", map[string]any{"0-0": "none", "1+": "some"}, 0, "none"},
		{"typed mapping", map[string]string{"0-1": "low", "2+": "high"}, 2, "high"},
		{"keys with spaces", map[string]any{" 0 - 4 ": "low", " 5 +": "high"}, 5, "high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Rule{
				Order:      1,
				Conditions: []Condition{{Field: "x", Operator: "exists", Weight: tt.score}},
				Actions:    []Action{{Type: "SET_SEVERITY", Parameters: map[string]any{"mapping": tt.mapping}}},
			}
			got := EvaluateRule(r, map[string]any{"x": 1})
			if got.Error != nil {
				t.Fatalf("EvaluateRule(score %d, %v).Error = %q, want nil", tt.score, tt.mapping, *got.Error)
			}
			if got.Score != tt.score || deref(got.Severity) != tt.want || got.Actions[0]["severity"] != tt.want {
				t.Errorf("EvaluateRule(score %d, %v) = score %d, severity %s, action %v; want %s",
					tt.score, tt.mapping, got.Score, deref(got.Severity), got.Actions[0], tt.want)
			}
		})
	}
}

func TestValidateRule(t *testing.T) {
	with := func(edit func(r *Rule)) *Rule { r := specRule(); edit(r); return r }
	mapping := func(m map[string]any) *Rule {
		return with(func(r *Rule) { r.Actions[0].Parameters["mapping"] = m })
	}
	tests := []struct {
		name      string
		rule      *Rule
		wantField string // "" means valid
		wantMsg   string
	}{
		{name: "spec rule", rule: specRule()},
		{name: "order 1", rule: with(func(r *Rule) { r.Order = 1 })},
		{name: "order 999", rule: with(func(r *Rule) { r.Order = 999 })},
		{name: "no conditions nor actions", rule: &Rule{Order: 5}},
		{name: "calculation absent", rule: with(func(r *Rule) { delete(r.Actions[0].Parameters, "calculation") })},
		{name: "calculation any case", rule: with(func(r *Rule) { r.Actions[0].Parameters["calculation"] = " SUM_WEIGHTS " })},
		{name: "zero weight", rule: with(func(r *Rule) { r.Conditions[0].Weight = 0 })},
		{name: "unknown action type is allowed", rule: with(func(r *Rule) { r.Actions[1].Type = "page_the_cto" })},
		{name: "typed mapping", rule: with(func(r *Rule) {
			r.Actions[0].Parameters["mapping"] = map[string]string{"0-9": "low", "10+": "high"}
		})},

		{name: "nil rule", rule: nil, wantField: "rule"},
		{name: "order 0", rule: with(func(r *Rule) { r.Order = 0 }), wantField: "order"},
		{name: "order 1000", rule: with(func(r *Rule) { r.Order = 1000 }), wantField: "order"},
		{name: "unknown operator", rule: with(func(r *Rule) { r.Conditions[1].Operator = "approximately" }), wantField: "conditions[1].operator", wantMsg: "approximately"},
		{name: "empty operator", rule: with(func(r *Rule) { r.Conditions[2].Operator = "" }), wantField: "conditions[2].operator"},
		{name: "missing field", rule: with(func(r *Rule) { r.Conditions[0].Field = " " }), wantField: "conditions[0].field"},
		{name: "empty path segment", rule: with(func(r *Rule) { r.Conditions[0].Field = "a..b" }), wantField: "conditions[0].field"},
		{name: "negative weight", rule: with(func(r *Rule) { r.Conditions[2].Weight = -1 }), wantField: "conditions[2].weight"},
		{name: "in without list", rule: with(func(r *Rule) { r.Conditions[0].Values = nil }), wantField: "conditions[0].values"},
		{name: "in with empty list", rule: with(func(r *Rule) { r.Conditions[0].Values = []any{} }), wantField: "conditions[0].values"},
		{name: "not_in with scalar value", rule: with(func(r *Rule) {
			r.Conditions[0] = Condition{Field: "source", Operator: "not_in", Value: "dev"}
		}), wantField: "conditions[0].values"},
		{name: "value missing", rule: with(func(r *Rule) { r.Conditions[1].Value = nil }), wantField: "conditions[1].value"},
		{name: "ordering against bool", rule: with(func(r *Rule) { r.Conditions[1].Value = true }), wantField: "conditions[1].value"},
		{name: "ordering against object", rule: with(func(r *Rule) { r.Conditions[1].Value = map[string]any{} }), wantField: "conditions[1].value"},
		{name: "starts_with array", rule: with(func(r *Rule) {
			r.Conditions[2] = Condition{Field: "x", Operator: "starts_with", Value: []any{"a"}}
		}), wantField: "conditions[2].value"},
		{name: "exists non-boolean", rule: with(func(r *Rule) {
			r.Conditions[2] = Condition{Field: "x", Operator: "exists", Value: "maybe"}
		}), wantField: "conditions[2].value"},
		{name: "invalid regexp", rule: with(func(r *Rule) {
			r.Conditions[2] = Condition{Field: "x", Operator: "matches", Value: "(unclosed"}
		}), wantField: "conditions[2].value", wantMsg: "regular expression"},
		{name: "regexp not a string", rule: with(func(r *Rule) {
			r.Conditions[2] = Condition{Field: "x", Operator: "matches", Value: 5}
		}), wantField: "conditions[2].value"},
		{name: "action without type", rule: with(func(r *Rule) { r.Actions[1].Type = "" }), wantField: "actions[1].type"},
		{name: "unknown calculation", rule: with(func(r *Rule) { r.Actions[0].Parameters["calculation"] = "max_weight" }), wantField: "actions[0].parameters.calculation"},
		{name: "calculation not a string", rule: with(func(r *Rule) { r.Actions[0].Parameters["calculation"] = 1 }), wantField: "actions[0].parameters.calculation"},
		{name: "missing mapping", rule: with(func(r *Rule) { delete(r.Actions[0].Parameters, "mapping") }), wantField: "actions[0].parameters.mapping"},
		{name: "nil parameters", rule: with(func(r *Rule) { r.Actions[0].Parameters = nil }), wantField: "actions[0].parameters.mapping"},
		{name: "mapping not an object", rule: with(func(r *Rule) { r.Actions[0].Parameters["mapping"] = "0-3:low" }), wantField: "actions[0].parameters.mapping"},
		{name: "empty mapping", rule: mapping(map[string]any{}), wantField: "actions[0].parameters.mapping", wantMsg: "empty"},
		{name: "unparsable key", rule: mapping(map[string]any{"0-3": "low", "four-6": "medium", "7+": "high"}), wantField: "actions[0].parameters.mapping", wantMsg: "four-6"},
		{name: "bare number key", rule: mapping(map[string]any{"0-3": "low", "4": "medium", "5+": "high"}), wantField: "actions[0].parameters.mapping", wantMsg: `"4"`},
		{name: "negative key", rule: mapping(map[string]any{"-1-3": "low", "4+": "high"}), wantField: "actions[0].parameters.mapping"},
		{name: "three-part key", rule: mapping(map[string]any{"0-3-5": "low", "6+": "high"}), wantField: "actions[0].parameters.mapping"},
		{name: "open key not a number", rule: mapping(map[string]any{"0-3": "low", "x+": "high"}), wantField: "actions[0].parameters.mapping"},
		{name: "backwards range", rule: mapping(map[string]any{"0-3": "low", "6-4": "medium", "7+": "high"}), wantField: "actions[0].parameters.mapping", wantMsg: "backwards"},
		{name: "gap", rule: mapping(map[string]any{"0-3": "low", "5-9": "high", "10+": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "gap"},
		{name: "gap before open range", rule: mapping(map[string]any{"0-3": "low", "10+": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "gap"},
		{name: "overlap", rule: mapping(map[string]any{"0-3": "low", "3-9": "high", "10+": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "overlap"},
		{name: "duplicate start", rule: mapping(map[string]any{"0-3": "low", "0-2": "lower", "4+": "high"}), wantField: "actions[0].parameters.mapping", wantMsg: "overlap"},
		{name: "open range overlaps bounded", rule: mapping(map[string]any{"0-3": "low", "4-9": "high", "9+": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "overlap"},
		{name: "not starting at 0", rule: mapping(map[string]any{"1-3": "low", "4+": "high"}), wantField: "actions[0].parameters.mapping", wantMsg: "start at 0"},
		{name: "only open range not at 0", rule: mapping(map[string]any{"10+": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "start at 0"},
		{name: "no open range", rule: mapping(map[string]any{"0-3": "low", "4-9": "high"}), wantField: "actions[0].parameters.mapping", wantMsg: "exactly one"},
		{name: "two open ranges", rule: mapping(map[string]any{"0-3": "low", "4+": "high", "10+": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "exactly one"},
		{name: "open range not highest", rule: mapping(map[string]any{"0-3": "low", "4+": "high", "5-9": "critical"}), wantField: "actions[0].parameters.mapping", wantMsg: "highest"},
		{name: "empty label", rule: mapping(map[string]any{"0-3": "", "4+": "high"}), wantField: "actions[0].parameters.mapping"},
		{name: "label not a string", rule: mapping(map[string]any{"0-3": 3, "4+": "high"}), wantField: "actions[0].parameters.mapping"},
		{name: "first fault wins", rule: with(func(r *Rule) {
			r.Conditions[2].Operator = "??"
			r.Actions[0].Parameters["mapping"] = map[string]any{}
		}), wantField: "conditions[2].operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRule(tt.rule)
			if tt.wantField == "" {
				if err != nil {
					t.Errorf("ValidateRule(%s) = %v, want nil", tt.name, err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.wantField || !strings.Contains(ve.Message, tt.wantMsg) {
				t.Errorf("ValidateRule(%s) = %#v, want *ValidationError on %q mentioning %q", tt.name, err, tt.wantField, tt.wantMsg)
			}
		})
	}
}

func TestEvaluateRuleMalformed(t *testing.T) {
	with := func(edit func(r *Rule)) *Rule { r := specRule(); edit(r); return r }
	input := map[string]any{"source": "production", "error_count": 150, "customer_impact": "high"}
	tests := []struct {
		name         string
		rule         *Rule
		wantError    string // substring of Error
		wantCondErrs []bool // which conditions carry an Error
	}{
		{
			name:         "unknown operator",
			rule:         with(func(r *Rule) { r.Conditions[1].Operator = "approximately" }),
			wantError:    "conditions[1].operator",
			wantCondErrs: []bool{false, true, false},
		},
		{
			name:         "gap in mapping",
			rule:         with(func(r *Rule) { r.Actions[0].Parameters["mapping"] = map[string]any{"0-3": "low", "5+": "high"} }),
			wantError:    "actions[0].parameters.mapping: gap",
			wantCondErrs: []bool{false, false, false},
		},
		{
			name:         "overlap in mapping",
			rule:         with(func(r *Rule) { r.Actions[0].Parameters["mapping"] = map[string]any{"0-5": "low", "5+": "high"} }),
			wantError:    "actions[0].parameters.mapping: ranges",
			wantCondErrs: []bool{false, false, false},
		},
		{
			name: "invalid regexp",
			rule: with(func(r *Rule) {
				r.Conditions[0] = Condition{Field: "source", Operator: "matches", Value: "[", Weight: 1}
			}),
			wantError:    "conditions[0].value",
			wantCondErrs: []bool{true, false, false},
		},
		{
			name:      "nil rule",
			rule:      nil,
			wantError: "rule: must not be nil",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EvaluateRule(tt.rule, input)
			if got.Error == nil || !strings.Contains(*got.Error, tt.wantError) {
				t.Fatalf("EvaluateRule(%s).Error = %s, want containing %q", tt.name, deref(got.Error), tt.wantError)
			}
			if got.Matched || got.Score != 0 || got.Severity != nil || len(got.Actions) != 0 {
				t.Errorf("EvaluateRule(%s) = matched %v, score %d, severity %s, actions %v; want false, 0, <nil>, none",
					tt.name, got.Matched, got.Score, deref(got.Severity), got.Actions)
			}
			var condErrs []bool
			for _, c := range got.Conditions {
				condErrs = append(condErrs, c.Error != nil)
				if c.Held {
					t.Errorf("EvaluateRule(%s).Conditions held %q, want nothing evaluated", tt.name, c.Field)
				}
			}
			if fmt.Sprint(condErrs) != fmt.Sprint(tt.wantCondErrs) {
				t.Errorf("EvaluateRule(%s) condition errors = %v, want %v", tt.name, condErrs, tt.wantCondErrs)
			}
			if tt.rule != nil {
				if err := ValidateRule(tt.rule); err == nil || err.Error() != *got.Error {
					t.Errorf("ValidateRule(%s) = %v, want %q", tt.name, err, *got.Error)
				}
			}
		})
	}
	// Order is not part of evaluation.
	r := with(func(r *Rule) { r.Order = 0 })
	if got := EvaluateRule(r, input); got.Error != nil || got.Score != 10 {
		t.Errorf("EvaluateRule(order 0) = error %s, score %d; want no error, 10", deref(got.Error), got.Score)
	}
}

func TestEvaluateRuleNeverPanics(t *testing.T) {
	var nilPtr *int
	x := 5
	odd := map[string]any{
		"intmap":  map[int]any{1: "a"},
		"ints":    []int{1, 2, 3},
		"nilptr":  nilPtr,
		"ptr":     &x,
		"struct":  struct{ A int }{1},
		"fn":      func() {},
		"ch":      make(chan int),
		"nan":     "NaN",
		"inf":     "Inf",
		"bytes":   []byte("abc"),
		"nested":  map[string]any{"nilmap": map[string]any(nil)},
		"arr":     [2]string{"p", "q"},
		"hugeNum": json.Number("1e400"),
	}
	fields := []string{"intmap.1", "ints.2", "ints.-1", "nilptr", "ptr", "struct.A", "fn", "ch", "nan", "inf", "bytes",
		"nested.nilmap.x", "arr.1", "hugeNum", "missing.deeper.still"}
	values := []any{nil, 1, "x", true, []any{1, "a"}, map[string]any{"k": nilPtr}, nilPtr, struct{}{}, func() {}, json.Number("x"), []int{2}}
	ops := []string{"equals", "not_equals", "in", "not_in", ">", ">=", "<", "<=", "contains", "not_contains",
		"exists", "not_exists", "starts_with", "ends_with", "matches", "bogus"}
	for _, f := range fields {
		for _, op := range ops {
			for _, v := range values {
				r := &Rule{Order: 1,
					Conditions: []Condition{{Field: f, Operator: op, Value: v, Values: []any{v}, Weight: 1}},
					Actions: []Action{{Type: "set_severity", Parameters: map[string]any{
						"mapping": map[string]any{"0-0": v, "1+": "x"}, "calculation": v}}},
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("EvaluateRule(%s %s %v) panicked: %v", f, op, v, p)
						}
					}()
					_ = EvaluateRule(r, odd)
					_ = ValidateRule(r)
				}()
			}
		}
	}
	// Numeric strings that are not finite numbers compare as strings.
	got := EvaluateRule(&Rule{Conditions: []Condition{{Field: "nan", Operator: "equals", Value: "NaN", Weight: 1}}}, odd)
	if !got.Matched {
		t.Errorf("EvaluateRule(nan equals \"NaN\").Matched = false, want true")
	}
	got = EvaluateRule(&Rule{Conditions: []Condition{{Field: "ptr", Operator: "equals", Value: 5, Weight: 1}}}, odd)
	if got.Error != nil {
		t.Errorf("EvaluateRule(ptr equals 5).Error = %s, want nil", deref(got.Error))
	}
}

func TestEvaluateRules(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	rule := func(id string, order int, status RuleStatus, typ RuleType, from, until *Timestamp) *Rule {
		return &Rule{
			RuleID: id, Order: order, Status: status, RuleType: typ, EffectiveFrom: from, EffectiveUntil: until,
			Conditions: []Condition{{Field: "x", Operator: "exists", Weight: 1}},
		}
	}
	before, after := TimePtr(now.Add(-time.Hour)), TimePtr(now.Add(time.Hour))
	atNow := TimePtr(now)
	broken := rule("broken", 4, RuleActive, RuleBusiness, nil, nil)
	broken.Conditions[0].Operator = "~~"
	rules := []*Rule{
		rule("late", 9, RuleActive, RuleBusiness, nil, nil),
		rule("b-first", 1, RuleActive, RuleSecurity, nil, nil),
		rule("a-first", 1, RuleActive, RuleBusiness, before, after),
		nil,
		rule("draft", 2, RuleDraft, RuleBusiness, nil, nil),
		rule("inactive", 2, RuleInactive, RuleBusiness, nil, nil),
		rule("deprecated", 2, RuleDeprecated, RuleBusiness, nil, nil),
		rule("future", 2, RuleActive, RuleBusiness, after, nil),
		rule("expired", 2, RuleActive, RuleBusiness, nil, before),
		rule("ends-now", 2, RuleActive, RuleBusiness, nil, atNow),
		rule("starts-now", 3, RuleActive, RuleBusiness, atNow, nil),
		broken,
	}
	business, security := RuleBusiness, RuleSecurity
	// want lists the rules in force, wantAll every evaluation as id or id:reason.
	tests := []struct {
		name     string
		ruleType *RuleType
		want     []string
		wantAll  []string
	}{
		{"all types", nil, []string{"a-first", "b-first", "starts-now", "broken", "late"},
			[]string{"a-first", "b-first", "deprecated:not_active", "draft:not_active", "ends-now:expired", "expired:expired",
				"future:not_yet_in_force", "inactive:not_active", "starts-now", "broken", "late"}},
		{"business", &business, []string{"a-first", "starts-now", "broken", "late"},
			[]string{"a-first", "deprecated:not_active", "draft:not_active", "ends-now:expired", "expired:expired",
				"future:not_yet_in_force", "inactive:not_active", "starts-now", "broken", "late"}},
		{"security", &security, []string{"b-first"}, []string{"b-first"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EvaluateRules(rules, map[string]any{"x": 1}, tt.ruleType, now)
			var gotIDs, gotAll []string
			for _, ev := range got {
				if !ev.InForce {
					gotAll = append(gotAll, ev.Rule.RuleID+":"+string(deref(ev.NotInForceReason)))
					// A rule not in force is not evaluated: nothing matches, nothing to fire.
					if ev.NotInForceReason == nil || ev.Matched || ev.Score != 0 || ev.Severity != nil || ev.Error != nil ||
						ev.Conditions == nil || len(ev.Conditions) != 0 || ev.Actions == nil || len(ev.Actions) != 0 {
						t.Errorf("EvaluateRules(%s) %s not in force = %+v, want reason, no match, score 0, empty conditions and actions", tt.name, ev.Rule.RuleID, ev)
					}
					continue
				}
				gotAll = append(gotAll, ev.Rule.RuleID)
				gotIDs = append(gotIDs, ev.Rule.RuleID)
				if ev.NotInForceReason != nil {
					t.Errorf("EvaluateRules(%s) %s in force with reason %s", tt.name, ev.Rule.RuleID, *ev.NotInForceReason)
				}
				if (ev.Rule.RuleID == "broken") != (ev.Error != nil) || (ev.Error == nil && !ev.Matched) {
					t.Errorf("EvaluateRules(%s) %s = matched %v, error %s", tt.name, ev.Rule.RuleID, ev.Matched, deref(ev.Error))
				}
			}
			if fmt.Sprint(gotIDs) != fmt.Sprint(tt.want) {
				t.Errorf("EvaluateRules(%s) in force = %v, want %v", tt.name, gotIDs, tt.want)
			}
			if fmt.Sprint(gotAll) != fmt.Sprint(tt.wantAll) {
				t.Errorf("EvaluateRules(%s) = %v, want %v", tt.name, gotAll, tt.wantAll)
			}
		})
	}
	if got := EvaluateRules(nil, nil, nil, now); got == nil || len(got) != 0 {
		t.Errorf("EvaluateRules(nil) = %#v, want empty non-nil", got)
	}
	// The input is not modified and the rule's parameters are not shared with the result.
	r := specRule()
	in := map[string]any{"source": "production"}
	snapshot := maps.Clone(in)
	ev := EvaluateRules([]*Rule{r}, in, nil, now)
	ev[0].Actions[0]["parameters"].(map[string]any)["calculation"] = "changed"
	if !maps.Equal(in, snapshot) || r.Actions[0].Parameters["calculation"] != "sum_weights" {
		t.Errorf("EvaluateRules(spec rule) modified its input or rule")
	}
}

func TestRuleNotInForce(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	before, after := TimePtr(now.Add(-time.Hour)), TimePtr(now.Add(time.Hour))
	tests := []struct {
		name        string
		status      RuleStatus
		from, until *Timestamp
		want        RuleNotInForceReason
	}{
		{"active, open window", RuleActive, nil, nil, ""},
		{"active, within window", RuleActive, before, after, ""},
		{"starts now", RuleActive, TimePtr(now), nil, ""},
		{"draft", RuleDraft, nil, nil, RuleNotActive},
		{"inactive within window", RuleInactive, before, after, RuleNotActive},
		{"deprecated and expired: status first", RuleDeprecated, nil, before, RuleNotActive},
		{"future", RuleActive, after, nil, RuleNotYetInForce},
		{"expired", RuleActive, nil, before, RuleExpired},
		{"ends now", RuleActive, before, TimePtr(now), RuleExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Rule{Status: tt.status, EffectiveFrom: tt.from, EffectiveUntil: tt.until}
			if got := r.NotInForce(now); got != tt.want {
				t.Errorf("NotInForce(%s) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestValidateRuleUpdateNamesTheMovedBound(t *testing.T) {
	day := func(d int) *Timestamp { return TimePtr(time.Date(2025, 1, d, 0, 0, 0, 0, time.UTC)) }
	base := func(from, until *Timestamp) *Rule {
		r := specRule()
		r.Name, r.RuleType, r.Status, r.Priority = "n", RuleBusiness, RuleActive, PriorityHigh
		r.EffectiveFrom, r.EffectiveUntil = from, until
		return r
	}
	old := base(day(1), day(10))
	tests := []struct {
		name        string
		from, until *Timestamp
		wantField   string
	}{
		{"effectiveFrom moved past effectiveUntil", day(11), day(10), "effectiveFrom"},
		{"effectiveFrom moved onto effectiveUntil", day(10), day(10), "effectiveFrom"},
		{"effectiveUntil moved before effectiveFrom", day(1), day(1), "effectiveUntil"},
		{"both moved", day(5), day(4), "effectiveUntil"},
		{"valid move", day(2), day(10), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRuleUpdate(old, base(tt.from, tt.until))
			var invalid *ValidationError
			switch {
			case tt.wantField == "" && err != nil:
				t.Errorf("ValidateRuleUpdate(%s) = %v, want nil", tt.name, err)
			case tt.wantField != "" && (!errors.As(err, &invalid) || invalid.Field != tt.wantField):
				t.Errorf("ValidateRuleUpdate(%s) = %v, want a ValidationError on %s", tt.name, err, tt.wantField)
			}
		})
	}
}

func TestValidateRuleWindow(t *testing.T) {
	at := func(s string) *Timestamp {
		ts, err := ParseTimestamp(s)
		if err != nil {
			t.Fatal(err)
		}
		return &ts
	}
	const zero = "0001-01-01T00:00:00Z"
	tests := []struct {
		name        string
		from, until *Timestamp
		wantField   string // "" when valid
	}{
		{"open", nil, nil, ""},
		{"from only", at("2025-01-01T00:00:00Z"), nil, ""},
		{"until only", nil, at("2025-01-01T00:00:00Z"), ""},
		{"ordered", at("2025-01-01T00:00:00Z"), at("2025-01-02T00:00:00Z"), ""},
		{"epoch", at("1970-01-01T00:00:00Z"), nil, ""},
		{"reversed", at("2025-01-02T00:00:00Z"), at("2025-01-01T00:00:00Z"), "effectiveUntil"},
		{"empty window", at("2025-01-01T00:00:00Z"), at("2025-01-01T00:00:00Z"), "effectiveUntil"},
		{"zero from", at(zero), nil, "effectiveFrom"},
		{"zero until", nil, at(zero), "effectiveUntil"},
		{"zero from before until", at(zero), at("2025-01-01T00:00:00Z"), "effectiveFrom"},
		{"before 1970", at("1969-12-31T23:59:59Z"), nil, "effectiveFrom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := specRule()
			r.Name, r.RuleType, r.Status, r.Priority = "n", RuleBusiness, RuleActive, PriorityHigh
			r.EffectiveFrom, r.EffectiveUntil = tt.from, tt.until
			for _, check := range []struct {
				name string
				fn   func(*Rule) error
			}{{"ValidateRuleWindow", ValidateRuleWindow}, {"ValidateRuleFields", ValidateRuleFields}} {
				err := check.fn(r)
				var invalid *ValidationError
				switch {
				case tt.wantField == "" && err != nil:
					t.Errorf("%s(%s) = %v, want nil", check.name, tt.name, err)
				case tt.wantField != "" && (!errors.As(err, &invalid) || invalid.Field != tt.wantField):
					t.Errorf("%s(%s) = %v, want a ValidationError on %s", check.name, tt.name, err, tt.wantField)
				}
			}
		})
	}
}
