package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// This file holds the table's side of the metrics archive (package blob moves old metrics to S3):
// reading one component's metrics of a capability in time order, a page at a time; finding
// which components have metrics; deleting archived metrics by key.

// Limits of the archive reads.
const (
	// MinMetricRangePage is the smallest page MetricsInRange accepts: a page holds whole
	// timestamps, and one timestamp of a component holds up to one sample per metric type.
	MinMetricRangePage = 2 * 5
	// MaxMetricRangePage is the largest page MetricsInRange accepts.
	MaxMetricRangePage = MaxMetricsPage
)

// MetricKey identifies one metric item: a capability's component, a metric type and the
// sample's timestamp (UTC, microseconds).
type MetricKey struct {
	CapabilityID string
	ComponentID  string
	MetricType   catalog.MetricType
	Timestamp    time.Time
}

// MetricKeyOf returns the key of m.
func MetricKeyOf(m *catalog.Metric) MetricKey {
	return MetricKey{CapabilityID: m.CapabilityID, ComponentID: m.ComponentID, MetricType: m.MetricType, Timestamp: m.Timestamp.UTC().Truncate(time.Microsecond)}
}

// String returns the key as capability/component/type/timestamp, for messages and logs.
func (k MetricKey) String() string {
	return k.CapabilityID + "/" + k.ComponentID + "/" + string(k.MetricType) + "/" + keyTime(k.Timestamp)
}

func (k MetricKey) validate(field string) error {
	if err := ValidateID(field+".capabilityId", k.CapabilityID); err != nil {
		return err
	}
	if err := ValidateID(field+".componentId", k.ComponentID); err != nil {
		return err
	}
	if !k.MetricType.Valid() {
		return catalog.Invalid(field+".metricType", "%q is not a metric type", k.MetricType)
	}
	if k.Timestamp.IsZero() {
		return catalog.Invalid(field+".timestamp", "is required")
	}
	return nil
}

// MetricRange selects one component's metrics within one capability over a time range.
type MetricRange struct {
	CapabilityID string
	ComponentID  string
	// MetricType, when set, keeps only metrics of that type.
	MetricType catalog.MetricType
	// From is the first instant of the range (inclusive); zero means the beginning.
	From time.Time
	// Before is the end of the range (exclusive); zero means no end.
	Before time.Time
	// IncludeExpired keeps items whose TTL has passed but that DynamoDB has not removed yet
	// (the archive wants them; ordinary reads hide them).
	IncludeExpired bool
}

func (r MetricRange) validate() error {
	if err := ValidateID("capabilityId", r.CapabilityID); err != nil {
		return err
	}
	if err := ValidateID("componentId", r.ComponentID); err != nil {
		return err
	}
	if r.MetricType != "" && !r.MetricType.Valid() {
		return catalog.Invalid("metricType", "%q is not a metric type", r.MetricType)
	}
	if !r.Before.IsZero() && !r.From.IsZero() && !r.Before.After(r.From) {
		return catalog.Invalid("before", "must be after from")
	}
	return nil
}

// bounds returns the GSI1SK range of r: both ends inclusive, in key-time form.
func (r MetricRange) bounds() (lo, hi string) {
	lo, hi = "0", "9"
	if !r.From.IsZero() {
		from := r.From.UTC().Truncate(time.Microsecond)
		if from.Before(r.From) {
			from = from.Add(time.Microsecond)
		}
		lo = keyTime(from)
	}
	if !r.Before.IsZero() {
		before := r.Before.UTC().Truncate(time.Microsecond)
		if before.Before(r.Before) {
			before = before.Add(time.Microsecond)
		}
		hi = keyTime(before.Add(-time.Microsecond))
	}
	return lo, hi
}

// MetricsInRange reads up to limit metrics of r in time order (timestamp, then metric type)
// from the component's METRICS# index partition, keeping only the capability's items (and the
// type asked for, and unexpired items unless r.IncludeExpired): the key range is read without
// a FilterExpression, each request asking for limit+1 items, and the items of other
// capabilities sharing the component ID are skipped here. A page holds whole timestamps only:
// when the range goes on past the page, the samples of the page's last timestamp that might
// continue on the next page are left for it. more reports whether metrics may remain in r
// after the page; continue with From set to the last timestamp returned plus one microsecond.
// A page with more is never empty. The index is eventually consistent: a sample written a
// moment ago may be missing. With r.MetricType the range is read from the capability's
// partition instead, a key range of that component and type (see metricTypeInRange), so a page
// holds limit samples of the type and not only those among limit of every type. limit must be
// between MinMetricRangePage and MaxMetricRangePage; bad arguments are a
// *catalog.ValidationError.
func (s *Store) MetricsInRange(ctx context.Context, r MetricRange, limit int) (metrics []*catalog.Metric, more bool, err error) {
	if err := r.validate(); err != nil {
		return nil, false, err
	}
	if limit < MinMetricRangePage || limit > MaxMetricRangePage {
		return nil, false, catalog.Invalid("limit", "must be between %d and %d, got %d", MinMetricRangePage, MaxMetricRangePage, limit)
	}
	if s.memo != nil && !r.IncludeExpired {
		return s.memoMetricsInRange(ctx, r, limit)
	}
	metrics, more, _, err = s.metricsInRange(ctx, r, limit)
	return metrics, more, err
}

// metricRange is a MetricsInRange read the read memo keeps: expires is the earliest TTL of
// its samples (epoch seconds; 0 when none has one), from when the read is no longer used.
type metricRange struct {
	metrics []*catalog.Metric
	more    bool
	expires int64
}

// memoMetricsInRange is MetricsInRange through the read memo (the embedded default's): a read
// is kept under its exact range and limit while the engine is unchanged, and answered again
// without a request; none is used once a sample in it may have passed its TTL (the store hides
// expired samples by its own clock, which need not be memdyn's). A miss costs the one Query it
// costs without the memo. The explorer asks for its metrics window from the start of a minute,
// so that its loads within the minute share one read.
func (s *Store) memoMetricsInRange(ctx context.Context, r MetricRange, limit int) ([]*catalog.Metric, bool, error) {
	k := pageKey{scope: "metricrange|" + r.CapabilityID + "|" + r.ComponentID + "|" + string(r.MetricType) + "|" +
		r.From.UTC().Format(time.RFC3339Nano) + "|" + r.Before.UTC().Format(time.RFC3339Nano), first: limit}
	e, err := keptRead(s, k, func() (*metricRange, error) {
		ms, more, expires, err := s.metricsInRange(ctx, r, limit)
		return &metricRange{metrics: ms, more: more, expires: expires}, err
	}, func(e *metricRange) int { return weight(e.metrics) })
	if err != nil {
		return nil, false, err
	}
	if e.expires != 0 && s.now().Unix() >= e.expires {
		// A sample of the kept read may have expired since: read as without the memo.
		ms, more, _, err := s.metricsInRange(ctx, r, limit)
		return ms, more, err
	}
	return slices.Clip(e.metrics), e.more, nil
}

// metricsInRange is MetricsInRange, validated, without the memo; expires is the earliest TTL of
// the samples returned (0 when none has one).
func (s *Store) metricsInRange(ctx context.Context, r MetricRange, limit int) (metrics []*catalog.Metric, more bool, expires int64, err error) {
	if r.MetricType != "" {
		return s.metricTypeInRange(ctx, r, limit)
	}
	lo, hi := r.bounds()
	pk, now := capabilityPK(r.CapabilityID), s.now()
	q := query{index: true, pk: metricsPK(r.ComponentID), lo: lo, hi: hi, want: limit}
	for {
		items, more, err := s.run(ctx, q)
		if err != nil {
			return nil, false, 0, fmt.Errorf("read metrics of %s/%s: %w", r.CapabilityID, r.ComponentID, err)
		}
		if more {
			// The samples of the last timestamp may go on in the next page: leave them all to it.
			last := items[len(items)-1].GSI1SK
			for len(items) > 0 && items[len(items)-1].GSI1SK == last {
				items = items[:len(items)-1]
			}
			if len(items) == 0 {
				// One timestamp fills the page (capabilities sharing the component ID): read
				// more at once.
				q.want *= 2
				continue
			}
		}
		for _, it := range items {
			if it.PK != pk || (!r.IncludeExpired && it.expired(now)) {
				continue
			}
			m, err := metricOfKey(it, r.CapabilityID)
			if err != nil {
				return nil, false, 0, err
			}
			if r.MetricType == "" || m.MetricType == r.MetricType {
				metrics = append(metrics, m)
				expires = earliest(expires, it.TTL)
			}
		}
		if !more || len(metrics) > 0 {
			sort.SliceStable(metrics, func(i, j int) bool {
				a, b := metrics[i], metrics[j]
				if !a.Timestamp.Equal(b.Timestamp.Time) {
					return a.Timestamp.Before(b.Timestamp.Time)
				}
				return a.MetricType < b.MetricType
			})
			return metrics, more, expires, nil
		}
		// Nothing of this capability in the page: go on after its last item.
		last := items[len(items)-1]
		q.start = keyOf(last.PK, last.SK)
		q.start[attrGSI1PK] = &types.AttributeValueMemberS{Value: last.GSI1PK}
		q.start[attrGSI1SK] = &types.AttributeValueMemberS{Value: last.GSI1SK}
		q.want = limit
	}
}

// metricTypeInRange is MetricsInRange for one metric type: the key range
// METRIC#{component}#{type}#{from..before} of the capability's partition, one sample per
// timestamp, so every page is whole timestamps and holds only the capability's samples of the
// type (one Query, limit+1 items).
func (s *Store) metricTypeInRange(ctx context.Context, r MetricRange, limit int) ([]*catalog.Metric, bool, int64, error) {
	lo, hi := r.bounds()
	p := metricTypePrefix(r.ComponentID, r.MetricType)
	q := query{pk: capabilityPK(r.CapabilityID), lo: p + lo, hi: p + hi, want: limit}
	if !r.IncludeExpired {
		q.now = s.now()
	}
	items, more, err := s.run(ctx, q)
	if err != nil {
		return nil, false, 0, fmt.Errorf("read metrics of %s/%s: %w", r.CapabilityID, r.ComponentID, err)
	}
	metrics := make([]*catalog.Metric, 0, len(items))
	var expires int64
	for _, it := range items {
		m, err := metricOfKey(it, r.CapabilityID)
		if err != nil {
			return nil, false, 0, err
		}
		metrics = append(metrics, m)
		expires = earliest(expires, it.TTL)
	}
	return metrics, more, expires, nil
}

// earliest returns the earlier of two TTLs, 0 meaning none.
func earliest(a, b int64) int64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// metricOfKey decodes a sample of capabilityID whose key fields come from the item's key, so
// that MetricKeyOf(m) names exactly the item read (DeleteMetrics deletes what was archived,
// nothing else).
func metricOfKey(it *item, capabilityID string) (*catalog.Metric, error) {
	m, err := toMetric(it)
	if err != nil {
		return nil, err
	}
	comp, t, at, err := parseMetricSK(it.SK)
	if err != nil {
		return nil, err
	}
	m.CapabilityID, m.ComponentID, m.MetricType, m.Timestamp = capabilityID, comp, t, catalog.NewTimestamp(at)
	return m, nil
}

// MetricComponentIDs returns, sorted, the IDs of the components that have metric items in a
// capability's METRIC# segment, removed components included. It skips through the segment
// with one Limit-1 Query per component (and one more to learn that none is left), so it never
// reads the samples themselves.
func (s *Store) MetricComponentIDs(ctx context.Context, capabilityID string) ([]string, error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	var ids []string
	lo := metricPrefix
	for {
		items, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), lo: lo, hi: prefixEnd(metricPrefix), want: 1})
		if err != nil {
			return nil, fmt.Errorf("list metric components of %s: %w", capabilityID, err)
		}
		if len(items) == 0 {
			return ids, nil
		}
		id, _, _, err := parseMetricSK(items[0].SK)
		if err != nil {
			return nil, fmt.Errorf("list metric components of %s: %w", capabilityID, err)
		}
		ids = append(ids, id)
		lo = prefixEnd(metricComponentPrefix(id))
	}
}

// DeleteArchived deletes the metric items of metrics, each only if it is still the item that
// was read (its UpdatedAt unchanged, or already gone): a sample rewritten after the archive read
// it keeps its new value in the table, for the next run to archive. It deletes the samples of
// each capability and component in TransactWriteItems of up to archiveChunk items, each with the
// change it records (METRIC ARCHIVED, the partition's WriteSeq moved on with it: the change feed's
// order) when the capability exists; it leaves out samples whose condition failed and returns
// how many it deleted and how many it kept. Rerunning it is safe.
func (s *Store) DeleteArchived(ctx context.Context, metrics []*catalog.Metric) (deleted, kept int, err error) {
	type group struct {
		capabilityID, componentID string
		actions                   []types.TransactWriteItem
	}
	var groups []*group
	byKey := map[[2]string]*group{}
	for i, m := range metrics {
		k := MetricKeyOf(m)
		if err := k.validate(fmt.Sprintf("metrics[%d]", i)); err != nil {
			return 0, 0, err
		}
		g := byKey[[2]string{k.CapabilityID, k.ComponentID}]
		if g == nil {
			g = &group{capabilityID: k.CapabilityID, componentID: k.ComponentID}
			byKey[[2]string{k.CapabilityID, k.ComponentID}] = g
			groups = append(groups, g)
		}
		g.actions = append(g.actions, types.TransactWriteItem{Delete: &types.Delete{
			TableName:                &s.table,
			Key:                      keyOf(capabilityPK(k.CapabilityID), metricSK(k.ComponentID, k.MetricType, k.Timestamp)),
			ConditionExpression:      aws.String("attribute_not_exists(PK) OR #u = :u"),
			ExpressionAttributeNames: map[string]string{"#u": attrUpdatedAt},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":u": &types.AttributeValueMemberS{Value: keyTime(m.UpdatedAt.Time)},
			},
		}})
	}
	for _, g := range groups {
		for start := 0; start < len(g.actions); start += archiveChunk {
			d, k, err := s.deleteArchivedChunk(ctx, g.capabilityID, g.componentID, g.actions[start:min(start+archiveChunk, len(g.actions))])
			deleted, kept = deleted+d, kept+k
			if err != nil {
				return deleted, kept, fmt.Errorf("delete archived metrics: %w", err)
			}
		}
	}
	return deleted, kept, nil
}

// archiveChunk is how many sample deletes one TransactWriteItems of DeleteArchived holds: the
// rest of the 100 actions move the WriteSeq of METADATA and its two index items and put the
// change.
const archiveChunk = maxTransact - 4

// deleteArchivedChunk deletes chunk (samples of one capability's component) in one transaction
// with its change record, retrying without the samples whose condition failed and after a
// writer that moved the partition's WriteSeq in between.
func (s *Store) deleteArchivedChunk(ctx context.Context, capabilityID, componentID string, chunk []types.TransactWriteItem) (deleted, kept int, err error) {
	for attempt := 0; len(chunk) > 0; attempt++ {
		actions := append([]types.TransactWriteItem{}, chunk...)
		meta, err := s.readItem(ctx, capabilityPK(capabilityID), metadataSK, true)
		switch {
		case err == nil && !meta.Deleting:
			detail := fmt.Sprintf("%d samples moved to the archive", len(chunk))
			if len(chunk) == 1 {
				detail = "1 sample moved to the archive"
			}
			extra, err := s.changeAlone(ctx, meta, changeSpec{entity: catalog.ChangeMetric, entityID: componentID, action: catalog.ChangeArchived, detail: detail})
			if err != nil {
				return deleted, kept, err
			}
			actions = append(actions, extra...)
		case err != nil && !IsNotFound(err):
			return deleted, kept, err
		}
		// A capability gone or being deleted records no change: its samples go with it.
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err == nil {
			return deleted + len(chunk), kept, nil
		}
		var tce *types.TransactionCanceledException
		var tc *types.TransactionConflictException
		if (!errors.As(err, &tce) && !errors.As(err, &tc)) || attempt >= maxWriteAttempts {
			return deleted, kept, classify("delete archived metrics", err)
		}
		var rest []types.TransactWriteItem
		if tce != nil {
			for i, r := range tce.CancellationReasons {
				if i >= len(chunk) {
					continue // the partition's WriteSeq moved: read it again
				}
				if aws.ToString(r.Code) == "ConditionalCheckFailed" {
					kept++
					continue
				}
				rest = append(rest, chunk[i])
			}
		}
		if tce == nil || len(tce.CancellationReasons) == 0 {
			rest = chunk
		}
		chunk = rest
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return deleted, kept, err
		}
	}
	return deleted, kept, nil
}

// changeAlone returns the actions that record change c of a write that is not a mutation of the
// partition (an archive's deletes, an artifact upload): the WriteSeq of METADATA (conditioned
// on the one read, meta) and its index items moved on by one, and the change keyed with it.
func (s *Store) changeAlone(ctx context.Context, meta *item, c changeSpec) ([]types.TransactWriteItem, error) {
	capabilityID, err := parseCapabilityPK(meta.PK)
	if err != nil {
		return nil, err
	}
	next := meta.WriteSeq + 1
	var actions []types.TransactWriteItem
	for _, sk := range []string{metadataSK, domainIndexSK, healthIndexSK} {
		cond, values := "attribute_exists(PK)", map[string]types.AttributeValue{":next": num(next)}
		if sk == metadataSK {
			cond = "attribute_not_exists(Deleting) AND attribute_not_exists(WriteSeq)"
			if meta.WriteSeq > 0 {
				cond, values[":seq"] = "attribute_not_exists(Deleting) AND WriteSeq = :seq", num(meta.WriteSeq)
			}
		}
		actions = append(actions, types.TransactWriteItem{Update: &types.Update{
			TableName: &s.table, Key: keyOf(meta.PK, sk), UpdateExpression: aws.String("SET WriteSeq = :next"),
			ConditionExpression: aws.String(cond), ExpressionAttributeValues: values,
		}})
	}
	ch := s.changeItem(capabilityID, meta.CreatedAt, next, 0, meta.Revision, c, s.now())
	av, err := ch.av()
	if err != nil {
		return nil, err
	}
	stampWriter(ctx, av)
	return append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: av}}), nil
}

// DeleteMetrics deletes the metric items of keys with BatchWriteItem, maxBatchWrite keys a
// call, one call at a time, retrying UnprocessedItems with backoff. Deleting an item that does
// not exist is no error, so a rerun after an interruption is safe. It returns how many keys it
// deleted, which is len(keys) on success and, on error, how many were confirmed before it. A
// bad key is a *catalog.ValidationError and deletes nothing.
func (s *Store) DeleteMetrics(ctx context.Context, keys []MetricKey) (int, error) {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		if err := k.validate(fmt.Sprintf("keys[%d]", i)); err != nil {
			return 0, err
		}
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{
			Key: keyOf(capabilityPK(k.CapabilityID), metricSK(k.ComponentID, k.MetricType, k.Timestamp)),
		}}
	}
	deleted := 0
	for start := 0; start < len(reqs); start += maxBatchWrite {
		chunk := reqs[start:min(start+maxBatchWrite, len(reqs))]
		if err := s.writeChunk(ctx, chunk); err != nil {
			return deleted, fmt.Errorf("delete metrics: %w", err)
		}
		deleted += len(chunk)
	}
	return deleted, nil
}
