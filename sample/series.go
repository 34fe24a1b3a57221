package sample

import (
	"math"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// Performance metric series.

// level is a component's steady operating point.
type level struct {
	avail   float64 // availability, percent
	p95     float64 // latency p95, milliseconds (p50, p99 and max are derived from it)
	errRate float64 // error rate, percent
	rpm     int     // requests per minute
	cpu     float64 // percent
	mem     float64 // percent
	conns   int     // open connections
}

// event is a monitoring alert raised at from and resolved at to (never when to is zero); while
// it is active, latency and the error rate are multiplied by latency and errors (when not 0).
type event struct {
	id, condition   string
	from, to        time.Time
	latency, errors float64
}

// series describes the performance metrics of one component.
type series struct {
	comp *catalog.Component
	cur  level
	// prev, when set, is the level before the component's current trouble began, onset before
	// the newest sample.
	prev  *level
	onset time.Duration
	// phase offsets the component's wave so that charts differ between components.
	phase float64
	// serverShare and timeoutShare split failed requests into 4xx, 5xx and timeouts.
	serverShare, timeoutShare float64
	env, region, az           string // default production, us-east-1, us-east-1a
	trends                    catalog.Trends
	events                    []event
}

// wave is a deterministic oscillation of the k-th sample before the newest, 0 at k == 0.
func wave(k int, phase float64) float64 {
	f := func(a float64) float64 { return 0.6*math.Sin(0.26*a+phase) + 0.4*math.Sin(0.07*a+2*phase) }
	return f(float64(k)) - f(0)
}

// slowWave is a slower, daily-looking oscillation for throughput, 0 at k == 0.
func slowWave(k int, phase float64) float64 {
	return math.Sin(0.045*float64(k)+phase) - math.Sin(phase)
}

func round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

func clampf(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// grade returns "healthy", "degraded" or "unhealthy": healthy while v is within the objective
// (at least it when higher is better, at most it otherwise), degraded within slack of it.
func grade(v, objective, slack float64, higherIsBetter bool) string {
	if objective == 0 {
		return "healthy"
	}
	if higherIsBetter {
		switch {
		case v >= objective:
			return "healthy"
		case v >= objective-slack:
			return "degraded"
		}
		return "unhealthy"
	}
	switch {
	case v <= objective:
		return "healthy"
	case v <= objective+slack:
		return "degraded"
	}
	return "unhealthy"
}

// series returns the component's performance samples, oldest first: one every MetricInterval
// over the MetricWindow up to the newest sample, which is exactly at s.cur.
func (g *gen) series(s series) []*catalog.Metric {
	env, region, az := s.env, s.region, s.az
	if env == "" {
		env = "production"
	}
	if region == "" {
		region, az = "us-east-1", "us-east-1a"
	}
	objective := s.comp.Sla
	if objective == nil {
		objective = &catalog.SLA{}
	}
	n := int(MetricWindow / MetricInterval)
	out := make([]*catalog.Metric, 0, n)
	for k := n - 1; k >= 0; k-- {
		at := g.newest.Add(-time.Duration(k) * MetricInterval)
		lv := s.cur
		if s.prev != nil && time.Duration(k)*MetricInterval > s.onset {
			lv = *s.prev
		}
		w, tw := wave(k, s.phase), slowWave(k, s.phase)
		latF, errF := 1+0.08*w, 1+0.3*w

		active, resolved := []catalog.Alert{}, []catalog.Alert{}
		for _, e := range s.events {
			isActive := !e.from.After(at) && (e.to.IsZero() || e.to.After(at))
			if isActive {
				active = append(active, catalog.Alert{AlertID: e.id, Condition: e.condition, TriggeredAt: catalog.TimePtr(e.from)})
				if e.latency != 0 {
					latF *= e.latency
				}
				if e.errors != 0 {
					errF *= e.errors
				}
			}
			if !e.to.IsZero() && e.to.After(at.Add(-MetricInterval)) && !e.to.After(at) {
				resolved = append(resolved, catalog.Alert{
					AlertID: e.id, Condition: e.condition, TriggeredAt: catalog.TimePtr(e.from), ResolvedAt: catalog.TimePtr(e.to),
				})
			}
		}

		avail := round(clampf(lv.avail+w*(100-lv.avail)*0.4, 0, 100), 3)
		p95 := lv.p95 * math.Max(latF, 0.5)
		requests := int(math.Round(float64(lv.rpm) * math.Max(1+0.12*tw, 0.1)))
		rate := math.Max(lv.errRate*errF, 0)
		failed := int(math.Round(float64(requests) * rate / 100))
		failed = min(failed, requests)
		timeouts := int(math.Round(float64(failed) * s.timeoutShare))
		server := int(math.Round(float64(failed-timeouts) * s.serverShare))
		errorRate := 0.0
		if requests > 0 {
			errorRate = round(100*float64(failed)/float64(requests), 2)
		}
		cpu := round(clampf(lv.cpu+6*w, 0.5, 99.5), 1)
		mem := round(clampf(lv.mem+1.5*wave(k, s.phase+1), 0.5, 99.5), 1)
		conns := max(0, lv.conns+int(math.Round(float64(lv.conns)*0.1*w)))

		errStatus := grade(errorRate, objective.ErrorRate, 2*objective.ErrorRate, false)
		saturation := "healthy"
		switch peak := math.Max(cpu, mem); {
		case peak >= 90:
			saturation = "unhealthy"
		case peak >= 75:
			saturation = "degraded"
		}

		out = append(out, &catalog.Metric{
			Meta:          catalog.Meta{CreatedAt: catalog.NewTimestamp(at)},
			ComponentID:   s.comp.ComponentID,
			ComponentName: s.comp.Name,
			MetricType:    catalog.MetricPerformance,
			Timestamp:     catalog.NewTimestamp(at),
			Interval:      "5m",
			Dimensions:    map[string]any{"environment": env, "region": region, "availability_zone": az},
			Values: &catalog.MetricValues{
				Availability: &catalog.AvailabilityValue{
					Value: avail, Unit: "percent", Status: grade(avail, objective.Availability, 1, true),
				},
				Latency: &catalog.LatencyValue{
					P50: math.Round(p95 * 0.36), P95: math.Round(p95), P99: math.Round(p95 * 1.6), Max: math.Round(p95 * 3.6),
					Unit: "milliseconds", Status: grade(math.Round(p95), objective.ResponseTime, objective.ResponseTime/2, false),
				},
				Throughput: &catalog.ThroughputValue{
					Requests: requests, Successful: requests - failed, Failed: failed, Unit: "per_minute", Status: errStatus,
				},
				Errors: &catalog.ErrorsValue{
					Rate: errorRate, Count: failed, Unit: "percent",
					Types:  map[string]any{"4xx": float64(failed - timeouts - server), "5xx": float64(server), "timeout": float64(timeouts)},
					Status: errStatus,
				},
				Saturation: &catalog.SaturationValue{CPU: cpu, Memory: mem, Connections: conns, Unit: "percent", Status: saturation},
			},
			Alerts: &catalog.MetricAlerts{Active: active, Resolved: resolved},
			Trends: &catalog.Trends{
				Availability: s.trends.Availability, Latency: s.trends.Latency, Throughput: s.trends.Throughput, Errors: s.trends.Errors,
			},
		})
	}
	return out
}
