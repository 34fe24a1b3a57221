package catalog

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// comp returns a component without health.
func comp(id string) *Component { return &Component{ComponentID: id, Name: id} }

// compRT returns a healthy component with the given response time.
func compRT(id string, rt float64) *Component {
	c := comp(id)
	c.Health = &ComponentHealth{Status: HealthHealthy, ResponseTime: rt}
	return c
}

// comps returns components without health.
func comps(ids ...string) []*Component {
	out := make([]*Component, len(ids))
	for i, id := range ids {
		out[i] = comp(id)
	}
	return out
}

func dep(src, tgt string, t DependencyType) *Dependency {
	return &Dependency{SourceComponentID: src, TargetComponentID: tgt, DependencyType: t}
}

func rtDep(src, tgt string) *Dependency { return dep(src, tgt, DependencyRuntime) }

// ids lists component IDs; nil stays nil so that nil and empty can be told apart.
func ids(cs []*Component) []string {
	if cs == nil {
		return nil
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ComponentID
	}
	return out
}

func cycleIDs(cycles [][]*Component) [][]string {
	out := [][]string{}
	for _, c := range cycles {
		out = append(out, ids(c))
	}
	return out
}

func edgeIDs(deps []*Dependency) []string {
	out := []string{}
	for _, d := range deps {
		out = append(out, d.SourceComponentID+"->"+d.TargetComponentID)
	}
	return out
}

func TestAnalyzeGraph(t *testing.T) {
	tests := []struct {
		name       string
		components []*Component
		deps       []*Dependency
		types      []DependencyType
		wantNodes  []string
		wantEdges  []string
		wantTopo   []string // nil means a cycle
		wantCycles [][]string
	}{
		{
			name:       "empty",
			wantNodes:  []string{},
			wantEdges:  []string{},
			wantTopo:   []string{},
			wantCycles: [][]string{},
		},
		{
			name:       "no edges keeps input order",
			components: comps("x", "y", "z"),
			wantNodes:  []string{"x", "y", "z"},
			wantEdges:  []string{},
			wantTopo:   []string{"x", "y", "z"},
			wantCycles: [][]string{},
		},
		{
			name:       "diamond ties by input order",
			components: comps("d", "c", "b", "a"),
			deps:       []*Dependency{rtDep("a", "b"), rtDep("a", "c"), rtDep("b", "d"), rtDep("c", "d")},
			wantNodes:  []string{"d", "c", "b", "a"},
			wantEdges:  []string{"a->b", "a->c", "b->d", "c->d"},
			wantTopo:   []string{"a", "c", "b", "d"},
			wantCycles: [][]string{},
		},
		{
			name:       "source before target across components",
			components: comps("db", "api", "web", "batch"),
			deps:       []*Dependency{rtDep("web", "api"), rtDep("api", "db"), dep("batch", "db", DependencyData)},
			wantNodes:  []string{"db", "api", "web", "batch"},
			wantEdges:  []string{"web->api", "api->db", "batch->db"},
			wantTopo:   []string{"web", "api", "batch", "db"},
			wantCycles: [][]string{},
		},
		{
			name:       "three cycle with a tail",
			components: comps("a", "b", "c", "d"),
			deps:       []*Dependency{rtDep("c", "a"), rtDep("a", "b"), rtDep("b", "c"), rtDep("d", "a")},
			wantNodes:  []string{"a", "b", "c", "d"},
			wantEdges:  []string{"c->a", "a->b", "b->c", "d->a"},
			wantTopo:   nil,
			wantCycles: [][]string{{"a", "b", "c"}},
		},
		{
			name:       "self-loop is a one-member cycle",
			components: comps("a", "b"),
			deps:       []*Dependency{rtDep("a", "b"), rtDep("b", "b")},
			wantNodes:  []string{"a", "b"},
			wantEdges:  []string{"a->b", "b->b"},
			wantTopo:   nil,
			wantCycles: [][]string{{"b"}},
		},
		{
			name:       "cycles ordered by first member",
			components: comps("p", "a", "b", "q", "r"),
			deps:       []*Dependency{rtDep("a", "b"), rtDep("b", "a"), rtDep("q", "p"), rtDep("p", "q"), rtDep("r", "r")},
			wantNodes:  []string{"p", "a", "b", "q", "r"},
			wantEdges:  []string{"a->b", "b->a", "q->p", "p->q", "r->r"},
			wantTopo:   nil,
			wantCycles: [][]string{{"p", "q"}, {"a", "b"}, {"r"}},
		},
		{
			name:       "type filter removes the cycle",
			components: comps("a", "b"),
			deps:       []*Dependency{rtDep("a", "b"), dep("b", "a", DependencyData)},
			types:      []DependencyType{DependencyRuntime},
			wantNodes:  []string{"a", "b"},
			wantEdges:  []string{"a->b"},
			wantTopo:   []string{"a", "b"},
			wantCycles: [][]string{},
		},
		{
			name:       "no filter keeps the cycle",
			components: comps("a", "b"),
			deps:       []*Dependency{rtDep("a", "b"), dep("b", "a", DependencyData)},
			wantNodes:  []string{"a", "b"},
			wantEdges:  []string{"a->b", "b->a"},
			wantTopo:   nil,
			wantCycles: [][]string{{"a", "b"}},
		},
		{
			name:       "unknown ids, nils and duplicates dropped",
			components: []*Component{comp("a"), nil, comp("b"), comp("a")},
			deps:       []*Dependency{nil, rtDep("a", "ghost"), rtDep("ghost", "b"), rtDep("b", "a"), rtDep("b", "a")},
			wantNodes:  []string{"a", "b"},
			wantEdges:  []string{"b->a", "b->a"},
			wantTopo:   []string{"b", "a"},
			wantCycles: [][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AnalyzeGraph(tt.components, tt.deps, tt.types)
			if g := ids(got.Nodes); !slices.Equal(g, tt.wantNodes) || got.Nodes == nil {
				t.Errorf("AnalyzeGraph(%s).Nodes = %v, want %v", tt.name, g, tt.wantNodes)
			}
			if g := edgeIDs(got.Edges); !slices.Equal(g, tt.wantEdges) || got.Edges == nil {
				t.Errorf("AnalyzeGraph(%s).Edges = %v, want %v", tt.name, g, tt.wantEdges)
			}
			if g := ids(got.TopologicalOrder); !slices.Equal(g, tt.wantTopo) || (g == nil) != (tt.wantTopo == nil) {
				t.Errorf("AnalyzeGraph(%s).TopologicalOrder = %#v, want %#v", tt.name, g, tt.wantTopo)
			}
			if g := cycleIDs(got.Cycles); fmt.Sprint(g) != fmt.Sprint(tt.wantCycles) || got.Cycles == nil {
				t.Errorf("AnalyzeGraph(%s).Cycles = %v, want %v", tt.name, g, tt.wantCycles)
			}
		})
	}
}

func TestAnalyzeGraphCriticalPath(t *testing.T) {
	tests := []struct {
		name       string
		components []*Component
		deps       []*Dependency
		types      []DependencyType
		want       []string
	}{
		{
			name: "no components",
			want: []string{},
		},
		{
			name:       "no edges gives the heaviest component",
			components: []*Component{compRT("a", 5), compRT("b", 30), compRT("c", 30)},
			want:       []string{"b"},
		},
		{
			name:       "no health weighs zero",
			components: []*Component{comp("a"), compRT("b", 1)},
			deps:       []*Dependency{rtDep("a", "b")},
			want:       []string{"a", "b"},
		},
		{
			name:       "heaviest branch wins over longest",
			components: []*Component{compRT("a", 10), compRT("b", 20), compRT("c", 5), compRT("d", 100)},
			deps:       []*Dependency{rtDep("a", "b"), rtDep("b", "c"), rtDep("a", "d")},
			want:       []string{"a", "d"},
		},
		{
			name:       "only runtime edges count",
			components: []*Component{compRT("a", 10), compRT("b", 20), compRT("c", 50)},
			deps:       []*Dependency{rtDep("a", "b"), dep("b", "c", DependencyData), dep("a", "c", DependencyOptional)},
			want:       []string{"c"},
		},
		{
			name:       "filter without runtime leaves single nodes",
			components: []*Component{compRT("a", 10), compRT("b", 20)},
			deps:       []*Dependency{rtDep("a", "b")},
			types:      []DependencyType{DependencyData},
			want:       []string{"b"},
		},
		{
			name:       "tie goes to earliest first node",
			components: []*Component{compRT("x", 0), compRT("y", 10), compRT("z", 10)},
			deps:       []*Dependency{rtDep("x", "y")},
			want:       []string{"x", "y"},
		},
		{
			name:       "tie goes to the shorter path",
			components: []*Component{compRT("a", 10), compRT("b", 0)},
			deps:       []*Dependency{rtDep("a", "b")},
			want:       []string{"a"},
		},
		{
			name:       "equal branches take the earlier successor",
			components: []*Component{compRT("a", 1), compRT("c", 5), compRT("b", 5)},
			deps:       []*Dependency{rtDep("a", "b"), rtDep("a", "c")},
			want:       []string{"a", "c"},
		},
		{
			name:       "edges inside a cycle are dropped",
			components: []*Component{compRT("a", 1), compRT("b", 2), compRT("c", 3)},
			deps:       []*Dependency{rtDep("a", "b"), rtDep("b", "a"), rtDep("b", "c"), rtDep("c", "c")},
			want:       []string{"b", "c"},
		},
		{
			name:       "not-a-number response time weighs zero",
			components: []*Component{compRT("a", math.NaN()), compRT("b", 1)},
			deps:       []*Dependency{rtDep("a", "b")},
			want:       []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AnalyzeGraph(tt.components, tt.deps, tt.types).CriticalPath
			if g := ids(got); !slices.Equal(g, tt.want) || got == nil {
				t.Errorf("AnalyzeGraph(%s).CriticalPath = %#v, want %#v", tt.name, g, tt.want)
			}
		})
	}
}

func TestAnalyzeGraphLargeChain(t *testing.T) {
	const n = 5000
	var cs []*Component
	var ds []*Dependency
	for i := range n {
		cs = append(cs, compRT(fmt.Sprint("c", i), 1))
		if i > 0 {
			ds = append(ds, rtDep(fmt.Sprint("c", i-1), fmt.Sprint("c", i)))
		}
	}
	got := AnalyzeGraph(cs, ds, nil)
	if len(got.TopologicalOrder) != n || len(got.CriticalPath) != n || len(got.Cycles) != 0 {
		t.Errorf("AnalyzeGraph(chain of %d) = topo %d, path %d, cycles %d; want %d, %d, 0",
			n, len(got.TopologicalOrder), len(got.CriticalPath), len(got.Cycles), n, n)
	}
	// Close the chain into one big cycle.
	ds = append(ds, rtDep(fmt.Sprint("c", n-1), "c0"))
	got = AnalyzeGraph(cs, ds, nil)
	if got.TopologicalOrder != nil || len(got.Cycles) != 1 || len(got.Cycles[0]) != n || len(got.CriticalPath) != 1 {
		t.Errorf("AnalyzeGraph(ring of %d) = topo %d, cycles %d, path %d; want nil, 1 of %d, 1",
			n, len(got.TopologicalOrder), len(got.Cycles), len(got.CriticalPath), n)
	}
}

// TestGraphPropertiesRandom checks invariants of AnalyzeGraph, Impact and BuildSLAReport on
// random graphs, cycles and self-loops included.
func TestGraphPropertiesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	types := DependencyTypes
	for round := range 300 {
		n := rng.IntN(12)
		var cs []*Component
		for i := range n {
			c := compRT(fmt.Sprint("n", i), float64(rng.IntN(5)))
			c.Health.Availability = 95 + float64(rng.IntN(6))
			cs = append(cs, c)
		}
		var ds []*Dependency
		for range rng.IntN(3 * (n + 1)) {
			d := dep(fmt.Sprint("n", rng.IntN(n+1)), fmt.Sprint("n", rng.IntN(n+1)), types[rng.IntN(len(types))])
			ds = append(ds, d)
		}
		name := fmt.Sprintf("round %d", round)
		a := AnalyzeGraph(cs, ds, nil)
		if a.TopologicalOrder != nil {
			pos := map[string]int{}
			for i, c := range a.TopologicalOrder {
				pos[c.ComponentID] = i
			}
			if len(pos) != len(a.Nodes) {
				t.Fatalf("AnalyzeGraph(%s).TopologicalOrder = %v, want every node once", name, ids(a.TopologicalOrder))
			}
			for _, e := range a.Edges {
				if pos[e.SourceComponentID] >= pos[e.TargetComponentID] {
					t.Fatalf("AnalyzeGraph(%s).TopologicalOrder = %v, want %s before %s", name, ids(a.TopologicalOrder), e.SourceComponentID, e.TargetComponentID)
				}
			}
			if len(a.Cycles) != 0 {
				t.Fatalf("AnalyzeGraph(%s) = order and cycles %v, want one or the other", name, cycleIDs(a.Cycles))
			}
		} else if len(a.Cycles) == 0 {
			t.Fatalf("AnalyzeGraph(%s) = no order and no cycles, want one or the other", name)
		}
		for i := 1; i < len(a.CriticalPath); i++ {
			found := false
			for _, e := range a.Edges {
				if e.DependencyType == DependencyRuntime && e.SourceComponentID == a.CriticalPath[i-1].ComponentID && e.TargetComponentID == a.CriticalPath[i].ComponentID {
					found = true
				}
			}
			if !found {
				t.Fatalf("AnalyzeGraph(%s).CriticalPath = %v, want a path along runtime edges", name, ids(a.CriticalPath))
			}
		}
		if n > 0 {
			for _, dir := range ImpactDirections {
				res, err := Impact(cs, ds, "n0", dir, 1+rng.IntN(MaxImpactDepth), nil)
				if err != nil {
					t.Fatalf("Impact(%s, n0, %s) error = %v, want nil", name, dir, err)
				}
				for _, ic := range res.Affected {
					if len(ic.Path) != ic.Distance+1 || ic.Path[0] != res.Root || ic.Path[ic.Distance] != ic.Component {
						t.Fatalf("Impact(%s, n0, %s) path to %s = %v at distance %d, want root..component", name, dir, ic.Component.ComponentID, ids(ic.Path), ic.Distance)
					}
				}
			}
		}
		rep := BuildSLAReport(capWithSLA("99%"), cs, ds)
		if n > 0 && (rep.CompositeAvailability == nil || len(rep.Chains) == 0) {
			t.Fatalf("BuildSLAReport(%s) = composite %s, %d chains; want a composite", name, fstr(rep.CompositeAvailability), len(rep.Chains))
		}
		seen := map[*Component]bool{}
		for _, ch := range rep.Chains {
			for _, c := range ch.Components {
				seen[c] = true
			}
		}
		if len(seen) != n {
			t.Fatalf("BuildSLAReport(%s) chains cover %d components, want all %d", name, len(seen), n)
		}
	}
}
