package archive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/blob/blobtest"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// testNow is the clock of every test here. With the default MinArchiveAge (24 h) the archive
// may move everything up to 2026-03-09T12:00Z.
var testNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// env is a DynamoDB (memdyn, see dynamotest) and an S3 (gofakes3) for one test, both in-process, with the
// SDKs' retries off so that an injected fault is seen by the code under test.
type env struct {
	db     *dynamotest.Env
	s3     *blob.Embedded
	client *s3.Client
	faults *blobtest.Faults
	store  *blob.Store
	arch   *archive.Archiver
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	e := &env{db: dynamotest.New(tb, dynamotest.Options{Now: func() time.Time { return testNow }, MaxAttempts: 1})}
	objects := blobtest.New(tb, func() time.Time { return testNow }, blob.Options{})
	e.s3, e.client, e.faults, e.store = objects.S3, objects.Client, objects.Faults, objects.Store
	// The reader keeps no archived hours here: the tests count and fault its S3 requests
	// (TestArchivedHoursCache tests the cache).
	e.arch = archive.New(e.db.Store, e.store, archive.Options{CursorSecret: []byte("test-secret"), HourCacheBytes: -1})
	e.db.Counter.Reset()
	return e
}

// series returns samples of comp, one per type every step from `from`, n steps, with values
// that vary with the index so that every sample is different.
func series(comp string, types []catalog.MetricType, from time.Time, n int, step time.Duration) []*catalog.Metric {
	interval := "5m"
	switch step {
	case time.Minute:
		interval = "1m"
	case 15 * time.Minute:
		interval = "15m"
	case time.Hour:
		interval = "1h"
	}
	var ms []*catalog.Metric
	for i := range n {
		for _, t := range types {
			f := float64(i)
			m := &catalog.Metric{
				ComponentID: comp, ComponentName: strings.ToUpper(comp), MetricType: t,
				Timestamp: catalog.NewTimestamp(from.Add(time.Duration(i) * step)), Interval: interval,
				Dimensions: map[string]any{"region": "eu-west-1", "environment": "production", "shard": float64(i % 3)},
				Trends:     &catalog.Trends{Latency: "stable"},
			}
			switch t {
			case catalog.MetricPerformance:
				m.Values = &catalog.MetricValues{
					Availability: &catalog.AvailabilityValue{Value: 99.9 + 0.001*float64(i%50), Unit: "percent", Status: "healthy"},
					Latency:      &catalog.LatencyValue{P50: 40 + f, P95: 120 + 2*f, P99: 250 + 3*f, Max: 900, Unit: "ms"},
					Throughput:   &catalog.ThroughputValue{Requests: 1000 + i, Successful: 990 + i, Failed: 10, Unit: "rpm"},
				}
				if i%17 == 0 {
					m.Alerts = &catalog.MetricAlerts{Active: []catalog.Alert{{AlertID: fmt.Sprintf("ALT-%d", i), Condition: "latency.p99 > 500ms"}}}
				}
			case catalog.MetricResource:
				m.Values = &catalog.MetricValues{Saturation: &catalog.SaturationValue{CPU: math.Mod(30+f, 90), Memory: 55.5, Connections: 100 + i, Unit: "percent"}}
			default:
				m.Values = &catalog.MetricValues{Errors: &catalog.ErrorsValue{Rate: 0.01 * float64(i%7), Count: i % 7, Types: map[string]any{"5xx": float64(i % 7)}}}
			}
			ms = append(ms, m)
		}
	}
	return ms
}

// testBundles returns the catalogue of these tests, relative to testNow:
//
//   - CAP-ARC-A: api-1 (performance and resource every 15 minutes from 2026-03-07T22:00Z to
//     testNow), db-1 (performance every minute from 2026-03-08T10:00Z for 3 hours, 60 samples
//     an hour), old-1 (a removed component: business hourly through 2026-03-07);
//   - CAP-ARC-B: api-1 too (performance every 10 minutes from 2026-03-08T00:00Z for 30 hours)
//     and worker-1 (quality and security every 30 minutes for 2 days to testNow).
func testBundles() []*catalog.Bundle {
	capability := func(id string) *catalog.Capability {
		return &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "testing", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow}
	}
	component := func(id string, order int) *catalog.Component {
		return &catalog.Component{ComponentID: id, Name: strings.ToUpper(id), ComponentType: "api-server", Order: order, Status: catalog.ComponentActive}
	}
	day := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	perf, res := catalog.MetricPerformance, catalog.MetricResource
	a := &catalog.Bundle{
		Capability: capability("CAP-ARC-A"),
		Components: []*catalog.Component{component("api-1", 1), component("db-1", 2)},
		Metrics: slices.Concat(
			series("api-1", []catalog.MetricType{perf, res}, day(7, 22), int(testNow.Sub(day(7, 22))/(15*time.Minute))+1, 15*time.Minute),
			series("db-1", []catalog.MetricType{perf}, day(8, 10), 180, time.Minute),
			series("old-1", []catalog.MetricType{catalog.MetricBusiness}, day(7, 0), 24, time.Hour),
		),
	}
	b := &catalog.Bundle{
		Capability: capability("CAP-ARC-B"),
		Components: []*catalog.Component{component("api-1", 1), component("worker-1", 2)},
		Metrics: slices.Concat(
			series("api-1", []catalog.MetricType{perf}, day(8, 0), 30*6, 10*time.Minute),
			series("worker-1", []catalog.MetricType{catalog.MetricQuality, catalog.MetricSecurity}, testNow.Add(-48*time.Hour), 48*2+1, 30*time.Minute),
		),
	}
	return []*catalog.Bundle{a, b}
}

// load writes bundles to the table and resets the counters.
func (e *env) load(tb testing.TB, bundles []*catalog.Bundle) {
	tb.Helper()
	if _, err := e.db.Store.BulkLoad(context.Background(), bundles, 4); err != nil {
		tb.Fatalf("BulkLoad(%d bundles) = %v", len(bundles), err)
	}
	e.db.Counter.Reset()
}

// point is a sample as the tests compare it: its key and its JSON (the seed's fields).
func point(tb testing.TB, m *catalog.Metric) string {
	tb.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatalf("marshal metric: %v", err)
	}
	return m.Timestamp.String() + " " + m.ComponentID + " " + string(m.MetricType) + " " + string(b)
}

// expected returns the points of bundles that q selects, in the order Metrics returns them.
func expected(tb testing.TB, bundles []*catalog.Bundle, q archive.MetricsQuery) []string {
	tb.Helper()
	var ms []*catalog.Metric
	for _, b := range bundles {
		if b.Capability.CapabilityID != q.CapabilityID {
			continue
		}
		for _, m := range b.Metrics {
			switch {
			case q.ComponentID != "" && m.ComponentID != q.ComponentID,
				q.MetricType != "" && m.MetricType != q.MetricType,
				q.From != nil && m.Timestamp.Before(*q.From),
				q.To != nil && m.Timestamp.After(*q.To):
				continue
			}
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if !a.Timestamp.Equal(b.Timestamp.Time) {
			return a.Timestamp.Before(b.Timestamp.Time)
		}
		if a.ComponentID != b.ComponentID {
			return a.ComponentID < b.ComponentID
		}
		return a.MetricType < b.MetricType
	})
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = point(tb, m)
	}
	return out
}

// readAll pages through q, first samples a page, and returns the points in order. It fails on a
// page larger than first, a short page that claims a next one, or a point seen twice.
func (e *env) readAll(tb testing.TB, q archive.MetricsQuery, first int) []string {
	tb.Helper()
	var all []string
	seen := map[string]bool{}
	q.First, q.After = first, ""
	for pages := 1; ; pages++ {
		p, err := e.arch.Metrics(context.Background(), q)
		if err != nil {
			tb.Fatalf("Metrics(%s, first: %d, page %d) = %v", describe(q), first, pages, err)
		}
		if len(p.Items) != len(p.Cursors) || len(p.Items) > first || (p.HasNext && len(p.Items) != first) {
			tb.Fatalf("Metrics(%s, first: %d) page %d: %d items, %d cursors, hasNext %v", describe(q), first, pages, len(p.Items), len(p.Cursors), p.HasNext)
		}
		for _, m := range p.Items {
			pt := point(tb, m)
			if seen[pt] {
				tb.Fatalf("Metrics(%s, first: %d) page %d repeats %s", describe(q), first, pages, pt[:60])
			}
			seen[pt] = true
			all = append(all, pt)
		}
		if !p.HasNext {
			return all
		}
		q.After = p.Cursors[len(p.Cursors)-1]
	}
}

func describe(q archive.MetricsQuery) string {
	s := q.CapabilityID
	if q.ComponentID != "" {
		s += "/" + q.ComponentID
	}
	if q.MetricType != "" {
		s += " " + string(q.MetricType)
	}
	if q.From != nil {
		s += " from " + q.From.Format(time.RFC3339)
	}
	if q.To != nil {
		s += " to " + q.To.Format(time.RFC3339)
	}
	return s
}

// sameList fails unless got equals want, naming the first difference.
func sameList(tb testing.TB, call string, got, want []string) {
	tb.Helper()
	if slices.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return s[i][:min(len(s[i]), 90)]
		}
		return "<end>"
	}
	tb.Errorf("%s = %d points, want %d; first difference at %d: got %s, want %s", call, len(got), len(want), i, at(got), at(want))
}

// tablePoints returns the points the table holds (expired ones included), in Metrics order.
func (e *env) tablePoints(tb testing.TB, capabilityID string) []string {
	tb.Helper()
	ctx := context.Background()
	comps, err := e.db.Store.MetricComponentIDs(ctx, capabilityID)
	if err != nil {
		tb.Fatalf("MetricComponentIDs(%s) = %v", capabilityID, err)
	}
	var ms []*catalog.Metric
	for _, c := range comps {
		r := dynamo.MetricRange{CapabilityID: capabilityID, ComponentID: c, IncludeExpired: true}
		for {
			page, more, err := e.db.Store.MetricsInRange(ctx, r, dynamo.MaxMetricRangePage)
			if err != nil {
				tb.Fatalf("MetricsInRange(%s/%s) = %v", capabilityID, c, err)
			}
			ms = append(ms, page...)
			if !more {
				break
			}
			r.From = page[len(page)-1].Timestamp.Add(time.Microsecond)
		}
	}
	bundles := []*catalog.Bundle{{Capability: &catalog.Capability{CapabilityID: capabilityID}, Metrics: ms}}
	return expected(tb, bundles, archive.MetricsQuery{CapabilityID: capabilityID})
}

// objects returns the archived objects of the metrics bucket by key, read through the backend.
func (e *env) objects(tb testing.TB) map[string][]byte {
	tb.Helper()
	list, err := e.s3.Backend.ListBucket(e.store.MetricsBucket(), nil, gofakes3.ListBucketPage{})
	if err != nil {
		tb.Fatalf("ListBucket(%s) = %v", e.store.MetricsBucket(), err)
	}
	out := map[string][]byte{}
	for _, c := range list.Contents {
		obj, err := e.s3.Backend.GetObject(e.store.MetricsBucket(), c.Key, nil)
		if err != nil {
			tb.Fatalf("GetObject(%s) = %v", c.Key, err)
		}
		b, err := io.ReadAll(obj.Contents)
		_ = obj.Contents.Close()
		if err != nil {
			tb.Fatalf("read %s: %v", c.Key, err)
		}
		out[c.Key] = b
	}
	return out
}

// isValidation reports whether err is a *catalog.ValidationError on field (any if empty).
func isValidation(err error, field string) bool {
	var ve *catalog.ValidationError
	return errors.As(err, &ve) && (field == "" || ve.Field == field)
}
