package graph_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

const (
	alertCap = "CAP-ALERT-MGT-001"
	fraudCap = "CAP-FRAUD-DET-001"
)

// Every object type with an id implements Node: a client cache may key all of them by
// __typename and id, and node(id:) fetches any of them. Change is the exception: its id is a
// signed position in the change feed (a cursor), unique per change, so a client cache may key
// it all the same; node(id:) does not fetch changes (docs/api.md).
func TestEveryTypeWithAnIDImplementsNode(t *testing.T) {
	s := schema(t)
	for _, name := range slices.Sorted(maps.Keys(s.Types)) {
		def := s.Types[name]
		if def.Kind != ast.Object || strings.HasPrefix(name, "__") || def.Fields.ForName("id") == nil || name == "Change" {
			continue
		}
		if !slices.Contains(def.Interfaces, "Node") {
			t.Errorf("type %s has an id but does not implement Node", name)
		}
	}
	if node := s.Types["Node"]; node == nil || node.Kind != ast.Interface || node.Description == "" {
		t.Fatalf("interface Node is missing or undocumented")
	}
	if got := len(s.GetPossibleTypes(s.Types["Node"])); got != 7 {
		t.Errorf("Node has %d implementations, want 7", got)
	}
}

// nodeOf posts node(id:) and returns its __typename and id (empty for null) and the response.
func nodeOf(t *testing.T, h *harness, key, id string) (typename, gotID string, resp *gqlResponse) {
	t.Helper()
	resp = h.doAs(t, key, `query($id: ID!) { node(id: $id) { __typename id } }`, map[string]any{"id": id})
	if len(resp.Errors) > 0 {
		t.Fatalf("node(%q): %s", id, resp.Body)
	}
	var out struct {
		Node *struct{ Typename, ID string }
	}
	raw := strings.Replace(string(resp.Data), `"__typename"`, `"typename"`, 1)
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatal(err)
	}
	if out.Node == nil {
		return "", "", resp
	}
	return out.Node.Typename, out.Node.ID, resp
}

// node(id:) resolves every type from its id alone, in one DynamoDB request.
func TestNodeResolvesEveryTypeInOneRequest(t *testing.T) {
	h := newHarness(t)
	// Versions: one update of the capability and of a rule.
	var rev struct {
		Capability struct {
			Revision int
			Rules    []struct {
				RuleID   string
				Revision int
			}
		}
	}
	h.ok(t, `{ capability(id: "`+alertCap+`") { revision rules { ruleId revision } } }`, nil, &rev)
	h.ok(t, `mutation($r: Int!) { updateCapability(id: "`+alertCap+`", expectedRevision: $r, input: {owner: "team-b"}) { revision } }`, map[string]any{"r": rev.Capability.Revision}, nil)
	rule := rev.Capability.Rules[0]
	h.ok(t, `mutation($id: ID!, $r: Int!) { updateRule(capabilityId: "`+alertCap+`", ruleId: $id, expectedRevision: $r, input: {name: "Renamed"}) { revision } }`, map[string]any{"id": rule.RuleID, "r": rule.Revision}, nil)

	tests := []struct{ typename, id string }{
		{"Capability", alertCap},
		{"Component", alertCap + "/components/api-server-alert-001"},
		{"Dependency", alertCap + "/dependencies/api-server-alert-001->database-alert-001"},
		{"Job", alertCap + "/jobs/JOB-DEPLOY-456"},
		{"Rule", alertCap + "/rules/" + rule.RuleID},
		{"CapabilityVersion", alertCap + "@1"},
		{"RuleVersion", alertCap + "/rules/" + rule.RuleID + "@1"},
	}
	for _, tt := range tests {
		t.Run(tt.typename, func(t *testing.T) {
			typename, id, resp := nodeOf(t, h, "", tt.id)
			if typename != tt.typename || id != tt.id {
				t.Errorf("node(%q) = %s %q, want %s %q", tt.id, typename, id, tt.typename, tt.id)
			}
			if n := resp.Extensions.DynamoDB.Requests; n != 1 || h.env.Counter.Total() != 1 {
				t.Errorf("node(%q) cost %d requests (counted %d), want 1", tt.id, n, h.env.Counter.Total())
			}
		})
	}
}

// A well-formed id of nothing is null without an error (Relay's convention), in at most one
// request: unknown objects, an object asked for in another capability, a version never written.
func TestNodeOfNothingIsNull(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{
		"CAP-NONE-001",
		alertCap + "/components/nothing",
		fraudCap + "/components/api-server-alert-001",
		alertCap + "/dependencies/database-alert-001->api-server-alert-001",
		alertCap + "/jobs/JOB-NONE",
		fraudCap + "/jobs/JOB-DEPLOY-456",
		alertCap + "/rules/rule-none",
		fraudCap + "/rules/rule-alert-severity-mapping",
		alertCap + "@999",
		"CAP-NONE-001@1",
		alertCap + "/rules/rule-alert-severity-mapping@999",
	} {
		typename, _, resp := nodeOf(t, h, "", id)
		if typename != "" {
			t.Errorf("node(%q) = a %s, want null", id, typename)
		}
		if n := h.env.Counter.Total(); n > 1 {
			t.Errorf("node(%q) cost %d requests, want at most 1", id, n)
		}
		_ = resp
	}
}

// A malformed id is BAD_USER_INPUT naming the argument, before any DynamoDB request; so is a
// nodes(ids:) with one malformed id or more than 100.
func TestNodeMalformedIDIsBadUserInput(t *testing.T) {
	h := newHarness(t)
	for _, id := range []string{"", "CAP-1/", "CAP-1/metrics/x", "CAP-1@0", "ui->api", "CAP-1/components/x@2", strings.Repeat("x/", 5000)} {
		resp := h.do(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
		if resp.code(0) != "BAD_USER_INPUT" || !strings.Contains(resp.Errors[0].Message, "id") {
			t.Errorf("node(%.20q) = %s, want BAD_USER_INPUT naming id", id, resp.Body)
		}
		if n := h.env.Counter.Total(); n != 0 {
			t.Errorf("node(%.20q) cost %d requests, want 0", id, n)
		}
	}
	ids := make([]string, 101)
	for i := range ids {
		ids[i] = alertCap
	}
	for _, tt := range []struct {
		name string
		ids  []string
	}{{"101 ids", ids}, {"one malformed", []string{alertCap, "CAP-1//x"}}} {
		resp := h.do(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": tt.ids})
		if resp.code(0) != "BAD_USER_INPUT" || !strings.Contains(resp.Errors[0].Message, "ids") {
			t.Errorf("nodes(%s) = %s, want BAD_USER_INPUT naming ids", tt.name, resp.Body)
		}
		if n := h.env.Counter.Total(); n != 0 {
			t.Errorf("nodes(%s) cost %d requests, want 0", tt.name, n)
		}
	}
}

// nodes(ids:) answers in the order of ids, and the ids of one capability share its reads: the
// metadata of every capability in one BatchGetItem, one Query per partition range.
func TestNodesShareReads(t *testing.T) {
	h := newHarness(t)
	ids := []string{
		alertCap + "/components/api-server-alert-001",
		alertCap + "/rules/rule-alert-severity-mapping",
		fraudCap,
		alertCap + "/components/database-alert-001",
		alertCap + "/dependencies/api-server-alert-001->database-alert-001",
		"CAP-NONE-001",
		alertCap,
		alertCap + "/rules/rule-alert-escalation-timeout",
	}
	var out struct{ Nodes []*struct{ ID string } }
	resp := h.ok(t, `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": ids}, &out)
	if len(out.Nodes) != len(ids) {
		t.Fatalf("nodes = %+v, want %d entries", out.Nodes, len(ids))
	}
	for i, n := range out.Nodes {
		switch {
		case ids[i] == "CAP-NONE-001" && n != nil:
			t.Errorf("nodes[%d] = %+v, want null", i, n)
		case ids[i] != "CAP-NONE-001" && (n == nil || n.ID != ids[i]):
			t.Errorf("nodes[%d] = %+v, want %q", i, n, ids[i])
		}
	}
	// One BatchGetItem (three capabilities), one Query of components and dependencies, one
	// of rules.
	if n := resp.Extensions.DynamoDB.Requests; n != 3 {
		t.Errorf("nodes cost %d requests (%v), want 3", n, resp.Extensions.DynamoDB.Operations)
	}
}

// node(id:) of a capability plans its partition reads as capability(id:) does, through inline
// fragments: the same requests for the same selection.
func TestNodeOfCapabilityPlannedAsCapability(t *testing.T) {
	h := newHarness(t)
	const sel = `name components { name dependsOn { name } } rules { ruleId } jobs(first: 2) { nodes { jobId } }`
	var viaCap, viaNode json.RawMessage
	a := h.ok(t, `{ capability(id: "`+alertCap+`") { `+sel+` } }`, nil, &viaCap)
	b := h.ok(t, `{ node(id: "`+alertCap+`") { ... on Capability { `+sel+` } } }`, nil, &viaNode)
	if a.Extensions.DynamoDB.Requests != b.Extensions.DynamoDB.Requests {
		t.Errorf("node cost %d requests (%v), capability %d (%v)", b.Extensions.DynamoDB.Requests, b.Extensions.DynamoDB.Operations,
			a.Extensions.DynamoDB.Requests, a.Extensions.DynamoDB.Operations)
	}
	if strings.TrimPrefix(string(viaNode), `{"node"`) != strings.TrimPrefix(string(viaCap), `{"capability"`) {
		t.Errorf("node = %s, capability = %s", viaNode, viaCap)
	}
	// Metadata, components with dependencies, rules, jobs: one round trip of four requests.
	if n := b.Extensions.DynamoDB.Requests; n != 4 {
		t.Errorf("node with components, rules and jobs cost %d requests, want 4", n)
	}
	// A component's neighbours come from the one Query of its components and dependencies.
	c := h.ok(t, `{ node(id: "`+alertCap+`/components/api-server-alert-001") { ... on Component { name dependsOn { name } dependents { name } } } }`, nil, nil)
	if n := c.Extensions.DynamoDB.Requests; n != 1 {
		t.Errorf("node of a component with its neighbours cost %d requests, want 1", n)
	}
}

// Versions through node(id:) follow the history fields' roles: a viewer reads the versions of
// a live capability (as Capability.history and Rule.history show them) and gets null for those
// of a deleted one, which only an admin reads (as capabilityHistory); one request each.
func TestNodeVersionsFollowHistoryRoles(t *testing.T) {
	h := newHistoryHarness(t)
	h.as(t, "alice-key", "c", createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-HN-001", "name": "First", "businessDomain": "testing", "priority": "HIGH"}}, nil, "")
	h.as(t, "alice-key", "u", `mutation { updateCapability(id: "CAP-HN-001", expectedRevision: 1, input: {name: "Second"}) { revision } }`, nil, nil, "")
	for _, key := range []string{"ui-key", "alice-key"} {
		if typename, id, _ := nodeOf(t, h.harness, key, "CAP-HN-001@1"); typename != "CapabilityVersion" || id != "CAP-HN-001@1" {
			t.Errorf("%s: node of a live capability's version = %s %q", key, typename, id)
		}
		if n := h.env.Counter.Total(); n != 1 {
			t.Errorf("%s: node of a version cost %d requests, want 1", key, n)
		}
	}
	h.as(t, "alice-key", "d", `mutation { deleteCapability(id: "CAP-HN-001", expectedRevision: 2) }`, nil, nil, "")
	if typename, _, _ := nodeOf(t, h.harness, "ui-key", "CAP-HN-001@1"); typename != "" {
		t.Errorf("a viewer reads a deleted capability's version through node: %s", typename)
	}
	for _, id := range []string{"CAP-HN-001@1", "CAP-HN-001@3"} { // a revision and the tombstone
		if typename, got, _ := nodeOf(t, h.harness, "alice-key", id); typename != "CapabilityVersion" || got != id {
			t.Errorf("admin: node(%q) of a deleted capability = %s %q", id, typename, got)
		}
	}
	if typename, _, _ := nodeOf(t, h.harness, "alice-key", "CAP-HN-001"); typename != "" {
		t.Errorf("node of the deleted capability = %s, want null", typename)
	}
}

// Regression (#16): objects of two capabilities never share an id, and a version never shares
// the live object's. Rule.id was the ruleId, the same in every capability that reused it.
func TestIDsAreUniqueAcrossCapabilities(t *testing.T) {
	h := newHarness(t)
	rule := map[string]any{"ruleId": "rule-shared", "name": "Shared", "ruleType": "BUSINESS", "priority": "HIGH", "order": 5, "status": "ACTIVE",
		"conditions": []any{map[string]any{"field": "x", "operator": ">=", "value": 1, "weight": 1}},
		"actions":    []any{map[string]any{"type": "notify", "parameters": map[string]any{}}}}
	ids := map[string]string{}
	for _, capID := range []string{alertCap, fraudCap} {
		var out struct{ CreateRule struct{ ID, RuleID string } }
		h.ok(t, `mutation($c: ID!, $in: RuleInput!) { createRule(capabilityId: $c, input: $in) { id ruleId } }`, map[string]any{"c": capID, "in": rule}, &out)
		if want := capID + "/rules/rule-shared"; out.CreateRule.ID != want || out.CreateRule.RuleID != "rule-shared" {
			t.Errorf("rule in %s: id %q ruleId %q, want %q and rule-shared", capID, out.CreateRule.ID, out.CreateRule.RuleID, want)
		}
		ids[capID] = out.CreateRule.ID
	}
	if ids[alertCap] == ids[fraudCap] {
		t.Errorf("the rules of two capabilities share the id %q", ids[alertCap])
	}

	var all struct {
		Capabilities struct {
			Nodes []struct {
				ID, CapabilityID string
				Components       []struct{ ID, ComponentID, CapabilityID string }
				Dependencies     []struct{ ID, SourceComponentID, TargetComponentID string }
				Rules            []struct {
					ID, RuleID string
					History    struct{ Nodes []struct{ ID string } }
				}
				Jobs    struct{ Nodes []struct{ ID, JobID string } }
				History struct{ Nodes []struct{ ID string } }
			}
		}
	}
	h.ok(t, `{ capabilities(first: 10) { nodes { id capabilityId components { id componentId capabilityId } dependencies { id sourceComponentId targetComponentId }
		rules { id ruleId history(first: 5) { nodes { id } } } jobs(first: 10) { nodes { id jobId } } history(first: 5) { nodes { id } } } } }`, nil, &all)
	seen := map[string]bool{}
	unique := func(id string) {
		if seen[id] {
			t.Errorf("id %q is shared", id)
		}
		seen[id] = true
	}
	for _, c := range all.Capabilities.Nodes {
		unique(c.ID)
		for _, x := range c.Components {
			if want := c.CapabilityID + "/components/" + x.ComponentID; x.ID != want {
				t.Errorf("component id %q, want %q", x.ID, want)
			}
			unique(x.ID)
		}
		for _, d := range c.Dependencies {
			if want := c.CapabilityID + "/dependencies/" + d.SourceComponentID + "->" + d.TargetComponentID; d.ID != want {
				t.Errorf("dependency id %q, want %q", d.ID, want)
			}
			unique(d.ID)
		}
		for _, j := range c.Jobs.Nodes {
			if want := c.CapabilityID + "/jobs/" + j.JobID; j.ID != want {
				t.Errorf("job id %q, want %q", j.ID, want)
			}
			unique(j.ID)
		}
		for _, r := range c.Rules {
			unique(r.ID)
			for _, v := range r.History.Nodes {
				unique(v.ID)
			}
		}
		for _, v := range c.History.Nodes {
			unique(v.ID)
		}
	}
	if len(seen) < 20 {
		t.Errorf("only %d ids seen: the sample catalogue did not load?", len(seen))
	}
}

// Capability.component(id:) and job(id:) take the local ID or the global one; a global ID of
// another capability's component is null, one of another type BAD_USER_INPUT.
func TestLocalIDArgumentsTakeGlobalIDs(t *testing.T) {
	h := newHarness(t)
	var out struct {
		A, B *struct{ ComponentID string }
		C    *struct{ ComponentID string }
	}
	h.ok(t, `{ capability(id: "`+alertCap+`") { a: component(id: "api-server-alert-001") { componentId }
		b: component(id: "`+alertCap+`/components/api-server-alert-001") { componentId }
		c: component(id: "`+fraudCap+`/components/api-server-fraud-001") { componentId } } }`, nil, &struct{ Capability any }{&out})
	if out.A == nil || out.B == nil || out.B.ComponentID != "api-server-alert-001" || out.C != nil {
		t.Errorf("component by local, global and foreign global id = %+v %+v %+v", out.A, out.B, out.C)
	}
	var jobs struct{ A, B, C *struct{ JobID string } }
	h.ok(t, `{ a: job(id: "JOB-DEPLOY-456") { jobId } b: job(id: "`+alertCap+`/jobs/JOB-DEPLOY-456") { jobId } c: job(id: "`+fraudCap+`/jobs/JOB-DEPLOY-456") { jobId } }`, nil, &jobs)
	if jobs.A == nil || jobs.B == nil || jobs.B.JobID != "JOB-DEPLOY-456" || jobs.C != nil {
		t.Errorf("job by local, global and foreign global id = %+v %+v %+v", jobs.A, jobs.B, jobs.C)
	}
	resp := h.do(t, `{ job(id: "`+alertCap+`/rules/rule-alert-severity-mapping") { jobId } }`, nil)
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("job(id:) of a rule's id = %s, want BAD_USER_INPUT", resp.Body)
	}
}

// Root capability(id:) and node(id:) fields share one BatchGetItem of the metadata.
func TestNodeAndCapabilityRootsShareOneRead(t *testing.T) {
	h := newHarness(t)
	resp := h.ok(t, `{ a: capability(id: "`+alertCap+`") { name } b: node(id: "`+fraudCap+`") { ... on Capability { name } } c: node(id: "`+alertCap+`") { id } }`, nil, nil)
	if n := resp.Extensions.DynamoDB.Requests; n != 1 {
		t.Errorf("two capabilities through capability and node cost %d requests (%v), want 1", n, resp.Extensions.DynamoDB.Operations)
	}
}
