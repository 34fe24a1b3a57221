package dynamo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// commitLog records the Options.OnCommit notices of a store.
type commitLog struct {
	mu      sync.Mutex
	commits []dynamo.Commit
}

func (l *commitLog) add(c dynamo.Commit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.commits = append(l.commits, c)
}

// take returns the notices since the last take.
func (l *commitLog) take() []dynamo.Commit {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.commits
	l.commits = nil
	return out
}

// sameVersion fails unless got carries exactly want's version: WriteSeq, Revision and both
// timestamps to the nanosecond (what the partition cache compares).
func sameVersion(t *testing.T, what string, got, want *catalog.Capability) {
	t.Helper()
	if got.WriteSeq != want.WriteSeq || got.Revision != want.Revision ||
		got.CreatedAt.UnixNano() != want.CreatedAt.UnixNano() || got.UpdatedAt.UnixNano() != want.UpdatedAt.UnixNano() {
		t.Errorf("%s: version (seq %d, rev %d, created %d, updated %d), the read gives (seq %d, rev %d, created %d, updated %d)", what,
			got.WriteSeq, got.Revision, got.CreatedAt.UnixNano(), got.UpdatedAt.UnixNano(),
			want.WriteSeq, want.Revision, want.CreatedAt.UnixNano(), want.UpdatedAt.UnixNano())
	}
}

// OnCommit reports each committed mutation of an existing capability with the version it read
// and the version it wrote, exactly as a later read decodes them (a clock with nanoseconds:
// the timestamps' stored precision must round-trip), and the segments of the partition the
// transaction holds a key of. A creation, an idempotent replay and a lost precondition
// report nothing.
func TestOnCommitReportsVersionsAndTouchedSegments(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	clock := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(1234567891 * time.Nanosecond)
		return clock
	}
	log := &commitLog{}
	env := dynamotest.New(t, dynamotest.Options{Now: now, OnCommit: log.add})
	env.RequireTransactions(t)
	s := env.Store
	if _, err := s.CreateCapability(ctx, newCapability("CAP-HOOK"), dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); len(got) != 0 {
		t.Fatalf("a creation reported %d commits, want none (no version to move from)", len(got))
	}
	idem, _ := dynamo.NewIdempotency("hook-token-1", "addComponent", "c1")
	steps := []struct {
		name  string
		write func() error
		want  dynamo.Segment
	}{
		{"updateCapability", func() error {
			_, err := s.UpdateCapability(ctx, "CAP-HOOK", 1, func(c *catalog.Capability) error { c.Description = "d"; return nil }, dynamo.Idempotency{})
			return err
		}, 0},
		{"addComponent with a token", func() error { _, err := s.AddComponent(ctx, newComponent("CAP-HOOK", "c1", 1), idem); return err }, dynamo.SegComponents},
		{"addComponent", func() error {
			_, err := s.AddComponent(ctx, newComponent("CAP-HOOK", "c2", 2), dynamo.Idempotency{})
			return err
		}, dynamo.SegComponents},
		{"addDependency", func() error {
			_, err := s.AddDependency(ctx, &catalog.Dependency{CapabilityID: "CAP-HOOK", SourceComponentID: "c1", TargetComponentID: "c2", Criticality: "high", DependencyType: catalog.DependencyRuntime}, dynamo.Idempotency{})
			return err
		}, dynamo.SegDependencies},
		{"createRule", func() error {
			_, err := s.CreateRule(ctx, &catalog.Rule{CapabilityID: "CAP-HOOK", RuleID: "r1", Name: "r", RuleType: catalog.RuleBusiness, Order: 1, Status: catalog.RuleActive, Priority: catalog.PriorityHigh}, dynamo.Idempotency{})
			return err
		}, dynamo.SegRules},
		{"removeDependency", func() error { return s.RemoveDependency(ctx, "CAP-HOOK", "c1", "c2", dynamo.Idempotency{}) }, dynamo.SegDependencies},
	}
	for _, st := range steps {
		before, err := s.Capability(ctx, "CAP-HOOK")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.write(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		after, err := s.Capability(ctx, "CAP-HOOK")
		if err != nil {
			t.Fatal(err)
		}
		got := log.take()
		if len(got) != 1 {
			t.Fatalf("%s: %d commits reported, want 1", st.name, len(got))
		}
		c := got[0]
		if c.Table != env.Table || c.CapabilityID != "CAP-HOOK" {
			t.Errorf("%s: commit of %s/%s", st.name, c.Table, c.CapabilityID)
		}
		sameVersion(t, st.name+": From", c.From, before)
		sameVersion(t, st.name+": To", c.To, after)
		if c.Touched != st.want {
			t.Errorf("%s: touched %v, want %v", st.name, c.Touched, st.want)
		}
	}
	// The same request again with its token: answered from the token, nothing committed.
	if _, err := s.AddComponent(ctx, newComponent("CAP-HOOK", "c1", 1), idem); err != nil {
		t.Fatal(err)
	}
	// A precondition that fails: nothing committed.
	if _, err := s.UpdateCapability(ctx, "CAP-HOOK", 1, func(c *catalog.Capability) error { c.Description = "x"; return nil }, dynamo.Idempotency{}); err == nil {
		t.Fatal("a stale expectedRevision was accepted")
	}
	if got := log.take(); len(got) != 0 {
		t.Errorf("a replay and a refused write reported %d commits, want none", len(got))
	}
}
