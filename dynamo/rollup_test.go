package dynamo_test

import (
	"bytes"
	"context"
	"net/http"
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
)

// The largest rollup items still read in one Query per range the budgets name: 169 hour items
// (7 days of HOUR) and 91 day items (90 days of DAY) each fit in one 1 MB page; a longer range
// pages on and still returns every bucket.
func TestMetricRollupsLargestItemsFitOnePage(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	last := sampleNow.Add(-time.Minute)
	if err := dynamo.WriteLargestRollups(ctx, env.Store, "CAP-RU-BIG", "big-1", last, 31*24, 731); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		daily    bool
		span     time.Duration
		buckets  int
		requests int
	}{
		// 7 days and 90 days from a time within a bucket: 169 hour and 91 day buckets.
		{false, 7 * 24 * time.Hour, 169, 1},
		{true, 90 * 24 * time.Hour, 91, 1},
		{false, 31*24*time.Hour - time.Hour, 31 * 24, -1},
		{true, 730 * 24 * time.Hour, 731, -1},
	} {
		env.Counter.Reset()
		rs, err := env.Store.MetricRollups(ctx, "CAP-RU-BIG", "big-1", catalog.MetricPerformance, c.daily, last.Add(-c.span), last)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != c.buckets {
			t.Errorf("daily %v over %s: %d buckets, want %d", c.daily, c.span, len(rs), c.buckets)
		}
		n := env.Counter.Total()
		if c.requests > 0 && n != c.requests {
			t.Errorf("daily %v over %s: %d requests, want %d (%v)", c.daily, c.span, n, c.requests, env.Counter.Ops())
		}
		if len(rs) > 0 && (rs[0].Count != 60*map[bool]int{false: 1, true: 24}[c.daily] || rs[0].Fields[dynamo.FieldMemory].N != rs[0].Count) {
			t.Errorf("daily %v: first bucket %+v", c.daily, rs[0])
		}
		t.Logf("daily %v over %s: %d requests", c.daily, c.span, n)
	}
}

// check finds a day item whose entry of an hour differs from the hour item's samples.
func TestCheckFindsADamagedRollup(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	b := smallCapabilities(1)[0]
	b.Components = []*catalog.Component{{ComponentID: "ru-x", Name: "ru-x", ComponentType: "api-server", Order: 1, Status: catalog.ComponentActive}}
	load(t, env, []*catalog.Bundle{b})
	capID := b.Capability.CapabilityID
	compID := b.Components[0].ComponentID
	at := sampleNow.Add(-2 * time.Hour)
	m := &catalog.Metric{CapabilityID: capID, ComponentID: compID, MetricType: catalog.MetricPerformance, Timestamp: catalog.NewTimestamp(at), Interval: "1m",
		Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: 99.5}}}
	if _, err := env.Store.RecordMetrics(ctx, []*catalog.Metric{m}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.CheckPartition(ctx, capID); err != nil {
		t.Fatalf("check after recordMetrics: %v", err)
	}
	if err := dynamo.DamageRollupDay(ctx, env.Store, capID, compID, at); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.CheckPartition(ctx, capID); err == nil || !strings.Contains(err.Error(), "ROLLUP#") {
		t.Fatalf("check after damaging the day rollup = %v", err)
	}
}

// rollupComponent bulk-loads a capability with one component for the rollup tests.
func rollupComponent(t *testing.T, env *dynamotest.Env, compID string) (capID string) {
	t.Helper()
	b := smallCapabilities(1)[0]
	b.Components = []*catalog.Component{{ComponentID: compID, Name: compID, ComponentType: "api-server", Order: 1, Status: catalog.ComponentActive}}
	load(t, env, []*catalog.Bundle{b})
	return b.Capability.CapabilityID
}

// availabilitySample is a one-minute PERFORMANCE sample carrying availability only.
func availabilitySample(capID, compID string, at time.Time, v float64) *catalog.Metric {
	return &catalog.Metric{CapabilityID: capID, ComponentID: compID, MetricType: catalog.MetricPerformance, Timestamp: catalog.NewTimestamp(at), Interval: "1m",
		Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: v}}}
}

// tableAvailability reads the availability the table holds for a component's samples of an hour
// (consistent reads of the METRIC# items), by minute.
func tableAvailability(t *testing.T, env *dynamotest.Env, capID, compID string, hour time.Time) map[time.Time]float64 {
	t.Helper()
	ms, _, err := env.Store.MetricsInRange(context.Background(), dynamo.MetricRange{CapabilityID: capID, ComponentID: compID, MetricType: catalog.MetricPerformance,
		From: hour, Before: hour.Add(time.Hour), IncludeExpired: true}, dynamo.MaxMetricRangePage)
	if err != nil {
		t.Fatal(err)
	}
	out := map[time.Time]float64{}
	for _, m := range ms {
		out[m.Timestamp.UTC()] = m.Values.Availability.Value
	}
	return out
}

// Two recordMetrics calls rewriting the same sample with different values, interleaved so that
// A reads the rollups after its sample is written (or, transactional, before it commits) and B
// runs whole in between, leave the table and the rollups agreeing on one value: the sample the
// table holds is the one the hour and day rollups count. (Before #22's exactness fix the samples
// went by BatchWriteItem and the rollups by a later transaction: table B, rollups A.)
func TestMetricRollupsRewriteRaceAgreesWithTheTable(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	capID := rollupComponent(t, env, "ru-race")
	other := dynamo.New(env.Client, dynamo.Options{Table: env.Table, Now: func() time.Time { return sampleNow }})
	at := sampleNow.Add(-2 * time.Hour).Truncate(time.Minute)
	hour := at.Truncate(time.Hour)
	// A sample already there, so that both calls rewrite it.
	if _, err := env.Store.RecordMetrics(ctx, []*catalog.Metric{availabilitySample(capID, "ru-race", at, 90)}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	held, release := make(chan struct{}), make(chan struct{})
	env.Counter.Before = func(op string, _ http.ResponseWriter) bool {
		if op == "BatchGetItem" { // A's read of the rollup items
			first := false
			once.Do(func() { first = true })
			if first {
				close(held)
				<-release
			}
		}
		return false
	}
	done := make(chan error, 1)
	go func() {
		_, err := env.Store.RecordMetrics(ctx, []*catalog.Metric{availabilitySample(capID, "ru-race", at, 91)}, dynamo.Idempotency{})
		done <- err
	}()
	<-held
	if _, err := other.RecordMetrics(ctx, []*catalog.Metric{availabilitySample(capID, "ru-race", at, 92)}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	env.Counter.Before = nil
	table := tableAvailability(t, env, capID, "ru-race", hour)
	if len(table) != 1 {
		t.Fatalf("table samples = %v", table)
	}
	for _, daily := range []bool{false, true} {
		rs, err := env.Store.MetricRollups(ctx, capID, "ru-race", catalog.MetricPerformance, daily, hour, hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 || rs[0].Count != 1 || rs[0].Fields[dynamo.FieldAvailability].Last != table[at] {
			t.Errorf("daily %v: rollups %+v, the table holds %v", daily, rs, table[at])
		}
	}
	if err := env.Store.CheckPartition(ctx, capID); err != nil {
		t.Errorf("check: %v", err)
	}
}

// A call of 100 samples filling one hour (60) and most of the next (40) of one day takes two
// transactions (the samples, hour and day items of both hours are 103 actions), the day item
// split over them; the rollups count each sample once and check finds nothing.
func TestMetricRollupsSplitTransactions(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	capID := rollupComponent(t, env, "ru-split")
	h1 := sampleNow.Add(-2 * time.Hour).Truncate(time.Hour)
	var ms []*catalog.Metric
	for i := range 100 {
		ms = append(ms, availabilitySample(capID, "ru-split", h1.Add(time.Duration(i)*time.Minute), 90+float64(i)/10))
	}
	env.Counter.Reset()
	if _, err := env.Store.RecordMetrics(ctx, ms, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	ops := env.Counter.Ops()
	// Two for the samples and rollups, one for the health.
	if ops["TransactWriteItems"] != 3 || ops["BatchWriteItem"] != 0 {
		t.Errorf("recordMetrics of 100 samples over two hours: %v", ops)
	}
	t.Logf("recordMetrics of 100 samples over two hours: %d requests %v", env.Counter.Total(), ops)
	want := dynamo.AggregateMetrics(ms, 24*time.Hour)
	rs, err := env.Store.MetricRollups(ctx, capID, "ru-split", catalog.MetricPerformance, true, h1, h1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Count != 100 || rs[0].Fields != want[0].Fields {
		t.Errorf("day rollup %+v, want %+v", rs, want)
	}
	hours, err := env.Store.MetricRollups(ctx, capID, "ru-split", catalog.MetricPerformance, false, h1, h1.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(hours) != 2 || hours[0].Count != 60 || hours[1].Count != 40 {
		t.Errorf("hour rollups %+v", hours)
	}
	if err := env.Store.CheckPartition(ctx, capID); err != nil {
		t.Errorf("check: %v", err)
	}
}

// rollupItems returns the Data of every rollup item of env's table, by PK and SK.
func rollupItems(t *testing.T, env *dynamotest.Env) map[string]types.AttributeValue {
	t.Helper()
	out := map[string]types.AttributeValue{}
	in := &dynamodb.ScanInput{TableName: aws.String(env.Table)}
	for {
		page, err := env.Client.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk, _ := it["PK"].(*types.AttributeValueMemberS)
			sk, _ := it["SK"].(*types.AttributeValueMemberS)
			if pk != nil && sk != nil && strings.HasPrefix(sk.Value, "ROLLUP#") {
				out[pk.Value+" "+sk.Value] = it["Data"]
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// An import rebuilds the rollups of the samples it imports: after export -> import, every hour
// and day item the source held (the sample catalogue's, built by BulkLoad, and those recordMetrics
// kept over rewritten samples) is in the new table with the same Data, and check finds nothing.
func TestImportRebuildsRollups(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	src.RequireTransactions(t)
	loadSample(t, src)
	capID := "CAP-ALERT-MGT-001"
	comps, err := src.Store.MetricComponentIDs(ctx, capID)
	if err != nil || len(comps) == 0 {
		t.Fatalf("components with samples: %v, %v", comps, err)
	}
	at := sampleNow.Add(-26 * time.Hour).Truncate(time.Minute)
	for i, v := range []float64{97, 98.5, 96} { // the same sample three times, then others
		ms := []*catalog.Metric{availabilitySample(capID, comps[0], at, v), availabilitySample(capID, comps[0], at.Add(time.Duration(i+1)*time.Minute), v)}
		if _, err := src.Store.RecordMetrics(ctx, ms, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	want := rollupItems(t, src)
	if len(want) < 10 {
		t.Fatalf("the source holds %d rollup items", len(want))
	}
	dst := newEnv(t)
	report, err := dst.Store.Import(ctx, bytes.NewReader(exportOf(t, src)), 4)
	if err != nil || len(report.Problems) != 0 {
		t.Fatalf("Import = %+v, %v", report, err)
	}
	got := rollupItems(t, dst)
	if len(got) != len(want) {
		t.Errorf("%d rollup items after the import, want %d", len(got), len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: imported %v, want %v", k, g, w)
		}
	}
	for _, daily := range []bool{false, true} {
		a, err := src.Store.MetricRollups(ctx, capID, comps[0], catalog.MetricPerformance, daily, sampleNow.Add(-30*24*time.Hour), sampleNow)
		if err != nil {
			t.Fatal(err)
		}
		b, err := dst.Store.MetricRollups(ctx, capID, comps[0], catalog.MetricPerformance, daily, sampleNow.Add(-30*24*time.Hour), sampleNow)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == 0 || !reflect.DeepEqual(a, b) {
			t.Errorf("daily %v: %d rollups imported, want the source's %d", daily, len(b), len(a))
		}
	}
	if c, err := dst.Store.Check(ctx, false); err != nil || len(c.Findings) != 0 {
		t.Errorf("Check after import = %+v, %v", c, err)
	}
}

// rollupFindings returns check's findings of kind rollups.
func rollupFindings(r *dynamo.CheckReport) []dynamo.Finding {
	var out []dynamo.Finding
	for _, f := range r.Findings {
		if f.Kind == dynamo.FindingRollups {
			out = append(out, f)
		}
	}
	return out
}

// check compares the hour items with the samples in the table: a sample changed behind the
// rollups' back and an hour item whose entry of a sample was overwritten are findings (and
// CheckPartition errors), and check -repair rebuilds those hours and their day entries from the
// samples, after which the rollups aggregate the samples as they are.
func TestCheckRepairsRollupsFromTheSamples(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	capID := rollupComponent(t, env, "ru-fix")
	h1 := sampleNow.Add(-3 * time.Hour).Truncate(time.Hour)
	h2 := h1.Add(time.Hour)
	var ms []*catalog.Metric
	for i := range 5 {
		ms = append(ms, availabilitySample(capID, "ru-fix", h1.Add(time.Duration(i)*time.Minute), 95+float64(i)))
	}
	ms = append(ms, availabilitySample(capID, "ru-fix", h2, 99.5))
	if _, err := env.Store.RecordMetrics(ctx, ms, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	r, err := env.Store.Check(ctx, false)
	if err != nil || len(rollupFindings(r)) != 0 {
		t.Fatalf("check before damage: %v %v", rollupFindings(r), err)
	}
	if err := dynamo.DamageSample(ctx, env.Store, capID, "ru-fix", h1.Add(2*time.Minute), 50); err != nil {
		t.Fatal(err)
	}
	if err := dynamo.DamageRollupHour(ctx, env.Store, capID, "ru-fix", h2, map[int]float64{0: 1}); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.CheckPartition(ctx, capID); err == nil || !strings.Contains(err.Error(), "differs from the sample") {
		t.Errorf("CheckPartition after the damage = %v", err)
	}
	r, err = env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if fs := rollupFindings(r); len(fs) != 1 || fs[0].Subject != capID || !fs[0].Repairable || !strings.Contains(fs[0].Detail, "2 hours") {
		t.Fatalf("check after the damage: %v", fs)
	}
	r, err = env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if fs := rollupFindings(r); len(fs) != 0 || len(r.Repaired) == 0 {
		t.Fatalf("check -repair: left %v, repaired %v", fs, r.Repaired)
	}
	if err := env.Store.CheckPartition(ctx, capID); err != nil {
		t.Errorf("CheckPartition after the repair = %v", err)
	}
	ms[2] = availabilitySample(capID, "ru-fix", h1.Add(2*time.Minute), 50)
	for _, daily := range []bool{false, true} {
		width := map[bool]time.Duration{false: time.Hour, true: 24 * time.Hour}[daily]
		got, err := env.Store.MetricRollups(ctx, capID, "ru-fix", catalog.MetricPerformance, daily, h1, h2)
		if err != nil {
			t.Fatal(err)
		}
		want := dynamo.AggregateMetrics(ms, width)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("daily %v after the repair: %+v, want %+v", daily, got, want)
		}
	}
}
