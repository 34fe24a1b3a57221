package graph_test

import (
	"strings"
	"testing"
)

// TestNotFoundNamesTheEntity sends each mutation with an unknown target through the real
// handler: the error is NOT_FOUND, its message names the entity and the ID (and the capability
// it was looked for in), extensions carry them, and nothing is written.
func TestNotFoundNamesTheEntity(t *testing.T) {
	h := newHybridHarness(t)
	const (
		capID   = "CAP-ALERT-MGT-001" // of the sample catalogue
		compID  = "api-server-alert-001"
		nope    = "CAP-NOPE-001"
		newComp = `{componentId: "c-new-1", name: "n", componentType: "api-server", order: 1, layer: "business", sla: {availability: 99.9, responseTime: 200, errorRate: 1}}`
		newRule = `{ruleId: "rule-new-1", name: "r", ruleType: OPERATIONAL, priority: LOW, order: 9, status: ACTIVE, conditions: [], actions: []}`
	)
	tests := []struct {
		name, query         string
		entity, id, inCapID string // inCapID is the capability a scoped entity was looked for in
		message             string
	}{
		{"updateCapability", `mutation { updateCapability(id: "CAP-NOPE-001", expectedRevision: 1, input: {name: "x"}) { id } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"transitionCapability", `mutation { transitionCapability(id: "CAP-NOPE-001", to: ACTIVE, expectedRevision: 1) { id } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"deleteCapability", `mutation { deleteCapability(id: "CAP-NOPE-001", expectedRevision: 1) }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"addComponent to an unknown capability", `mutation { addComponent(capabilityId: "CAP-NOPE-001", input: ` + newComp + `) { componentId } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"updateComponent", `mutation { updateComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "nope-comp-1", expectedRevision: 1, input: {name: "x"}) { componentId } }`,
			"Component", "nope-comp-1", capID, `component "nope-comp-1" not found in capability "CAP-ALERT-MGT-001"`},
		{"updateComponent in an unknown capability", `mutation { updateComponent(capabilityId: "CAP-NOPE-001", componentId: "api-server-alert-001", expectedRevision: 1, input: {name: "x"}) { componentId } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"removeComponent", `mutation { removeComponent(capabilityId: "CAP-ALERT-MGT-001", componentId: "nope-comp-1") }`,
			"Component", "nope-comp-1", capID, `component "nope-comp-1" not found in capability "CAP-ALERT-MGT-001"`},
		{"addDependency in an unknown capability", `mutation { addDependency(capabilityId: "CAP-NOPE-001", input: {sourceComponentId: "a-1", targetComponentId: "b-1", dependencyType: RUNTIME, criticality: HIGH}) { id } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"removeDependency", `mutation { removeDependency(capabilityId: "CAP-ALERT-MGT-001", sourceComponentId: "database-alert-001", targetComponentId: "api-server-alert-001") }`,
			"Dependency", "database-alert-001->" + compID, capID, `dependency "database-alert-001->api-server-alert-001" not found in capability "CAP-ALERT-MGT-001"`},
		{"removeDependency in an unknown capability", `mutation { removeDependency(capabilityId: "CAP-NOPE-001", sourceComponentId: "a-1", targetComponentId: "b-1") }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"startJob", `mutation { startJob(capabilityId: "CAP-NOPE-001", input: {jobId: "JOB-NEW-1", jobType: DEPLOYMENT, status: RUNNING}) { jobId } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"updateJob", `mutation { updateJob(jobId: "JOB-NOPE-1", expectedRevision: 1, input: {status: COMPLETED}) { jobId } }`,
			"Job", "JOB-NOPE-1", "", `job "JOB-NOPE-1" not found`},
		{"createRule", `mutation { createRule(capabilityId: "CAP-NOPE-001", input: ` + newRule + `) { ruleId } }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"updateRule", `mutation { updateRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rule-nope-1", expectedRevision: 1, input: {name: "x"}) { ruleId } }`,
			"Rule", "rule-nope-1", capID, `rule "rule-nope-1" not found in capability "CAP-ALERT-MGT-001"`},
		{"deleteRule", `mutation { deleteRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rule-nope-1") }`,
			"Rule", "rule-nope-1", capID, `rule "rule-nope-1" not found in capability "CAP-ALERT-MGT-001"`},
		{"deleteRule in an unknown capability", `mutation { deleteRule(capabilityId: "CAP-NOPE-001", ruleId: "rule-nope-1") }`,
			"Capability", nope, "", `capability "CAP-NOPE-001" not found`},
		{"createArtifactUpload", `mutation { createArtifactUpload(jobId: "JOB-NOPE-1", name: "logs/x.log", contentType: "text/plain") { url } }`,
			"Job", "JOB-NOPE-1", "", `job "JOB-NOPE-1" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, nil)
			if len(resp.Errors) != 1 {
				t.Fatalf("errors = %d, want 1: %s", len(resp.Errors), resp.Body)
			}
			e := resp.Errors[0]
			if resp.code(0) != "NOT_FOUND" {
				t.Errorf("code = %q, want NOT_FOUND: %s", resp.code(0), resp.Body)
			}
			if e.Message != tt.message {
				t.Errorf("message = %q, want %q", e.Message, tt.message)
			}
			if e.Extensions["entity"] != tt.entity || e.Extensions["id"] != tt.id {
				t.Errorf("extensions entity, id = %v, %v, want %q, %q", e.Extensions["entity"], e.Extensions["id"], tt.entity, tt.id)
			}
			if got, ok := e.Extensions["capabilityId"]; (tt.inCapID == "" && ok) || (tt.inCapID != "" && got != tt.inCapID) {
				t.Errorf("extensions.capabilityId = %v, want %q", got, tt.inCapID)
			}
			if strings.Contains(resp.Body, "CAPABILITY#") || strings.Contains(resp.Body, "DynamoDB") {
				t.Errorf("response leaks store text: %s", resp.Body)
			}
			if w := h.writes(); w != 0 {
				t.Errorf("rejected mutation made %d writes", w)
			}
		})
	}
}

// TestMissingObjectsQueryNull checks that the queries of one object answer null, without an
// error, for an unknown ID.
func TestMissingObjectsQueryNull(t *testing.T) {
	h := newHarness(t)
	var out struct {
		Capability *struct{ ID string }
		Job        *struct{ JobID string }
	}
	h.ok(t, `{ capability(id: "CAP-NOPE-001") { id } job(id: "JOB-NOPE-1") { jobId } }`, nil, &out)
	if out.Capability != nil || out.Job != nil {
		t.Errorf("capability, job = %+v, %+v, want null, null", out.Capability, out.Job)
	}
}
