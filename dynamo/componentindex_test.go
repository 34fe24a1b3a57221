package dynamo_test

import (
	"context"
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

// componentIndexCount is how many component and active-job index items BulkLoad writes for b,
// counted here independently of the store: per component its STATUS and HEALTH cards, a TEAM
// card when it has a team, one card per distinct prefix of 1 to 3 runes of the words of its ID,
// name and type; per PENDING or RUNNING job one item.
func componentIndexCount(b *catalog.Bundle) int {
	n := 0
	for _, c := range b.Components {
		n += 2
		if c.Ownership != nil && catalog.Fold(c.Ownership.Team) != "" {
			n++
		}
		prefixes := map[string]bool{}
		for _, w := range catalog.Words(c.ComponentID + " " + c.Name + " " + c.ComponentType) {
			r := []rune(w)
			for i := 1; i <= min(3, len(r)); i++ {
				prefixes[string(r[:i])] = true
			}
		}
		n += len(prefixes)
	}
	for _, j := range b.Jobs {
		if j.Status == catalog.JobPending || j.Status == catalog.JobRunning {
			n++
		}
	}
	return n
}

var (
	genTypes  = []string{"api-service", "database", "queue", "frontend", "batch-job"}
	genTeams  = []string{"Équipe Paiements", "equipe paiements", "Platform Team", "Data-Ops", "Sécurité", ""}
	genWords  = []string{"Payment", "Payout", "Paiement", "Alert", "Alerting", "Ledger", "Gateway", "Gâteau", "Risk", "Fraud"}
	genHealth = []catalog.HealthStatus{catalog.HealthHealthy, catalog.HealthDegraded, catalog.HealthUnhealthy, ""}
)

// generatedCatalogue returns n capabilities with 0 to 6 components each (varied types, teams
// with accents and case, statuses, health, names with shared prefixes) and jobs in every
// status and type.
func generatedCatalogue(n int, seed uint64) []*catalog.Bundle {
	rnd := rand.New(rand.NewPCG(seed, seed+1))
	var out []*catalog.Bundle
	for i := range n {
		capID := fmt.Sprintf("CAP-GEN-%03d", i)
		b := &catalog.Bundle{Capability: &catalog.Capability{CapabilityID: capID, Name: "Generated " + genWords[i%len(genWords)],
			BusinessDomain: []string{"payments", "risk", "ops"}[i%3], Status: catalog.CapabilityActive, Priority: catalog.PriorityMedium}}
		for k := range rnd.IntN(7) {
			c := &catalog.Component{ComponentID: fmt.Sprintf("c%03d-%d", i, k), CapabilityID: capID,
				Name:          genWords[rnd.IntN(len(genWords))] + " " + genWords[rnd.IntN(len(genWords))] + fmt.Sprintf(" %d", k),
				ComponentType: genTypes[rnd.IntN(len(genTypes))], Order: k + 1,
				Status: catalog.ComponentStatuses[rnd.IntN(len(catalog.ComponentStatuses))],
				Sla:    &catalog.SLA{Availability: 99, ResponseTime: 500, ErrorRate: 1}}
			if h := genHealth[rnd.IntN(len(genHealth))]; h != "" {
				c.Health = &catalog.ComponentHealth{Status: h, Availability: 99.5}
			}
			if t := genTeams[rnd.IntN(len(genTeams))]; t != "" {
				c.Ownership = &catalog.Ownership{Team: t}
			}
			b.Components = append(b.Components, c)
		}
		for k := range rnd.IntN(4) {
			st := catalog.JobStatuses[rnd.IntN(len(catalog.JobStatuses))]
			j := &catalog.Job{JobID: fmt.Sprintf("job-%03d-%d", i, k), CapabilityID: capID, JobType: catalog.JobTypes[rnd.IntN(len(catalog.JobTypes))],
				Status: st, StartTime: catalog.NewTimestamp(sampleNow.Add(-time.Duration(rnd.IntN(10000)) * time.Minute))}
			if st.Terminal() {
				j.EndTime = catalog.TimePtr(sampleNow)
			}
			b.Jobs = append(b.Jobs, j)
		}
		out = append(out, b)
	}
	return out
}

// truth is the catalogue as a Scan of the table says: every component and job.
func truth(t *testing.T, env *dynamotest.Env) ([]*catalog.Component, []*catalog.Job) {
	t.Helper()
	var comps []*catalog.Component
	var jobs []*catalog.Job
	ctx := context.Background()
	page, err := env.Store.Capabilities(ctx, "", dynamo.MaxPage, "")
	for err == nil {
		for _, c := range page.Items {
			p, err := env.Store.ReadPartition(ctx, c.CapabilityID, dynamo.SegComponents)
			if err != nil {
				t.Fatal(err)
			}
			comps = append(comps, p.Components...)
			after := ""
			for {
				jp, err := env.Store.Jobs(ctx, c.CapabilityID, dynamo.JobFilter{}, dynamo.MaxPage, after)
				if err != nil {
					t.Fatal(err)
				}
				jobs = append(jobs, jp.Items...)
				if !jp.HasNext {
					break
				}
				after = jp.Cursors[len(jp.Cursors)-1]
			}
		}
		if !page.HasNext {
			break
		}
		page, err = env.Store.Capabilities(ctx, "", dynamo.MaxPage, page.Cursors[len(page.Cursors)-1])
	}
	if err != nil {
		t.Fatal(err)
	}
	return comps, jobs
}

// bruteComponents is the answer of f over comps, ordered by capability and component.
func bruteComponents(comps []*catalog.Component, f dynamo.ComponentFilter) []string {
	var out []string
	for _, c := range comps {
		words := catalog.Words(c.ComponentID + " " + c.Name + " " + c.ComponentType)
		team := ""
		if c.Ownership != nil {
			team = catalog.Fold(c.Ownership.Team)
		}
		ok := (len(f.Types) == 0 || slices.Contains(f.Types, c.ComponentType)) &&
			(len(f.Statuses) == 0 || slices.Contains(f.Statuses, c.Status)) &&
			(len(f.HealthStatuses) == 0 || slices.Contains(f.HealthStatuses, catalog.ComponentHealthStatus(c))) &&
			(f.Team == "" || catalog.Fold(f.Team) == team)
		for _, w := range catalog.Words(f.Search) {
			ok = ok && slices.ContainsFunc(words, func(x string) bool { return strings.HasPrefix(x, w) })
		}
		if ok {
			out = append(out, c.CapabilityID+"#"+c.ComponentID)
		}
	}
	slices.Sort(out)
	return out
}

var componentFilters = []dynamo.ComponentFilter{
	{},
	{Types: []string{"database"}},
	{Types: []string{"queue", "frontend"}},
	{Statuses: []catalog.ComponentStatus{catalog.ComponentActive}},
	{Statuses: []catalog.ComponentStatus{catalog.ComponentActive, catalog.ComponentDeprecated}},
	{HealthStatuses: []catalog.HealthStatus{catalog.HealthUnknown}},
	{HealthStatuses: []catalog.HealthStatus{catalog.HealthDegraded, catalog.HealthUnhealthy}},
	{Team: "EQUIPE paiements"},
	{Team: "platform-team"},
	{Team: "nobody"},
	{Search: "pay"},
	{Search: "PAIE"},
	{Search: "gateau"},
	{Search: "p"},
	{Search: "alerting ledg"},
	{Search: "payout 3"},
	{Search: "api serv"},
	{Search: "zzz"},
	{Search: "pay", Types: []string{"database", "queue"}},
	{Search: "al", Team: "Sécurité"},
	{Team: "equipe paiements", Statuses: []catalog.ComponentStatus{catalog.ComponentActive, catalog.ComponentPlanned}},
	{Team: "data ops", HealthStatuses: []catalog.HealthStatus{catalog.HealthHealthy}},
	{Types: []string{"api-service"}, HealthStatuses: []catalog.HealthStatus{catalog.HealthHealthy, catalog.HealthUnknown}},
	{Search: "fraud", HealthStatuses: []catalog.HealthStatus{catalog.HealthUnknown}, Statuses: []catalog.ComponentStatus{catalog.ComponentActive, catalog.ComponentRetired}},
	{Types: []string{"batch-job"}, Statuses: []catalog.ComponentStatus{catalog.ComponentInactive}, Team: "platform team", Search: "r"},
}

// checkComponentFilters compares every filter's pages (size first) and count with the brute force.
func checkComponentFilters(t *testing.T, env *dynamotest.Env, comps []*catalog.Component, first int) {
	t.Helper()
	ctx := context.Background()
	for _, f := range componentFilters {
		want := bruteComponents(comps, f)
		var got []string
		after := ""
		for pages := 0; ; pages++ {
			p, err := env.Store.Components(ctx, f, first, after)
			if err != nil {
				t.Fatalf("Components(%+v) = %v", f, err)
			}
			for _, c := range p.Items {
				got = append(got, c.CapabilityID+"#"+c.ComponentID)
			}
			if len(p.Items) < first && p.HasNext {
				t.Errorf("Components(%+v): a short page (%d) with hasNext", f, len(p.Items))
			}
			if !p.HasNext {
				break
			}
			if len(p.Items) == 0 || pages > 1000 {
				t.Fatalf("Components(%+v): hasNext with no items", f)
			}
			after = p.Cursors[len(p.Cursors)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("Components(%+v) = %d %v,\nwant %d %v", f, len(got), got, len(want), want)
		}
		if n, err := env.Store.CountComponents(ctx, f); err != nil || n != len(want) {
			t.Errorf("CountComponents(%+v) = %d, %v; want %d", f, n, err, len(want))
		}
	}
}

// bruteActiveJobs is the PENDING and RUNNING jobs of types (all when none), oldest first.
func bruteActiveJobs(jobs []*catalog.Job, types []catalog.JobType) []string {
	type row struct{ key, id string }
	var rows []row
	for _, j := range jobs {
		if (j.Status == catalog.JobPending || j.Status == catalog.JobRunning) && (len(types) == 0 || slices.Contains(types, j.JobType)) {
			rows = append(rows, row{j.StartTime.UTC().Format(catalog.TimeLayout) + "#" + j.CapabilityID + "#" + j.JobID, j.JobID})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return strings.Compare(a.key, b.key) })
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.id
	}
	return out
}

func checkActiveJobs(t *testing.T, env *dynamotest.Env, jobs []*catalog.Job, first int) {
	t.Helper()
	ctx := context.Background()
	for _, types := range [][]catalog.JobType{nil, {catalog.JobDeployment}, {catalog.JobRollback, catalog.JobEmergency, catalog.JobScaling}} {
		want := bruteActiveJobs(jobs, types)
		var got []string
		after := ""
		for {
			p, err := env.Store.ActiveJobs(ctx, types, first, after)
			if err != nil {
				t.Fatalf("ActiveJobs(%v) = %v", types, err)
			}
			for _, j := range p.Items {
				got = append(got, j.JobID)
			}
			if len(p.Items) < first && p.HasNext {
				t.Errorf("ActiveJobs(%v): a short page with hasNext", types)
			}
			if !p.HasNext {
				break
			}
			after = p.Cursors[len(p.Cursors)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("ActiveJobs(%v) = %v, want %v", types, got, want)
		}
		if n, err := env.Store.CountActiveJobs(ctx, types); err != nil || n != len(want) {
			t.Errorf("CountActiveJobs(%v) = %d, %v; want %d", types, n, err, len(want))
		}
	}
}

// Every filter of Components and every ActiveJobs, page by page, equals a brute force over a
// generated catalogue, before and after a run of mutations of every kind; the check finds the
// index items right all along, and rebuilds them when they are lost.
func TestComponentIndexMatchesBruteForce(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	bundles := generatedCatalogue(60, 7)
	load(t, env, bundles)
	comps, jobs := truth(t, env)
	if len(comps) < 100 || len(bruteActiveJobs(jobs, nil)) < 10 {
		t.Fatalf("the generated catalogue is too small: %d components, %d active jobs", len(comps), len(bruteActiveJobs(jobs, nil)))
	}
	checkComponentFilters(t, env, comps, 7)
	checkComponentFilters(t, env, comps, 100)
	checkActiveJobs(t, env, jobs, 3)

	rnd := rand.New(rand.NewPCG(3, 4))
	at := sampleNow.Add(time.Minute)
	for i := range 40 {
		c := comps[rnd.IntN(len(comps))]
		var err error
		switch i % 6 {
		case 0:
			_, err = env.Store.AddComponent(ctx, &catalog.Component{ComponentID: fmt.Sprintf("added-%d", i), CapabilityID: c.CapabilityID,
				Name: "Alerting Payout Added", ComponentType: "queue", Order: 50 + i, Status: catalog.ComponentActive,
				Ownership: &catalog.Ownership{Team: "Platform Team"}}, dynamo.Idempotency{})
		case 1:
			_, err = env.Store.UpdateComponent(ctx, c.CapabilityID, c.ComponentID, c.Revision, func(n *catalog.Component) error {
				n.Name, n.Status = "Renamed Gâteau Ledger", catalog.ComponentMaintenance
				n.Ownership = &catalog.Ownership{Team: "Sécurité"}
				return nil
			}, dynamo.Idempotency{})
		case 2:
			err = env.Store.RemoveComponent(ctx, c.CapabilityID, c.ComponentID, true, dynamo.Idempotency{})
		case 3:
			_, err = env.Store.RecordMetrics(ctx, []*catalog.Metric{{CapabilityID: c.CapabilityID, ComponentID: c.ComponentID,
				MetricType: catalog.MetricPerformance, Interval: "1m", Timestamp: catalog.NewTimestamp(at),
				Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: float64(50 + rnd.IntN(50))}}}}, dynamo.Idempotency{})
		case 4:
			var j *catalog.Job
			j, err = env.Store.StartJob(ctx, &catalog.Job{JobID: fmt.Sprintf("started-%d", i), CapabilityID: c.CapabilityID,
				JobType: catalog.JobDeployment, Status: catalog.JobPending, StartTime: catalog.NewTimestamp(sampleNow.Add(-time.Duration(i) * time.Hour))}, dynamo.Idempotency{})
			if err == nil && i%12 == 4 {
				j, err = env.Store.UpdateJob(ctx, j.JobID, j.Revision, func(j *catalog.Job) error { j.Status = catalog.JobRunning; return nil }, dynamo.Idempotency{})
			}
			if err == nil && i%12 == 10 {
				_, err = env.Store.UpdateJob(ctx, j.JobID, j.Revision, func(j *catalog.Job) error { j.Status = catalog.JobCancelled; return nil }, dynamo.Idempotency{})
			}
		case 5:
			for _, j := range jobs {
				if j.Status == catalog.JobRunning {
					_, err = env.Store.UpdateJob(ctx, j.JobID, j.Revision, func(j *catalog.Job) error { j.Status = catalog.JobCompleted; return nil }, dynamo.Idempotency{})
					break
				}
			}
		}
		if err != nil && !dynamo.IsNotFound(err) {
			t.Fatalf("mutation %d: %v", i, err)
		}
		comps, jobs = truth(t, env)
	}
	victim := comps[0].CapabilityID
	cp, err := env.Store.Capability(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Store.DeleteCapability(ctx, victim, cp.Revision, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	comps, jobs = truth(t, env)
	checkComponentFilters(t, env, comps, 7)
	checkActiveJobs(t, env, jobs, 3)
	report, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) > 0 {
		t.Errorf("Check after the mutations = %v, want no findings", report.Findings)
	}
}

// check -repair rebuilds lost, stale and extra index items (a table written before the index
// existed): the check reports the capability, the repair makes every answer right again.
func TestCheckRepairsComponentIndex(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, generatedCatalogue(15, 11))
	comps, jobs := truth(t, env)
	// Lose the component and active-job index items of one capability.
	if n := removeIndexItems(t, env, "CAPABILITY#CAP-GEN-000"); n == 0 {
		t.Fatal("CAP-GEN-000 has no index items to lose")
	}
	report, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if !hasFinding(report.Findings, dynamo.FindingComponentIndex, "CAP-GEN-000") {
		t.Fatalf("Check = %v, want a %s finding for CAP-GEN-000", report.Findings, dynamo.FindingComponentIndex)
	}
	report, err = env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) > 0 || !hasFinding(report.Repaired, dynamo.FindingComponentIndex, "CAP-GEN-000") {
		t.Errorf("Check(repair) = %v, repaired %v; want the index repaired and nothing left", report.Findings, report.Repaired)
	}
	checkComponentFilters(t, env, comps, 10)
	checkActiveJobs(t, env, jobs, 5)
}

func hasFinding(fs []dynamo.Finding, kind, subject string) bool {
	return slices.ContainsFunc(fs, func(f dynamo.Finding) bool { return f.Kind == kind && f.Subject == subject })
}

// removeIndexItems deletes the component and active-job index items of a partition, behind the
// store's back, and returns how many.
func removeIndexItems(t *testing.T, env *dynamotest.Env, pk string) int {
	t.Helper()
	n := 0
	for _, m := range scanAll(t, env) {
		if m["PK"].(*types.AttributeValueMemberS).Value != pk {
			continue
		}
		sk := m["SK"].(*types.AttributeValueMemberS).Value
		if !strings.HasPrefix(sk, "INDEX#COMP#") && !strings.HasPrefix(sk, "INDEX#ACTIVEJOB#") {
			continue
		}
		_, err := env.Client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(env.Table),
			Key: map[string]types.AttributeValue{"PK": m["PK"], "SK": m["SK"]}})
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// A repeated page or count of components or active jobs, with nothing written in between, is
// answered from the embedded default's read memo; a write (through the port too) is seen by the
// next read.
func TestComponentReadsUseTheMemo(t *testing.T) {
	e := newMemoEnv(t)
	ctx := context.Background()
	f := dynamo.ComponentFilter{Search: "alert"}
	page, err := e.store.Components(ctx, f, 50, "")
	if err != nil || len(page.Items) == 0 {
		t.Fatalf("Components(alert) = %v, %v", page, err)
	}
	n, err := e.store.CountComponents(ctx, f)
	if err != nil || n != len(page.Items) {
		t.Fatalf("CountComponents(alert) = %d, %v; want %d", n, err, len(page.Items))
	}
	jobs, err := e.store.ActiveJobs(ctx, nil, 50, "")
	if err != nil || len(jobs.Items) == 0 {
		t.Fatalf("ActiveJobs = %v, %v", jobs, err)
	}
	before := e.reads.Load()
	again, err := e.store.Components(ctx, f, 50, "")
	if err != nil || again != page {
		t.Errorf("repeated Components = %v (same page %v)", err, again == page)
	}
	if m, err := e.store.CountComponents(ctx, f); err != nil || m != n {
		t.Errorf("repeated CountComponents = %d, %v", m, err)
	}
	if j, err := e.store.ActiveJobs(ctx, nil, 50, ""); err != nil || j != jobs {
		t.Errorf("repeated ActiveJobs = %v (same page %v)", err, j == jobs)
	}
	if got := e.reads.Load() - before; got != 0 {
		t.Errorf("repeated reads sent %d requests, want 0 (the memo)", got)
	}
	c := page.Items[0]
	if _, err := e.other.UpdateComponent(ctx, c.CapabilityID, c.ComponentID, c.Revision, func(n *catalog.Component) error {
		n.Name = "Renamed Without The Word"
		n.ComponentID = c.ComponentID
		return nil
	}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	after, err := e.store.Components(ctx, f, 50, "")
	if err != nil {
		t.Fatal(err)
	}
	stillThere := slices.ContainsFunc(after.Items, func(x *catalog.Component) bool { return x.ComponentID == c.ComponentID && x.Name == c.Name })
	if stillThere {
		t.Errorf("Components(alert) after the rename through the port still shows %s as it was", c.ComponentID)
	}
}

// A component whose ID, name and type would need more index cards than MaxComponentCards is
// BAD_USER_INPUT on name, and nothing is written.
func TestComponentCardBound(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	load(t, env, generatedCatalogue(1, 1))
	var words []string
	for i := range 14 {
		words = append(words, string(rune('a'+i))+string(rune('a'+i))+"x")
	}
	env.Counter.Reset()
	_, err := env.Store.AddComponent(ctx, &catalog.Component{ComponentID: "wordy", CapabilityID: "CAP-GEN-000", Name: strings.Join(words, " "),
		ComponentType: "queue", Order: 90, Status: catalog.ComponentActive}, dynamo.Idempotency{})
	if !isValidation(err, "name") {
		t.Fatalf("AddComponent(42 word prefixes) = %v, want BAD_USER_INPUT on name", err)
	}
	if w := env.Counter.Ops()["TransactWriteItems"] + env.Counter.Ops()["BatchWriteItem"] + env.Counter.Ops()["PutItem"]; w != 0 {
		t.Errorf("the refused write sent %v", env.Counter.Ops())
	}
	// Within the bound it is written, with its cards.
	if _, err := env.Store.AddComponent(ctx, &catalog.Component{ComponentID: "wordy", CapabilityID: "CAP-GEN-000", Name: strings.Join(words[:9], " "),
		ComponentType: "queue", Order: 90, Status: catalog.ComponentActive}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if p, err := env.Store.Components(ctx, dynamo.ComponentFilter{Search: "iix"}, 10, ""); err != nil || len(p.Items) != 1 {
		t.Errorf("Components(iix) = %v, %v; want wordy", p, err)
	}
}

// What a page of each filter shape costs on the generated catalogue: one round of Queries of
// the chosen partitions and one BatchGetItem, never a Scan.
func TestComponentPageRequests(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, generatedCatalogue(60, 7))
	tests := []struct {
		f    dynamo.ComponentFilter
		want map[string]int
	}{
		{dynamo.ComponentFilter{Types: []string{"database"}}, map[string]int{"Query": 1}},
		{dynamo.ComponentFilter{Types: []string{"database", "queue"}}, map[string]int{"Query": 2}},
		{dynamo.ComponentFilter{Team: "equipe paiements"}, map[string]int{"Query": 1, "BatchGetItem": 1}},
		{dynamo.ComponentFilter{Search: "pay"}, map[string]int{"Query": 1, "BatchGetItem": 1}},
		{dynamo.ComponentFilter{Search: "payment", Statuses: []catalog.ComponentStatus{catalog.ComponentActive, catalog.ComponentPlanned}}, map[string]int{"Query": 1, "BatchGetItem": 1}},
		{dynamo.ComponentFilter{HealthStatuses: []catalog.HealthStatus{catalog.HealthHealthy, catalog.HealthDegraded}, Team: "platform team"}, map[string]int{"Query": 2, "BatchGetItem": 1}},
		{dynamo.ComponentFilter{}, map[string]int{"Query": 4, "BatchGetItem": 1}},
	}
	for _, tt := range tests {
		env.Counter.Reset()
		p, err := env.Store.Components(ctx, tt.f, 5, "")
		if err != nil || len(p.Items) == 0 {
			t.Fatalf("Components(%+v) = %v, %v", tt.f, p, err)
		}
		wantOps(t, env, fmt.Sprintf("Components(%+v)", tt.f), tt.want)
	}
	env.Counter.Reset()
	if _, err := env.Store.ActiveJobs(ctx, []catalog.JobType{catalog.JobDeployment}, 5, ""); err != nil {
		t.Fatal(err)
	}
	wantOps(t, env, "ActiveJobs(deployment)", map[string]int{"Query": 1})
}

// A component write rewrites only the index cards whose content changed: each card is marked
// behind the store's back (an attribute a Put would drop), then a description change rewrites
// none, a recordMetrics that keeps the health status none, one that moves it the HEALTH card
// alone, a team that folds the same none, and a rename every card (they carry the words) and
// deletes the cards of the words it lost.
func TestComponentCardsRewrittenOnlyWhenChanged(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	const capID = "CAP-GEN-000"
	b := generatedCatalogue(1, 1)[0]
	b.Components = []*catalog.Component{{ComponentID: "marked-1", CapabilityID: capID, Name: "Ledger API", ComponentType: "queue", Order: 1,
		Status: catalog.ComponentActive, Ownership: &catalog.Ownership{Team: "Data-Ops"},
		Health: &catalog.ComponentHealth{Status: catalog.HealthHealthy, Availability: 99.99}, Sla: &catalog.SLA{Availability: 99}}}
	load(t, env, []*catalog.Bundle{b})
	mark := func() int {
		n := 0
		for _, m := range scanAll(t, env) {
			if sk := m["SK"].(*types.AttributeValueMemberS).Value; strings.HasPrefix(sk, "INDEX#COMP#marked-1#") {
				_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(env.Table),
					Key: map[string]types.AttributeValue{"PK": m["PK"], "SK": m["SK"]}, UpdateExpression: aws.String("SET Marker = :m"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberN{Value: "1"}}})
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
		return n
	}
	// rewritten returns the cards of marked-1 that lost their marker (were put again).
	rewritten := func() []string {
		var out []string
		for _, m := range scanAll(t, env) {
			if sk := m["SK"].(*types.AttributeValueMemberS).Value; strings.HasPrefix(sk, "INDEX#COMP#marked-1#") && m["Marker"] == nil {
				out = append(out, strings.TrimPrefix(sk, "INDEX#COMP#marked-1#"))
			}
		}
		slices.Sort(out)
		return out
	}
	update := func(change func(*catalog.Component)) {
		t.Helper()
		p, err := env.Store.ReadPartition(ctx, capID, dynamo.SegComponents)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Store.UpdateComponent(ctx, capID, "marked-1", p.Components[0].Revision, func(c *catalog.Component) error { change(c); return nil }, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	metric := func(avail float64, at time.Time) {
		t.Helper()
		if _, err := env.Store.RecordMetrics(ctx, []*catalog.Metric{{CapabilityID: capID, ComponentID: "marked-1", MetricType: catalog.MetricPerformance,
			Interval: "1m", Timestamp: catalog.NewTimestamp(at), Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: avail}}}}, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := mark(); n < 10 {
		t.Fatalf("marked-1 has %d cards", n)
	}
	update(func(c *catalog.Component) { c.Description = "only the description" })
	if got := rewritten(); len(got) != 0 {
		t.Errorf("a description change rewrote cards %v, want none", got)
	}
	metric(99.95, sampleNow.Add(time.Minute)) // still healthy
	if got := rewritten(); len(got) != 0 {
		t.Errorf("recordMetrics keeping the health status rewrote cards %v, want none", got)
	}
	metric(90, sampleNow.Add(2*time.Minute)) // unhealthy
	if got := rewritten(); fmt.Sprint(got) != "[HEALTH]" {
		t.Errorf("recordMetrics moving the health status rewrote cards %v, want [HEALTH]", got)
	}
	mark()
	update(func(c *catalog.Component) { c.Ownership = &catalog.Ownership{Team: "data ops"} }) // folds the same
	if got := rewritten(); len(got) != 0 {
		t.Errorf("a team change that folds the same rewrote cards %v, want none", got)
	}
	update(func(c *catalog.Component) { c.Name = "Ledger Gateway" }) // api -> gateway: the words move
	got := rewritten()
	if len(got) == 0 || !slices.Contains(got, "T#l") {
		t.Errorf("a rename rewrote cards %v, want every card (their words changed)", got)
	}
	for _, m := range scanAll(t, env) {
		if sk := m["SK"].(*types.AttributeValueMemberS).Value; sk == "INDEX#COMP#marked-1#T#ap" || sk == "INDEX#COMP#marked-1#T#api" {
			t.Errorf("the rename left the card %s of a word the component no longer has", sk)
		}
	}
}
