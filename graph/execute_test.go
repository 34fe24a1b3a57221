package graph_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
)

// execution is what the tests read of a RuleExecution.
type execution struct {
	Rule struct {
		RuleID   string
		Revision int
		Metrics  struct {
			ExecutionCount       int
			AverageExecutionTime float64
			SuccessRate          float64
			LastExecuted         *string
		}
	}
	Matched   bool
	Score     int
	Severity  *string
	Succeeded bool
	Actions   []struct {
		Type        string
		Status      string
		Message     *string
		Severity    *string
		Channels    []string
		DeliveryIDs []string `json:"deliveryIds"`
	}
}

const executeRules = `mutation($cap: ID!, $in: JSON!, $type: RuleType, $tok: String) {
	executeRules(capabilityId: $cap, input: $in, ruleType: $type, clientRequestToken: $tok) {
		rule { ruleId revision metrics { executionCount averageExecutionTime successRate lastExecuted } }
		matched score severity succeeded
		actions { type status message severity channels deliveryIds }
	} }`

func ruleMetrics(t *testing.T, h *harness, capabilityID string) map[string]int {
	t.Helper()
	var out struct {
		Capability struct {
			Rules []struct {
				RuleID  string
				Metrics *struct{ ExecutionCount int }
			}
		}
	}
	h.ok(t, `query($cap: ID!) { capability(id: $cap) { rules { ruleId metrics { executionCount } } } }`, map[string]any{"cap": capabilityID}, &out)
	m := map[string]int{}
	for _, r := range out.Capability.Rules {
		if r.Metrics != nil {
			m[r.RuleID] = r.Metrics.ExecutionCount
		}
	}
	return m
}

// executeRules carries out the actions of the seed's severity rule and counts the execution in
// its metrics; evaluateRules stays read-only.
func TestExecuteRulesSeed(t *testing.T) {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	const capID = "CAP-ALERT-MGT-001"
	before := ruleMetrics(t, h, capID)
	// evaluateRules writes nothing.
	resp := h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { evaluateRules(input: {source: "production"}) { score } } }`, nil, nil)
	if n := resp.Extensions.DynamoDB.Operations["TransactWriteItems"]; n != 0 {
		t.Errorf("evaluateRules wrote (%d transactions)", n)
	}

	var out struct{ ExecuteRules []execution }
	in := map[string]any{"source": "production", "error_count": 150, "customer_impact": "high"}
	resp = h.ok(t, executeRules, map[string]any{"cap": capID, "in": in, "type": "BUSINESS"}, &out)
	t.Logf("executeRules: %d DynamoDB requests (%v)", resp.Extensions.DynamoDB.Requests, resp.Extensions.DynamoDB.Operations)
	if n := resp.Extensions.DynamoDB.Operations["TransactWriteItems"]; n != 1 {
		t.Errorf("executeRules ran %d transactions, want 1", n)
	}
	if n := resp.Extensions.DynamoDB.Requests; n > 4 {
		t.Errorf("executeRules cost %d DynamoDB requests, want at most 4 (METADATA, RULE# range, the transaction, ...)", n)
	}
	var sev *execution
	for i, x := range out.ExecuteRules {
		if x.Rule.RuleID == "rule-alert-severity-mapping" {
			sev = &out.ExecuteRules[i]
		}
	}
	if sev == nil {
		t.Fatalf("severity rule not executed: %+v", out.ExecuteRules)
	}
	if !sev.Matched || sev.Score != 10 || sev.Severity == nil || *sev.Severity != "critical" || !sev.Succeeded {
		t.Errorf("execution = %+v, want matched, score 10, critical, succeeded", sev)
	}
	if len(sev.Actions) != 2 || sev.Actions[0].Status != "APPLIED" || sev.Actions[0].Severity == nil || *sev.Actions[0].Severity != "critical" ||
		sev.Actions[1].Status != "QUEUED" || fmt.Sprint(sev.Actions[1].Channels) != "[pagerduty slack]" || len(sev.Actions[1].DeliveryIDs) != 2 {
		t.Errorf("actions = %+v, want set_severity APPLIED critical, notify QUEUED to pagerduty and slack with 2 delivery IDs", sev.Actions)
	}
	if m := sev.Rule.Metrics; m.ExecutionCount != before["rule-alert-severity-mapping"]+1 || m.LastExecuted == nil || m.SuccessRate <= 99.98 {
		t.Errorf("metrics = %+v, want executionCount %d, lastExecuted set, success rate up from 99.98", m, before["rule-alert-severity-mapping"]+1)
	}
	if sev.Rule.Revision != 1 {
		t.Errorf("rule revision = %d, want 1 (metrics are not an edit)", sev.Rule.Revision)
	}
	if after := ruleMetrics(t, h, capID); after["rule-alert-severity-mapping"] != before["rule-alert-severity-mapping"]+1 {
		t.Errorf("stored executionCount = %d, want %d", after["rule-alert-severity-mapping"], before["rule-alert-severity-mapping"]+1)
	}

	// The notifications are in the outbox, PENDING.
	var n struct {
		Capability struct {
			Notifications struct {
				Nodes []struct {
					DeliveryID string `json:"deliveryId"`
					Channel    string
					Status     string
					Attempts   int
					RuleID     string `json:"ruleId"`
					Template   string
				}
			}
		}
	}
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { notifications { nodes { deliveryId channel status attempts ruleId template } } } }`, nil, &n)
	got := map[string]string{}
	for _, x := range n.Capability.Notifications.Nodes {
		got[x.DeliveryID] = x.Channel + "/" + x.Status + "/" + x.RuleID + "/" + x.Template
	}
	for i, id := range sev.Actions[1].DeliveryIDs {
		want := sev.Actions[1].Channels[i] + "/PENDING/rule-alert-severity-mapping/alert-notification-v2"
		if got[id] != want {
			t.Errorf("notification %s = %q, want %q", id, got[id], want)
		}
	}
	h.check(t, capID)
}

// An unknown action type is reported in the execution and counts as a failure.
func TestExecuteRulesUnknownAction(t *testing.T) {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	var out struct{ ExecuteRules []execution }
	h.ok(t, executeRules, map[string]any{"cap": "CAP-FRAUD-DET-001", "in": map[string]any{"card": map[string]any{"declines_last_10m": 5}}, "type": "SECURITY"}, &out)
	if len(out.ExecuteRules) != 1 {
		t.Fatalf("executions = %+v, want the card velocity rule", out.ExecuteRules)
	}
	x := out.ExecuteRules[0]
	if !x.Matched || x.Succeeded || len(x.Actions) != 1 || x.Actions[0].Type != "block_card" || x.Actions[0].Status != "UNKNOWN_ACTION" || x.Actions[0].Message == nil {
		t.Errorf("execution = %+v, want matched, not succeeded, block_card UNKNOWN_ACTION with a message", x)
	}
	if x.Rule.Metrics.SuccessRate >= 100 {
		t.Errorf("success rate = %v, want below 100 after a failed execution", x.Rule.Metrics.SuccessRate)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Concurrent executions each count once: executionCount moves by exactly N.
func TestExecuteRulesConcurrentMetrics(t *testing.T) {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	const capID, n = "CAP-ALERT-MGT-001", 8
	before := ruleMetrics(t, h, capID)
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := postAs(t, h.handler, "", executeRules, map[string]any{"cap": capID, "in": map[string]any{"source": "dev"}})
			if len(resp.Errors) > 0 {
				errs <- resp.Body
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("executeRules failed: %s", e)
	}
	h.wrote = true
	after := ruleMetrics(t, h, capID)
	if len(before) == 0 {
		t.Fatal("no rule metrics in the seed")
	}
	for id, c := range after {
		if c != before[id]+n && before[id] != 0 {
			t.Errorf("rule %s executionCount = %d, want %d + %d", id, c, before[id], n)
		}
	}
	if after["rule-alert-severity-mapping"] != before["rule-alert-severity-mapping"]+n {
		t.Errorf("executionCount = %d, want %d", after["rule-alert-severity-mapping"], before["rule-alert-severity-mapping"]+n)
	}
}

// The same clientRequestToken answers with the first executions and executes nothing again.
func TestExecuteRulesToken(t *testing.T) {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	const capID = "CAP-ALERT-MGT-001"
	vars := map[string]any{"cap": capID, "in": map[string]any{"source": "production"}, "tok": "exec-1"}
	var first, second struct{ ExecuteRules []execution }
	h.ok(t, executeRules, vars, &first)
	counts := ruleMetrics(t, h, capID)
	resp := h.ok(t, executeRules, vars, &second)
	if n := resp.Extensions.DynamoDB.Operations["TransactWriteItems"]; n != 0 {
		t.Errorf("replay ran %d transactions, want 0", n)
	}
	if a, b := mustJSON(t, first), mustJSON(t, second); a != b {
		t.Errorf("replay = %+v, want the first result %+v", second, first)
	}
	if again := ruleMetrics(t, h, capID); fmt.Sprint(again) != fmt.Sprint(counts) {
		t.Errorf("metrics after replay = %v, want unchanged %v", again, counts)
	}
	vars["in"] = map[string]any{"source": "dev"}
	if resp := h.do(t, executeRules, vars); resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("token reused with other input: code %q, want BAD_USER_INPUT: %s", resp.code(0), resp.Body)
	}
}

// Executing a rule does not make the executor the writer of the rule's revision: the version
// an update keeps names who wrote that revision (admin-key), not who executed it (ops-key).
func TestExecuteRulesKeepsTheRuleWriter(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, "admin "+graph.HashKey("admin-key")+" alice", "devops "+graph.HashKey("ops-key")+" bob"), Anonymous: graph.RoleViewer}
	})
	h.env.RequireTransactions(t)
	create := `mutation($in: RuleInput!) { createRule(capabilityId: "CAP-ALERT-MGT-001", input: $in) { revision } }`
	rule := map[string]any{"ruleId": "rw-exec", "name": "Exec", "ruleType": "OPERATIONAL", "priority": "LOW", "order": 50, "status": "ACTIVE",
		"conditions": []any{map[string]any{"field": "x", "operator": "exists", "weight": 1}},
		"actions":    []any{map[string]any{"type": "set_severity", "parameters": map[string]any{"mapping": map[string]any{"0-0": "low", "1+": "high"}}}}}
	if resp := h.doAs(t, "admin-key", create, map[string]any{"in": rule}); len(resp.Errors) > 0 {
		t.Fatalf("createRule: %s", resp.Body)
	}
	if resp := h.doAs(t, "ops-key", executeRules, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"x": 1}, "type": "OPERATIONAL"}); len(resp.Errors) > 0 {
		t.Fatalf("executeRules: %s", resp.Body)
	}
	if resp := h.doAs(t, "admin-key", `mutation { updateRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rw-exec", expectedRevision: 1, input: {name: "Exec 2"}) { revision } }`, nil); len(resp.Errors) > 0 {
		t.Fatalf("updateRule: %s", resp.Body)
	}
	resp := h.doAs(t, "admin-key", `{ capability(id: "CAP-ALERT-MGT-001") { rules(ruleType: OPERATIONAL) { ruleId metrics { executionCount } history { nodes { revision actor { name } } } } } }`, nil)
	var out struct {
		Capability struct {
			Rules []struct {
				RuleID  string
				Metrics *struct{ ExecutionCount int }
				History struct {
					Nodes []struct {
						Revision int
						Actor    struct{ Name string }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(resp.Data, &out); err != nil || len(resp.Errors) > 0 {
		t.Fatalf("%v %s", err, resp.Body)
	}
	for _, r := range out.Capability.Rules {
		if r.RuleID != "rw-exec" {
			continue
		}
		if r.Metrics == nil || r.Metrics.ExecutionCount != 1 || len(r.History.Nodes) != 1 || r.History.Nodes[0].Actor.Name != "alice" {
			t.Errorf("rule = %+v, want 1 execution and revision 1 written by alice", r)
		}
		return
	}
	t.Fatalf("rule rw-exec not found: %s", resp.Body)
}

// A token records what a replay needs, not the rules: 30 rules with large conditions (over
// 400 KB together) execute with a token, and a replay, 2 requests (the token, one BatchGetItem
// of the rules), answers byte for byte what the first call did, even after a rule was edited
// since (its revision is read from the rule's history).
func TestExecuteRulesTokenLargeRules(t *testing.T) {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	const capID = "CAP-FRAUD-DET-001"
	big := make([]any, 90)
	for i := range big {
		big[i] = fmt.Sprintf("%0160d", i) // 90 × 160 characters: about 15 KB a rule
	}
	create := `mutation($cap: ID!, $in: RuleInput!) { createRule(capabilityId: $cap, input: $in) { revision } }`
	for i := range 30 {
		rule := map[string]any{"ruleId": fmt.Sprintf("big-%02d", i), "name": fmt.Sprintf("Big %d", i), "ruleType": "TRANSFORMATION", "priority": "LOW",
			"order": 40 + i, "status": "ACTIVE",
			"conditions": []any{map[string]any{"field": "region", "operator": "in", "values": big, "weight": 2},
				map[string]any{"field": "x", "operator": "exists", "weight": 1}},
			"actions": []any{map[string]any{"type": "set_severity", "parameters": map[string]any{"mapping": map[string]any{"0-1": "low", "2+": "high"}}}}}
		if i%2 == 0 { // 15 notifications: under the 20 a call
			rule["actions"] = append(rule["actions"].([]any), map[string]any{"type": "notify", "parameters": map[string]any{"channels": []any{"ops"}}})
		}
		if resp := h.do(t, create, map[string]any{"cap": capID, "in": rule}); len(resp.Errors) > 0 {
			t.Fatalf("createRule %d: %s", i, resp.Body)
		}
	}
	const full = `mutation($cap: ID!, $in: JSON!, $tok: String) {
	executeRules(capabilityId: $cap, input: $in, ruleType: TRANSFORMATION, clientRequestToken: $tok) {
		rule { id ruleId name revision order createdAt updatedAt conditions { field operator values weight } actions { type parameters }
			metrics { executionCount averageExecutionTime successRate lastExecuted } }
		matched score severity succeeded error durationMs executedAt
		actions { type status message severity channels template deliveryIds }
	} }`
	vars := map[string]any{"cap": capID, "in": map[string]any{"region": big[7], "x": 1}, "tok": "big-run-1"}
	first := h.do(t, full, vars)
	if len(first.Errors) > 0 {
		t.Fatalf("executeRules with 30 large rules: %.500s", first.Body)
	}
	var out struct{ ExecuteRules []execution }
	if err := json.Unmarshal(first.Data, &out); err != nil || len(out.ExecuteRules) != 30 {
		t.Fatalf("executions = %d, %v; want 30", len(out.ExecuteRules), err)
	}
	queued := 0
	for _, x := range out.ExecuteRules {
		if !x.Matched || x.Severity == nil || *x.Severity != "high" || !x.Succeeded {
			t.Fatalf("execution = %+v, want matched, high, succeeded", x)
		}
		for _, a := range x.Actions {
			queued += len(a.DeliveryIDs)
		}
	}
	if queued != 15 {
		t.Errorf("%d notifications queued, want 15", queued)
	}
	replay := func(when string) {
		t.Helper()
		again := h.do(t, full, vars)
		if len(again.Errors) > 0 {
			t.Fatalf("replay %s: %.500s", when, again.Body)
		}
		if string(again.Data) != string(first.Data) {
			t.Errorf("replay %s differs from the first answer:\n%.800s\nwant\n%.800s", when, again.Data, first.Data)
		}
		ops := again.Extensions.DynamoDB.Operations
		if again.Extensions.DynamoDB.Requests != 2 || ops["GetItem"] != 1 || ops["BatchGetItem"] != 1 {
			t.Errorf("replay %s made %d requests %v, want 2: the token, one BatchGetItem", when, again.Extensions.DynamoDB.Requests, ops)
		}
	}
	replay("at once")
	// Another execution (metrics move) and an edit of a rule (revision moves): the replay still
	// answers as the first call did.
	if resp := h.do(t, executeRules, map[string]any{"cap": capID, "in": map[string]any{"x": 1}, "type": "TRANSFORMATION"}); len(resp.Errors) > 0 {
		t.Fatalf("second execution: %.300s", resp.Body)
	}
	if resp := h.do(t, `mutation { updateRule(capabilityId: "CAP-FRAUD-DET-001", ruleId: "big-03", expectedRevision: 1, input: {name: "Big three"}) { revision } }`, nil); len(resp.Errors) > 0 {
		t.Fatalf("updateRule: %s", resp.Body)
	}
	replay("after another execution and an edit")
}

// executeRules reports what it requests in extensions.cost, as a connection does: up to
// dynamo.MaxRulesPerExecution executions (it reported 0: the cost counted connections only,
// and a root list has none above it); nodes(ids:) one node an ID.
func TestExecuteRulesCost(t *testing.T) {
	h := newHarness(t)
	resp := h.ok(t, executeRules, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"source": "production"}, "type": "BUSINESS"}, nil)
	if resp.Extensions.Cost.Requested != dynamo.MaxRulesPerExecution || resp.Extensions.Cost.Limit != 50000 {
		t.Errorf("executeRules: extensions.cost = %+v, want requested %d limit 50000", resp.Extensions.Cost, dynamo.MaxRulesPerExecution)
	}
	resp = h.ok(t, `{ nodes(ids: ["CAP-ALERT-MGT-001", "CAP-FRAUD-DET-001"]) { id } }`, nil, nil)
	if resp.Extensions.Cost.Requested != 2 {
		t.Errorf("nodes of 2 IDs: extensions.cost.requested = %d, want 2", resp.Extensions.Cost.Requested)
	}
}
