package catalog

import (
	"math"
	"strconv"
	"strings"
)

// ComponentSLA compares one component's observed health with its SLA objectives.
type ComponentSLA struct {
	Component *Component
	// Availability, ResponseTime and ErrorRate are the observed values, nil when the
	// component does not report health.
	Availability, ResponseTime, ErrorRate *float64
	// Target is the component's SLA, nil when it has none.
	Target *SLA
	// AvailabilityMet, ResponseTimeMet and ErrorRateMet are nil when not measurable: no
	// health, no SLA, or an objective of 0 (not set).
	AvailabilityMet, ResponseTimeMet, ErrorRateMet *bool
	// Met reports whether every measurable objective is met, nil when none is measurable.
	Met *bool
}

// AvailabilityChain is an entry point with every component it reaches through runtime
// dependencies, and their combined availability.
type AvailabilityChain struct {
	Entry *Component
	// Components are the entry followed by the components it reaches, breadth-first.
	Components []*Component
	// Availability is the product of the availabilities, in percent, of the reporting
	// components whose failure fails the entry: the entry and the components Impact would give
	// the outcome failed (a walk of failing edges, see Dependency.Outcome).
	Availability float64
}

// SLAReport is the SLA view of a capability.
type SLAReport struct {
	Components []*ComponentSLA
	// CompositeAvailability is the weakest chain's availability in percent, nil when no
	// component reports availability.
	CompositeAvailability *float64
	// Target is the capability's businessMetrics.sla in percent, nil when absent or unparsable.
	Target *float64
	// Met reports CompositeAvailability >= Target, nil when either is nil.
	Met *bool
	// WeakestChain is the chain that gives CompositeAvailability.
	WeakestChain *AvailabilityChain
	// Chains has one chain per entry point, in input order.
	Chains []*AvailabilityChain
	// Breached counts the components whose Met is false.
	Breached int
}

// slaTolerance absorbs floating-point error when a composite is compared with its target.
const slaTolerance = 1e-9

// BuildSLAReport builds the SLA report of capability c (which may be nil) from its components
// and dependencies. It never fails: nil entries, repeated component IDs and dependencies
// naming unknown components are ignored.
//
// Each component is compared with its own SLA; a component reports health as in
// ComponentScore (Health != nil with status healthy, degraded or unhealthy), and an objective
// of 0 is not set.
//
// The composite availability follows the "calculus of availability": only runtime
// dependencies count. Entry points are the components no other component depends on; a cycle
// of components that nothing outside it depends on makes each of its members an entry point
// (so with cycles only, every component is one). An entry's chain is the entry plus every
// component it reaches, each once. Criticality enters as in Impact: only a component whose
// failure fails the entry is in series with it, that is the entry itself and each component
// reached by a walk of failing edges (Dependency.Outcome failed: hard and critical or high,
// or without criticality); a component reached only through a medium or low edge, or through
// a soft one (fallback, backup, optional), degrades the entry or puts it at risk but does not
// take it down, so it is listed in the chain but not multiplied. The chain's availability is
// the product of availability/100 over its reporting components in series (each clamped to
// 0..100), × 100, rounded to six decimals. The composite is the lowest availability among
// chains holding at least one reporting component in series (the weakest user-facing path;
// ties go to the earlier entry), and WeakestChain that chain. Target is read from
// c.BusinessMetrics.Sla, like "99.99%" or "99.9", and must lie within 0..100; Met compares
// with a tolerance of 1e-9.
func BuildSLAReport(c *Capability, components []*Component, deps []*Dependency) *SLAReport {
	g := newGraph(components, deps, []DependencyType{DependencyRuntime})
	rep := &SLAReport{Components: []*ComponentSLA{}, Chains: []*AvailabilityChain{}}
	if c != nil && c.BusinessMetrics != nil {
		rep.Target = parsePercent(c.BusinessMetrics.Sla)
	}

	for _, comp := range g.nodes {
		cs := &ComponentSLA{Component: comp, Target: comp.Sla}
		if reportsHealth(comp) {
			h := *comp.Health
			cs.Availability, cs.ResponseTime, cs.ErrorRate = &h.Availability, &h.ResponseTime, &h.ErrorRate
			cs.AvailabilityMet, cs.ResponseTimeMet, cs.ErrorRateMet = slaChecks(&h, comp.Sla)
		}
		for _, met := range []*bool{cs.AvailabilityMet, cs.ResponseTimeMet, cs.ErrorRateMet} {
			if met == nil {
				continue
			}
			all := *met && (cs.Met == nil || *cs.Met)
			cs.Met = &all
		}
		if cs.Met != nil && !*cs.Met {
			rep.Breached++
		}
		rep.Components = append(rep.Components, cs)
	}

	adj := g.adjacency(nil)
	// series keeps the edges whose target's failure fails the source (see Dependency.Outcome).
	series := g.adjacency(func(d *Dependency) bool { return d.Outcome() == OutcomeFailed })
	for _, entry := range entryPoints(adj) {
		_, _, order := bfs(entry, adj, len(adj))
		inSeries, _, _ := bfs(entry, series, len(adj))
		product, reporting := 1.0, 0
		for _, v := range order {
			if comp := g.nodes[v]; inSeries[v] >= 0 && reportsHealth(comp) {
				product *= clamp(comp.Health.Availability, 0, 100) / 100
				reporting++
			}
		}
		chain := &AvailabilityChain{
			Entry:        g.nodes[entry],
			Components:   g.pick(order),
			Availability: math.Round(product*100*1e6) / 1e6,
		}
		rep.Chains = append(rep.Chains, chain)
		if reporting > 0 && (rep.WeakestChain == nil || chain.Availability < rep.WeakestChain.Availability) {
			rep.WeakestChain = chain
		}
	}
	if rep.WeakestChain != nil {
		composite := rep.WeakestChain.Availability
		rep.CompositeAvailability = &composite
		if rep.Target != nil {
			met := composite >= *rep.Target-slaTolerance
			rep.Met = &met
		}
	}
	return rep
}

// entryPoints returns, in ascending order, the members of every strongly connected component
// that no edge enters from outside it.
func entryPoints(adj [][]int) []int {
	comps := stronglyConnected(len(adj), adj)
	compOf := make([]int, len(adj))
	for ci, comp := range comps {
		for _, v := range comp {
			compOf[v] = ci
		}
	}
	entered := make([]bool, len(comps))
	for v, list := range adj {
		for _, w := range list {
			if compOf[v] != compOf[w] {
				entered[compOf[w]] = true
			}
		}
	}
	var out []int
	for v := range adj {
		if !entered[compOf[v]] {
			out = append(out, v)
		}
	}
	return out
}

// parsePercent reads a percentage like "99.99%" or "99.9"; it returns nil when s is empty,
// unparsable or outside 0..100.
func parsePercent(s string) *float64 {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return nil
	}
	return &f
}
