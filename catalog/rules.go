package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rule evaluation uses weighted scoring: each condition that holds adds its weight to the
// rule's score, and a rule matches when any of its conditions holds. A set_severity action
// whose calculation is sum_weights maps the score onto a severity label through its mapping
// of inclusive ranges ("0-3") and one open-ended range ("10+").

// The canonical condition operators.
const (
	OpEquals       = "equals"
	OpNotEquals    = "not_equals"
	OpIn           = "in"
	OpNotIn        = "not_in"
	OpGreater      = ">"
	OpGreaterEqual = ">="
	OpLess         = "<"
	OpLessEqual    = "<="
	OpContains     = "contains"
	OpNotContains  = "not_contains"
	OpExists       = "exists"
	OpNotExists    = "not_exists"
	OpStartsWith   = "starts_with"
	OpEndsWith     = "ends_with"
	OpMatches      = "matches"
)

// The action type and calculation that compute a severity.
const (
	ActionSetSeverity     = "set_severity"
	CalculationSumWeights = "sum_weights"
)

// maxSeverityBoundDigits bounds the digits of a mapping bound so that it cannot overflow.
const maxSeverityBoundDigits = 9

// CanonicalOperator returns the canonical name of a condition operator, accepting any case,
// surrounding spaces and the aliases =, ==, eq, equal (equals); !=, ne, not_equal
// (not_equals); nin (not_in); gt, greater_than (>); gte, greater_than_or_equal (>=); lt,
// less_than (<); lte, less_than_or_equal (<=). It reports false for an unknown operator.
func CanonicalOperator(op string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(op)) {
	case "equals", "=", "==", "eq", "equal":
		return OpEquals, true
	case "not_equals", "!=", "ne", "not_equal":
		return OpNotEquals, true
	case "in":
		return OpIn, true
	case "not_in", "nin":
		return OpNotIn, true
	case ">", "gt", "greater_than":
		return OpGreater, true
	case ">=", "gte", "greater_than_or_equal":
		return OpGreaterEqual, true
	case "<", "lt", "less_than":
		return OpLess, true
	case "<=", "lte", "less_than_or_equal":
		return OpLessEqual, true
	case "contains":
		return OpContains, true
	case "not_contains":
		return OpNotContains, true
	case "exists":
		return OpExists, true
	case "not_exists":
		return OpNotExists, true
	case "starts_with":
		return OpStartsWith, true
	case "ends_with":
		return OpEndsWith, true
	case "matches":
		return OpMatches, true
	}
	return "", false
}

// RuleEvaluation is the outcome of evaluating one rule against an input.
type RuleEvaluation struct {
	Rule *Rule
	// InForce reports whether the rule was in force and so evaluated (set by EvaluateRules;
	// EvaluateRule leaves it false).
	InForce bool
	// NotInForceReason says why the rule was not in force, nil when it was.
	NotInForceReason *RuleNotInForceReason
	// Matched reports whether at least one condition held (false for a malformed rule).
	Matched bool
	// Score is the sum of the weights of the conditions that held.
	Score int
	// Severity is the label the first set_severity action maps Score to, nil without one.
	Severity *string
	// Conditions are the per-condition results, in the rule's order.
	Conditions []*ConditionResult
	// Actions are the rule's actions as written, {"type": ..., "parameters": ...}, with
	// "severity" added to each set_severity action. They are listed whether or not the rule
	// matched; a caller fires them only when Matched.
	Actions []map[string]any
	// Error is set when the rule is malformed; nothing is evaluated then.
	Error *string
}

// ConditionResult is the outcome of one condition.
type ConditionResult struct {
	Field string
	// Operator is the canonical operator (as written when it is unknown).
	Operator string
	// Expected is the condition's list for in and not_in, its value otherwise.
	Expected any
	// Actual is the input's value at Field, nil when absent.
	Actual any
	Held   bool
	Weight int
	// Error is set when this condition is malformed.
	Error *string
}

// ValidateRule checks that r can be evaluated. It returns nil or a *ValidationError whose
// Field locates the fault ("order", "conditions[1].operator",
// "actions[0].parameters.mapping"...). It checks that Order is within 1..999; that each
// condition has a dot-path field, a known operator (see CanonicalOperator), a weight of at
// least 0, a non-empty list (values, or an array value) for in and not_in, a boolean or no
// value for exists and not_exists, a valid regular expression for matches and a value for
// every other operator (a number or string for the ordering operators, a scalar for
// starts_with and ends_with); and that each action has a type and each set_severity action a
// calculation of sum_weights (the default when absent) and a mapping. A mapping must be
// non-empty, map "a-b" (inclusive, a <= b) and "n+" keys to non-empty labels, start at 0,
// have neither gaps nor overlaps, and have exactly one "n+" key, the highest. ValidateRule
// does not check RuleID, Name or the vocabularies.
func ValidateRule(r *Rule) error {
	if r == nil {
		return Invalid("rule", "must not be nil")
	}
	if r.Order < 1 || r.Order > 999 {
		return Invalid("order", "must be between 1 and 999, got %d", r.Order)
	}
	if _, _, err := compileRule(r); err != nil {
		return err
	}
	return nil
}

// RuleNotInForceReason says why a rule was not evaluated.
type RuleNotInForceReason string

// The reasons a rule is not in force, in the order NotInForce tests them.
const (
	// RuleNotActive means the rule's Status is not active.
	RuleNotActive RuleNotInForceReason = "not_active"
	// RuleNotYetInForce means the rule's EffectiveFrom lies after now.
	RuleNotYetInForce RuleNotInForceReason = "not_yet_in_force"
	// RuleExpired means the rule's EffectiveUntil is now or earlier.
	RuleExpired RuleNotInForceReason = "expired"
)

// RuleNotInForceReasons lists the reasons in the order NotInForce tests them.
var RuleNotInForceReasons = []RuleNotInForceReason{RuleNotActive, RuleNotYetInForce, RuleExpired}

// Valid reports whether r is one of the vocabulary's values.
func (r RuleNotInForceReason) Valid() bool { return contains(RuleNotInForceReasons, r) }

// MarshalGQL implements graphql.Marshaler.
func (r RuleNotInForceReason) MarshalGQL(w io.Writer) { marshalEnum(w, string(r)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (r *RuleNotInForceReason) UnmarshalGQL(v any) (err error) {
	*r, err = unmarshalEnum(v, RuleNotInForceReasons, "RuleNotInForceReason")
	return err
}

// NotInForce returns why r is not in force at now, or "" when it is: RuleNotActive unless its
// Status is active, then RuleNotYetInForce when now is before EffectiveFrom, then RuleExpired
// when now is at or after EffectiveUntil (a nil bound is open). A rule is in force when
// EffectiveFrom <= now < EffectiveUntil.
func (r *Rule) NotInForce(now time.Time) RuleNotInForceReason {
	switch {
	case r.Status != RuleActive:
		return RuleNotActive
	case r.EffectiveFrom != nil && r.EffectiveFrom.After(now):
		return RuleNotYetInForce
	case r.EffectiveUntil != nil && !now.Before(r.EffectiveUntil.Time):
		return RuleExpired
	}
	return ""
}

// EvaluateRules returns one evaluation for every rule (of RuleType ruleType, when it is not
// nil), ordered by Order, then RuleID. A rule in force at now (see NotInForce) is evaluated
// against input (EvaluateRule) and has InForce set. Any other rule is not evaluated: its
// evaluation has InForce false, NotInForceReason set, Matched false, Score 0, no severity, no
// error and empty Conditions and Actions, so that a caller fires nothing for it. A malformed
// rule in force is reported through its evaluation's Error, never as a failure; nil rules are
// skipped. The result is never nil.
func EvaluateRules(rules []*Rule, input map[string]any, ruleType *RuleType, now time.Time) []*RuleEvaluation {
	var chosen []*Rule
	for _, r := range rules {
		if r == nil || (ruleType != nil && r.RuleType != *ruleType) {
			continue
		}
		chosen = append(chosen, r)
	}
	sort.SliceStable(chosen, func(i, j int) bool {
		if chosen[i].Order != chosen[j].Order {
			return chosen[i].Order < chosen[j].Order
		}
		return chosen[i].RuleID < chosen[j].RuleID
	})
	out := make([]*RuleEvaluation, 0, len(chosen))
	for _, r := range chosen {
		if reason := r.NotInForce(now); reason != "" {
			out = append(out, &RuleEvaluation{Rule: r, NotInForceReason: &reason,
				Conditions: []*ConditionResult{}, Actions: []map[string]any{}})
			continue
		}
		ev := EvaluateRule(r, input)
		ev.InForce = true
		out = append(out, ev)
	}
	return out
}

// EvaluateRule evaluates r against input with weighted scoring: Score is the sum of the
// weights of the conditions that hold, and the rule matches when at least one condition holds.
// It ignores Status, the effective window and Order. A condition's field is a dot path into
// input ("a.b.c"), a numeric segment indexing an array ("items.0.name"); a field that is
// absent or null is missing, and a missing field holds only for not_exists, not_in and exists
// with value false. Values that both read as numbers (any Go numeric type, json.Number or a
// numeric string) compare as numbers; otherwise strings compare as strings (case-sensitively),
// booleans as booleans (also against "true"/"false"), arrays and maps element by element.
//
// On a present field: equals and not_equals compare as above; in holds when the value equals
// an element of the list and not_in when it equals none; >, >=, < and <= compare two numbers
// or two strings and are false for any other pair; contains holds when a string has the
// value's text as a substring, an array has an element equal to the value or a map has it as
// a key, and not_contains is its negation; starts_with, ends_with and matches (a Go regular
// expression, unanchored) test the text of a string, number or boolean; exists holds (or, with
// value false, fails) and not_exists fails (or, with value false, holds).
//
// EvaluateRule never fails and never panics: for a nil or malformed rule (see ValidateRule,
// Order excepted) it returns an evaluation with Error set to the validation message, Matched
// false, Score 0, no actions, and the conditions listed unevaluated with Error set on the
// faulty ones.
func EvaluateRule(r *Rule, input map[string]any) *RuleEvaluation {
	ev := &RuleEvaluation{Rule: r, Conditions: []*ConditionResult{}, Actions: []map[string]any{}}
	if r == nil {
		msg := Invalid("rule", "must not be nil").Error()
		ev.Error = &msg
		return ev
	}
	conds, bands, err := compileRule(r)
	if err != nil {
		msg := err.Error()
		ev.Error = &msg
		for i, c := range r.Conditions {
			cr := &ConditionResult{Field: c.Field, Operator: c.Operator, Expected: c.Value, Weight: c.Weight}
			if len(c.Values) > 0 {
				cr.Expected = c.Values
			}
			if i < len(conds) {
				if conds[i].err != nil {
					m := conds[i].err.Error()
					cr.Error = &m
				} else {
					cr.Operator = conds[i].op
				}
			}
			ev.Conditions = append(ev.Conditions, cr)
		}
		return ev
	}

	for _, c := range conds {
		actual, found := lookupPath(input, c.path)
		held := c.eval(actual, found)
		if held {
			ev.Matched = true
			ev.Score += c.weight
		}
		ev.Conditions = append(ev.Conditions, &ConditionResult{
			Field:    c.field,
			Operator: c.op,
			Expected: c.expected(),
			Actual:   actual,
			Held:     held,
			Weight:   c.weight,
		})
	}
	for i, a := range r.Actions {
		m := map[string]any{"type": a.Type}
		if a.Parameters != nil {
			params := make(map[string]any, len(a.Parameters))
			for k, v := range a.Parameters {
				params[k] = v
			}
			m["parameters"] = params
		}
		if b := bands[i]; b != nil {
			if label, ok := severityFor(b, ev.Score); ok {
				m["severity"] = label
				if ev.Severity == nil {
					l := label
					ev.Severity = &l
				}
			}
		}
		ev.Actions = append(ev.Actions, m)
	}
	return ev
}

// compiledCondition is a condition checked and prepared for evaluation.
type compiledCondition struct {
	field  string
	path   []string
	op     string
	weight int
	value  any
	list   []any
	want   bool // for exists / not_exists: whether the field should be present
	re     *regexp.Regexp
	err    *ValidationError
}

// compileRule checks and prepares r's conditions and actions. It returns one compiled
// condition per condition (err set on the faulty ones), for each action the parsed severity
// bands of a set_severity action (nil otherwise), and the first fault.
func compileRule(r *Rule) ([]compiledCondition, [][]severityBand, *ValidationError) {
	var first *ValidationError
	conds := make([]compiledCondition, len(r.Conditions))
	for i, c := range r.Conditions {
		conds[i] = compileCondition(i, c)
		if first == nil {
			first = conds[i].err
		}
	}
	bands := make([][]severityBand, len(r.Actions))
	for i, a := range r.Actions {
		b, err := compileAction(i, a)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		bands[i] = b
	}
	return conds, bands, first
}

func compileCondition(i int, c Condition) compiledCondition {
	at := func(part string) string { return fmt.Sprintf("conditions[%d].%s", i, part) }
	cc := compiledCondition{field: strings.TrimSpace(c.Field), weight: c.Weight, value: c.Value}
	fail := func(part, format string, args ...any) compiledCondition {
		cc.err = Invalid(at(part), format, args...)
		return cc
	}
	if cc.field == "" {
		return fail("field", "is required")
	}
	cc.path = strings.Split(cc.field, ".")
	for _, seg := range cc.path {
		if seg == "" {
			return fail("field", "%q is not a valid dot path", c.Field)
		}
	}
	op, ok := CanonicalOperator(c.Operator)
	if !ok {
		return fail("operator", "%q is not a known operator", c.Operator)
	}
	cc.op = op
	if c.Weight < 0 {
		return fail("weight", "must be at least 0, got %d", c.Weight)
	}
	switch op {
	case OpIn, OpNotIn:
		switch {
		case len(c.Values) > 0:
			cc.list = c.Values
		case isList(c.Value):
			cc.list = toList(c.Value)
		}
		if len(cc.list) == 0 {
			return fail("values", "must list at least one value for operator %s", op)
		}
	case OpExists, OpNotExists:
		want := true
		if c.Value != nil {
			b, ok := toBool(c.Value)
			if !ok {
				return fail("value", "must be a boolean for operator %s", op)
			}
			want = b
		}
		cc.want = want == (op == OpExists)
	case OpMatches:
		s, ok := c.Value.(string)
		if !ok {
			return fail("value", "must be a regular expression string for operator %s", op)
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return fail("value", "is not a valid regular expression: %v", err)
		}
		cc.re = re
	default:
		if c.Value == nil {
			return fail("value", "is required for operator %s", op)
		}
		switch op {
		case OpGreater, OpGreaterEqual, OpLess, OpLessEqual:
			if _, isNum := toNumber(c.Value); !isNum {
				if _, isStr := toStr(c.Value); !isStr {
					return fail("value", "must be a number or a string for operator %s", op)
				}
			}
		case OpStartsWith, OpEndsWith:
			if _, ok := scalarString(c.Value); !ok {
				return fail("value", "must be a string for operator %s", op)
			}
		}
	}
	return cc
}

func (c *compiledCondition) expected() any {
	if c.list != nil {
		return c.list
	}
	return c.value
}

// eval reports whether the condition holds for actual, found telling whether the field is
// present and non-null.
func (c *compiledCondition) eval(actual any, found bool) bool {
	switch c.op {
	case OpExists, OpNotExists:
		return found == c.want
	case OpNotIn:
		return !found || !inList(actual, c.list)
	}
	if !found {
		return false
	}
	switch c.op {
	case OpEquals:
		return looseEqual(actual, c.value)
	case OpNotEquals:
		return !looseEqual(actual, c.value)
	case OpIn:
		return inList(actual, c.list)
	case OpGreater, OpGreaterEqual, OpLess, OpLessEqual:
		cmp, ok := compareOrdered(actual, c.value)
		if !ok {
			return false
		}
		switch c.op {
		case OpGreater:
			return cmp > 0
		case OpGreaterEqual:
			return cmp >= 0
		case OpLess:
			return cmp < 0
		default:
			return cmp <= 0
		}
	case OpContains:
		return containsValue(actual, c.value)
	case OpNotContains:
		return !containsValue(actual, c.value)
	case OpStartsWith, OpEndsWith:
		s, ok := scalarString(actual)
		want, _ := scalarString(c.value)
		if !ok {
			return false
		}
		if c.op == OpStartsWith {
			return strings.HasPrefix(s, want)
		}
		return strings.HasSuffix(s, want)
	case OpMatches:
		s, ok := scalarString(actual)
		return ok && c.re != nil && c.re.MatchString(s)
	}
	return false
}

// compileAction checks one action; for set_severity it returns the parsed mapping.
func compileAction(i int, a Action) ([]severityBand, *ValidationError) {
	at := func(part string) string { return fmt.Sprintf("actions[%d].%s", i, part) }
	typ := strings.ToLower(strings.TrimSpace(a.Type))
	if typ == "" {
		return nil, Invalid(at("type"), "is required")
	}
	if typ != ActionSetSeverity {
		return nil, nil
	}
	if calc, ok := a.Parameters["calculation"]; ok && calc != nil {
		s, isStr := calc.(string)
		if !isStr || strings.ToLower(strings.TrimSpace(s)) != CalculationSumWeights {
			return nil, Invalid(at("parameters.calculation"), "unknown calculation %v (want %s)", calc, CalculationSumWeights)
		}
	}
	return parseSeverityMapping(a.Parameters["mapping"], at("parameters.mapping"))
}

// severityBand is one range of a severity mapping: lo..hi inclusive, or lo and above when open.
type severityBand struct {
	key    string
	lo, hi int
	open   bool
	label  string
}

// parseSeverityMapping reads a mapping of "a-b" and "n+" keys to labels (see ValidateRule).
func parseSeverityMapping(v any, field string) ([]severityBand, *ValidationError) {
	if v == nil {
		return nil, Invalid(field, "is required for action %s", ActionSetSeverity)
	}
	m, ok := toStringMap(v)
	if !ok {
		return nil, Invalid(field, "must be an object of score ranges to severities")
	}
	if len(m) == 0 {
		return nil, Invalid(field, "must not be empty")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bands := make([]severityBand, 0, len(keys))
	open := 0
	for _, k := range keys {
		label, isStr := m[k].(string)
		if !isStr || strings.TrimSpace(label) == "" {
			return nil, Invalid(field, "the severity for %q must be a non-empty string", k)
		}
		b := severityBand{key: k, label: label}
		t := strings.TrimSpace(k)
		if n, cut := strings.CutSuffix(t, "+"); cut {
			lo, ok := parseBound(n)
			if !ok {
				return nil, Invalid(field, "%q is not a score range like \"0-3\" or \"10+\"", k)
			}
			b.lo, b.open = lo, true
			open++
		} else {
			a, z, cut := strings.Cut(t, "-")
			lo, okA := parseBound(a)
			hi, okZ := parseBound(z)
			if !cut || !okA || !okZ {
				return nil, Invalid(field, "%q is not a score range like \"0-3\" or \"10+\"", k)
			}
			if lo > hi {
				return nil, Invalid(field, "range %q runs backwards", k)
			}
			b.lo, b.hi = lo, hi
		}
		bands = append(bands, b)
	}
	if open != 1 {
		return nil, Invalid(field, "must have exactly one open-ended range like \"10+\", got %d", open)
	}
	sort.SliceStable(bands, func(i, j int) bool {
		if bands[i].lo != bands[j].lo {
			return bands[i].lo < bands[j].lo
		}
		return !bands[i].open && bands[j].open
	})
	if bands[0].lo != 0 {
		return nil, Invalid(field, "must start at 0, starts at %d", bands[0].lo)
	}
	for i := 1; i < len(bands); i++ {
		prev, cur := bands[i-1], bands[i]
		switch {
		case prev.open:
			return nil, Invalid(field, "open-ended range %q must be the highest", prev.key)
		case cur.lo <= prev.hi:
			return nil, Invalid(field, "ranges %q and %q overlap", prev.key, cur.key)
		case cur.lo > prev.hi+1:
			return nil, Invalid(field, "gap between %q and %q: scores %d-%d are not mapped", prev.key, cur.key, prev.hi+1, cur.lo-1)
		}
	}
	return bands, nil
}

// parseBound reads a non-negative decimal bound made of digits only.
func parseBound(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxSeverityBoundDigits {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}

// severityFor returns the label of the band holding score.
func severityFor(bands []severityBand, score int) (string, bool) {
	for _, b := range bands {
		if score >= b.lo && (b.open || score <= b.hi) {
			return b.label, true
		}
	}
	return "", false
}

// lookupPath follows path through maps and arrays. It reports false when a step is missing or
// the value found is null.
func lookupPath(input map[string]any, path []string) (any, bool) {
	var cur any = input
	for _, seg := range path {
		next, ok := step(cur, seg)
		if !ok {
			return nil, false
		}
		cur = next
	}
	if isNil(cur) {
		return nil, false
	}
	return cur, true
}

func step(cur any, seg string) (any, bool) {
	switch c := cur.(type) {
	case nil:
		return nil, false
	case map[string]any:
		v, ok := c[seg]
		return v, ok
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	rv := reflect.ValueOf(cur)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil, false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return nil, false
		}
		v := rv.MapIndex(reflect.ValueOf(seg).Convert(rv.Type().Key()))
		if !v.IsValid() {
			return nil, false
		}
		return v.Interface(), true
	case reflect.Slice, reflect.Array:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= rv.Len() {
			return nil, false
		}
		return rv.Index(i).Interface(), true
	}
	return nil, false
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// toNumber reads v as a finite number: any Go numeric type, json.Number or a numeric string.
func toNumber(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case nil, bool:
		return 0, false
	case float64:
		f = x
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case json.Number:
		return parseNumber(string(x))
	case string:
		return parseNumber(x)
	default:
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			f = float64(rv.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			f = float64(rv.Uint())
		case reflect.Float32, reflect.Float64:
			f = rv.Float()
		case reflect.String:
			return parseNumber(rv.String())
		default:
			return 0, false
		}
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// toStr returns v when it is a string (of any string type).
func toStr(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	if v == nil {
		return "", false
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

// scalarString returns the text of a string, number or boolean.
func scalarString(v any) (string, bool) {
	if s, ok := toStr(v); ok {
		return s, true
	}
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		return string(x), true
	}
	if f, ok := toNumber(v); ok {
		return strconv.FormatFloat(f, 'f', -1, 64), true
	}
	return "", false
}

func toBool(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		return b, err == nil
	}
	return false, false
}

func isList(v any) bool {
	if v == nil {
		return false
	}
	k := reflect.ValueOf(v).Kind()
	return k == reflect.Slice || k == reflect.Array
}

func toList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if !isList(v) {
		return nil
	}
	rv := reflect.ValueOf(v)
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out
}

func toStringMap(v any) (map[string]any, bool) {
	if m, ok := v.(map[string]any); ok {
		return m, true
	}
	if v == nil {
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	out := make(map[string]any, rv.Len())
	iter := rv.MapRange()
	for iter.Next() {
		out[iter.Key().String()] = iter.Value().Interface()
	}
	return out, true
}

// looseEqual compares two decoded values: numbers numerically, strings exactly, booleans also
// against "true"/"false", arrays and maps element by element.
func looseEqual(a, b any) bool {
	if isNil(a) || isNil(b) {
		return isNil(a) && isNil(b)
	}
	if x, ok := toNumber(a); ok {
		if y, ok := toNumber(b); ok {
			return x == y
		}
	}
	sa, aStr := toStr(a)
	sb, bStr := toStr(b)
	if aStr && bStr {
		return sa == sb
	}
	ba, aBool := a.(bool)
	bb, bBool := b.(bool)
	switch {
	case aBool && bBool:
		return ba == bb
	case aBool && bStr:
		return strings.EqualFold(strings.TrimSpace(sb), strconv.FormatBool(ba))
	case bBool && aStr:
		return strings.EqualFold(strings.TrimSpace(sa), strconv.FormatBool(bb))
	}
	if isList(a) && isList(b) {
		la, lb := toList(a), toList(b)
		if len(la) != len(lb) {
			return false
		}
		for i := range la {
			if !looseEqual(la[i], lb[i]) {
				return false
			}
		}
		return true
	}
	ma, aMap := toStringMap(a)
	mb, bMap := toStringMap(b)
	if aMap && bMap {
		if len(ma) != len(mb) {
			return false
		}
		for k, va := range ma {
			vb, ok := mb[k]
			if !ok || !looseEqual(va, vb) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// compareOrdered compares two numbers numerically or two strings lexically; it reports false
// for any other pair.
func compareOrdered(a, b any) (int, bool) {
	if x, ok := toNumber(a); ok {
		if y, ok := toNumber(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	}
	sa, aStr := toStr(a)
	sb, bStr := toStr(b)
	if aStr && bStr {
		return strings.Compare(sa, sb), true
	}
	return 0, false
}

func inList(v any, list []any) bool {
	for _, e := range list {
		if looseEqual(v, e) {
			return true
		}
	}
	return false
}

// containsValue reports whether a string holds want as a substring, an array holds an element
// equal to want, or a map holds want as a key.
func containsValue(v, want any) bool {
	if s, ok := toStr(v); ok {
		w, ok := scalarString(want)
		return ok && strings.Contains(s, w)
	}
	if isList(v) {
		return inList(want, toList(v))
	}
	if m, ok := toStringMap(v); ok {
		w, ok := scalarString(want)
		if !ok {
			return false
		}
		_, has := m[w]
		return has
	}
	return false
}
