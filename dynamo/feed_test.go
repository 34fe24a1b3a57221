package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// The hub's reads: ChangeBells reads each day bucket its range touches (two Queries across
// midnight UTC, one within a day), keys only; ChangesAfterPos continues a capability after a
// position with one consistent Query; LatestChanges reads a capability backwards to a time.
func TestFeedReads(t *testing.T) {
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	now := day.Add(-2 * time.Second) // 23:59:58 the day before
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return now }})
	env.RequireTransactions(t)
	ctx := context.Background()
	s := env.Store
	if _, err := s.CreateCapability(ctx, &catalog.Capability{CapabilityID: "CAP-F", Name: "F", BusinessDomain: "testing", Priority: catalog.PriorityHigh, Status: catalog.CapabilityPlanning}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	now = day.Add(time.Second) // 00:00:01
	for i := range 3 {
		if _, err := s.UpdateCapability(ctx, "CAP-F", i+1, func(c *catalog.Capability) error { c.Owner = string(rune('a' + i)); return nil }, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}

	env.Counter.Reset()
	bells, err := s.ChangeBells(ctx, day.Add(-5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n := env.Counter.Total(); n != 2 {
		t.Errorf("ChangeBells across midnight: %d requests, want 2", n)
	}
	if len(bells) != 4 {
		t.Fatalf("ChangeBells = %v, want 4", bells)
	}
	env.Counter.Reset()
	if within, err := s.ChangeBells(ctx, day); err != nil || len(within) != 3 || env.Counter.Total() != 1 {
		t.Errorf("ChangeBells within a day: %d bells, %d requests, %v; want 3, 1", len(within), env.Counter.Total(), err)
	}

	env.Counter.Reset()
	after, more, err := s.ChangesAfterPos(ctx, "CAP-F", bells[1].Pos)
	if err != nil || more || len(after) != 2 || env.Counter.Total() != 1 {
		t.Fatalf("ChangesAfterPos: %d changes, more %v, %d requests, %v; want 2, false, 1", len(after), more, env.Counter.Total(), err)
	}
	if after[0].Pos != bells[2].Pos || after[1].Pos != bells[3].Pos || after[0].Order >= after[1].Order {
		t.Errorf("ChangesAfterPos positions %q %q, want %q %q in order", after[0].Pos, after[1].Pos, bells[2].Pos, bells[3].Pos)
	}
	for _, c := range after {
		capID, pos, order, err := s.FeedPosition(c.Record)
		if err != nil || capID != "CAP-F" || pos != c.Pos || order != c.Order {
			t.Errorf("FeedPosition(%s) = %q %q %q %v, want CAP-F %q %q", c.Record.ID, capID, pos, order, err, c.Pos, c.Order)
		}
	}

	env.Counter.Reset()
	latest, err := s.LatestChanges(ctx, "CAP-F", day)
	if err != nil || len(latest) != 3 || env.Counter.Total() != 1 || latest[0].Pos != bells[1].Pos || latest[2].Pos != bells[3].Pos {
		t.Errorf("LatestChanges since midnight: %d changes, %d requests, %v; want the 3 of today, oldest first, in 1", len(latest), env.Counter.Total(), err)
	}
	if _, _, err := s.ChangesAfterPos(ctx, "CAP-F", "METADATA"); err == nil {
		t.Error("ChangesAfterPos accepted a position that is no change's")
	}
}
