package catalog

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// critDep is a runtime dependency of the given criticality.
func critDep(src, tgt string, c Criticality) *Dependency {
	d := rtDep(src, tgt)
	d.Criticality = c
	return d
}

// TestDependencyOutcome walks criticality × dependency type × fallback. The want column is the
// composition table of the README: critical and high fail, medium degrades, low puts at risk;
// a soft link (optional or fallback type, a backup component, a degrading strategy) softens one
// step, never below at risk.
func TestDependencyOutcome(t *testing.T) {
	want := map[Criticality][2]ImpactOutcome{ // [hard, soft]
		CriticalityCritical: {OutcomeFailed, OutcomeDegraded},
		CriticalityHigh:     {OutcomeFailed, OutcomeDegraded},
		CriticalityMedium:   {OutcomeDegraded, OutcomeAtRisk},
		CriticalityLow:      {OutcomeAtRisk, OutcomeAtRisk},
		"":                  {OutcomeFailed, OutcomeDegraded}, // no criticality counts as critical
		"bogus":             {OutcomeFailed, OutcomeDegraded},
	}
	fallbacks := []struct {
		name string
		f    *Fallback
		soft bool
	}{
		{"no fallback", nil, false},
		{"circuit-breaker", &Fallback{Strategy: "circuit-breaker"}, false},
		{"retry", &Fallback{Strategy: "retry"}, false},
		{"cache", &Fallback{Strategy: "cache"}, true},
		{"graceful degradation", &Fallback{Strategy: "Graceful Degradation"}, true},
		{"backup component", &Fallback{Strategy: "retry", BackupComponent: strPtr("db-replica")}, true},
		{"blank backup component", &Fallback{Strategy: "timeout", BackupComponent: strPtr("  ")}, false},
	}
	types := []struct {
		t    DependencyType
		soft bool
	}{
		{DependencyRuntime, false}, {DependencyBuildtime, false}, {DependencyData, false},
		{DependencyOptional, true}, {DependencyFallback, true},
	}
	for crit, outcomes := range want {
		for _, ty := range types {
			for _, fb := range fallbacks {
				d := &Dependency{SourceComponentID: "a", TargetComponentID: "b", DependencyType: ty.t, Criticality: crit, Fallback: fb.f}
				w := outcomes[0]
				if ty.soft || fb.soft {
					w = outcomes[1]
				}
				t.Run(fmt.Sprintf("%q/%s/%s", crit, ty.t, fb.name), func(t *testing.T) {
					if got := d.Outcome(); got != w {
						t.Errorf("Dependency{%q, %s, %s}.Outcome() = %q, want %q", crit, ty.t, fb.name, got, w)
					}
				})
			}
		}
	}
	if got := (*Dependency)(nil).Outcome(); got != OutcomeFailed {
		t.Errorf("(*Dependency)(nil).Outcome() = %q, want failed", got)
	}
}

// TestImpactCriticality is the regression for impact ignoring criticality: before, every hard
// link gave failed and every soft one degraded.
func TestImpactCriticality(t *testing.T) {
	soft := func(d *Dependency) *Dependency { d.Fallback = &Fallback{Strategy: "cache"}; return d }
	tests := []struct {
		name  string
		cs    []*Component
		deps  []*Dependency
		root  string
		dir   ImpactDirection
		depth int
		want  []string
	}{
		{
			name: "one hop per criticality", cs: comps("db", "c", "h", "m", "l"),
			deps: []*Dependency{critDep("c", "db", CriticalityCritical), critDep("h", "db", CriticalityHigh), critDep("m", "db", CriticalityMedium), critDep("l", "db", CriticalityLow)},
			root: "db", dir: ImpactDependents, depth: 10,
			want: []string{"c:1:failed:db>c", "h:1:failed:db>h", "m:1:degraded:db>m", "l:1:at_risk:db>l"},
		},
		{
			name: "a fallback softens one step", cs: comps("db", "c", "m", "l"),
			deps: []*Dependency{soft(critDep("c", "db", CriticalityCritical)), soft(critDep("m", "db", CriticalityMedium)), soft(critDep("l", "db", CriticalityLow))},
			root: "db", dir: ImpactDependents, depth: 10,
			want: []string{"c:1:degraded:db>c", "m:1:at_risk:db>m", "l:1:at_risk:db>l"},
		},
		{
			name: "a chain is as strong as its mildest link", cs: comps("db", "api", "web", "edge"),
			deps: []*Dependency{critDep("api", "db", CriticalityMedium), critDep("web", "api", CriticalityCritical), critDep("edge", "web", CriticalityLow)},
			root: "db", dir: ImpactDependents, depth: 10,
			want: []string{"api:1:degraded:db>api", "web:2:degraded:db>api>web", "edge:3:at_risk:db>api>web>edge"},
		},
		{
			name: "the worst path wins over the shortest", cs: comps("db", "x", "y"),
			// x reaches db in one low hop and in two critical hops through y.
			deps: []*Dependency{critDep("x", "db", CriticalityLow), critDep("x", "y", CriticalityCritical), critDep("y", "db", CriticalityHigh)},
			root: "db", dir: ImpactDependents, depth: 10,
			want: []string{"x:1:failed:db>x", "y:1:failed:db>y"},
		},
		{
			name: "the worse path beyond maxDepth does not count", cs: comps("db", "x", "y"),
			deps: []*Dependency{critDep("x", "db", CriticalityLow), critDep("x", "y", CriticalityCritical), critDep("y", "db", CriticalityHigh)},
			root: "db", dir: ImpactDependents, depth: 1,
			want: []string{"x:1:at_risk:db>x", "y:1:failed:db>y"},
		},
		{
			name: "parallel edges: the worst counts", cs: comps("db", "x"),
			deps: []*Dependency{critDep("x", "db", CriticalityLow), critDep("x", "db", CriticalityMedium)},
			root: "db", dir: ImpactDependents, depth: 10,
			want: []string{"x:1:degraded:db>x"},
		},
		{
			name: "cycle of mixed criticalities terminates", cs: comps("a", "b", "c"),
			deps: []*Dependency{critDep("b", "a", CriticalityLow), critDep("c", "b", CriticalityCritical), critDep("a", "c", CriticalityCritical), critDep("c", "a", CriticalityMedium)},
			root: "a", dir: ImpactDependents, depth: 50,
			want: []string{"b:1:at_risk:a>b", "c:1:degraded:a>c"},
		},
		{
			name: "dependencies direction uses the same links", cs: comps("web", "api", "db", "cache"),
			deps: []*Dependency{critDep("web", "api", CriticalityHigh), critDep("api", "db", CriticalityCritical), soft(critDep("api", "cache", CriticalityMedium))},
			root: "web", dir: ImpactDependencies, depth: 10,
			want: []string{"api:1:failed:web>api", "db:2:failed:web>api>db", "cache:2:at_risk:web>api>cache"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Impact(tt.cs, tt.deps, tt.root, tt.dir, tt.depth, nil)
			if err != nil {
				t.Fatalf("Impact(%q, %s, %d) error = %v", tt.root, tt.dir, tt.depth, err)
			}
			if g := affected(got); !slices.Equal(g, tt.want) {
				t.Errorf("Impact(%q, %s, %d) = %v, want %v", tt.root, tt.dir, tt.depth, g, tt.want)
			}
		})
	}
}

// bruteImpact is an independent reference: it enumerates every simple path of at most maxDepth
// hops from root (a depth-first search over paths, not nodes), rates a path by its mildest link
// and a node by its worst path. Links are rated from the composition table directly.
func bruteImpact(cs []*Component, deps []*Dependency, root string, backwards bool, maxDepth int) map[string]string {
	rate := func(d *Dependency) int {
		base := map[Criticality]int{CriticalityMedium: 2, CriticalityLow: 1}[d.Criticality]
		if base == 0 {
			base = 3
		}
		if d.IsSoft() && base > 1 {
			base--
		}
		return base
	}
	known := map[string]bool{}
	for _, c := range cs {
		known[c.ComponentID] = true
	}
	type link struct {
		to   string
		rate int
	}
	out := map[string][]link{}
	for _, d := range deps {
		if !known[d.SourceComponentID] || !known[d.TargetComponentID] {
			continue
		}
		from, to := d.SourceComponentID, d.TargetComponentID
		if backwards {
			from, to = to, from
		}
		out[from] = append(out[from], link{to, rate(d)})
	}
	best := map[string]int{}
	onPath := map[string]bool{root: true}
	var walk func(at string, hops, mildest int)
	walk = func(at string, hops, mildest int) {
		if hops == maxDepth {
			return
		}
		for _, l := range out[at] {
			if onPath[l.to] {
				continue
			}
			m := min(mildest, l.rate)
			best[l.to] = max(best[l.to], m)
			onPath[l.to] = true
			walk(l.to, hops+1, m)
			onPath[l.to] = false
		}
	}
	walk(root, 0, 3)
	names := map[int]string{3: "failed", 2: "degraded", 1: "at_risk"}
	res := map[string]string{}
	for id, r := range best {
		res[id] = names[r]
	}
	return res
}

// TestImpactCriticalityRandom compares Impact's outcomes with bruteImpact on random graphs
// mixing criticalities, types, fallbacks, cycles and self-loops.
func TestImpactCriticalityRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	crits := []Criticality{CriticalityCritical, CriticalityHigh, CriticalityMedium, CriticalityLow}
	strategies := []string{"", "circuit-breaker", "cache", "retry", "failover"}
	for round := range 400 {
		n := 1 + rng.IntN(8)
		cs := make([]*Component, n)
		for i := range cs {
			cs[i] = comp(fmt.Sprint("n", i))
		}
		var ds []*Dependency
		for range rng.IntN(3 * n) {
			d := dep(fmt.Sprint("n", rng.IntN(n)), fmt.Sprint("n", rng.IntN(n)), DependencyTypes[rng.IntN(len(DependencyTypes))])
			d.Criticality = crits[rng.IntN(len(crits))]
			if s := strategies[rng.IntN(len(strategies))]; s != "" {
				d.Fallback = &Fallback{Strategy: s}
			}
			ds = append(ds, d)
		}
		root := fmt.Sprint("n", rng.IntN(n))
		depth := 1 + rng.IntN(n+1)
		for _, dir := range ImpactDirections {
			res, err := Impact(cs, ds, root, dir, depth, nil)
			if err != nil {
				t.Fatalf("round %d: Impact error = %v", round, err)
			}
			got := map[string]string{}
			for _, a := range res.Affected {
				got[a.Component.ComponentID] = string(a.Outcome)
			}
			want := bruteImpact(cs, ds, root, dir == ImpactDependents, depth)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("round %d: Impact(%q, %s, %d) = %v, want %v (brute force)", round, root, dir, depth, got, want)
			}
		}
	}
}

func TestImpactOutcomeAtRiskGQL(t *testing.T) {
	var b bytes.Buffer
	OutcomeAtRisk.MarshalGQL(&b)
	if b.String() != `"AT_RISK"` {
		t.Errorf("OutcomeAtRisk.MarshalGQL = %s, want \"AT_RISK\"", b.String())
	}
	var o ImpactOutcome
	if err := o.UnmarshalGQL("AT_RISK"); err != nil || o != OutcomeAtRisk {
		t.Errorf("ImpactOutcome.UnmarshalGQL(AT_RISK) = %q, %v; want at_risk", o, err)
	}
	for sev, o := range map[int]ImpactOutcome{3: OutcomeFailed, 2: OutcomeDegraded, 1: OutcomeAtRisk, 0: "other"} {
		if got := o.Severity(); got != sev {
			t.Errorf("%q.Severity() = %d, want %d", o, got, sev)
		}
	}
}

// TestAnalyzeGraphCriticalPathCriticalEdges: among paths of equal weight the one with more
// critical edges wins, before the input-order and length tie-breaks.
func TestAnalyzeGraphCriticalPathCriticalEdges(t *testing.T) {
	tests := []struct {
		name string
		cs   []*Component
		deps []*Dependency
		want []string
	}{
		{
			name: "equal branches: the critical edge wins over input order",
			cs:   []*Component{compRT("a", 10), compRT("b", 5), compRT("c", 5)},
			deps: []*Dependency{critDep("a", "b", CriticalityHigh), critDep("a", "c", CriticalityCritical)},
			want: []string{"a", "c"},
		},
		{
			name: "without critical edges input order decides",
			cs:   []*Component{compRT("a", 10), compRT("b", 5), compRT("c", 5)},
			deps: []*Dependency{critDep("a", "b", CriticalityHigh), critDep("a", "c", CriticalityHigh)},
			want: []string{"a", "b"},
		},
		{
			name: "weight still comes first",
			cs:   []*Component{compRT("a", 10), compRT("b", 6), compRT("c", 5)},
			deps: []*Dependency{critDep("a", "b", CriticalityLow), critDep("a", "c", CriticalityCritical)},
			want: []string{"a", "b"},
		},
		{
			name: "more critical edges beat a shorter path of equal weight",
			cs:   []*Component{compRT("a", 10), compRT("b", 5), compRT("c", 5), comp("d")},
			deps: []*Dependency{critDep("a", "b", CriticalityHigh), critDep("a", "c", CriticalityCritical), critDep("c", "d", CriticalityCritical)},
			want: []string{"a", "c", "d"},
		},
		{
			name: "a zero-weight tail is kept when its edge is critical",
			cs:   []*Component{compRT("a", 10), comp("b")},
			deps: []*Dependency{critDep("a", "b", CriticalityCritical)},
			want: []string{"a", "b"},
		},
		{
			name: "a zero-weight tail is dropped otherwise",
			cs:   []*Component{compRT("a", 10), comp("b")},
			deps: []*Dependency{critDep("a", "b", CriticalityHigh)},
			want: []string{"a"},
		},
		{
			name: "start: equal weight, more critical edges win over input order",
			cs:   []*Component{compRT("x", 10), compRT("y", 5), compRT("p", 10), compRT("q", 5)},
			deps: []*Dependency{critDep("x", "y", CriticalityMedium), critDep("p", "q", CriticalityCritical)},
			want: []string{"p", "q"},
		},
		{
			name: "critical non-runtime edges do not count",
			cs:   []*Component{compRT("a", 10), compRT("b", 5), compRT("c", 5)},
			deps: []*Dependency{critDep("a", "b", CriticalityHigh), critDep("a", "c", CriticalityCritical), {SourceComponentID: "a", TargetComponentID: "b", DependencyType: DependencyData, Criticality: CriticalityCritical}},
			want: []string{"a", "c"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(AnalyzeGraph(tt.cs, tt.deps, nil).CriticalPath); !slices.Equal(got, tt.want) {
				t.Errorf("AnalyzeGraph(...).CriticalPath = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSortByCriticality(t *testing.T) {
	deps := []*Dependency{
		critDep("a", "b", CriticalityLow),
		critDep("a", "c", CriticalityCritical),
		critDep("b", "c", CriticalityMedium),
		nil,
		critDep("b", "d", "bogus"),
		critDep("c", "d", CriticalityCritical),
		critDep("d", "e", CriticalityHigh),
		critDep("e", "f", CriticalityLow),
	}
	SortByCriticality(deps)
	got := []string{}
	for _, d := range deps {
		if d == nil {
			got = append(got, "nil")
			continue
		}
		got = append(got, fmt.Sprintf("%s>%s:%s", d.SourceComponentID, d.TargetComponentID, d.Criticality))
	}
	want := []string{"a>c:critical", "c>d:critical", "d>e:high", "b>c:medium", "a>b:low", "e>f:low", "b>d:bogus", "nil"}
	if !slices.Equal(got, want) {
		t.Errorf("SortByCriticality = %v, want %v", got, want)
	}
}

// TestImpactReadmeExample is the worked example of the README's "Impact follows criticality".
func TestImpactReadmeExample(t *testing.T) {
	withFallback := func(d *Dependency, strategy string) *Dependency {
		d.Fallback = &Fallback{Strategy: strategy}
		return d
	}
	typed := func(d *Dependency, ty DependencyType) *Dependency { d.DependencyType = ty; return d }
	cs := comps("db", "api", "search", "reports", "web", "mobile", "audit")
	ds := []*Dependency{
		withFallback(critDep("api", "db", CriticalityCritical), "circuit-breaker"),
		typed(critDep("search", "db", CriticalityMedium), DependencyData),
		withFallback(critDep("reports", "db", CriticalityHigh), "cache"),
		critDep("web", "api", CriticalityCritical),
		critDep("web", "search", CriticalityLow),
		critDep("mobile", "search", CriticalityCritical),
		withFallback(critDep("audit", "reports", CriticalityMedium), "queue"),
		typed(critDep("search", "mobile", CriticalityLow), DependencyData),
	}
	got, err := Impact(cs, ds, "db", ImpactDependents, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"api:1:failed:db>api",
		"search:1:degraded:db>search",
		"reports:1:degraded:db>reports",
		"web:2:failed:db>api>web",
		"mobile:2:degraded:db>search>mobile",
		"audit:2:at_risk:db>reports>audit",
	}
	if g := affected(got); !slices.Equal(g, want) {
		t.Errorf("Impact(db) = %v, want %v", g, want)
	}
	for _, c := range cs {
		c.Health = &ComponentHealth{Status: HealthHealthy, Availability: 99}
	}
	var web *AvailabilityChain
	for _, ch := range BuildSLAReport(nil, cs, ds).Chains {
		if ch.Entry.ComponentID == "web" {
			web = ch
		}
	}
	if web == nil || joinIDs(web.Components) != "web,api,search,db" || web.Availability != 97.0299 {
		t.Errorf("BuildSLAReport: web's chain = %+v, want web,api,search,db at 97.0299 (search not in series)", web)
	}
}

// TestSLAReportFollowsImpactRandom checks on random graphs that a chain's availability
// multiplies exactly the entry and the components Impact marks failed from it (direction
// dependencies, runtime edges only): slaReport and impact follow the same rules.
func TestSLAReportFollowsImpactRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	crits := []Criticality{CriticalityCritical, CriticalityHigh, CriticalityMedium, CriticalityLow}
	strategies := []string{"", "circuit-breaker", "cache", "failover"}
	for round := range 300 {
		n := 1 + rng.IntN(8)
		cs := make([]*Component, n)
		for i := range cs {
			cs[i] = avail(fmt.Sprint("n", i), float64(90+rng.IntN(11)))
		}
		var ds []*Dependency
		for range rng.IntN(3 * n) {
			d := dep(fmt.Sprint("n", rng.IntN(n)), fmt.Sprint("n", rng.IntN(n)), DependencyTypes[rng.IntN(len(DependencyTypes))])
			d.Criticality = crits[rng.IntN(len(crits))]
			if s := strategies[rng.IntN(len(strategies))]; s != "" {
				d.Fallback = &Fallback{Strategy: s}
			}
			ds = append(ds, d)
		}
		for _, ch := range BuildSLAReport(nil, cs, ds).Chains {
			res, err := Impact(cs, ds, ch.Entry.ComponentID, ImpactDependencies, MaxImpactDepth, []DependencyType{DependencyRuntime})
			if err != nil {
				t.Fatal(err)
			}
			product := ch.Entry.Health.Availability / 100
			for _, a := range res.Affected {
				if a.Outcome == OutcomeFailed {
					product *= a.Component.Health.Availability / 100
				}
			}
			if want := math.Round(product*100*1e6) / 1e6; ch.Availability != want {
				t.Fatalf("round %d: chain of %s = %v, want %v from Impact's failed components", round, ch.Entry.ComponentID, ch.Availability, want)
			}
		}
	}
}

// TestCriticalPathCriticalEdgesRandom compares the critical path with a brute force over every
// path of runtime edges that leave no cycle: its weight is the largest, and among paths of that
// weight its count of critical edges is the largest.
func TestCriticalPathCriticalEdgesRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 7))
	crits := []Criticality{CriticalityCritical, CriticalityHigh, CriticalityLow}
	for round := range 300 {
		n := 1 + rng.IntN(7)
		cs := make([]*Component, n)
		for i := range cs {
			cs[i] = compRT(fmt.Sprint("n", i), float64(rng.IntN(3)))
		}
		var ds []*Dependency
		for range rng.IntN(3 * n) {
			d := dep(fmt.Sprint("n", rng.IntN(n)), fmt.Sprint("n", rng.IntN(n)), []DependencyType{DependencyRuntime, DependencyData}[rng.IntN(2)])
			d.Criticality = crits[rng.IntN(len(crits))]
			ds = append(ds, d)
		}
		// reach[a][b]: b is reachable from a over runtime edges (a reaches itself).
		reach := map[string]map[string]bool{}
		for _, c := range cs {
			seen := map[string]bool{c.ComponentID: true}
			stack := []string{c.ComponentID}
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, d := range ds {
					if d.DependencyType == DependencyRuntime && d.SourceComponentID == v && !seen[d.TargetComponentID] {
						seen[d.TargetComponentID] = true
						stack = append(stack, d.TargetComponentID)
					}
				}
			}
			reach[c.ComponentID] = seen
		}
		// link[a][b] is 1 for a critical runtime edge a -> b outside a cycle, 0 for another.
		link := map[string]map[string]int{}
		for _, d := range ds {
			a, b := d.SourceComponentID, d.TargetComponentID
			if d.DependencyType != DependencyRuntime || reach[b][a] {
				continue
			}
			if link[a] == nil {
				link[a] = map[string]int{}
			}
			c := 0
			if d.Criticality == CriticalityCritical {
				c = 1
			}
			link[a][b] = max(link[a][b], c)
		}
		weight := map[string]float64{}
		for _, c := range cs {
			weight[c.ComponentID] = c.Health.ResponseTime
		}
		bestW, bestC := -1.0, -1
		var walk func(v string, w float64, c int)
		walk = func(v string, w float64, c int) {
			w += weight[v]
			if w > bestW || (w == bestW && c > bestC) {
				bestW, bestC = w, c
			}
			for u, k := range link[v] {
				walk(u, w, c+k)
			}
		}
		for _, c := range cs {
			walk(c.ComponentID, 0, 0)
		}
		path := AnalyzeGraph(cs, ds, nil).CriticalPath
		gotW, gotC := 0.0, 0
		for i, c := range path {
			gotW += weight[c.ComponentID]
			if i > 0 {
				k, ok := link[path[i-1].ComponentID][c.ComponentID]
				if !ok {
					t.Fatalf("round %d: critical path %v uses %s -> %s, not a runtime edge outside a cycle", round, ids(path), path[i-1].ComponentID, c.ComponentID)
				}
				gotC += k
			}
		}
		if gotW != bestW || gotC != bestC {
			t.Fatalf("round %d: critical path %v weighs %v with %d critical edges, want %v with %d", round, ids(path), gotW, gotC, bestW, bestC)
		}
	}
}
