package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// selectAll returns a selection of every field of object type typ that takes no required
// argument, down to depth levels, leaving out fields that lead back to a type on the path.
func selectAll(s *ast.Schema, typ string, depth int, open map[string]bool) string {
	open[typ] = true
	defer delete(open, typ)
	var out []string
	for _, f := range s.Types[typ].Fields {
		required := false
		for _, a := range f.Arguments {
			required = required || a.Type.NonNull && a.DefaultValue == nil
		}
		def := s.Types[f.Type.Name()]
		if required || strings.HasPrefix(f.Name, "__") || def == nil {
			continue
		}
		switch def.Kind {
		case ast.Scalar, ast.Enum:
			out = append(out, f.Name)
		case ast.Object:
			if depth > 1 && !open[def.Name] {
				if inner := selectAll(s, def.Name, depth-1, open); inner != "" {
					out = append(out, f.Name+" { "+inner+" }")
				}
			}
		}
	}
	return strings.Join(out, " ")
}

// absentValues walks a response value of type typ and reports every nullable String, ID or
// DateTime field that holds an empty string or Go's zero time instead of null.
func absentValues(s *ast.Schema, typ, path string, v any, report func(path string, v any)) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			absentValues(s, typ, path+"[]", e, report)
		}
	case map[string]any:
		for name, fv := range x {
			f := s.Types[typ].Fields.ForName(name)
			if f == nil {
				continue
			}
			switch t := f.Type.Name(); {
			case s.Types[t].Kind == ast.Object:
				absentValues(s, t, path+"."+name, fv, report)
			case (t == "String" || t == "ID" || t == "DateTime") && !f.Type.NonNull:
				if str, ok := fv.(string); ok && (str == "" || strings.HasPrefix(str, "0001-01-01")) {
					report(typ+"."+name+" at "+path+"."+name, str)
				}
			}
		}
	}
}

// TestUnsetFieldsAreNull creates a capability, a component, a rule and a job from minimal input
// (and empty strings where a field is optional), reads every field of them that takes no
// required argument, and finds no nullable String, ID or DateTime field that answers "" or the
// zero time: an absent value is null.
func TestUnsetFieldsAreNull(t *testing.T) {
	h := newHarness(t)
	s := schema(t)
	h.ok(t, createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-ABS-001", "name": "n", "businessDomain": "d", "priority": "LOW",
		"description": "", "owner": ""}}, nil)
	h.ok(t, `mutation { addComponent(capabilityId: "CAP-ABS-001", input: {componentId: "abs-1", name: "c", componentType: "api-server", order: 1, version: "", configuration: {secrets: ["s"]}}) { componentId } }`, nil, nil)
	h.ok(t, `mutation { createRule(capabilityId: "CAP-ABS-001", input: {ruleId: "abs-r", name: "r", ruleType: BUSINESS, priority: LOW, order: 1, description: "", conditions: [], actions: []}) { ruleId } }`, nil, nil)
	h.ok(t, `mutation { startJob(capabilityId: "CAP-ABS-001", input: {jobId: "abs-j", jobType: DEPLOYMENT}) { jobId } }`, nil, nil)

	// Capability.notifications is left out (marked open): this capability has none, and its
	// fields would take the document over the 1,000-field limit (a notification's absent
	// fields are nil pointers, null). So is Component.trends (ComponentTrends: enums and the
	// window as given, never absent), for the same limit.
	sel := selectAll(s, "Capability", 4, map[string]bool{"NotificationConnection": true, "ComponentTrends": true})
	for _, want := range []string{"version", "description", "layer", "environment", "jobs { ", "rules { ", "components { "} {
		if !strings.Contains(sel, want) {
			t.Fatalf("the selection of every field lacks %q: %s", want, sel)
		}
	}
	var data struct{ Capability map[string]any }
	resp := h.ok(t, `{ capability(id: "CAP-ABS-001") { `+sel+` } }`, nil, nil)
	if err := json.Unmarshal(resp.Data, &data); err != nil {
		t.Fatal(err)
	}
	found := 0
	absentValues(s, "Capability", "capability", data.Capability, func(path string, v any) {
		found++
		t.Errorf("%s = %q, want null (absent)", path, v)
	})

	// The fields clients named, one by one.
	var out struct {
		Capability struct {
			Description, Owner *string
			Components         []struct {
				Version, Description, Layer *string
				Configuration               struct{ Environment *string }
			}
			Rules []struct{ Description *string }
		}
	}
	h.ok(t, `{ capability(id: "CAP-ABS-001") { description owner components { version description layer configuration { environment } } rules { description } } }`, nil, &out)
	c := out.Capability
	if c.Description != nil || c.Owner != nil || len(c.Components) != 1 || len(c.Rules) != 1 {
		t.Fatalf("capability = %+v, want description and owner null, one component, one rule", c)
	}
	if x := c.Components[0]; x.Version != nil || x.Description != nil || x.Layer != nil || x.Configuration.Environment != nil {
		t.Errorf("component version %v, description %v, layer %v, configuration.environment %v: want all null", x.Version, x.Description, x.Layer, x.Configuration.Environment)
	}
	if c.Rules[0].Description != nil {
		t.Errorf("rule description = %q, want null", *c.Rules[0].Description)
	}
}

// TestHealthScoreNullWhenUnreported holds that a capability whose components report no health
// has healthScore null (status UNKNOWN), and a reported score is a number, also in the health
// index that capabilitiesByHealth reads.
func TestHealthScoreNullWhenUnreported(t *testing.T) {
	h := newHarness(t)
	h.createCapability(t, "CAP-HS-001")
	h.ok(t, addComp, map[string]any{"cap": "CAP-HS-001", "in": component("hs-1", 1, "")}, nil)
	type agg struct {
		HealthScore  *float64
		HealthStatus string
	}
	read := func() agg {
		var out struct{ Capability struct{ Aggregates agg } }
		h.ok(t, `{ capability(id: "CAP-HS-001") { aggregates { healthScore healthStatus } } }`, nil, &out)
		return out.Capability.Aggregates
	}
	if a := read(); a.HealthScore != nil || a.HealthStatus != "UNKNOWN" {
		t.Errorf("no component reports health: healthScore %v, status %s; want null and UNKNOWN", score(a.HealthScore), a.HealthStatus)
	}
	var byHealth struct {
		CapabilitiesByHealth struct {
			Nodes []struct {
				ID         string
				Aggregates agg
			}
		}
	}
	h.ok(t, `{ capabilitiesByHealth(status: UNKNOWN, first: 100) { nodes { id aggregates { healthScore healthStatus } } } }`, nil, &byHealth)
	found := false
	for _, n := range byHealth.CapabilitiesByHealth.Nodes {
		found = found || n.ID == "CAP-HS-001" && n.Aggregates.HealthScore == nil
	}
	if !found {
		t.Errorf("capabilitiesByHealth(UNKNOWN) = %+v, want CAP-HS-001 with healthScore null", byHealth.CapabilitiesByHealth.Nodes)
	}

	h.ok(t, addComp, map[string]any{"cap": "CAP-HS-001", "in": component("hs-2", 2, "UNHEALTHY")}, nil)
	if a := read(); a.HealthScore == nil || a.HealthStatus != "UNHEALTHY" {
		t.Errorf("one component reports UNHEALTHY: healthScore %v, status %s; want a number and UNHEALTHY", score(a.HealthScore), a.HealthStatus)
	}
}

// score shows a nullable score.
func score(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}
