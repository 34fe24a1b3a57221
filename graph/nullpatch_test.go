package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
)

// TestNullInUpdateInputChangesNothing walks every field of the update inputs: a typed client
// (genqlient's pointer mode) sends null for each field it leaves unset, so an update whose every
// field is null must leave the entity as it was, lists and nested objects included (before, a
// null list or object cleared it while a null string kept it).
func TestNullInUpdateInputChangesNothing(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	const capID, componentID, ruleID, jobID = "CAP-ALERT-MGT-001", "api-server-alert-001", "rule-alert-severity-mapping", "JOB-DEPLOY-456"

	// snapshot is the entity's stored fields (Data), and its revision.
	snapshot := func(t *testing.T, input string) (string, int) {
		t.Helper()
		var v any
		var rev int
		switch input {
		case "UpdateCapabilityInput":
			c, err := h.env.Store.Capability(ctx, capID)
			if err != nil {
				t.Fatal(err)
			}
			v, rev = c, c.Revision
		case "UpdateComponentInput", "UpdateRuleInput":
			p, err := h.env.Store.ReadPartition(ctx, capID, dynamo.SegComponents|dynamo.SegRules)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range p.Components {
				if c.ComponentID == componentID && input == "UpdateComponentInput" {
					v, rev = c, c.Revision
				}
			}
			for _, r := range p.Rules {
				if r.RuleID == ruleID && input == "UpdateRuleInput" {
					v, rev = r, r.Revision
				}
			}
		case "UpdateJobInput":
			j, err := h.env.Store.JobByID(ctx, jobID)
			if err != nil {
				t.Fatal(err)
			}
			v, rev = j, j.Revision
		}
		if v == nil {
			t.Fatalf("%s: the sample entity is missing", input)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), rev
	}
	mutation := map[string]string{
		"UpdateCapabilityInput": `mutation($in: UpdateCapabilityInput!) { updateCapability(id: "` + capID + `", expectedRevision: %d, input: $in) { revision } }`,
		"UpdateComponentInput":  `mutation($in: UpdateComponentInput!) { updateComponent(capabilityId: "` + capID + `", componentId: "` + componentID + `", expectedRevision: %d, input: $in) { revision } }`,
		"UpdateRuleInput":       `mutation($in: UpdateRuleInput!) { updateRule(capabilityId: "` + capID + `", ruleId: "` + ruleID + `", expectedRevision: %d, input: $in) { revision } }`,
		"UpdateJobInput":        `mutation($in: UpdateJobInput!) { updateJob(jobId: "` + jobID + `", expectedRevision: %d, input: $in) { revision } }`,
	}
	for input, m := range mutation {
		t.Run(input, func(t *testing.T) {
			def := schema.Types[input]
			if def == nil {
				t.Fatalf("schema has no %s", input)
			}
			nulls := map[string]any{}
			for _, f := range def.Fields {
				if !f.Type.NonNull {
					nulls[f.Name] = nil
				}
			}
			if len(nulls) < 5 {
				t.Fatalf("%s: only %d nullable fields found", input, len(nulls))
			}
			before, rev := snapshot(t, input)
			h.ok(t, fmt.Sprintf(m, rev), map[string]any{"in": nulls}, nil)
			after, rev2 := snapshot(t, input)
			if rev2 != rev+1 {
				t.Fatalf("revision %d after the update, want %d", rev2, rev+1)
			}
			if after != before {
				t.Errorf("an update with every field null changed the entity:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
