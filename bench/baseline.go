package main

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// The per-field baseline: the same data needs resolved the way AppSync-style per-field
// resolvers resolve them. Every field of every parent makes its own DynamoDB call, one level
// after another (a child resolver runs only once its parent has resolved); within a level the
// calls run in parallel, as AppSync runs the fields of an object and the items of a list in
// parallel. Nothing is cached or batched across fields, and nothing is looked ahead.
//
// Keys are built by the dynamo package only (a house rule), so each per-field call is the
// exported dynamo.Store read that issues the same one DynamoDB request a per-field resolver
// would:
//   - capability metadata: Store.Capability, one GetItem of METADATA;
//   - a capability's components, dependencies or rules: Store.ReadRange with one segment, one
//     Query on that SK prefix;
//   - one component (Dependency.source/target, the targets of Component.dependsOn): its SK
//     holds its order, which the referencing item does not carry, so a resolver cannot GetItem
//     it; it Queries the COMPONENT# prefix and picks the component (Store.ReadRange of the
//     components segment: one Query, the same request);
//   - a component's outgoing edges (Component.dependsOn): one Query on DEPENDENCY#{id}#; the
//     store exports only the whole DEPENDENCY# segment, which is the same one Query (it reads
//     the capability's 12 edges instead of the component's own, so the baseline's items-read
//     count is higher than a hand-written resolver's; its request count is exact);
//   - the GSI1 list patterns and the jobs and metrics windows: the same Store calls the server
//     makes (Capabilities, ComponentsByType, Jobs, Metrics, ComponentMetrics).
//
// The computed fields of the analysis (dependencyGraph, impact, evaluateRules, slaReport) are
// one resolver each (a Lambda in AppSync) that reads what it needs itself, in parallel within
// the resolver, and computes with the same catalog functions as the server.

// baselineRunner runs baseline operations against a store within one context.
type baselineRunner struct {
	ctx context.Context
	st  *dynamo.Store
	now func() time.Time
}

// parallel runs fn(0..n-1) concurrently and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var g errgroup.Group
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}

// capability is the Query.capability resolver: GetItem METADATA, nil when missing.
func (b *baselineRunner) capability(id string) (*catalog.Capability, error) {
	c, err := b.st.Capability(b.ctx, id)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, nil
	}
	return c, err
}

func (b *baselineRunner) components(capID string) ([]*catalog.Component, error) {
	p, err := b.st.ReadRange(b.ctx, capID, dynamo.SegComponents, dynamo.Fields{})
	if err != nil {
		return nil, err
	}
	return p.Components, nil
}

func (b *baselineRunner) dependencies(capID string) ([]*catalog.Dependency, error) {
	p, err := b.st.ReadRange(b.ctx, capID, dynamo.SegDependencies, dynamo.Fields{})
	if err != nil {
		return nil, err
	}
	return p.Dependencies, nil
}

func (b *baselineRunner) rules(capID string) ([]*catalog.Rule, error) {
	p, err := b.st.ReadRange(b.ctx, capID, dynamo.SegRules, dynamo.Fields{})
	if err != nil {
		return nil, err
	}
	return p.Rules, nil
}

// component resolves one component reference: one Query on the COMPONENT# prefix.
func (b *baselineRunner) component(capID, componentID string) (*catalog.Component, error) {
	comps, err := b.components(capID)
	if err != nil {
		return nil, err
	}
	for _, c := range comps {
		if c.ComponentID == componentID {
			return c, nil
		}
	}
	return nil, nil
}

// completeView: GetItem; then components, dependencies, rules; then each edge's two ends.
func (b *baselineRunner) completeView(id string) (string, error) {
	c, err := b.capability(id)
	if err != nil || c == nil {
		return "capability=null", err
	}
	var (
		comps []*catalog.Component
		deps  []*catalog.Dependency
		rules []*catalog.Rule
	)
	err = parallel(3, func(i int) (err error) {
		switch i {
		case 0:
			comps, err = b.components(id)
		case 1:
			deps, err = b.dependencies(id)
		case 2:
			rules, err = b.rules(id)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	ends := make([]*catalog.Component, 2*len(deps))
	err = parallel(len(ends), func(i int) (err error) {
		d := deps[i/2]
		ref := d.SourceComponentID
		if i%2 == 1 {
			ref = d.TargetComponentID
		}
		ends[i], err = b.component(id, ref)
		return err
	})
	if err != nil {
		return "", err
	}
	src, dst := 0, 0
	for i, e := range ends {
		if e != nil && e.Name != "" {
			if i%2 == 0 {
				src++
			} else {
				dst++
			}
		}
	}
	return completeSummary(c.Name, len(comps), len(deps), src, dst, len(rules)), nil
}

// list: the GSI1 page; then each capability's components and dependencies; then each
// component's outgoing edges (Component.dependsOn); then, per component with edges, its targets.
func (b *baselineRunner) list(first int) (string, error) {
	p, err := b.st.Capabilities(b.ctx, "", first, "")
	if err != nil {
		return "", err
	}
	n := len(p.Items)
	comps := make([][]*catalog.Component, n)
	deps := make([][]*catalog.Dependency, n)
	err = parallel(2*n, func(i int) (err error) {
		id := p.Items[i/2].CapabilityID
		if i%2 == 0 {
			comps[i/2], err = b.components(id)
		} else {
			deps[i/2], err = b.dependencies(id)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	type ref struct{ cap, comp int }
	var all []ref
	for i := range comps {
		for k := range comps[i] {
			all = append(all, ref{i, k})
		}
	}
	edges := make([][]*catalog.Dependency, len(all))
	err = parallel(len(all), func(i int) error {
		c := comps[all[i].cap][all[i].comp]
		ds, err := b.dependencies(c.CapabilityID)
		for _, d := range ds {
			if d.SourceComponentID == c.ComponentID {
				edges[i] = append(edges[i], d)
			}
		}
		return err
	})
	if err != nil {
		return "", err
	}
	targets := make([]int, len(all))
	err = parallel(len(all), func(i int) error {
		if len(edges[i]) == 0 {
			return nil
		}
		c := comps[all[i].cap][all[i].comp]
		cs, err := b.components(c.CapabilityID)
		byID := map[string]bool{}
		for _, x := range cs {
			byID[x.ComponentID] = true
		}
		for _, e := range edges[i] {
			if byID[e.TargetComponentID] {
				targets[i]++
			}
		}
		return err
	})
	if err != nil {
		return "", err
	}
	nComps, nOn, nDeps := 0, 0, 0
	for i := range comps {
		nComps += len(comps[i])
		nDeps += len(deps[i])
	}
	for _, t := range targets {
		nOn += t
	}
	return listSummary(n, nComps, nOn, nDeps), nil
}

// byType: the GSI1 page; then each component's capability, one GetItem each.
func (b *baselineRunner) byType(componentType string, first int) (string, error) {
	p, err := b.st.ComponentsByType(b.ctx, componentType, first, "")
	if err != nil {
		return "", err
	}
	caps := make([]*catalog.Capability, len(p.Items))
	err = parallel(len(p.Items), func(i int) (err error) {
		caps[i], err = b.capability(p.Items[i].CapabilityID)
		return err
	})
	if err != nil {
		return "", err
	}
	named := 0
	for _, c := range caps {
		if c != nil && c.Name != "" {
			named++
		}
	}
	return byTypeSummary(len(p.Items), named), nil
}

// jobs: GetItem; then the JOB# window.
func (b *baselineRunner) jobs(id string, first int) (string, error) {
	c, err := b.capability(id)
	if err != nil || c == nil {
		return "capability=null", err
	}
	p, err := b.st.Jobs(b.ctx, id, dynamo.JobFilter{}, first, "")
	if err != nil {
		return "", err
	}
	newest := ""
	if len(p.Items) > 0 {
		newest = p.Items[0].JobID
	}
	return jobsSummary(c.Name, len(p.Items), newest, p.HasNext), nil
}

func timestamps(ms []*catalog.Metric) []struct{ Timestamp string } {
	out := make([]struct{ Timestamp string }, len(ms))
	for i, m := range ms {
		out[i].Timestamp = m.Timestamp.String()
	}
	return out
}

// componentMetrics: the GSI1 METRICS# window, the same single call.
func (b *baselineRunner) componentMetrics(componentID string, from, to time.Time) (string, error) {
	p, err := b.st.ComponentMetrics(b.ctx, dynamo.MetricFilter{ComponentID: componentID, From: &from, To: &to}, 100, "")
	if err != nil {
		return "", err
	}
	return metricsSummary(timestamps(p.Items), p.HasNext), nil
}

// window: GetItem; then the METRIC# range of one component and type.
func (b *baselineRunner) window(id, componentID string, from, to time.Time) (string, error) {
	c, err := b.capability(id)
	if err != nil || c == nil {
		return "capability=null", err
	}
	f := dynamo.MetricFilter{ComponentID: componentID, MetricType: catalog.MetricPerformance, From: &from, To: &to}
	p, err := b.st.Metrics(b.ctx, id, f, 100, "")
	if err != nil {
		return "", err
	}
	return metricsSummary(timestamps(p.Items), p.HasNext), nil
}

// analysis: GetItem; then four computed fields, each reading its own inputs.
func (b *baselineRunner) analysis(id, root string) (string, error) {
	c, err := b.capability(id)
	if err != nil || c == nil {
		return "capability=null", err
	}
	// graphInputs is what dependencyGraph, impact and slaReport each read: two Queries at once.
	graphInputs := func() (comps []*catalog.Component, deps []*catalog.Dependency, err error) {
		err = parallel(2, func(i int) (err error) {
			if i == 0 {
				comps, err = b.components(id)
			} else {
				deps, err = b.dependencies(id)
			}
			return err
		})
		return comps, deps, err
	}
	var (
		graph  *catalog.GraphAnalysis
		impact *catalog.ImpactResult
		evals  []*catalog.RuleEvaluation
		sla    *catalog.SLAReport
	)
	err = parallel(4, func(i int) error {
		switch i {
		case 0:
			comps, deps, err := graphInputs()
			if err != nil {
				return err
			}
			graph = catalog.AnalyzeGraph(comps, deps, nil)
		case 1:
			comps, deps, err := graphInputs()
			if err != nil {
				return err
			}
			impact, err = catalog.Impact(comps, deps, root, catalog.ImpactDependents, 10, nil)
			return err
		case 2:
			rules, err := b.rules(id)
			if err != nil {
				return err
			}
			evals = catalog.EvaluateRules(rules, ruleInput, nil, b.now())
		case 3:
			comps, deps, err := graphInputs()
			if err != nil {
				return err
			}
			sla = catalog.BuildSLAReport(c, comps, deps)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	matched := 0
	for _, e := range evals {
		if e.Matched {
			matched++
		}
	}
	return analysisSummary(len(graph.TopologicalOrder), len(graph.Cycles), len(graph.CriticalPath),
		len(impact.Affected), len(evals), matched, sla.Breached), nil
}
