package graph_test

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/internal/memdyn"
)

// rollupFields are the Stat fields of MetricRollup, in the order sampleValues returns them.
var rollupFields = []string{"availability", "latencyP50", "latencyP95", "latencyP99", "errorRate", "throughput", "cpu", "memory"}

const rollupSelection = `start end count availability { min max avg last } latencyP50 { min max avg last } latencyP95 { min max avg last } latencyP99 { min max avg last } errorRate { min max avg last } throughput { min max avg last } cpu { min max avg last } memory { min max avg last }`

const rollupsQuery = `query($id: ID!, $iv: RollupInterval!, $from: DateTime!, $to: DateTime, $t: MetricType) { node(id: $id) { ... on Component { metricRollups(interval: $iv, from: $from, to: $to, metricType: $t) { ` + rollupSelection + ` } } } }`

type stat struct{ Min, Max, Avg, Last *float64 }

type rollup struct {
	Start, End string
	Count      int
	Stats      map[string]*stat
}

// rollupOut decodes a metricRollups answer.
type rollupOut struct {
	Node struct {
		MetricRollups []map[string]any
	}
}

func (o rollupOut) rollups() []rollup {
	var out []rollup
	for _, m := range o.Node.MetricRollups {
		r := rollup{Start: m["start"].(string), End: m["end"].(string), Count: int(m["count"].(float64)), Stats: map[string]*stat{}}
		for _, f := range rollupFields {
			s, _ := m[f].(map[string]any)
			if s == nil {
				continue
			}
			st := &stat{}
			for k, p := range map[string]**float64{"min": &st.Min, "max": &st.Max, "avg": &st.Avg, "last": &st.Last} {
				if v, ok := s[k].(float64); ok {
					*p = &v
				}
			}
			r.Stats[f] = st
		}
		out = append(out, r)
	}
	return out
}

// testSample is one sample as the tests send it: values by rollup field, a missing one absent.
type testSample struct {
	at   time.Time
	vals map[string]float64
}

func (s testSample) input(capID, compID string) map[string]any {
	values := map[string]any{}
	v := s.vals
	if x, ok := v["availability"]; ok {
		values["availability"] = map[string]any{"value": x}
	}
	if _, ok := v["latencyP95"]; ok {
		values["latency"] = map[string]any{"p50": v["latencyP50"], "p95": v["latencyP95"], "p99": v["latencyP99"], "max": v["latencyP99"]}
	}
	if x, ok := v["errorRate"]; ok {
		values["errors"] = map[string]any{"rate": x, "count": 1}
	}
	if x, ok := v["throughput"]; ok {
		n := int(math.Round(x * 60))
		values["throughput"] = map[string]any{"requests": n, "successful": n, "failed": 0}
	}
	if _, ok := v["cpu"]; ok {
		values["saturation"] = map[string]any{"cpu": v["cpu"], "memory": v["memory"], "connections": 1}
	}
	return map[string]any{"capabilityId": capID, "componentId": compID, "metricType": "PERFORMANCE", "timestamp": s.at.Format(time.RFC3339), "interval": "1m", "values": values}
}

// randomSample draws a sample at t; each group of values is missing one time in five.
func randomSample(rng *rand.Rand, t time.Time) testSample {
	v := map[string]float64{}
	r2 := func(lo, hi float64) float64 { return math.Round((lo+rng.Float64()*(hi-lo))*100) / 100 }
	if rng.IntN(5) > 0 {
		v["availability"] = r2(95, 100)
	}
	if rng.IntN(5) > 0 {
		p50 := r2(5, 50)
		v["latencyP50"], v["latencyP95"], v["latencyP99"] = p50, p50+r2(10, 100), p50+r2(100, 300)
	}
	if rng.IntN(5) > 0 {
		v["errorRate"] = r2(0, 5)
	}
	if rng.IntN(5) > 0 {
		v["throughput"] = float64(rng.IntN(600)) / 60 // requests per minute / 60
	}
	if rng.IntN(5) > 0 {
		v["cpu"], v["memory"] = r2(0, 100), r2(0, 100)
	}
	return testSample{at: t, vals: v}
}

// bruteRollups aggregates the samples as they stand (the last write of a timestamp wins) into
// buckets of width w: the reference the rollups must equal.
func bruteRollups(samples []testSample, w time.Duration) []rollup {
	byTime := map[time.Time]testSample{}
	for _, s := range samples {
		byTime[s.at.UTC()] = s
	}
	times := make([]time.Time, 0, len(byTime))
	for t := range byTime {
		times = append(times, t)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	type acc struct {
		n                   int
		min, max, sum, last float64
	}
	var out []rollup
	var accs map[string]*acc
	flush := func() {
		if len(out) == 0 {
			return
		}
		r := &out[len(out)-1]
		for f, a := range accs {
			avg := a.sum / float64(a.n)
			mn, mx, last := a.min, a.max, a.last
			r.Stats[f] = &stat{Min: &mn, Max: &mx, Avg: &avg, Last: &last}
		}
	}
	for _, t := range times {
		start := t.Truncate(w)
		if len(out) == 0 || out[len(out)-1].Start != start.Format(time.RFC3339) {
			flush()
			out = append(out, rollup{Start: start.Format(time.RFC3339), End: start.Add(w).Format(time.RFC3339), Stats: map[string]*stat{}})
			accs = map[string]*acc{}
		}
		out[len(out)-1].Count++
		for f, x := range byTime[t].vals {
			a := accs[f]
			if a == nil {
				a = &acc{min: x, max: x}
				accs[f] = a
			}
			a.n++
			a.sum += x
			a.min, a.max, a.last = math.Min(a.min, x), math.Max(a.max, x), x
		}
	}
	flush()
	return out
}

// sameRollups compares rollups (times compared as instants, averages within 1e-9 relative).
func sameRollups(t *testing.T, what string, got, want []rollup) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d buckets, want %d\ngot  %v\nwant %v", what, len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		gs, _ := time.Parse(time.RFC3339, g.Start)
		ws, _ := time.Parse(time.RFC3339, w.Start)
		ge, _ := time.Parse(time.RFC3339, g.End)
		we, _ := time.Parse(time.RFC3339, w.End)
		if !gs.Equal(ws) || !ge.Equal(we) || g.Count != w.Count {
			t.Errorf("%s bucket %d: %s..%s count %d, want %s..%s count %d", what, i, g.Start, g.End, g.Count, w.Start, w.End, w.Count)
		}
		for _, f := range rollupFields {
			gf, wf := g.Stats[f], w.Stats[f]
			if (gf == nil) != (wf == nil) {
				t.Errorf("%s bucket %d %s: %v, want %v", what, i, f, gf, wf)
				continue
			}
			if gf == nil {
				continue
			}
			eq := func(a, b *float64, tol float64) bool {
				return a != nil && b != nil && math.Abs(*a-*b) <= tol*math.Max(1, math.Abs(*b))
			}
			if !eq(gf.Min, wf.Min, 0) || !eq(gf.Max, wf.Max, 0) || !eq(gf.Last, wf.Last, 0) || !eq(gf.Avg, wf.Avg, 1e-9) {
				t.Errorf("%s bucket %d %s: min %v max %v avg %v last %v, want %v %v %v %v", what, i, f,
					*gf.Min, *gf.Max, *gf.Avg, *gf.Last, *wf.Min, *wf.Max, *wf.Avg, *wf.Last)
			}
		}
	}
}

// rollupHarness creates a capability with one component for the rollup tests.
func rollupHarness(t *testing.T, capID, compID string) *harness {
	h := newHarness(t)
	h.env.RequireTransactions(t)
	h.createCapability(t, capID)
	h.ok(t, addComp, map[string]any{"cap": capID, "in": component(compID, 1, "")}, nil)
	return h
}

func (h *harness) record(t *testing.T, capID, compID string, samples []testSample) *gqlResponse {
	t.Helper()
	in := make([]any, len(samples))
	for i, s := range samples {
		in[i] = s.input(capID, compID)
	}
	return h.ok(t, recordMetrics, map[string]any{"in": in}, nil)
}

func (h *harness) rollups(t *testing.T, capID, compID, interval string, from, to time.Time) ([]rollup, *gqlResponse) {
	t.Helper()
	var out rollupOut
	resp := h.ok(t, rollupsQuery, map[string]any{"id": capID + "/components/" + compID, "iv": interval,
		"from": from.Format(time.RFC3339), "to": to.Format(time.RFC3339)}, &out)
	return out.rollups(), resp
}

// HOUR and DAY rollups equal the aggregates of the raw samples, over random series with missing
// values, rewrites (the same timestamp sent again with other values) and samples spread over
// several hours and days, recorded in calls of up to 100 samples.
func TestMetricRollupsEqualTheSamples(t *testing.T) {
	const capID, compID = "CAP-RU-001", "ru-a"
	h := rollupHarness(t, capID, compID)
	rng := rand.New(rand.NewPCG(22, 1))
	base := testNow.Add(-50 * time.Hour).Truncate(time.Minute)
	var all []testSample
	var call []testSample
	for i := range 400 {
		at := base.Add(time.Duration(rng.IntN(50*60)) * time.Minute)
		if i%7 == 3 && len(all) > 0 {
			at = all[rng.IntN(len(all))].at // a rewrite
		}
		s := randomSample(rng, at)
		if slices.ContainsFunc(call, func(c testSample) bool { return c.at.Equal(at) }) {
			h.record(t, capID, compID, call)
			call = nil
		}
		call = append(call, s)
		all = append(all, s)
		if len(call) == 50 {
			h.record(t, capID, compID, call)
			call = nil
		}
	}
	if len(call) > 0 {
		h.record(t, capID, compID, call)
	}
	from, to := base.Add(-time.Hour), testNow
	got, _ := h.rollups(t, capID, compID, "HOUR", from, to)
	sameRollups(t, "HOUR", got, bruteRollups(all, time.Hour))
	got, _ = h.rollups(t, capID, compID, "DAY", from, to)
	sameRollups(t, "DAY", got, bruteRollups(all, 24*time.Hour))
	got, _ = h.rollups(t, capID, compID, "FIVE_MINUTES", from, to)
	sameRollups(t, "FIVE_MINUTES", got, bruteRollups(all, 5*time.Minute))
	// A range inside the series: the buckets holding from and to, whole.
	mid := base.Add(20*time.Hour + 30*time.Minute)
	got, _ = h.rollups(t, capID, compID, "HOUR", mid, mid.Add(2*time.Hour))
	var want []rollup
	for _, r := range bruteRollups(all, time.Hour) {
		if s, _ := time.Parse(time.RFC3339, r.Start); !s.Before(mid.Truncate(time.Hour)) && !s.After(mid.Add(2*time.Hour)) {
			want = append(want, r)
		}
	}
	sameRollups(t, "HOUR, part", got, want)
}

// The costs: DAY over 90 days and HOUR over 7 days are one Query each, beside the component's
// own read; recordMetrics costs one request more than before rollups.
func TestMetricRollupsBudget(t *testing.T) {
	const capID, compID = "CAP-RU-002", "ru-b"
	h := rollupHarness(t, capID, compID)
	rng := rand.New(rand.NewPCG(22, 2))
	resp := h.record(t, capID, compID, []testSample{randomSample(rng, testNow.Add(-10*time.Minute))})
	// 6 before rollups (graph/deploy_test.go), + the BatchGetItem of the hour and day items;
	// the samples' BatchWriteItem became the TransactWriteItems that writes them with their
	// rollups.
	if n := resp.Extensions.DynamoDB.Requests; n != 7 || resp.Extensions.DynamoDB.Operations["BatchWriteItem"] != 0 {
		t.Errorf("recordMetrics of one sample: %d requests, want 7 (%v)", n, resp.Extensions.DynamoDB.Operations)
	}
	t.Logf("recordMetrics of one sample: %d requests, %v WCU", resp.Extensions.DynamoDB.Requests, resp.Extensions.DynamoDB.WriteCapacityUnits)
	id := capID + "/components/" + compID
	base := h.do(t, `query($id: ID!) { node(id: $id) { id ... on Component { name } } }`, map[string]any{"id": id}).Extensions.DynamoDB.Requests
	for _, c := range []struct {
		interval string
		days     int
	}{{"DAY", 90}, {"HOUR", 7}, {"DAY", 1}} {
		_, resp := h.rollups(t, capID, compID, c.interval, testNow.Add(-time.Duration(c.days)*24*time.Hour), testNow)
		if n := resp.Extensions.DynamoDB.Requests; n != base+1 {
			t.Errorf("%s over %d days: %d requests, want %d (the component) + 1 (%v)", c.interval, c.days, n, base, resp.Extensions.DynamoDB.Operations)
		}
	}
}

// Concurrent recordMetrics calls into one hour (different samples) end exact: every sample is
// counted once, min, max, avg and last are the samples'.
func TestMetricRollupsConcurrentCalls(t *testing.T) {
	const capID, compID = "CAP-RU-003", "ru-c"
	h := rollupHarness(t, capID, compID)
	rng := rand.New(rand.NewPCG(22, 3))
	hour := testNow.Add(-3 * time.Hour).Truncate(time.Hour)
	const n = 8
	samples := make([]testSample, n)
	for i := range samples {
		samples[i] = randomSample(rng, hour.Add(time.Duration(i*7)*time.Minute))
	}
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			resp := h.do(t, recordMetrics, map[string]any{"in": []any{samples[i].input(capID, compID)}})
			if len(resp.Errors) > 0 {
				errs <- resp.Body
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatalf("concurrent recordMetrics: %s", e)
	}
	h.wrote = true
	got, _ := h.rollups(t, capID, compID, "HOUR", hour, hour)
	sameRollups(t, "HOUR", got, bruteRollups(samples, time.Hour))
	if len(got) != 1 || got[0].Count != n {
		t.Fatalf("concurrent calls: %v", got)
	}
	got, _ = h.rollups(t, capID, compID, "DAY", hour, hour)
	sameRollups(t, "DAY", got, bruteRollups(samples, 24*time.Hour))
}

// Out-of-range and malformed arguments are BAD_USER_INPUT naming the argument, before any read
// of rollups.
func TestMetricRollupsBounds(t *testing.T) {
	h := newHarness(t)
	id := "CAP-ALERT-MGT-001/components/api-server-alert-001"
	for _, c := range []struct {
		interval string
		span     time.Duration
		ok       bool
	}{
		{"FIVE_MINUTES", 7 * 24 * time.Hour, true}, {"FIVE_MINUTES", 7*24*time.Hour + time.Minute, false},
		{"HOUR", 31 * 24 * time.Hour, true}, {"HOUR", 32 * 24 * time.Hour, false},
		{"DAY", 731 * 24 * time.Hour, true}, {"DAY", 732 * 24 * time.Hour, false},
		{"DAY", -time.Hour, false},
	} {
		resp := h.do(t, rollupsQuery, map[string]any{"id": id, "iv": c.interval, "from": testNow.Add(-c.span).Format(time.RFC3339), "to": testNow.Format(time.RFC3339)})
		if c.ok != (len(resp.Errors) == 0) {
			t.Errorf("%s over %s: %s", c.interval, c.span, resp.Body)
		}
		if !c.ok && (resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "from") {
			t.Errorf("%s over %s: %s, want BAD_USER_INPUT naming from", c.interval, c.span, resp.Body)
		}
	}
}

// Archiving the samples (moved to S3, deleted from the table) changes no rollup: HOUR and DAY
// answer the same before and after, and so does FIVE_MINUTES, which reads the archive then.
func TestMetricRollupsSurviveTheArchive(t *testing.T) {
	const capID, compID = "CAP-RU-004", "ru-d"
	h := newHybridHarness(t)
	h.env.RequireTransactions(t)
	h.createCapability(t, capID)
	h.ok(t, addComp, map[string]any{"cap": capID, "in": component(compID, 1, "")}, nil)
	rng := rand.New(rand.NewPCG(22, 4))
	var all []testSample
	for i := range 90 {
		all = append(all, randomSample(rng, testNow.Add(-6*time.Hour).Add(time.Duration(i*4)*time.Minute)))
	}
	h.record(t, capID, compID, all[:60])
	h.record(t, capID, compID, all[60:])
	from := testNow.Add(-7 * time.Hour)
	before := map[string][]rollup{}
	for _, iv := range []string{"HOUR", "DAY", "FIVE_MINUTES"} {
		before[iv], _ = h.rollups(t, capID, compID, iv, from, testNow)
	}
	sameRollups(t, "HOUR", before["HOUR"], bruteRollups(all, time.Hour))
	sameRollups(t, "DAY", before["DAY"], bruteRollups(all, 24*time.Hour))
	var rep struct {
		ArchiveMetrics struct{ ItemsDeleted int }
	}
	h.ok(t, `mutation($b: DateTime!) { archiveMetrics(before: $b) { itemsDeleted } }`, map[string]any{"b": testNow.Add(-30 * time.Minute).Format(time.RFC3339)}, &rep)
	if rep.ArchiveMetrics.ItemsDeleted < 80 {
		t.Fatalf("archive deleted %d items, want the samples older than 30 minutes", rep.ArchiveMetrics.ItemsDeleted)
	}
	for _, iv := range []string{"HOUR", "DAY", "FIVE_MINUTES"} {
		after, _ := h.rollups(t, capID, compID, iv, from, testNow)
		sameRollups(t, iv+" after the archive", after, before[iv])
	}
}

const trendsQuery = `query($id: ID!, $w: String) { node(id: $id) { ... on Component { trends(window: $w) { availability latency throughput errors window } } } }`

// Trends on constructed series: availability rising (IMPROVING), latency rising (DEGRADING),
// throughput flat (STABLE), errors noisy within the ±2 % band (STABLE); falling series the other
// way; too few points STABLE; one request beside the component's read.
func TestComponentTrends(t *testing.T) {
	const capID = "CAP-RU-005"
	h := rollupHarness(t, capID, "ru-up")
	h.ok(t, addComp, map[string]any{"cap": capID, "in": component("ru-down", 2, "")}, nil)
	h.ok(t, addComp, map[string]any{"cap": capID, "in": component("ru-few", 3, "")}, nil)
	day := testNow.Truncate(24 * time.Hour)
	series := func(sign float64) []testSample {
		var out []testSample
		for i := range 8 {
			at := day.Add(-time.Duration(7-i) * 24 * time.Hour).Add(time.Hour)
			if at.After(testNow) {
				at = testNow
			}
			noise := []float64{0.01, -0.01, 0.005, -0.005, 0, 0.01, -0.01, 0}[i]
			x := float64(i)
			out = append(out, testSample{at: at, vals: map[string]float64{
				"availability": 97 + sign*0.3*x, "latencyP50": 50, "latencyP95": 200 + sign*20*x, "latencyP99": 400,
				"errorRate": 1 + noise, "throughput": 100,
			}})
		}
		return out
	}
	h.record(t, capID, "ru-up", series(1))
	h.record(t, capID, "ru-down", series(-1))
	h.record(t, capID, "ru-few", series(1)[6:])
	type trends struct{ Availability, Latency, Throughput, Errors, Window string }
	get := func(comp, window string) (trends, *gqlResponse) {
		var out struct{ Node struct{ Trends trends } }
		resp := h.ok(t, trendsQuery, map[string]any{"id": capID + "/components/" + comp, "w": window}, &out)
		return out.Node.Trends, resp
	}
	base := h.do(t, `query($id: ID!) { node(id: $id) { id ... on Component { name } } }`, map[string]any{"id": capID + "/components/ru-up"}).Extensions.DynamoDB.Requests
	for _, c := range []struct {
		comp, window string
		want         trends
	}{
		{"ru-up", "7d", trends{"IMPROVING", "DEGRADING", "STABLE", "STABLE", "7d"}},
		{"ru-down", "7d", trends{"DEGRADING", "IMPROVING", "STABLE", "STABLE", "7d"}},
		{"ru-up", "", trends{"IMPROVING", "DEGRADING", "STABLE", "STABLE", "7d"}},
		{"ru-few", "7d", trends{"STABLE", "STABLE", "STABLE", "STABLE", "7d"}},
		{"ru-up", "36h", trends{"STABLE", "STABLE", "STABLE", "STABLE", "36h"}}, // hourly: 2 points
	} {
		var got trends
		var resp *gqlResponse
		if c.window == "" {
			var out struct{ Node struct{ Trends trends } }
			resp = h.ok(t, `query($id: ID!) { node(id: $id) { ... on Component { trends { availability latency throughput errors window } } } }`, map[string]any{"id": capID + "/components/" + c.comp}, &out)
			got = out.Node.Trends
		} else {
			got, resp = get(c.comp, c.window)
		}
		if got != c.want {
			t.Errorf("%s over %q = %+v, want %+v", c.comp, c.window, got, c.want)
		}
		if n := resp.Extensions.DynamoDB.Requests; n != base+1 {
			t.Errorf("trends of %s: %d requests, want %d + 1 (%v)", c.comp, n, base, resp.Extensions.DynamoDB.Operations)
		}
	}
	for _, w := range []string{"0d", "91d", "73h", "0h", "7w", "d", "07d", "-1d", "1.5d", "100d"} {
		resp := h.do(t, trendsQuery, map[string]any{"id": capID + "/components/ru-up", "w": w})
		if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "window" {
			t.Errorf("window %q: %s", w, resp.Body)
		}
	}
}

// A call with a clientRequestToken that stops after writing its samples and rollups, before
// the health (the second TransactWriteItems fails), is completed by its retry: the rollups hold
// the samples once, and the retry's answer is the call's. One that stops at the samples' own
// transaction has written neither samples nor rollups.
func TestMetricRollupsRetryWithTokenCompletes(t *testing.T) {
	const capID, compID = "CAP-RU-006", "ru-f"
	h := rollupHarness(t, capID, compID)
	if h.env.Mem == nil {
		t.Skip("needs memdyn's fault hooks")
	}
	rng := rand.New(rand.NewPCG(22, 6))
	samples := []testSample{randomSample(rng, testNow.Add(-90*time.Minute)), randomSample(rng, testNow.Add(-80*time.Minute))}
	in := []any{samples[0].input(capID, compID), samples[1].input(capID, compID)}
	const withToken = `mutation($in: [MetricInput!]!, $tok: String) { recordMetrics(inputs: $in, clientRequestToken: $tok) { recorded } }`
	// failTransaction fails the call's nth TransactWriteItems (memdyn asks Fail once per item
	// of a transaction: the counter, once per request, picks the request).
	failTransaction := func(n int32) {
		var seen atomic.Int32
		var failing atomic.Bool
		h.env.Counter.Before = func(op string, _ http.ResponseWriter) bool {
			failing.Store(op == "TransactWriteItems" && seen.Add(1) == n)
			return false
		}
		h.env.Mem.SetFaults(&memdyn.Faults{Fail: func(op, table, index string) string {
			if op == "TransactWriteItems" && failing.Load() {
				return "ValidationException"
			}
			return ""
		}})
	}
	defer func() { h.env.Counter.Before = nil }()
	samplesIn := func() int {
		var out struct {
			Node struct {
				Metrics struct{ Nodes []struct{ Timestamp string } }
			}
		}
		h.ok(t, `query($id: ID!) { node(id: $id) { ... on Component { metrics(first: 10) { nodes { timestamp } } } } }`, map[string]any{"id": capID + "/components/" + compID}, &out)
		return len(out.Node.Metrics.Nodes)
	}
	failTransaction(1)
	resp := h.do(t, withToken, map[string]any{"in": in, "tok": "rollup-retry-0"})
	h.env.Mem.SetFaults(nil)
	if len(resp.Errors) == 0 || resp.Extensions.DynamoDB.Operations["TransactWriteItems"] != 1 {
		t.Fatalf("the attempt failed at its samples: %s", resp.Body)
	}
	if got, _ := h.rollups(t, capID, compID, "HOUR", testNow.Add(-2*time.Hour), testNow); len(got) != 0 || samplesIn() != 0 {
		t.Fatalf("rollups after the attempt failed at its samples: %v", got)
	}
	failTransaction(2)
	resp = h.do(t, withToken, map[string]any{"in": in, "tok": "rollup-retry-1"})
	h.env.Mem.SetFaults(nil)
	if len(resp.Errors) == 0 || resp.Extensions.DynamoDB.Operations["TransactWriteItems"] != 2 {
		t.Fatalf("the attempt failed at its health: %s", resp.Body)
	}
	got, _ := h.rollups(t, capID, compID, "HOUR", testNow.Add(-2*time.Hour), testNow)
	sameRollups(t, "HOUR after the failed attempt", got, bruteRollups(samples, time.Hour))
	if n := samplesIn(); n != 2 {
		t.Fatalf("%d samples after the failed attempt, want 2", n)
	}
	h.ok(t, withToken, map[string]any{"in": in, "tok": "rollup-retry-1"}, nil)
	got, _ = h.rollups(t, capID, compID, "HOUR", testNow.Add(-2*time.Hour), testNow)
	sameRollups(t, "HOUR after the retry", got, bruteRollups(samples, time.Hour))
	// Retried again once recorded: answered from the token, the rollups unchanged.
	h.ok(t, withToken, map[string]any{"in": in, "tok": "rollup-retry-1"}, nil)
	got, _ = h.rollups(t, capID, compID, "DAY", testNow.Add(-2*time.Hour), testNow)
	sameRollups(t, "DAY after the second retry", got, bruteRollups(samples, 24*time.Hour))
}

// Deleting the capability removes its rollups with its other items (the audit of the table at
// the test's end finds no item of the partition left but its history).
func TestMetricRollupsDeletedWithTheCapability(t *testing.T) {
	const capID, compID = "CAP-RU-007", "ru-g"
	h := rollupHarness(t, capID, compID)
	rng := rand.New(rand.NewPCG(22, 7))
	h.record(t, capID, compID, []testSample{randomSample(rng, testNow.Add(-time.Hour))})
	count := func() int {
		n := 0
		for _, it := range scanAllItems(t, h) {
			if sk, _ := it["SK"].(string); it["PK"] == "CAPABILITY#"+capID && strings.HasPrefix(sk, "ROLLUP#") {
				n++
			}
		}
		return n
	}
	if n := count(); n != 2 {
		t.Fatalf("%d rollup items, want an hour and a day", n)
	}
	var out struct{ Capability struct{ Revision int } }
	h.ok(t, `query { capability(id: "`+capID+`") { revision } }`, nil, &out)
	h.ok(t, `mutation($r: Int!) { deleteCapability(id: "`+capID+`", expectedRevision: $r) }`, map[string]any{"r": out.Capability.Revision}, nil)
	if n := count(); n != 0 {
		t.Fatalf("%d rollup items after the delete", n)
	}
}

// scanAllItems returns the PK and SK of every item of the table.
func scanAllItems(t *testing.T, h *harness) []map[string]any {
	t.Helper()
	var out []map[string]any
	var start map[string]types.AttributeValue
	for {
		page, err := h.env.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: &h.env.Table, ExclusiveStartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk, _ := it["PK"].(*types.AttributeValueMemberS)
			sk, _ := it["SK"].(*types.AttributeValueMemberS)
			if pk != nil && sk != nil {
				out = append(out, map[string]any{"PK": pk.Value, "SK": sk.Value})
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		start = page.LastEvaluatedKey
	}
}

// The rollups of several components in one request are read at once: one Query each, in one
// round trip after the components' read.
func TestMetricRollupsOfSeveralComponentsOneRoundTrip(t *testing.T) {
	const capID = "CAP-RU-008"
	h := rollupHarness(t, capID, "ru-h1")
	h.ok(t, addComp, map[string]any{"cap": capID, "in": component("ru-h2", 2, "")}, nil)
	h.ok(t, addComp, map[string]any{"cap": capID, "in": component("ru-h3", 3, "")}, nil)
	rng := rand.New(rand.NewPCG(22, 8))
	for _, c := range []string{"ru-h1", "ru-h2", "ru-h3"} {
		h.record(t, capID, c, []testSample{randomSample(rng, testNow.Add(-2*time.Hour))})
	}
	q := `query($from: DateTime!) { capability(id: "` + capID + `") { components { componentId metricRollups(interval: DAY, from: $from) { count } } } }`
	stop := h.env.RoundTrips(40 * time.Millisecond)
	var out struct {
		Capability struct {
			Components []struct {
				MetricRollups []struct{ Count int }
			}
		}
	}
	h.ok(t, q, map[string]any{"from": testNow.Add(-90 * 24 * time.Hour).Format(time.RFC3339)}, &out)
	requests, trips := stop()
	if len(out.Capability.Components) != 3 {
		t.Fatalf("components = %+v", out)
	}
	for _, c := range out.Capability.Components {
		if len(c.MetricRollups) != 1 || c.MetricRollups[0].Count != 1 {
			t.Errorf("rollups = %+v", c.MetricRollups)
		}
	}
	// The capability, its components, then the three components' rollups at once.
	if requests != 2+3 || trips > 3 {
		t.Errorf("%d requests in %d round trips, want 5 in at most 3", requests, trips)
	}
}

// The sample catalogue, bulk-loaded, has the rollups of its samples: HOUR and DAY count them
// and hold their availability and latency p95 as the raw samples do.
func TestSampleCatalogueHasRollups(t *testing.T) {
	h := newHarness(t)
	const id = "CAP-ALERT-MGT-001/components/api-server-alert-001"
	from := testNow.Add(-48 * time.Hour)
	var raw struct {
		Node struct {
			Metrics struct {
				Nodes []struct {
					Timestamp string
					Values    struct {
						Availability *struct{ Value float64 }
						Latency      *struct{ P95 float64 }
					}
				}
			}
		}
	}
	h.ok(t, `query($id: ID!, $from: DateTime) { node(id: $id) { ... on Component { metrics(metricType: PERFORMANCE, from: $from, first: 1000) { nodes { timestamp values { availability { value } latency { p95 } } } } } } }`,
		map[string]any{"id": id, "from": from.Format(time.RFC3339)}, &raw)
	var samples []testSample
	for _, n := range raw.Node.Metrics.Nodes {
		at, err := time.Parse(time.RFC3339, n.Timestamp)
		if err != nil {
			t.Fatal(err)
		}
		v := map[string]float64{}
		if n.Values.Availability != nil {
			v["availability"] = n.Values.Availability.Value
		}
		if n.Values.Latency != nil {
			v["latencyP95"] = n.Values.Latency.P95
		}
		samples = append(samples, testSample{at: at, vals: v})
	}
	if len(samples) < 10 {
		t.Fatalf("the sample catalogue has %d samples of %s in 48 hours", len(samples), id)
	}
	for _, c := range []struct {
		interval string
		width    time.Duration
	}{{"HOUR", time.Hour}, {"DAY", 24 * time.Hour}} {
		got, _ := h.rollups(t, "CAP-ALERT-MGT-001", "api-server-alert-001", c.interval, from, testNow)
		// Only the two values read above are compared; the first bucket may hold samples before from.
		for i := range got {
			for f := range got[i].Stats {
				if f != "availability" && f != "latencyP95" {
					delete(got[i].Stats, f)
				}
			}
		}
		want := bruteRollups(samples, c.width)
		if len(got) > 0 && len(want) > 0 && got[0].Count != want[0].Count {
			got, want = got[1:], want[1:]
		}
		sameRollups(t, c.interval, got, want)
	}
}

// A sample with a huge latency is refused before anything is written (two of them in one hour
// made the rollup's sum infinite: metricRollups answered INTERNAL_SERVER_ERROR for the hour and
// the day, for every reader).
func TestMetricRollupsRefuseHugeValues(t *testing.T) {
	const capID, compID = "CAP-RU-HUGE", "ru-h"
	h := rollupHarness(t, capID, compID)
	before := len(scanAllItems(t, h))
	at := testNow.Add(-30 * time.Minute).Format(time.RFC3339)
	for _, p95 := range []float64{1.7e308, -5} {
		in := map[string]any{"capabilityId": capID, "componentId": compID, "metricType": "PERFORMANCE", "timestamp": at, "interval": "5m",
			"values": map[string]any{"latency": map[string]any{"p50": 1, "p95": p95, "p99": p95, "max": p95}}}
		resp := h.do(t, recordMetrics, map[string]any{"in": []any{in, in}})
		if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != "inputs[0].values.latency.p95" {
			t.Errorf("p95 %g: %s, want BAD_USER_INPUT naming inputs[0].values.latency.p95", p95, resp.Body)
		}
	}
	if after := len(scanAllItems(t, h)); after != before {
		t.Errorf("refused samples wrote %d items", after-before)
	}
	rs, resp := h.rollups(t, capID, compID, "HOUR", testNow.Add(-2*time.Hour), testNow)
	if len(resp.Errors) != 0 || len(rs) != 0 {
		t.Errorf("rollups after the refused samples: %v %s", rs, resp.Body)
	}
}
