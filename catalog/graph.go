package catalog

import (
	"container/heap"
	"math"
	"sort"
)

// GraphAnalysis is the dependency graph of one capability with its derived views.
type GraphAnalysis struct {
	// Nodes is every component, in input order (nil entries and repeated IDs dropped).
	Nodes []*Component
	// Edges are the dependencies whose type is in the filter (all when the filter is empty), in
	// input order; a dependency naming an unknown component is dropped.
	Edges []*Dependency
	// TopologicalOrder lists every source before its targets; it is nil when the filtered graph
	// has a cycle or a self-loop.
	TopologicalOrder []*Component
	// Cycles are the strongly connected components of more than one member, plus each
	// self-loop as a one-member cycle.
	Cycles [][]*Component
	// CriticalPath is the heaviest chain of runtime dependencies, weighted by response time.
	CriticalPath []*Component
}

// AnalyzeGraph analyses the dependency graph of components and deps, an edge running from
// SourceComponentID (the dependent) to TargetComponentID (what it depends on). When types is
// not empty only dependencies of those types are considered. It never fails: nil components
// and nil dependencies are ignored, a component whose ComponentID repeats an earlier one is
// ignored, and a dependency naming an unknown component is dropped.
//
// TopologicalOrder comes from Kahn's algorithm, ties broken by the input order of components;
// it is nil when the filtered graph has a cycle or a self-loop. Cycles come from Tarjan's
// algorithm: each strongly connected component of more than one member and each self-loop,
// members in input order, cycles ordered by the input index of their first member.
//
// CriticalPath considers only runtime dependencies (within the filter). A component weighs its
// Health.ResponseTime (0 without health). Edges inside a strongly connected component are
// dropped first, so the computation runs on a DAG. The result is the path along edges with the
// largest total weight; among paths of equal weight the one with more critical edges (runtime
// dependencies of criticality critical; several edges between the same two components count
// once, as critical when one is) wins, then the path whose first component comes earliest in
// input order, then the shorter path, then the path whose components come earliest in input
// order. Consequently a zero-weight tail is appended only when it adds critical edges. With no
// components the path is empty (not nil); without edges it is the single heaviest component.
func AnalyzeGraph(components []*Component, deps []*Dependency, types []DependencyType) *GraphAnalysis {
	g := newGraph(components, deps, types)
	n := len(g.nodes)
	adj := g.adjacency(nil)

	a := &GraphAnalysis{
		Nodes:            g.nodes,
		Edges:            g.edges,
		TopologicalOrder: g.pick(topologicalOrder(n, adj)),
		Cycles:           [][]*Component{},
	}

	selfLoop := make([]bool, n)
	for i := range g.edges {
		if g.from[i] == g.to[i] {
			selfLoop[g.from[i]] = true
		}
	}
	var cycles [][]int
	for _, comp := range stronglyConnected(n, adj) {
		if len(comp) > 1 || selfLoop[comp[0]] {
			cycles = append(cycles, comp)
		}
	}
	sort.Slice(cycles, func(i, j int) bool { return cycles[i][0] < cycles[j][0] })
	for _, c := range cycles {
		a.Cycles = append(a.Cycles, g.pick(c))
	}

	a.CriticalPath = g.pick(criticalPath(g))
	return a
}

// graph is a capability's components indexed by input order, with the dependencies that pass
// a type filter and name known components.
type graph struct {
	nodes []*Component
	index map[string]int
	edges []*Dependency
	from  []int // from[i] is the node index of edges[i]'s source
	to    []int // to[i] is the node index of edges[i]'s target
}

// newGraph indexes components (nil and repeated IDs skipped) and keeps the dependencies whose
// type is in types (all when types is empty) and whose both ends are known.
func newGraph(components []*Component, deps []*Dependency, types []DependencyType) *graph {
	g := &graph{
		nodes: make([]*Component, 0, len(components)),
		index: make(map[string]int, len(components)),
		edges: []*Dependency{},
	}
	for _, c := range components {
		if c == nil {
			continue
		}
		if _, dup := g.index[c.ComponentID]; dup {
			continue
		}
		g.index[c.ComponentID] = len(g.nodes)
		g.nodes = append(g.nodes, c)
	}
	for _, d := range deps {
		if d == nil || (len(types) > 0 && !contains(types, d.DependencyType)) {
			continue
		}
		s, okS := g.index[d.SourceComponentID]
		t, okT := g.index[d.TargetComponentID]
		if !okS || !okT {
			continue
		}
		g.edges = append(g.edges, d)
		g.from = append(g.from, s)
		g.to = append(g.to, t)
	}
	return g
}

// adjacency returns, for each node, the distinct targets of its edges that keep accepts (all
// edges when keep is nil), in ascending node index.
func (g *graph) adjacency(keep func(*Dependency) bool) [][]int {
	adj := make([][]int, len(g.nodes))
	for i, d := range g.edges {
		if keep != nil && !keep(d) {
			continue
		}
		adj[g.from[i]] = append(adj[g.from[i]], g.to[i])
	}
	for v, list := range adj {
		adj[v] = sortedUnique(list)
	}
	return adj
}

// reverse returns the adjacency with every edge turned around, lists in ascending order.
func reverse(adj [][]int) [][]int {
	rev := make([][]int, len(adj))
	for v, list := range adj {
		for _, w := range list {
			rev[w] = append(rev[w], v)
		}
	}
	for v, list := range rev {
		rev[v] = sortedUnique(list)
	}
	return rev
}

// pick maps node indexes to their components; it returns nil for a nil list.
func (g *graph) pick(idx []int) []*Component {
	if idx == nil {
		return nil
	}
	out := make([]*Component, len(idx))
	for i, v := range idx {
		out[i] = g.nodes[v]
	}
	return out
}

func sortedUnique(list []int) []int {
	if len(list) < 2 {
		return list
	}
	sort.Ints(list)
	out := list[:1]
	for _, v := range list[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// intHeap is a min-heap of node indexes.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	v := old[len(old)-1]
	*h = old[:len(old)-1]
	return v
}

// topologicalOrder runs Kahn's algorithm, always taking the ready node of lowest index. It
// returns nil when the graph has a cycle (a self-loop included).
func topologicalOrder(n int, adj [][]int) []int {
	indeg := make([]int, n)
	for _, list := range adj {
		for _, w := range list {
			indeg[w]++
		}
	}
	ready := &intHeap{}
	for v := 0; v < n; v++ {
		if indeg[v] == 0 {
			*ready = append(*ready, v)
		}
	}
	heap.Init(ready)
	order := make([]int, 0, n)
	for ready.Len() > 0 {
		v := heap.Pop(ready).(int)
		order = append(order, v)
		for _, w := range adj[v] {
			indeg[w]--
			if indeg[w] == 0 {
				heap.Push(ready, w)
			}
		}
	}
	if len(order) < n {
		return nil
	}
	return order
}

// stronglyConnected returns the strongly connected components of the graph (Tarjan's
// algorithm, iterative), each as ascending node indexes. Components come out in reverse
// topological order of the condensation: a component is emitted only after every component
// it reaches.
func stronglyConnected(n int, adj [][]int) [][]int {
	index := make([]int, n) // 0 = unvisited, else visit number + 1
	low := make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	var out [][]int
	next := 1
	type frame struct{ v, i int }
	for s := 0; s < n; s++ {
		if index[s] != 0 {
			continue
		}
		index[s], low[s] = next, next
		next++
		stack = append(stack, s)
		onStack[s] = true
		call := []frame{{s, 0}}
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.i < len(adj[v]) {
				w := adj[v][f.i]
				f.i++
				if index[w] == 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if p := call[len(call)-1].v; low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				sort.Ints(comp)
				out = append(out, comp)
			}
		}
	}
	return out
}

// responseWeight is a component's critical-path weight: its Health.ResponseTime, 0 without
// health or when the value is not a number.
func responseWeight(c *Component) float64 {
	if c == nil || c.Health == nil || math.IsNaN(c.Health.ResponseTime) {
		return 0
	}
	return c.Health.ResponseTime
}

// criticalPath returns the node indexes of the heaviest runtime path (see AnalyzeGraph).
func criticalPath(g *graph) []int {
	n := len(g.nodes)
	if n == 0 {
		return []int{}
	}
	rt := g.adjacency(func(d *Dependency) bool { return d.DependencyType == DependencyRuntime })
	comps := stronglyConnected(n, rt)
	compOf := make([]int, n)
	for ci, comp := range comps {
		for _, v := range comp {
			compOf[v] = ci
		}
	}
	// critical[[2]int{v, u}] reports whether some runtime edge v -> u is of criticality critical.
	critical := map[[2]int]bool{}
	for i, d := range g.edges {
		if d.DependencyType == DependencyRuntime && d.Criticality == CriticalityCritical {
			critical[[2]int{g.from[i], g.to[i]}] = true
		}
	}
	bestW := make([]float64, n)
	bestCrit := make([]int, n) // critical edges on the best path from v
	bestLen := make([]int, n)
	next := make([]int, n)
	// Tarjan emits a component after everything it reaches, so successors are final first.
	for _, comp := range comps {
		for _, v := range comp {
			tailW, tailCrit, tailLen, tail := 0.0, 0, 0, -1 // stopping at v is the empty tail
			for _, u := range rt[v] {                       // ascending: earlier index wins a tie
				if compOf[u] == compOf[v] {
					continue
				}
				crit := bestCrit[u]
				if critical[[2]int{v, u}] {
					crit++
				}
				if bestW[u] > tailW || (bestW[u] == tailW && (crit > tailCrit || (crit == tailCrit && bestLen[u] < tailLen))) {
					tailW, tailCrit, tailLen, tail = bestW[u], crit, bestLen[u], u
				}
			}
			bestW[v] = responseWeight(g.nodes[v]) + tailW
			bestCrit[v] = tailCrit
			bestLen[v] = 1 + tailLen
			next[v] = tail
		}
	}
	start := 0
	for v := 1; v < n; v++ {
		if bestW[v] > bestW[start] || (bestW[v] == bestW[start] && bestCrit[v] > bestCrit[start]) {
			start = v
		}
	}
	path := []int{}
	for v := start; v >= 0 && len(path) < n; v = next[v] {
		path = append(path, v)
	}
	return path
}
