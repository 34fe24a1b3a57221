package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// The change feed. Every write appends a change record (EntityType Change) to the capability's
// partition in the transaction that makes the write: SK CHANGE#{incarnation}#{WriteSeq}#{n},
// where WriteSeq is the partition's write counter after the write (every transaction bumps it
// under a condition, so the records of one capability are totally ordered), and a GSI1 entry
// in the day's bucket, CHANGES#{yyyy-mm-dd} / {at}#{capabilityId}#..., for the catalogue-wide
// feed. Records expire ChangeRetention after they were written (TTL); a capability's delete
// keeps them, as it keeps its versions.

// DefaultChangeRetention is how long change records are kept unless Options say otherwise.
const DefaultChangeRetention = 30 * 24 * time.Hour

// maxChangeBuckets bounds how many day buckets of the catalogue-wide feed one page walks: the
// default retention (30 days) and today fit in one page, and a page that reaches the bound
// without filling ends with a cursor that resumes at the next bucket.
const maxChangeBuckets = 32

// changeSpec is one change a write records.
type changeSpec struct {
	entity   catalog.ChangeEntity
	entityID string
	action   catalog.ChangeAction
	fields   []string
	// detail says more where the entity and action do not (the steps of a delete, what an
	// archive moved).
	detail string
}

// record plans a change record for the write (commit gives it its key).
func (p *plan) record(entity catalog.ChangeEntity, entityID string, action catalog.ChangeAction, fields []string) {
	p.changes = append(p.changes, changeSpec{entity: entity, entityID: entityID, action: action, fields: fields})
}

// changeItem returns the item of the n-th change of the write that left the capability's
// WriteSeq at seq and its revision at revision. Its actor and request are stamped when it is
// written (commitActions, or stampWriter for the batched paths).
func (s *Store) changeItem(capabilityID string, incarnation time.Time, seq, n, revision int, c changeSpec, now time.Time) *item {
	sk := changeSK(incarnation, seq, n)
	data := map[string]types.AttributeValue{
		"entity":   &types.AttributeValueMemberS{Value: string(c.entity)},
		"entityId": &types.AttributeValueMemberS{Value: c.entityID},
		"action":   &types.AttributeValueMemberS{Value: string(c.action)},
	}
	if len(c.fields) > 0 {
		data["fields"] = &types.AttributeValueMemberSS{Value: c.fields}
	}
	if c.detail != "" {
		data["detail"] = &types.AttributeValueMemberS{Value: c.detail}
	}
	return &item{PK: capabilityPK(capabilityID), SK: sk, EntityType: entityChange,
		GSI1PK: changesPK(now), GSI1SK: changeGSI1SK(now, capabilityID, sk),
		CreatedAt: now, UpdatedAt: now, Revision: revision, TTL: now.Add(s.changeRetention).Unix(), Data: data}
}

// lastIncarnation returns the incarnation of the newest change record of a partition (the zero
// time when it has none): one Query.
func (s *Store) lastIncarnation(ctx context.Context, capabilityID string) (time.Time, error) {
	lo, hi := changeRange()
	items, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, reverse: true, want: 1, consistent: true, projection: "PK, SK"})
	if err != nil || len(items) == 0 {
		return time.Time{}, err
	}
	t, _, _, err := parseChangeSK(items[0].SK)
	return t, err
}

// fieldsChanged returns the top-level fields of Data that differ between two versions of an
// item, sorted.
func fieldsChanged(before, after *item) []string {
	if before == nil || after == nil {
		return nil
	}
	b, err := before.data()
	if err != nil {
		return nil
	}
	a, err := after.data()
	if err != nil {
		return nil
	}
	plain := func(v types.AttributeValue) any {
		var x any
		if v == nil || attributevalue.Unmarshal(v, &x) != nil {
			return nil
		}
		return x
	}
	var fields []string
	for k, v := range a {
		if identical(v, b[k]) {
			continue // plain would decode both alike: the same field, without decoding it
		}
		if !reflect.DeepEqual(plain(v), plain(b[k])) {
			fields = append(fields, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			fields = append(fields, k)
		}
	}
	sort.Strings(fields)
	return fields
}

// identical reports whether two attribute values are written alike: the same types, strings,
// element orders and map members all the way down. Values written alike decode alike, so
// fieldsChanged needs no decoding for them (most fields of a write, which changes a few); a
// number such as NaN or Inf, which does not equal itself decoded, is never identical.
func identical(a, b types.AttributeValue) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case *types.AttributeValueMemberS:
		y, ok := b.(*types.AttributeValueMemberS)
		return ok && x != nil && y != nil && x.Value == y.Value
	case *types.AttributeValueMemberN:
		y, ok := b.(*types.AttributeValueMemberN)
		return ok && x != nil && y != nil && x.Value == y.Value && !strings.ContainsAny(x.Value, "nNiI")
	case *types.AttributeValueMemberBOOL:
		y, ok := b.(*types.AttributeValueMemberBOOL)
		return ok && x != nil && y != nil && x.Value == y.Value
	case *types.AttributeValueMemberNULL:
		y, ok := b.(*types.AttributeValueMemberNULL)
		return ok && x != nil && y != nil && x.Value == y.Value
	case *types.AttributeValueMemberM:
		y, ok := b.(*types.AttributeValueMemberM)
		if !ok || x == nil || y == nil || len(x.Value) != len(y.Value) {
			return false
		}
		for k, v := range x.Value {
			w, ok := y.Value[k]
			if !ok || !identical(v, w) {
				return false
			}
		}
		return true
	case *types.AttributeValueMemberL:
		y, ok := b.(*types.AttributeValueMemberL)
		if !ok || x == nil || y == nil || len(x.Value) != len(y.Value) {
			return false
		}
		for i := range x.Value {
			if !identical(x.Value[i], y.Value[i]) {
				return false
			}
		}
		return true
	case *types.AttributeValueMemberSS:
		y, ok := b.(*types.AttributeValueMemberSS)
		return ok && x != nil && y != nil && slices.Equal(x.Value, y.Value)
	}
	return false // B, NS, BS and anything else: decoded and compared as before
}

// changeCursor is the position a change ID or a feed cursor names: a change (its capability,
// key and time) or, for a page of the catalogue-wide feed that ended without a change, the
// start of the bucket to resume at.
type changeCursor struct {
	C string `json:"c,omitempty"`
	S string `json:"s,omitempty"`
	T string `json:"t,omitempty"`
	B string `json:"b,omitempty"`
}

const changeScope = "changes"

func (s *Store) encodeChangeCursor(c changeCursor) string {
	body, _ := json.Marshal(c)
	return s.cursors.Encode(changeScope, body)
}

// decodeChangeCursor returns the position of a change ID or feed cursor; anything else is a
// *catalog.ValidationError on field "after".
func (s *Store) decodeChangeCursor(cursor string) (changeCursor, time.Time, error) {
	return s.decodeChangeCursorOf("after", cursor)
}

// decodeChangeCursorOf is decodeChangeCursor for the argument named field (after or before).
func (s *Store) decodeChangeCursorOf(field, cursor string) (changeCursor, time.Time, error) {
	var c changeCursor
	bad := catalog.Invalid(field, "cursor is not valid for this query")
	body, ok := s.cursors.Decode(changeScope, cursor)
	if !ok || json.Unmarshal(body, &c) != nil {
		return c, time.Time{}, bad
	}
	t, err := time.Parse(catalog.TimeLayout, c.T+c.B)
	if err != nil || (c.B == "") == (c.S == "") || (c.S != "" && (!isChangeSK(c.S) || !catalog.ValidID(c.C))) {
		return c, time.Time{}, bad
	}
	return c, t, nil
}

// toChangeRecord decodes a change item.
func (s *Store) toChangeRecord(it *item) (*catalog.ChangeRecord, error) {
	capabilityID, err := parseCapabilityPK(it.PK)
	if err != nil {
		return nil, err
	}
	data, err := it.data()
	if err != nil {
		return nil, err
	}
	r := &catalog.ChangeRecord{
		ID:           s.encodeChangeCursor(changeCursor{C: capabilityID, S: it.SK, T: keyTime(it.CreatedAt)}),
		At:           catalog.NewTimestamp(it.CreatedAt),
		CapabilityID: capabilityID,
		Entity:       catalog.ChangeEntity(str(data["entity"])),
		EntityID:     str(data["entityId"]),
		Action:       catalog.ChangeAction(str(data["action"])),
		Actor:        catalog.Actor{Name: it.ActorName, Role: it.ActorRole},
		Fields:       []string{},
	}
	if it.Revision > 0 {
		rev := it.Revision
		r.Revision = &rev
	}
	if r.Actor.Name == "" {
		r.Actor = catalog.UnknownActor
	}
	if it.RequestID != "" {
		id := it.RequestID
		r.RequestID = &id
	}
	if d := str(data["detail"]); d != "" {
		r.Detail = &d
	}
	if ss, ok := data["fields"].(*types.AttributeValueMemberSS); ok {
		r.Fields = append(r.Fields, ss.Value...)
		sort.Strings(r.Fields)
	}
	return r, nil
}

// ChangeFilter narrows a change listing: to some entities, and to changes made at or after
// Since. Consistent asks CapabilityChanges for a strongly consistent read (the subscription
// hub's replay, which must see every change the hub may already have delivered).
type ChangeFilter struct {
	Entities   []catalog.ChangeEntity
	Since      time.Time
	Consistent bool
}

// filter returns the query filter of f (empty without entities).
func (f ChangeFilter) filter(q *query) error {
	var conds []string
	for i, e := range f.Entities {
		if !e.Valid() {
			return catalog.Invalid("entities", "%q is not a change entity", e)
		}
		if i == 0 {
			q.names = map[string]string{"#d": attrData, "#e": "entity"}
			q.values = map[string]types.AttributeValue{}
		}
		k := ":e" + strconv.Itoa(i)
		q.values[k] = &types.AttributeValueMemberS{Value: string(e)}
		conds = append(conds, k)
	}
	if len(conds) > 0 {
		q.filter = "#d.#e IN (" + strings.Join(conds, ", ") + ")"
	}
	return nil
}

// CapabilityChanges lists the changes of a capability (live or deleted) that the retention
// still holds, oldest first (the order of their IDs): one Query of the partition's CHANGE#
// range from after (a change ID or cursor of this capability). f.Since, when set, filters on
// the change's time.
func (s *Store) CapabilityChanges(ctx context.Context, capabilityID string, f ChangeFilter, first int, after string) (*Page[*catalog.ChangeRecord], error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	q, err := s.capabilityChangeQuery(capabilityID, f, first)
	if err != nil {
		return nil, err
	}
	if after != "" {
		if err := s.startAtChange(&q, capabilityID, "after", after); err != nil {
			return nil, err
		}
	}
	items, more, err := s.run(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read changes of %s: %w", capabilityID, err)
	}
	return s.changePage(items, more)
}

// startAtChange starts q, a Query of the capability's changes, past the change that cursor
// (the argument named field: after or before) names; a cursor of another capability, or of no
// change, is a *catalog.ValidationError on field.
func (s *Store) startAtChange(q *query, capabilityID, field, cursor string) error {
	c, _, err := s.decodeChangeCursorOf(field, cursor)
	if err != nil {
		return err
	}
	if c.S == "" || c.C != capabilityID {
		return catalog.Invalid(field, "cursor is not valid for this query")
	}
	q.start = keyOf(q.pk, c.S)
	return nil
}

// capabilityChangeQuery is the Query of a capability's changes that f selects, want at a time.
func (s *Store) capabilityChangeQuery(capabilityID string, f ChangeFilter, want int) (query, error) {
	lo, hi := changeRange()
	q := query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, want: want, now: s.now(), consistent: f.Consistent}
	if err := f.filter(&q); err != nil {
		return q, err
	}
	if !f.Since.IsZero() {
		if q.names == nil {
			q.names, q.values = map[string]string{}, map[string]types.AttributeValue{}
		}
		q.names["#at"] = attrCreatedAt
		q.values[":since"] = &types.AttributeValueMemberS{Value: keyTime(f.Since)}
		if q.filter != "" {
			q.filter += " AND "
		}
		q.filter += "#at >= :since"
	}
	return q, nil
}

// CapabilityChangesBefore is CapabilityChanges read backwards: the last changes of a capability
// before `before` (a change ID or cursor of this capability; empty for its newest), still oldest
// first within the page. One Query of the partition's CHANGE# range read newest first
// (ScanIndexForward false); HasPrevious is exact (the Query reads one change past the page).
func (s *Store) CapabilityChangesBefore(ctx context.Context, capabilityID string, f ChangeFilter, last int, before string) (*Page[*catalog.ChangeRecord], error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	if err := checkLast(last); err != nil {
		return nil, err
	}
	q, err := s.capabilityChangeQuery(capabilityID, f, last)
	if err != nil {
		return nil, err
	}
	q.reverse = true
	if before != "" {
		if err := s.startAtChange(&q, capabilityID, "before", before); err != nil {
			return nil, err
		}
	}
	items, more, err := s.run(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read changes of %s: %w", capabilityID, err)
	}
	slices.Reverse(items)
	p, err := s.changePage(items, false)
	if err != nil {
		return nil, err
	}
	p.HasPrevious = more
	return p, nil
}

// checkLast checks the size of a page read backwards.
func checkLast(last int) error {
	if last < 1 || last > MaxPage {
		return catalog.Invalid("last", "must be between 1 and %d, got %d", MaxPage, last)
	}
	return nil
}

func (s *Store) changePage(items []*item, more bool) (*Page[*catalog.ChangeRecord], error) {
	p := &Page[*catalog.ChangeRecord]{Items: make([]*catalog.ChangeRecord, 0, len(items)), Cursors: make([]string, 0, len(items)), HasNext: more}
	for _, it := range items {
		r, err := s.toChangeRecord(it)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, r)
		p.Cursors = append(p.Cursors, r.ID)
	}
	return p, nil
}

// Changes lists the catalogue's changes oldest first from f.Since (default: the start of the
// retention window), from the GSI1 bucket of each day: one Query per bucket it walks, at most
// maxChangeBuckets per page. after is a change ID (continue after that change) or the cursor of
// a page. A page that ends without filling up has HasNext false and an End cursor to poll with
// later; one that stopped at the bucket bound has HasNext true.
func (s *Store) Changes(ctx context.Context, f ChangeFilter, first int, after string) (*Page[*catalog.ChangeRecord], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	now := s.now()
	oldest := now.Add(-s.changeRetention)
	since := f.Since
	if since.IsZero() || since.Before(oldest) {
		since = oldest
	}
	q := query{index: true, hi: "~", now: now}
	if err := f.filter(&q); err != nil {
		return nil, err
	}
	bucket, lo := bucketStart(since), changeGSI1From(since)
	if after != "" {
		c, t, err := s.decodeChangeCursor(after)
		if err != nil {
			return nil, err
		}
		bucket, lo = bucketStart(t), "0"
		if c.S != "" {
			q.start = keyOf(capabilityPK(c.C), c.S)
			q.start[attrGSI1PK] = &types.AttributeValueMemberS{Value: changesPK(t)}
			q.start[attrGSI1SK] = &types.AttributeValueMemberS{Value: changeGSI1SK(t, c.C, c.S)}
		}
		if bucket.Before(bucketStart(oldest)) {
			bucket, q.start = bucketStart(oldest), nil
		}
	}
	var items []*item
	last := bucketStart(now)
	for walked := 0; ; walked++ {
		if walked == maxChangeBuckets {
			p, err := s.changePage(items, true)
			if err == nil && len(items) == 0 {
				p.End = s.encodeChangeCursor(changeCursor{B: keyTime(bucket)})
			}
			return p, err
		}
		q.pk, q.lo, q.want = changesPK(bucket), lo, first-len(items)
		got, more, err := s.run(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read changes: %w", err)
		}
		items = append(items, got...)
		if more || !bucket.Before(last) {
			p, err := s.changePage(items, more)
			if err == nil && len(items) == 0 {
				p.End = s.encodeChangeCursor(changeCursor{B: keyTime(bucket)})
			}
			return p, err
		}
		if len(items) == first {
			// Full: whether more follow in a later bucket is known only by reading it; say
			// so, and the next page finds out.
			return s.changePage(items, true)
		}
		bucket, lo, q.start = bucket.Add(ChangeBucket), "0", nil
	}
}

// ChangesBefore is Changes read backwards: the catalogue's last changes before `before` (a
// change ID, or a page's cursor; empty for the newest), no older than f.Since (default: the start
// of the retention window), oldest first within the page. It walks the GSI1 day buckets newest
// first, one Query each read newest first (ScanIndexForward false), at most maxChangeBuckets a
// page, as the forward walk does. HasPrevious is exact: a full page reads on (one item at a time)
// until it finds an older change or runs out of buckets, but for a page that stops at the bucket
// bound, which has HasPrevious true and, when empty, a Start cursor that resumes before the
// buckets it walked. HasNext is false: a backward page does not look ahead.
func (s *Store) ChangesBefore(ctx context.Context, f ChangeFilter, last int, before string) (*Page[*catalog.ChangeRecord], error) {
	if err := checkLast(last); err != nil {
		return nil, err
	}
	now := s.now()
	oldest := now.Add(-s.changeRetention)
	since := f.Since
	if since.IsZero() || since.Before(oldest) {
		since = oldest
	}
	q := query{index: true, reverse: true, hi: "~", now: now}
	if err := f.filter(&q); err != nil {
		return nil, err
	}
	bucket := bucketStart(now)
	if before != "" {
		c, t, err := s.decodeChangeCursorOf("before", before)
		if err != nil {
			return nil, err
		}
		bucket = bucketStart(t)
		if c.S != "" {
			q.start = keyOf(capabilityPK(c.C), c.S)
			q.start[attrGSI1PK] = &types.AttributeValueMemberS{Value: changesPK(t)}
			q.start[attrGSI1SK] = &types.AttributeValueMemberS{Value: changeGSI1SK(t, c.C, c.S)}
		} else {
			// A bucket cursor names the start of a bucket: what is before it is in the
			// buckets before.
			bucket = bucket.Add(-ChangeBucket)
		}
	}
	floor := bucketStart(since)
	var items []*item
	page := func(hasPrevious bool, walkedFrom time.Time) (*Page[*catalog.ChangeRecord], error) {
		slices.Reverse(items)
		p, err := s.changePage(items, false)
		if err != nil {
			return nil, err
		}
		p.HasPrevious = hasPrevious
		if hasPrevious && len(items) == 0 {
			p.Start = s.encodeChangeCursor(changeCursor{B: keyTime(walkedFrom)})
		}
		return p, nil
	}
	for walked := 0; ; walked++ {
		if bucket.Before(floor) {
			return page(false, time.Time{})
		}
		if walked == maxChangeBuckets {
			return page(true, bucket.Add(ChangeBucket))
		}
		q.pk, q.lo = changesPK(bucket), "0"
		if bucket.Equal(floor) {
			q.lo = changeGSI1From(since)
		}
		need := last - len(items)
		q.want = max(need, 1) // a full page looks for one older change
		got, more, err := s.run(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("read changes: %w", err)
		}
		if need == 0 {
			if len(got) > 0 {
				return page(true, time.Time{})
			}
		} else {
			items = append(items, got...)
			if more {
				return page(true, time.Time{})
			}
		}
		bucket, q.start = bucket.Add(-ChangeBucket), nil
	}
}

// RecordArtifactUpload records that the server issued an upload URL for an artifact of a job
// (ARTIFACT CREATED, entityId {jobId}/{name}): the upload itself goes to S3 directly and never
// reaches the server or the table, so the URL is what the feed can record. One
// TransactWriteItems after a consistent read of METADATA, again when another writer moved the
// partition's WriteSeq in between. It returns ErrNotFound for a capability that is gone or
// being deleted.
func (s *Store) RecordArtifactUpload(ctx context.Context, capabilityID, jobID, name string) error {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return err
	}
	spec := changeSpec{entity: catalog.ChangeArtifact, entityID: jobID + "/" + name, action: catalog.ChangeCreated,
		detail: "upload URL issued: the upload goes to the object store directly"}
	for attempt := 0; ; attempt++ {
		meta, err := s.readItem(ctx, capabilityPK(capabilityID), metadataSK, true)
		if err == nil && meta.Deleting {
			err = ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("record artifact upload of %s: %w", capabilityID, err)
		}
		actions, err := s.changeAlone(ctx, meta, spec)
		if err != nil {
			return err
		}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		var tc *types.TransactionConflictException
		if (!errors.As(err, &tce) && !errors.As(err, &tc)) || attempt+1 >= maxWriteAttempts {
			return classify("record artifact upload of "+capabilityID, err)
		}
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return err
		}
	}
}
