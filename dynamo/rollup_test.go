package dynamo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
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
