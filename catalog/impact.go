package catalog

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// ImpactDirection is which way a blast-radius walk follows the dependency edges.
type ImpactDirection string

// The impact directions.
const (
	// ImpactDependents walks from a component to the components that depend on it: who breaks
	// when it fails.
	ImpactDependents ImpactDirection = "dependents"
	// ImpactDependencies walks from a component to the components it depends on.
	ImpactDependencies ImpactDirection = "dependencies"
)

// ImpactOutcome is what happens to an affected component.
type ImpactOutcome string

// The impact outcomes, worst first (see Dependency.Outcome and Impact).
const (
	// OutcomeFailed means some chain of failing links (hard, critical or high) joins the
	// component to the root: it fails too.
	OutcomeFailed ImpactOutcome = "failed"
	// OutcomeDegraded means no chain fails it, but some chain of links that fail or degrade
	// reaches it: it keeps serving in a degraded mode.
	OutcomeDegraded ImpactOutcome = "degraded"
	// OutcomeAtRisk means every chain joining the component to the root crosses a link that
	// only puts its source at risk (a low criticality, or a softened medium one): it keeps
	// serving, with less margin.
	OutcomeAtRisk ImpactOutcome = "at_risk"
)

// MaxImpactDepth is the largest number of hops an impact walk may take.
const MaxImpactDepth = 50

// The vocabularies of the impact analysis, in a stable order.
var (
	ImpactDirections = []ImpactDirection{ImpactDependents, ImpactDependencies}
	ImpactOutcomes   = []ImpactOutcome{OutcomeFailed, OutcomeDegraded, OutcomeAtRisk}
)

// SoftFallbackStrategies are the Fallback.Strategy values that keep the dependent serving in a
// degraded mode when the target fails. Strategies are compared after trimming, lower-casing and
// turning '_' and ' ' into '-'. Fail-fast patterns such as "circuit-breaker", "retry" and
// "timeout" are deliberately absent: they protect the caller but do not replace the target.
var SoftFallbackStrategies = []string{
	"cache",
	"cached-response",
	"default-value",
	"graceful-degradation",
	"degrade",
	"queue",
	"retry-queue",
	"static-content",
	"failover",
	"backup",
	"read-replica",
	"fallback",
}

// Valid reports whether d is one of the vocabulary's values.
func (d ImpactDirection) Valid() bool { return contains(ImpactDirections, d) }

// Valid reports whether o is one of the vocabulary's values.
func (o ImpactOutcome) Valid() bool { return contains(ImpactOutcomes, o) }

// MarshalGQL implements graphql.Marshaler.
func (d ImpactDirection) MarshalGQL(w io.Writer) { marshalEnum(w, string(d)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (d *ImpactDirection) UnmarshalGQL(v any) (err error) {
	*d, err = unmarshalEnum(v, ImpactDirections, "ImpactDirection")
	return err
}

// MarshalGQL implements graphql.Marshaler.
func (o ImpactOutcome) MarshalGQL(w io.Writer) { marshalEnum(w, string(o)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (o *ImpactOutcome) UnmarshalGQL(v any) (err error) {
	*o, err = unmarshalEnum(v, ImpactOutcomes, "ImpactOutcome")
	return err
}

// IsSoft reports whether d softens the failure of its target by one step (see Outcome: a
// critical or high soft dependency degrades its source rather than failing it): d is of type
// optional or fallback, or its Fallback names a
// non-empty BackupComponent, or its Fallback.Strategy is one of SoftFallbackStrategies. A nil
// dependency is not soft.
func (d *Dependency) IsSoft() bool {
	if d == nil {
		return false
	}
	if d.DependencyType == DependencyOptional || d.DependencyType == DependencyFallback {
		return true
	}
	f := d.Fallback
	if f == nil {
		return false
	}
	if f.BackupComponent != nil && strings.TrimSpace(*f.BackupComponent) != "" {
		return true
	}
	s := strings.ToLower(strings.TrimSpace(f.Strategy))
	s = strings.NewReplacer("_", "-", " ", "-").Replace(s)
	for _, soft := range SoftFallbackStrategies {
		if s == soft {
			return true
		}
	}
	return false
}

// Severity ranks an outcome: 3 for failed, 2 for degraded, 1 for at_risk, 0 for anything else
// (unaffected). A larger severity is worse.
func (o ImpactOutcome) Severity() int {
	switch o {
	case OutcomeFailed:
		return 3
	case OutcomeDegraded:
		return 2
	case OutcomeAtRisk:
		return 1
	}
	return 0
}

// outcomeOfSeverity is the inverse of ImpactOutcome.Severity for 1..3.
var outcomeOfSeverity = [...]ImpactOutcome{1: OutcomeAtRisk, 2: OutcomeDegraded, 3: OutcomeFailed}

// Outcome returns what the failure of d's target does to d's source, one link on its own.
// The criticality gives the base outcome: critical and high fail the source, medium degrades
// it, low puts it at risk; a criticality that is empty or not in the vocabulary counts as
// critical. A soft dependency (IsSoft: type optional or fallback, a backup component, or a
// degraded-mode fallback strategy) softens the base by one step, never below at risk:
//
//	criticality    hard       soft
//	critical       failed     degraded
//	high           failed     degraded
//	medium         degraded   at_risk
//	low            at_risk    at_risk
//
// A nil dependency fails its source.
func (d *Dependency) Outcome() ImpactOutcome {
	if d == nil {
		return OutcomeFailed
	}
	sev := 3
	switch d.Criticality {
	case CriticalityMedium:
		sev = 2
	case CriticalityLow:
		sev = 1
	}
	if sev > 1 && d.IsSoft() {
		sev--
	}
	return outcomeOfSeverity[sev]
}

// ImpactedComponent is one component within the blast radius of the root.
type ImpactedComponent struct {
	Component *Component
	// Distance is the shortest number of hops from the root.
	Distance int
	// Path runs from the root to Component, both included, along a shortest walk.
	Path    []*Component
	Outcome ImpactOutcome
}

// ImpactResult is the blast radius of one component.
type ImpactResult struct {
	Root     *Component
	Affected []*ImpactedComponent
}

// Impact computes the blast radius of the component rootID within components and deps, only
// dependencies of the given types counting when types is not empty. With ImpactDependents it
// walks the edges backwards, from a target to the sources that depend on it (who breaks when
// the root fails); with ImpactDependencies it walks them forwards, from a source to its
// targets (what the root needs).
//
// The walk is breadth-first, visits each component once, is safe on cycles and takes at most
// maxDepth hops. The root is not in Affected. Distance is the shortest hop count and Path the
// shortest walk from the root to the component, both ends included; among equally short walks
// the one whose components come earliest in input order wins. Affected is sorted by Distance,
// then by input order.
//
// Each edge has its own outcome, Dependency.Outcome: its criticality (critical and high fail,
// medium degrades, low puts at risk) softened one step, never below at risk, when the edge is
// soft (Dependency.IsSoft). A chain of edges is as strong as its mildest edge: a component
// that only degrades passes on degradation at most. A component's outcome is the worst over
// every walk of at most maxDepth hops from the root: it is OutcomeFailed when such a walk uses
// failing edges only, else OutcomeDegraded when one uses failing or degrading edges only, else
// OutcomeAtRisk. Every reached component is affected, and cycles change nothing (the outcome
// of a level is plain reachability over the edges at least that severe). Between two
// components linked by several edges, the worst edge counts.
//
// Impact returns a *ValidationError when dir is not a known direction (field "direction"),
// when maxDepth is outside 1..MaxImpactDepth (field "maxDepth"), when a filter type is not a
// known DependencyType (field "types[i]") or when rootID names no component (field
// "componentId"), checked in that order.
func Impact(components []*Component, deps []*Dependency, rootID string, dir ImpactDirection, maxDepth int, types []DependencyType) (*ImpactResult, error) {
	if !dir.Valid() {
		return nil, Invalid("direction", "%q is not a valid ImpactDirection", string(dir))
	}
	if maxDepth < 1 || maxDepth > MaxImpactDepth {
		return nil, Invalid("maxDepth", "must be between 1 and %d, got %d", MaxImpactDepth, maxDepth)
	}
	for i, t := range types {
		if !t.Valid() {
			return nil, Invalid(fmt.Sprintf("types[%d]", i), "%q is not a valid DependencyType", string(t))
		}
	}
	g := newGraph(components, deps, types)
	root, ok := g.index[rootID]
	if !ok {
		return nil, Invalid("componentId", "no component %q in this capability", rootID)
	}

	all := g.adjacency(nil)
	if dir == ImpactDependents {
		all = reverse(all)
	}
	dist, parent, _ := bfs(root, all, maxDepth)
	severity := g.outcomeLevels(root, dir == ImpactDependents, maxDepth)

	res := &ImpactResult{Root: g.nodes[root], Affected: []*ImpactedComponent{}}
	for v := range g.nodes {
		if v == root || dist[v] < 0 {
			continue
		}
		path := make([]int, dist[v]+1)
		for i, w := dist[v], v; i >= 0; i, w = i-1, parent[w] {
			path[i] = w
		}
		outcome := outcomeOfSeverity[max(severity[v], 1)]
		res.Affected = append(res.Affected, &ImpactedComponent{
			Component: g.nodes[v],
			Distance:  dist[v],
			Path:      g.pick(path),
			Outcome:   outcome,
		})
	}
	// Nodes were collected in input order; a stable sort by distance keeps it within a level.
	sort.SliceStable(res.Affected, func(i, j int) bool { return res.Affected[i].Distance < res.Affected[j].Distance })
	return res, nil
}

// outcomeLevels returns, for each node, the severity (ImpactOutcome.Severity) of the worst
// outcome a failure of root gives it: the largest level L such that a walk of at most
// maxDepth hops from root reaches the node over edges whose Dependency.Outcome has severity L
// or more; 0 when unreached. With backwards the edges are walked from target to source. The
// root itself gets 3.
func (g *graph) outcomeLevels(root int, backwards bool, maxDepth int) []int {
	level := make([]int, len(g.nodes))
	for sev := 1; sev <= 3; sev++ {
		adj := g.adjacency(func(d *Dependency) bool { return d.Outcome().Severity() >= sev })
		if backwards {
			adj = reverse(adj)
		}
		dist, _, _ := bfs(root, adj, maxDepth)
		for v, d := range dist {
			if d >= 0 {
				level[v] = sev
			}
		}
	}
	return level
}

// bfs walks adj breadth-first from root for at most maxDepth hops. It returns each node's hop
// count (-1 when unreached), the node it was reached from, and the nodes in visiting order
// (root first). Nodes of a level are expanded in
// the order of their lexicographically smallest shortest path, neighbours in ascending index,
// so that each parent lies on the lexicographically smallest shortest path.
func bfs(root int, adj [][]int, maxDepth int) (dist, parent, order []int) {
	dist = make([]int, len(adj))
	parent = make([]int, len(adj))
	for i := range dist {
		dist[i], parent[i] = -1, -1
	}
	dist[root] = 0
	order = []int{root}
	level := []int{root}
	for d := 1; d <= maxDepth && len(level) > 0; d++ {
		var next []int
		for _, v := range level {
			for _, w := range adj[v] {
				if dist[w] < 0 {
					dist[w], parent[w] = d, v
					next = append(next, w)
					order = append(order, w)
				}
			}
		}
		level = next
	}
	return dist, parent, order
}

// SortByCriticality sorts deps in place, most critical first (critical, high, medium, low,
// then any other value), keeping the existing order among dependencies of one criticality.
// It is the order of the seed's #DEPENDENCIES index ({criticality:02d}#source#target) when
// deps come in key order (by source, then target).
func SortByCriticality(deps []*Dependency) {
	slices.SortStableFunc(deps, func(a, b *Dependency) int {
		return cmp.Compare(dependencyRank(a), dependencyRank(b))
	})
}

// dependencyRank is d's criticality rank, nil last.
func dependencyRank(d *Dependency) int {
	if d == nil {
		return 10
	}
	return d.Criticality.Rank()
}
