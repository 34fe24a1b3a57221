package graph_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/capcat/catalogue/graph"
)

// viewQuery is the explorer's capability page (web/assets/js/views/capability.js), less its
// sections' fragments: the typical view query.
const viewQuery = `query CapabilityPage($id: ID!, $jobsFirst: Int) {
  capability(id: $id) {
    capabilityId name description businessDomain status priority owner createdBy version tags revision createdAt updatedAt
    businessMetrics { sla rto rpo criticalityLevel }
    architecture { pattern deploymentModel scalabilityType redundancy }
    compliance { standards lastAudit certificationStatus }
    lifecycle { phase plannedRetirement lastMajorUpdate nextReview }
    aggregates {
      totalComponents activeComponents healthScore healthStatus totalDependencies totalJobs successfulJobs failedJobs
      totalRules activeRules lastDeployment averageDeploymentTime totalIncidents monthlyOperationalCost userCount
    }
    components {
      componentId name description componentType layer version status order
      health { status availability responseTime errorRate activeAlerts lastCheck }
      sla { availability responseTime errorRate }
      ownership { team }
    }
    dependencyGraph {
      nodes { componentId }
      edges { sourceComponentId targetComponentId dependencyType criticality fallback { strategy } }
    }
    jobs(first: $jobsFirst) { nodes { jobId jobType status startTime endTime } pageInfo { hasNextPage endCursor } }
    rules { ruleId name ruleType status priority order }
    metrics(metricType: PERFORMANCE, first: 20) { nodes { metricType timestamp } }
  }
}`

// BenchmarkNullDefaults measures what the null rewrite adds to an operation, after validation:
// the typical view query without a null (a search of its text for "null"), with a null
// variable (the scan; the variable is removed), and with a null literal (the scan and the copy
// of the document).
func BenchmarkNullDefaults(b *testing.B) {
	s := graph.NewExecutableSchema(graph.Config{}).Schema()
	for _, bb := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"view", viewQuery, map[string]any{"id": "CAP-ALERT-MGT-001", "jobsFirst": 10}},
		{"view with a null variable", viewQuery, map[string]any{"id": "CAP-ALERT-MGT-001", "jobsFirst": nil}},
		{"view with a null literal", strings.Replace(viewQuery, "first: 20", "first: null", 1), map[string]any{"id": "CAP-ALERT-MGT-001", "jobsFirst": 10}},
	} {
		doc, errs := gqlparser.LoadQueryWithRules(s, bb.query, nil)
		if len(errs) > 0 {
			b.Fatal(errs)
		}
		vars, err := validator.VariableValues(s, doc.Operations[0], bb.vars)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v := vars
				if bb.vars["jobsFirst"] == nil {
					v = maps.Clone(vars) // the rewrite removes the null variable
				}
				oc := graphql.OperationContext{RawQuery: bb.query, Doc: doc, Operation: doc.Operations[0], Variables: v}
				graph.RewriteNulls(s, &oc)
			}
		})
	}
}

// BenchmarkCapabilityView serves the typical view query through the real handler on the
// embedded backend: the cost of a whole request, against which the null rewrite and the
// field middleware are measured.
func BenchmarkCapabilityView(b *testing.B) {
	h := newHarness(b)
	vars := map[string]any{"id": "CAP-ALERT-MGT-001", "jobsFirst": 10}
	h.ok(b, viewQuery, vars, nil)
	b.ReportAllocs()
	for b.Loop() {
		h.do(b, viewQuery, vars)
	}
}
