package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/internal/memdyn"
	"github.com/capcat/catalogue/sample"
)

// flaky returns an EmulateUnprocessedItems predicate that leaves a sub-request unprocessed the
// first `times` times its key (PK, SK) is seen, for the sub-requests pick selects, and the
// number of sub-requests it left unprocessed.
func flaky(times int, pick func(n int, raw dynamotest.Item) bool) (func(int, dynamotest.Item) bool, func() int) {
	var mu sync.Mutex
	seen := map[string]int{}
	left := 0
	match := func(n int, raw dynamotest.Item) bool {
		pk, sk := itemS(raw["PK"]), itemS(raw["SK"])
		mu.Lock()
		defer mu.Unlock()
		k := pk + "\x00" + sk
		if seen[k] >= times || !pick(n, raw) {
			return false
		}
		seen[k]++
		left++
		return true
	}
	return match, func() int { mu.Lock(); defer mu.Unlock(); return left }
}

// hasEmptyList reports whether an attribute of raw, at any depth, is an empty list.
func hasEmptyList(raw dynamotest.Item) bool {
	var walk func(av *memdyn.AttributeValue) bool
	walk = func(av *memdyn.AttributeValue) bool {
		switch {
		case av == nil:
			return false
		case av.L != nil:
			if len(av.L) == 0 {
				return true
			}
			for _, e := range av.L {
				if walk(e) {
					return true
				}
			}
		case av.M != nil:
			for _, e := range av.M {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for _, av := range raw {
		if walk(av) {
			return true
		}
	}
	return false
}

func itemS(av *memdyn.AttributeValue) string {
	if av == nil || av.S == nil {
		return ""
	}
	return *av.S
}

func requireFaults(tb testing.TB, env *dynamotest.Env) {
	tb.Helper()
	env.RequireFaults(tb)
}

func TestLeftoversRetried(t *testing.T) {
	ctx := context.Background()

	t.Run("BulkLoad", func(t *testing.T) {
		env := newEnv(t)
		requireFaults(t, env)
		match, left := flaky(2, func(n int, raw dynamotest.Item) bool {
			// minidyn writes an empty list of an unprocessed item back as {} (its L field is
			// omitempty), and the SDK then re-sends that attribute as invalid JSON. DynamoDB
			// echoes items faithfully; the store drops empty lists before writing today, but
			// should one reach the table, leave that item alone rather than test minidyn.
			return n%3 == 0 && !hasEmptyList(raw)
		})
		env.EmulateUnprocessedItems(match)
		bundles := sample.Catalogue(sampleNow)
		n, err := env.Store.BulkLoad(ctx, bundles, 4)
		if err != nil {
			t.Fatalf("BulkLoad(sample) with leftovers = %v", err)
		}
		want := itemCount(bundles)
		if n != want {
			t.Errorf("BulkLoad(sample) with leftovers = %d, want %d", n, want)
		}
		if left() == 0 {
			t.Fatalf("EmulateUnprocessedItems left nothing unprocessed: the test tests nothing")
		}
		if calls, min := env.Counter.Ops()["BatchWriteItem"], (want+24)/25; calls <= min {
			t.Errorf("BulkLoad(sample) with %d leftovers sent %d BatchWriteItem, want more than %d", left(), calls, min)
		}
		env.EmulateUnprocessedItems(nil)
		if got := len(scanAll(t, env)); got != want {
			t.Errorf("Scan after BulkLoad(sample) with leftovers = %d items, want %d", got, want)
		}
	})

	t.Run("CapabilitiesByID", func(t *testing.T) {
		env := newEnv(t)
		requireFaults(t, env)
		bundles := smallCapabilities(150)
		load(t, env, bundles)
		ids := make([]string, 0, len(bundles)+1)
		for _, b := range bundles {
			ids = append(ids, b.Capability.CapabilityID)
		}
		ids = append(ids, "CAP-NOPE-001")
		match, left := flaky(1, func(n int, _ dynamotest.Item) bool { return n%2 == 1 })
		env.EmulateUnprocessedItems(match)
		got, err := env.Store.CapabilitiesByID(ctx, ids)
		if err != nil {
			t.Fatalf("CapabilitiesByID(%d IDs) with leftovers = %v", len(ids), err)
		}
		want := slices.Concat(ids[:len(ids)-1], []string{"<nil>"})
		if g := keys(got, capabilityID); !slices.Equal(g, want) {
			t.Errorf("CapabilitiesByID(%d IDs) with leftovers = %v, want %v", len(ids), g, want)
		}
		if left() == 0 {
			t.Fatalf("EmulateUnprocessedItems left nothing unprocessed: the test tests nothing")
		}
		if calls := env.Counter.Ops()["BatchGetItem"]; calls <= 2 {
			t.Errorf("CapabilitiesByID(%d IDs) with %d leftovers sent %d BatchGetItem, want more than 2", len(ids), left(), calls)
		}
	})

	t.Run("BulkLoad leftovers that never clear", func(t *testing.T) {
		t.Parallel()
		env := newEnv(t)
		requireFaults(t, env)
		stuck := func(_ int, raw dynamotest.Item) bool {
			return itemS(raw["PK"]) == "CAPABILITY#CAP-FRAUD-DET-001" && itemS(raw["SK"]) == "METADATA"
		}
		env.EmulateUnprocessedItems(stuck)
		n, err := env.Store.BulkLoad(ctx, sample.Catalogue(sampleNow), 4)
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Errorf("BulkLoad(sample) with an item never processed = %d, %v; want an error wrapping ErrUnavailable", n, err)
		}
		if calls, min := env.Counter.Ops()["BatchWriteItem"], (itemCount(sample.Catalogue(sampleNow))+24)/25; calls <= min {
			t.Errorf("BulkLoad(sample) with an item never processed sent %d BatchWriteItem, want retries past %d", calls, min)
		}
	})

	t.Run("CapabilitiesByID leftovers that never clear", func(t *testing.T) {
		t.Parallel()
		env := newEnv(t)
		requireFaults(t, env)
		loadSample(t, env)
		env.EmulateUnprocessedItems(func(_ int, raw dynamotest.Item) bool {
			return itemS(raw["PK"]) == "CAPABILITY#"+alertID
		})
		ids := []string{"CAP-FRAUD-DET-001", alertID}
		got, err := env.Store.CapabilitiesByID(ctx, ids)
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Errorf("CapabilitiesByID(%v) with a key never processed = %v, %v; want an error wrapping ErrUnavailable", ids, got, err)
		}
		if calls := env.Counter.Ops()["BatchGetItem"]; calls < 2 {
			t.Errorf("CapabilitiesByID(%v) with a key never processed sent %d BatchGetItem, want retries", ids, calls)
		}
	})
}

// throttle makes the counter answer the first n requests of operation op with DynamoDB's
// ProvisionedThroughputExceededException, then pass requests through. It returns how many it
// answered.
func throttle(env *dynamotest.Env, op string, n int) func() int {
	var mu sync.Mutex
	done := 0
	env.Counter.Before = func(o string, w http.ResponseWriter) bool {
		if o != op {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if n >= 0 && done >= n {
			return false
		}
		done++
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"throttled"}`))
		return true
	}
	// Reset takes the counter's lock after Before is set: requests served later see it.
	env.Counter.Reset()
	return func() int { mu.Lock(); defer mu.Unlock(); return done }
}

func TestThrottlingRetried(t *testing.T) {
	ctx := context.Background()

	t.Run("BatchWriteItem", func(t *testing.T) {
		env := newEnv(t)
		throttled := throttle(env, "BatchWriteItem", 2)
		bundles := smallCapabilities(30)
		sctx, stats := dynamo.WithStats(ctx)
		n, err := env.Store.BulkLoad(sctx, bundles, 2)
		if err != nil {
			t.Fatalf("BulkLoad(30 capabilities) throttled twice = %v", err)
		}
		if want := itemCount(bundles); n != want {
			t.Errorf("BulkLoad(30 capabilities) throttled twice = %d, want %d", n, want)
		}
		if got := throttled(); got != 2 {
			t.Errorf("throttled %d BatchWriteItem requests, want 2", got)
		}
		want := (itemCount(bundles)+24)/25 + 2
		wantBulkLoadOps(t, env, "BulkLoad(30 capabilities) throttled twice", want, true)
		if got := stats.Snapshot().Operations["BatchWriteItem"]; got != want {
			t.Errorf("WithStats: BulkLoad(30 capabilities) throttled twice counted %d BatchWriteItem, want %d", got, want)
		}
		env.Counter.Before = nil
		if got := len(scanAll(t, env)); got != itemCount(bundles) {
			t.Errorf("Scan after throttled BulkLoad = %d items, want %d", got, itemCount(bundles))
		}
	})

	t.Run("Query", func(t *testing.T) {
		env := newEnv(t)
		loadSample(t, env)
		throttled := throttle(env, "Query", 2)
		p, err := env.Store.ReadPartition(ctx, alertID, dynamo.SegComponents)
		if err != nil {
			t.Fatalf("ReadPartition(%q) throttled twice = %v", alertID, err)
		}
		if len(p.Components) != 4 {
			t.Errorf("ReadPartition(%q) throttled twice = %d components, want 4", alertID, len(p.Components))
		}
		if got := throttled(); got != 2 {
			t.Errorf("throttled %d Query requests, want 2", got)
		}
		wantOps(t, env, fmt.Sprintf("ReadPartition(%q) throttled twice", alertID), map[string]int{"Query": 3})
	})

	t.Run("throttled past the retries", func(t *testing.T) {
		env := newEnv(t)
		loadSample(t, env)
		throttle(env, "Query", -1)
		_, err := env.Store.ReadPartition(ctx, alertID, dynamo.SegComponents)
		if !errors.Is(err, dynamo.ErrUnavailable) {
			t.Errorf("ReadPartition(%q) always throttled = %v, want an error wrapping ErrUnavailable", alertID, err)
		}
		if got := env.Counter.Ops()["Query"]; got < 2 {
			t.Errorf("ReadPartition(%q) always throttled sent %d Query, want the SDK's retries", alertID, got)
		}
	})
}

// ---------------------------------------------------------------------------------------------
// Stats, bootstrap.
