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

// TestZeroValueInNestedUpdateInputApplies: inside a nested object of an update input, a field
// given a zero value (0, "", [], false) sets it, as at the top level; only null and leaving
// it out change nothing. Before, the nested object was encoded through its Go type, whose
// omitempty dropped every zero value: {deployment: {replicas: 0}} changed nothing.
func TestZeroValueInNestedUpdateInputApplies(t *testing.T) {
	h := newHarness(t)
	const m = `mutation($rev: Int!, $in: UpdateComponentInput!) {
  updateComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "api-server-alert-001", expectedRevision: $rev, input: $in) {
    revision
    deployment { replicas image resources { cpu memory } endpoints { url } }
    configuration { environment configMap secrets featureFlags }
    health { activeAlerts availability }
  }
}`
	var before struct {
		Capability struct{ Component struct{ Revision int } }
	}
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { component(id: "api-server-alert-001") { revision } } }`, nil, &before)
	var out struct {
		UpdateComponent struct {
			Revision   int
			Deployment struct {
				Replicas  *int
				Image     *string
				Resources struct{ CPU, Memory *string }
				Endpoints []struct{ URL string }
			}
			Configuration struct {
				Environment, ConfigMap *string
				Secrets                []string
				FeatureFlags           map[string]any
			}
			Health struct {
				ActiveAlerts int
				Availability float64
			}
		}
	}
	h.ok(t, m, map[string]any{"rev": before.Capability.Component.Revision, "in": map[string]any{
		"deployment":    map[string]any{"replicas": 0, "image": "", "resources": map[string]any{"cpu": "", "memory": nil}, "endpoints": []any{}},
		"configuration": map[string]any{"environment": "", "configMap": nil, "secrets": []any{}},
		"health":        map[string]any{"status": "HEALTHY", "availability": 0, "responseTime": 1, "errorRate": 0, "activeAlerts": 0},
	}}, &out)
	got := out.UpdateComponent
	if got.Deployment.Replicas != nil && *got.Deployment.Replicas != 0 || got.Deployment.Image != nil || len(got.Deployment.Endpoints) != 0 || got.Deployment.Resources.CPU != nil {
		t.Errorf("deployment after {replicas: 0, image: \"\", endpoints: [], resources: {cpu: \"\"}} = %+v, want them cleared", got.Deployment)
	}
	if got.Deployment.Resources.Memory == nil || *got.Deployment.Resources.Memory != "2Gi" {
		t.Errorf("resources.memory after memory: null = %v, want 2Gi kept", got.Deployment.Resources.Memory)
	}
	if got.Configuration.Environment != nil || len(got.Configuration.Secrets) != 0 {
		t.Errorf("configuration after {environment: \"\", secrets: []} = %+v, want them cleared", got.Configuration)
	}
	if got.Configuration.ConfigMap == nil || *got.Configuration.ConfigMap != "alert-api-config" {
		t.Errorf("configuration.configMap after configMap: null = %v, want alert-api-config kept", got.Configuration.ConfigMap)
	}
	if got.Health.Availability != 0 {
		t.Errorf("health.availability after availability: 0 = %v, want 0", got.Health.Availability)
	}
}

// TestJSONValueInUpdateInputReplaces: a JSON scalar in an update input (featureFlags) is a
// value, not an input object: it replaces what is stored. Before, it was decoded into the
// stored map, which merged the keys: no flag could be removed, and {} changed nothing.
func TestJSONValueInUpdateInputReplaces(t *testing.T) {
	h := newHarness(t)
	const m = `mutation($rev: Int!, $in: UpdateComponentInput!) {
  updateComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "api-server-alert-001", expectedRevision: $rev, input: $in) {
    revision configuration { configMap featureFlags }
  }
}`
	var out struct {
		UpdateComponent struct {
			Revision      int
			Configuration struct {
				ConfigMap    string
				FeatureFlags map[string]any
			}
		}
	}
	var before struct {
		Capability struct{ Component struct{ Revision int } }
	}
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { component(id: "api-server-alert-001") { revision } } }`, nil, &before)
	rev := before.Capability.Component.Revision
	for _, flags := range []map[string]any{{"aiTriage": true}, {}} {
		h.ok(t, m, map[string]any{"rev": rev, "in": map[string]any{"configuration": map[string]any{"featureFlags": flags}}}, &out)
		rev = out.UpdateComponent.Revision
		got := out.UpdateComponent.Configuration
		if len(got.FeatureFlags) != len(flags) || len(flags) == 1 && got.FeatureFlags["aiTriage"] != true {
			t.Errorf("featureFlags after featureFlags: %v = %v, want exactly that", flags, got.FeatureFlags)
		}
		if got.ConfigMap != "alert-api-config" {
			t.Errorf("configMap = %q after an update of featureFlags only, want it kept", got.ConfigMap)
		}
	}
}

// TestClearInUpdateInput: clear removes optional fields (a time bound, a nested object, a list)
// from the stored entity, and refuses what is not a field of the input, what is also given a
// value, and what the entity requires; a refusal writes nothing.
func TestClearInUpdateInput(t *testing.T) {
	h := newHarness(t)
	const capID, componentID = "CAP-ALERT-MGT-001", "api-server-alert-001"
	const update = `mutation($rev: Int!, $in: UpdateComponentInput!) { updateComponent(capabilityId: "` + capID + `", componentId: "` + componentID + `", expectedRevision: $rev, input: $in) { revision version technology { stack } ownership { team } } }`
	var view struct {
		Capability struct{ Component struct{ Revision int } }
	}
	h.ok(t, `{ capability(id: "`+capID+`") { component(id: "`+componentID+`") { revision } } }`, nil, &view)
	rev := view.Capability.Component.Revision

	for _, c := range []struct {
		name string
		in   map[string]any
	}{
		{"unknown field", map[string]any{"clear": []string{"nosuchfield"}}},
		{"clear itself", map[string]any{"clear": []string{"clear"}}},
		{"given and cleared", map[string]any{"version": "9.9.9", "clear": []string{"version"}}},
		{"required field", map[string]any{"clear": []string{"name"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := h.do(t, update, map[string]any{"rev": rev, "in": c.in})
			if resp.code(0) != "BAD_USER_INPUT" {
				t.Fatalf("clear %v: %s, want BAD_USER_INPUT", c.in, resp.Body)
			}
			if w := resp.Extensions.DynamoDB.Operations["TransactWriteItems"]; w != 0 {
				t.Errorf("a refused clear wrote: %v", resp.Extensions.DynamoDB.Operations)
			}
		})
	}

	var out struct {
		UpdateComponent struct {
			Revision   int
			Version    *string
			Technology *struct{ Stack *string }
			Ownership  *struct{ Team *string }
		}
	}
	h.ok(t, update, map[string]any{"rev": rev, "in": map[string]any{"clear": []string{"version", "technology"}}}, &out)
	u := out.UpdateComponent
	if u.Revision != rev+1 || u.Version != nil || u.Technology != nil || u.Ownership == nil || u.Ownership.Team == nil {
		t.Errorf("clear [version technology] = %+v, want both gone and ownership kept", u)
	}
}

// TestClearEveryField walks every field of the four update inputs and clears it alone: the
// update either refuses (BAD_USER_INPUT, nothing written) or leaves an entity that still reads
// back whole (no error from a non-null field it emptied) and passes the catalogue's audit.
func TestClearEveryField(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	const capID, componentID, ruleID, jobID = "CAP-PAY-PROC-001", "api-server-payment-001", "rule-payment-acquirer-routing", "JOB-EMERG-PAY-201"
	reads := map[string]string{
		"UpdateCapabilityInput": `{ capability(id: "` + capID + `") { revision name status priority businessDomain owner aggregates { healthStatus } } }`,
		"UpdateComponentInput":  `{ capability(id: "` + capID + `") { component(id: "` + componentID + `") { revision name status componentType order } } }`,
		"UpdateRuleInput":       `{ capability(id: "` + capID + `") { rules { ruleId revision name status ruleType priority order conditions { field } actions { type } } } }`,
		"UpdateJobInput":        `{ job(id: "` + jobID + `") { revision status jobType priority startTime } }`,
	}
	updates := map[string]string{
		"UpdateCapabilityInput": `mutation($rev: Int!, $in: UpdateCapabilityInput!) { updateCapability(id: "` + capID + `", expectedRevision: $rev, input: $in) { revision } }`,
		"UpdateComponentInput":  `mutation($rev: Int!, $in: UpdateComponentInput!) { updateComponent(capabilityId: "` + capID + `", componentId: "` + componentID + `", expectedRevision: $rev, input: $in) { revision } }`,
		"UpdateRuleInput":       `mutation($rev: Int!, $in: UpdateRuleInput!) { updateRule(capabilityId: "` + capID + `", ruleId: "` + ruleID + `", expectedRevision: $rev, input: $in) { revision } }`,
		"UpdateJobInput":        `mutation($rev: Int!, $in: UpdateJobInput!) { updateJob(jobId: "` + jobID + `", expectedRevision: $rev, input: $in) { revision } }`,
	}
	revision := func(t *testing.T, h *harness, input string) int {
		t.Helper()
		resp := h.do(t, reads[input], nil)
		if len(resp.Errors) > 0 {
			t.Fatalf("read back: %s", resp.Body)
		}
		var v struct {
			Capability *struct {
				Revision  int
				Component *struct{ Revision int }
				Rules     []struct {
					RuleID   string
					Revision int
				}
			}
			Job *struct{ Revision int }
		}
		if err := json.Unmarshal(resp.Data, &v); err != nil {
			t.Fatal(err)
		}
		switch {
		case v.Job != nil:
			return v.Job.Revision
		case v.Capability.Component != nil:
			return v.Capability.Component.Revision
		case len(v.Capability.Rules) > 0:
			for _, r := range v.Capability.Rules {
				if r.RuleID == ruleID {
					return r.Revision
				}
			}
			t.Fatalf("rule %s missing: %s", ruleID, resp.Data)
		}
		return v.Capability.Revision
	}
	for input, update := range updates {
		for _, f := range schema.Types[input].Fields {
			if f.Name == "clear" {
				continue
			}
			t.Run(input+"."+f.Name, func(t *testing.T) {
				h := newHarness(t)
				rev := revision(t, h, input)
				resp := h.do(t, update, map[string]any{"rev": rev, "in": map[string]any{"clear": []string{f.Name}}})
				if len(resp.Errors) > 0 {
					if resp.code(0) != "BAD_USER_INPUT" {
						t.Fatalf("clear %s: %s, want success or BAD_USER_INPUT", f.Name, resp.Body)
					}
					if w := resp.Extensions.DynamoDB.Operations["TransactWriteItems"]; w != 0 {
						t.Errorf("a refused clear wrote: %v", resp.Extensions.DynamoDB.Operations)
					}
					t.Logf("refused: %s", resp.Errors[0].Message)
					return
				}
				if got := revision(t, h, input); got != rev+1 {
					t.Errorf("revision %d after clearing %s, want %d", got, f.Name, rev+1)
				}
			})
		}
	}
}
