package graph_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// DynamoDB's key limits, in bytes: minidyn stores any key, DynamoDB (and memdyn) refuse a longer one.
const (
	dynamoPartitionKeyBytes = 2048
	dynamoSortKeyBytes      = 1024
)

// enforceKeyLimits makes the backend answer a write holding a key over DynamoDB's limits the way
// DynamoDB does, with a ValidationException, whichever backend runs (minidyn would store it).
func enforceKeyLimits(h *harness) {
	h.env.Counter.Inspect = func(op string, body []byte, w http.ResponseWriter) bool {
		if op != "TransactWriteItems" && op != "BatchWriteItem" && op != "PutItem" {
			return false
		}
		var doc any
		if err := json.Unmarshal(body, &doc); err != nil {
			return false
		}
		msg := oversizeKey(doc)
		if msg == "" {
			return false
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"com.amazon.coral.validate#ValidationException","message":%q}`, msg)
		return true
	}
}

// oversizeKey returns a message naming the first key attribute in a DynamoDB JSON request that is
// over its limit, or "".
func oversizeKey(v any) string {
	switch x := v.(type) {
	case map[string]any:
		for attr, limit := range map[string]int{"PK": dynamoPartitionKeyBytes, "GSI1PK": dynamoPartitionKeyBytes, "SK": dynamoSortKeyBytes, "GSI1SK": dynamoSortKeyBytes} {
			if av, ok := x[attr].(map[string]any); ok {
				if s, ok := av["S"].(string); ok && len(s) > limit {
					return fmt.Sprintf("One or more parameter values were invalid: Size of %s is %d bytes, over the limit of %d bytes", attr, len(s), limit)
				}
			}
		}
		for _, e := range x {
			if m := oversizeKey(e); m != "" {
				return m
			}
		}
	case []any:
		for _, e := range x {
			if m := oversizeKey(e); m != "" {
				return m
			}
		}
	}
	return ""
}

// Free text that ends up in a key or an item is bounded: a name too long for DynamoDB's sort key
// is BAD_USER_INPUT naming the field and writes nothing (never an internal error from DynamoDB),
// and the longest allowed name is stored, read back and listed.
func TestInputBounds(t *testing.T) {
	h := newHarness(t)
	enforceKeyLimits(h)
	capability := func(id string, change func(map[string]any)) map[string]any {
		in := map[string]any{"capabilityId": id, "name": "Bounds " + id, "businessDomain": "bounds", "priority": "LOW"}
		change(in)
		return map[string]any{"in": in}
	}
	refused := []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"10,000-character name", createCap, capability("CAP-B-001", func(in map[string]any) { in["name"] = strings.Repeat("n", 10_000) }), "name"},
		{"201-character name", createCap, capability("CAP-B-002", func(in map[string]any) { in["name"] = strings.Repeat("n", 201) }), "name"},
		{"4,001-character description", createCap, capability("CAP-B-003", func(in map[string]any) { in["description"] = strings.Repeat("d", 4_001) }), "description"},
		{"101 tags", createCap, capability("CAP-B-004", func(in map[string]any) { in["tags"] = make([]string, 101) }), "tags"},
		{"1,001-character tag", createCap, capability("CAP-B-005", func(in map[string]any) { in["tags"] = []string{"ok", strings.Repeat("t", 1_001)} }), "tags[1]"},
		{"129-character business domain", createCap, capability("CAP-B-006", func(in map[string]any) { in["businessDomain"] = strings.Repeat("b", 129) }), "businessDomain"},
		{"10,000-character component name", addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{
			"componentId": "bounds-1", "name": strings.Repeat("c", 10_000), "componentType": "api-server", "order": 90}}, "name"},
		{"129-character component type", addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{
			"componentId": "bounds-2", "name": "c", "componentType": strings.Repeat("t", 129), "order": 91}}, "componentType"},
		{"oversized feature flags", addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{
			"componentId": "bounds-3", "name": "c", "componentType": "api-server", "order": 92,
			"configuration": map[string]any{"featureFlags": map[string]any{"big": strings.Repeat("f", 20_000)}}}}, "configuration.featureFlags"},
		{"10,000-character endpoint URL", addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{
			"componentId": "bounds-4", "name": "c", "componentType": "api-server", "order": 93,
			"deployment": map[string]any{"endpoints": []any{map[string]any{"url": "https://x/" + strings.Repeat("u", 10_000)}}}}}, "deployment.endpoints[0].url"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, tt.vars)
			if resp.code(0) != "BAD_USER_INPUT" {
				t.Fatalf("code = %q, want BAD_USER_INPUT: %.300s", resp.code(0), resp.Body)
			}
			if got := resp.Errors[0].Extensions["field"]; got != tt.field {
				t.Errorf("extensions.field = %v, want %q: %.300s", got, tt.field, resp.Errors[0].Message)
			}
			if w := h.writes(); w != 0 {
				t.Errorf("refused mutation made %d writes", w)
			}
		})
	}
	t.Run("nothing was stored", func(t *testing.T) {
		var out struct {
			Capability   *struct{ ID string }
			Capabilities struct{ Nodes []struct{ ID string } }
		}
		h.ok(t, `{ capability(id: "CAP-B-001") { id } capabilities(domain: "bounds") { nodes { id } } }`, nil, &out)
		if out.Capability != nil || len(out.Capabilities.Nodes) != 0 {
			t.Errorf("after refused creates: capability = %+v, capabilities(domain: bounds) = %+v", out.Capability, out.Capabilities.Nodes)
		}
	})

	// 200 characters, many of them multi-byte, and the longest domain.
	longest := strings.Repeat("Zürich 🙂", 25)
	domain := "b" + strings.Repeat("o", 127)
	for _, name := range []string{longest, strings.Repeat("n", 200)} {
		id := fmt.Sprintf("CAP-B-MAX-%d", len(name))
		h.ok(t, createCap, map[string]any{"in": map[string]any{"capabilityId": id, "name": name, "businessDomain": domain, "priority": "LOW"}}, nil)
		h.check(t, id)
	}
	var list struct {
		Capabilities struct {
			Nodes []struct{ ID, Name, BusinessDomain string }
		}
	}
	h.ok(t, `{ capabilities(first: 100) { nodes { id name businessDomain } } }`, nil, &list)
	found := map[string]string{}
	for _, n := range list.Capabilities.Nodes {
		if n.BusinessDomain == domain {
			found[n.ID] = n.Name
		}
	}
	for _, name := range []string{longest, strings.Repeat("n", 200)} {
		id := fmt.Sprintf("CAP-B-MAX-%d", len(name))
		if found[id] != name {
			t.Errorf("capabilities lists %s as %q, want %q", id, found[id], name)
		}
	}
}

// A DateTime whose UTC form falls outside the years 0000 to 9999 would not fit the fixed-width
// time of the keys (JOB#{startTime}#..., METRIC#...#{timestamp}) and would not parse back from
// the stored text: it is BAD_USER_INPUT and writes nothing; the last instant of 9999 is stored.
func TestDateTimeStaysInKeyRange(t *testing.T) {
	h := newHarness(t)
	const start = `mutation($id: ID!, $at: DateTime!) { startJob(capabilityId: "CAP-ALERT-MGT-001", input: {jobId: $id, jobType: SCALING, startTime: $at}) { startTime } }`
	for _, at := range []string{"9999-12-31T23:30:00-01:00", "0000-01-01T00:30:00+01:00"} {
		resp := h.do(t, start, map[string]any{"id": "JOB-RANGE-1", "at": at})
		if resp.code(0) != "BAD_USER_INPUT" || h.writes() != 0 {
			t.Errorf("startJob(startTime: %s) = code %q, %d writes: %.300s", at, resp.code(0), h.writes(), resp.Body)
		}
	}
	var out struct{ StartJob struct{ StartTime string } }
	h.ok(t, start, map[string]any{"id": "JOB-RANGE-2", "at": "9999-12-31T23:59:59.999999Z"}, &out)
	h.ok(t, `{ job(id: "JOB-RANGE-2") { startTime } capability(id: "CAP-ALERT-MGT-001") { jobs(first: 50) { nodes { jobId } } } }`, nil, nil)
}
