package graph_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/capcat/catalogue/graph"
)

// versionNode is a node of a CapabilityVersionConnection or RuleVersionConnection.
type versionNode struct {
	ID        string
	Revision  int
	At        string
	Actor     struct{ Name, Role string }
	RequestID *string
	Deleted   bool
	Name      string
	Status    string
}

// historyHarness serves with two admin keys and a viewer key, and posts with an X-Request-ID.
type historyHarness struct{ *harness }

func newHistoryHarness(t *testing.T) historyHarness {
	return historyHarness{newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t,
			"admin "+graph.HashKey("alice-key")+" alice",
			"admin "+graph.HashKey("bob-key")+" bob",
			"viewer "+graph.HashKey("ui-key")+" dashboards"), Anonymous: graph.RoleViewer}
	})}
}

// as posts query with key and request ID, failing on errors unless wantCode is given, in which
// case the first error must carry it.
func (h historyHarness) as(t *testing.T, key, requestID, query string, vars map[string]any, out any, wantCode string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set(graph.RequestIDHeader, requestID)
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, req)
	var resp gqlResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("decode %q: %v", w.Body.String(), err)
	}
	h.wrote = true
	switch {
	case wantCode != "":
		if resp.code(0) != wantCode {
			t.Fatalf("%s: want %s, got %s", query, wantCode, w.Body.String())
		}
	case len(resp.Errors) > 0:
		t.Fatalf("%s: %s", query, w.Body.String())
	case out != nil:
		if err := json.Unmarshal(resp.Data, out); err != nil {
			t.Fatalf("decode data %s: %v", resp.Data, err)
		}
	}
}

const versionFields = `id revision at actor { name role } requestId deleted name status`

// Every version names who wrote it and in which request, has an id of its own (never the live
// capability's), and a deleted capability keeps its history behind a tombstone that admins
// read with capabilityHistory. A capability created again with the ID continues that history,
// so its first update does not collide with the old versions' keys.
func TestCapabilityHistoryNamesWritersAndOutlivesDelete(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "req-create", createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-H-001", "name": "First", "businessDomain": "testing", "priority": "HIGH"}}, nil, "")
	const update = `mutation($rev: Int!, $name: String!) { updateCapability(id: "CAP-H-001", expectedRevision: $rev, input: {name: $name}) { revision } }`
	h.as(t, "bob-key", "req-rename", update, map[string]any{"rev": 1, "name": "Second"}, nil, "")
	h.as(t, "alice-key", "req-transition", `mutation { transitionCapability(id: "CAP-H-001", to: DEVELOPMENT, expectedRevision: 2) { revision } }`, nil, nil, "")

	var live struct {
		Capability struct {
			ID      string
			History struct{ Nodes []versionNode }
		}
	}
	h.as(t, "ui-key", "req-read", `{ capability(id: "CAP-H-001") { id history { nodes { `+versionFields+` } } } }`, nil, &live, "")
	got := live.Capability.History.Nodes
	if len(got) != 2 {
		t.Fatalf("history = %+v, want revisions 2 and 1", got)
	}
	want := []struct {
		id, name, actor, request string
		rev                      int
	}{{"CAP-H-001@2", "Second", "bob", "req-rename", 2}, {"CAP-H-001@1", "First", "alice", "req-create", 1}}
	for i, w := range want {
		n := got[i]
		if n.ID != w.id || n.Revision != w.rev || n.Name != w.name || n.Actor.Name != w.actor || n.Actor.Role != "admin" ||
			n.RequestID == nil || *n.RequestID != w.request || n.Deleted || n.At == "" {
			t.Errorf("version %d = %+v, want %+v", i, n, w)
		}
		if n.ID == live.Capability.ID {
			t.Errorf("version %d shares the live capability's id %q", i, n.ID)
		}
	}

	// The delete: the tombstone first (who deleted, when), then the last revision.
	h.as(t, "bob-key", "req-delete", `mutation { deleteCapability(id: "CAP-H-001", expectedRevision: 3) }`, nil, nil, "")
	const deleted = `{ capabilityHistory(id: "CAP-H-001") { nodes { ` + versionFields + ` } pageInfo { hasNextPage } } }`
	h.as(t, "ui-key", "req-viewer", deleted, nil, nil, "FORBIDDEN")
	var hist struct {
		CapabilityHistory struct{ Nodes []versionNode }
	}
	h.as(t, "alice-key", "req-audit", deleted, nil, &hist, "")
	nodes := hist.CapabilityHistory.Nodes
	if len(nodes) != 4 {
		t.Fatalf("capabilityHistory = %+v, want tombstone and revisions 3, 2, 1", nodes)
	}
	tomb, last := nodes[0], nodes[1]
	if !tomb.Deleted || tomb.Revision != 4 || tomb.ID != "CAP-H-001@4" || tomb.Actor.Name != "bob" || tomb.RequestID == nil || *tomb.RequestID != "req-delete" || tomb.Name != "Second" {
		t.Errorf("tombstone = %+v", tomb)
	}
	if last.Deleted || last.Revision != 3 || last.Status != "DEVELOPMENT" || last.Actor.Name != "alice" || *last.RequestID != "req-transition" {
		t.Errorf("last revision = %+v", last)
	}
	var gone struct{ Capability *struct{ ID string } }
	h.as(t, "alice-key", "req-gone", `{ capability(id: "CAP-H-001") { id } }`, nil, &gone, "")
	if gone.Capability != nil {
		t.Errorf("deleted capability still reads: %+v", gone.Capability)
	}

	// Created again: the history goes on from the tombstone, and updates work.
	var again struct{ CreateCapability struct{ Revision int } }
	h.as(t, "alice-key", "req-again", createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-H-001", "name": "Third", "businessDomain": "testing", "priority": "LOW"}}, &again, "")
	if again.CreateCapability.Revision != 5 {
		t.Errorf("re-created revision = %d, want 5 (after the tombstone's 4)", again.CreateCapability.Revision)
	}
	h.as(t, "alice-key", "req-again-2", update, map[string]any{"rev": 5, "name": "Fourth"}, nil, "")
	h.as(t, "alice-key", "req-audit-2", deleted, nil, &hist, "")
	if n := hist.CapabilityHistory.Nodes; len(n) != 5 || n[0].Revision != 5 || n[0].Name != "Third" || !n[1].Deleted {
		t.Errorf("history after re-creating = %+v", n)
	}
}

// A rule's history names its writers; a deleted rule leaves its last revision and a tombstone,
// and a rule created again with its ID continues them, so its first update does not fail on the
// old versions' keys.
func TestRuleHistoryAcrossDeleteAndRecreate(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "r1", createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-HR-001", "name": "Rules", "businessDomain": "testing", "priority": "HIGH"}}, nil, "")
	rule := map[string]any{"ruleId": "rule-1", "name": "Severity", "ruleType": "BUSINESS", "priority": "HIGH", "order": 5, "status": "ACTIVE",
		"conditions": []any{map[string]any{"field": "error_count", "operator": ">=", "value": 100, "weight": 3}},
		"actions":    []any{map[string]any{"type": "notify", "parameters": map[string]any{"channel": "ops"}}}}
	const create = `mutation($in: RuleInput!) { createRule(capabilityId: "CAP-HR-001", input: $in) { revision } }`
	const update = `mutation($rev: Int!, $name: String!) { updateRule(capabilityId: "CAP-HR-001", ruleId: "rule-1", expectedRevision: $rev, input: {name: $name}) { revision } }`
	h.as(t, "alice-key", "r2", create, map[string]any{"in": rule}, nil, "")
	h.as(t, "bob-key", "r3", update, map[string]any{"rev": 1, "name": "Severity v2"}, nil, "")
	h.as(t, "bob-key", "r4", `mutation { deleteRule(capabilityId: "CAP-HR-001", ruleId: "rule-1") }`, nil, nil, "")
	var created struct{ CreateRule struct{ Revision int } }
	h.as(t, "alice-key", "r5", create, map[string]any{"in": rule}, &created, "")
	if created.CreateRule.Revision != 4 {
		t.Errorf("re-created rule revision = %d, want 4 (after the tombstone's 3)", created.CreateRule.Revision)
	}
	h.as(t, "alice-key", "r6", update, map[string]any{"rev": 4, "name": "Severity v3"}, nil, "")
	var out struct {
		Capability struct {
			Rules []struct {
				Revision int
				History  struct{ Nodes []versionNode }
			}
		}
	}
	h.as(t, "ui-key", "r7", `{ capability(id: "CAP-HR-001") { rules { revision history { nodes { `+versionFields+` } } } } }`, nil, &out, "")
	if len(out.Capability.Rules) != 1 {
		t.Fatalf("rules = %+v", out.Capability.Rules)
	}
	n := out.Capability.Rules[0].History.Nodes
	want := []struct {
		rev     int
		name    string
		actor   string
		deleted bool
	}{{4, "Severity", "alice", false}, {3, "Severity v2", "bob", true}, {2, "Severity v2", "bob", false}, {1, "Severity", "alice", false}}
	if len(n) != len(want) {
		t.Fatalf("rule history = %+v", n)
	}
	for i, w := range want {
		if n[i].Revision != w.rev || n[i].Name != w.name || n[i].Actor.Name != w.actor || n[i].Deleted != w.deleted ||
			n[i].ID != "CAP-HR-001/rules/rule-1@"+strconv.Itoa(w.rev) {
			t.Errorf("rule version %d = %+v, want %+v", i, n[i], w)
		}
	}
}
