package archive_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// archiveBefore is the boundary of these tests' archive runs: every component-hour before
// 2026-03-09T00:00Z moves (the half hour is cut off: only whole hours move).
var archiveBefore = time.Date(2026, 3, 9, 0, 30, 0, 0, time.UTC)

// queries are the windows read before and after archiving: whole capabilities, one component,
// one type, a window across the boundary, one only in the archive, one only in the table.
func queries() []archive.MetricsQuery {
	at := func(d, h, m int) *time.Time { t := time.Date(2026, 3, d, h, m, 0, 0, time.UTC); return &t }
	return []archive.MetricsQuery{
		{CapabilityID: "CAP-ARC-A"},
		{CapabilityID: "CAP-ARC-B"},
		{CapabilityID: "CAP-ARC-A", ComponentID: "api-1"},
		{CapabilityID: "CAP-ARC-B", ComponentID: "api-1"},
		{CapabilityID: "CAP-ARC-A", ComponentID: "old-1"},
		{CapabilityID: "CAP-ARC-A", MetricType: catalog.MetricResource},
		{CapabilityID: "CAP-ARC-A", From: at(8, 20, 2), To: at(9, 3, 7)},
		{CapabilityID: "CAP-ARC-B", ComponentID: "worker-1", MetricType: catalog.MetricSecurity, From: at(8, 12, 0), To: at(9, 1, 0)},
		{CapabilityID: "CAP-ARC-A", ComponentID: "db-1", From: at(8, 10, 30), To: at(8, 11, 29)},
		{CapabilityID: "CAP-ARC-A", From: at(10, 0, 0)},
	}
}

// pointsOf returns, for each query, the points it reads (first a page).
func (e *env) pointsOf(tb testing.TB, first int) [][]string {
	tb.Helper()
	var out [][]string
	for _, q := range queries() {
		out = append(out, e.readAll(tb, q, first))
	}
	return out
}

// hoursBefore counts the samples of bundles before t and their distinct component-hours.
func hoursBefore(bundles []*catalog.Bundle, t time.Time) (points, hours int) {
	seen := map[string]bool{}
	for _, b := range bundles {
		for _, m := range b.Metrics {
			if m.Timestamp.Before(t) {
				points++
				seen[b.Capability.CapabilityID+"/"+m.ComponentID+"/"+m.Timestamp.Truncate(time.Hour).String()] = true
			}
		}
	}
	return points, len(seen)
}

func TestArchiveThenRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bundles := testBundles()
	e.load(t, bundles)
	ctx := context.Background()

	// The reads see the catalogue as loaded.
	for _, q := range queries() {
		sameList(t, fmt.Sprintf("Metrics(%s) before archiving", describe(q)), e.readAll(t, q, 1000), expected(t, bundles, q))
	}
	before := e.pointsOf(t, 97)
	small := archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "api-1"}
	smallBefore := e.readAll(t, small, 13)

	var events []archive.Progress
	rep, err := e.arch.Archive(ctx, archiveBefore, func(p archive.Progress) { events = append(events, p) })
	if err != nil {
		t.Fatalf("Archive(%s) = %+v, %v", archiveBefore.Format(time.RFC3339), rep, err)
	}
	cutoff := archiveBefore.Truncate(time.Hour)
	points, hours := hoursBefore(bundles, cutoff)
	var oldest time.Time // the oldest sample left: the first at or after the cutoff
	for _, b := range bundles {
		for _, m := range b.Metrics {
			if !m.Timestamp.Before(cutoff) && (oldest.IsZero() || m.Timestamp.Before(oldest)) {
				oldest = m.Timestamp.Time
			}
		}
	}
	want := archive.Report{Before: cutoff, Capabilities: 2, Components: 5, ObjectsWritten: hours, PointsArchived: points, ItemsDeleted: points, BytesWritten: rep.BytesWritten, OldestUnarchived: oldest}
	if rep != want || rep.BytesWritten == 0 {
		t.Errorf("Archive(%s) = %+v, want %+v", archiveBefore.Format(time.RFC3339), rep, want)
	}
	st, err := e.db.Store.ArchiveState(ctx)
	if err != nil || !st.OldestUnarchived.Equal(oldest) || st.RanAt.IsZero() {
		t.Errorf("ArchiveState after the run = %+v, %v; want oldest %s", st, err, oldest)
	}
	totals, last := rep, archive.Report{}
	totals.OldestUnarchived = time.Time{} // known once every component is done
	if len(events) > 0 {
		last = events[len(events)-1].Totals
		last.OldestUnarchived = time.Time{}
	}
	if len(events) != hours || last != totals {
		t.Errorf("Archive(%s) reported %d progress events, want %d ending with the totals", archiveBefore.Format(time.RFC3339), len(events), hours)
	}
	ev := events[0]
	if ev.CapabilityID != "CAP-ARC-A" || ev.ComponentID != "api-1" || !ev.Hour.Equal(time.Date(2026, 3, 7, 22, 0, 0, 0, time.UTC)) ||
		ev.URI != "s3://capability-metrics/capabilities/CAP-ARC-A/components/api-1/2026/03/07/metrics-22.json.gz" || ev.Points != 8 || ev.Deleted != 8 {
		t.Errorf("Archive first progress = %+v, want CAP-ARC-A api-1 2026-03-07T22 with 8 points", ev)
	}

	// The table keeps only what is recent; the bucket holds one object per component-hour.
	for _, capID := range []string{"CAP-ARC-A", "CAP-ARC-B"} {
		from := cutoff
		sameList(t, "table of "+capID+" after archiving", e.tablePoints(t, capID), expected(t, bundles, archive.MetricsQuery{CapabilityID: capID, From: &from}))
	}
	objs := e.objects(t)
	if len(objs) != hours {
		t.Errorf("metrics bucket holds %d objects after archiving, want %d", len(objs), hours)
	}
	key := "capabilities/CAP-ARC-A/components/db-1/2026/03/08/metrics-11.json.gz"
	ms, err := blob.DecodeMetrics(objs[key])
	if err != nil || len(ms) != 60 {
		t.Fatalf("DecodeMetrics(%s) = %d samples, %v; want 60", key, len(ms), err)
	}
	for i, m := range ms {
		if want := time.Date(2026, 3, 8, 11, i, 0, 0, time.UTC); !m.Timestamp.Equal(want) || m.ComponentID != "db-1" || m.CapabilityID != "CAP-ARC-A" {
			t.Fatalf("DecodeMetrics(%s)[%d] = %s %s/%s, want db-1 at %s", key, i, m.Timestamp, m.CapabilityID, m.ComponentID, want)
		}
	}

	// Every read returns exactly what it returned before, in the same order.
	after := e.pointsOf(t, 97)
	for i, q := range queries() {
		sameList(t, fmt.Sprintf("Metrics(%s) after archiving", describe(q)), after[i], before[i])
	}
	for _, q := range queries()[:3] {
		sameList(t, fmt.Sprintf("Metrics(%s, first: 1000) after archiving", describe(q)), e.readAll(t, q, 1000), expected(t, bundles, q))
	}
	sameList(t, fmt.Sprintf("Metrics(%s, first: 13) after archiving", describe(small)), e.readAll(t, small, 13), smallBefore)
}

func TestArchiveRerunIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bundles := testBundles()
	e.load(t, bundles)
	ctx := context.Background()
	if _, err := e.arch.Archive(ctx, archiveBefore, nil); err != nil {
		t.Fatalf("Archive() = %v", err)
	}
	first := e.objects(t)

	// Nothing left to archive: a rerun writes nothing.
	rep, err := e.arch.Archive(ctx, archiveBefore, nil)
	if err != nil || rep.ObjectsWritten != 0 || rep.ItemsDeleted != 0 || rep.Capabilities != 2 {
		t.Errorf("Archive() again = %+v, %v; want 2 capabilities scanned and nothing written", rep, err)
	}

	// As if every delete had failed: the table holds the archived samples again. The rerun
	// merges, and writes the very same bytes.
	e.load(t, bundles)
	rep, err = e.arch.Archive(ctx, archiveBefore, nil)
	points, hours := hoursBefore(bundles, archiveBefore.Truncate(time.Hour))
	if err != nil || rep.ObjectsWritten != hours || rep.ObjectsMerged != hours || rep.PointsArchived != points || rep.ItemsDeleted != points {
		t.Errorf("Archive() over undeleted samples = %+v, %v; want %d objects merged, %d points", rep, err, hours, points)
	}
	second := e.objects(t)
	if len(second) != len(first) {
		t.Fatalf("metrics bucket holds %d objects after the rerun, want %d", len(second), len(first))
	}
	for k, b := range first {
		if !bytes.Equal(second[k], b) {
			t.Errorf("object %s changed on rerun (%d bytes, then %d)", k, len(b), len(second[k]))
		}
	}
	for k, b := range first {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gzip.NewReader(%s) = %v", k, err)
		}
		if !zr.ModTime.IsZero() || zr.Name != "" {
			t.Errorf("gzip header of %s = mtime %v, name %q; want neither", k, zr.ModTime, zr.Name)
		}
		break
	}
	from := archiveBefore.Truncate(time.Hour)
	sameList(t, "table of CAP-ARC-A after the rerun", e.tablePoints(t, "CAP-ARC-A"), expected(t, bundles, archive.MetricsQuery{CapabilityID: "CAP-ARC-A", From: &from}))
}

func TestEncodeMetricsIsDeterministic(t *testing.T) {
	ms := series("api-1", []catalog.MetricType{catalog.MetricPerformance, catalog.MetricResource}, time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC), 12, 5*time.Minute)
	for _, m := range ms {
		m.CapabilityID = "CAP-ARC-A"
	}
	a, err := blob.EncodeMetrics(ms)
	if err != nil {
		t.Fatalf("EncodeMetrics(%d samples) = %v", len(ms), err)
	}
	reversed := slices.Clone(ms)
	slices.Reverse(reversed)
	b, err := blob.EncodeMetrics(reversed)
	if err != nil || !bytes.Equal(a, b) {
		t.Errorf("EncodeMetrics(reversed) = %d bytes, %v; want the same %d bytes", len(b), err, len(a))
	}
	back, err := blob.DecodeMetrics(a)
	if err != nil || len(back) != len(ms) {
		t.Fatalf("DecodeMetrics(EncodeMetrics(%d samples)) = %d, %v", len(ms), len(back), err)
	}
	for i := range ms {
		if got, want := point(t, back[i]), point(t, ms[i]); got != want {
			t.Errorf("DecodeMetrics(EncodeMetrics)[%d] = %s, want %s", i, got, want)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatalf("gzip.NewReader(EncodeMetrics) = %v", err)
	}
	if !zr.ModTime.IsZero() {
		t.Errorf("EncodeMetrics gzip header ModTime = %v, want zero", zr.ModTime)
	}
	for _, bad := range [][]byte{nil, []byte("not gzip"), mustGzip(t, "{}"), mustGzip(t, "[null]")} {
		if _, err := blob.DecodeMetrics(bad); !errors.Is(err, blob.ErrCorrupt) {
			t.Errorf("DecodeMetrics(%q) = %v, want an error wrapping ErrCorrupt", bad, err)
		}
	}
}

func mustGzip(tb testing.TB, s string) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		tb.Fatalf("gzip: %v", err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatalf("gzip: %v", err)
	}
	return b.Bytes()
}

// failDeletes makes the table answer the archive's delete calls (TransactWriteItems) after
// the first n with a 500, until cleared.
func failDeletes(e *env, n int) {
	var mu sync.Mutex
	seen := 0
	e.db.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op != "TransactWriteItems" { // the archive's conditional deletes
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen <= n {
			return false
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected fault"}`))
		return true
	}
	e.db.Counter.Reset()
}

func isMetricsObject(key string) bool { return strings.HasSuffix(key, ".json.gz") }

func TestArchiveFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db1Hour := "/capability-metrics/capabilities/CAP-ARC-A/components/db-1/2026/03/08/metrics-11.json.gz"
	tests := []struct {
		name string
		// inject sets the fault; the run is expected to fail with it.
		inject func(e *env)
		// between checks the state the failed run left.
		between func(t *testing.T, e *env, bundles []*catalog.Bundle)
	}{
		{
			name: "after the upload",
			inject: func(e *env) {
				put := false
				e.faults.Set(func(method, key string) bool {
					if key != db1Hour {
						return false
					}
					if method == http.MethodPut {
						put = true
						return false
					}
					return put && method == http.MethodGet
				})
			},
			between: func(t *testing.T, e *env, _ []*catalog.Bundle) {
				if _, ok := e.objects(t)[strings.TrimPrefix(db1Hour, "/capability-metrics/")]; !ok {
					t.Errorf("after a fault past the upload, %s is missing", db1Hour)
				}
			},
		},
		{
			name:   "after the upload, before any delete",
			inject: func(e *env) { failDeletes(e, 0) },
		},
		{
			name: "after some hours' deletes",
			inject: func(e *env) {
				// Each hour's deletes are one TransactWriteItems (up to 100 items). Let the
				// archive delete CAP-ARC-A's api-1 (26 hours, one call each) and fail db-1's
				// first hour.
				failDeletes(e, 26)
			},
		},
		{
			name: "during the upload",
			inject: func(e *env) {
				e.faults.Set(func(method, key string) bool { return method == http.MethodPut && key == db1Hour })
			},
		},
		{
			name: "while reading the table",
			inject: func(e *env) {
				var mu sync.Mutex
				n := 0
				e.db.Counter.Before = func(op string, w http.ResponseWriter) bool {
					mu.Lock()
					defer mu.Unlock()
					if op != "Query" {
						return false
					}
					if n++; n < 12 {
						return false
					}
					w.Header().Set("Content-Type", "application/x-amz-json-1.0")
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"injected fault"}`))
					return true
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			bundles := testBundles()
			e.load(t, bundles)
			want := e.pointsOf(t, 1000)
			tt.inject(e)
			rep, err := e.arch.Archive(ctx, archiveBefore, nil)
			if err == nil {
				t.Fatalf("Archive() with a fault %s = %+v, nil; want an error", tt.name, rep)
			}
			e.faults.Set(nil)
			e.db.Counter.Before = nil
			if tt.between != nil {
				tt.between(t, e, bundles)
			}
			// Interrupted, the reads still see every point once.
			got := e.pointsOf(t, 241)
			for i, q := range queries() {
				sameList(t, fmt.Sprintf("Metrics(%s) after a fault %s", describe(q), tt.name), got[i], want[i])
			}
			// The rerun completes the archive.
			rep2, err := e.arch.Archive(ctx, archiveBefore, nil)
			if err != nil {
				t.Fatalf("Archive() rerun after a fault %s = %v", tt.name, err)
			}
			points, hours := hoursBefore(bundles, archiveBefore.Truncate(time.Hour))
			if rep.PointsArchived+rep2.PointsArchived < points || rep.ItemsDeleted+rep2.ItemsDeleted < points {
				t.Errorf("Archive() with a fault %s then rerun archived %d+%d points, deleted %d+%d items; want %d each", tt.name,
					rep.PointsArchived, rep2.PointsArchived, rep.ItemsDeleted, rep2.ItemsDeleted, points)
			}
			objs := e.objects(t)
			if len(objs) != hours {
				t.Errorf("metrics bucket after a fault %s and a rerun holds %d objects, want %d", tt.name, len(objs), hours)
			}
			total := 0
			for k, b := range objs {
				ms, err := blob.DecodeMetrics(b)
				if err != nil {
					t.Fatalf("DecodeMetrics(%s) = %v", k, err)
				}
				total += len(ms)
			}
			if total != points {
				t.Errorf("metrics bucket after a fault %s and a rerun holds %d samples, want %d", tt.name, total, points)
			}
			from := archiveBefore.Truncate(time.Hour)
			for _, capID := range []string{"CAP-ARC-A", "CAP-ARC-B"} {
				sameList(t, "table of "+capID+" after a fault "+tt.name+" and a rerun", e.tablePoints(t, capID), expected(t, bundles, archive.MetricsQuery{CapabilityID: capID, From: &from}))
			}
			got = e.pointsOf(t, 1000)
			for i, q := range queries() {
				sameList(t, fmt.Sprintf("Metrics(%s) after a fault %s and a rerun", describe(q), tt.name), got[i], want[i])
			}
		})
	}
}

func TestMetricsReadFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bundles := testBundles()
	e.load(t, bundles)
	ctx := context.Background()
	q := archive.MetricsQuery{CapabilityID: "CAP-ARC-A", First: 1000}
	want := expected(t, bundles, q)
	if _, err := e.arch.Archive(ctx, archiveBefore, nil); err != nil {
		t.Fatalf("Archive() = %v", err)
	}
	tests := []struct {
		name string
		fail func(method, key string) bool
	}{
		{"every GET", func(method, key string) bool { return method == http.MethodGet && isMetricsObject(key) }},
		{"one hour's GET", func(method, key string) bool {
			return method == http.MethodGet && strings.HasSuffix(key, "/db-1/2026/03/08/metrics-11.json.gz")
		}},
		{"the listing", func(method, key string) bool { return method == http.MethodGet && !isMetricsObject(key) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.faults.Set(tt.fail)
			p, err := e.arch.Metrics(ctx, q)
			if !errors.Is(err, blob.ErrUnavailable) || p != nil {
				t.Errorf("Metrics(%s) with a failing %s = %v, %v; want no page and an error wrapping ErrUnavailable", describe(q), tt.name, p, err)
			}
			e.faults.Set(nil)
			sameList(t, fmt.Sprintf("Metrics(%s) retried after a failing %s", describe(q), tt.name), e.readAll(t, q, 1000), want)
		})
	}

	t.Run("a corrupt object", func(t *testing.T) {
		key := "capabilities/CAP-ARC-A/components/db-1/2026/03/08/metrics-11.json.gz"
		other, err := blob.EncodeMetrics(series("db-1", []catalog.MetricType{catalog.MetricPerformance}, time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC), 2, time.Minute))
		if err != nil {
			t.Fatalf("EncodeMetrics() = %v", err)
		}
		if _, err := e.s3.Backend.PutObject(e.store.MetricsBucket(), key, map[string]string{}, bytes.NewReader(other), int64(len(other)), nil); err != nil {
			t.Fatalf("PutObject(%s) = %v", key, err)
		}
		if _, err := e.arch.Metrics(ctx, q); !errors.Is(err, blob.ErrCorrupt) {
			t.Errorf("Metrics(%s) over an object holding another hour = %v, want an error wrapping ErrCorrupt", describe(q), err)
		}
	})
}

func TestMetricsCursorAcrossArchiveRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bundles := testBundles()
	e.load(t, bundles)
	ctx := context.Background()
	for _, q := range queries()[:3] {
		want := expected(t, bundles, q)
		q.First = len(want) / 3
		p, err := e.arch.Metrics(ctx, q)
		if err != nil || !p.HasNext {
			t.Fatalf("Metrics(%s, first: %d) = %v; want a first page", describe(q), q.First, err)
		}
		got := make([]string, 0, len(want))
		for _, m := range p.Items {
			got = append(got, point(t, m))
		}
		// The archive moves samples under the reader's feet; the cursor still continues
		// exactly after the last sample returned.
		e.load(t, bundles)
		if _, err := e.arch.Archive(ctx, archiveBefore, nil); err != nil {
			t.Fatalf("Archive() = %v", err)
		}
		q.After, q.First = p.Cursors[len(p.Cursors)-1], 1000
		got = append(got, e.readAllFrom(t, q)...)
		sameList(t, fmt.Sprintf("Metrics(%s) paged across an archive run", describe(q)), got, want)
	}
}

// readAllFrom pages through q from q.After.
func (e *env) readAllFrom(tb testing.TB, q archive.MetricsQuery) []string {
	tb.Helper()
	return e.readAllCtx(tb, context.Background(), q)
}

func TestMetricsRejects(t *testing.T) {
	e := newEnv(t)
	e.load(t, testBundles())
	ctx := context.Background()
	p, err := e.arch.Metrics(ctx, archive.MetricsQuery{CapabilityID: "CAP-ARC-A", First: 2})
	if err != nil {
		t.Fatalf("Metrics(CAP-ARC-A, first: 2) = %v", err)
	}
	cursor := p.Cursors[0]
	from := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	to := from.Add(-time.Hour)
	tests := []struct {
		name  string
		q     archive.MetricsQuery
		field string
	}{
		{"no capability", archive.MetricsQuery{First: 10}, "capabilityId"},
		{"forged capability", archive.MetricsQuery{CapabilityID: "CAP#A", First: 10}, "capabilityId"},
		{"forged component", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "a/../b", First: 10}, "componentId"},
		{"forged component list", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentIDs: []string{"api-1", "x#y"}, First: 10}, "componentIds[1]"},
		{"unknown type", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", MetricType: "latency", First: 10}, "metricType"},
		{"to before from", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", From: &from, To: &to, First: 10}, "to"},
		{"first 0", archive.MetricsQuery{CapabilityID: "CAP-ARC-A"}, "first"},
		{"first too large", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", First: dynamo.MaxMetricsPage + 1}, "first"},
		{"cursor of another query", archive.MetricsQuery{CapabilityID: "CAP-ARC-B", First: 10, After: cursor}, "after"},
		{"cursor of another window", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", From: &from, First: 10, After: cursor}, "after"},
		{"tampered cursor", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", First: 10, After: cursor[:len(cursor)-2] + "xx"}, "after"},
		{"junk cursor", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", First: 10, After: "!!"}, "after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := e.arch.Metrics(ctx, tt.q); !isValidation(err, tt.field) {
				t.Errorf("Metrics(%s) = %v, %v; want a validation error on %s", tt.name, p, err, tt.field)
			}
		})
	}
}

func TestMetricsCost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bundles := testBundles()
	e.load(t, bundles)
	ctx := context.Background()
	if _, err := e.arch.Archive(ctx, archiveBefore, nil); err != nil {
		t.Fatalf("Archive() = %v", err)
	}
	at := func(d, h int) *time.Time { t := time.Date(2026, 3, d, h, 0, 0, 0, time.UTC); return &t }
	tests := []struct {
		name     string
		q        archive.MetricsQuery
		requests map[string]int
	}{
		{"recent: the table only", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: at(9, 20), First: 100}, map[string]int{}},
		{"open start, recent end: the whole archive part", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "db-1", First: 1000}, map[string]int{"ListObjectsV2": 1, "GetObject": 3}},
		{"two archived hours", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: at(8, 5), To: at(8, 6), First: 1000}, map[string]int{"ListObjectsV2": 1, "GetObject": 2}},
		{"a page that stops early", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: at(8, 5), To: at(8, 20), First: 5}, map[string]int{"ListObjectsV2": 1, "GetObject": 1}},
		{"a capability with its components given", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentIDs: []string{"api-1", "db-1"}, From: at(8, 11), To: at(8, 11), First: 100}, map[string]int{"ListObjectsV2": 2, "GetObject": 2}},
		{"a capability, components found", archive.MetricsQuery{CapabilityID: "CAP-ARC-A", From: at(8, 11), To: at(8, 11), First: 100}, map[string]int{"ListObjectsV2": 4, "GetObject": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sctx, stats := blob.WithStats(ctx)
			p, err := e.arch.Metrics(sctx, tt.q)
			if err != nil {
				t.Fatalf("Metrics(%s) = %v", describe(tt.q), err)
			}
			s := stats.Snapshot()
			if !mapsEqual(s.Operations, tt.requests) {
				t.Errorf("Metrics(%s): S3 requests = %v, want %v", describe(tt.q), s.Operations, tt.requests)
			}
			if s.Requests != sum(tt.requests) || (s.Requests > 0) != (s.Bytes > 0) {
				t.Errorf("Metrics(%s): extensions.s3 = %+v, want %d requests and their bytes", describe(tt.q), s, sum(tt.requests))
			}
			if len(p.Items) == 0 {
				t.Errorf("Metrics(%s) = no samples", describe(tt.q))
			}
		})
	}

	t.Run("listing pages", func(t *testing.T) {
		small := blob.New(e.client, blob.Options{Now: func() time.Time { return testNow }, ListPage: 4})
		paged := &env{db: e.db, arch: archive.New(e.db.Store, small, archive.Options{CursorSecret: []byte("test-secret"), HourCacheBytes: -1})}
		q := archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: at(7, 23), To: at(8, 23), First: 1000}
		sctx, stats := blob.WithStats(ctx)
		got := paged.readAllCtx(t, sctx, q)
		sameList(t, fmt.Sprintf("Metrics(%s) with listing pages of 4", describe(q)), got, expected(t, bundles, q))
		if s := stats.Snapshot(); s.Operations["ListObjectsV2"] != 7 || s.Operations["GetObject"] != 25 {
			t.Errorf("Metrics(%s) with listing pages of 4: S3 requests = %v, want 7 ListObjectsV2 and 25 GetObject", describe(q), s.Operations)
		}
	})
}

// readAllCtx pages through q from q.After with ctx.
func (e *env) readAllCtx(tb testing.TB, ctx context.Context, q archive.MetricsQuery) []string {
	tb.Helper()
	var all []string
	for {
		p, err := e.arch.Metrics(ctx, q)
		if err != nil {
			tb.Fatalf("Metrics(%s) = %v", describe(q), err)
		}
		for _, m := range p.Items {
			all = append(all, point(tb, m))
		}
		if !p.HasNext {
			return all
		}
		q.After = p.Cursors[len(p.Cursors)-1]
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func TestArchiveRejects(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, before := range []time.Time{{}, testNow, testNow.Add(-blob.DefaultMinArchiveAge + time.Minute)} {
		if _, err := e.arch.Archive(ctx, before, nil); !isValidation(err, "before") {
			t.Errorf("Archive(%v) = %v, want a validation error on before", before, err)
		}
	}
	if _, err := e.arch.ArchiveCapability(ctx, "CAP#1", archiveBefore, nil); !isValidation(err, "capabilityId") {
		t.Errorf("ArchiveCapability(%q) = %v, want a validation error on capabilityId", "CAP#1", err)
	}
}

func TestRunArchiveCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("archives with progress", func(t *testing.T) {
		e := newEnv(t)
		bundles := testBundles()
		e.load(t, bundles)
		var out bytes.Buffer
		if err := archive.RunCommand(ctx, []string{"-before", "2026-03-09T00:30:00Z"}, &out, e.arch); err != nil {
			t.Fatalf("RunArchiveCommand(-before 2026-03-09T00:30:00Z) = %v\n%s", err, out.String())
		}
		points, hours := hoursBefore(bundles, archiveBefore.Truncate(time.Hour))
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != hours+2 {
			t.Errorf("RunArchiveCommand printed %d lines, want %d (a header, one per hour, a summary):\n%s", len(lines), hours+2, out.String())
		}
		for _, s := range []string{
			"archiving metrics of component-hours ending at or before 2026-03-09T00:00:00Z to s3://capability-metrics",
			"CAP-ARC-A db-1 2026-03-08T11Z: 60 points -> s3://capability-metrics/capabilities/CAP-ARC-A/components/db-1/2026/03/08/metrics-11.json.gz, 60 items deleted",
			fmt.Sprintf("2 capabilities, 5 components scanned; %d objects written (0 merged), %d points archived, %d items deleted", hours, points, points),
		} {
			if !strings.Contains(out.String(), s) {
				t.Errorf("RunArchiveCommand output lacks %q:\n%s", s, out.String())
			}
		}
	})

	t.Run("one capability, quiet, default age", func(t *testing.T) {
		e := newEnv(t)
		e.load(t, testBundles())
		var out bytes.Buffer
		if err := archive.RunCommand(ctx, []string{"-capability", "CAP-ARC-B", "-older-than", "36h", "-quiet"}, &out, e.arch); err != nil {
			t.Fatalf("RunArchiveCommand(-capability CAP-ARC-B -older-than 36h -quiet) = %v\n%s", err, out.String())
		}
		if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "1 capabilities, 2 components scanned") {
			t.Errorf("RunArchiveCommand(-capability CAP-ARC-B -quiet) printed:\n%s", out.String())
		}
	})

	t.Run("rejects", func(t *testing.T) {
		e := newEnv(t)
		for _, tt := range []struct {
			args  []string
			field string
		}{
			{[]string{"-before", "yesterday"}, "before"},
			{[]string{"-before", testNow.Format(time.RFC3339)}, "before"},
			{[]string{"-older-than", "1h"}, "before"},
			{[]string{"-nope"}, "args"},
			{[]string{"extra"}, "args"},
		} {
			var out bytes.Buffer
			if err := archive.RunCommand(ctx, tt.args, &out, e.arch); !isValidation(err, tt.field) {
				t.Errorf("RunArchiveCommand(%q) = %v, want a validation error on %s", tt.args, err, tt.field)
			}
		}
	})
}

// The archive deletes a table item only if it is still the item it archived: a sample rewritten
// between the archive's read and its delete keeps its new value in the table, and the next run
// archives that value. (The deletes were unconditional: the new value was lost.)
func TestArchiveKeepsRewrittenSamples(t *testing.T) {
	e := newEnv(t)
	e.load(t, testBundles())
	ctx := context.Background()
	const hourKey = "/capability-metrics/capabilities/CAP-ARC-A/components/db-1/2026/03/08/metrics-11.json.gz"
	hour := time.Date(2026, 3, 8, 11, 0, 0, 0, time.UTC)
	page, _, err := e.db.Store.MetricsInRange(ctx, dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "db-1", From: hour, Before: hour.Add(time.Hour)}, dynamo.MaxMetricRangePage)
	if err != nil || len(page) == 0 {
		t.Fatalf("MetricsInRange(db-1, 11:00) = %d, %v", len(page), err)
	}
	victim := page[0]
	sk := fmt.Sprintf("METRIC#db-1#%s#%s", victim.MetricType, victim.Timestamp.UTC().Format(catalog.TimeLayout))
	var once sync.Once
	e.faults.Set(func(method, key string) bool {
		if method == http.MethodPut && key == hourKey {
			once.Do(func() { // the hour's object is being written: its samples were read
				_, err := e.db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(e.db.Table),
					Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "CAPABILITY#CAP-ARC-A"}, "SK": &types.AttributeValueMemberS{Value: sk}},
					UpdateExpression:          aws.String("SET UpdatedAt = :u, #d.componentName = :n"),
					ExpressionAttributeNames:  map[string]string{"#d": "Data"},
					ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: "2026-03-09T12:00:00.000000Z"}, ":n": &types.AttributeValueMemberS{Value: "rewritten"}},
				})
				if err != nil {
					t.Errorf("rewrite %s: %v", sk, err)
				}
			})
		}
		return false
	})
	rep, err := e.arch.Archive(ctx, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), nil)
	if err != nil || rep.ItemsKept != 1 || rep.ItemsDeleted != rep.PointsArchived-1 {
		t.Fatalf("Archive = %+v, %v; want 1 item kept", rep, err)
	}
	e.faults.Set(nil)
	left, _, err := e.db.Store.MetricsInRange(ctx, dynamo.MetricRange{CapabilityID: "CAP-ARC-A", ComponentID: "db-1", From: hour, Before: hour.Add(time.Hour)}, dynamo.MaxMetricRangePage)
	if err != nil || len(left) != 1 || left[0].ComponentName != "rewritten" {
		t.Fatalf("table after the archive = %+v, %v; want the rewritten sample", left, err)
	}
	if rep, err := e.arch.Archive(ctx, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), nil); err != nil || rep.ItemsDeleted != 1 || rep.ItemsKept != 0 {
		t.Fatalf("second Archive = %+v, %v; want the rewritten sample archived", rep, err)
	}
	obj := e.objects(t)[strings.TrimPrefix(hourKey, "/capability-metrics/")]
	ms, err := blob.DecodeMetrics(obj)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range ms {
		if m.MetricType == victim.MetricType && m.Timestamp.Equal(victim.Timestamp.Time) {
			found = m.ComponentName == "rewritten"
		}
	}
	if !found {
		t.Errorf("the archived object lacks the rewritten value (%d samples)", len(ms))
	}
}

// The server archives by itself: Schedule runs the archive on one instance at a time (a lease
// in the table): while another holds the lease it does not run; once it is free it archives
// what is older than the minimum age.
func TestScheduledArchive(t *testing.T) {
	e := newEnv(t)
	e.load(t, testBundles())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if ok, err := e.db.Store.AcquireLease(ctx, archive.Lease, "other-instance", time.Hour); err != nil || !ok {
		t.Fatalf("AcquireLease = %v, %v", ok, err)
	}
	// Each tick waits in its callback until the test has looked at it: with a 10 ms interval the
	// next tick would otherwise take the lease again before the test checks it was given up.
	ticks, next := make(chan archive.ScheduleResult), make(chan struct{})
	go e.arch.Schedule(ctx, 0, 10*time.Millisecond, "this-instance", func(r archive.ScheduleResult) {
		select {
		case ticks <- r:
		case <-ctx.Done():
			return
		}
		select {
		case <-next:
		case <-ctx.Done():
		}
	})
	if r := <-ticks; r.Ran || r.Err != nil {
		t.Fatalf("a tick while another instance holds the lease ran: %+v", r)
	}
	if err := e.db.Store.ReleaseLease(ctx, archive.Lease, "other-instance"); err != nil {
		t.Fatal(err)
	}
	next <- struct{}{}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case r := <-ticks:
			if !r.Ran {
				next <- struct{}{}
				continue
			}
			if r.Err != nil || r.Report.ItemsDeleted == 0 {
				t.Fatalf("scheduled run = %+v", r)
			}
			if ok, err := e.db.Store.AcquireLease(ctx, archive.Lease, "other-instance", time.Hour); err != nil || !ok {
				t.Errorf("the lease was not given up after the run: %v, %v", ok, err)
			}
			return
		case <-deadline:
			t.Fatal("no scheduled run within 30 s")
		}
	}
}

// TestPageDecidesWhereToRead: a window after the archive boundary is the caller's table read
// alone, with no S3 request; one before it is read across both, the component's capability
// found from its claim, a capability's components from the caller.
func TestPageDecidesWhereToRead(t *testing.T) {
	e := newEnv(t)
	e.load(t, testBundles())
	ctx, stats := blob.WithStats(context.Background())
	recent, old := testNow.Add(-time.Hour), time.Date(2026, 3, 8, 10, 0, 0, 0, time.UTC)
	fromTable := &dynamo.Page[*catalog.Metric]{}
	table := func(context.Context) (*dynamo.Page[*catalog.Metric], error) { return fromTable, nil }
	noTable := func(context.Context) (*dynamo.Page[*catalog.Metric], error) {
		t.Error("a window that reaches the archive was read from the table alone")
		return fromTable, nil
	}
	noComponents := func(context.Context) ([]string, error) {
		t.Error("a one-component window asked for the capability's components")
		return nil, nil
	}
	q := archive.MetricsQuery{ComponentID: "db-1", From: &recent, First: 10}
	if p, err := e.arch.Page(ctx, q, table, noComponents); err != nil || p != fromTable || stats.Snapshot().Requests != 0 {
		t.Errorf("Page(%s) = %v, %v with %d S3 requests; want the table's page and none", describe(q), p, err, stats.Snapshot().Requests)
	}
	q.From = &old
	p, err := e.arch.Page(ctx, q, noTable, noComponents)
	if err != nil || len(p.Items) != 10 || p.Items[0].CapabilityID != "CAP-ARC-A" {
		t.Fatalf("Page(%s) = %v, %v; want 10 samples of CAP-ARC-A", describe(q), p, err)
	}
	q = archive.MetricsQuery{CapabilityID: "CAP-ARC-A", From: &old, First: 5}
	p, err = e.arch.Page(ctx, q, noTable, func(context.Context) ([]string, error) { return []string{"db-1"}, nil })
	if err != nil || len(p.Items) != 5 || p.Items[4].ComponentID != "db-1" {
		t.Errorf("Page(%s) over [db-1] = %v, %v; want 5 samples of db-1", describe(q), p, err)
	}
	q = archive.MetricsQuery{ComponentID: "nobody-1", From: &old, First: 5}
	if p, err := e.arch.Page(ctx, q, noTable, noComponents); err != nil || len(p.Items) != 0 {
		t.Errorf("Page(%s) = %v, %v; want an empty page", describe(q), p, err)
	}
}

// A reader with the archived hours' cache reads an hour's object once while its version (the
// listing's ETag) stays the same; a rewritten hour (an archive run merging late samples, or
// another instance's) is read anew; a failed GET keeps nothing.
func TestArchivedHoursCache(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.load(t, testBundles())
	ctx := context.Background()
	if _, err := e.arch.Archive(ctx, archiveBefore, nil); err != nil {
		t.Fatalf("Archive() = %v", err)
	}
	cached := archive.New(e.db.Store, e.store, archive.Options{CursorSecret: []byte("test-secret")})
	at := func(d, h int) *time.Time { t := time.Date(2026, 3, d, h, 0, 0, 0, time.UTC); return &t }
	q := archive.MetricsQuery{CapabilityID: "CAP-ARC-A", ComponentID: "api-1", From: at(8, 5), To: at(8, 6), First: 1000}
	read := func() (*dynamo.Page[*catalog.Metric], map[string]int) {
		t.Helper()
		sctx, stats := blob.WithStats(ctx)
		p, err := cached.Metrics(sctx, q)
		if err != nil {
			t.Fatalf("Metrics(%s) = %v", describe(q), err)
		}
		return p, stats.Snapshot().Operations
	}
	uncached, err := e.arch.Metrics(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	first, ops := read()
	if !mapsEqual(ops, map[string]int{"ListObjectsV2": 1, "GetObject": 2}) {
		t.Errorf("first read: S3 requests = %v, want 1 ListObjectsV2 and 2 GetObject", ops)
	}
	second, ops := read()
	if !mapsEqual(ops, map[string]int{"ListObjectsV2": 1}) {
		t.Errorf("second read: S3 requests = %v, want the listing alone", ops)
	}
	for _, p := range []*dynamo.Page[*catalog.Metric]{first, second} {
		if !reflect.DeepEqual(p, uncached) {
			t.Errorf("cached read differs from the uncached one")
		}
	}
	if n, b := cached.CachedHours(); n != 2 || b <= 0 {
		t.Errorf("CachedHours() = %d, %d; want 2 hours and their bytes", n, b)
	}

	// Another instance rewrites the hour 05:00 with a changed sample: the next read shows it.
	key := blob.MetricsKey("CAP-ARC-A", "api-1", *at(8, 5))
	data, err := e.store.GetMetricsObject(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := blob.DecodeMetrics(data)
	if err != nil || len(ms) == 0 {
		t.Fatalf("DecodeMetrics = %d, %v", len(ms), err)
	}
	ms[0].Dimensions = map[string]any{"rewritten": "yes"}
	data, err = blob.EncodeMetrics(ms)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.PutMetricsObject(ctx, key, data); err != nil {
		t.Fatal(err)
	}
	after, ops := read()
	if !mapsEqual(ops, map[string]int{"ListObjectsV2": 1, "GetObject": 1}) {
		t.Errorf("after the rewrite: S3 requests = %v, want the listing and the rewritten hour", ops)
	}
	found := false
	for _, m := range after.Items {
		found = found || m.Dimensions["rewritten"] == "yes"
	}
	if !found {
		t.Errorf("the read after the hour was rewritten does not show the rewritten sample")
	}

	// A failed GET is an error and keeps nothing: the next read reads the hour again.
	fresh := archive.New(e.db.Store, e.store, archive.Options{CursorSecret: []byte("test-secret")})
	e.faults.Set(func(method, key string) bool { return method == http.MethodGet && strings.HasSuffix(key, ".json.gz") })
	if _, err := fresh.Metrics(ctx, q); err == nil {
		t.Errorf("Metrics with failing GETs = nil error")
	}
	e.faults.Set(nil)
	if n, _ := fresh.CachedHours(); n != 0 {
		t.Errorf("CachedHours() after failed GETs = %d, want 0", n)
	}
}
