package dynamo_test

import (
	"context"
	"testing"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/sample"
)

func TestBulkLoadWritesEveryItem(t *testing.T) {
	env := newEnv(t)
	bundles := sample.Catalogue(sampleNow)
	n, err := env.Store.BulkLoad(context.Background(), bundles, 4)
	if err != nil {
		t.Fatalf("BulkLoad(sample) = %v", err)
	}
	want := itemCount(bundles)
	if n != want {
		t.Errorf("BulkLoad(sample) = %d, want %d", n, want)
	}
	// 25 items a BatchWriteItem, the children first, then every METADATA with its two index
	// items; then the counters' recount and correction.
	caps := 3 * len(bundles)
	wantBulkLoadOps(t, env, "BulkLoad(sample)", (want-caps+24)/25+(caps+24)/25, true)
	if got := len(scanAll(t, env)); got != want {
		t.Errorf("Scan after BulkLoad(sample) = %d items, want %d", got, want)
	}

	// Loading again overwrites: same items, no duplicates.
	if _, err := env.Store.BulkLoad(context.Background(), sample.Catalogue(sampleNow), 2); err != nil {
		t.Fatalf("BulkLoad(sample) again = %v", err)
	}
	if got := len(scanAll(t, env)); got != want {
		t.Errorf("Scan after a second BulkLoad(sample) = %d items, want %d", got, want)
	}
}

func TestBulkLoadRejectsBadIDs(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name   string
		bundle *catalog.Bundle
	}{
		{"hash in capability ID", &catalog.Bundle{Capability: &catalog.Capability{CapabilityID: "CAP#1", Name: "x", BusinessDomain: "d"}}},
		{"empty capability ID", &catalog.Bundle{Capability: &catalog.Capability{Name: "x", BusinessDomain: "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env.Counter.Reset()
			n, err := env.Store.BulkLoad(context.Background(), []*catalog.Bundle{tt.bundle}, 1)
			if !isValidation(err, "") {
				t.Errorf("BulkLoad(%s) = %d, %v, want a *catalog.ValidationError", tt.bundle.Capability.CapabilityID, n, err)
			}
			if got := env.Counter.Total(); got != 0 {
				t.Errorf("BulkLoad(%s) sent %d requests, want 0", tt.bundle.Capability.CapabilityID, got)
			}
		})
	}
}

// BulkWrite writes what BulkLoad writes without the counters' recount (no Scan, no counter
// write): the counters do not count it until one RepairCounters, after which they equal what
// BulkLoad leaves.
func TestBulkWriteThenOneRecount(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	bundles := sample.Catalogue(sampleNow)
	half := len(bundles) / 2
	n := 0
	for _, group := range [][]*catalog.Bundle{bundles[:half], bundles[half:]} {
		env.Counter.Reset()
		m, err := env.Store.BulkWrite(ctx, group, 4)
		if err != nil {
			t.Fatal(err)
		}
		n += m
		if ops := env.Counter.Ops(); ops["Scan"] != 0 || ops["UpdateItem"] != 0 || ops["BatchWriteItem"] == 0 {
			t.Errorf("BulkWrite sent %v; want batch writes only", ops)
		}
	}
	if want := itemCount(bundles); n != want {
		t.Errorf("BulkWrite wrote %d items, want %d", n, want)
	}
	if c, err := env.Store.Counts(ctx); err != nil || c.Capabilities != 0 {
		t.Errorf("counters before the recount: %+v, %v; want nothing counted", c, err)
	}
	if _, err := env.Store.RepairCounters(ctx); err != nil {
		t.Fatal(err)
	}
	wantCounts(t, env.Store, "after BulkWrite and one RepairCounters")
	if c, err := env.Store.Counts(ctx); err != nil || c.Capabilities != len(bundles) {
		t.Errorf("counters after the recount: %d capabilities, %v; want %d", c.Capabilities, err, len(bundles))
	}
}
