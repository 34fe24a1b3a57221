package blob_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/capcat/catalogue/blob"
)

func TestMetricsKey(t *testing.T) {
	tests := []struct {
		hour time.Time
		want string
	}{
		{time.Date(2025, 11, 22, 9, 59, 0, 0, time.UTC), "capabilities/CAP-ALERT-MGT-001/components/api-server-alert-001/2025/11/22/metrics-09.json.gz"},
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600)), "capabilities/CAP-ALERT-MGT-001/components/api-server-alert-001/2025/12/31/metrics-23.json.gz"},
	}
	for _, tt := range tests {
		if got := blob.MetricsKey("CAP-ALERT-MGT-001", "api-server-alert-001", tt.hour.Truncate(time.Hour)); got != tt.want {
			t.Errorf("MetricsKey(%v) = %q, want %q", tt.hour, got, tt.want)
		}
	}
}

func TestStatsCountRequestsAndBytes(t *testing.T) {
	e := newEnv(t)
	ctx, stats := blob.WithStats(context.Background())
	body := bytes.Repeat([]byte("x"), 1000)
	if err := e.store.PutArtifact(ctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "logs/big.log", "", body); err != nil {
		t.Fatalf("PutArtifact() = %v", err)
	}
	got, ct, err := e.store.GetArtifact(ctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "logs/big.log")
	if err != nil || !bytes.Equal(got, body) || ct != "text/plain; charset=utf-8" {
		t.Fatalf("GetArtifact() = %d bytes, %q, %v", len(got), ct, err)
	}
	s := stats.Snapshot()
	if s.Requests != 2 || s.Operations["PutObject"] != 1 || s.Operations["GetObject"] != 1 || s.Bytes < 2000 || s.Bytes > 2100 {
		t.Errorf("WithStats after one PutObject and one GetObject of 1000 bytes = %+v", s)
	}
	if names := s.OperationNames(); !slices.Equal(names, []string{"GetObject", "PutObject"}) {
		t.Errorf("OperationNames() = %v", names)
	}
	if _, _, err := e.store.GetArtifact(context.Background(), "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "logs/none.log"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("GetArtifact(logs/none.log) = %v, want an error wrapping ErrNotFound", err)
	}
	if after := stats.Snapshot(); after.Requests != 2 {
		t.Errorf("a request without the Stats context was counted: %+v", after)
	}
}
