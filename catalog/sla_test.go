package catalog

import (
	"fmt"
	"slices"
	"testing"
)

// avail returns a healthy component with the given availability.
func avail(id string, a float64) *Component { return withHealth(id, HealthHealthy, a, 10, 0, 0) }

func capWithSLA(sla string) *Capability {
	return &Capability{CapabilityID: "CAP-1", BusinessMetrics: &BusinessMetrics{Sla: sla}}
}

func fptr(f float64) *float64 { return &f }

func fstr(f *float64) string {
	if f == nil {
		return "<nil>"
	}
	return fmt.Sprint(*f)
}

func bstr(b *bool) string {
	if b == nil {
		return "<nil>"
	}
	return fmt.Sprint(*b)
}

func TestBuildSLAReportTarget(t *testing.T) {
	tests := []struct {
		name string
		c    *Capability
		want *float64
	}{
		{"nil capability", nil, nil},
		{"no business metrics", &Capability{}, nil},
		{"empty", capWithSLA(""), nil},
		{"percent", capWithSLA("99.99%"), fptr(99.99)},
		{"bare number", capWithSLA("99.9"), fptr(99.9)},
		{"spaces", capWithSLA(" 99.5 % "), fptr(99.5)},
		{"hundred", capWithSLA("100%"), fptr(100)},
		{"text", capWithSLA("four nines"), nil},
		{"above 100", capWithSLA("150%"), nil},
		{"negative", capWithSLA("-1"), nil},
		{"not a number", capWithSLA("NaN"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BuildSLAReport(tt.c, nil, nil).Target
			if fstr(got) != fstr(tt.want) {
				t.Errorf("BuildSLAReport(%s).Target = %s, want %s", tt.name, fstr(got), fstr(tt.want))
			}
		})
	}
}

func TestBuildSLAReportComponents(t *testing.T) {
	tests := []struct {
		name                  string
		c                     *Component
		wantObserved          bool
		wantAvail, wantRT     string
		wantErrRate, wantMet  string
		wantBreachedIncrement int
	}{
		{name: "no health, no SLA", c: comp("a"), wantAvail: "<nil>", wantRT: "<nil>", wantErrRate: "<nil>", wantMet: "<nil>"},
		{name: "no health with SLA", c: withSLA(comp("a"), 99.9, 200, 0.5), wantAvail: "<nil>", wantRT: "<nil>", wantErrRate: "<nil>", wantMet: "<nil>"},
		{name: "unknown status is not observed", c: withSLA(withHealth("a", HealthUnknown, 0, 0, 0, 0), 99.9, 200, 0.5), wantAvail: "<nil>", wantRT: "<nil>", wantErrRate: "<nil>", wantMet: "<nil>"},
		{name: "health without SLA", c: avail("a", 99), wantObserved: true, wantAvail: "<nil>", wantRT: "<nil>", wantErrRate: "<nil>", wantMet: "<nil>"},
		{name: "all met", c: withSLA(withHealth("a", HealthHealthy, 99.95, 150, 0.1, 0), 99.9, 200, 0.5), wantObserved: true,
			wantAvail: "true", wantRT: "true", wantErrRate: "true", wantMet: "true"},
		{name: "response time breached", c: withSLA(withHealth("a", HealthHealthy, 99.95, 250, 0.1, 0), 99.9, 200, 0.5), wantObserved: true,
			wantAvail: "true", wantRT: "false", wantErrRate: "true", wantMet: "false", wantBreachedIncrement: 1},
		{name: "zero objectives are not measurable", c: withSLA(withHealth("a", HealthDegraded, 99.0, 250, 3, 0), 99.9, 0, 0), wantObserved: true,
			wantAvail: "false", wantRT: "<nil>", wantErrRate: "<nil>", wantMet: "false", wantBreachedIncrement: 1},
		{name: "only error rate set", c: withSLA(withHealth("a", HealthHealthy, 50, 250, 0.2, 0), 0, 0, 1), wantObserved: true,
			wantAvail: "<nil>", wantRT: "<nil>", wantErrRate: "true", wantMet: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := BuildSLAReport(nil, []*Component{tt.c}, nil)
			if len(rep.Components) != 1 {
				t.Fatalf("BuildSLAReport(%s).Components = %d entries, want 1", tt.name, len(rep.Components))
			}
			cs := rep.Components[0]
			if cs.Component != tt.c || cs.Target != tt.c.Sla {
				t.Errorf("BuildSLAReport(%s).Components[0] = %v target %v, want the component and its SLA", tt.name, cs.Component, cs.Target)
			}
			if observed := cs.Availability != nil && cs.ResponseTime != nil && cs.ErrorRate != nil; observed != tt.wantObserved {
				t.Errorf("BuildSLAReport(%s) observed = %v, want %v", tt.name, observed, tt.wantObserved)
			}
			if tt.wantObserved && (*cs.Availability != tt.c.Health.Availability || *cs.ResponseTime != tt.c.Health.ResponseTime || *cs.ErrorRate != tt.c.Health.ErrorRate) {
				t.Errorf("BuildSLAReport(%s) observed = %s, %s, %s; want the health values", tt.name, fstr(cs.Availability), fstr(cs.ResponseTime), fstr(cs.ErrorRate))
			}
			got := []string{bstr(cs.AvailabilityMet), bstr(cs.ResponseTimeMet), bstr(cs.ErrorRateMet), bstr(cs.Met)}
			want := []string{tt.wantAvail, tt.wantRT, tt.wantErrRate, tt.wantMet}
			if !slices.Equal(got, want) {
				t.Errorf("BuildSLAReport(%s) met (availability, responseTime, errorRate, all) = %v, want %v", tt.name, got, want)
			}
			if rep.Breached != tt.wantBreachedIncrement {
				t.Errorf("BuildSLAReport(%s).Breached = %d, want %d", tt.name, rep.Breached, tt.wantBreachedIncrement)
			}
		})
	}
}

func TestBuildSLAReportComposite(t *testing.T) {
	tests := []struct {
		name          string
		capability    *Capability
		components    []*Component
		deps          []*Dependency
		wantChains    []string // "entry:member,member=availability"
		wantComposite *float64
		wantWeakest   string
		wantMet       string
	}{
		{
			name:          "empty",
			capability:    capWithSLA("99.9%"),
			wantChains:    []string{},
			wantComposite: nil,
			wantMet:       "<nil>",
		},
		{
			name:       "serial chain multiplies",
			capability: capWithSLA("99.9%"),
			components: []*Component{avail("web", 99.9), avail("api", 99.95), avail("db", 99.99), avail("batch", 99.5)},
			deps:       []*Dependency{rtDep("web", "api"), rtDep("api", "db"), dep("batch", "db", DependencyData)},
			wantChains: []string{
				"web:web,api,db=99.840065",
				"batch:batch=99.5",
			},
			wantComposite: fptr(99.5),
			wantWeakest:   "batch",
			wantMet:       "false",
		},
		{
			name:          "weakest user-facing path",
			capability:    capWithSLA("99.8"),
			components:    []*Component{avail("web", 99.9), avail("api", 99.95), avail("db", 99.99), avail("mobile", 99.99)},
			deps:          []*Dependency{rtDep("web", "api"), rtDep("api", "db"), rtDep("mobile", "api")},
			wantChains:    []string{"web:web,api,db=99.840065", "mobile:mobile,api,db=99.930011"},
			wantComposite: fptr(99.840065),
			wantWeakest:   "web",
			wantMet:       "true",
		},
		{
			name:          "shared dependency counted once",
			capability:    capWithSLA("99%"),
			components:    []*Component{avail("web", 99), avail("a", 100), avail("b", 100), avail("db", 99)},
			deps:          []*Dependency{rtDep("web", "a"), rtDep("web", "b"), rtDep("a", "db"), rtDep("b", "db")},
			wantChains:    []string{"web:web,a,b,db=98.01"},
			wantComposite: fptr(98.01),
			wantWeakest:   "web",
			wantMet:       "false",
		},
		{
			name:          "meets target exactly despite rounding",
			capability:    capWithSLA("99.9%"),
			components:    []*Component{avail("only", 99.9)},
			wantChains:    []string{"only:only=99.9"},
			wantComposite: fptr(99.9),
			wantWeakest:   "only",
			wantMet:       "true",
		},
		{
			name:          "components without health are skipped",
			capability:    nil,
			components:    []*Component{avail("web", 99), comp("api"), avail("db", 98)},
			deps:          []*Dependency{rtDep("web", "api"), rtDep("api", "db")},
			wantChains:    []string{"web:web,api,db=97.02"},
			wantComposite: fptr(97.02),
			wantWeakest:   "web",
			wantMet:       "<nil>",
		},
		{
			name:          "nothing reports",
			capability:    capWithSLA("99%"),
			components:    comps("a", "b"),
			deps:          []*Dependency{rtDep("a", "b")},
			wantChains:    []string{"a:a,b=100"},
			wantComposite: nil,
			wantMet:       "<nil>",
		},
		{
			name:          "chain without reports does not set the composite",
			capability:    capWithSLA("99%"),
			components:    []*Component{comp("ghost"), avail("real", 99.5)},
			wantChains:    []string{"ghost:ghost=100", "real:real=99.5"},
			wantComposite: fptr(99.5),
			wantWeakest:   "real",
			wantMet:       "true",
		},
		{
			name:          "pure cycle makes every component an entry",
			capability:    capWithSLA("99%"),
			components:    []*Component{avail("a", 99), avail("b", 99)},
			deps:          []*Dependency{rtDep("a", "b"), rtDep("b", "a")},
			wantChains:    []string{"a:a,b=98.01", "b:b,a=98.01"},
			wantComposite: fptr(98.01),
			wantWeakest:   "a",
			wantMet:       "false",
		},
		{
			name:          "unentered cycle beside a tree",
			capability:    nil,
			components:    []*Component{avail("a", 99), avail("b", 99), avail("c", 99.9), avail("d", 99.9)},
			deps:          []*Dependency{rtDep("a", "b"), rtDep("b", "a"), rtDep("c", "d")},
			wantChains:    []string{"a:a,b=98.01", "b:b,a=98.01", "c:c,d=99.8001"},
			wantComposite: fptr(98.01),
			wantWeakest:   "a",
			wantMet:       "<nil>",
		},
		{
			name:          "entered cycle is not an entry",
			capability:    nil,
			components:    []*Component{avail("a", 99), avail("b", 99), avail("c", 99)},
			deps:          []*Dependency{rtDep("a", "b"), rtDep("b", "c"), rtDep("c", "b"), rtDep("a", "a")},
			wantChains:    []string{"a:a,b,c=97.0299"},
			wantComposite: fptr(97.0299),
			wantWeakest:   "a",
			wantMet:       "<nil>",
		},
		{
			name:          "availability clamped to 0..100",
			capability:    nil,
			components:    []*Component{avail("a", 120), avail("b", 50)},
			deps:          []*Dependency{rtDep("a", "b")},
			wantChains:    []string{"a:a,b=50"},
			wantComposite: fptr(50),
			wantWeakest:   "a",
			wantMet:       "<nil>",
		},
		{
			name:          "unknown components, nils and non-runtime edges ignored",
			capability:    nil,
			components:    []*Component{avail("a", 99), nil, avail("b", 90)},
			deps:          []*Dependency{nil, rtDep("a", "ghost"), dep("a", "b", DependencyOptional)},
			wantChains:    []string{"a:a=99", "b:b=90"},
			wantComposite: fptr(90),
			wantWeakest:   "b",
			wantMet:       "<nil>",
		},
		{
			// Criticality enters as in Impact: only failing links are in series.
			name:       "only critical and high hard links multiply",
			capability: capWithSLA("99%"),
			components: []*Component{avail("web", 99), avail("api", 99), avail("db", 99), avail("recs", 50), avail("audit", 50), avail("search", 50)},
			deps: []*Dependency{
				critDep("web", "api", CriticalityCritical), critDep("api", "db", CriticalityHigh),
				critDep("web", "recs", CriticalityMedium), critDep("api", "audit", CriticalityLow),
				func() *Dependency {
					d := critDep("web", "search", CriticalityCritical)
					d.Fallback = &Fallback{Strategy: "cache"}
					return d
				}(),
			},
			wantChains:    []string{"web:web,api,recs,search,db,audit=97.0299"},
			wantComposite: fptr(97.0299),
			wantWeakest:   "web",
			wantMet:       "false",
		},
		{
			name:          "a failing link behind a medium one is not in series",
			capability:    nil,
			components:    []*Component{avail("web", 99), avail("api", 50), avail("db", 50)},
			deps:          []*Dependency{critDep("web", "api", CriticalityMedium), critDep("api", "db", CriticalityCritical)},
			wantChains:    []string{"web:web,api,db=99"},
			wantComposite: fptr(99),
			wantWeakest:   "web",
			wantMet:       "<nil>",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := BuildSLAReport(tt.capability, tt.components, tt.deps)
			chains := []string{}
			for _, ch := range rep.Chains {
				chains = append(chains, fmt.Sprintf("%s:%s=%v", ch.Entry.ComponentID, joinIDs(ch.Components), ch.Availability))
			}
			if !slices.Equal(chains, tt.wantChains) {
				t.Errorf("BuildSLAReport(%s).Chains = %v, want %v", tt.name, chains, tt.wantChains)
			}
			if fstr(rep.CompositeAvailability) != fstr(tt.wantComposite) {
				t.Errorf("BuildSLAReport(%s).CompositeAvailability = %s, want %s", tt.name, fstr(rep.CompositeAvailability), fstr(tt.wantComposite))
			}
			weakest := ""
			if rep.WeakestChain != nil {
				weakest = rep.WeakestChain.Entry.ComponentID
				if !slices.Contains(rep.Chains, rep.WeakestChain) || rep.WeakestChain.Availability != *rep.CompositeAvailability {
					t.Errorf("BuildSLAReport(%s).WeakestChain = %+v, want one of Chains giving the composite", tt.name, rep.WeakestChain)
				}
			}
			if weakest != tt.wantWeakest {
				t.Errorf("BuildSLAReport(%s).WeakestChain = %q, want %q", tt.name, weakest, tt.wantWeakest)
			}
			if bstr(rep.Met) != tt.wantMet {
				t.Errorf("BuildSLAReport(%s).Met = %s, want %s", tt.name, bstr(rep.Met), tt.wantMet)
			}
		})
	}
}

func joinIDs(cs []*Component) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ","
		}
		s += c.ComponentID
	}
	return s
}

func TestBuildSLAReportBreached(t *testing.T) {
	components := []*Component{
		withSLA(withHealth("ok", HealthHealthy, 99.99, 100, 0.1, 0), 99.9, 200, 0.5),
		withSLA(withHealth("slow", HealthHealthy, 99.99, 300, 0.1, 0), 99.9, 200, 0.5),
		withSLA(withHealth("flaky", HealthDegraded, 98, 100, 2, 0), 99.9, 200, 0.5),
		withSLA(comp("silent"), 99.9, 200, 0.5),
		avail("untargeted", 90),
	}
	rep := BuildSLAReport(capWithSLA("99%"), components, nil)
	if rep.Breached != 2 {
		t.Errorf("BuildSLAReport(mixed).Breached = %d, want 2", rep.Breached)
	}
	var met []string
	for _, cs := range rep.Components {
		met = append(met, cs.Component.ComponentID+"="+bstr(cs.Met))
	}
	want := []string{"ok=true", "slow=false", "flaky=false", "silent=<nil>", "untargeted=<nil>"}
	if !slices.Equal(met, want) {
		t.Errorf("BuildSLAReport(mixed) met = %v, want %v", met, want)
	}
}
