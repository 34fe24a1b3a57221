package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/sample"
)

func TestCapability(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()

	for _, b := range bundles {
		id := b.Capability.CapabilityID
		t.Run(id, func(t *testing.T) {
			env.Counter.Reset()
			got, err := env.Store.Capability(ctx, id)
			if err != nil {
				t.Fatalf("Capability(%q) = %v", id, err)
			}
			wantOps(t, env, fmt.Sprintf("Capability(%q)", id), map[string]int{"GetItem": 1})
			sameJSON(t, fmt.Sprintf("Capability(%q)", id), got, b.Capability)
			if got.Revision != 1 {
				t.Errorf("Capability(%q).Revision = %d, want 1", id, got.Revision)
			}
			wantCreated := b.Capability.CreatedAt.Time
			if wantCreated.IsZero() {
				wantCreated = sampleNow
			}
			if !got.CreatedAt.Equal(wantCreated) {
				t.Errorf("Capability(%q).CreatedAt = %v, want %v", id, got.CreatedAt, wantCreated)
			}
		})
	}

	errTests := []struct {
		name string
		id   string
		want func(error) bool
	}{
		{"missing", "CAP-NOPE-001", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"prefix of an existing ID", "CAP-ALERT-MGT", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"hash forges a key", "CAP-ALERT-MGT-001#METADATA", func(err error) bool { return isValidation(err, "id") }},
		{"empty", "", func(err error) bool { return isValidation(err, "id") }},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := env.Store.Capability(ctx, tt.id)
			if !tt.want(err) || got != nil {
				t.Errorf("Capability(%q) = %v, %v; want nil and the %s error", tt.id, got, err, tt.name)
			}
		})
	}
}

func TestCapabilitiesByID(t *testing.T) {
	ctx := context.Background()

	t.Run("sample", func(t *testing.T) {
		env := newEnv(t)
		loadSample(t, env)
		tests := []struct {
			name    string
			ids     []string
			want    []string
			batches int
		}{
			{"none", nil, []string{}, 0},
			{"one present", []string{alertID}, []string{alertID}, 1},
			{"one missing", []string{"CAP-NOPE-001"}, []string{"<nil>"}, 1},
			{
				"present and missing in key order",
				[]string{"CAP-RPT-ANL-001", "CAP-NOPE-001", alertID, "CAP-FRAUD-DET-001", "CAP-NOPE-002"},
				[]string{"CAP-RPT-ANL-001", "<nil>", alertID, "CAP-FRAUD-DET-001", "<nil>"},
				1,
			},
			{
				"duplicates",
				[]string{alertID, "CAP-PAY-PROC-001", alertID, "CAP-NOPE-001", "CAP-NOPE-001", alertID},
				[]string{alertID, "CAP-PAY-PROC-001", alertID, "<nil>", "<nil>", alertID},
				1,
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env.Counter.Reset()
				got, err := env.Store.CapabilitiesByID(ctx, tt.ids)
				if err != nil {
					t.Fatalf("CapabilitiesByID(%v) = %v", tt.ids, err)
				}
				if g := keys(got, capabilityID); !slices.Equal(g, tt.want) {
					t.Errorf("CapabilitiesByID(%v) = %v, want %v", tt.ids, g, tt.want)
				}
				if n := env.Counter.Ops()["BatchGetItem"]; n != tt.batches {
					t.Errorf("CapabilitiesByID(%v) sent %d BatchGetItem, want %d", tt.ids, n, tt.batches)
				}
				if n, b := env.Counter.Total(), env.Counter.Ops()["BatchGetItem"]; n != b {
					t.Errorf("CapabilitiesByID(%v) sent %v, want only BatchGetItem", tt.ids, env.Counter.Ops())
				}
			})
		}
		t.Run("invalid ID", func(t *testing.T) {
			env.Counter.Reset()
			ids := []string{alertID, "CAP#X"}
			got, err := env.Store.CapabilitiesByID(ctx, ids)
			if !isValidation(err, "id") {
				t.Errorf("CapabilitiesByID(%v) = %v, %v; want a *catalog.ValidationError on id", ids, got, err)
			}
			if n := env.Counter.Total(); n != 0 {
				t.Errorf("CapabilitiesByID(%v) sent %d requests, want 0", ids, n)
			}
		})
	})

	t.Run("more than 100", func(t *testing.T) {
		env := newEnv(t)
		bundles := smallCapabilities(150)
		load(t, env, bundles)
		all := make([]string, len(bundles))
		for i, b := range bundles {
			all[i] = b.Capability.CapabilityID
		}
		missing := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("CAP-NOPE-%03d", i)
			}
			return out
		}
		nils := func(n int) []string { return slices.Repeat([]string{"<nil>"}, n) }
		reversed := slices.Clone(all)
		slices.Reverse(reversed)
		tests := []struct {
			name string
			ids  []string
			want []string
		}{
			{"150 present", all, all},
			{"150 present, reversed", reversed, reversed},
			{"100 present", all[:100], all[:100]},
			{"101 present", all[:101], all[:101]},
			{"150 present and 50 missing", slices.Concat(all, missing(50)), slices.Concat(all, nils(50))},
			{"150 present and 51 missing", slices.Concat(missing(51), all), slices.Concat(nils(51), all)},
			{"100 distinct, one repeated past the 100th key", slices.Concat(all[:100], all[:1]), slices.Concat(all[:100], all[:1])},
			{"150 distinct, each twice", slices.Concat(all, all), slices.Concat(all, all)},
			{"one ID 250 times", slices.Repeat(all[7:8], 250), slices.Repeat(all[7:8], 250)},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				env.Counter.Reset()
				got, err := env.Store.CapabilitiesByID(ctx, tt.ids)
				if err != nil {
					t.Fatalf("CapabilitiesByID(%d IDs) = %v", len(tt.ids), err)
				}
				if g := keys(got, capabilityID); !slices.Equal(g, tt.want) {
					t.Errorf("CapabilitiesByID(%d IDs) = %v, want %v", len(tt.ids), g, tt.want)
				}
				distinct := map[string]bool{}
				for _, id := range tt.ids {
					distinct[id] = true
				}
				want := (len(distinct) + 99) / 100
				wantOps(t, env, fmt.Sprintf("CapabilitiesByID(%d IDs, %d distinct)", len(tt.ids), len(distinct)), map[string]int{"BatchGetItem": want})
			})
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Partition reads.

func TestReadPartition(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()

	sets := []dynamo.Segment{
		dynamo.SegComponents,
		dynamo.SegDependencies,
		dynamo.SegRules,
		dynamo.SegComponents | dynamo.SegDependencies,
		dynamo.SegComponents | dynamo.SegRules,
		dynamo.SegDependencies | dynamo.SegRules,
		dynamo.SegComponents | dynamo.SegDependencies | dynamo.SegRules,
	}
	wantRanges := map[dynamo.Segment]int{
		dynamo.SegComponents:                                            1,
		dynamo.SegDependencies:                                          1,
		dynamo.SegRules:                                                 1,
		dynamo.SegComponents | dynamo.SegDependencies:                   1,
		dynamo.SegComponents | dynamo.SegRules:                          2,
		dynamo.SegDependencies | dynamo.SegRules:                        2,
		dynamo.SegComponents | dynamo.SegDependencies | dynamo.SegRules: 2,
	}

	for _, b := range bundles {
		id := b.Capability.CapabilityID
		wantComponents := sortedBy(b.Components, func(c *catalog.Component) string {
			return fmt.Sprintf("%02d#%s", c.Order, c.ComponentID)
		}, componentID, false)
		wantDependencies := sortedBy(b.Dependencies, func(d *catalog.Dependency) string {
			return d.SourceComponentID + "#" + d.TargetComponentID
		}, dependencyID, false)
		wantRules := sortedBy(b.Rules, func(r *catalog.Rule) string { return fmt.Sprintf("%03d#%s", r.Order, r.RuleID) }, ruleID, false)

		check := func(t *testing.T, call string, want dynamo.Segment, p *dynamo.Partition) {
			t.Helper()
			expect := func(seg dynamo.Segment, all []string) []string {
				if want.Has(seg) {
					return all
				}
				return []string{}
			}
			if g, w := keys(p.Components, componentID), expect(dynamo.SegComponents, wantComponents); !slices.Equal(g, w) {
				t.Errorf("%s.Components = %v, want %v", call, g, w)
			}
			if g, w := keys(p.Dependencies, dependencyID), expect(dynamo.SegDependencies, wantDependencies); !slices.Equal(g, w) {
				t.Errorf("%s.Dependencies = %v, want %v", call, g, w)
			}
			if g, w := keys(p.Rules, ruleID), expect(dynamo.SegRules, wantRules); !slices.Equal(g, w) {
				t.Errorf("%s.Rules = %v, want %v", call, g, w)
			}
		}

		for _, want := range sets {
			t.Run(id+"/"+want.String(), func(t *testing.T) {
				ranges := dynamo.PlanRanges(want)
				if len(ranges) != wantRanges[want] {
					t.Errorf("PlanRanges(%v) = %v, want %d ranges", want, ranges, wantRanges[want])
				}
				env.Counter.Reset()
				call := fmt.Sprintf("ReadPartition(%q, %v)", id, want)
				p, err := env.Store.ReadPartition(ctx, id, want)
				if err != nil {
					t.Fatalf("%s = %v", call, err)
				}
				wantOps(t, env, call, map[string]int{"Query": len(ranges)})
				check(t, call, want, p)

				var union dynamo.Segment
				for _, r := range ranges {
					union |= r
					env.Counter.Reset()
					call := fmt.Sprintf("ReadRange(%q, %v)", id, r)
					p, err := env.Store.ReadRange(ctx, id, r, dynamo.Fields{})
					if err != nil {
						t.Fatalf("%s = %v", call, err)
					}
					wantOps(t, env, call, map[string]int{"Query": 1})
					check(t, call, r, p)
				}
				if union != want {
					t.Errorf("PlanRanges(%v) = %v, covering %v", want, ranges, union)
				}
			})
		}
	}

	t.Run("entities round-trip", func(t *testing.T) {
		b := bundleOf(t, bundles, alertID)
		all := dynamo.SegComponents | dynamo.SegDependencies | dynamo.SegRules
		p, err := env.Store.ReadPartition(ctx, alertID, all)
		if err != nil {
			t.Fatalf("ReadPartition(%q, %v) = %v", alertID, all, err)
		}
		for i, c := range p.Components {
			sameJSON(t, fmt.Sprintf("ReadPartition(%q).Components[%d]", alertID, i), c, b.Components[i])
			if c.Revision != 1 || c.CreatedAt.IsZero() || c.UpdatedAt.IsZero() {
				t.Errorf("ReadPartition(%q).Components[%d].Meta = %+v, want revision 1 and both times", alertID, i, c.Meta)
			}
		}
		byEdge := map[string]*catalog.Dependency{}
		for _, d := range b.Dependencies {
			byEdge[dependencyID(d)] = d
		}
		for i, d := range p.Dependencies {
			sameJSON(t, fmt.Sprintf("ReadPartition(%q).Dependencies[%d]", alertID, i), d, byEdge[dependencyID(d)])
		}
		for i, r := range p.Rules {
			sameJSON(t, fmt.Sprintf("ReadPartition(%q).Rules[%d]", alertID, i), r, b.Rules[i])
		}
	})

	t.Run("named Data keys only", func(t *testing.T) {
		b := bundleOf(t, bundles, alertID)
		env.Counter.Reset()
		rng := dynamo.SegComponents | dynamo.SegDependencies
		p, err := env.Store.ReadRange(ctx, alertID, rng, dynamo.Fields{Components: []string{"name", "health"}, Dependencies: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		wantOps(t, env, "ReadRange with Fields", map[string]int{"Query": 1})
		if len(p.Components) != len(b.Components) || len(p.Dependencies) != len(b.Dependencies) {
			t.Fatalf("read %d components, %d dependencies; want %d, %d", len(p.Components), len(p.Dependencies), len(b.Components), len(b.Dependencies))
		}
		for i, c := range p.Components {
			w := b.Components[i]
			want := catalog.Component{Meta: c.Meta, ComponentID: w.ComponentID, CapabilityID: w.CapabilityID, Name: w.Name, ComponentType: w.ComponentType,
				Order: w.Order, Layer: w.Layer, Status: w.Status, Health: w.Health}
			sameJSON(t, fmt.Sprintf("component %d with name and health", i), c, &want)
			if c.Revision != 1 || c.CreatedAt.IsZero() {
				t.Errorf("component %d: Meta = %+v, want the envelope read", i, c.Meta)
			}
		}
		for i, d := range p.Dependencies {
			want := catalog.Dependency{CapabilityID: d.CapabilityID, SourceComponentID: d.SourceComponentID, TargetComponentID: d.TargetComponentID, Criticality: d.Criticality}
			if d.SourceComponentID == "" || d.Criticality == "" || d.DependencyType != "" || d.Interface != nil {
				t.Errorf("dependency %d = %+v, want only its required keys", i, d)
			}
			sameJSON(t, fmt.Sprintf("dependency %d with required keys", i), d, &want)
		}
		whole, err := env.Store.ReadRange(ctx, alertID, rng, dynamo.Fields{Components: []string{"name"}}) // dependencies nil: whole items
		if err != nil {
			t.Fatal(err)
		}
		if whole.Components[0].Technology == nil || whole.Dependencies[0].Interface == nil {
			t.Errorf("a nil key list must read whole items: %+v", whole.Components[0])
		}
	})

	t.Run("empty partition", func(t *testing.T) {
		env.Counter.Reset()
		p, err := env.Store.ReadPartition(ctx, "CAP-NOPE-001", dynamo.SegComponents|dynamo.SegRules)
		if err != nil {
			t.Fatalf("ReadPartition(%q) = %v", "CAP-NOPE-001", err)
		}
		if len(p.Components)+len(p.Dependencies)+len(p.Rules) != 0 {
			t.Errorf("ReadPartition(%q) = %+v, want nothing", "CAP-NOPE-001", p)
		}
		wantOps(t, env, "ReadPartition(CAP-NOPE-001)", map[string]int{"Query": 2})
	})

	t.Run("errors", func(t *testing.T) {
		env.Counter.Reset()
		if _, err := env.Store.ReadRange(ctx, alertID, dynamo.SegComponents|dynamo.SegRules, dynamo.Fields{}); err == nil {
			t.Errorf("ReadRange(%q, components+rules) = nil error, want an error: not one range", alertID)
		}
		if _, err := env.Store.ReadRange(ctx, "CAP#1", dynamo.SegComponents, dynamo.Fields{}); !isValidation(err, "capabilityId") {
			t.Errorf("ReadRange(%q) = %v, want a *catalog.ValidationError", "CAP#1", err)
		}
		if _, err := env.Store.ReadPartition(ctx, "", dynamo.SegRules); !isValidation(err, "capabilityId") {
			t.Errorf("ReadPartition(%q) = %v, want a *catalog.ValidationError", "", err)
		}
		if n := env.Counter.Total(); n != 0 {
			t.Errorf("rejected reads sent %d requests, want 0", n)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// GSI1 patterns.

func TestCapabilityIndexes(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	var caps []*catalog.Capability
	for _, b := range bundles {
		caps = append(caps, b.Capability)
	}
	byCapabilities := func(c *catalog.Capability) string {
		return fmt.Sprintf("%s#%02d#%s", c.BusinessDomain, c.Priority.Rank(), dynamo.Slug(c.Name))
	}
	byDomain := func(c *catalog.Capability) string {
		return fmt.Sprintf("%02d#%s", c.Priority.Rank(), dynamo.Slug(c.Name))
	}
	byHealth := func(c *catalog.Capability) string {
		return fmt.Sprintf("%03d#%s", int(math.Floor(c.Aggregates.HealthScore)), c.CapabilityID)
	}
	where := func(keep func(*catalog.Capability) bool) []*catalog.Capability {
		var out []*catalog.Capability
		for _, c := range caps {
			if keep(c) {
				out = append(out, c)
			}
		}
		return out
	}
	inDomain := func(d string) []*catalog.Capability {
		return where(func(c *catalog.Capability) bool { return c.BusinessDomain == d })
	}
	inHealth := func(h catalog.HealthStatus) []*catalog.Capability {
		return where(func(c *catalog.Capability) bool { return c.Aggregates.HealthStatus == h })
	}

	type fetch = func(first int, after string) (*dynamo.Page[*catalog.Capability], error)
	type testCase struct {
		name  string
		fetch fetch
		want  []string
	}
	tests := []testCase{{"Capabilities()", func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
		return env.Store.Capabilities(ctx, "", first, after)
	}, sortedBy(caps, byCapabilities, capabilityID, false)}}
	for _, d := range []string{"operations", "customer", "finance", "risk", "nowhere"} {
		tests = append(tests,
			testCase{fmt.Sprintf("Capabilities(domain: %q)", d), func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
				return env.Store.Capabilities(ctx, d, first, after)
			}, sortedBy(inDomain(d), byCapabilities, capabilityID, false)},
			testCase{fmt.Sprintf("CapabilitiesByDomain(%q)", d), func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
				return env.Store.CapabilitiesByDomain(ctx, d, first, after)
			}, sortedBy(inDomain(d), byDomain, capabilityID, false)},
		)
	}
	for _, h := range catalog.HealthStatuses {
		tests = append(tests, testCase{fmt.Sprintf("CapabilitiesByHealth(%q)", h), func(first int, after string) (*dynamo.Page[*catalog.Capability], error) {
			return env.Store.CapabilitiesByHealth(ctx, h, first, after)
		}, sortedBy(inHealth(h), byHealth, capabilityID, false)})
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == nil {
				tt.want = []string{}
			}
			env.Counter.Reset()
			p, err := tt.fetch(dynamo.MaxPage, "")
			if err != nil {
				t.Fatalf("%s = %v", tt.name, err)
			}
			if g := keys(p.Items, capabilityID); !slices.Equal(g, tt.want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", tt.name, g, p.HasNext, tt.want)
			}
			wantOps(t, env, tt.name, map[string]int{"Query": 1})
			for _, c := range p.Items {
				sameJSON(t, tt.name+" item "+c.CapabilityID, c, bundleOf(t, bundles, c.CapabilityID).Capability)
			}
			for _, first := range []int{1, 2, 3} {
				all, pages := collect(t, tt.name, first, tt.fetch, capabilityID)
				if all == nil {
					all = []string{}
				}
				if !slices.Equal(all, tt.want) {
					t.Errorf("%s paged by %d = %v, want %v", tt.name, first, all, tt.want)
				}
				if want := max(1, (len(tt.want)+first-1)/first); pages != want {
					t.Errorf("%s paged by %d took %d pages, want %d", tt.name, first, pages, want)
				}
			}
		})
	}

	t.Run("every status appears", func(t *testing.T) {
		for _, h := range catalog.HealthStatuses {
			if len(inHealth(h)) == 0 {
				t.Errorf("sample has no %s capability: CapabilitiesByHealth(%q) is not exercised", h, h)
			}
		}
	})

	t.Run("invalid arguments", func(t *testing.T) {
		env.Counter.Reset()
		errTests := []struct {
			call  string
			err   error
			field string
		}{
			{"Capabilities(domain: \"ops#01\")", second(env.Store.Capabilities(ctx, "ops#01", 10, "")), "domain"},
			{"Capabilities(first: 0)", second(env.Store.Capabilities(ctx, "", 0, "")), "first"},
			{"Capabilities(first: 101)", second(env.Store.Capabilities(ctx, "", dynamo.MaxPage+1, "")), "first"},
			{"CapabilitiesByDomain(\"\")", second(env.Store.CapabilitiesByDomain(ctx, "", 10, "")), "domain"},
			{"CapabilitiesByHealth(\"sick\")", second(env.Store.CapabilitiesByHealth(ctx, "sick", 10, "")), "status"},
			{"CapabilitiesByHealth(first: -1)", second(env.Store.CapabilitiesByHealth(ctx, catalog.HealthHealthy, -1, "")), "first"},
		}
		for _, tt := range errTests {
			if !isValidation(tt.err, tt.field) {
				t.Errorf("%s = %v, want a *catalog.ValidationError on %s", tt.call, tt.err, tt.field)
			}
		}
		if n := env.Counter.Total(); n != 0 {
			t.Errorf("rejected reads sent %d requests, want 0", n)
		}
	})
}

func second[T any](_ T, err error) error { return err }

func TestComponentsByType(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	byType := map[string][]*catalog.Component{}
	for _, b := range bundles {
		for _, c := range b.Components {
			byType[c.ComponentType] = append(byType[c.ComponentType], c)
		}
	}
	types := []string{"no-such-type"}
	for typ := range byType {
		types = append(types, typ)
	}
	sort.Strings(types)
	for _, typ := range types {
		t.Run(typ, func(t *testing.T) {
			want := sortedBy(byType[typ], func(c *catalog.Component) string { return c.CapabilityID + "#" + c.ComponentID }, componentID, false)
			if want == nil {
				want = []string{}
			}
			call := fmt.Sprintf("ComponentsByType(%q)", typ)
			env.Counter.Reset()
			p, err := env.Store.ComponentsByType(ctx, typ, dynamo.MaxPage, "")
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			if g := keys(p.Items, componentID); !slices.Equal(g, want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", call, g, p.HasNext, want)
			}
			wantOps(t, env, call, map[string]int{"Query": 1})
			for _, c := range p.Items {
				if c.ComponentType != typ || c.Revision != 1 {
					t.Errorf("%s item %s: type %q revision %d, want %q and 1", call, componentID(c), c.ComponentType, c.Revision, typ)
				}
			}
			all, _ := collect(t, call, 2, func(first int, after string) (*dynamo.Page[*catalog.Component], error) {
				return env.Store.ComponentsByType(ctx, typ, first, after)
			}, componentID)
			if all == nil {
				all = []string{}
			}
			if !slices.Equal(all, want) {
				t.Errorf("%s paged by 2 = %v, want %v", call, all, want)
			}
		})
	}
	if _, err := env.Store.ComponentsByType(ctx, "COMPONENT#x", 10, ""); !isValidation(err, "type") {
		t.Errorf("ComponentsByType(%q) = %v, want a *catalog.ValidationError on type", "COMPONENT#x", err)
	}
}

func TestJobByID(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	for _, b := range bundles {
		for _, want := range b.Jobs {
			t.Run(want.JobID, func(t *testing.T) {
				env.Counter.Reset()
				got, err := env.Store.JobByID(ctx, want.JobID)
				if err != nil {
					t.Fatalf("JobByID(%q) = %v", want.JobID, err)
				}
				wantOps(t, env, fmt.Sprintf("JobByID(%q)", want.JobID), map[string]int{"Query": 1})
				sameJSON(t, fmt.Sprintf("JobByID(%q)", want.JobID), got, want)
				if got.CapabilityID != b.Capability.CapabilityID {
					t.Errorf("JobByID(%q).CapabilityID = %q, want %q", want.JobID, got.CapabilityID, b.Capability.CapabilityID)
				}
				for i, tc := range got.TargetComponents {
					if tc.CapabilityID != got.CapabilityID {
						t.Errorf("JobByID(%q).TargetComponents[%d].CapabilityID = %q, want %q", want.JobID, i, tc.CapabilityID, got.CapabilityID)
					}
				}
			})
		}
	}
	errTests := []struct {
		id   string
		want func(error) bool
	}{
		{"JOB-NOPE-1", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"JOB-DEPLOY-45", func(err error) bool { return errors.Is(err, dynamo.ErrNotFound) }},
		{"JOB#1", func(err error) bool { return isValidation(err, "id") }},
	}
	for _, tt := range errTests {
		if got, err := env.Store.JobByID(ctx, tt.id); !tt.want(err) {
			t.Errorf("JobByID(%q) = %v, %v; want the matching error", tt.id, got, err)
		}
	}
}

func TestJobs(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	ctx := context.Background()
	newestFirst := func(j *catalog.Job) string { return j.StartTime.String() + "#" + j.JobID }

	type tc struct {
		name   string
		id     string
		filter dynamo.JobFilter
	}
	var tests []tc
	for _, b := range bundles {
		id := b.Capability.CapabilityID
		tests = append(tests,
			tc{id + "/all", id, dynamo.JobFilter{}},
			tc{id + "/completed", id, dynamo.JobFilter{Status: catalog.JobCompleted}},
			tc{id + "/deployment", id, dynamo.JobFilter{JobType: catalog.JobDeployment}},
			tc{id + "/completed deployment", id, dynamo.JobFilter{Status: catalog.JobCompleted, JobType: catalog.JobDeployment}},
			tc{id + "/cancelled", id, dynamo.JobFilter{Status: catalog.JobCancelled}},
		)
	}
	tests = append(tests, tc{"no such capability", "CAP-NOPE-001", dynamo.JobFilter{}})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var jobs []*catalog.Job
			for _, b := range bundles {
				if b.Capability.CapabilityID != tt.id {
					continue
				}
				for _, j := range b.Jobs {
					if (tt.filter.Status == "" || j.Status == tt.filter.Status) && (tt.filter.JobType == "" || j.JobType == tt.filter.JobType) {
						jobs = append(jobs, j)
					}
				}
			}
			want := sortedBy(jobs, newestFirst, jobID, true)
			if want == nil {
				want = []string{}
			}
			call := fmt.Sprintf("Jobs(%q, %+v)", tt.id, tt.filter)
			env.Counter.Reset()
			p, err := env.Store.Jobs(ctx, tt.id, tt.filter, dynamo.MaxPage, "")
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			if g := keys(p.Items, jobID); !slices.Equal(g, want) || p.HasNext {
				t.Errorf("%s = %v (hasNext %v), want %v", call, g, p.HasNext, want)
			}
			wantOneQuery(t, env, call, tt.filter != dynamo.JobFilter{})
			for _, first := range []int{1, 2} {
				all, _ := collect(t, call, first, func(first int, after string) (*dynamo.Page[*catalog.Job], error) {
					return env.Store.Jobs(ctx, tt.id, tt.filter, first, after)
				}, jobID)
				if all == nil {
					all = []string{}
				}
				if !slices.Equal(all, want) {
					t.Errorf("%s paged by %d = %v, want %v", call, first, all, want)
				}
			}
		})
	}

	t.Run("page of a larger history", func(t *testing.T) {
		// Enough jobs that a page stops inside the JOB# range while METADATA, METRIC# and RULE#
		// items follow it in the partition.
		b := bundleOf(t, sample.Catalogue(sampleNow), alertID)
		b.Capability.CapabilityID = "CAP-JOBS-001"
		base := b.Jobs[0]
		for i := range 40 {
			j := *base
			j.JobID = fmt.Sprintf("JOB-BULK-%03d", i)
			j.StartTime = catalog.NewTimestamp(sampleNow.Add(-time.Duration(i) * time.Hour))
			if i%3 == 0 {
				j.Status = catalog.JobFailed
			}
			b.Jobs = append(b.Jobs, &j)
		}
		load(t, env, []*catalog.Bundle{b})
		want := sortedBy(b.Jobs, newestFirst, jobID, true)
		all, pages := collect(t, "Jobs(CAP-JOBS-001)", 7, func(first int, after string) (*dynamo.Page[*catalog.Job], error) {
			return env.Store.Jobs(ctx, "CAP-JOBS-001", dynamo.JobFilter{}, first, after)
		}, jobID)
		if !slices.Equal(all, want) || pages != (len(want)+6)/7 {
			t.Errorf("Jobs(%q) paged by 7 = %v in %d pages, want %v", "CAP-JOBS-001", all, pages, want)
		}
		var failed []*catalog.Job
		for _, j := range b.Jobs {
			if j.Status == catalog.JobFailed {
				failed = append(failed, j)
			}
		}
		wantFailed := sortedBy(failed, newestFirst, jobID, true)
		f := dynamo.JobFilter{Status: catalog.JobFailed}
		all, _ = collect(t, "Jobs(CAP-JOBS-001, failed)", 4, func(first int, after string) (*dynamo.Page[*catalog.Job], error) {
			return env.Store.Jobs(ctx, "CAP-JOBS-001", f, first, after)
		}, jobID)
		if !slices.Equal(all, wantFailed) {
			t.Errorf("Jobs(%q, %+v) paged by 4 = %v, want %v", "CAP-JOBS-001", f, all, wantFailed)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Metrics.
