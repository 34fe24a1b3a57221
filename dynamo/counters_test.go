package dynamo_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/sample"
)

// bruteCounts recounts the catalogue the long way, through the store's public reads: every
// capability (the list), its components (its partition) and its jobs (their listing), counted
// here without the store's contribution function.
func bruteCounts(tb testing.TB, s *dynamo.Store) *dynamo.Counts {
	tb.Helper()
	ctx := context.Background()
	c := &dynamo.Counts{ByDomain: map[string]int{}, ByStatus: map[catalog.CapabilityStatus]int{}, ByPriority: map[catalog.Priority]int{},
		ByHealth: map[catalog.HealthStatus]int{}, ComponentsByType: map[string]int{}, ComponentsByHealth: map[catalog.HealthStatus]int{},
		OwnerCapabilities: map[string]int{}, OwnerComponents: map[string]int{}, ActiveJobs: map[catalog.JobType]int{}}
	after := ""
	for {
		p, err := s.Capabilities(ctx, "", 100, after)
		if err != nil {
			tb.Fatalf("Capabilities: %v", err)
		}
		for _, capability := range p.Items {
			id := capability.CapabilityID
			if err := s.CheckPartition(ctx, id); err != nil {
				tb.Errorf("partition %s: %v", id, err)
			}
			c.Capabilities++
			c.ByDomain[capability.BusinessDomain]++
			c.ByStatus[capability.Status]++
			c.ByPriority[capability.Priority]++
			h := capability.Aggregates.HealthStatus
			if h == "" {
				h = catalog.HealthUnknown
			}
			c.ByHealth[h]++
			if score := capability.Aggregates.ReportedHealthScore(); score != nil {
				c.HealthScoreSum += int64(math.Round(*score * 1000))
				c.HealthReported++
			}
			part, err := s.ReadRangeConsistent(ctx, id, dynamo.SegComponents)
			if err != nil {
				tb.Fatalf("components of %s: %v", id, err)
			}
			owners := map[string]bool{}
			if o := catalog.Fold(capability.Owner); o != "" {
				owners[o] = true
			}
			for _, comp := range part.Components {
				c.Components++
				c.ComponentsByType[comp.ComponentType]++
				c.ComponentsByHealth[catalog.ComponentHealthStatus(comp)]++
				if comp.Ownership != nil {
					if team := catalog.Fold(comp.Ownership.Team); team != "" {
						c.OwnerComponents[team]++
						owners[team] = true
					}
				}
			}
			for o := range owners {
				c.OwnerCapabilities[o]++
			}
			jobsAfter := ""
			for {
				jp, err := s.Jobs(ctx, id, dynamo.JobFilter{}, 100, jobsAfter)
				if err != nil {
					tb.Fatalf("jobs of %s: %v", id, err)
				}
				for _, j := range jp.Items {
					if j.Status == catalog.JobPending || j.Status == catalog.JobRunning {
						c.ActiveJobs[j.JobType]++
					}
				}
				if !jp.HasNext {
					break
				}
				jobsAfter = jp.Cursors[len(jp.Cursors)-1]
			}
		}
		if !p.HasNext {
			break
		}
		after = p.Cursors[len(p.Cursors)-1]
	}
	return c
}

// wantCounts fails unless the summed shards equal the brute-force recount, every key.
func wantCounts(tb testing.TB, s *dynamo.Store, when string) {
	tb.Helper()
	got, err := s.Counts(context.Background())
	if err != nil {
		tb.Fatalf("Counts: %v", err)
	}
	want := bruteCounts(tb, s)
	if !reflect.DeepEqual(got, want) {
		tb.Errorf("%s: counters = %+v\nrecount    %+v", when, got, want)
	}
	if err := s.CheckCounters(context.Background()); err != nil {
		tb.Errorf("%s: %v", when, err)
	}
}

// Many writers mutate many capabilities at once - creates, updates (domain, owner, priority),
// transitions, components added, changed (team, type, health) and removed, jobs started and
// finished, health recorded, deletes - and then the summed shards equal a recount of the
// whole catalogue, every counter.
func TestCountersUnderConcurrentWriters(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	wantCounts(t, env.Store, "after the bulk load")

	domains := []string{"payments", "risk", "operations", "ops-eu"}
	teams := []string{"Platform Team", "platform-team", "Équipe Données", "SRE", ""}
	owners := []string{"Ops Team", "ops team", "Risk Office", "Zoë Müller", ""}
	types := []string{"api-server", "database", "worker", "cache"}
	health := []catalog.HealthStatus{catalog.HealthHealthy, catalog.HealthDegraded, catalog.HealthUnhealthy, ""}
	const capabilities, writers, steps = 24, 8, 40
	capID := func(i int) string { return fmt.Sprintf("CAP-CNT-%03d", i) }

	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := map[string]int{}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 19))
			pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
			for step := range steps {
				id := capID(rng.IntN(capabilities))
				op := rng.IntN(10)
				var err error
				cur, cerr := env.Store.Capability(ctx, id)
				switch {
				case cerr != nil || op == 0:
					_, err = env.Store.CreateCapability(ctx, &catalog.Capability{CapabilityID: id, Name: "Counted " + id, BusinessDomain: pick(domains),
						Status: catalog.CapabilityPlanning, Priority: catalog.Priorities[rng.IntN(4)], Owner: pick(owners)}, dynamo.Idempotency{})
					op = 0
				case op == 1:
					_, err = env.Store.UpdateCapability(ctx, id, cur.Revision, func(c *catalog.Capability) error {
						c.BusinessDomain, c.Owner, c.Priority = pick(domains), pick(owners), catalog.Priorities[rng.IntN(4)]
						return nil
					}, dynamo.Idempotency{})
				case op == 2:
					next := map[catalog.CapabilityStatus]catalog.CapabilityStatus{catalog.CapabilityPlanning: catalog.CapabilityDevelopment,
						catalog.CapabilityDevelopment: catalog.CapabilityActive, catalog.CapabilityActive: catalog.CapabilityDeprecated}[cur.Status]
					if next == "" {
						continue
					}
					_, err = env.Store.TransitionCapability(ctx, id, next, cur.Revision, dynamo.Idempotency{})
				case op == 3 || op == 4:
					comp := &catalog.Component{CapabilityID: id, ComponentID: fmt.Sprintf("cnt-%d-%d", w, step), Name: "c", ComponentType: pick(types),
						Order: 1 + rng.IntN(90), Status: catalog.ComponentActive}
					if team := pick(teams); team != "" {
						comp.Ownership = &catalog.Ownership{Team: team}
					}
					if h := health[rng.IntN(len(health))]; h != "" {
						comp.Health = &catalog.ComponentHealth{Status: h}
					}
					_, err = env.Store.AddComponent(ctx, comp, dynamo.Idempotency{})
				case op == 5 || op == 6:
					part, perr := env.Store.ReadRangeConsistent(ctx, id, dynamo.SegComponents)
					if perr != nil || len(part.Components) == 0 {
						continue
					}
					comp := part.Components[rng.IntN(len(part.Components))]
					if op == 5 {
						err = env.Store.RemoveComponent(ctx, id, comp.ComponentID, true, dynamo.Idempotency{})
						break
					}
					_, err = env.Store.UpdateComponent(ctx, id, comp.ComponentID, comp.Revision, func(c *catalog.Component) error {
						c.ComponentType = pick(types)
						c.Ownership = &catalog.Ownership{Team: pick(teams)}
						c.Health = &catalog.ComponentHealth{Status: health[rng.IntN(3)]}
						return nil
					}, dynamo.Idempotency{})
					if err == nil && rng.IntN(2) == 0 {
						m := &catalog.Metric{CapabilityID: id, ComponentID: comp.ComponentID, MetricType: catalog.MetricPerformance, Interval: "1m",
							Timestamp: catalog.NewTimestamp(sampleNow.Add(-time.Duration(1+rng.IntN(50)) * time.Minute)),
							Values:    &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: float64(50 + rng.IntN(50))}}}
						_, err = env.Store.RecordMetrics(ctx, []*catalog.Metric{m}, dynamo.Idempotency{})
					}
				case op == 7:
					_, err = env.Store.StartJob(ctx, &catalog.Job{CapabilityID: id, JobID: fmt.Sprintf("JOB-CNT-%d-%d", w, step),
						JobType: catalog.JobTypes[rng.IntN(len(catalog.JobTypes))], Status: []catalog.JobStatus{catalog.JobPending, catalog.JobRunning}[rng.IntN(2)]}, dynamo.Idempotency{})
				case op == 8:
					jp, jerr := env.Store.Jobs(ctx, id, dynamo.JobFilter{}, 20, "")
					if jerr != nil || len(jp.Items) == 0 {
						continue
					}
					j := jp.Items[rng.IntN(len(jp.Items))]
					next := map[catalog.JobStatus]catalog.JobStatus{catalog.JobPending: catalog.JobRunning, catalog.JobRunning: catalog.JobCompleted}[j.Status]
					if next == "" {
						continue
					}
					_, err = env.Store.UpdateJob(ctx, j.JobID, j.Revision, func(j *catalog.Job) error { j.Status = next; return nil }, dynamo.Idempotency{})
				case op == 9:
					err = env.Store.DeleteCapability(ctx, id, cur.Revision, dynamo.Idempotency{})
				}
				if err == nil {
					mu.Lock()
					applied[fmt.Sprint(op)]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for op := range 10 {
		if applied[fmt.Sprint(op)] == 0 {
			t.Errorf("no write of kind %d succeeded (%v): the test does not cover it", op, applied)
		}
	}
	wantCounts(t, env.Store, "after the concurrent writers")
	got, err := env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Capabilities == 0 || got.Components == 0 || got.ActiveJobTotal() == 0 || len(got.OwnerCapabilities) < 3 || got.MeanHealthScore() == nil {
		t.Errorf("the writers left too little to count: %+v", got)
	}
	// Folding: "Platform Team" and "platform-team" are one owner.
	if _, ok := got.OwnerComponents["platform-team"]; ok {
		t.Errorf("an owner is kept unfolded: %v", got.OwnerComponents)
	}
}

// A transaction that does not commit moves no counter: one refused by a condition (a
// component ID another capability holds) and one that fails on the way (an injected fault).
func TestLostTransactionMovesNoCounter(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	before, err := env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// api-server-alert-001 belongs to CAP-ALERT-MGT-001: its claim refuses the transaction.
	_, err = env.Store.AddComponent(ctx, &catalog.Component{CapabilityID: "CAP-FRAUD-DET-001", ComponentID: "api-server-alert-001", Name: "dup",
		ComponentType: "brand-new-type", Order: 77, Status: catalog.ComponentActive, Ownership: &catalog.Ownership{Team: "Nobody Else"}}, dynamo.Idempotency{})
	if err == nil {
		t.Fatal("a component ID another capability holds was added")
	}
	after, err := env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a refused transaction moved the counters:\nbefore %+v\nafter  %+v", before, after)
	}

	env.RequireFaults(t)
	env.EmulateFailure(true)
	_, err = env.Store.CreateCapability(ctx, &catalog.Capability{CapabilityID: "CAP-FAULT-1", Name: "Fault", BusinessDomain: "faults",
		Status: catalog.CapabilityPlanning, Priority: catalog.PriorityLow, Owner: "Fault Owner"}, dynamo.Idempotency{})
	env.EmulateFailure(false)
	if err == nil {
		t.Fatal("a write through a failing backend succeeded")
	}
	after, err = env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Errorf("a failed transaction moved the counters:\nbefore %+v\nafter  %+v", before, after)
	}
	wantCounts(t, env.Store, "after the lost transactions")
}

// counterShardKeys are the keys of the counter shards in the table.
func counterShardKeys(tb testing.TB, env *dynamotest.Env) []map[string]types.AttributeValue {
	tb.Helper()
	var keys []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(env.Client, &dynamodb.ScanInput{TableName: aws.String(env.Table),
		FilterExpression:          aws.String("begins_with(PK, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "COUNTERS#"}}})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		for _, it := range out.Items {
			keys = append(keys, map[string]types.AttributeValue{"PK": it["PK"], "SK": it["SK"]})
		}
	}
	if len(keys) == 0 {
		tb.Fatal("no counter shard in the table")
	}
	return keys
}

// check reports counters that differ from a recount, and check -repair fixes them: a shard
// changed behind the store's back, and a table that has no counters at all (one made before
// they existed), which the repair initialises.
func TestCheckRepairsCounters(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t) // the repair of aggregates it starts with writes a transaction
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	if err := env.Store.CheckCounters(ctx); err != nil {
		t.Fatalf("after the bulk load: %v", err)
	}
	_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(env.Table),
		Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "COUNTERS#07"}, "SK": &types.AttributeValueMemberS{Value: "COUNTER"}},
		UpdateExpression:          aws.String("SET #c = :n, #d = :n"),
		ExpressionAttributeNames:  map[string]string{"#c": "cap", "#d": "d#nowhere"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "5"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, repair := range []bool{false, true} {
		report, err := env.Store.Check(ctx, repair)
		if err != nil {
			t.Fatal(err)
		}
		found := findings(append(report.Findings, report.Repaired...))
		if fmt.Sprint(found) != "[counters counters]" {
			t.Errorf("Check(repair=%v) = %v, want the counters", repair, found)
		}
	}
	wantCounts(t, env.Store, "after check -repair")
	report, err := env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings)+len(report.Repaired) != 0 {
		t.Errorf("a second check -repair: %v, repaired %v", findings(report.Findings), findings(report.Repaired))
	}
	// The repair also dropped the zero it left behind.
	for _, key := range counterShardKeys(t, env) {
		out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		for name, av := range out.Item {
			if n, ok := av.(*types.AttributeValueMemberN); ok && n.Value == "0" && name != "v" {
				t.Errorf("%v keeps a zero counter %s after the repair", key["PK"], name)
			}
		}
	}

	// A table from before the counters: every shard deleted, and a METADATA item written
	// before its aggregates kept the component tally and the active jobs.
	for _, key := range counterShardKeys(t, env) {
		if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(env.Table), Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(env.Table),
		Key:                      map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CAPABILITY#CAP-ALERT-MGT-001"}, "SK": &types.AttributeValueMemberS{Value: "METADATA"}},
		UpdateExpression:         aws.String("REMOVE #d.#a.#t, #d.#a.#j"),
		ExpressionAttributeNames: map[string]string{"#d": "Data", "#a": "aggregates", "#t": "componentTally", "#j": "activeJobs"}})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := env.Store.Counts(ctx); err != nil || c.Capabilities != 0 {
		t.Fatalf("Counts without shards = %+v, %v, want zeros", c, err)
	}
	report, err = env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(findings(report.Repaired)) != "[aggregates CAP-ALERT-MGT-001 counters counters]" || len(report.Findings) != 0 {
		t.Errorf("check -repair on a table from before the counters repaired %v, left %v", findings(report.Repaired), findings(report.Findings))
	}
	wantCounts(t, env.Store, "after check -repair initialised the counters")
}

// RepairCounters is safe while the catalogue is written: repairs that run beside writers and
// beside each other leave the counters equal to a recount (each correction is added once).
func TestRepairCountersBesideWriters(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	for _, key := range counterShardKeys(t, env) { // start from no counters
		if _, err := env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(env.Table), Key: key}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				id := fmt.Sprintf("CAP-REP-%d-%d", w, i)
				if _, err := env.Store.CreateCapability(ctx, &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "repairs",
					Status: catalog.CapabilityPlanning, Priority: catalog.PriorityHigh, Owner: fmt.Sprintf("Owner %d", i%4)}, dynamo.Idempotency{}); err != nil {
					t.Errorf("create %s: %v", id, err)
				}
			}
		}()
	}
	errs := make(chan error, 3)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := env.Store.RepairCounters(ctx)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("RepairCounters beside writers: %v", err)
		}
	}
	wantCounts(t, env.Store, "after repairs beside writers")
}

// Owners are listed in name order from the counters, one BatchGetItem a page, with cursors
// bound to the listing; owner(name) folds the name.
func TestOwnersPages(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	want := bruteCounts(t, env.Store)
	var names []string
	after := ""
	for page := 0; ; page++ {
		env.Counter.Reset()
		p, total, err := env.Store.Owners(ctx, 2, after)
		if err != nil {
			t.Fatal(err)
		}
		wantOps(t, env, "Owners page", map[string]int{"BatchGetItem": 1})
		if total != len(want.Owners()) {
			t.Errorf("total = %d, want %d", total, len(want.Owners()))
		}
		for i, o := range p.Items {
			names = append(names, o.Name)
			if o.Capabilities != want.OwnerCapabilities[o.Name] || o.Components != want.OwnerComponents[o.Name] {
				t.Errorf("owner %q = %+v, recount %d capabilities, %d components", o.Name, o, want.OwnerCapabilities[o.Name], want.OwnerComponents[o.Name])
			}
			after = p.Cursors[i]
		}
		if !p.HasNext {
			if len(p.Items) == 0 && page > 0 {
				t.Error("the last page is empty although the one before said more followed")
			}
			break
		}
		if len(p.Items) != 2 {
			t.Errorf("page %d has %d owners while more follow", page, len(p.Items))
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(want.Owners()) {
		t.Errorf("owners = %q\nwant     %q", names, want.Owners())
	}
	if len(names) < 3 {
		t.Fatalf("the sample has %d owners: the test pages through too few", len(names))
	}
	if _, _, err := env.Store.Owners(ctx, 2, "bogus"); !isValidation(err, "after") {
		t.Errorf("a forged cursor = %v, want BAD_USER_INPUT on after", err)
	}
	if _, _, err := env.Store.Owners(ctx, 0, ""); !isValidation(err, "first") {
		t.Errorf("first: 0 = %v, want BAD_USER_INPUT on first", err)
	}
	o, err := env.Store.Owner(ctx, "  "+strings.ToUpper(names[0])+"!")
	if err != nil || o == nil || o.Name != names[0] {
		t.Errorf("Owner(upper-cased %q) = %+v, %v", names[0], o, err)
	}
	if o, err := env.Store.Owner(ctx, "nobody at all"); err != nil || o != nil {
		t.Errorf("Owner(nobody) = %+v, %v, want nil", o, err)
	}
}

// On the embedded default the counts answer from memory while the engine is unchanged, and a
// write through another client of the engine (its port) is seen by the next read.
func TestEmbeddedCountsMemo(t *testing.T) {
	e := newMemoEnv(t)
	ctx := context.Background()
	first, err := e.store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := e.reads.Load()
	if again, err := e.store.Counts(ctx); err != nil || again != first || e.reads.Load() != before {
		t.Errorf("repeated Counts: %d reads, err %v; want 0, from the memo", e.reads.Load()-before, err)
	}
	if _, err := e.other.CreateCapability(ctx, &catalog.Capability{CapabilityID: "CAP-MEMO-CNT", Name: "Memo", BusinessDomain: "memo",
		Status: catalog.CapabilityPlanning, Priority: catalog.PriorityLow}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	before = e.reads.Load()
	got, err := e.store.Counts(ctx)
	if err != nil || got.Capabilities != first.Capabilities+1 || got.ByDomain["memo"] != 1 || e.reads.Load()-before != 1 {
		t.Errorf("after a write through the port: %d capabilities (want %d), %d reads (want 1), %v", got.Capabilities, first.Capabilities+1, e.reads.Load()-before, err)
	}
}

// A bulk load that overwrites capabilities the table holds, and its rerun, leave the counters
// equal to a recount: the load corrects them by what it changed, once.
func TestBulkLoadRecountsCounters(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	before, err := env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bundles := sample.Catalogue(sampleNow)
	for _, b := range bundles {
		// The domain only: a reload that changes a capability's owner or tags leaves its old
		// owner and term cards behind, as it leaves removed components (check -repair removes
		// them; docs/operations.md).
		b.Capability.BusinessDomain = "reloaded"
	}
	for run := range 2 {
		if _, err := env.Store.BulkLoad(ctx, bundles, 4); err != nil {
			t.Fatal(err)
		}
		wantCounts(t, env.Store, fmt.Sprintf("after reload %d", run+1))
	}
	after, err := env.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Capabilities != before.Capabilities || after.ByDomain["reloaded"] != before.Capabilities || len(after.ByDomain) != 1 {
		t.Errorf("after reloading every capability into one domain: %d capabilities, domains %v", after.Capabilities, after.ByDomain)
	}
}

// On a generated catalogue of hundreds of capabilities (varied domains, statuses, priorities,
// owners and teams with accents and shared prefixes, components of many types and health, jobs
// in every status), the counters equal a brute-force recount, the owners page through exactly
// the recount's owners, and each read is one BatchGetItem whatever the size.
func TestCountersOnAGeneratedCatalogue(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(19, 300))
	people := []string{"Équipe Paiements", "equipe paiements", "Équipe Paie", "Platform", "Platform Ops", "Zoë", "zoe", "SRE-EU", "sre eu", "Data"}
	var bundles []*catalog.Bundle
	for i := range 300 {
		id := fmt.Sprintf("CAP-GEN-%03d", i)
		b := &catalog.Bundle{Capability: &catalog.Capability{CapabilityID: id, Name: fmt.Sprintf("Gen %d", i), BusinessDomain: fmt.Sprintf("domain-%d", rng.IntN(12)),
			Status: catalog.CapabilityStatuses[rng.IntN(5)], Priority: catalog.Priorities[rng.IntN(4)], Owner: people[rng.IntN(len(people))]}}
		for j := range rng.IntN(5) {
			comp := &catalog.Component{ComponentID: fmt.Sprintf("gen-%03d-%d", i, j), Name: "c", ComponentType: fmt.Sprintf("type-%d", rng.IntN(9)),
				Order: j + 1, Status: catalog.ComponentActive}
			if rng.IntN(3) > 0 {
				comp.Ownership = &catalog.Ownership{Team: people[rng.IntN(len(people))]}
			}
			if h := rng.IntN(4); h < 3 {
				comp.Health = &catalog.ComponentHealth{Status: catalog.HealthStatuses[h]}
			}
			b.Components = append(b.Components, comp)
		}
		for j := range rng.IntN(3) {
			b.Jobs = append(b.Jobs, &catalog.Job{JobID: fmt.Sprintf("JOB-GEN-%03d-%d", i, j), JobType: catalog.JobTypes[rng.IntN(6)],
				Status: catalog.JobStatuses[rng.IntN(len(catalog.JobStatuses))], StartTime: catalog.NewTimestamp(sampleNow.Add(-time.Duration(j+1) * time.Hour))})
		}
		bundles = append(bundles, b)
	}
	load(t, env, bundles)
	wantCounts(t, env.Store, "generated catalogue")
	want := bruteCounts(t, env.Store)
	var names []string
	after := ""
	for {
		env.Counter.Reset()
		p, total, err := env.Store.Owners(ctx, 7, after)
		if err != nil {
			t.Fatal(err)
		}
		wantOps(t, env, "owners page", map[string]int{"BatchGetItem": 1})
		if total != len(want.Owners()) {
			t.Errorf("total = %d, want %d", total, len(want.Owners()))
		}
		for i, o := range p.Items {
			names = append(names, o.Name)
			after = p.Cursors[i]
		}
		if !p.HasNext {
			break
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(want.Owners()) {
		t.Errorf("owners = %q\nwant     %q", names, want.Owners())
	}
	env.Counter.Reset()
	if _, err := env.Store.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	wantOps(t, env, "Counts", map[string]int{"BatchGetItem": 1})
}

// check warns of a counter shard near DynamoDB's 400 KB item limit, and -repair shrinks it by
// removing the counters that are 0 (a shard keeps a counter that went back to 0 until then).
func TestCheckWarnsOfALargeCounterShard(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	load(t, env, sample.Catalogue(sampleNow))
	shard := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "COUNTERS#03"}, "SK": &types.AttributeValueMemberS{Value: "COUNTER"},
		"EntityType": &types.AttributeValueMemberS{Value: "CounterShard"}, "v": &types.AttributeValueMemberN{Value: "1"}}
	for i := range 3000 {
		shard[fmt.Sprintf("ct#gone-%s-%04d", strings.Repeat("x", 100), i)] = &types.AttributeValueMemberN{Value: "0"}
	}
	if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: shard}); err != nil {
		t.Fatal(err)
	}
	report, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(findings(report.Findings)); got != "[counter-size COUNTERS#03]" {
		t.Fatalf("Check = %s, want the large shard", got)
	}
	report, err = env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) != 0 || fmt.Sprint(findings(report.Repaired)) != "[counter-size COUNTERS#03]" {
		t.Errorf("check -repair left %v, repaired %v", findings(report.Findings), findings(report.Repaired))
	}
	out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(env.Table), Key: map[string]types.AttributeValue{"PK": shard["PK"], "SK": shard["SK"]}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Item) > 10 {
		t.Errorf("the shard still has %d attributes after the repair", len(out.Item))
	}
	wantCounts(t, env.Store, "after compaction")
}

// Two deletes of one capability at once: the first finishes, the capability is created again,
// then the second runs its steps late. It must remove nothing of the new capability (before the
// fix its step 3 removed the new METADATA unconditionally, and its step 2 the new components:
// a capability lost, and counted by the counters still, which the concurrent-writers test saw).
func TestLateDeleteSparesACapabilityCreatedAgain(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	const id = "CAP-TWICE-001"
	if _, err := env.Store.CreateCapability(ctx, newCapability(id), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	marked, err := dynamo.MarkDeleting(ctx, env.Store, id)
	if err != nil {
		t.Fatal(err)
	}
	// The first delete: it sees the marking (its own or the other's) and finishes.
	if err := env.Store.DeleteCapability(ctx, id, 1, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	again := newCapability(id)
	again.Name = "Created Again"
	if _, err := env.Store.CreateCapability(ctx, again, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.AddComponent(ctx, newComponent(id, "twice-api", 1), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	// The second delete, late, with the marking it made before the first finished.
	if err := dynamo.FinishDelete(ctx, env.Store, id, marked); err != nil {
		t.Fatalf("the late delete: %v", err)
	}
	c, err := env.Store.Capability(ctx, id)
	if err != nil || c.Name != "Created Again" || c.Aggregates.TotalComponents != 1 {
		t.Fatalf("the capability created again after a late delete: %+v, %v", c, err)
	}
	part, err := env.Store.ReadRangeConsistent(ctx, id, dynamo.SegComponents)
	if err != nil || len(part.Components) != 1 {
		t.Fatalf("its components after a late delete: %v, %v", part, err)
	}
	if err := env.Store.CheckPartition(ctx, id); err != nil {
		t.Error(err)
	}
	wantCounts(t, env.Store, "after a late delete")
}
