package graph_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// windowRule is a valid ACTIVE rule whose condition holds for {"x": ...}; change sets or
// removes (nil) fields of it.
func windowRule(id string, change map[string]any) map[string]any {
	r := map[string]any{"ruleId": id, "name": "Rule " + id, "ruleType": "BUSINESS", "priority": "HIGH", "order": 5, "status": "ACTIVE",
		"conditions": []any{map[string]any{"field": "x", "operator": "exists", "weight": 2}},
		"actions":    []any{map[string]any{"type": "notify"}}}
	for k, v := range change {
		if v == nil {
			delete(r, k)
			continue
		}
		r[k] = v
	}
	return r
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

const goZeroTime = "0001-01-01T00:00:00Z"

func TestRuleWindowRefused(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-RW-001")
	const create = `mutation($in: RuleInput!) { createRule(capabilityId: "CAP-RW-001", input: $in) { ruleId revision } }`
	const update = `mutation($rev: Int!, $in: UpdateRuleInput!) { updateRule(capabilityId: "CAP-RW-001", ruleId: "rw-1", expectedRevision: $rev, input: $in) { revision effectiveFrom effectiveUntil } }`
	day1, day2 := rfc(testNow.Add(-48*time.Hour)), rfc(testNow.Add(-24*time.Hour))
	refused := func(t *testing.T, query string, vars map[string]any, field string) {
		t.Helper()
		resp := h.do(t, query, vars)
		if resp.code(0) != "BAD_USER_INPUT" || len(resp.Errors) != 1 || resp.Errors[0].Extensions["field"] != field || h.writes() != 0 {
			t.Errorf("code %q, want BAD_USER_INPUT on field %s with no write (%d writes): %s", resp.code(0), field, h.writes(), resp.Body)
		}
	}

	for _, tt := range []struct {
		name   string
		change map[string]any
		field  string
	}{
		{"window reversed", map[string]any{"effectiveFrom": day2, "effectiveUntil": day1}, "effectiveUntil"},
		{"empty window", map[string]any{"effectiveFrom": day1, "effectiveUntil": day1}, "effectiveUntil"},
		{"zero effectiveFrom", map[string]any{"effectiveFrom": goZeroTime}, "effectiveFrom"},
		{"zero effectiveFrom with an end", map[string]any{"effectiveFrom": goZeroTime, "effectiveUntil": day2}, "effectiveFrom"},
		{"zero effectiveUntil", map[string]any{"effectiveUntil": goZeroTime}, "effectiveUntil"},
		{"effectiveFrom before 1970", map[string]any{"effectiveFrom": "1969-12-31T23:59:59Z"}, "effectiveFrom"},
	} {
		t.Run("create/"+tt.name, func(t *testing.T) {
			refused(t, create, map[string]any{"in": windowRule("rw-bad", tt.change)}, tt.field)
		})
	}

	// rw-1 is in force from day1 until a day from now.
	until := rfc(testNow.Add(24 * time.Hour))
	h.ok(t, create, map[string]any{"in": windowRule("rw-1", map[string]any{"effectiveFrom": day1, "effectiveUntil": until})}, nil)
	for _, tt := range []struct {
		name  string
		patch map[string]any
		field string
	}{
		{"effectiveFrom moved after the stored effectiveUntil", map[string]any{"effectiveFrom": rfc(testNow.Add(48 * time.Hour))}, "effectiveFrom"},
		{"effectiveUntil moved before the stored effectiveFrom", map[string]any{"effectiveUntil": rfc(testNow.Add(-72 * time.Hour))}, "effectiveUntil"},
		{"effectiveFrom moved onto the stored effectiveUntil", map[string]any{"effectiveFrom": until}, "effectiveFrom"},
		{"both reversed", map[string]any{"effectiveFrom": day2, "effectiveUntil": day1}, "effectiveUntil"},
		{"zero effectiveFrom", map[string]any{"effectiveFrom": goZeroTime}, "effectiveFrom"},
		{"zero effectiveUntil", map[string]any{"effectiveUntil": goZeroTime}, "effectiveUntil"},
		{"another field with a zero effectiveFrom", map[string]any{"name": "renamed", "effectiveFrom": goZeroTime}, "effectiveFrom"},
	} {
		t.Run("update/"+tt.name, func(t *testing.T) {
			refused(t, update, map[string]any{"rev": 1, "in": tt.patch}, tt.field)
		})
	}

	// A valid patch still goes through, a null changes nothing, and clear opens a bound.
	var out struct {
		UpdateRule struct {
			Revision       int
			EffectiveFrom  *string
			EffectiveUntil *string
		}
	}
	h.ok(t, update, map[string]any{"rev": 1, "in": map[string]any{"effectiveFrom": day2}}, &out)
	h.ok(t, update, map[string]any{"rev": 2, "in": map[string]any{"effectiveUntil": nil}}, &out)
	if u := out.UpdateRule; u.Revision != 3 || u.EffectiveFrom == nil || u.EffectiveUntil == nil {
		t.Errorf("updateRule(effectiveFrom, then effectiveUntil: null) = %+v, want revision 3 and both bounds (null changes nothing)", u)
	}
	h.ok(t, update, map[string]any{"rev": 3, "in": map[string]any{"clear": []string{"effectiveUntil"}}}, &out)
	if u := out.UpdateRule; u.Revision != 4 || u.EffectiveFrom == nil || u.EffectiveUntil != nil {
		t.Errorf("updateRule(clear: [effectiveUntil]) = %+v, want revision 4, a start and no end", u)
	}
	h.check(t, "CAP-RW-001")
}

func TestEvaluateRulesListsRulesNotInForce(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-RE-001")
	past, future := rfc(testNow.Add(-48*time.Hour)), rfc(testNow.Add(48*time.Hour))
	yesterday := rfc(testNow.Add(-24 * time.Hour))
	const create = `mutation($in: RuleInput!) { createRule(capabilityId: "CAP-RE-001", input: $in) { ruleId } }`
	for _, r := range []map[string]any{
		windowRule("re-live", map[string]any{"order": 1, "effectiveFrom": past, "effectiveUntil": future}),
		windowRule("re-draft", map[string]any{"order": 2, "status": "DRAFT"}),
		windowRule("re-expired", map[string]any{"order": 3, "effectiveFrom": past, "effectiveUntil": yesterday}),
		windowRule("re-future", map[string]any{"order": 4, "effectiveFrom": future}),
		windowRule("re-inactive-expired", map[string]any{"order": 5, "status": "INACTIVE", "effectiveUntil": yesterday}),
		windowRule("re-security", map[string]any{"order": 6, "ruleType": "SECURITY"}),
	} {
		h.ok(t, create, map[string]any{"in": r}, nil)
	}

	type evaluation struct {
		Rule             struct{ RuleID string }
		InForce          bool
		NotInForceReason *string
		Matched          bool
		Score            int
		Severity         *string
		Conditions       []json.RawMessage
		Actions          []json.RawMessage
		Error            *string
	}
	for _, tt := range []struct {
		name     string
		ruleType string // "" for every type
		want     []string
	}{
		{"business", "BUSINESS", []string{"re-live", "re-draft:NOT_ACTIVE", "re-expired:EXPIRED", "re-future:NOT_YET_IN_FORCE", "re-inactive-expired:NOT_ACTIVE"}},
		{"every type", "", []string{"re-live", "re-draft:NOT_ACTIVE", "re-expired:EXPIRED", "re-future:NOT_YET_IN_FORCE", "re-inactive-expired:NOT_ACTIVE", "re-security"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out struct {
				Capability struct{ EvaluateRules []evaluation }
			}
			vars := map[string]any{"in": map[string]any{"x": 1}}
			query := `query($in: JSON!) { capability(id: "CAP-RE-001") { evaluateRules(input: $in) {
				rule { ruleId } inForce notInForceReason matched score severity conditions { field held } actions error } } }`
			if tt.ruleType != "" {
				vars["type"] = tt.ruleType
				query = `query($in: JSON!, $type: RuleType) { capability(id: "CAP-RE-001") { evaluateRules(input: $in, ruleType: $type) {
				rule { ruleId } inForce notInForceReason matched score severity conditions { field held } actions error } } }`
			}
			resp := h.ok(t, query, vars, &out)
			if n := resp.Extensions.DynamoDB.Requests; n > 2 {
				t.Errorf("evaluateRules cost %d DynamoDB requests, want at most 2", n)
			}
			var got []string
			for _, ev := range out.Capability.EvaluateRules {
				if ev.InForce {
					got = append(got, ev.Rule.RuleID)
					if ev.NotInForceReason != nil || !ev.Matched || ev.Score != 2 || len(ev.Conditions) != 1 || len(ev.Actions) != 1 {
						t.Errorf("in force %s = %+v, want matched, score 2, one condition and one action, no reason", ev.Rule.RuleID, ev)
					}
					continue
				}
				reason := "<nil>"
				if ev.NotInForceReason != nil {
					reason = *ev.NotInForceReason
				}
				got = append(got, ev.Rule.RuleID+":"+reason)
				if ev.Matched || ev.Score != 0 || ev.Severity != nil || ev.Error != nil || len(ev.Conditions) != 0 || len(ev.Actions) != 0 {
					t.Errorf("not in force %s = %+v, want not matched, score 0, nothing evaluated", ev.Rule.RuleID, ev)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("evaluateRules(%s) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}
