package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// deletePage is how many keys one pass of DeleteCapability reads and deletes.
const deletePage = 500

// DeleteTimeout bounds the steps of DeleteCapability after its first transaction, which run
// detached from the caller's context.
const DeleteTimeout = 10 * time.Minute

// ResumeDeletes finishes every delete that stopped after its first step (a crash, a deadline):
// it lists the capabilities marked deleting from the CAPABILITIES index and deletes the rest of
// each. It returns how many it finished. The server runs it at start.
func (s *Store) ResumeDeletes(ctx context.Context) (int, error) {
	items, _, err := s.run(ctx, query{index: true, pk: capabilitiesPK, withDeleting: true,
		filter: "attribute_exists(#del)", names: map[string]string{"#del": attrDeleting}})
	if err != nil {
		return 0, fmt.Errorf("resume deletes: %w", err)
	}
	done := 0
	for _, it := range items {
		if !it.Deleting {
			continue
		}
		id, err := parseCapabilityPK(it.PK)
		if err != nil {
			continue
		}
		if err := s.DeleteCapability(ctx, id, it.Revision, Idempotency{}); err != nil && !errors.Is(err, ErrNotFound) {
			return done, fmt.Errorf("resume delete of %s: %w", id, err)
		}
		done++
	}
	return done, nil
}

// DeleteCapability removes a capability's whole partition. It runs in three steps that a rerun
// resumes after any interruption: (1) one transaction checks expectedRevision, marks METADATA as
// deleting (every read skips it from then on, the CAPABILITIES listing included) and deletes
// the two index items; (2) batches of
// BatchWriteItem delete every other item of the partition, each page's component ID claims
// first; (3) METADATA goes last. Idempotency
// tokens live outside the partition and stay until their TTL, so a retried delete still answers.
// A capability already marked deleting skips the revision check: the delete was authorised when
// it began.
func (s *Store) DeleteCapability(ctx context.Context, id string, expectedRevision int, idem Idempotency) error {
	if err := ValidateID("id", id); err != nil {
		return err
	}
	if rec, err := s.recorded(ctx, id, idem); rec != nil || err != nil {
		return err
	}
	var marked *item // METADATA as marked deleting
	for attempt := 0; ; attempt++ {
		meta, err := s.readItem(ctx, capabilityPK(id), metadataSK, true)
		if IsNotFound(err) {
			return catalog.Missing(catalog.EntityCapability, id, err)
		}
		if err != nil {
			return fmt.Errorf("delete capability %s: %w", id, err)
		}
		if meta.Deleting {
			marked = meta
			break
		}
		if meta.Revision != expectedRevision {
			return fmt.Errorf("delete capability %s: %w", id, stale("capability "+id, meta.Revision))
		}
		marked, err = s.markDeleting(ctx, id, meta, idem)
		var lost *lostRace
		if err == nil {
			break
		}
		if !errors.As(err, &lost) {
			return fmt.Errorf("delete capability %s: %w", id, err)
		}
		if lost.token {
			_, err := s.recorded(ctx, id, idem)
			return err
		}
		if attempt+1 >= maxWriteAttempts {
			return fmt.Errorf("delete capability %s: %w", id, ErrUnavailable)
		}
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return err
		}
	}
	// From here the capability is gone from every read: the rest runs detached from the
	// caller (a client that hangs up does not stop it), under a deadline of its own. Stopped
	// anyway (a crash), it is resumed at the next start (ResumeDeletes) and by `check -repair`.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DeleteTimeout)
	defer cancel()
	return s.finishDelete(ctx, id, marked)
}

// finishDelete runs a delete's steps 2 and 3 on the partition whose METADATA marked is.
func (s *Store) finishDelete(ctx context.Context, id string, marked *item) error {
	// Steps 2 and 3 record their changes with the WriteSeq after the marking's, one and two
	// on: nothing else writes to a partition marked deleting, and a rerun rewrites the same
	// keys.
	step := func(n int, detail string) *item {
		return s.changeItem(id, marked.CreatedAt, marked.WriteSeq+n, 0, marked.Revision+1,
			changeSpec{entity: catalog.ChangeCapability, entityID: id, action: catalog.ChangeDeleted, detail: detail}, s.now())
	}
	err := s.deleteChildren(ctx, id, step(1, deletedChildren), marked)
	if errors.Is(err, errNoLongerMarked) {
		return nil // another delete of the same incarnation finished it
	}
	if err != nil {
		return fmt.Errorf("delete capability %s: %w", id, err)
	}
	// Step 3: METADATA and its change in one transaction, only while METADATA is still the one
	// this delete marked: two deletes of one capability may run at once (a retry, a resumed
	// delete), and once the first removed METADATA the capability may be created again, which
	// the second must not remove (nor its counters' share, which the marking took).
	p := &plan{}
	p.del(capabilityPK(id), metadataSK, "attribute_exists(Deleting) AND WriteSeq = :seq", map[string]types.AttributeValue{":seq": num(marked.WriteSeq)})
	p.put(step(2, deletedMetadata), "", nil)
	if p.err != nil {
		return p.err
	}
	err = s.commitActions(ctx, id, 0, p.actions, Idempotency{}, nil, s.now())
	var lost *lostRace
	if errors.As(err, &lost) {
		return nil // the other delete removed it first
	}
	if err != nil {
		return fmt.Errorf("delete capability %s: %w", id, classify("delete metadata", err))
	}
	return nil
}

// errNoLongerMarked stops a delete's second step when METADATA is no longer the item it marked
// deleting: another delete of the same capability finished first.
var errNoLongerMarked = errors.New("the capability is no longer the one marked deleting")

// stillMarked fails with errNoLongerMarked unless the partition's METADATA is marked's: marked
// deleting, with its WriteSeq (a capability created again has none of its WriteSeqs).
func (s *Store) stillMarked(ctx context.Context, id string, marked *item) error {
	meta, err := s.readItem(ctx, capabilityPK(id), metadataSK, true)
	if IsNotFound(err) || (err == nil && (!meta.Deleting || meta.WriteSeq != marked.WriteSeq)) {
		return errNoLongerMarked
	}
	return err
}

// The details of the changes of deleteCapability's three steps.
const (
	deletedMarked   = "marked deleting: gone from every read"
	deletedChildren = "partition removed (history and changes kept)"
	deletedMetadata = "metadata removed"
)

func (s *Store) markDeleting(ctx context.Context, id string, meta *item, idem Idempotency) (*item, error) {
	now := s.now()
	// The marked METADATA keeps its GSI1 keys: a put never drops index attributes from an
	// existing item (minidyn v0.8.2 then kept a stale entry in its sorted index keys that hid
	// every later entry of GSI1). Every read skips an item marked deleting instead.
	marked := *meta
	marked.Deleting, marked.WriteSeq, marked.UpdatedAt = true, meta.WriteSeq+1, now
	cond := "Revision = :rev AND attribute_not_exists(Deleting)"
	values := map[string]types.AttributeValue{":rev": num(meta.Revision)}
	if meta.WriteSeq > 0 {
		cond += " AND WriteSeq = :seq"
		values[":seq"] = num(meta.WriteSeq)
	} else {
		cond += " AND attribute_not_exists(WriteSeq)"
	}
	p := &plan{}
	p.put(&marked, cond, values)
	// The history outlives the capability: its last revision becomes a version, and a
	// tombstone one revision later (the same fields, marked deleted) names who deleted it.
	p.entomb(ctx, meta, capabilityVersionSK, now)
	p.del(capabilityPK(id), domainIndexSK, "", nil)
	p.del(capabilityPK(id), healthIndexSK, "", nil)
	if c, err := toCapability(meta); err == nil {
		searchDeletes(p, c)
	}
	p.put(s.changeItem(id, meta.CreatedAt, marked.WriteSeq, 0, meta.Revision+1,
		changeSpec{entity: catalog.ChangeCapability, entityID: id, action: catalog.ChangeDeleted, detail: deletedMarked}, now), "", nil)
	if p.err != nil {
		return nil, p.err
	}
	// The capability leaves the catalogue's counters with the marking.
	old, err := toCapability(meta)
	if err != nil {
		return nil, err
	}
	counters, err := counterWrites(old, nil)
	if err != nil {
		return nil, err
	}
	p.actions = append(p.actions, counters...)
	return &marked, s.commitActions(ctx, id, meta.WriteSeq, p.actions, idem, nil, now)
}

// deleteChildren deletes every item of the partition but METADATA and the capability's versions
// (its history and tombstone), a page at a time, until none is left. (A partition may still
// hold TOKEN# items written before tokens moved to their own partition: they go too, no read
// looks for them.)
//
// The step's change record goes in the first BatchWriteItem (alone when nothing is left to
// delete): interrupted, the step is finished by a rerun, which writes the same record again.
//
// With marked (a delete's METADATA as it marked it), each page first checks that METADATA is
// still that item (errNoLongerMarked otherwise): a second delete running late never removes the
// items of a capability created again after the first finished.
func (s *Store) deleteChildren(ctx context.Context, id string, change, marked *item) error {
	var pending []types.WriteRequest
	if change != nil {
		av, err := change.av()
		if err != nil {
			return err
		}
		stampWriter(ctx, av)
		pending = append(pending, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	for _, r := range rangesBesideHistory() {
		if err := s.deleteRange(ctx, id, r[0], r[1], &pending, marked); err != nil {
			return err
		}
	}
	if len(pending) == 0 {
		return nil
	}
	return s.batchWrite(ctx, pending, 4)
}

func (s *Store) deleteRange(ctx context.Context, id, lo, hi string, pending *[]types.WriteRequest, marked *item) error {
	for {
		if marked != nil {
			if err := s.stillMarked(ctx, id, marked); err != nil {
				return err
			}
		}
		items, _, err := s.run(ctx, query{pk: capabilityPK(id), lo: lo, hi: hi, want: deletePage, consistent: true})
		if err != nil {
			return err
		}
		var reqs, claims []types.WriteRequest
		for _, it := range items {
			if it.SK == metadataSK {
				continue
			}
			if it.EntityType == entityNotify {
				// A pending notification outlives its capability: the alert was real. It moves
				// out of the partition (with its outbox entry), before the partition's copy
				// goes, and the deliverer deletes it once settled (SaveNotification).
				n, err := toNotification(it)
				if err != nil {
					return err
				}
				if n.Status == catalog.NotificationPending {
					d, err := detachedNotification(it)
					if err != nil {
						return err
					}
					av, err := d.av()
					if err != nil {
						return err
					}
					claims = append(claims, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
				}
			}
			if it.EntityType == entityComponent {
				if _, componentID, err := parseComponentSK(it.SK); err == nil {
					claims = append(claims, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(claimPK(componentID), claimSK)}})
				}
			}
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(it.PK, it.SK)}})
		}
		if len(reqs) == 0 {
			return nil
		}
		// The claims go before their components, and the detached copies of pending
		// notifications before the partition's: interrupted in between, a rerun finds the
		// components and notifications and deletes the rest, and no claim outlives its
		// component. (A rerun copies a notification again: delivered at least once.)
		if err := s.batchWrite(ctx, claims, 4); err != nil {
			return err
		}
		reqs = append(reqs, *pending...)
		*pending = nil
		if err := s.batchWrite(ctx, reqs, 4); err != nil {
			return err
		}
	}
}
