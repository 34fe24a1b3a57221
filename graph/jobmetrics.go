package graph

import (
	"context"
	"time"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// maxJobMargin bounds Job.componentMetrics' margin.
const maxJobMargin = 24 * time.Hour

// parseMargin reads Job.componentMetrics' margin: a Go duration (15m, 1h30m, 0s) from 0 to
// 24h; anything else is a *catalog.ValidationError on "margin".
func parseMargin(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, catalog.Invalid("margin", "%q is not a duration such as 15m, 1h or 0s", s)
	}
	if d < 0 || d > maxJobMargin {
		return 0, catalog.Invalid("margin", "must be between 0s and 24h, got %s", s)
	}
	return d, nil
}

// jobWindow returns the window of Job.componentMetrics: from the job's start less the margin
// to its end plus the margin, or to now while it is pending or running or has no end.
func jobWindow(j *catalog.Job, margin time.Duration, now time.Time) (from, to time.Time) {
	from = j.StartTime.Add(-margin)
	if j.EndTime == nil || j.Status == catalog.JobPending || j.Status == catalog.JobRunning {
		return from, now
	}
	return from, j.EndTime.Add(margin)
}

// jobComponentMetrics answers Job.componentMetrics: the job's target components' samples over
// its window (jobWindow) in time order, then component, then metric type. With a metrics
// archive the window is read across the table and the archive (archive.Metrics: the table's
// part costs the same one Query per component, and S3 is read only for the part of the window
// older than the archive boundary); without one, from the table (dynamo.ComponentsMetrics).
// Cursors are signed over the job, its window's start and the metric type, so they stay valid
// while a running job's window grows.
func (r *Resolver) jobComponentMetrics(ctx context.Context, j *catalog.Job, margin string, metricType catalog.MetricType, first int, after string) (*dynamo.Page[*catalog.Metric], error) {
	m, err := parseMargin(margin)
	if err != nil {
		return nil, err
	}
	if metricType != "" && !metricType.Valid() {
		return nil, catalog.Invalid("metricType", "%q is not a metric type", metricType)
	}
	if first < 1 || first > dynamo.MaxMetricsPage {
		return nil, catalog.Invalid("first", "must be between 1 and %d, got %d", dynamo.MaxMetricsPage, first)
	}
	from, to := jobWindow(j, m, r.now())
	scope := "job|" + j.JobID + "|" + string(metricType) + "|" + from.UTC().Format(catalog.TimeLayout)
	ids := make([]string, 0, len(j.TargetComponents))
	for _, t := range j.TargetComponents {
		ids = append(ids, t.ComponentID)
	}
	if len(ids) == 0 || to.Before(from) {
		if after != "" {
			return nil, catalog.Invalid("after", "cursor is not valid for this query")
		}
		return &dynamo.Page[*catalog.Metric]{}, nil
	}
	if r.archive != nil {
		return r.archive.Metrics(ctx, archive.MetricsQuery{
			CapabilityID: j.CapabilityID, ComponentIDs: ids, MetricType: metricType,
			From: &from, To: &to, First: first, After: after, Scope: scope,
		})
	}
	return r.store.ComponentsMetrics(ctx, dynamo.ComponentsWindow{
		CapabilityID: j.CapabilityID, ComponentIDs: ids, MetricType: metricType, From: from, To: to, Scope: scope,
	}, first, after)
}
