package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/lru"
)

// clockSkew is how far ahead of this process's clock an archiving process's clock may be: the
// hours it may have archived are looked for that much further.
const clockSkew = 5 * time.Minute

// readParallel bounds the components whose first samples Metrics fetches at once.
const readParallel = 16

// MetricsQuery selects a window of metric samples of one capability, across the table and the
// archive.
type MetricsQuery struct {
	// CapabilityID is required: the archive's keys start with it.
	CapabilityID string
	// ComponentID, when set, selects one component; otherwise every component of the
	// capability.
	ComponentID string
	// ComponentIDs, for a capability-wide window, names the components to read, typically the
	// capability's components already loaded. When empty they are discovered: the components
	// with metrics in the table (one Limit-1 Query per component) and, when the window reaches
	// into the archive, those with archived hours (one ListObjectsV2 with a delimiter).
	ComponentIDs []string
	// MetricType, when set, keeps only samples of that type.
	MetricType catalog.MetricType
	// From and To bound the window, both inclusive; nil is open.
	From, To *time.Time
	// First is the page size, 1 to dynamo.MaxMetricsPage.
	First int
	// After is the cursor of the sample to continue after; empty means the start.
	After string
	// Scope, when set, names the query its cursors are valid for in place of the fields above:
	// a caller whose window moves between pages (a running job's, ending now) names the query
	// itself, so that its cursors outlive the window's bounds.
	Scope string
}

// Metrics returns a page of the samples of q in time order (timestamp, then component ID,
// then metric type), merging the table with the archive. The table is always read: a key range
// of each component's time-ordered metrics index, expired items hidden. The archive is read
// only for the part of the window older than the Store's MinArchiveAge (plus 5 minutes for
// clocks that differ), which is all it can hold, and there only the component-hour objects that
// exist, found by listing each component's folder from the window's first hour
// (ListObjectsV2 with StartAfter, one request per 1000 archived hours) and read with one
// GetObject per hour that the page reaches. A sample found in both (an archive run between
// writing and deleting) is returned once, the table's copy. A window within the last
// MinArchiveAge (less 5 minutes) costs no S3 request at all.
//
// Each sample has a cursor; pass the last one as q.After for the next page. Cursors are signed
// and hold the last (timestamp, component, metric type) returned, so a page after an archive
// run moved samples continues exactly where the previous one stopped. A cursor of another
// query, bad IDs, an unknown metric type, To before From or First out of range are a
// *catalog.ValidationError; an archived object that does not hold its hour's samples wraps
// blob.ErrCorrupt; S3 failures wrap blob.ErrUnavailable, table failures dynamo's sentinels. No partial
// page is returned with an error.
func (a *Archiver) Metrics(ctx context.Context, q MetricsQuery) (*dynamo.Page[*catalog.Metric], error) {
	w, err := a.window(q)
	if err != nil {
		return nil, err
	}
	pos, err := a.decodeCursor(w.scope, q.After)
	if err != nil {
		return nil, err
	}
	w.pos = pos
	if pos != nil && pos.Timestamp.After(w.from) {
		w.from = pos.Timestamp
	}
	archiveEnd := a.obj.Now().Add(-a.obj.MinArchiveAge() + clockSkew).UTC().Truncate(time.Hour)
	w.archiveEnd = archiveEnd
	if w.to != nil && !w.to.Add(time.Microsecond).After(archiveEnd) {
		w.archiveEnd = w.to.Add(time.Microsecond)
	}
	w.useArchive = w.from.IsZero() || w.from.Before(w.archiveEnd)
	comps, err := a.components(ctx, q, w)
	if err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", q.CapabilityID, err)
	}
	streams := make([]*stream, len(comps))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallel)
	for i, comp := range comps {
		streams[i] = &stream{a: a, w: w, comp: comp, tableFrom: w.from, limit: min(max(q.First+1+len(catalog.MetricTypes), dynamo.MinMetricRangePage), dynamo.MaxMetricRangePage)}
		g.Go(func() error {
			_, err := streams[i].peek(gctx)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", q.CapabilityID, err)
	}
	var items []*catalog.Metric
	for len(items) <= q.First {
		var best *stream
		for _, s := range streams {
			h, err := s.peek(ctx)
			if err != nil {
				return nil, fmt.Errorf("read metrics of %s: %w", q.CapabilityID, err)
			}
			if h != nil && (best == nil || blob.MetricLess(h, best.head)) {
				best = s
			}
		}
		if best == nil {
			break
		}
		items = append(items, best.pop())
	}
	p := &dynamo.Page[*catalog.Metric]{HasNext: len(items) > q.First}
	if p.HasNext {
		items = items[:q.First]
	}
	p.Items = items
	p.Cursors = make([]string, len(items))
	for i, m := range items {
		p.Cursors[i] = a.encodeCursor(w.scope, m)
	}
	return p, nil
}

// window is a validated MetricsQuery.
type window struct {
	capabilityID string
	metricType   catalog.MetricType
	// from is the first instant to read (inclusive, zero for open); to the last (nil for
	// open), both in whole microseconds.
	from time.Time
	to   *time.Time
	// pos is the cursor's position: only samples after it are returned.
	pos   *dynamo.MetricKey
	scope string
	// archiveEnd bounds the archive's part of the window (exclusive); useArchive says whether
	// there is such a part.
	archiveEnd time.Time
	useArchive bool
}

func (a *Archiver) window(q MetricsQuery) (*window, error) {
	if err := dynamo.ValidateID("capabilityId", q.CapabilityID); err != nil {
		return nil, err
	}
	if q.ComponentID != "" {
		if err := dynamo.ValidateID("componentId", q.ComponentID); err != nil {
			return nil, err
		}
	}
	for i, id := range q.ComponentIDs {
		if err := dynamo.ValidateID(fmt.Sprintf("componentIds[%d]", i), id); err != nil {
			return nil, err
		}
	}
	if q.MetricType != "" && !q.MetricType.Valid() {
		return nil, catalog.Invalid("metricType", "%q is not a metric type", q.MetricType)
	}
	if q.From != nil && q.To != nil && q.To.Before(*q.From) {
		return nil, catalog.Invalid("to", "must not be before from")
	}
	if q.First < 1 || q.First > dynamo.MaxMetricsPage {
		return nil, catalog.Invalid("first", "must be between 1 and %d, got %d", dynamo.MaxMetricsPage, q.First)
	}
	w := &window{capabilityID: q.CapabilityID, metricType: q.MetricType}
	if q.From != nil {
		w.from = q.From.UTC().Truncate(time.Microsecond)
		if w.from.Before(*q.From) {
			w.from = w.from.Add(time.Microsecond)
		}
	}
	if q.To != nil {
		to := q.To.UTC().Truncate(time.Microsecond)
		w.to = &to
	}
	bound := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(catalog.TimeLayout)
	}
	w.scope = strings.Join([]string{"hybridMetrics", q.CapabilityID, q.ComponentID, string(q.MetricType), bound(q.From), bound(q.To)}, "|")
	if q.Scope != "" {
		w.scope = "scopedMetrics|" + q.CapabilityID + "|" + q.Scope
	}
	return w, nil
}

// components returns the components a query reads, sorted.
func (a *Archiver) components(ctx context.Context, q MetricsQuery, w *window) ([]string, error) {
	if q.ComponentID != "" {
		return []string{q.ComponentID}, nil
	}
	ids := slices.Clone(q.ComponentIDs)
	if len(ids) == 0 {
		fromTable, err := a.db.MetricComponentIDs(ctx, q.CapabilityID)
		if err != nil {
			return nil, err
		}
		ids = fromTable
		if w.useArchive {
			archived, err := a.obj.ArchivedComponents(ctx, q.CapabilityID)
			if err != nil {
				return nil, err
			}
			ids = append(ids, archived...)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// stream is one component's samples in a window, in time order: the table's and the
// archive's, merged lazily as the page needs them.
type stream struct {
	a     *Archiver
	w     *window
	comp  string
	limit int
	head  *catalog.Metric

	tableFrom time.Time
	tableDone bool
	tableBuf  []*catalog.Metric

	listStarted bool
	listDone    bool
	listToken   *string
	hours       []blob.ArchivedHour
	archiveBuf  []*catalog.Metric
}

// wanted reports whether m is in the window and after the cursor.
func (s *stream) wanted(m *catalog.Metric) bool {
	w := s.w
	switch {
	case w.metricType != "" && m.MetricType != w.metricType:
		return false
	case !w.from.IsZero() && m.Timestamp.Before(w.from):
		return false
	case w.to != nil && m.Timestamp.After(*w.to):
		return false
	case w.pos != nil:
		p := &catalog.Metric{Timestamp: catalog.Timestamp{Time: w.pos.Timestamp}, ComponentID: w.pos.ComponentID, MetricType: w.pos.MetricType}
		return blob.MetricLess(p, m)
	}
	return true
}

// peek returns the stream's next sample without consuming it, or nil at its end.
func (s *stream) peek(ctx context.Context) (*catalog.Metric, error) {
	if s.head != nil {
		return s.head, nil
	}
	t, err := s.peekTable(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.peekArchive(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case t == nil && a == nil:
		return nil, nil
	case a == nil || (t != nil && blob.MetricLess(t, a)):
		s.head, s.tableBuf = t, s.tableBuf[1:]
	case t == nil || blob.MetricLess(a, t):
		s.head, s.archiveBuf = a, s.archiveBuf[1:]
	default: // the same sample in both: the table's copy wins
		s.head, s.tableBuf, s.archiveBuf = t, s.tableBuf[1:], s.archiveBuf[1:]
	}
	return s.head, nil
}

// pop consumes the sample peek returned.
func (s *stream) pop() *catalog.Metric {
	h := s.head
	s.head = nil
	return h
}

func (s *stream) peekTable(ctx context.Context) (*catalog.Metric, error) {
	for len(s.tableBuf) == 0 && !s.tableDone {
		r := dynamo.MetricRange{CapabilityID: s.w.capabilityID, ComponentID: s.comp, MetricType: s.w.metricType, From: s.tableFrom}
		if s.w.to != nil {
			r.Before = s.w.to.Add(time.Microsecond)
		}
		ms, more, err := s.a.db.MetricsInRange(ctx, r, s.limit)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if s.wanted(m) {
				s.tableBuf = append(s.tableBuf, m)
			}
		}
		if !more || len(ms) == 0 {
			s.tableDone = true
		} else {
			s.tableFrom = ms[len(ms)-1].Timestamp.Add(time.Microsecond)
		}
	}
	if len(s.tableBuf) == 0 {
		return nil, nil
	}
	return s.tableBuf[0], nil
}

func (s *stream) peekArchive(ctx context.Context) (*catalog.Metric, error) {
	if !s.w.useArchive {
		return nil, nil
	}
	for len(s.archiveBuf) == 0 {
		if len(s.hours) == 0 {
			if s.listDone {
				return nil, nil
			}
			if err := s.list(ctx); err != nil {
				return nil, err
			}
			continue
		}
		h := s.hours[0]
		s.hours = s.hours[1:]
		if err := s.read(ctx, h); err != nil {
			return nil, err
		}
	}
	return s.archiveBuf[0], nil
}

// list reads the next page of the component's archived hours, from the window's first hour to
// the end of the archive's part of the window.
func (s *stream) list(ctx context.Context) error {
	var token *string
	if s.listStarted {
		token = s.listToken
	}
	s.listStarted = true
	hours, next, err := s.a.obj.ListArchivedHours(ctx, s.w.capabilityID, s.comp, s.w.from, token)
	if err != nil {
		return err
	}
	for _, h := range hours {
		if !h.Hour.Before(s.w.archiveEnd) {
			s.listDone = true
			return nil
		}
		if !s.w.from.IsZero() && !h.Hour.Add(time.Hour).After(s.w.from) {
			continue
		}
		s.hours = append(s.hours, h)
	}
	s.listToken = next
	if next == nil {
		s.listDone = true
	}
	return nil
}

// read loads one archived hour into the archive buffer.
func (s *stream) read(ctx context.Context, h blob.ArchivedHour) error {
	ms, err := s.a.hour(ctx, h, s.w.capabilityID, s.comp)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if s.wanted(m) {
			s.archiveBuf = append(s.archiveBuf, m)
		}
	}
	return nil
}

// hour returns the samples of an archived hour of a component, checked and sorted: from the
// cache when it holds the version the listing saw (h.ETag), else from S3, kept under the
// version that GetObject returned. Nothing (and no error) when the object is gone since the
// listing. The samples are shared: readers do not modify them.
func (a *Archiver) hour(ctx context.Context, h blob.ArchivedHour, capabilityID, componentID string) ([]*catalog.Metric, error) {
	if a.hours != nil && h.ETag != "" {
		if ms, ok := a.hours.Get(hourCacheKey(h.Key, h.ETag)); ok {
			return ms, nil
		}
	}
	obj := a.obj
	data, etag, err := obj.GetMetricsObjectVersion(ctx, h.Key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil // gone since the listing
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", obj.MetricsURI(h.Key), err)
	}
	ms, err := blob.DecodeMetrics(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", obj.MetricsURI(h.Key), err)
	}
	if err := blob.CheckHour(ms, capabilityID, componentID, h.Hour); err != nil {
		return nil, fmt.Errorf("read %s: %w", obj.MetricsURI(h.Key), err)
	}
	blob.SortMetrics(ms)
	if a.hours != nil && etag != "" {
		a.hours.Add(hourCacheKey(h.Key, etag), ms, lru.JSONWeight(ms))
	}
	return ms, nil
}

// hourCacheKey names a version of an archived hour's object.
func hourCacheKey(key, etag string) string { return key + "\x00" + etag }

// CachedHours returns how many archived hours the cache holds and their estimated bytes.
func (a *Archiver) CachedHours() (entries, bytes int) {
	if a.hours == nil {
		return 0, 0
	}
	return a.hours.Len()
}

// cursorPayload is the position a cursor of Metrics points at.
type cursorPayload struct {
	T string `json:"t"`
	C string `json:"c"`
	M string `json:"m"`
}

// encodeCursor returns the cursor of m within the query identified by scope, signed with the
// Store's secret over the scope so that only the same query accepts it.
func (a *Archiver) encodeCursor(scope string, m *catalog.Metric) string {
	body, _ := json.Marshal(cursorPayload{T: m.Timestamp.String(), C: m.ComponentID, M: string(m.MetricType)})
	return a.cursors.Encode(scope, body)
}

// decodeCursor returns the position of a cursor issued by encodeCursor for the same scope, nil
// for an empty cursor. Anything else is a *catalog.ValidationError on field "after".
func (a *Archiver) decodeCursor(scope, cursor string) (*dynamo.MetricKey, error) {
	if cursor == "" {
		return nil, nil
	}
	bad := catalog.Invalid("after", "cursor is not valid for this query")
	body, ok := a.cursors.Decode(scope, cursor)
	if !ok {
		return nil, bad
	}
	var p cursorPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, bad
	}
	t, err := time.Parse(catalog.TimeLayout, p.T)
	if err != nil {
		return nil, bad
	}
	return &dynamo.MetricKey{ComponentID: p.C, MetricType: catalog.MetricType(p.M), Timestamp: t}, nil
}

// Reaches reports whether a metrics window starting at from (nil: open) may hold archived
// samples: whether it starts before the archive boundary (now less MinArchiveAge, plus the
// clock-skew margin). A window that does not reach it is answered by DynamoDB alone.
func (a *Archiver) Reaches(from *time.Time) bool {
	if from == nil {
		return true
	}
	end := a.obj.Now().Add(-a.obj.MinArchiveAge() + clockSkew).UTC().Truncate(time.Hour)
	return from.Before(end)
}
