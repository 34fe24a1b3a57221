package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// operation is one measured data need: a GraphQL operation served by the real handler, the same
// data fetched by the per-field baseline, and the fewest DynamoDB requests and round trips it
// can cost with this table design.
type operation struct {
	Name  string
	Query string
	Vars  map[string]any

	// MinRequests and MinRoundTrips are the theoretical minimum (the budgets of docs/design.md): every
	// item needed read by the fewest calls, the independent ones concurrently.
	MinRequests   int
	MinRoundTrips int
	// Why explains the minimum.
	Why string

	// Summarize reduces the GraphQL data to a line that the baseline's result must equal.
	Summarize func(data json.RawMessage) (string, error)
	// Baseline fetches the same data field by field (see baseline.go) and summarizes it.
	Baseline func(b *baselineRunner) (string, error)
	// BaselineDoes says, for the report, what the baseline sends.
	BaselineDoes string

	// Once marks an operation measured a single time (a finding, not a row of the main table).
	Once bool
}

// body is the operation's GraphQL request body.
func (op *operation) body() []byte {
	b, _ := json.Marshal(map[string]any{"query": op.Query, "variables": op.Vars})
	return b
}

// opConfig is what the operations refer to in the catalogue.
type opConfig struct {
	shape shape
	gen   *generator
	// capIndex is the regular capability the single-capability operations read.
	capIndex int
}

func (c opConfig) totalCapabilities() int {
	n := c.shape.Capabilities
	if c.shape.Large {
		n++
	}
	return n
}

const completeViewQuery = `query CompleteView($id: ID!) {
  capability(id: $id) {
    id name description businessDomain status priority owner version tags
    businessMetrics { sla rto rpo criticalityLevel }
    aggregates { totalComponents activeComponents healthScore healthStatus totalDependencies totalJobs totalRules activeRules }
    components { componentId name componentType order layer status version
      health { status availability responseTime errorRate } sla { availability responseTime errorRate } }
    dependencies { sourceComponentId targetComponentId dependencyType criticality
      source { componentId name status } target { componentId name status } }
    rules { ruleId name ruleType status priority order conditions { field operator weight } actions { type } }
  }
}`

const listQuery = `query List {
  capabilities(first: 50) {
    nodes { id name status priority
      components { componentId name status dependsOn { componentId name } }
      dependencies { sourceComponentId targetComponentId criticality } }
    pageInfo { hasNextPage endCursor }
  }
}`

const byTypeQuery = `query ByType {
  componentsByType(type: "api-server", first: 50) {
    nodes { componentId name status capability { id name businessDomain } }
  }
}`

const jobsQuery = `query Jobs($id: ID!) {
  capability(id: $id) {
    id name
    jobs(first: 20) { nodes { jobId jobType status startTime endTime } pageInfo { hasNextPage } }
  }
}`

const metricsQuery = `query Metrics($c: ID!, $from: DateTime!, $to: DateTime!) {
  componentMetrics(componentId: $c, from: $from, to: $to, first: 100) {
    nodes { timestamp metricType values { availability { value } latency { p95 } } }
    pageInfo { hasNextPage }
  }
}`

const analysisQuery = `query Analysis($id: ID!, $root: ID!, $input: JSON!) {
  capability(id: $id) {
    id name
    dependencyGraph { topologicalOrder { componentId } cycles { componentId } criticalPath { componentId } }
    impact(componentId: $root) { affected { component { componentId } distance outcome } }
    evaluateRules(input: $input) { rule { ruleId } matched score severity }
    slaReport { compositeAvailability met breached }
  }
}`

const windowQuery = `query MetricsWindow($id: ID!, $c: ID!, $from: DateTime!, $to: DateTime!) {
  capability(id: $id) {
    id name
    metrics(componentId: $c, metricType: PERFORMANCE, from: $from, to: $to, first: 100) {
      nodes { timestamp componentId values { latency { p95 } } }
      pageInfo { hasNextPage }
    }
  }
}`

const filteredWindowQuery = `query MetricsWindowAllComponents($id: ID!, $from: DateTime!, $to: DateTime!) {
  capability(id: $id) {
    id
    metrics(from: $from, to: $to, first: 100) { nodes { timestamp componentId } pageInfo { hasNextPage } }
  }
}`

// ruleInput is the evaluateRules input: it matches every active rule.
var ruleInput = map[string]any{"source": "production", "error_count": 150.0, "customer_impact": "high"}

// operations returns the measured operations for a catalogue.
func operations(c opConfig) []*operation {
	s := c.shape
	id := capabilityID(c.capIndex)
	comp0 := componentID(c.capIndex, 0)
	root := componentID(c.capIndex, max(s.Components-1, 0))
	listN := min(50, c.totalCapabilities())
	to := c.gen.newest
	from := to.Add(-time.Hour)
	ts := func(t time.Time) string { return catalog.NewTimestamp(t).String() }

	ops := []*operation{
		{
			Name: "complete view", Query: completeViewQuery, Vars: map[string]any{"id": id},
			MinRequests: 3, MinRoundTrips: 1,
			Why:          "METADATA get + COMPONENT#..DEPENDENCY# range Query + RULE# range Query, concurrent",
			Summarize:    summarizeCompleteView,
			Baseline:     func(b *baselineRunner) (string, error) { return b.completeView(id) },
			BaselineDoes: "GetItem METADATA; then Query COMPONENT#, Query DEPENDENCY#, Query RULE# (parallel); then per dependency one Query for source and one for target (parallel)",
		},
		{
			Name: "list 50 with components, dependsOn, dependencies", Query: listQuery,
			MinRequests: 1 + listN, MinRoundTrips: 2,
			Why:          fmt.Sprintf("GSI1 CAPABILITIES Query, then %d partition range Queries (COMPONENT#..DEPENDENCY#), concurrent", listN),
			Summarize:    summarizeList,
			Baseline:     func(b *baselineRunner) (string, error) { return b.list(50) },
			BaselineDoes: "Query GSI1; then per capability Query COMPONENT# and Query DEPENDENCY# (parallel); then per component Query its outgoing DEPENDENCY# edges (parallel); then per component with edges one Query for its targets (parallel)",
		},
		{
			Name: "componentsByType with capability name", Query: byTypeQuery,
			MinRequests: 1 + (listN+99)/100, MinRoundTrips: 2,
			Why:          fmt.Sprintf("GSI1 COMPONENT#api-server Query, then ceil(%d distinct/100) BatchGetItem", listN),
			Summarize:    summarizeByType,
			Baseline:     func(b *baselineRunner) (string, error) { return b.byType("api-server", 50) },
			BaselineDoes: "Query GSI1; then per component GetItem its capability's METADATA (parallel)",
		},
		{
			Name: "newest 20 jobs", Query: jobsQuery, Vars: map[string]any{"id": id},
			MinRequests: 2, MinRoundTrips: 1,
			Why:          "METADATA get (the capability, or null) + JOB# Query newest first, Limit 21, concurrent",
			Summarize:    summarizeJobs,
			Baseline:     func(b *baselineRunner) (string, error) { return b.jobs(id, 20) },
			BaselineDoes: "GetItem METADATA; then Query JOB# newest first",
		},
		{
			Name: "component metrics, last hour", Query: metricsQuery,
			Vars:        map[string]any{"c": comp0, "from": ts(from), "to": ts(to)},
			MinRequests: 1, MinRoundTrips: 1,
			Why:          "GSI1 METRICS#component Query on the time range",
			Summarize:    summarizeMetrics,
			Baseline:     func(b *baselineRunner) (string, error) { return b.componentMetrics(comp0, from, to) },
			BaselineDoes: "Query GSI1 METRICS#component on the time range (the same call)",
		},
		{
			Name: "analysis: dependencyGraph, impact, evaluateRules, slaReport", Query: analysisQuery,
			Vars:        map[string]any{"id": id, "root": root, "input": ruleInput},
			MinRequests: 3, MinRoundTrips: 1,
			Why:          "METADATA get + COMPONENT#..DEPENDENCY# Query + RULE# Query, concurrent; the analysis is computed in the server",
			Summarize:    summarizeAnalysis,
			Baseline:     func(b *baselineRunner) (string, error) { return b.analysis(id, root) },
			BaselineDoes: "GetItem METADATA; then each computed field reads what it needs on its own (parallel): dependencyGraph, impact and slaReport each Query COMPONENT# and DEPENDENCY#, evaluateRules Query RULE#",
		},
	}
	if !s.Large {
		return ops
	}
	lcomp := componentID(s.Capabilities, 0)
	lto := c.gen.now.Truncate(time.Minute)
	lfrom := lto.Add(-time.Hour)
	ops = append(ops,
		&operation{
			Name: "large: complete view", Query: completeViewQuery, Vars: map[string]any{"id": largeID},
			MinRequests: 3, MinRoundTrips: 1,
			Why:          "as the complete view: JOB# and METRIC# are never read",
			Summarize:    summarizeCompleteView,
			Baseline:     func(b *baselineRunner) (string, error) { return b.completeView(largeID) },
			BaselineDoes: "as the complete view",
		},
		&operation{
			Name: "large: newest 20 jobs", Query: jobsQuery, Vars: map[string]any{"id": largeID},
			MinRequests: 2, MinRoundTrips: 1,
			Why:          "METADATA get + JOB# Query, Limit 21",
			Summarize:    summarizeJobs,
			Baseline:     func(b *baselineRunner) (string, error) { return b.jobs(largeID, 20) },
			BaselineDoes: "as the newest 20 jobs",
		},
		&operation{
			Name: "large: metrics(componentId, metricType, from, to), last hour", Query: windowQuery,
			Vars:        map[string]any{"id": largeID, "c": lcomp, "from": ts(lfrom), "to": ts(lto)},
			MinRequests: 2, MinRoundTrips: 1,
			Why:          "METADATA get + METRIC#component#type# range Query on the window only",
			Summarize:    summarizeWindow,
			Baseline:     func(b *baselineRunner) (string, error) { return b.window(largeID, lcomp, lfrom, lto) },
			BaselineDoes: "GetItem METADATA; then the same METRIC# range Query",
		},
		&operation{
			Name: "large: metrics(from, to) without componentId", Query: filteredWindowQuery,
			Vars:        map[string]any{"id": largeID, "from": ts(lfrom), "to": ts(lto)},
			MinRequests: 2 + s.Components*len(catalog.MetricTypes), MinRoundTrips: 2,
			Why:       "METADATA get and a COMPONENT# Query, then one METRIC#component#type# key-range Query on the window per component and metric type, all at once, merged in sort-key order: never the whole history",
			Summarize: summarizeFilteredWindow,
			Once:      true,
		},
	)
	return ops
}

// ---------------------------------------------------------------------------------------------
// Summaries of the GraphQL data, in the baseline's words.

func summarizeCompleteView(data json.RawMessage) (string, error) {
	var d struct {
		Capability *struct {
			Name       string
			Components []struct{ ComponentID string }
			Deps       []struct {
				Source, Target *struct{ Name string }
			} `json:"dependencies"`
			Rules []struct{ RuleID string }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	if d.Capability == nil {
		return "capability=null", nil
	}
	src, dst := 0, 0
	for _, e := range d.Capability.Deps {
		if e.Source != nil && e.Source.Name != "" {
			src++
		}
		if e.Target != nil && e.Target.Name != "" {
			dst++
		}
	}
	return completeSummary(d.Capability.Name, len(d.Capability.Components), len(d.Capability.Deps), src, dst, len(d.Capability.Rules)), nil
}

func completeSummary(name string, comps, deps, src, dst, rules int) string {
	return fmt.Sprintf("name=%q components=%d dependencies=%d sources=%d targets=%d rules=%d", name, comps, deps, src, dst, rules)
}

func summarizeList(data json.RawMessage) (string, error) {
	var d struct {
		Capabilities struct {
			Nodes []struct {
				ID         string
				Components []struct {
					DependsOn []struct{ Name string }
				}
				Dependencies []struct{ Criticality string }
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	comps, on, deps := 0, 0, 0
	for _, n := range d.Capabilities.Nodes {
		comps += len(n.Components)
		deps += len(n.Dependencies)
		for _, c := range n.Components {
			on += len(c.DependsOn)
		}
	}
	return listSummary(len(d.Capabilities.Nodes), comps, on, deps), nil
}

func listSummary(caps, comps, dependsOn, deps int) string {
	return fmt.Sprintf("capabilities=%d components=%d dependsOn=%d dependencies=%d", caps, comps, dependsOn, deps)
}

func summarizeByType(data json.RawMessage) (string, error) {
	var d struct {
		ComponentsByType struct {
			Nodes []struct {
				Capability struct{ Name string }
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	named := 0
	for _, n := range d.ComponentsByType.Nodes {
		if n.Capability.Name != "" {
			named++
		}
	}
	return byTypeSummary(len(d.ComponentsByType.Nodes), named), nil
}

func byTypeSummary(comps, named int) string {
	return fmt.Sprintf("components=%d withCapabilityName=%d", comps, named)
}

func summarizeJobs(data json.RawMessage) (string, error) {
	var d struct {
		Capability *struct {
			Name string
			Jobs struct {
				Nodes    []struct{ JobID string }
				PageInfo struct{ HasNextPage bool }
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	if d.Capability == nil {
		return "capability=null", nil
	}
	first := ""
	if len(d.Capability.Jobs.Nodes) > 0 {
		first = d.Capability.Jobs.Nodes[0].JobID
	}
	return jobsSummary(d.Capability.Name, len(d.Capability.Jobs.Nodes), first, d.Capability.Jobs.PageInfo.HasNextPage), nil
}

func jobsSummary(name string, n int, first string, more bool) string {
	return fmt.Sprintf("name=%q jobs=%d newest=%s hasNext=%v", name, n, first, more)
}

func summarizeMetrics(data json.RawMessage) (string, error) {
	var d struct {
		ComponentMetrics struct {
			Nodes    []struct{ Timestamp string }
			PageInfo struct{ HasNextPage bool }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	return metricsSummary(d.ComponentMetrics.Nodes, d.ComponentMetrics.PageInfo.HasNextPage), nil
}

func metricsSummary(nodes []struct{ Timestamp string }, more bool) string {
	first, last := "", ""
	if len(nodes) > 0 {
		first, last = nodes[0].Timestamp, nodes[len(nodes)-1].Timestamp
	}
	return fmt.Sprintf("metrics=%d first=%s last=%s hasNext=%v", len(nodes), first, last, more)
}

func summarizeAnalysis(data json.RawMessage) (string, error) {
	var d struct {
		Capability *struct {
			DependencyGraph struct {
				TopologicalOrder []struct{ ComponentID string }
				Cycles           [][]struct{ ComponentID string }
				CriticalPath     []struct{ ComponentID string }
			}
			Impact struct {
				Affected []struct{ Distance int }
			}
			EvaluateRules []struct{ Matched bool }
			SlaReport     struct{ Breached int }
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	c := d.Capability
	if c == nil {
		return "capability=null", nil
	}
	matched := 0
	for _, e := range c.EvaluateRules {
		if e.Matched {
			matched++
		}
	}
	return analysisSummary(len(c.DependencyGraph.TopologicalOrder), len(c.DependencyGraph.Cycles), len(c.DependencyGraph.CriticalPath),
		len(c.Impact.Affected), len(c.EvaluateRules), matched, c.SlaReport.Breached), nil
}

func analysisSummary(topo, cycles, critical, affected, evaluations, matched, breached int) string {
	return fmt.Sprintf("topological=%d cycles=%d criticalPath=%d affected=%d evaluations=%d matched=%d breached=%d",
		topo, cycles, critical, affected, evaluations, matched, breached)
}

func summarizeWindow(data json.RawMessage) (string, error) {
	var d struct {
		Capability *struct {
			Metrics struct {
				Nodes    []struct{ Timestamp string }
				PageInfo struct{ HasNextPage bool }
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	if d.Capability == nil {
		return "capability=null", nil
	}
	return metricsSummary(d.Capability.Metrics.Nodes, d.Capability.Metrics.PageInfo.HasNextPage), nil
}

func summarizeFilteredWindow(data json.RawMessage) (string, error) { return summarizeWindow(data) }
