package catalog

import (
	"encoding/json"
	"testing"
)

// FuzzEvaluateCondition checks that no condition or input, however malformed, makes rule
// validation or evaluation panic, and that a rule ValidateRule accepts evaluates without error.
func FuzzEvaluateCondition(f *testing.F) {
	f.Add("source", "in", `["production","staging"]`, `{"source":"production"}`, 2)
	f.Add("error_count", ">=", `100`, `{"error_count":150}`, 3)
	f.Add("customer_impact", "equals", `"high"`, `{"customer_impact":"high"}`, 5)
	f.Add("a.b.0", "contains", `"x"`, `{"a":{"b":["xyz"]}}`, 1)
	f.Add("m", "matches", `"(["`, `{"m":"q"}`, 1)
	f.Add("", "exists", `true`, `[]`, -1)
	f.Fuzz(func(t *testing.T, field, op, value, input string, weight int) {
		var v any
		_ = json.Unmarshal([]byte(value), &v)
		var in map[string]any
		_ = json.Unmarshal([]byte(input), &in)
		c := Condition{Field: field, Operator: op, Value: v, Weight: weight}
		if list, ok := v.([]any); ok {
			c.Values = list
		}
		r := &Rule{RuleID: "r", Name: "r", Order: 1, RuleType: RuleBusiness, Status: RuleActive, Priority: PriorityLow, Conditions: []Condition{c},
			Actions: []Action{{Type: "set_severity", Parameters: map[string]any{"calculation": "sum_weights", "mapping": map[string]any{"0-3": "low", "4+": "high"}}}}}
		valid := ValidateRule(r) == nil
		ev := EvaluateRule(r, in)
		if ev == nil {
			t.Fatal("EvaluateRule returned nil")
		}
		if valid && ev.Error != nil {
			t.Fatalf("a rule ValidateRule accepts failed to evaluate: %s", *ev.Error)
		}
		if ev.Error == nil && ev.Score != 0 && ev.Score != c.Weight {
			t.Fatalf("score %d with one condition of weight %d", ev.Score, c.Weight)
		}
	})
}
