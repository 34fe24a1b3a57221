package catalog

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func strPtr(s string) *string { return &s }

// impactFixture is web -> api -> db with soft and hard edges around it.
func impactFixture() ([]*Component, []*Dependency) {
	cs := comps("web", "api", "recs", "db", "cache", "worker", "search")
	withStrategy := func(d *Dependency, s string) *Dependency { d.Fallback = &Fallback{Strategy: s}; return d }
	backup := rtDep("worker", "db")
	backup.DependencyType = DependencyData
	backup.Fallback = &Fallback{Strategy: "retry", BackupComponent: strPtr("db-replica")}
	ds := []*Dependency{
		rtDep("web", "api"),
		dep("web", "recs", DependencyOptional),
		withStrategy(rtDep("api", "db"), "circuit-breaker"),
		rtDep("recs", "db"),
		withStrategy(rtDep("api", "cache"), "Graceful Degradation"),
		backup,
		withStrategy(rtDep("search", "api"), "retry"),
	}
	return cs, ds
}

// affected renders an impact as "id:distance:outcome:path" entries.
func affected(r *ImpactResult) []string {
	out := []string{}
	for _, a := range r.Affected {
		out = append(out, fmt.Sprintf("%s:%d:%s:%s", a.Component.ComponentID, a.Distance, a.Outcome, strings.Join(ids(a.Path), ">")))
	}
	return out
}

func TestImpact(t *testing.T) {
	cs, ds := impactFixture()
	// x depends on r softly in one hop and hard in two hops through y.
	detour := []*Dependency{dep("x", "r", DependencyOptional), rtDep("x", "y"), rtDep("y", "r")}
	tests := []struct {
		name       string
		components []*Component
		deps       []*Dependency
		root       string
		dir        ImpactDirection
		depth      int
		types      []DependencyType
		want       []string
	}{
		{
			name: "db dependents", components: cs, deps: ds, root: "db", dir: ImpactDependents, depth: 50,
			want: []string{
				"api:1:failed:db>api",
				"recs:1:failed:db>recs",
				"worker:1:degraded:db>worker",
				"web:2:failed:db>api>web",
				"search:2:failed:db>api>search",
			},
		},
		{
			name: "db dependents one hop", components: cs, deps: ds, root: "db", dir: ImpactDependents, depth: 1,
			want: []string{"api:1:failed:db>api", "recs:1:failed:db>recs", "worker:1:degraded:db>worker"},
		},
		{
			name: "db dependents runtime only", components: cs, deps: ds, root: "db", dir: ImpactDependents, depth: 50,
			types: []DependencyType{DependencyRuntime},
			want: []string{
				"api:1:failed:db>api",
				"recs:1:failed:db>recs",
				"web:2:failed:db>api>web",
				"search:2:failed:db>api>search",
			},
		},
		{
			name: "cache dependents degrade", components: cs, deps: ds, root: "cache", dir: ImpactDependents, depth: 50,
			want: []string{"api:1:degraded:cache>api", "web:2:degraded:cache>api>web", "search:2:degraded:cache>api>search"},
		},
		{
			name: "optional dependent degrades", components: cs, deps: ds, root: "recs", dir: ImpactDependents, depth: 50,
			want: []string{"web:1:degraded:recs>web"},
		},
		{
			name: "web dependencies", components: cs, deps: ds, root: "web", dir: ImpactDependencies, depth: 50,
			want: []string{
				"api:1:failed:web>api",
				"recs:1:degraded:web>recs",
				"db:2:failed:web>api>db",
				"cache:2:degraded:web>api>cache",
			},
		},
		{
			name: "leaf has no dependents", components: cs, deps: ds, root: "web", dir: ImpactDependents, depth: 50,
			want: []string{},
		},
		{
			name: "hard detour within depth fails", components: comps("r", "x", "y"), deps: detour, root: "r", dir: ImpactDependents, depth: 2,
			want: []string{"x:1:failed:r>x", "y:1:failed:r>y"},
		},
		{
			name: "hard detour beyond depth degrades", components: comps("r", "x", "y"), deps: detour, root: "r", dir: ImpactDependents, depth: 1,
			want: []string{"x:1:degraded:r>x", "y:1:failed:r>y"},
		},
		{
			name: "cycle is walked once", components: comps("a", "b", "c"), deps: []*Dependency{rtDep("a", "b"), rtDep("b", "c"), rtDep("c", "a")},
			root: "a", dir: ImpactDependents, depth: 50,
			want: []string{"c:1:failed:a>c", "b:2:failed:a>c>b"},
		},
		{
			name: "self-loop root", components: comps("a", "b"), deps: []*Dependency{rtDep("a", "a"), rtDep("b", "a")},
			root: "a", dir: ImpactDependents, depth: 50,
			want: []string{"b:1:failed:a>b"},
		},
		{
			name: "shortest path ties by input order", components: comps("root", "z", "m", "top"),
			deps: []*Dependency{rtDep("z", "root"), rtDep("m", "root"), rtDep("top", "m"), rtDep("top", "z")},
			root: "root", dir: ImpactDependents, depth: 50,
			want: []string{"z:1:failed:root>z", "m:1:failed:root>m", "top:2:failed:root>z>top"},
		},
		{
			name: "parallel edges: one hard edge makes the link hard", components: comps("a", "b"),
			deps: []*Dependency{dep("b", "a", DependencyOptional), rtDep("b", "a")},
			root: "a", dir: ImpactDependents, depth: 50,
			want: []string{"b:1:failed:a>b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Impact(tt.components, tt.deps, tt.root, tt.dir, tt.depth, tt.types)
			if err != nil {
				t.Fatalf("Impact(%q, %s, %d) error = %v, want nil", tt.root, tt.dir, tt.depth, err)
			}
			if got.Root == nil || got.Root.ComponentID != tt.root {
				t.Errorf("Impact(%q, %s, %d).Root = %v, want %q", tt.root, tt.dir, tt.depth, got.Root, tt.root)
			}
			if g := affected(got); !slices.Equal(g, tt.want) {
				t.Errorf("Impact(%q, %s, %d) = %v, want %v", tt.root, tt.dir, tt.depth, g, tt.want)
			}
		})
	}
}

func TestImpactErrors(t *testing.T) {
	cs, ds := impactFixture()
	tests := []struct {
		name      string
		root      string
		dir       ImpactDirection
		depth     int
		types     []DependencyType
		wantField string
	}{
		{name: "unknown root", root: "ghost", dir: ImpactDependents, depth: 3, wantField: "componentId"},
		{name: "empty root", root: "", dir: ImpactDependents, depth: 3, wantField: "componentId"},
		{name: "depth zero", root: "db", dir: ImpactDependents, depth: 0, wantField: "maxDepth"},
		{name: "depth negative", root: "db", dir: ImpactDependents, depth: -4, wantField: "maxDepth"},
		{name: "depth too deep", root: "db", dir: ImpactDependents, depth: MaxImpactDepth + 1, wantField: "maxDepth"},
		{name: "unknown direction", root: "db", dir: "sideways", depth: 3, wantField: "direction"},
		{name: "empty direction", root: "db", dir: "", depth: 3, wantField: "direction"},
		{name: "upper-case direction", root: "db", dir: "DEPENDENTS", depth: 3, wantField: "direction"},
		{name: "unknown type", root: "db", dir: ImpactDependents, depth: 3, types: []DependencyType{DependencyRuntime, "bogus"}, wantField: "types[1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Impact(cs, ds, tt.root, tt.dir, tt.depth, tt.types)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.wantField {
				t.Fatalf("Impact(%q, %q, %d) error = %v, want *ValidationError on %q", tt.root, tt.dir, tt.depth, err, tt.wantField)
			}
			if got != nil {
				t.Errorf("Impact(%q, %q, %d) = %v, want nil", tt.root, tt.dir, tt.depth, got)
			}
		})
	}
	// The depth bounds themselves are accepted.
	for _, depth := range []int{1, MaxImpactDepth} {
		if _, err := Impact(cs, ds, "db", ImpactDependents, depth, nil); err != nil {
			t.Errorf("Impact(%q, %s, %d) error = %v, want nil", "db", ImpactDependents, depth, err)
		}
	}
}

func TestDependencyIsSoft(t *testing.T) {
	withFallback := func(t DependencyType, f *Fallback) *Dependency { d := dep("a", "b", t); d.Fallback = f; return d }
	tests := []struct {
		name string
		dep  *Dependency
		want bool
	}{
		{"nil", nil, false},
		{"plain runtime", rtDep("a", "b"), false},
		{"data", dep("a", "b", DependencyData), false},
		{"optional type", dep("a", "b", DependencyOptional), true},
		{"fallback type", dep("a", "b", DependencyFallback), true},
		{"backup component", withFallback(DependencyRuntime, &Fallback{BackupComponent: strPtr("db-replica")}), true},
		{"empty backup component", withFallback(DependencyRuntime, &Fallback{BackupComponent: strPtr("  ")}), false},
		{"nil backup component", withFallback(DependencyRuntime, &Fallback{BackupComponent: nil}), false},
		{"circuit breaker", withFallback(DependencyRuntime, &Fallback{Strategy: "circuit-breaker"}), false},
		{"circuit_breaker", withFallback(DependencyRuntime, &Fallback{Strategy: "circuit_breaker"}), false},
		{"retry", withFallback(DependencyRuntime, &Fallback{Strategy: "retry"}), false},
		{"timeout", withFallback(DependencyRuntime, &Fallback{Strategy: "timeout"}), false},
		{"unknown strategy", withFallback(DependencyRuntime, &Fallback{Strategy: "pray"}), false},
		{"normalised strategy", withFallback(DependencyRuntime, &Fallback{Strategy: " Read_Replica "}), true},
		{"spaced strategy", withFallback(DependencyRuntime, &Fallback{Strategy: "graceful degradation"}), true},
	}
	for _, s := range SoftFallbackStrategies {
		tests = append(tests, struct {
			name string
			dep  *Dependency
			want bool
		}{"strategy " + s, withFallback(DependencyRuntime, &Fallback{Strategy: s}), true})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.dep.IsSoft(); got != tt.want {
				t.Errorf("(%s).IsSoft() = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestImpactEnumsGQL(t *testing.T) {
	tests := []struct {
		name string
		got  func() string
		want string
	}{
		{"dependents", func() string { var b bytes.Buffer; ImpactDependents.MarshalGQL(&b); return b.String() }, `"DEPENDENTS"`},
		{"dependencies", func() string { var b bytes.Buffer; ImpactDependencies.MarshalGQL(&b); return b.String() }, `"DEPENDENCIES"`},
		{"failed", func() string { var b bytes.Buffer; OutcomeFailed.MarshalGQL(&b); return b.String() }, `"FAILED"`},
		{"degraded", func() string { var b bytes.Buffer; OutcomeDegraded.MarshalGQL(&b); return b.String() }, `"DEGRADED"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.got(); got != tt.want {
				t.Errorf("MarshalGQL(%s) = %s, want %s", tt.name, got, tt.want)
			}
		})
	}

	unmarshal := []struct {
		in      any
		wantDir ImpactDirection
		wantOut ImpactOutcome
		dirErr  bool
		outErr  bool
	}{
		{in: "DEPENDENTS", wantDir: ImpactDependents, outErr: true},
		{in: "DEPENDENCIES", wantDir: ImpactDependencies, outErr: true},
		{in: "FAILED", wantOut: OutcomeFailed, dirErr: true},
		{in: "DEGRADED", wantOut: OutcomeDegraded, dirErr: true},
		{in: "SIDEWAYS", dirErr: true, outErr: true},
		{in: 3, dirErr: true, outErr: true},
	}
	for _, tt := range unmarshal {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			var d ImpactDirection
			if err := d.UnmarshalGQL(tt.in); (err != nil) != tt.dirErr || (err == nil && d != tt.wantDir) {
				t.Errorf("ImpactDirection.UnmarshalGQL(%v) = %q, %v; want %q, error %v", tt.in, d, err, tt.wantDir, tt.dirErr)
			}
			var o ImpactOutcome
			if err := o.UnmarshalGQL(tt.in); (err != nil) != tt.outErr || (err == nil && o != tt.wantOut) {
				t.Errorf("ImpactOutcome.UnmarshalGQL(%v) = %q, %v; want %q, error %v", tt.in, o, err, tt.wantOut, tt.outErr)
			}
		})
	}
}
