package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/internal/memdyn"
)

// changeNode is a node of a ChangeConnection.
type changeNode struct {
	ID           string
	At           string
	CapabilityID string
	Entity       string
	EntityID     string
	Action       string
	Revision     *int
	Actor        struct{ Name, Role string }
	RequestID    *string
	Fields       []string
	Detail       *string
}

const changeFields = `id at capabilityId entity entityId action revision actor { name role } requestId fields detail`

// changesOf reads every change of a capability with Query.changes, pages of `first`, checking
// that the pages join without a gap or a duplicate and that each costs one request.
func (h historyHarness) changesOf(t *testing.T, capabilityID string, first int) []changeNode {
	t.Helper()
	var all []changeNode
	after := ""
	for range 100 {
		var out struct {
			Changes struct {
				Edges []struct {
					Cursor string
					Node   changeNode
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		vars := map[string]any{"cap": capabilityID, "first": first}
		if after != "" {
			vars["after"] = after
		}
		h.admin(t, `query($cap: ID, $first: Int, $after: String) { changes(capabilityId: $cap, first: $first, after: $after) { edges { cursor node { `+changeFields+` } } pageInfo { hasNextPage endCursor } } }`, vars, &out)
		if n := h.env.Counter.Total(); n != 1 {
			t.Errorf("a page of a capability's changes took %d requests, want 1", n)
		}
		for _, e := range out.Changes.Edges {
			if e.Cursor != e.Node.ID {
				t.Errorf("cursor %q differs from the change's id %q", e.Cursor, e.Node.ID)
			}
			all = append(all, e.Node)
		}
		if !out.Changes.PageInfo.HasNextPage {
			seen := map[string]bool{}
			for _, c := range all {
				if seen[c.ID] {
					t.Errorf("change %s listed twice", c.ID)
				}
				seen[c.ID] = true
			}
			return all
		}
		after = *out.Changes.PageInfo.EndCursor
	}
	t.Fatal("changes never ended")
	return nil
}

// admin posts an operation as the admin alice, fails on any error, and decodes data into out.
func (h historyHarness) admin(t *testing.T, query string, vars map[string]any, out any) *gqlResponse {
	t.Helper()
	resp := h.doAs(t, "alice-key", query, vars)
	if len(resp.Errors) > 0 {
		t.Fatalf("%s: %s", query, resp.Body)
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		t.Fatalf("decode %s: %v", resp.Data, err)
	}
	return resp
}

func (c changeNode) String() string {
	rev := "-"
	if c.Revision != nil {
		rev = fmt.Sprint(*c.Revision)
	}
	req := "-"
	if c.RequestID != nil {
		req = *c.RequestID
	}
	return fmt.Sprintf("%s %s %s r%s %s/%s %s [%s]", c.Entity, c.Action, c.EntityID, rev, c.Actor.Name, c.Actor.Role, req, strings.Join(c.Fields, ","))
}

// Every mutation appends exactly one change (recordMetrics one per component it reported on, a
// finishing deployment one more per component whose version it moved),
// with its entity, action, the capability's revision after it, the actor, the request and the
// top-level fields it changed; the capability's changes list them oldest first, and pages of
// any size join without a gap or a duplicate. A delete records each of its three steps, and
// its changes outlive it.
func TestEveryMutationRecordsOneChange(t *testing.T) {
	h := newHistoryHarness(t)
	const capID = "CAP-FEED-001"
	steps := []struct{ key, req, query string }{
		{"alice-key", "q01", `mutation { createCapability(input: {capabilityId: "CAP-FEED-001", name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`},
		{"bob-key", "q02", `mutation { updateCapability(id: "CAP-FEED-001", expectedRevision: 1, input: {owner: "feed-team", description: "d"}) { revision } }`},
		{"alice-key", "q03", `mutation { transitionCapability(id: "CAP-FEED-001", to: DEVELOPMENT, expectedRevision: 2) { revision } }`},
		{"alice-key", "q04", `mutation { addComponent(capabilityId: "CAP-FEED-001", input: {componentId: "feed-api-1", name: "API", componentType: "api-server", order: 1, sla: {availability: 99.9, responseTime: 200, errorRate: 1}}) { revision } }`},
		{"alice-key", "q05", `mutation { addComponent(capabilityId: "CAP-FEED-001", input: {componentId: "feed-db-1", name: "DB", componentType: "database", order: 2}) { revision } }`},
		{"alice-key", "q06", `mutation { updateComponent(capabilityId: "CAP-FEED-001", componentId: "feed-db-1", expectedRevision: 1, input: {order: 3, version: "15.2"}) { revision } }`},
		{"alice-key", "q07", `mutation { addDependency(capabilityId: "CAP-FEED-001", input: {sourceComponentId: "feed-api-1", targetComponentId: "feed-db-1", dependencyType: RUNTIME, criticality: HIGH}) { id } }`},
		{"alice-key", "q08", `mutation { startJob(capabilityId: "CAP-FEED-001", input: {jobId: "JOB-FEED-1", jobType: DEPLOYMENT, status: RUNNING, targetComponents: [{componentId: "feed-api-1", fromVersion: "1", toVersion: "2"}]}) { revision } }`},
		{"alice-key", "q09", `mutation { updateJob(jobId: "JOB-FEED-1", expectedRevision: 1, input: {status: COMPLETED}) { revision } }`},
		{"alice-key", "q10", fmt.Sprintf(`mutation { recordMetrics(inputs: [
			{capabilityId: "CAP-FEED-001", componentId: "feed-api-1", metricType: PERFORMANCE, timestamp: %q, interval: "1m", values: {availability: {value: 99.99}, latency: {p50: 50, p95: 100, p99: 150, max: 300}, errors: {rate: 0.1, count: 1}}},
			{capabilityId: "CAP-FEED-001", componentId: "feed-api-1", metricType: PERFORMANCE, timestamp: %q, interval: "1m", values: {availability: {value: 99.99}}},
			{capabilityId: "CAP-FEED-001", componentId: "feed-db-1", metricType: BUSINESS, timestamp: %q, interval: "1m", values: {availability: {value: 50}}}]) { recorded } }`,
			testNow.Add(-2*time.Minute).Format(time.RFC3339), testNow.Add(-time.Minute).Format(time.RFC3339), testNow.Add(-time.Minute).Format(time.RFC3339))},
		{"alice-key", "q11", `mutation { createRule(capabilityId: "CAP-FEED-001", input: {ruleId: "feed-rule", name: "R", ruleType: BUSINESS, priority: HIGH, order: 1, status: ACTIVE, conditions: [{field: "amount", operator: ">=", value: 1, weight: 1}], actions: [{type: "notify", parameters: {channel: "ops"}}]}) { revision } }`},
		{"alice-key", "q12", `mutation { updateRule(capabilityId: "CAP-FEED-001", ruleId: "feed-rule", expectedRevision: 1, input: {order: 2}) { revision } }`},
		{"alice-key", "q13", `mutation { deleteRule(capabilityId: "CAP-FEED-001", ruleId: "feed-rule") }`},
		{"alice-key", "q14", `mutation { removeDependency(capabilityId: "CAP-FEED-001", sourceComponentId: "feed-api-1", targetComponentId: "feed-db-1") }`},
		{"alice-key", "q15", `mutation { removeComponent(capabilityId: "CAP-FEED-001", componentId: "feed-db-1", cascade: true) }`},
	}
	for _, s := range steps {
		h.as(t, s.key, s.req, s.query, nil, nil, "")
	}
	want := []string{
		"CAPABILITY CREATED CAP-FEED-001 r1 alice/admin q01 []",
		"CAPABILITY UPDATED CAP-FEED-001 r2 bob/admin q02 [description,owner]",
		"CAPABILITY TRANSITIONED CAP-FEED-001 r3 alice/admin q03 [status]",
		"COMPONENT CREATED feed-api-1 r3 alice/admin q04 []",
		"COMPONENT CREATED feed-db-1 r3 alice/admin q05 []",
		"COMPONENT UPDATED feed-db-1 r3 alice/admin q06 [order,version]",
		"DEPENDENCY CREATED feed-api-1->feed-db-1 r3 alice/admin q07 []",
		"JOB CREATED JOB-FEED-1 r3 alice/admin q08 []",
		"JOB TRANSITIONED JOB-FEED-1 r3 alice/admin q09 [duration,endTime,metrics,status,targetComponents]",
		"COMPONENT UPDATED feed-api-1 r3 alice/admin q09 [version]",
		"METRIC RECORDED feed-api-1 r3 alice/admin q10 [health]",
		"METRIC RECORDED feed-db-1 r3 alice/admin q10 []",
		"RULE CREATED feed-rule r3 alice/admin q11 []",
		"RULE UPDATED feed-rule r3 alice/admin q12 [order]",
		"RULE DELETED feed-rule r3 alice/admin q13 []",
		"DEPENDENCY DELETED feed-api-1->feed-db-1 r3 alice/admin q14 []",
		"COMPONENT DELETED feed-db-1 r3 alice/admin q15 []",
	}
	check := func(got []changeNode, want []string) {
		t.Helper()
		var lines []string
		for _, c := range got {
			lines = append(lines, c.String())
			if c.CapabilityID != capID || c.At == "" {
				t.Errorf("change %s: capabilityId %q, at %q", c, c.CapabilityID, c.At)
			}
		}
		if !slices.Equal(lines, want) {
			t.Errorf("changes =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
	for _, first := range []int{100, 1, 3, 7} {
		check(h.changesOf(t, capID, first), want)
	}

	// Capability.changes lists the same, and filters by entity.
	var viaCap struct {
		Capability struct {
			All  struct{ Nodes []changeNode }
			Jobs struct{ Nodes []changeNode }
		}
	}
	h.admin(t, `{ capability(id: "CAP-FEED-001") { all: changes(first: 100) { nodes { `+changeFields+` } } jobs: changes(entities: [JOB, DEPENDENCY]) { nodes { `+changeFields+` } } } }`, nil, &viaCap)
	check(viaCap.Capability.All.Nodes, want)
	check(viaCap.Capability.Jobs.Nodes, []string{want[6], want[7], want[8], want[15]})
	if n := h.env.Counter.Total(); n != 3 {
		t.Errorf("capability with two changes fields took %d requests, want 3 (the capability, a Query each)", n)
	}

	// The delete: one change per step, all kept after the capability is gone.
	h.as(t, "bob-key", "q16", `mutation { deleteCapability(id: "CAP-FEED-001", expectedRevision: 3) }`, nil, nil, "")
	got := h.changesOf(t, capID, 5)
	want = append(want, "CAPABILITY DELETED CAP-FEED-001 r4 bob/admin q16 []", "CAPABILITY DELETED CAP-FEED-001 r4 bob/admin q16 []", "CAPABILITY DELETED CAP-FEED-001 r4 bob/admin q16 []")
	check(got, want)
	var details []string
	for _, c := range got[len(got)-3:] {
		details = append(details, *c.Detail)
	}
	if !slices.Equal(details, []string{"marked deleting: gone from every read", "partition removed (history and changes kept)", "metadata removed"}) {
		t.Errorf("the delete's steps = %q", details)
	}

	// Created again: the new capability's changes come after the deleted one's.
	h.as(t, "alice-key", "q17", `mutation { createCapability(input: {capabilityId: "CAP-FEED-001", name: "Again", businessDomain: "testing", priority: LOW}) { revision } }`, nil, nil, "")
	check(h.changesOf(t, capID, 100), append(want, "CAPABILITY CREATED CAP-FEED-001 r5 alice/admin q17 []"))
}

// A refused write (stale revision, bad input, a component ID taken) and a transaction that fails
// at commit leave no change; the write that then commits leaves exactly one.
func TestFailedWritesLeaveNoChange(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "c1", `mutation { createCapability(input: {capabilityId: "CAP-FEED-002", name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`, nil, nil, "")
	refused := []struct{ code, query string }{
		{"CONFLICT", `mutation { updateCapability(id: "CAP-FEED-002", expectedRevision: 7, input: {owner: "x"}) { revision } }`},
		{"CONFLICT", `mutation { createCapability(input: {capabilityId: "CAP-FEED-002", name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`},
		{"CONFLICT", `mutation { addComponent(capabilityId: "CAP-FEED-002", input: {componentId: "api-server-alert-001", name: "Taken", componentType: "api-server", order: 1}) { revision } }`},
		{"BAD_USER_INPUT", `mutation { addComponent(capabilityId: "CAP-FEED-002", input: {componentId: "bad id", name: "x", componentType: "api-server", order: 1}) { revision } }`},
		{"BAD_USER_INPUT", `mutation { transitionCapability(id: "CAP-FEED-002", to: RETIRING, expectedRevision: 1) { revision } }`},
		{"NOT_FOUND", `mutation { removeComponent(capabilityId: "CAP-FEED-002", componentId: "nothing-here") }`},
	}
	for _, r := range refused {
		h.as(t, "alice-key", "refused", r.query, nil, nil, r.code)
	}
	if got := h.changesOf(t, "CAP-FEED-002", 50); len(got) != 1 {
		t.Fatalf("after refused writes: %v, want the create only", got)
	}

	// The transaction fails at commit (the backend answers every TransactWriteItems with an
	// error): the mutation fails and no change is recorded.
	h.env.Mem.SetFaults(&memdyn.Faults{Fail: func(op, table, index string) string {
		if op == "TransactWriteItems" {
			return "InternalServerError"
		}
		return ""
	}})
	resp := h.doAs(t, "alice-key", `mutation { updateCapability(id: "CAP-FEED-002", expectedRevision: 1, input: {owner: "x"}) { revision } }`, nil)
	h.env.Mem.SetFaults(nil)
	if len(resp.Errors) == 0 || resp.Extensions.DynamoDB.Operations["TransactWriteItems"] == 0 {
		t.Fatalf("the failing commit = %s", resp.Body)
	}
	if got := h.changesOf(t, "CAP-FEED-002", 50); len(got) != 1 {
		t.Fatalf("after a failed commit: %v, want the create only", got)
	}
	h.as(t, "alice-key", "c2", `mutation { updateCapability(id: "CAP-FEED-002", expectedRevision: 1, input: {owner: "x"}) { revision } }`, nil, nil, "")
	got := h.changesOf(t, "CAP-FEED-002", 50)
	if len(got) != 2 || got[1].String() != "CAPABILITY UPDATED CAP-FEED-002 r2 alice/admin c2 [owner]" {
		t.Fatalf("after the write that committed: %v", got)
	}
}

// Viewers read changes; an API key's name is an admin's to see (others get "hidden" and the
// role); the server's own names are shown to everyone.
func TestChangeActorNameIsForAdmins(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "v1", `mutation { createCapability(input: {capabilityId: "CAP-FEED-003", name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`, nil, nil, "")
	const q = `{ changes(capabilityId: "CAP-FEED-003") { nodes { actor { name role } requestId } } }`
	for _, c := range []struct{ key, name string }{{"alice-key", "alice"}, {"bob-key", "alice"}, {"ui-key", "hidden"}, {"", "hidden"}} {
		var out struct {
			Changes struct {
				Nodes []struct {
					Actor     struct{ Name, Role string }
					RequestID *string
				}
			}
		}
		resp := h.doAs(t, c.key, q, nil)
		if len(resp.Errors) > 0 {
			t.Fatalf("as %q: %s", c.key, resp.Body)
		}
		if err := json.Unmarshal(resp.Data, &out); err != nil {
			t.Fatal(err)
		}
		if n := out.Changes.Nodes; len(n) != 1 || n[0].Actor.Name != c.name || n[0].Actor.Role != "admin" || n[0].RequestID == nil || *n[0].RequestID != "v1" {
			t.Errorf("as %q: changes = %+v, want actor %s/admin", c.key, n, c.name)
		}
	}
}

// A change ID from one capability is no cursor for another, and a cursor changed by hand is
// refused; first is bounded.
func TestChangeCursorsAreChecked(t *testing.T) {
	h := newHistoryHarness(t)
	for _, id := range []string{"CAP-FEED-004", "CAP-FEED-005"} {
		h.as(t, "alice-key", "k", `mutation($id: ID!) { createCapability(input: {capabilityId: $id, name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`, map[string]any{"id": id}, nil, "")
	}
	id := h.changesOf(t, "CAP-FEED-004", 10)[0].ID
	for _, after := range []string{id, id[:len(id)-2] + "AA", "garbage"} {
		resp := h.doAs(t, "alice-key", `query($a: String) { changes(capabilityId: "CAP-FEED-005", after: $a) { nodes { id } } }`, map[string]any{"a": after})
		if resp.code(0) != "BAD_USER_INPUT" {
			t.Errorf("after %q on another capability = %s", after, resp.Body)
		}
	}
	resp := h.doAs(t, "alice-key", `{ changes(first: 101) { nodes { id } } }`, nil)
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("first: 101 = %s", resp.Body)
	}
	// The same ID continues the catalogue-wide feed after that change.
	var out struct{ Changes struct{ Nodes []changeNode } }
	h.as(t, "alice-key", "k", `query($a: String) { changes(after: $a) { nodes { `+changeFields+` } } }`, map[string]any{"a": id}, &out, "")
	if n := out.Changes.Nodes; len(n) != 1 || n[0].CapabilityID != "CAP-FEED-005" {
		t.Errorf("the feed after CAP-FEED-004's change = %v, want CAP-FEED-005's", n)
	}
}

// archiveMetrics records one METRIC ARCHIVED change per component and hour it moved to S3, in
// the transaction that deletes the hour's samples, with how many it moved; the catalogue audit
// holds after it (the WriteSeq that orders the change moves on METADATA and its index items).
func TestArchiveRecordsAChangePerComponentHour(t *testing.T) {
	h := newHybridHarness(t)
	h.ok(t, `mutation { addComponent(capabilityId: "CAP-FRAUD-DET-001", input: {componentId: "feed-arch-1", name: "Archived", componentType: "cache", order: 61}) { componentId } }`, nil, nil)
	var inputs []map[string]any
	hours := map[time.Time]int{}
	for i := range 4 {
		at := testNow.Add(-3*time.Hour + time.Duration(i)*20*time.Minute).Truncate(5 * time.Minute)
		hours[at.Truncate(time.Hour)]++
		inputs = append(inputs, map[string]any{"capabilityId": "CAP-FRAUD-DET-001", "componentId": "feed-arch-1", "metricType": "PERFORMANCE",
			"timestamp": at.Format(time.RFC3339), "interval": "5m", "values": map[string]any{"availability": map[string]any{"value": 99.9}}})
	}
	h.ok(t, `mutation($in: [MetricInput!]!) { recordMetrics(inputs: $in) { recorded } }`, map[string]any{"in": inputs}, nil)
	h.ok(t, `mutation($b: DateTime!) { archiveMetrics(before: $b) { objectsWritten } }`, map[string]any{"b": testNow.Add(-time.Hour).Format(time.RFC3339)}, nil)
	var out struct {
		Changes struct{ Nodes []changeNode }
	}
	h.ok(t, `{ changes(capabilityId: "CAP-FRAUD-DET-001", entities: [METRIC], first: 100) { nodes { `+changeFields+` } } }`, nil, &out)
	var archived []string
	recorded := 0
	for _, c := range out.Changes.Nodes {
		if c.EntityID != "feed-arch-1" {
			continue
		}
		switch c.Action {
		case "RECORDED":
			recorded++
		case "ARCHIVED":
			if len(archived) == 0 && recorded != 1 {
				t.Errorf("ARCHIVED before the samples were RECORDED: %v", out.Changes.Nodes)
			}
			archived = append(archived, *c.Detail)
		}
	}
	var want []string
	for _, n := range hours {
		want = append(want, fmt.Sprintf("%d sample%s moved to the archive", n, map[bool]string{true: "", false: "s"}[n == 1]))
	}
	slices.Sort(want)
	slices.Sort(archived)
	if recorded != 1 || !slices.Equal(archived, want) {
		t.Errorf("feed-arch-1: %d RECORDED, ARCHIVED %q; want 1 and %q (one per hour)", recorded, archived, want)
	}
}

// An artifact upload never reaches the server (the pipeline PUTs to the object store): the
// change feed records the upload URL the server issued, once per URL, and nothing for a
// refused name.
func TestArtifactUploadRecordsAChange(t *testing.T) {
	h := newHybridHarness(t)
	h.ok(t, `mutation { createArtifactUpload(jobId: "JOB-DEPLOY-456", name: "logs/smoke.log", contentType: "text/plain") { url } }`, nil, nil)
	if ops := h.env.Counter.Ops(); ops["TransactWriteItems"] != 1 {
		t.Errorf("createArtifactUpload requests = %v, want one TransactWriteItems (its change)", ops)
	}
	if resp := h.do(t, `mutation { createArtifactUpload(jobId: "JOB-DEPLOY-456", name: "../x", contentType: "text/plain") { url } }`, nil); resp.code(0) != "BAD_USER_INPUT" {
		t.Fatalf("a bad name = %s", resp.Body)
	}
	var out struct{ Changes struct{ Nodes []changeNode } }
	h.ok(t, `{ changes(capabilityId: "CAP-ALERT-MGT-001", entities: [ARTIFACT]) { nodes { `+changeFields+` } } }`, nil, &out)
	if n := out.Changes.Nodes; len(n) != 1 || n[0].EntityID != "JOB-DEPLOY-456/logs/smoke.log" || n[0].Action != "CREATED" || n[0].Detail == nil {
		t.Errorf("artifact changes = %v", n)
	}
}

// changes(last:, before:) reads newest first: each page's edges stay oldest first (Relay),
// pageInfo.hasPreviousPage is exact and startCursor continues, without a gap or a duplicate,
// for a capability's changes (1 request a page) and the catalogue's (filtered by entity);
// mixing the two directions is BAD_USER_INPUT.
func TestChangesNewestFirst(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "k1", `mutation { createCapability(input: {capabilityId: "CAP-LAST-001", name: "Last", businessDomain: "testing", priority: HIGH}) { revision } }`, nil, nil, "")
	h.as(t, "alice-key", "k2", `mutation { createCapability(input: {capabilityId: "CAP-LAST-002", name: "Other", businessDomain: "testing", priority: LOW}) { revision } }`, nil, nil, "")
	for i, owner := range []string{"a", "b", "c"} {
		h.as(t, "alice-key", fmt.Sprintf("u%d", i), `mutation($o: String, $r: Int!) { updateCapability(id: "CAP-LAST-001", expectedRevision: $r, input: {owner: $o}) { revision } }`, map[string]any{"o": owner, "r": i + 1}, nil, "")
	}
	forward := h.changesOf(t, "CAP-LAST-001", 100)
	if len(forward) != 4 {
		t.Fatalf("CAP-LAST-001 has %d changes, want 4", len(forward))
	}
	type page struct {
		Edges []struct {
			Cursor string
			Node   changeNode
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
	}
	// backwards reads a connection with last/before until hasPreviousPage is false and returns
	// its changes oldest first.
	backwards := func(t *testing.T, query string, vars map[string]any, last int, requests int) []changeNode {
		t.Helper()
		var all []changeNode
		before := ""
		for range 20 {
			var out struct{ Changes page }
			v := map[string]any{"last": last}
			for k, x := range vars {
				v[k] = x
			}
			if before != "" {
				v["before"] = before
			}
			h.admin(t, query, v, &out)
			if n := h.env.Counter.Total(); requests > 0 && n != requests {
				t.Errorf("a page of last %d took %d requests, want %d", last, n, requests)
			}
			p := out.Changes
			var nodes []changeNode
			for i, e := range p.Edges {
				if e.Cursor != e.Node.ID {
					t.Errorf("edge cursor %q is not the change's id", e.Cursor)
				}
				if i > 0 && e.Node.At < p.Edges[i-1].Node.At {
					t.Errorf("a page is not oldest first: %v", p.Edges)
				}
				nodes = append(nodes, e.Node)
			}
			all = append(nodes, all...)
			if len(p.Edges) > 0 && (p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Edges[0].Cursor ||
				p.PageInfo.EndCursor == nil || *p.PageInfo.EndCursor != p.Edges[len(p.Edges)-1].Cursor) {
				t.Errorf("startCursor/endCursor do not name the page's first and last edges: %+v", p.PageInfo)
			}
			if p.PageInfo.HasNextPage {
				t.Error("a backward page has hasNextPage")
			}
			if !p.PageInfo.HasPreviousPage {
				return all
			}
			before = *p.PageInfo.StartCursor
		}
		t.Fatal("the backward pages never ended")
		return nil
	}
	ids := func(cs []changeNode) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	capQuery := `query($cap: ID, $last: Int, $before: String) { changes(capabilityId: $cap, last: $last, before: $before) { edges { cursor node { ` + changeFields + ` } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
	for _, last := range []int{1, 3, 4, 10} {
		got := backwards(t, capQuery, map[string]any{"cap": "CAP-LAST-001"}, last, 1)
		if !slices.Equal(ids(got), ids(forward)) {
			t.Errorf("last %d: %v, want %v", last, got, forward)
		}
	}
	// hasPreviousPage exactly: last 4 of 4 has none before it, last 3 has one.
	var out struct{ Changes page }
	h.admin(t, capQuery, map[string]any{"cap": "CAP-LAST-001", "last": 4}, &out)
	if out.Changes.PageInfo.HasPreviousPage || len(out.Changes.Edges) != 4 {
		t.Errorf("last 4 of 4: %+v", out.Changes.PageInfo)
	}
	h.admin(t, capQuery, map[string]any{"cap": "CAP-LAST-001", "last": 3}, &out)
	if !out.Changes.PageInfo.HasPreviousPage || len(out.Changes.Edges) != 3 || out.Changes.Edges[2].Node.ID != forward[3].ID {
		t.Errorf("last 3 of 4: %+v", out.Changes)
	}
	// Capability.changes takes the same arguments.
	var capOut struct{ Capability struct{ Changes page } }
	h.admin(t, `{ capability(id: "CAP-LAST-001") { changes(last: 1) { edges { cursor node { id fields } } pageInfo { hasPreviousPage startCursor } } } }`, nil, &capOut)
	if e := capOut.Capability.Changes.Edges; len(e) != 1 || e[0].Node.ID != forward[3].ID || !capOut.Capability.Changes.PageInfo.HasPreviousPage {
		t.Errorf("Capability.changes(last: 1) = %+v", capOut.Capability.Changes)
	}

	// The catalogue's feed newest first: both capabilities, only CAPABILITY changes (all of
	// them here), and the order of the forward feed.
	feedQuery := `query($last: Int, $before: String, $e: [ChangeEntity!]) { changes(last: $last, before: $before, entities: $e) { edges { cursor node { ` + changeFields + ` } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
	var fwd struct{ Changes page }
	h.admin(t, `{ changes(first: 100, entities: [CAPABILITY]) { edges { cursor node { `+changeFields+` } } pageInfo { hasNextPage } } }`, nil, &fwd)
	var want []string
	for _, e := range fwd.Changes.Edges {
		want = append(want, e.Node.ID)
	}
	if len(want) < 5 {
		t.Fatalf("the forward feed has %d capability changes, want at least 5", len(want))
	}
	for _, last := range []int{2, 100} {
		got := backwards(t, feedQuery, map[string]any{"e": []string{"CAPABILITY"}}, last, 0)
		if !slices.Equal(ids(got), want) {
			t.Errorf("feed last %d: %d changes, not the forward feed's %d in order", last, len(got), len(want))
		}
	}
	if got := backwards(t, feedQuery, map[string]any{"e": []string{"RULE"}}, 10, 0); len(got) != 0 {
		t.Errorf("rule changes newest first = %v, want none", got)
	}

	for _, q := range []string{
		`{ changes(first: 2, last: 2) { nodes { id } } }`,
		`{ changes(capabilityId: "CAP-LAST-001", last: 2, after: "x") { nodes { id } } }`,
		`{ changes(first: 2, before: "x") { nodes { id } } }`,
		`{ changes(last: 0) { nodes { id } } }`,
		`{ changes(last: 101) { nodes { id } } }`,
		`{ changes(last: 1, before: "garbage") { nodes { id } } }`,
		`{ capability(id: "CAP-LAST-001") { changes(first: 1, last: 1) { nodes { id } } } }`,
	} {
		h.env.Counter.Reset()
		resp := h.doAs(t, "alice-key", q, nil)
		if resp.code(0) != "BAD_USER_INPUT" {
			t.Errorf("%s = %s, want BAD_USER_INPUT", q, resp.Body)
		}
	}
	// CAP-LAST-002's change is no valid before for CAP-LAST-001's.
	other := h.changesOf(t, "CAP-LAST-002", 10)[0].ID
	resp := h.doAs(t, "alice-key", `query($b: String) { changes(capabilityId: "CAP-LAST-001", last: 1, before: $b) { nodes { id } } }`, map[string]any{"b": other})
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("another capability's before = %s", resp.Body)
	}
}

// TestChangesFirstKeepsItsDefault: first keeps the default (first: Int = 50) on both
// changes connections, and last alone still pages backwards: the schema's default is told from
// a first the request gave, written or by variable, which with last is refused.
func TestChangesFirstKeepsItsDefault(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "k1", `mutation { createCapability(input: {capabilityId: "CAP-FIRST-01", name: "First", businessDomain: "testing", priority: HIGH}) { revision } }`, nil, nil, "")
	for _, typ := range []string{"Query", "Capability"} {
		var schema struct {
			Type struct {
				Fields []struct {
					Name string
					Args []struct {
						Name         string
						DefaultValue *string
					}
				}
			}
		}
		h.admin(t, `query($t: String!) { type: __type(name: $t) { fields { name args { name defaultValue } } } }`, map[string]any{"t": typ}, &schema)
		found := false
		for _, f := range schema.Type.Fields {
			for _, a := range f.Args {
				if f.Name == "changes" && a.Name == "first" {
					found = true
					if a.DefaultValue == nil || *a.DefaultValue != "50" {
						t.Errorf("%s.changes(first:) default = %v, want 50", typ, a.DefaultValue)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s.changes has no first", typ)
		}
	}
	for _, c := range []struct {
		q    string
		vars map[string]any
		ok   bool
	}{
		{`{ changes(capabilityId: "CAP-FIRST-01", last: 1) { nodes { id } } }`, nil, true},
		{`{ changes(capabilityId: "CAP-FIRST-01", first: null, last: 1) { nodes { id } } }`, nil, true},
		{`query($f: Int) { changes(capabilityId: "CAP-FIRST-01", first: $f, last: 1) { nodes { id } } }`, nil, true},
		{`query($f: Int) { changes(capabilityId: "CAP-FIRST-01", first: $f, last: 1) { nodes { id } } }`, map[string]any{"f": nil}, true},
		{`{ capability(id: "CAP-FIRST-01") { changes(last: 1) { nodes { id } } } }`, nil, true},
		{`{ changes(capabilityId: "CAP-FIRST-01", first: 50, last: 1) { nodes { id } } }`, nil, false},
		{`query($f: Int) { changes(capabilityId: "CAP-FIRST-01", first: $f, last: 1) { nodes { id } } }`, map[string]any{"f": 50}, false},
		{`{ capability(id: "CAP-FIRST-01") { changes(first: 50, last: 1) { nodes { id } } } }`, nil, false},
	} {
		resp := h.doAs(t, "alice-key", c.q, c.vars)
		if c.ok && len(resp.Errors) > 0 {
			t.Errorf("%s %v: %s", c.q, c.vars, resp.Body)
		}
		if !c.ok && resp.code(0) != "BAD_USER_INPUT" {
			t.Errorf("%s %v = %s, want BAD_USER_INPUT", c.q, c.vars, resp.Body)
		}
	}
}
