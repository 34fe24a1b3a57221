package graph_test

import (
	"bytes"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/capcat/catalogue/graph"
)

// Partition reads fetch only the Data keys the operation can use. The answer must not change:
// every query here is run against two servers over the same sample catalogue, one reading
// whole items, and both must return the same data. The counts show which queries were
// projected and which gave up and read whole items.
func TestProjectionAnswersLikeWholeItems(t *testing.T) {
	whole := newHarnessWith(t, func(o *graph.Options) { o.FullItems = true })
	proj := newHarness(t)
	var projected, full atomic.Int32
	proj.env.Counter.Inspect = func(op string, body []byte, _ http.ResponseWriter) bool {
		if op == "Query" && bytes.Contains(body, []byte(`"KeyConditionExpression":"#pk = :pk AND #sk BETWEEN :lo AND :hi"`)) &&
			bytes.Contains(body, []byte(`"COMPONENT#`+"\"")) || bytes.Contains(body, []byte(`"RULE#"`)) {
			if bytes.Contains(body, []byte(`"ProjectionExpression"`)) {
				projected.Add(1)
			} else {
				full.Add(1)
			}
		}
		return false
	}
	const id = `"CAP-ALERT-MGT-001"`
	for _, c := range []struct {
		name  string
		query string
		reads string // "projected": partition reads carry a ProjectionExpression; "whole": none does; "": no partition read
	}{
		{"complete view", `{ capability(id: ` + id + `) { name components { componentId name componentType order layer status version health { status availability } sla { availability } }
			dependencies { sourceComponentId targetComponentId dependencyType criticality source { componentId name status } target { name } }
			rules { ruleId name ruleType status priority order conditions { field operator weight } actions { type } } } }`, "projected"},
		{"list with neighbours", `{ capabilities(first: 50) { nodes { id name components { componentId name status dependsOn { componentId name } dependents { name deployment { platform } } }
			dependencies { sourceComponentId targetComponentId criticality } } } }`, "projected"},
		{"filters on keys not selected", `{ capability(id: ` + id + `) { components(status: ACTIVE) { name } dependencies(criticality: HIGH) { source { technology { stack } } }
			rules(ruleType: OPERATIONAL) { name } } }`, "projected"},
		{"fragments", `{ capability(id: ` + id + `) { ...C } } fragment C on Capability { components { ...K ... on Component { ownership { team } } } }
			fragment K on Component { name repository { url } }`, "projected"},
		{"envelope and ids", `{ capability(id: ` + id + `) { components { id revision createdAt updatedAt dependsOn { id health { status } } }
			dependencies { id revision source { id } } rules { id revision createdAt } } }`, "projected"},
		{"nested objects", `{ capability(id: ` + id + `) { dependencies { interface { protocol } requirements { __typename } fallback { __typename } target { configuration { environment } } }
			rules { metadata { __typename } effectiveFrom effectiveUntil } } }`, "projected"},
		{"one component", `{ capability(id: ` + id + `) { component(id: "api-server-alert-001") { name version technology { stack language } } } }`, "projected"},
		{"components by type, then partitions", `{ componentsByType(type: "api-server") { nodes { name dependsOn { name sla { errorRate } } capability { name components { description } } } } }`, "projected"},
		{"job components", `{ capability(id: ` + id + `) { jobs(first: 3) { nodes { jobId components { name status } targetComponents { component { name version } } } } } }`, "projected"},
		{"capability metrics", `{ capability(id: ` + id + `) { metrics(first: 5) { nodes { componentId timestamp } } } }`, ""},
		{"analysis reads whole items", `{ capability(id: ` + id + `) { components { name } dependencyGraph { cycles { name } topologicalOrder { name } } slaReport { __typename }
			impact(componentId: "database-alert-001") { __typename } } }`, "whole"},
		{"SLA breaches read whole items", `{ capability(id: ` + id + `) { slaBreaches { name } components { name health { status } } } }`, "whole"},
	} {
		t.Run(c.name, func(t *testing.T) {
			projected.Store(0)
			full.Store(0)
			a, b := whole.ok(t, c.query, nil, nil), proj.ok(t, c.query, nil, nil)
			if !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("answers differ:\nwhole items %s\nprojected   %s", a.Data, b.Data)
			}
			if len(a.Data) < 60 {
				t.Fatalf("the answer is too thin to compare: %s", a.Data)
			}
			p, f := projected.Load(), full.Load()
			got := ""
			switch {
			case p > 0 && f == 0:
				got = "projected"
			case p == 0 && f > 0:
				got = "whole"
			case p > 0 && f > 0:
				got = "mixed"
			}
			if got != c.reads {
				t.Errorf("partition reads: %d projected, %d whole; want %q", p, f, c.reads)
			}
		})
	}
}
