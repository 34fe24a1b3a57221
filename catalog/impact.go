package catalog

import (
	"fmt"
	"io"
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

// The impact outcomes.
const (
	// OutcomeFailed means a chain of hard dependencies links the component to the root.
	OutcomeFailed ImpactOutcome = "failed"
	// OutcomeDegraded means every chain linking the component to the root crosses a soft
	// dependency, so it keeps serving in a degraded mode.
	OutcomeDegraded ImpactOutcome = "degraded"
)

// MaxImpactDepth is the largest number of hops an impact walk may take.
const MaxImpactDepth = 50

// The vocabularies of the impact analysis, in a stable order.
var (
	ImpactDirections = []ImpactDirection{ImpactDependents, ImpactDependencies}
	ImpactOutcomes   = []ImpactOutcome{OutcomeFailed, OutcomeDegraded}
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

// IsSoft reports whether the failure of d's target leaves d's source serving in a degraded
// mode rather than failing: d is of type optional or fallback, or its Fallback names a
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
// An edge is soft when Dependency.IsSoft holds (type optional or fallback, a backup component,
// or a degraded-mode strategy from SoftFallbackStrategies) and hard otherwise. An affected
// component is OutcomeFailed when the walk reaches it from the root within maxDepth hops using
// hard edges only; otherwise every walk to it crosses a soft edge and it is OutcomeDegraded.
// Between two components linked by several edges, one hard edge makes the link hard.
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
	hard := g.adjacency(func(d *Dependency) bool { return !d.IsSoft() })
	if dir == ImpactDependents {
		all, hard = reverse(all), reverse(hard)
	}

	dist, parent, _ := bfs(root, all, maxDepth)
	hardDist, _, _ := bfs(root, hard, maxDepth)

	res := &ImpactResult{Root: g.nodes[root], Affected: []*ImpactedComponent{}}
	for v := range g.nodes {
		if v == root || dist[v] < 0 {
			continue
		}
		path := make([]int, dist[v]+1)
		for i, w := dist[v], v; i >= 0; i, w = i-1, parent[w] {
			path[i] = w
		}
		outcome := OutcomeDegraded
		if hardDist[v] >= 0 {
			outcome = OutcomeFailed
		}
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
