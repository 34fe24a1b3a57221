package dynamo_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// The catalogue-wide feed walks the day buckets of GSI1 from `since`, one Query each, empty
// days included; pages of any size join without a gap or a duplicate across buckets; a change
// ID continues it; entities filter it; every change has its TTL (at + retention).
func TestChangesAcrossBuckets(t *testing.T) {
	day := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	now := day.Add(22 * time.Hour)
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return now }})
	env.RequireTransactions(t)
	ctx := context.Background()
	s := env.Store
	create := func(id string) {
		t.Helper()
		if _, err := s.CreateCapability(ctx, &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "testing", Priority: catalog.PriorityHigh, Status: catalog.CapabilityPlanning}, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	create("CAP-A") // day 0, 22:00
	now = day.Add(25 * time.Hour)
	create("CAP-B") // day 1, 01:00
	now = day.Add(3*24*time.Hour + 10*time.Hour)
	if _, err := s.UpdateCapability(ctx, "CAP-A", 1, func(c *catalog.Capability) error { c.Owner = "o"; return nil }, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	now = day.Add(3*24*time.Hour + 11*time.Hour) // day 3: day 2 has no change

	want := []string{"CAP-A capability created", "CAP-B capability created", "CAP-A capability updated"}
	line := func(r *catalog.ChangeRecord) string {
		return r.CapabilityID + " " + string(r.Entity) + " " + string(r.Action)
	}
	for _, first := range []int{100, 1, 2} {
		var got []string
		after := ""
		for range 10 {
			env.Counter.Reset()
			p, err := s.Changes(ctx, dynamo.ChangeFilter{Since: day}, first, after)
			if err != nil {
				t.Fatal(err)
			}
			if first == 100 && env.Counter.Total() != 4 {
				t.Errorf("a page over days 0..3 took %d requests, want 4 (one Query a day)", env.Counter.Total())
			}
			for _, r := range p.Items {
				got = append(got, line(r))
			}
			if !p.HasNext {
				break
			}
			after = p.Cursors[len(p.Cursors)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("first %d: feed = %q, want %q", first, got, want)
		}
	}

	// since within day 1: from CAP-B on; a change ID continues after it.
	p, err := s.Changes(ctx, dynamo.ChangeFilter{Since: day.Add(24*time.Hour + 30*time.Minute)}, 10, "")
	if err != nil || len(p.Items) != 2 || line(p.Items[0]) != want[1] {
		t.Fatalf("since day 1 = %v, %v", p, err)
	}
	p, err = s.Changes(ctx, dynamo.ChangeFilter{}, 10, p.Items[0].ID)
	if err != nil || len(p.Items) != 1 || line(p.Items[0]) != want[2] {
		t.Fatalf("after CAP-B's change = %v, %v", p, err)
	}
	// A filter on entities.
	p, err = s.Changes(ctx, dynamo.ChangeFilter{Since: day, Entities: []catalog.ChangeEntity{catalog.ChangeRule}}, 10, "")
	if err != nil || len(p.Items) != 0 || p.HasNext || p.End == "" {
		t.Fatalf("rule changes = %+v, %v; want none, and a cursor to poll with", p, err)
	}

	// Every change expires DefaultChangeRetention after it was made.
	for sk, it := range partitionItems(t, env, "CAPABILITY#CAP-A") {
		if !strings.HasPrefix(sk, "CHANGE#") {
			continue
		}
		at, err := time.Parse(catalog.TimeLayout, it["CreatedAt"].(*types.AttributeValueMemberS).Value)
		if err != nil {
			t.Fatal(err)
		}
		ttl, _ := strconv.ParseInt(it["TTL"].(*types.AttributeValueMemberN).Value, 10, 64)
		if ttl != at.Add(dynamo.DefaultChangeRetention).Unix() {
			t.Errorf("%s: TTL %d, want %s + 30 days", sk, ttl, at)
		}
	}
}

// A page of the feed walks at most 32 day buckets: with a long retention and nothing written,
// the first page stops at the bound with a cursor that resumes at the next bucket, and the
// pages that follow reach today.
func TestChangesBoundTheBucketsOfAPage(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return now }})
	s := dynamo.New(env.Client, dynamo.Options{Table: env.Table, Now: func() time.Time { return now }, CursorSecret: []byte("k"),
		ChangeRetention: 60 * 24 * time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()
	after, pages, requests := "", 0, 0
	for {
		env.Counter.Reset()
		p, err := s.Changes(ctx, dynamo.ChangeFilter{}, 50, after)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		requests += env.Counter.Total()
		if env.Counter.Total() > 32 {
			t.Errorf("page %d took %d requests, over the 32 buckets a page may walk", pages, env.Counter.Total())
		}
		if len(p.Items) != 0 || p.End == "" {
			t.Fatalf("page %d = %+v, want empty with an end cursor", pages, p)
		}
		after = p.End
		if !p.HasNext {
			break
		}
		if pages > 3 {
			t.Fatal("the walk does not end")
		}
	}
	// 61 buckets (60 days back, and today): two pages; the second repeats none.
	if pages != 2 || requests != 61 {
		t.Errorf("walked %d pages with %d requests, want 2 and 61", pages, requests)
	}
	// The end cursor polls today's bucket again: one request.
	env.Counter.Reset()
	if p, err := s.Changes(ctx, dynamo.ChangeFilter{}, 50, after); err != nil || p.HasNext || env.Counter.Total() != 1 {
		t.Errorf("polling with the end cursor = %+v, %v, %d requests", p, err, env.Counter.Total())
	}
}

// An export leaves the change feed out (its keys hold the WriteSeq of the partition they were
// written in, which an import does not keep); an import records one CAPABILITY CREATED change,
// "imported", per capability it writes, by the importing actor.
func TestExportImportAndTheChangeFeed(t *testing.T) {
	src := newEnv(t)
	src.RequireTransactions(t)
	ctx := context.Background()
	if _, err := src.Store.CreateCapability(ctx, &catalog.Capability{CapabilityID: "CAP-X", Name: "X", BusinessDomain: "testing", Priority: catalog.PriorityHigh, Status: catalog.CapabilityPlanning}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Store.UpdateCapability(ctx, "CAP-X", 1, func(c *catalog.Capability) error { c.Owner = "o"; return nil }, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := src.Store.Export(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"entityType":"Change"`) {
		t.Errorf("the export holds change records:\n%s", b.String())
	}
	dst := newEnv(t)
	admin := dynamo.WithActor(ctx, catalog.Actor{Name: "ops", Role: "admin"}, "req-import")
	if _, err := dst.Store.Import(admin, strings.NewReader(b.String()), 2); err != nil {
		t.Fatal(err)
	}
	p, err := dst.Store.CapabilityChanges(ctx, "CAP-X", dynamo.ChangeFilter{}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 1 {
		t.Fatalf("changes after the import = %+v, want one", p.Items)
	}
	c := p.Items[0]
	if c.Entity != catalog.ChangeCapability || c.Action != catalog.ChangeCreated || c.Detail == nil || *c.Detail != "imported" ||
		c.Actor.Name != "ops" || c.RequestID == nil || *c.RequestID != "req-import" || c.Revision == nil || *c.Revision != 2 {
		t.Errorf("the import's change = %+v", c)
	}
	if err := dst.Store.CheckPartition(ctx, "CAP-X"); err != nil {
		t.Errorf("check after the import: %v", err)
	}
}
