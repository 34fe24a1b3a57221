package graph

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

// The longest from..to range of Component.metricRollups per interval (docs/api.md#metric-rollups).
var maxRollupRange = map[model.RollupInterval]time.Duration{
	model.RollupIntervalFiveMinutes: 7 * 24 * time.Hour,
	model.RollupIntervalHour:        31 * 24 * time.Hour,
	model.RollupIntervalDay:         731 * 24 * time.Hour,
}

// rollupWidth is the width of an interval's buckets.
var rollupWidth = map[model.RollupInterval]time.Duration{
	model.RollupIntervalFiveMinutes: 5 * time.Minute,
	model.RollupIntervalHour:        time.Hour,
	model.RollupIntervalDay:         24 * time.Hour,
}

// metricRollups answers Component.metricRollups: HOUR and DAY from the rollup items (one Query),
// FIVE_MINUTES from the raw samples of the table and the archive, merged as Component.metrics
// reads them, aggregated here.
func (r *Resolver) metricRollups(ctx context.Context, c *catalog.Component, t catalog.MetricType, interval model.RollupInterval, from time.Time, to *catalog.Timestamp) ([]*model.MetricRollup, error) {
	end := r.now()
	if to != nil {
		end = to.Time
	}
	if end.Before(from) {
		return nil, catalog.Invalid("from", "%s is after to (%s)", catalog.NewTimestamp(from), catalog.NewTimestamp(end))
	}
	if limit := maxRollupRange[interval]; end.Sub(from) > limit {
		return nil, catalog.Invalid("from", "%s rollups cover at most %d days: from is %.1f days before to", interval, int(limit.Hours()/24), end.Sub(from).Hours()/24)
	}
	var rs []*dynamo.Rollup
	var err error
	switch interval {
	case model.RollupIntervalHour, model.RollupIntervalDay:
		rs, err = r.store.MetricRollups(ctx, c.CapabilityID, c.ComponentID, t, interval == model.RollupIntervalDay, from, end)
	default:
		rs, err = r.fiveMinuteRollups(ctx, c, t, from, end)
	}
	if err != nil {
		return nil, err
	}
	out := make([]*model.MetricRollup, len(rs))
	for i, x := range rs {
		out[i] = rollupModel(x)
	}
	return out, nil
}

// fiveMinuteRollups reads a component's samples of one type from the bucket holding from to the
// end of the one holding to, a page of MaxMetricsPage at a time, and aggregates them.
func (r *Resolver) fiveMinuteRollups(ctx context.Context, c *catalog.Component, t catalog.MetricType, from, to time.Time) ([]*dynamo.Rollup, error) {
	w := rollupWidth[model.RollupIntervalFiveMinutes]
	lo := catalog.NewTimestamp(from.UTC().Truncate(w))
	hi := catalog.NewTimestamp(to.UTC().Truncate(w).Add(w - time.Microsecond))
	var samples []*catalog.Metric
	after := ""
	for {
		p, err := r.metricsPage(ctx, metricsKey{ComponentID: c.ComponentID, MetricType: t, From: timeKey(&lo), To: timeKey(&hi),
			First: dynamo.MaxMetricsPage, After: after}, c.CapabilityID)
		if err != nil {
			return nil, err
		}
		samples = append(samples, p.Items...)
		if !p.HasNext || len(p.Cursors) == 0 {
			break
		}
		after = p.Cursors[len(p.Cursors)-1]
	}
	kept := samples[:0]
	for _, m := range samples {
		if m.MetricType == t && !m.Timestamp.Before(lo.Time) && !m.Timestamp.After(hi.Time) {
			kept = append(kept, m)
		}
	}
	return dynamo.AggregateMetrics(kept, w), nil
}

func rollupModel(x *dynamo.Rollup) *model.MetricRollup {
	stat := func(i int) *model.Stat {
		f := x.Fields[i]
		if f.N == 0 {
			return nil
		}
		avg := f.Avg()
		return &model.Stat{Min: &f.Min, Max: &f.Max, Avg: &avg, Last: &f.Last}
	}
	return &model.MetricRollup{
		Start: catalog.NewTimestamp(x.Start), End: catalog.NewTimestamp(x.End), Count: x.Count,
		Availability: stat(dynamo.FieldAvailability), LatencyP50: stat(dynamo.FieldLatencyP50), LatencyP95: stat(dynamo.FieldLatencyP95),
		LatencyP99: stat(dynamo.FieldLatencyP99), ErrorRate: stat(dynamo.FieldErrorRate), Throughput: stat(dynamo.FieldThroughput),
		CPU: stat(dynamo.FieldCPU), Memory: stat(dynamo.FieldMemory),
	}
}

// Trend bounds.
const (
	maxTrendDays  = 90
	maxTrendHours = 72
	// hourlyTrendsBelow is the window under which trends fit hourly rollups, daily ones beyond.
	hourlyTrendsBelow = 3 * 24 * time.Hour
	// trendDeadBand is the fitted change over the window, as a share of the window's mean, within
	// which a series is STABLE.
	trendDeadBand = 0.02
	// minTrendPoints is how many buckets a series needs for a direction.
	minTrendPoints = 3
)

// parseTrendWindow parses `Nd` (1..90 days) or `Nh` (1..72 hours).
func parseTrendWindow(s string) (time.Duration, error) {
	bad := catalog.Invalid("window", "%q is not a window: give 1d to %dd, or 1h to %dh", s, maxTrendDays, maxTrendHours)
	if len(s) < 2 || len(s) > 3 {
		return 0, bad
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 1 || strings.HasPrefix(s, "0") || strings.ContainsAny(s[:len(s)-1], "+-") {
		return 0, bad
	}
	switch s[len(s)-1] {
	case 'd':
		if n <= maxTrendDays {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	case 'h':
		if n <= maxTrendHours {
			return time.Duration(n) * time.Hour, nil
		}
	}
	return 0, bad
}

// trends answers Component.trends: one Query of the component's PERFORMANCE rollups over the
// window ending now (daily, hourly under 3 days), and a least-squares fit per value.
func (r *Resolver) trends(ctx context.Context, c *catalog.Component, window string) (*model.ComponentTrends, error) {
	d, err := parseTrendWindow(window)
	if err != nil {
		return nil, err
	}
	now := r.now()
	rs, err := r.store.MetricRollups(ctx, c.CapabilityID, c.ComponentID, catalog.MetricPerformance, d >= hourlyTrendsBelow, now.Add(-d), now)
	if err != nil {
		return nil, err
	}
	return &model.ComponentTrends{
		Availability: TrendOf(rs, dynamo.FieldAvailability, d, true),
		Latency:      TrendOf(rs, dynamo.FieldLatencyP95, d, false),
		Throughput:   TrendOf(rs, dynamo.FieldThroughput, d, true),
		Errors:       TrendOf(rs, dynamo.FieldErrorRate, d, false),
		Window:       window,
	}, nil
}

// TrendOf fits a least-squares line to the averages of field over the rollups (x the bucket
// start) and returns the direction of its change over the window (slope × window): STABLE
// within ±trendDeadBand of the mean, or with fewer than minTrendPoints buckets carrying the
// value; otherwise a rise is IMPROVING when higher is better, DEGRADING when it is not.
func TrendOf(rs []*dynamo.Rollup, field int, window time.Duration, higherIsBetter bool) *model.Trend {
	stable := model.TrendStable
	var xs, ys []float64
	for _, x := range rs {
		if f := x.Fields[field]; f.N > 0 {
			xs = append(xs, x.Start.Sub(rs[0].Start).Seconds())
			ys = append(ys, f.Avg())
		}
	}
	if len(xs) < minTrendPoints {
		return &stable
	}
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return &stable
	}
	change := sxy / sxx * window.Seconds()
	if math.Abs(change) <= trendDeadBand*math.Abs(my) {
		return &stable
	}
	t := model.TrendDegrading
	if (change > 0) == higherIsBetter {
		t = model.TrendImproving
	}
	return &t
}

// trendWindowDefault is Component.trends' default window.
const trendWindowDefault = "7d"
