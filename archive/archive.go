// Package archive moves metrics from DynamoDB to the metrics bucket of S3 as they age
// (Archiver.Archive, run by Schedule and by the archive-metrics command) and reads windows of
// metrics that span both (Archiver.Metrics). It is the one place where the table and the object
// store meet.
package archive

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/lru"
	"github.com/capcat/catalogue/internal/signed"
)

// archivePage is how many metrics Archive reads from DynamoDB per request: it holds at most
// one page and one component-hour in memory.
const archivePage = 500

// Archiver moves metrics from the table to the metrics bucket (Archive) and reads metric
// windows that span both (Metrics).
type Archiver struct {
	db      *dynamo.Store
	obj     *blob.Store
	cursors signed.Codec
	// hours holds archived hours as read (decoded, checked and sorted), by key and ETag; nil
	// when Options.HourCacheBytes turns it off.
	hours *lru.LRU[[]*catalog.Metric]
}

// Options configure an Archiver.
type Options struct {
	// CursorSecret signs the cursors of Metrics. Empty means a random secret for this process:
	// set it when several instances serve the same clients.
	CursorSecret []byte
	// HourCacheBytes bounds the archived hours a reader keeps decoded, by the estimated bytes
	// of their samples; 0 means DefaultHourCacheBytes, a negative value keeps none. An hour is
	// used again only while the listing of the read that wants it names the same version of
	// its object (its ETag): a rewritten hour (an archive run merging late samples) is read
	// anew.
	HourCacheBytes int
}

// DefaultHourCacheBytes is the archived hours' cache when Options do not set one.
const DefaultHourCacheBytes = 8 << 20

// HourCacheShare is Options.HourCacheBytes for a server whose partition cache has cacheBytes
// (its -cache-bytes): an eighth of it, none when that cache is off.
func HourCacheShare(cacheBytes int) int {
	if cacheBytes <= 0 {
		return -1
	}
	return max(cacheBytes/8, 1)
}

// New returns an Archiver over the table db and the buckets of obj. Its clock and the archive
// boundary (MinArchiveAge) are obj's.
func New(db *dynamo.Store, obj *blob.Store, opts Options) *Archiver {
	secret := opts.CursorSecret
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	a := &Archiver{db: db, obj: obj, cursors: signed.New(secret)}
	switch n := opts.HourCacheBytes; {
	case n == 0:
		a.hours = lru.New[[]*catalog.Metric](math.MaxInt, DefaultHourCacheBytes)
	case n > 0:
		a.hours = lru.New[[]*catalog.Metric](math.MaxInt, n)
	}
	return a
}

// Report counts what an Archive run did.
type Report struct {
	// Before is the boundary used: the argument truncated to the hour. Every component-hour
	// that ends at or before it was archived.
	Before time.Time `json:"before"`
	// Capabilities and Components count what was scanned (components with metrics in the
	// table).
	Capabilities int `json:"capabilities"`
	Components   int `json:"components"`
	// ObjectsWritten counts component-hour objects written; ObjectsMerged those of them that
	// already existed (left by an interrupted run) and were merged with what the table held.
	ObjectsWritten int `json:"objectsWritten"`
	ObjectsMerged  int `json:"objectsMerged"`
	// PointsArchived counts the samples in the objects written.
	PointsArchived int `json:"pointsArchived"`
	// ItemsDeleted counts the metric items deleted from the table after their object was
	// verified.
	ItemsDeleted int `json:"itemsDeleted"`
	// ItemsKept counts the metric items rewritten after the archive read them: they keep their
	// new value in the table for the next run, which archives it.
	ItemsKept int `json:"itemsKept"`
	// OldestUnarchived is the timestamp of the oldest sample the table still holds after the
	// run, among the components scanned (zero when none).
	OldestUnarchived time.Time `json:"oldestUnarchived"`
	// BytesWritten is the compressed size of the objects written.
	BytesWritten int64 `json:"bytesWritten"`
}

// Progress is one archived component-hour, reported as soon as its items are deleted.
type Progress struct {
	CapabilityID string
	ComponentID  string
	Hour         time.Time
	// URI is the object written (s3://bucket/key).
	URI string
	// Points is how many samples the object holds; Merged how many of them were already in an
	// object left by an earlier run; Deleted how many table items were deleted.
	Points  int
	Merged  int
	Deleted int
	// Totals is the run's report so far.
	Totals Report
}

// Archive moves every metric sample whose component-hour ends at or before `before` from the
// table to the metrics bucket, one gzipped JSON object per component-hour (see EncodeMetrics
// and MetricsKey). It walks the capabilities of the CAPABILITIES index, the components that
// have metrics in each capability's partition, and each component's samples in time
// order, a page at a time, holding at most one page and one hour in memory. For each
// component-hour it (1) reads the object of that hour if one exists, left by an interrupted
// run, and takes the union with the table's samples (by component, metric type and timestamp;
// the table's copy wins), (2) writes the union, (3) reads it back and checks bytes, count and
// keys, and only then (4) deletes the table's items of that hour in batches of 25. An
// interrupted run therefore loses nothing, and a rerun duplicates nothing and writes the same
// bytes. Expired items that DynamoDB has not yet removed are archived too.
//
// progress, when not nil, is called after each component-hour. before must be at least the
// Store's MinArchiveAge in the past; otherwise, or when zero, the error is a
// *catalog.ValidationError on field "before". Any other error stops the run and is returned
// with the report of what was done until then; the hour it stopped in is safe to rerun.
func (a *Archiver) Archive(ctx context.Context, before time.Time, progress func(Progress)) (Report, error) {
	rep := Report{Before: before.UTC().Truncate(time.Hour)}
	if err := a.checkBoundary(before); err != nil {
		return rep, err
	}
	after := ""
	for {
		page, err := a.db.Capabilities(ctx, "", dynamo.MaxPage, after)
		if err != nil {
			return rep, fmt.Errorf("archive metrics: %w", err)
		}
		for _, c := range page.Items {
			if err := a.archiveCapability(ctx, c.CapabilityID, &rep, progress); err != nil {
				return rep, fmt.Errorf("archive metrics: %w", err)
			}
		}
		if !page.HasNext || len(page.Cursors) == 0 {
			// A complete run: every instance's /metrics tells how old the oldest sample left
			// in the table is.
			state := dynamo.ArchiveState{RanAt: a.obj.Now(), OldestUnarchived: rep.OldestUnarchived}
			if err := a.db.PutArchiveState(ctx, state); err != nil {
				return rep, fmt.Errorf("archive metrics: %w", err)
			}
			return rep, nil
		}
		after = page.Cursors[len(page.Cursors)-1]
	}
}

// ArchiveCapability is Archive for one capability, whether or not it is listed in the
// CAPABILITIES index. A bad ID is a *catalog.ValidationError.
func (a *Archiver) ArchiveCapability(ctx context.Context, capabilityID string, before time.Time, progress func(Progress)) (Report, error) {
	rep := Report{Before: before.UTC().Truncate(time.Hour)}
	if err := dynamo.ValidateID("capabilityId", capabilityID); err != nil {
		return rep, err
	}
	if err := a.checkBoundary(before); err != nil {
		return rep, err
	}
	if err := a.archiveCapability(ctx, capabilityID, &rep, progress); err != nil {
		return rep, fmt.Errorf("archive metrics: %w", err)
	}
	return rep, nil
}

// checkBoundary returns a *catalog.ValidationError on field "before" unless before is set and
// at least MinArchiveAge in the past.
// Now is the archiver's clock: boundaries relative to now are taken from it.
func (a *Archiver) Now() time.Time { return a.obj.Now() }

func (a *Archiver) checkBoundary(before time.Time) error {
	if before.IsZero() {
		return catalog.Invalid("before", "is required")
	}
	if latest := a.obj.Now().Add(-a.obj.MinArchiveAge()); before.After(latest) {
		return catalog.Invalid("before", "%s is too recent: metrics stay in DynamoDB for at least %s, so give %s or earlier",
			before.UTC().Format(time.RFC3339), a.obj.MinArchiveAge(), latest.UTC().Truncate(time.Second).Format(time.RFC3339))
	}
	return nil
}

func (a *Archiver) archiveCapability(ctx context.Context, capabilityID string, rep *Report, progress func(Progress)) error {
	comps, err := a.db.MetricComponentIDs(ctx, capabilityID)
	if err != nil {
		return err
	}
	rep.Capabilities++
	for _, comp := range comps {
		rep.Components++
		if err := a.archiveComponent(ctx, capabilityID, comp, rep, progress); err != nil {
			return err
		}
	}
	return nil
}

// archiveComponent archives one component's hours before rep.Before, oldest first.
func (a *Archiver) archiveComponent(ctx context.Context, capabilityID, componentID string, rep *Report, progress func(Progress)) error {
	r := dynamo.MetricRange{CapabilityID: capabilityID, ComponentID: componentID, Before: rep.Before, IncludeExpired: true}
	var hour time.Time
	var pending []*catalog.Metric
	for {
		ms, more, err := a.db.MetricsInRange(ctx, r, archivePage)
		if err != nil {
			return err
		}
		for _, m := range ms {
			h := m.Timestamp.UTC().Truncate(time.Hour)
			if len(pending) > 0 && !h.Equal(hour) {
				if err := a.archiveHour(ctx, capabilityID, componentID, hour, pending, rep, progress); err != nil {
					return err
				}
				pending = nil
			}
			hour = h
			pending = append(pending, m)
		}
		if !more || len(ms) == 0 {
			break
		}
		r.From = ms[len(ms)-1].Timestamp.Add(time.Microsecond)
	}
	if len(pending) > 0 {
		if err := a.archiveHour(ctx, capabilityID, componentID, hour, pending, rep, progress); err != nil {
			return err
		}
	}
	// The oldest sample left: the first in time order now.
	left, _, err := a.db.MetricsInRange(ctx, dynamo.MetricRange{CapabilityID: capabilityID, ComponentID: componentID, IncludeExpired: true}, dynamo.MinMetricRangePage)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		if t := left[0].Timestamp.Time; rep.OldestUnarchived.IsZero() || t.Before(rep.OldestUnarchived) {
			rep.OldestUnarchived = t
		}
	}
	return nil
}

// archiveHour writes, verifies and then deletes one component-hour (see Archive).
func (a *Archiver) archiveHour(ctx context.Context, capabilityID, componentID string, hour time.Time, table []*catalog.Metric, rep *Report, progress func(Progress)) error {
	key := blob.MetricsKey(capabilityID, componentID, hour)
	where := a.obj.MetricsURI(key)
	if err := blob.CheckHour(table, capabilityID, componentID, hour); err != nil {
		return fmt.Errorf("archive %s: table samples: %w", where, err)
	}
	// (1) Merge with what an interrupted run left.
	union := make(map[dynamo.MetricKey]*catalog.Metric, len(table))
	merged := 0
	old, err := a.obj.GetMetricsObject(ctx, key)
	switch {
	case errors.Is(err, blob.ErrNotFound):
	case err != nil:
		return fmt.Errorf("archive %s: read existing object: %w", where, err)
	default:
		prev, err := blob.DecodeMetrics(old)
		if err != nil {
			return fmt.Errorf("archive %s: existing object: %w", where, err)
		}
		if err := blob.CheckHour(prev, capabilityID, componentID, hour); err != nil {
			return fmt.Errorf("archive %s: existing object: %w", where, err)
		}
		for _, m := range prev {
			union[dynamo.MetricKeyOf(m)] = m
		}
		merged = len(prev)
	}
	for _, m := range table {
		union[dynamo.MetricKeyOf(m)] = m
	}
	all := make([]*catalog.Metric, 0, len(union))
	for _, m := range union {
		all = append(all, m)
	}
	data, err := blob.EncodeMetrics(all)
	if err != nil {
		return fmt.Errorf("archive %s: %w", where, err)
	}
	// (2) Write, (3) verify.
	if err := a.obj.PutMetricsObject(ctx, key, data); err != nil {
		return fmt.Errorf("archive %s: %w", where, err)
	}
	if err := a.verify(ctx, key, data, union); err != nil {
		return fmt.Errorf("archive %s: verify: %w", where, err)
	}
	rep.ObjectsWritten++
	if merged > 0 {
		rep.ObjectsMerged++
	}
	rep.PointsArchived += len(union)
	rep.BytesWritten += int64(len(data))
	// (4) Only now delete the table's copies, each only if it is still the one archived.
	n, kept, err := a.db.DeleteArchived(ctx, table)
	rep.ItemsDeleted += n
	rep.ItemsKept += kept
	if err != nil {
		return fmt.Errorf("archive %s: %w", where, err)
	}
	if progress != nil {
		progress(Progress{
			CapabilityID: capabilityID, ComponentID: componentID, Hour: hour, URI: where,
			Points: len(union), Merged: merged, Deleted: n, Totals: *rep,
		})
	}
	return nil
}

// verify reads the object back and checks that it holds exactly the bytes written, and that
// they decode to the samples of want.
func (a *Archiver) verify(ctx context.Context, key string, data []byte, want map[dynamo.MetricKey]*catalog.Metric) error {
	got, err := a.obj.GetMetricsObject(ctx, key)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("%w: read back %d bytes that differ from the %d written", blob.ErrCorrupt, len(got), len(data))
	}
	ms, err := blob.DecodeMetrics(got)
	if err != nil {
		return err
	}
	if len(ms) != len(want) {
		return fmt.Errorf("%w: read back %d samples, wrote %d", blob.ErrCorrupt, len(ms), len(want))
	}
	for _, m := range ms {
		if want[dynamo.MetricKeyOf(m)] == nil {
			return fmt.Errorf("%w: read back sample %s that was not written", blob.ErrCorrupt, dynamo.MetricKeyOf(m))
		}
	}
	return nil
}
