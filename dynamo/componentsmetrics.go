package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
)

// ComponentsWindow selects the samples of some of a capability's components over a time
// window (a job's target components while it ran).
type ComponentsWindow struct {
	CapabilityID string
	// ComponentIDs are the components read; none is an empty page.
	ComponentIDs []string
	// MetricType, when set, keeps only samples of that type.
	MetricType catalog.MetricType
	// From and To bound the window, both inclusive.
	From, To time.Time
	// Scope names the query its cursors are valid for (a job, its margin and metric type). The
	// window's bounds are not part of it: a window whose end moves between pages (a running
	// job's, ending now) keeps its cursors.
	Scope string
}

// ComponentsMetrics returns a page of the samples of w in time order (timestamp, then
// component ID, then metric type), from the table alone. It sends one Query per component, all
// at once (up to 64 in flight), each reading from the cursor's position up to first+1 samples
// and the few more that a timestamp split across pages may need: with a metric type the
// component's key range METRIC#{component}#{type}#… of the capability's partition, without
// one its time-ordered METRICS# index partition (eventually consistent: a sample written a
// moment ago may be missing). Expired samples are hidden. A component whose samples the page
// exhausts before it is full is read again (a second round trip; only when another
// capability's items share its index partition or many expired items fill its page).
//
// Each sample has a cursor naming its (timestamp, component, metric type), signed over
// w.Scope: pass the last one as after to continue. A cursor of another scope or capability, a
// tampered one, bad IDs, an unknown metric type, To before From or first out of 1 to
// MaxMetricsPage are a *catalog.ValidationError.
func (s *Store) ComponentsMetrics(ctx context.Context, w ComponentsWindow, first int, after string) (*Page[*catalog.Metric], error) {
	if err := ValidateID("capabilityId", w.CapabilityID); err != nil {
		return nil, err
	}
	for i, id := range w.ComponentIDs {
		if err := ValidateID(fmt.Sprintf("componentIds[%d]", i), id); err != nil {
			return nil, err
		}
	}
	if w.MetricType != "" && !w.MetricType.Valid() {
		return nil, catalog.Invalid("metricType", "%q is not a metric type", w.MetricType)
	}
	if w.To.Before(w.From) {
		return nil, catalog.Invalid("to", "must not be before from")
	}
	if err := checkFirst(first, MaxMetricsPage); err != nil {
		return nil, err
	}
	scope := "componentsMetrics|" + w.CapabilityID + "|" + w.Scope
	pos, err := s.decodeMetricPosition(scope, w.CapabilityID, after)
	if err != nil {
		return nil, err
	}
	ids := slices.Clone(w.ComponentIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	// A whole timestamp of a component holds up to one sample per type: the page of a
	// component may leave out its last timestamp (MetricsInRange) and the cursor's timestamp
	// may hold samples before the cursor, hence the margin over first+1.
	limit := min(max(first+1+2*len(catalog.MetricTypes), MinMetricRangePage), MaxMetricRangePage)
	streams := make([]*componentStream, len(ids))
	for i, id := range ids {
		st := &componentStream{r: MetricRange{CapabilityID: w.CapabilityID, ComponentID: id, MetricType: w.MetricType, From: w.From, Before: w.To.Add(time.Microsecond)}, pos: pos, limit: limit}
		if pos != nil {
			// Nothing before the cursor's timestamp; for a component ordered before the
			// cursor's, nothing at it either.
			from := pos.Timestamp
			if id < pos.ComponentID {
				from = from.Add(time.Microsecond)
			}
			if from.After(st.r.From) {
				st.r.From = from
			}
		}
		if !st.r.Before.After(st.r.From) {
			st.done = true
		}
		streams[i] = st
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxConcurrentReads)
	for _, st := range streams {
		g.Go(func() error { return st.fill(gctx, s) })
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", w.CapabilityID, err)
	}
	var items []*catalog.Metric
	for len(items) <= first {
		var best *componentStream
		for _, st := range streams {
			if len(st.buf) == 0 && !st.done {
				if err := st.fill(ctx, s); err != nil {
					return nil, fmt.Errorf("read metrics of %s: %w", w.CapabilityID, err)
				}
			}
			if len(st.buf) > 0 && (best == nil || metricLess(st.buf[0], best.buf[0])) {
				best = st
			}
		}
		if best == nil {
			break
		}
		items = append(items, best.buf[0])
		best.buf = best.buf[1:]
	}
	p := &Page[*catalog.Metric]{HasNext: len(items) > first}
	if p.HasNext {
		items = items[:first]
	}
	p.Items, p.Cursors = items, make([]string, len(items))
	for i, m := range items {
		p.Cursors[i] = s.encodeMetricPosition(scope, m)
	}
	return p, nil
}

// componentStream is one component's samples of a ComponentsWindow in time order, read a page
// at a time as the merge needs them.
type componentStream struct {
	r     MetricRange
	pos   *MetricKey
	limit int
	buf   []*catalog.Metric
	done  bool
}

// fill reads the stream's next page until it holds a sample or the range is done.
func (st *componentStream) fill(ctx context.Context, s *Store) error {
	for len(st.buf) == 0 && !st.done {
		ms, more, err := s.MetricsInRange(ctx, st.r, st.limit)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if st.pos == nil || metricLess(&catalog.Metric{Timestamp: catalog.NewTimestamp(st.pos.Timestamp), ComponentID: st.pos.ComponentID, MetricType: st.pos.MetricType}, m) {
				st.buf = append(st.buf, m)
			}
		}
		if !more || len(ms) == 0 {
			st.done = true
		} else {
			st.r.From = ms[len(ms)-1].Timestamp.Add(time.Microsecond)
		}
	}
	return nil
}

// metricLess orders samples by timestamp, then component ID, then metric type.
func metricLess(a, b *catalog.Metric) bool {
	if !a.Timestamp.Equal(b.Timestamp.Time) {
		return a.Timestamp.Before(b.Timestamp.Time)
	}
	if a.ComponentID != b.ComponentID {
		return a.ComponentID < b.ComponentID
	}
	return a.MetricType < b.MetricType
}

// encodeMetricPosition returns the cursor of m within the query identified by scope: the key of
// its item, signed over the scope.
func (s *Store) encodeMetricPosition(scope string, m *catalog.Metric) string {
	body, _ := json.Marshal(cursorPayload{PK: capabilityPK(m.CapabilityID), SK: metricSK(m.ComponentID, m.MetricType, m.Timestamp.Time)})
	return s.cursors.Encode(scope, body)
}

// decodeMetricPosition returns the position of a cursor issued by encodeMetricPosition for the
// same scope and capability, nil for an empty cursor. Anything else is a
// *catalog.ValidationError on field "after".
func (s *Store) decodeMetricPosition(scope, capabilityID, cursor string) (*MetricKey, error) {
	if cursor == "" {
		return nil, nil
	}
	p, err := s.cursorPayload(scope, cursor)
	if err != nil {
		return nil, err
	}
	if p.PK != capabilityPK(capabilityID) {
		return nil, errBadCursor()
	}
	comp, t, at, err := parseMetricSK(p.SK)
	if err != nil {
		return nil, errBadCursor()
	}
	return &MetricKey{CapabilityID: capabilityID, ComponentID: comp, MetricType: t, Timestamp: at}, nil
}
