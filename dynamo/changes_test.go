package dynamo_test

import (
	"context"
	"errors"
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

// The catalogue-wide feed read backwards (last/before) walks the day buckets newest first, one
// Query each read newest first: pages of any size join without a gap or a duplicate across
// buckets, each page is oldest first within itself, and HasPrevious is exact: a full page reads
// on into older buckets until it finds a change or reaches `since`.
func TestChangesBackwardAcrossBuckets(t *testing.T) {
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
	now = day.Add(25*time.Hour + time.Minute)
	create("CAP-C") // day 1, 01:01
	now = day.Add(3*24*time.Hour + 10*time.Hour)
	if _, err := s.UpdateCapability(ctx, "CAP-A", 1, func(c *catalog.Capability) error { c.Owner = "o"; return nil }, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	now = day.Add(3*24*time.Hour + 11*time.Hour) // day 3: day 2 has no change

	line := func(r *catalog.ChangeRecord) string { return r.CapabilityID + " " + string(r.Action) }
	newestFirst := []string{"CAP-A updated", "CAP-C created", "CAP-B created", "CAP-A created"}
	for _, last := range []int{100, 4, 3, 2, 1} {
		var got []string
		before := ""
		for page := 0; ; page++ {
			env.Counter.Reset()
			p, err := s.ChangesBefore(ctx, dynamo.ChangeFilter{Since: day}, last, before)
			if err != nil {
				t.Fatal(err)
			}
			if page == 0 && last >= 4 && env.Counter.Total() != 4 {
				t.Errorf("last %d: a page over days 3..0 took %d requests, want 4 (one Query a day)", last, env.Counter.Total())
			}
			// Oldest first within the page.
			for i := len(p.Items) - 1; i >= 0; i-- {
				got = append(got, line(p.Items[i]))
			}
			for i := 1; i < len(p.Items); i++ {
				if p.Items[i-1].At.Time.After(p.Items[i].At.Time) {
					t.Errorf("last %d: page %d is not oldest first: %v", last, page, p.Items)
				}
			}
			if p.HasNext {
				t.Errorf("last %d: a backward page says HasNext", last)
			}
			wantPrev := len(got) < len(newestFirst)
			if p.HasPrevious != wantPrev {
				t.Errorf("last %d page %d: HasPrevious %v after %d of %d changes", last, page, p.HasPrevious, len(got), len(newestFirst))
			}
			if len(p.Items) != min(last, len(newestFirst)-(len(got)-len(p.Items))) {
				t.Errorf("last %d page %d: %d items", last, page, len(p.Items))
			}
			if len(p.Cursors) > 0 && p.Cursors[0] != p.Items[0].ID {
				t.Errorf("last %d: the first cursor is not the first change's ID", last)
			}
			if !p.HasPrevious {
				break
			}
			before = p.Cursors[0]
			if page > 5 {
				t.Fatal("the walk does not end")
			}
		}
		if !slices.Equal(got, newestFirst) {
			t.Errorf("last %d: feed read backwards = %q, want %q", last, got, newestFirst)
		}
	}

	// The seam inside day 1: before CAP-C's change is CAP-B's, then day 0's.
	p, err := s.ChangesBefore(ctx, dynamo.ChangeFilter{Since: day}, 1, "")
	if err != nil || len(p.Items) != 1 {
		t.Fatalf("last 1 = %+v, %v", p, err)
	}
	env.Counter.Reset()
	p, err = s.ChangesBefore(ctx, dynamo.ChangeFilter{Since: day}, 1, p.Cursors[0])
	// Day 3 (empty below the cursor), day 2, day 1: CAP-C, then one more Query finds CAP-B.
	if err != nil || len(p.Items) != 1 || line(p.Items[0]) != "CAP-C created" || !p.HasPrevious {
		t.Fatalf("before the update = %+v, %v", p, err)
	}
	if n := env.Counter.Total(); n != 3 {
		t.Errorf("before the update: %d requests, want 3 (days 3, 2 and 1; day 1 holds the next one)", n)
	}

	// Without since: the whole retention window, today first.
	p, err = s.ChangesBefore(ctx, dynamo.ChangeFilter{}, 2, "")
	if err != nil || len(p.Items) != 2 || line(p.Items[0]) != "CAP-C created" || line(p.Items[1]) != "CAP-A updated" || !p.HasPrevious {
		t.Fatalf("last 2 = %+v, %v", p, err)
	}
	// since within day 1 leaves CAP-B's and CAP-A's creations out.
	p, err = s.ChangesBefore(ctx, dynamo.ChangeFilter{Since: day.Add(25*time.Hour + 30*time.Second)}, 10, "")
	if err != nil || len(p.Items) != 2 || line(p.Items[0]) != "CAP-C created" || p.HasPrevious {
		t.Fatalf("since 01:00:30 on day 1 = %+v, %v", p, err)
	}
	// A filter on entities: no rule changes, nothing before.
	p, err = s.ChangesBefore(ctx, dynamo.ChangeFilter{Entities: []catalog.ChangeEntity{catalog.ChangeRule}}, 10, "")
	if err != nil || len(p.Items) != 0 || p.HasPrevious || p.Start != "" {
		t.Fatalf("rule changes = %+v, %v; want none", p, err)
	}
	// A forward page's cursor is a valid before, and a broken one is BAD_USER_INPUT on before.
	var ve *catalog.ValidationError
	if _, err := s.ChangesBefore(ctx, dynamo.ChangeFilter{}, 10, "nonsense"); !errors.As(err, &ve) || ve.Field != "before" {
		t.Errorf("a broken before = %v, want a validation error on before", err)
	}
	if _, err := s.ChangesBefore(ctx, dynamo.ChangeFilter{}, 0, ""); !errors.As(err, &ve) || ve.Field != "last" {
		t.Errorf("last 0 = %v, want a validation error on last", err)
	}
}

// A backward page of the feed walks at most 32 day buckets too: with a long retention and
// nothing written, the first page stops at the bound, empty, with HasPrevious and a Start cursor
// that resumes before the buckets it walked; the next page reaches the end of the window.
func TestChangesBackwardBoundTheBucketsOfAPage(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return now }})
	s := dynamo.New(env.Client, dynamo.Options{Table: env.Table, Now: func() time.Time { return now }, CursorSecret: []byte("k"),
		ChangeRetention: 60 * 24 * time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()
	env.Counter.Reset()
	p, err := s.ChangesBefore(ctx, dynamo.ChangeFilter{}, 50, "")
	if err != nil || len(p.Items) != 0 || !p.HasPrevious || p.Start == "" || env.Counter.Total() != 32 {
		t.Fatalf("first page = %+v, %v, %d requests; want empty with HasPrevious and a start cursor after 32", p, err, env.Counter.Total())
	}
	env.Counter.Reset()
	p, err = s.ChangesBefore(ctx, dynamo.ChangeFilter{}, 50, p.Start)
	// 61 buckets (60 days back, and today): 29 left.
	if err != nil || len(p.Items) != 0 || p.HasPrevious || env.Counter.Total() != 29 {
		t.Fatalf("second page = %+v, %v, %d requests; want empty, the end, after 29", p, err, env.Counter.Total())
	}
}

// A capability's changes read backwards: one Query each page, newest first by key, oldest first
// within the page, HasPrevious exact, filters kept; a cursor of another capability is refused.
func TestCapabilityChangesBackward(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	s := env.Store
	for _, id := range []string{"CAP-X", "CAP-Y"} {
		if _, err := s.CreateCapability(ctx, &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "testing", Priority: catalog.PriorityHigh, Status: catalog.CapabilityPlanning}, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	for rev := 1; rev <= 4; rev++ {
		if _, err := s.UpdateCapability(ctx, "CAP-X", rev, func(c *catalog.Capability) error { c.Owner = "o" + strconv.Itoa(rev); return nil }, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.CapabilityChanges(ctx, "CAP-X", dynamo.ChangeFilter{}, 100, "")
	if err != nil || len(all.Items) != 5 {
		t.Fatalf("forward = %+v, %v", all, err)
	}
	for _, last := range []int{5, 2, 1} {
		var got []string
		before := ""
		for page := 0; ; page++ {
			env.Counter.Reset()
			p, err := s.CapabilityChangesBefore(ctx, "CAP-X", dynamo.ChangeFilter{}, last, before)
			if err != nil {
				t.Fatal(err)
			}
			if n := env.Counter.Total(); n != 1 {
				t.Errorf("last %d: a page took %d requests, want 1", last, n)
			}
			got = append(append([]string{}, p.Cursors...), got...)
			if want := len(got) < 5; p.HasPrevious != want || p.HasNext {
				t.Errorf("last %d page %d: HasPrevious %v HasNext %v, want %v and false", last, page, p.HasPrevious, p.HasNext, want)
			}
			if !p.HasPrevious || page > 6 {
				break
			}
			before = p.Cursors[0]
		}
		if !slices.Equal(got, all.Cursors) {
			t.Errorf("last %d: backward pages = %d cursors, not the forward order", last, len(got))
		}
	}
	// The entity filter: CAPABILITY changes only (all five), none of RULE.
	p, err := s.CapabilityChangesBefore(ctx, "CAP-X", dynamo.ChangeFilter{Entities: []catalog.ChangeEntity{catalog.ChangeRule}}, 10, "")
	if err != nil || len(p.Items) != 0 || p.HasPrevious {
		t.Errorf("rule changes = %+v, %v", p, err)
	}
	other, err := s.CapabilityChangesBefore(ctx, "CAP-Y", dynamo.ChangeFilter{}, 1, "")
	if err != nil || len(other.Items) != 1 || other.HasPrevious {
		t.Fatalf("CAP-Y = %+v, %v", other, err)
	}
	var ve *catalog.ValidationError
	if _, err := s.CapabilityChangesBefore(ctx, "CAP-X", dynamo.ChangeFilter{}, 1, other.Cursors[0]); !errors.As(err, &ve) || ve.Field != "before" {
		t.Errorf("CAP-Y's cursor before CAP-X's changes = %v, want a validation error on before", err)
	}
}
