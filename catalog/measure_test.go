package catalog_test

import (
	"errors"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// Every measured value of a sample is a number from 0 to MaxMeasure: a huge latency made the
// rollups' sums infinite (metricRollups answered an internal error for the whole hour and day)
// and a negative one was stored.
func TestValidateMetricMeasures(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	sample := func(v catalog.MetricValues) *catalog.Metric {
		return &catalog.Metric{CapabilityID: "CAP-1", ComponentID: "c1", MetricType: catalog.MetricPerformance,
			Timestamp: catalog.NewTimestamp(now.Add(-time.Hour)), Interval: "5m", Values: &v}
	}
	for _, c := range []struct {
		values catalog.MetricValues
		field  string // "" when valid
	}{
		{catalog.MetricValues{Latency: &catalog.LatencyValue{P50: 10, P95: 40, P99: 90, Max: 200}}, ""},
		{catalog.MetricValues{Latency: &catalog.LatencyValue{P95: catalog.MaxMeasure}}, ""},
		{catalog.MetricValues{Latency: &catalog.LatencyValue{P95: 1.7e308}}, "values.latency.p95"},
		{catalog.MetricValues{Latency: &catalog.LatencyValue{P99: 1e130}}, "values.latency.p99"},
		{catalog.MetricValues{Latency: &catalog.LatencyValue{P95: -5}}, "values.latency.p95"},
		{catalog.MetricValues{Latency: &catalog.LatencyValue{Max: -1}}, "values.latency.max"},
		{catalog.MetricValues{Errors: &catalog.ErrorsValue{Rate: 2e15}}, "values.errors.rate"},
		{catalog.MetricValues{Throughput: &catalog.ThroughputValue{Requests: -3}}, "values.throughput.requests"},
		{catalog.MetricValues{Saturation: &catalog.SaturationValue{CPU: -1}}, "values.saturation.cpu"},
		{catalog.MetricValues{Saturation: &catalog.SaturationValue{Memory: 1e300}}, "values.saturation.memory"},
		{catalog.MetricValues{Saturation: &catalog.SaturationValue{CPU: 55, Memory: 70, Connections: 12}}, ""},
	} {
		err := catalog.ValidateMetric(sample(c.values), now)
		var v *catalog.ValidationError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%+v refused: %v", c.values, err)
		case c.field != "" && !errors.As(err, &v):
			t.Errorf("%+v: %v, want a validation error naming %s", c.values, err, c.field)
		case c.field != "" && v.Field != c.field:
			t.Errorf("%+v: error names %q, want %q", c.values, v.Field, c.field)
		}
	}
}
