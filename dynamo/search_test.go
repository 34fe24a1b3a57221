package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// searchCatalogue creates n capabilities with varied domains, statuses, priorities, tags,
// owners, names (accents, shared prefixes) and component teams and health, through the
// transactional write path.
func searchCatalogue(t *testing.T, env *dynamotest.Env, n int) []string {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(19, 19))
	first := []string{"Alert", "Alerting", "Álert", "Payments", "Payment", "Pay", "Sécurité", "Security", "Search", "Data", "Île", "Über", "Straße", "Ledger", "Al"}
	second := []string{"Management", "Man", "Gateway", "Ingest", "Platform", "Plate-forme", "Router", "Éléments", "Core", "", "Mgmt", "API"}
	domains := []string{"payments", "security", "data", "ops"}
	tags := []string{"pci", "PCI-DSS", "gdpr", "Sécurité", "tier-1", "tier-2", "legacy", "core"}
	owners := []string{"", "Team Alpha", "Équipe Bêta", "team-gamma", "SRE"}
	teams := []string{"Team Alpha", "équipe bêta", "Delta", "sre", ""}
	healths := []catalog.HealthStatus{catalog.HealthHealthy, catalog.HealthDegraded, catalog.HealthUnhealthy, ""}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("CAP-%s-%03d", strings.ToUpper(domains[i%len(domains)][:3]), i)
		if i%37 == 5 {
			id = fmt.Sprintf("alert-%d", i)
		}
		name := strings.TrimSpace(first[rng.IntN(len(first))] + " " + second[rng.IntN(len(second))])
		if i%11 == 0 {
			name += fmt.Sprintf(" %d", i)
		}
		c := &catalog.Capability{CapabilityID: id, Name: name, BusinessDomain: domains[rng.IntN(len(domains))],
			Status: catalog.CapabilityStatuses[rng.IntN(len(catalog.CapabilityStatuses))], Priority: catalog.Priorities[rng.IntN(4)],
			Owner: owners[rng.IntN(len(owners))]}
		for _, tg := range tags {
			if rng.IntN(4) == 0 {
				c.Tags = append(c.Tags, tg)
			}
		}
		if _, err := env.Store.CreateCapability(ctx, c, dynamo.Idempotency{}); err != nil {
			t.Fatalf("create %s: %v", id, err)
		}
		for j := range rng.IntN(3) {
			comp := &catalog.Component{CapabilityID: id, ComponentID: fmt.Sprintf("%s-c%d", id, j), Name: "C", ComponentType: "worker", Order: j + 1,
				Status: catalog.ComponentActive}
			if team := teams[rng.IntN(len(teams))]; team != "" {
				comp.Ownership = &catalog.Ownership{Team: team}
			}
			if h := healths[rng.IntN(len(healths))]; h != "" {
				comp.Health = &catalog.ComponentHealth{Status: h, Availability: 90 + float64(rng.IntN(10)), ResponseTime: 50}
			}
			if _, err := env.Store.AddComponent(ctx, comp, dynamo.Idempotency{}); err != nil {
				t.Fatalf("add component to %s: %v", id, err)
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// bruteForce answers q over every capability, as the schema says, without the store's plan.
func bruteForce(all []*catalog.Capability, q dynamo.CapabilityQuery) []*catalog.Capability {
	in := func(set []string, v string) bool { return set == nil || slices.Contains(set, v) }
	str := func(xs any) []string {
		switch v := xs.(type) {
		case []catalog.CapabilityStatus:
			if v == nil {
				return nil
			}
			out := []string{}
			for _, x := range v {
				out = append(out, string(x))
			}
			return out
		case []catalog.Priority:
			if v == nil {
				return nil
			}
			out := []string{}
			for _, x := range v {
				out = append(out, string(x))
			}
			return out
		case []catalog.HealthStatus:
			if v == nil {
				return nil
			}
			out := []string{}
			for _, x := range v {
				out = append(out, string(x))
			}
			return out
		}
		return nil
	}
	var out []*catalog.Capability
	for _, c := range all {
		if q.Domain != "" && c.BusinessDomain != q.Domain {
			continue
		}
		h := c.Aggregates.HealthStatus
		if h == "" {
			h = catalog.HealthUnknown
		}
		if !in(q.Domains, c.BusinessDomain) || !in(str(q.Statuses), string(c.Status)) || !in(str(q.Priorities), string(c.Priority)) ||
			!in(str(q.HealthStatuses), string(h)) {
			continue
		}
		if q.Owner != nil {
			o := catalog.Fold(*q.Owner)
			_, team := map[string]int{}[o]
			if c.Aggregates.Components != nil {
				_, team = c.Aggregates.Components.Teams[o]
			}
			if catalog.Fold(c.Owner) != o && !team {
				continue
			}
		}
		tags := map[string]bool{}
		words := catalog.Words(c.Name + " " + c.CapabilityID + " " + c.Owner)
		for _, tg := range c.Tags {
			tags[catalog.Fold(tg)] = true
			words = append(words, catalog.Words(tg)...)
		}
		ok := true
		for _, tg := range q.Tags {
			ok = ok && tags[catalog.Fold(tg)]
		}
		if q.Search != nil {
			for _, w := range catalog.Words(*q.Search) {
				ok = ok && slices.ContainsFunc(words, func(x string) bool { return strings.HasPrefix(x, w) })
			}
		}
		if ok {
			out = append(out, c)
		}
	}
	name := func(a, b *catalog.Capability) int {
		if x := strings.Compare(catalog.Fold(a.Name), catalog.Fold(b.Name)); x != 0 {
			return x
		}
		return strings.Compare(a.CapabilityID, b.CapabilityID)
	}
	dir := func(x int) int {
		if q.Desc {
			return -x
		}
		return x
	}
	switch q.Order {
	case "":
		if q.Search != nil {
			tier := func(c *catalog.Capability) int {
				switch {
				case strings.EqualFold(strings.TrimSpace(*q.Search), c.CapabilityID):
					return 0
				case strings.HasPrefix(catalog.Fold(c.Name), catalog.Fold(*q.Search)):
					return 1
				}
				return 2
			}
			slices.SortFunc(out, func(a, b *catalog.Capability) int {
				if x := tier(a) - tier(b); x != 0 {
					return x
				}
				return name(a, b)
			})
			break
		}
		slices.SortFunc(out, name)
	case dynamo.OrderName:
		slices.SortFunc(out, func(a, b *catalog.Capability) int { return dir(name(a, b)) })
	case dynamo.OrderPriority:
		slices.SortFunc(out, func(a, b *catalog.Capability) int {
			if x := a.Priority.Rank() - b.Priority.Rank(); x != 0 {
				return dir(x)
			}
			return dir(name(a, b))
		})
	case dynamo.OrderHealthScore:
		slices.SortFunc(out, func(a, b *catalog.Capability) int {
			sa, sb := a.Aggregates.ReportedHealthScore(), b.Aggregates.ReportedHealthScore()
			switch {
			case sa == nil && sb == nil:
				return name(a, b)
			case sa == nil:
				return 1
			case sb == nil:
				return -1
			}
			// Scores compare as the index keys them: to 4 decimals.
			ka, kb := fmt.Sprintf("%010.4f", *sa), fmt.Sprintf("%010.4f", *sb)
			if x := strings.Compare(ka, kb); x != 0 {
				return dir(x)
			}
			return dir(name(a, b))
		})
	case dynamo.OrderUpdatedAt:
		slices.SortFunc(out, func(a, b *catalog.Capability) int {
			if x := a.UpdatedAt.Compare(b.UpdatedAt.Time); x != 0 {
				return dir(x)
			}
			return dir(name(a, b))
		})
	}
	return out
}

func ptr(s string) *string { return &s }

// searchQueries are the shapes compared with the brute force: every filter field alone and
// combined, every order and direction, searches with accents and shared prefixes.
func searchQueries() []dynamo.CapabilityQuery {
	qs := []dynamo.CapabilityQuery{
		{Search: ptr("alert man")}, {Search: ptr("Alert")}, {Search: ptr("al")}, {Search: ptr("a")}, {Search: ptr("SECURITE")},
		{Search: ptr("sécu")}, {Search: ptr("ile")}, {Search: ptr("uber api")}, {Search: ptr("strasse")}, {Search: ptr("straße")},
		{Search: ptr("alert-5")}, {Search: ptr("ALERT-42")}, {Search: ptr("cap pay 0")}, {Search: ptr("pci dss")}, {Search: ptr("beta")},
		{Search: ptr("zzz")}, {Search: ptr("pay"), Order: dynamo.OrderName, Desc: true}, {Search: ptr("pay"), Order: dynamo.OrderPriority},
		{Domains: []string{"payments"}}, {Domains: []string{"payments", "data"}}, {Domain: "ops"}, {Domain: "ops", Domains: []string{"ops", "data"}},
		{Domain: "ops", Domains: []string{"data"}},
		{Statuses: []catalog.CapabilityStatus{catalog.CapabilityActive}}, {Statuses: []catalog.CapabilityStatus{catalog.CapabilityActive, catalog.CapabilityRetiring}},
		{Priorities: []catalog.Priority{catalog.PriorityCritical}}, {Priorities: []catalog.Priority{catalog.PriorityLow, catalog.PriorityHigh}},
		{HealthStatuses: []catalog.HealthStatus{catalog.HealthUnhealthy}}, {HealthStatuses: []catalog.HealthStatus{catalog.HealthUnknown, catalog.HealthDegraded}},
		{Owner: ptr("team alpha")}, {Owner: ptr("EQUIPE BETA")}, {Owner: ptr("delta")}, {Owner: ptr("nobody")},
		{Tags: []string{"pci"}}, {Tags: []string{"pci", "Securite"}}, {Tags: []string{"pci dss", "tier 1"}},
		{Search: ptr("pay"), Domains: []string{"payments"}, Statuses: []catalog.CapabilityStatus{catalog.CapabilityActive, catalog.CapabilityPlanning}},
		{Tags: []string{"core"}, Owner: ptr("sre"), HealthStatuses: []catalog.HealthStatus{catalog.HealthHealthy, catalog.HealthDegraded}},
		{Priorities: []catalog.Priority{catalog.PriorityHigh}, HealthStatuses: []catalog.HealthStatus{catalog.HealthHealthy}, Order: dynamo.OrderHealthScore, Desc: true},
		{Statuses: []catalog.CapabilityStatus{catalog.CapabilityDeprecated}, Domains: []string{"security"}, Order: dynamo.OrderUpdatedAt},
	}
	for _, o := range []string{dynamo.OrderName, dynamo.OrderPriority, dynamo.OrderHealthScore, dynamo.OrderUpdatedAt} {
		for _, d := range []bool{false, true} {
			qs = append(qs, dynamo.CapabilityQuery{Order: o, Desc: d},
				dynamo.CapabilityQuery{Order: o, Desc: d, Tags: []string{"gdpr"}},
				dynamo.CapabilityQuery{Order: o, Desc: d, Priorities: []catalog.Priority{catalog.PriorityMedium, catalog.PriorityCritical}, Search: ptr("a")})
		}
	}
	return qs
}

// checkSearch pages through every query with a small first and compares the pages, hasNext and
// the count with the brute force.
func checkSearch(t *testing.T, env *dynamotest.Env, ids []string) {
	t.Helper()
	checkSearchWith(t, env, ids, func() {})
}

// checkSearchWith is checkSearch with prepare run before every page and count (it sets the
// planner's statistics).
func checkSearchWith(t *testing.T, env *dynamotest.Env, ids []string, prepare func()) {
	t.Helper()
	ctx := context.Background()
	caps, err := env.Store.CapabilitiesByID(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	all := slices.DeleteFunc(caps, func(c *catalog.Capability) bool { return c == nil })
	for _, q := range searchQueries() {
		want := bruteForce(all, q)
		name := fmt.Sprintf("%+v search=%v owner=%v", q, deref(q.Search), deref(q.Owner))
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			prepare()
			p, err := env.Store.SearchCapabilities(ctx, q, 7, after)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, c := range p.Items {
				got = append(got, c.CapabilityID)
			}
			if p.HasNext != (len(got) < len(want)) {
				t.Fatalf("%s: page %d: hasNext = %v with %d of %d read", name, pages, p.HasNext, len(got), len(want))
			}
			if len(p.Items) < 7 && p.HasNext {
				t.Fatalf("%s: page %d short (%d) with more to come", name, pages, len(p.Items))
			}
			if !p.HasNext {
				break
			}
			after = p.Cursors[len(p.Cursors)-1]
		}
		wantIDs := make([]string, len(want))
		for i, c := range want {
			wantIDs[i] = c.CapabilityID
		}
		if !slices.Equal(got, wantIDs) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, wantIDs)
		}
		prepare()
		n, err := env.Store.CountCapabilities(ctx, q)
		if err != nil || n != len(want) {
			t.Errorf("%s: count = %d, %v; want %d", name, n, err, len(want))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// Every filter, order and search, page by page, matches a brute force over the whole
// catalogue, before and after a run of mutations.
func TestSearchMatchesBruteForce(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	// A few hundred capabilities on memdyn; fewer on the slower test backends.
	n := 240
	if env.Mem == nil {
		n = 60
	}
	ids := searchCatalogue(t, env, n)
	checkSearch(t, env, ids)
	checkWithStats(t, env, ids)
	// Orders other than the driving range's, from the order's own ranges (as when the driving
	// range holds more cards than a page sorts itself).
	dynamo.SetSortLimit(env.Store, 3)
	checkSearch(t, env, ids)
	checkWithStats(t, env, ids)
	dynamo.SetSortLimit(env.Store, 0)

	// Mutations: rename, retag, transition, a component with a new team added and one
	// removed, a delete.
	rng := rand.New(rand.NewPCG(7, 7))
	transitioned := 0
	for i := range 48 {
		id := ids[rng.IntN(len(ids))]
		c, err := env.Store.Capability(ctx, id)
		if err != nil {
			continue // deleted already
		}
		switch i % 6 {
		case 5:
			comps, _ := env.Store.ReadRange(ctx, id, dynamo.SegComponents, dynamo.Fields{})
			var ms []*catalog.Metric
			for _, x := range comps.Components {
				ms = append(ms, &catalog.Metric{CapabilityID: id, ComponentID: x.ComponentID, MetricType: catalog.MetricPerformance, Interval: "1m",
					Timestamp: catalog.NewTimestamp(sampleNow.Add(-time.Duration(i) * time.Minute)),
					Values:    &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: float64(50 + rng.IntN(50))}}})
			}
			if len(ms) > 0 {
				_, err = env.Store.RecordMetrics(ctx, ms, dynamo.Idempotency{})
			}
		case 0:
			_, err = env.Store.UpdateCapability(ctx, id, c.Revision, func(c *catalog.Capability) error {
				c.Name = "Alert Renamed " + fmt.Sprint(i)
				return nil
			}, dynamo.Idempotency{})
		case 1:
			_, err = env.Store.UpdateCapability(ctx, id, c.Revision, func(c *catalog.Capability) error {
				c.Tags, c.Owner = []string{"fresh", "PCI"}, "Équipe Bêta"
				return nil
			}, dynamo.Idempotency{})
		case 2:
			for _, to := range []catalog.CapabilityStatus{catalog.CapabilityDevelopment, catalog.CapabilityActive, catalog.CapabilityDeprecated} {
				if _, err2 := env.Store.TransitionCapability(ctx, id, to, c.Revision, dynamo.Idempotency{}); err2 == nil {
					transitioned++
					break
				}
			}
		case 3:
			_, err = env.Store.AddComponent(ctx, &catalog.Component{CapabilityID: id, ComponentID: fmt.Sprintf("mut-%d", i), Name: "M", ComponentType: "db",
				Order: 50, Status: catalog.ComponentActive, Ownership: &catalog.Ownership{Team: "Mutant Team"},
				Health: &catalog.ComponentHealth{Status: catalog.HealthUnhealthy, Availability: 50, ResponseTime: 900}}, dynamo.Idempotency{})
		case 4:
			err = env.Store.DeleteCapability(ctx, id, c.Revision, dynamo.Idempotency{})
		}
		if err != nil {
			t.Fatalf("mutation %d on %s: %v", i, id, err)
		}
	}
	if transitioned == 0 {
		t.Error("no transition succeeded")
	}
	checkSearch(t, env, ids)
	// The new team is an owner; a component's removal takes its team away.
	q := dynamo.CapabilityQuery{Owner: ptr("mutant team")}
	before, err := env.Store.CountCapabilities(ctx, q)
	if err != nil || before == 0 {
		t.Fatalf("count of the new team = %d, %v", before, err)
	}
	p, err := env.Store.SearchCapabilities(ctx, q, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	c := p.Items[0]
	var compID string
	comps, _ := env.Store.ReadRange(ctx, c.CapabilityID, dynamo.SegComponents, dynamo.Fields{})
	for _, x := range comps.Components {
		if x.Ownership != nil && x.Ownership.Team == "Mutant Team" {
			compID = x.ComponentID
		}
	}
	if err := env.Store.RemoveComponent(ctx, c.CapabilityID, compID, true, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := env.Store.CountCapabilities(ctx, q); after != before-1 {
		t.Errorf("count after removing the team's component = %d, want %d", after, before-1)
	}
	checkSearch(t, env, ids)
}

// checkWithStats runs checkSearchWith with the planner's statistics missing (a cold store),
// true, and wrong (stale: every count 1, then random counts, so that every range and every
// health plan gets chosen somewhere): the answers must not change.
func checkWithStats(t *testing.T, env *dynamotest.Env, ids []string) {
	t.Helper()
	truth, err := env.Store.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wrong := func(n func() int) *dynamo.Counts {
		c := *truth
		c.Capabilities = n()
		c.ByDomain, c.ByStatus, c.ByPriority, c.ByHealth, c.OwnerCapabilities = map[string]int{}, map[catalog.CapabilityStatus]int{},
			map[catalog.Priority]int{}, map[catalog.HealthStatus]int{}, map[string]int{}
		for k := range truth.ByDomain {
			c.ByDomain[k] = n()
		}
		for _, k := range catalog.CapabilityStatuses {
			c.ByStatus[k] = n()
		}
		for _, k := range catalog.Priorities {
			c.ByPriority[k] = n()
		}
		for _, k := range catalog.HealthStatuses {
			c.ByHealth[k] = n()
		}
		for k := range truth.OwnerCapabilities {
			c.OwnerCapabilities[k] = n()
		}
		return &c
	}
	rng := rand.New(rand.NewPCG(3, 3))
	for _, v := range []struct {
		name  string
		stats func() *dynamo.Counts
	}{
		{"cold", func() *dynamo.Counts { return nil }},
		{"true", func() *dynamo.Counts { return truth }},
		{"all 1", func() *dynamo.Counts { return wrong(func() int { return 1 }) }},
		{"random", func() *dynamo.Counts { return wrong(func() int { return rng.IntN(2 * len(ids)) }) }},
	} {
		t.Run("stats "+v.name, func(t *testing.T) {
			checkSearchWith(t, env, ids, func() { dynamo.SetStats(env.Store, v.stats()) })
		})
	}
}

// Check audits every search card against the capability's METADATA and components, and
// check -repair rewrites them: missing (a table written before the cards existed), stale, with
// wrong keys, or left over.
func TestCheckRepairsSearchCards(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	loadSample(t, env)
	table := aws.String(env.Table)
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}
	}
	// Every card of one capability gone (as in a table written before them).
	for _, it := range scanAll(t, env) {
		if render(it["PK"]) == "CAPABILITY#CAP-FRAUD-DET-001" && strings.HasPrefix(render(it["SK"]), "INDEX#C#") {
			if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: key(render(it["PK"]), render(it["SK"]))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A card under a wrong key, a stale card's Data, a card that should not exist.
	alert := "CAPABILITY#" + alertID
	if _, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key(alert, "INDEX#C#STATUS"),
		UpdateExpression: aws.String("SET GSI1PK = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("CARD#STATUS#retiring")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key(alert, "INDEX#C#NAME"),
		UpdateExpression: aws.String("SET #d.#n = :n"), ExpressionAttributeNames: map[string]string{"#d": "Data", "#n": "name"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": s("Stale")}}); err != nil {
		t.Fatal(err)
	}
	extra, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key(alert, "INDEX#C#TERM#al")})
	if err != nil || extra.Item == nil {
		t.Fatalf("get a term card: %v", err)
	}
	extra.Item["SK"], extra.Item["GSI1PK"] = s("INDEX#C#TERM#zz"), s("CARD#TERM#zz")
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: extra.Item}); err != nil {
		t.Fatal(err)
	}

	report, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	got := findings(report.Findings)
	for _, want := range []string{"aggregates " + alertID, "aggregates CAP-FRAUD-DET-001"} {
		if !slices.Contains(got, want) {
			t.Errorf("Check findings %v lack %q", got, want)
		}
	}
	if n, _ := env.Store.CountCapabilities(ctx, dynamo.CapabilityQuery{Search: ptr("fraud")}); n != 0 {
		t.Errorf("search fraud without cards = %d, want 0 (the damage)", n)
	}
	if _, err := env.Store.Check(ctx, true); err != nil {
		t.Fatal(err)
	}
	after, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Findings) != 0 {
		t.Errorf("after repair: %v", after.Findings)
	}
	p, err := env.Store.SearchCapabilities(ctx, dynamo.CapabilityQuery{Search: ptr("fraud")}, 10, "")
	if err != nil || len(p.Items) != 1 || p.Items[0].CapabilityID != "CAP-FRAUD-DET-001" {
		t.Errorf("search fraud after repair = %v, %v", p, err)
	}
}

// A capability whose words, tags and owner would need more search cards than a transaction
// can rewrite is BAD_USER_INPUT naming the field, and nothing is written.
func TestSearchCardsBounded(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	c := newCapability("CAP-MANY-TAGS")
	for i := range 40 {
		c.Tags = append(c.Tags, fmt.Sprintf("t%c%c", 'a'+i%26, 'a'+i/26))
	}
	_, err := env.Store.CreateCapability(ctx, c, dynamo.Idempotency{})
	var ve *catalog.ValidationError
	if !errors.As(err, &ve) || ve.Field != "tags" {
		t.Fatalf("create with 40 tags = %v, want a ValidationError on tags", err)
	}
	if n := len(scanAll(t, env)); n != 0 {
		t.Errorf("%d items written", n)
	}
	c.Tags = nil
	c.Name = "ax bx cx dx ex fx gx hx ix jx kx lx mx nx ox px qx rx sx tx ux vx wx"
	_, err = env.Store.CreateCapability(ctx, c, dynamo.Idempotency{})
	if !errors.As(err, &ve) || ve.Field != "name" {
		t.Fatalf("create with 23 words = %v, want a ValidationError on name", err)
	}
}

// A list filter given with no value is refused, naming it, before any request: whether it would
// match nothing or everything is a guess a client should not have to make.
func TestFiltersRefuseEmptyLists(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	before := env.Counter.Total()
	for name, q := range map[string]dynamo.CapabilityQuery{
		"filter.domains": {Domains: []string{}}, "filter.statuses": {Statuses: []catalog.CapabilityStatus{}},
		"filter.priorities": {Priorities: []catalog.Priority{}}, "filter.healthStatuses": {HealthStatuses: []catalog.HealthStatus{}},
		"filter.tags": {Tags: []string{}, Domains: []string{"ops"}},
	} {
		for what, err := range map[string]error{
			"page":  func() error { _, err := env.Store.SearchCapabilities(ctx, q, 10, ""); return err }(),
			"count": func() error { _, err := env.Store.CountCapabilities(ctx, q); return err }(),
		} {
			var v *catalog.ValidationError
			if !errors.As(err, &v) || v.Field != name {
				t.Errorf("%s of %+v: %v, want a validation error naming %s", what, q, err, name)
			}
		}
	}
	for name, f := range map[string]dynamo.ComponentFilter{
		"filter.types": {Types: []string{}}, "filter.statuses": {Statuses: []catalog.ComponentStatus{}},
		"filter.healthStatuses": {HealthStatuses: []catalog.HealthStatus{}, Team: "sre"},
	} {
		_, err := env.Store.Components(ctx, f, 10, "")
		var v *catalog.ValidationError
		if !errors.As(err, &v) || v.Field != name {
			t.Errorf("components(%+v): %v, want a validation error naming %s", f, err, name)
		}
	}
	if _, err := env.Store.ActiveJobs(ctx, []catalog.JobType{}, 10, ""); err == nil {
		t.Error("activeJobs(jobTypes: []) was accepted")
	}
	if n := env.Counter.Total() - before; n != 0 {
		t.Errorf("refused filters sent %d requests, want 0", n)
	}
}
