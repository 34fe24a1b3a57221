package catalogue_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/clients/clienttest"
	"github.com/capcat/catalogue/clients/go/catalogue"
)

// keyed adds an API key to every request, as a client of the catalogue does.
type keyed struct{ key string }

func (k keyed) Do(r *http.Request) (*http.Response, error) {
	if k.key != "" {
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return http.DefaultClient.Do(r)
}

func ptr[T any](v T) *T { return &v }

func raw(s string) *json.RawMessage { m := json.RawMessage(s); return &m }

// code returns extensions.code of err's first GraphQL error ("" when err is not a GraphQL error).
func code(err error) string {
	var list gqlerror.List
	if !errors.As(err, &list) || len(list) == 0 {
		return ""
	}
	c, _ := list[0].Extensions["code"].(string)
	return c
}

// fixture is a running server with two capabilities, each with a component and a rule of the
// same ruleId, created through the generated client.
type fixture struct {
	srv                  *clienttest.Server
	admin, devops, guest graphql.Client
	from                 time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := clienttest.Start(t)
	f := &fixture{
		srv:    srv,
		admin:  graphql.NewClient(srv.URL, keyed{srv.AdminKey}),
		devops: graphql.NewClient(srv.URL, keyed{srv.DevopsKey}),
		guest:  graphql.NewClient(srv.URL, keyed{}),
		from:   time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	ctx := context.Background()
	for i, c := range []struct{ capID, compID, ruleName string }{
		{"CAP-CLIENT-A", "client-a-api", "Rule of A"},
		{"CAP-CLIENT-B", "client-b-api", "Rule of B"},
	} {
		if _, err := catalogue.CreateCapability(ctx, f.admin, catalogue.CreateCapabilityInput{
			CapabilityId: c.capID, Name: "Capability " + c.capID, BusinessDomain: "clients",
			Status: ptr(catalogue.CapabilityStatusActive), Priority: catalogue.PriorityHigh, Tags: []string{"client"},
		}); err != nil {
			t.Fatalf("createCapability %s: %v", c.capID, err)
		}
		if _, err := catalogue.AddComponent(ctx, f.devops, c.capID, catalogue.ComponentInput{
			ComponentId: c.compID, Name: "API of " + c.capID, ComponentType: "api-server", Order: 1,
			Status: ptr(catalogue.ComponentStatusActive), Version: ptr("1.0.0"),
			Configuration: &catalogue.ConfigurationInput{Environment: ptr("production"), Secrets: []string{"db"}, FeatureFlags: raw(`{"beta":true,"limit":3}`)},
		}); err != nil {
			t.Fatalf("addComponent %s: %v", c.compID, err)
		}
		if _, err := catalogue.CreateRule(ctx, f.admin, c.capID, catalogue.RuleInput{
			RuleId: "RULE-SHARED-001", Name: c.ruleName, RuleType: catalogue.RuleTypeOperational,
			Priority: catalogue.PriorityHigh, Order: 10 + i, Status: ptr(catalogue.RuleStatusActive),
			EffectiveFrom: ptr(f.from),
			Conditions:    []catalogue.ConditionInput{{Field: "severity", Operator: "equals", Value: raw(`"high"`), Weight: ptr(5)}},
			Actions:       []catalogue.ActionInput{{Type: "notify", Parameters: raw(`{"channel":"ops"}`)}},
		}); err != nil {
			t.Fatalf("createRule in %s: %v", c.capID, err)
		}
	}
	return f
}

// TestGenqlientCapabilityView reads a capability with everything a view shows and checks the
// decoded values: enums, time.Time, json.RawMessage, nullable pointers, and that the second
// capability's component and rule of the same ruleId stay its own.
func TestGenqlientCapabilityView(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := catalogue.AddComponent(ctx, f.devops, "CAP-CLIENT-A", catalogue.ComponentInput{
		ComponentId: "client-a-db", Name: "DB of A", ComponentType: "database", Order: 2, Status: ptr(catalogue.ComponentStatusActive),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := catalogue.AddDependency(ctx, f.devops, "CAP-CLIENT-A", catalogue.DependencyInput{
		SourceComponentId: "client-a-api", TargetComponentId: "client-a-db",
		DependencyType: catalogue.DependencyTypeRuntime, Criticality: catalogue.CriticalityCritical,
	}); err != nil {
		t.Fatal(err)
	}

	f.srv.Env.Counter.Reset()
	view, err := catalogue.CapabilityView(ctx, f.guest, "CAP-CLIENT-A")
	if err != nil {
		t.Fatal(err)
	}
	requests := f.srv.Env.Counter.Total()
	t.Logf("CapabilityView: %d DynamoDB requests", requests)
	// The capability item, then one Query of the partition's components, dependencies and rules.
	if requests > 3 {
		t.Errorf("CapabilityView cost %d DynamoDB requests, want at most 3", requests)
	}
	c := view.Capability
	if c == nil {
		t.Fatal("capability is null")
	}
	if c.CapabilityId != "CAP-CLIENT-A" || c.Status != catalogue.CapabilityStatusActive || c.Priority != catalogue.PriorityHigh {
		t.Errorf("capability = %+v", c)
	}
	if c.CreatedAt.IsZero() || c.CreatedAt.Location() != time.UTC || time.Since(c.CreatedAt) > time.Hour || c.UpdatedAt.Before(c.CreatedAt) {
		t.Errorf("createdAt %v, updatedAt %v: want a recent UTC time, updatedAt >= createdAt", c.CreatedAt, c.UpdatedAt)
	}
	a := c.Aggregates
	if a.TotalComponents != 2 || a.ActiveComponents != 2 || a.TotalDependencies != 1 || a.TotalRules != 1 || a.ActiveRules != 1 {
		t.Errorf("aggregates = %+v", a)
	}
	if len(c.Components) != 2 {
		t.Fatalf("components = %+v", c.Components)
	}
	api := c.Components[0]
	if api.ComponentId != "client-a-api" || api.CapabilityId != "CAP-CLIENT-A" || api.Name != "API of CAP-CLIENT-A" || api.Status != catalogue.ComponentStatusActive {
		t.Errorf("component = %+v", api)
	}
	if api.Version == nil || *api.Version != "1.0.0" {
		t.Errorf("version = %v, want 1.0.0", api.Version)
	}
	if api.Configuration == nil || api.Configuration.FeatureFlags == nil {
		t.Fatalf("configuration = %+v", api.Configuration)
	}
	var flags map[string]any
	if err := json.Unmarshal(*api.Configuration.FeatureFlags, &flags); err != nil || flags["beta"] != true || flags["limit"] != 3.0 {
		t.Errorf("featureFlags = %s (%v), want {beta: true, limit: 3}", *api.Configuration.FeatureFlags, err)
	}
	if api.Health != nil {
		t.Errorf("health = %+v, want null for a component that never reported", api.Health)
	}
	if len(c.Dependencies) != 1 || c.Dependencies[0].SourceComponentId != "client-a-api" || c.Dependencies[0].DependencyType != catalogue.DependencyTypeRuntime || c.Dependencies[0].Criticality != catalogue.CriticalityCritical {
		t.Errorf("dependencies = %+v", c.Dependencies)
	}
	if len(c.Rules) != 1 {
		t.Fatalf("rules = %+v", c.Rules)
	}
	r := c.Rules[0]
	if r.RuleId != "RULE-SHARED-001" || r.CapabilityId != "CAP-CLIENT-A" || r.Name != "Rule of A" || r.Status != catalogue.RuleStatusActive || r.RuleType != catalogue.RuleTypeOperational {
		t.Errorf("rule = %+v", r)
	}
	if r.EffectiveFrom == nil || !r.EffectiveFrom.Equal(f.from) || r.EffectiveUntil != nil {
		t.Errorf("effectiveFrom %v, effectiveUntil %v: want %v and null", r.EffectiveFrom, r.EffectiveUntil, f.from)
	}
	if len(r.Conditions) != 1 || r.Conditions[0].Value == nil || string(*r.Conditions[0].Value) != `"high"` || r.Conditions[0].Weight != 5 {
		t.Errorf("conditions = %+v", r.Conditions)
	}
	if len(r.Actions) != 1 || r.Actions[0].Parameters == nil || string(*r.Actions[0].Parameters) != `{"channel":"ops"}` {
		t.Errorf("actions = %+v", r.Actions)
	}

	b, err := catalogue.CapabilityView(ctx, f.guest, "CAP-CLIENT-B")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Capability.Rules) != 1 || b.Capability.Rules[0].Name != "Rule of B" || b.Capability.Rules[0].CapabilityId != "CAP-CLIENT-B" {
		t.Errorf("B's rules = %+v", b.Capability.Rules)
	}
	// A client cache keys objects by __typename and id: the two capabilities' rules with the
	// same ruleId, and their components, must not share an id.
	if b.Capability.Rules[0].Id == r.Id {
		t.Errorf("the rules RULE-SHARED-001 of two capabilities share the id %q: a client cache merges them", r.Id)
	}
	if b.Capability.Components[0].Id == api.Id {
		t.Errorf("components of two capabilities share the id %q", api.Id)
	}

	missing, err := catalogue.CapabilityView(ctx, f.guest, "CAP-NONE")
	if err != nil || missing.Capability != nil {
		t.Errorf("unknown capability: %+v, %v; want null and no error", missing.Capability, err)
	}
}

// TestGenqlientMutations updates a component and a rule, and checks the errors a client
// decodes: CONFLICT for a stale revision, FORBIDDEN for a viewer, BAD_USER_INPUT for a rule
// window that ends before it starts.
func TestGenqlientMutations(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	view, err := catalogue.CapabilityView(ctx, f.guest, "CAP-CLIENT-A")
	if err != nil {
		t.Fatal(err)
	}
	comp := view.Capability.Components[0]

	f.srv.Env.Counter.Reset()
	up, err := catalogue.UpdateComponent(ctx, f.devops, "CAP-CLIENT-A", comp.ComponentId, comp.Revision, catalogue.UpdateComponentInput{
		Name: ptr("Renamed API"), Status: ptr(catalogue.ComponentStatusMaintenance),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("UpdateComponent: %d DynamoDB requests", f.srv.Env.Counter.Total())
	if up.UpdateComponent.Name != "Renamed API" || up.UpdateComponent.Status != catalogue.ComponentStatusMaintenance ||
		up.UpdateComponent.Revision != comp.Revision+1 || up.UpdateComponent.Id != comp.Id || up.UpdateComponent.UpdatedAt.Before(comp.UpdatedAt) {
		t.Errorf("updateComponent = %+v (was revision %d, id %q)", up.UpdateComponent, comp.Revision, comp.Id)
	}

	_, err = catalogue.UpdateComponent(ctx, f.devops, "CAP-CLIENT-A", comp.ComponentId, comp.Revision, catalogue.UpdateComponentInput{Name: ptr("stale")})
	if code(err) != "CONFLICT" {
		t.Errorf("stale updateComponent: %v (code %q), want CONFLICT", err, code(err))
	}
	var list gqlerror.List
	if errors.As(err, &list) && list[0].Extensions["currentRevision"] != float64(comp.Revision+1) {
		t.Errorf("CONFLICT extensions = %v, want currentRevision %d", list[0].Extensions, comp.Revision+1)
	}
	_, err = catalogue.UpdateComponent(ctx, f.guest, "CAP-CLIENT-A", comp.ComponentId, comp.Revision+1, catalogue.UpdateComponentInput{Name: ptr("by a viewer")})
	if code(err) != "FORBIDDEN" {
		t.Errorf("updateComponent by a viewer: %v, want FORBIDDEN", err)
	}

	rule := view.Capability.Rules[0]
	ur, err := catalogue.UpdateRule(ctx, f.admin, "CAP-CLIENT-A", rule.RuleId, rule.Revision, catalogue.UpdateRuleInput{Name: ptr("Rule of A, renamed")})
	if err != nil {
		t.Fatal(err)
	}
	if ur.UpdateRule.Name != "Rule of A, renamed" || ur.UpdateRule.Revision != rule.Revision+1 || ur.UpdateRule.Id != rule.Id {
		t.Errorf("updateRule = %+v", ur.UpdateRule)
	}
	// The generated input sent null for every other field: a null changes nothing (before, it
	// emptied the rule's conditions and actions).
	afterRule, err := catalogue.CapabilityView(ctx, f.guest, "CAP-CLIENT-A")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range afterRule.Capability.Rules {
		if r.RuleId == rule.RuleId && (len(r.Conditions) != len(rule.Conditions) || len(r.Conditions) == 0 || len(r.Actions) != len(rule.Actions)) {
			t.Errorf("updateRule(name) changed the rule's conditions or actions: %d conditions, %d actions, were %d and %d",
				len(r.Conditions), len(r.Actions), len(rule.Conditions), len(rule.Actions))
		}
	}

	_, err = catalogue.CreateRule(ctx, f.admin, "CAP-CLIENT-A", catalogue.RuleInput{
		RuleId: "RULE-BACKWARDS", Name: "Backwards", RuleType: catalogue.RuleTypeBusiness, Priority: catalogue.PriorityLow, Order: 50,
		Status: ptr(catalogue.RuleStatusActive), EffectiveFrom: ptr(f.from), EffectiveUntil: ptr(f.from.Add(-time.Hour)),
		Conditions: []catalogue.ConditionInput{{Field: "x", Operator: "exists", Weight: ptr(1)}},
		Actions:    []catalogue.ActionInput{{Type: "notify"}},
	})
	if code(err) != "BAD_USER_INPUT" {
		t.Errorf("createRule with effectiveUntil before effectiveFrom: %v (code %q), want BAD_USER_INPUT", err, code(err))
	}

	after, err := catalogue.CapabilityView(ctx, f.guest, "CAP-CLIENT-A")
	if err != nil {
		t.Fatal(err)
	}
	if after.Capability.Components[0].Name != "Renamed API" || after.Capability.Rules[0].Name != "Rule of A, renamed" || after.Capability.Aggregates.TotalRules != 1 {
		t.Errorf("after the updates: components %+v, rules %+v", after.Capability.Components, after.Capability.Rules)
	}
}

// TestGenqlientNullMeansDefault sends what genqlient's pointer mode sends for every unset
// field: an explicit null. A nullable input field with a default takes its default then, and an
// optional string never set reads back as null (issue #16, honest nulls).
func TestGenqlientNullMeansDefault(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	created, err := catalogue.CreateCapability(ctx, f.admin, catalogue.CreateCapabilityInput{
		CapabilityId: "CAP-CLIENT-NULLS", Name: "Nulls", BusinessDomain: "clients", Priority: catalogue.PriorityLow,
	})
	if err != nil {
		t.Fatalf("createCapability with status null: %v", err)
	}
	if created.CreateCapability.Status != catalogue.CapabilityStatusPlanning {
		t.Errorf("status = %s, want the default PLANNING", created.CreateCapability.Status)
	}
	added, err := catalogue.AddComponent(ctx, f.devops, "CAP-CLIENT-NULLS", catalogue.ComponentInput{
		ComponentId: "client-nulls-api", Name: "Nulls API", ComponentType: "api-server", Order: 1,
	})
	if err != nil {
		t.Fatalf("addComponent with status null: %v", err)
	}
	if added.AddComponent.Status != catalogue.ComponentStatusActive || added.AddComponent.Version != nil {
		t.Errorf("addComponent = %+v: want the default status ACTIVE and version null", added.AddComponent)
	}
	if _, err := catalogue.CreateRule(ctx, f.admin, "CAP-CLIENT-NULLS", catalogue.RuleInput{
		RuleId: "RULE-NULLS", Name: "Nulls", RuleType: catalogue.RuleTypeBusiness, Priority: catalogue.PriorityLow, Order: 1,
		Conditions: []catalogue.ConditionInput{{Field: "x", Operator: "exists"}},
		Actions:    []catalogue.ActionInput{{Type: "notify"}},
	}); err != nil {
		t.Errorf("createRule with status and weight null: %v", err)
	}
	list, err := catalogue.ListCapabilities(ctx, f.guest, nil, nil, nil)
	if err != nil {
		t.Fatalf("capabilities with first null: %v", err)
	}
	if len(list.Capabilities.Edges) != 3 {
		t.Errorf("capabilities with first null: %d edges, want all 3", len(list.Capabilities.Edges))
	}
}

// TestGenqlientPaginationAndHistory pages through the catalogue one capability at a time and
// reads the capability's and the rule's history: every version has its own id, never the live
// entity's.
func TestGenqlientPaginationAndHistory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()

	var seen []string
	var after *string
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("pagination does not end")
		}
		resp, err := catalogue.ListCapabilities(ctx, f.guest, ptr("clients"), ptr(1), after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.Capabilities.Edges {
			seen = append(seen, e.Node.CapabilityId)
		}
		if !resp.Capabilities.PageInfo.HasNextPage {
			break
		}
		after = resp.Capabilities.PageInfo.EndCursor
	}
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Errorf("paged capabilities = %v, want CAP-CLIENT-A and CAP-CLIENT-B once each", seen)
	}

	view, err := catalogue.CapabilityView(ctx, f.guest, "CAP-CLIENT-A")
	if err != nil {
		t.Fatal(err)
	}
	capRev := view.Capability.Revision
	for i, name := range []string{"First rename", "Second rename"} {
		if _, err := catalogue.UpdateCapability(ctx, f.admin, "CAP-CLIENT-A", capRev+i, catalogue.UpdateCapabilityInput{Name: ptr(name)}); err != nil {
			t.Fatal(err)
		}
	}
	rule := view.Capability.Rules[0]
	if _, err := catalogue.UpdateRule(ctx, f.admin, "CAP-CLIENT-A", rule.RuleId, rule.Revision, catalogue.UpdateRuleInput{Name: ptr("Rule of A v2")}); err != nil {
		t.Fatal(err)
	}

	f.srv.Env.Counter.Reset()
	hist, err := catalogue.CapabilityHistory(ctx, f.admin, "CAP-CLIENT-A", ptr(10), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CapabilityHistory: %d DynamoDB requests", f.srv.Env.Counter.Total())
	ids := map[string]bool{view.Capability.Id: true}
	for _, v := range hist.CapabilityHistory.Nodes {
		if ids[v.Id] {
			t.Errorf("capability version %d has the id %q of the live capability or of another version", v.Revision, v.Id)
		}
		ids[v.Id] = true
		if v.At.IsZero() || v.Actor.Name != "client-test-admin" || v.Actor.Role != "admin" || v.Deleted {
			t.Errorf("version = %+v", v)
		}
	}
	if len(hist.CapabilityHistory.Nodes) < 2 || hist.CapabilityHistory.Nodes[0].Name != "First rename" {
		t.Errorf("capability history = %+v, want the earlier revisions newest first", hist.CapabilityHistory.Nodes)
	}
	if _, err := catalogue.CapabilityHistory(ctx, f.guest, "CAP-CLIENT-A", ptr(10), nil); code(err) != "FORBIDDEN" {
		t.Errorf("capabilityHistory by a viewer: %v, want FORBIDDEN", err)
	}

	rh, err := catalogue.RuleHistory(ctx, f.guest, "CAP-CLIENT-A", ptr(5))
	if err != nil {
		t.Fatal(err)
	}
	live := rh.Capability.Rules[0]
	if len(live.History.Nodes) != 1 {
		t.Fatalf("rule history = %+v, want one earlier revision", live.History.Nodes)
	}
	v := live.History.Nodes[0]
	if v.Id == live.Id || v.Name != "Rule of A" || v.Revision != live.Revision-1 || v.CapabilityId != "CAP-CLIENT-A" || v.RuleId != live.RuleId {
		t.Errorf("rule version %+v of live rule %+v: want its own id and the old name", v, live)
	}
}
