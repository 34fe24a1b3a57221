package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/sample"
)

func TestStatsMatchCounter(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()

	wctx, wstats := dynamo.WithStats(ctx)
	bundles := sample.Catalogue(sampleNow)
	if _, err := env.Store.BulkLoad(wctx, bundles, 4); err != nil {
		t.Fatalf("BulkLoad(sample) = %v", err)
	}
	w := wstats.Snapshot()
	if w.Requests != env.Counter.Total() || !mapsEqual(w.Operations, env.Counter.Ops()) {
		t.Errorf("WithStats: BulkLoad(sample) counted %d %v, counter saw %d %v", w.Requests, w.Operations, env.Counter.Total(), env.Counter.Ops())
	}
	if w.WriteCapacityUnits < float64(itemCount(bundles)) {
		t.Errorf("WithStats: BulkLoad(sample) write capacity = %v, want at least one unit an item (%d)", w.WriteCapacityUnits, itemCount(bundles))
	}
	// Its only reads recount the counters: a Scan of the table and the shards' BatchGetItem (read
	// capacity then, where the backend reports it: dynalite does, the in-process ones do not).
	if w.Operations["Query"] != 0 || w.Operations["GetItem"] != 0 || w.Operations["Scan"] == 0 || w.Operations["BatchGetItem"] == 0 {
		t.Errorf("WithStats: BulkLoad(sample) operations = %v, want reads by Scan and BatchGetItem only (the counters' recount)", w.Operations)
	}

	env.Counter.Reset()
	rctx, rstats := dynamo.WithStats(ctx)
	from := sampleNow.Add(-time.Hour)
	reads := []struct {
		call string
		err  error
	}{
		{"Capability", second(env.Store.Capability(rctx, alertID))},
		{"Capability(missing)", func() error {
			if _, err := env.Store.Capability(rctx, "CAP-NOPE-001"); !errors.Is(err, dynamo.ErrNotFound) {
				return fmt.Errorf("want ErrNotFound, got %v", err)
			}
			return nil
		}()},
		{"CapabilitiesByID", second(env.Store.CapabilitiesByID(rctx, []string{alertID, "CAP-FRAUD-DET-001"}))},
		{"ReadPartition", second(env.Store.ReadPartition(rctx, alertID, dynamo.SegComponents|dynamo.SegDependencies|dynamo.SegRules))},
		{"Capabilities", second(env.Store.Capabilities(rctx, "", 10, ""))},
		{"Jobs", second(env.Store.Jobs(rctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 2, ""))},
		{"Metrics", second(env.Store.Metrics(rctx, alertID, dynamo.MetricFilter{From: &from}, 100, ""))},
		{"ComponentMetrics", second(env.Store.ComponentMetrics(rctx, dynamo.MetricFilter{ComponentID: "api-server-alert-001"}, 10, ""))},
		{"JobByID", second(env.Store.JobByID(rctx, "JOB-DEPLOY-456"))},
	}
	for _, r := range reads {
		if r.err != nil {
			t.Fatalf("%s = %v", r.call, r.err)
		}
	}
	r := rstats.Snapshot()
	if r.Requests != env.Counter.Total() || !mapsEqual(r.Operations, env.Counter.Ops()) {
		t.Errorf("WithStats: reads counted %d %v, counter saw %d %v", r.Requests, r.Operations, env.Counter.Total(), env.Counter.Ops())
	}
	if r.Requests < len(reads) {
		t.Errorf("WithStats: reads counted %d requests, want at least %d", r.Requests, len(reads))
	}
	if r.ReadCapacityUnits <= 0 || r.WriteCapacityUnits != 0 {
		t.Errorf("WithStats: reads used %v RCU and %v WCU, want RCU > 0 and no WCU", r.ReadCapacityUnits, r.WriteCapacityUnits)
	}
	if got := r.OperationNames(); !slices.IsSorted(got) || len(got) != len(r.Operations) {
		t.Errorf("StatsSnapshot.OperationNames() = %v, want the sorted keys of %v", got, r.Operations)
	}
	if w.Requests == 0 || dynamo.StatsFrom(ctx) != nil || dynamo.StatsFrom(rctx) != rstats {
		t.Errorf("StatsFrom: want nil for a plain context and the Stats of WithStats")
	}
	t.Logf("backend external=%v: BulkLoad %+v; reads %+v", env.External, w, r)
}
