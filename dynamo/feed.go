package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// What the subscription hub reads of the change feed (graph/hub.go; docs/design.md): the
// catalogue-wide index as a doorbell, and each rung capability's partition, strongly
// consistent, for the exact sequence of its changes.

// FeedChange is a change as the hub delivers it: the record and its two positions, opaque
// strings that sort as the feed does. Pos orders the changes of one capability (its change
// records' keys); Order orders the catalogue's changes as Query.changes lists them.
type FeedChange struct {
	Record *catalog.ChangeRecord
	Pos    string
	Order  string
	At     time.Time
}

// Bell is one entry of the catalogue-wide index: a capability with a change at Pos.
type Bell struct {
	CapabilityID string
	Pos          string
}

// feedPage is how many change records one Query of the hub asks for.
const feedPage = 100

// ChangeBells lists the changes the catalogue-wide index holds from from (its GSI1 sort key
// range) to now, keys only: one Query per UTC day bucket the range touches (one, or two around
// midnight), following LastEvaluatedKey. The index is eventually consistent: callers overlap
// their ranges and read the partitions for the truth.
func (s *Store) ChangeBells(ctx context.Context, from time.Time) ([]Bell, error) {
	now := s.now()
	var bells []Bell
	for bucket, lo := bucketStart(from), changeGSI1From(from); !bucket.After(bucketStart(now)); bucket, lo = bucket.Add(ChangeBucket), "0" {
		items, _, err := s.run(ctx, query{index: true, pk: changesPK(bucket), lo: lo, hi: "~", projection: "PK, SK"})
		if err != nil {
			return nil, fmt.Errorf("read change index: %w", err)
		}
		for _, it := range items {
			id, err := parseCapabilityPK(it.PK)
			if err != nil || !isChangeSK(it.SK) {
				continue
			}
			bells = append(bells, Bell{CapabilityID: id, Pos: it.SK})
		}
	}
	return bells, nil
}

// ChangesAfterPos returns a capability's changes after pos (from its first with pos empty),
// oldest first, from a strongly consistent Query of its CHANGE# range: at most feedPage, more
// reporting whether others follow.
func (s *Store) ChangesAfterPos(ctx context.Context, capabilityID, pos string) (changes []FeedChange, more bool, err error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, false, err
	}
	lo, hi := changeRange()
	q := query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, want: feedPage, consistent: true}
	if pos != "" {
		if !isChangeSK(pos) {
			return nil, false, fmt.Errorf("changes of %s after %q: not a change position", capabilityID, pos)
		}
		q.start = keyOf(q.pk, pos)
	}
	items, more, err := s.run(ctx, q)
	if err != nil {
		return nil, false, fmt.Errorf("read changes of %s: %w", capabilityID, err)
	}
	changes, err = s.feedChanges(items)
	return changes, more, err
}

// LatestChanges returns a capability's newest changes made at or after since, oldest first:
// strongly consistent Queries of its CHANGE# range read backwards, a page at a time, until a
// change before since (one Query when the capability has few). The hub reads a capability it
// has no position for this way.
func (s *Store) LatestChanges(ctx context.Context, capabilityID string, since time.Time) ([]FeedChange, error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	lo, hi := changeRange()
	q := query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, reverse: true, want: feedPage, consistent: true}
	var newest []*item
	for {
		items, more, err := s.run(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read changes of %s: %w", capabilityID, err)
		}
		done := !more
		for _, it := range items {
			if it.CreatedAt.Before(since) {
				done = true
				break
			}
			newest = append(newest, it)
		}
		if done || len(items) == 0 {
			break
		}
		q.start = keyOf(q.pk, items[len(items)-1].SK)
	}
	for i, j := 0, len(newest)-1; i < j; i, j = i+1, j-1 {
		newest[i], newest[j] = newest[j], newest[i]
	}
	return s.feedChanges(newest)
}

func (s *Store) feedChanges(items []*item) ([]FeedChange, error) {
	out := make([]FeedChange, 0, len(items))
	for _, it := range items {
		r, err := s.toChangeRecord(it)
		if err != nil {
			return nil, err
		}
		out = append(out, FeedChange{Record: r, Pos: it.SK, Order: changeGSI1SK(it.CreatedAt, r.CapabilityID, it.SK), At: it.CreatedAt})
	}
	return out, nil
}

// FeedPosition returns the positions of a change the store listed (its ID decoded): the
// capability, Pos and Order of FeedChange.
func (s *Store) FeedPosition(r *catalog.ChangeRecord) (capabilityID, pos, order string, err error) {
	c, t, err := s.decodeChangeCursor(r.ID)
	if err != nil || c.S == "" {
		return "", "", "", fmt.Errorf("change %q: not a change ID", r.ID)
	}
	return c.C, c.S, changeGSI1SK(t, c.C, c.S), nil
}

// CheckFeedCursor checks that after is a change ID or feed cursor the retention still covers
// (and, with capabilityID set, one of that capability's changes). A cursor older than the
// retention is a *catalog.ValidationError naming the oldest time still held.
func (s *Store) CheckFeedCursor(capabilityID, after string) error {
	c, t, err := s.decodeChangeCursor(after)
	if err != nil {
		return err
	}
	if capabilityID != "" && (c.S == "" || c.C != capabilityID) {
		return catalog.Invalid("after", "cursor is not valid for this query")
	}
	if oldest := s.now().Add(-s.changeRetention); t.Before(oldest) {
		return catalog.Invalid("after", "the cursor is older than the change retention (%s): the oldest change available is from %s; resubscribe without after and read what you missed with Query.changes",
			s.changeRetention, keyTime(oldest))
	}
	return nil
}
