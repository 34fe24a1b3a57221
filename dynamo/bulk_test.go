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
	// 25 items a BatchWriteItem, then the counters' recount and correction.
	// Two passes: the children, then the capabilities' METADATA and index items (3 each).
	heads := 3 * len(bundles)
	wantBulkLoadOps(t, env, "BulkLoad(sample)", (want-heads+24)/25+(heads+24)/25, true)
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
