package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/tune"
)

// config is one benchmark run.
type config struct {
	shape shape

	delay   time.Duration // injected before every DynamoDB request in the measured passes
	n       int           // runs per operation at concurrency c
	c       int
	n1      int // runs per operation at concurrency 1, with the delay (critical path)
	cpuN    int // runs per operation at concurrency 1, without the delay (CPU, allocations)
	warm    int // warm-up runs per operation
	budget  int // DynamoDB requests a pass of one implementation may cost (0: no limit)
	noBase  bool
	loaders int // concurrent BulkLoad calls
	writers int // BatchWriteItem calls in flight per BulkLoad

	backend        string // memdyn or minidyn
	backendProcess bool   // run the backend in a child process
	endpoint       string // an external endpoint instead (no delay injected, no counts)
	idleConns      int

	only string // regexp of the operation names to measure; empty means all

	cpuprofile  string
	memprofile  string
	profileTime time.Duration
	profileOp   string
	loadProfile string

	breakdownOps  string        // regexp of the operations whose CPU is broken down by layer
	breakdownTime time.Duration // how long each of them is profiled for it

	// cacheBytes is the server's partition cache (-cache-bytes); see cacheOptions.
	cacheBytes int64
	// noRetag builds the embedded default's cache without following the store's writes (no
	// dynamo.Options.OnCommit): the comparison of BenchmarkEmbeddedCold, as before Retag.
	noRetag bool
	// floorOps names the operations measured against the floor (floor.go); empty: none.
	floorOps string
	// embedded measures the embedded default against the trivial query (embedded.go), with
	// embN1 runs per operation at concurrency 1 and embN16 at 16.
	embedded      bool
	embN1, embN16 int
	// subs is the subscriptions section (subscriptions.go).
	subs subConfig
	// search is the search section (search.go).
	search searchConfig
	// pg is the comparison with PostGraphile over PostgreSQL (postgraphile.go).
	pg pgConfig

	log io.Writer // progress
	now time.Time // the catalogue's "now"; zero means time.Now()
}

// stats are the measurements of one operation by one implementation (ours or the baseline).
type stats struct {
	Requests              int         // DynamoDB requests per operation (every run must agree)
	RequestsVary          bool        // runs disagreed
	Odd                   map[int]int // the other request counts seen, and how often
	Counted               float64     // requests per operation counted by the backend's handler (-1 when unknown)
	Items                 int         // items read per operation
	Depth                 int         // median critical path at concurrency 1, in DynamoDB round trips
	P50C1                 time.Duration
	Before1, After1       time.Duration // medians at C=1: before the first DynamoDB call, after the last
	P50, P99              time.Duration
	Throughput            float64 // operations per second at concurrency c
	CPU                   time.Duration
	BackendCPU            time.Duration // the child backend's CPU per operation (0 when unknown)
	Allocs                float64
	Bytes                 float64
	Summary               string
	Runs1, RunsC, RunsCPU int           // runs of each pass
	Held1, HeldC          time.Duration // mean time the backend's handler held a request, at C=1 and C=c
}

// opResult is one operation's row.
type opResult struct {
	Op        *operation
	Ours      stats
	Base      *stats
	Breakdown *breakdown // where our CPU went, for the operations -breakdown names
	Floor     *stats     // the floor's CPU and allocations (floor.go), for the operations -floor names
	Cached    *stats     // the server's with the partition cache, warm, for the same operations
	APQ       *apqBytes  // request bytes as an automatic persisted query
}

// report is everything a run measured.
type report struct {
	cfg          config
	items        int
	loadTime     time.Duration
	loadCPU      time.Duration  // this process's CPU time while loading
	loadChildCPU time.Duration  // the child backend's
	loadOps      map[string]int // the load's DynamoDB requests by operation (none for -endpoint)
	results      []*opResult
	delays       delays
	loadBefore   string // /proc/loadavg before and after the run: other work on the machine
	loadAfter    string
	cpuIncludes  string // what the CPU figures include besides the server
	gogc         int    // the GOGC the measurements ran with
	embedded     *embReport
	subs         *subReport
	search       *searchReport
	pg           *pgReport
}

type harness struct {
	apiKey  string // sent with every request
	cfg     config
	be      *backend
	store   *dynamo.Store
	handler http.Handler
	// cachedHandler is the same server with the partition cache of -cache-bytes (nil cache
	// when 0), for the floor's comparison.
	cachedHandler http.Handler
	gen           *generator
	ops           []*operation
	delays        delays
}

func (h *harness) logf(format string, args ...any) {
	if h.cfg.log != nil {
		fmt.Fprintf(h.cfg.log, format+"\n", args...)
	}
}

// run sets up the backend, loads the catalogue and measures every operation.
func run(ctx context.Context, cfg config) (*report, error) {
	h := &harness{cfg: cfg}
	gogc := tune.GC(os.Getenv) // measure the server as it runs
	var err error
	switch {
	case cfg.endpoint != "":
		h.be = external(cfg.endpoint)
	case cfg.backendProcess:
		h.be, err = startChild(cfg.backend)
	default:
		h.be, err = startLocal(cfg.backend)
	}
	if err != nil {
		return nil, err
	}
	defer h.be.Close()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := waitReady(wctx, h.be.URL); err != nil {
		return nil, err
	}
	// The server's configuration (server.go): metrics of every call and request, an API key
	// checked on every request, the request deadline, and one JSON log line per request
	// (formatted, then discarded).
	metrics := graph.NewInstruments(prometheus.NewRegistry())
	if h.store, err = newStore(ctx, h.be.URL, cfg.idleConns, metrics); err != nil {
		return nil, err
	}
	if err := h.be.SetDelay(0); err != nil {
		return nil, err
	}
	if err := h.store.CreateTable(ctx, time.Minute); err != nil {
		return nil, err
	}
	rep := &report{cfg: cfg, loadBefore: loadAverage(), gogc: gogc}
	now := cfg.now
	if now.IsZero() {
		now = time.Now()
	}
	h.gen = newGenerator(cfg.shape, now)
	if cfg.loadProfile != "" {
		f, err := os.Create(cfg.loadProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
	}
	if err := h.be.Reset(); err != nil {
		return nil, err
	}
	start, cpu0, child0 := time.Now(), processCPU(), h.be.childCPU()
	rep.items, err = h.load(ctx)
	rep.loadCPU, rep.loadChildCPU = processCPU()-cpu0, h.be.childCPU()-child0
	if c, cerr := h.be.Counts(); cerr == nil {
		rep.loadOps = c.Ops
	}
	if cfg.loadProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return nil, err
	}
	rep.loadTime = time.Since(start)
	h.logf("loaded %d items in %v (CPU: this process %v, backend %v)", rep.items, rep.loadTime.Round(time.Millisecond),
		rep.loadCPU.Round(time.Millisecond), rep.loadChildCPU.Round(time.Millisecond))
	runtime.GC()
	debug.FreeOSMemory()

	keys := &graph.KeyRing{}
	h.apiKey = graph.NewAPIKey()
	keys.Add(h.apiKey, graph.RoleViewer, "bench")
	opts := graph.Options{
		Logger:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Auth:        &graph.Auth{Keys: keys, Anonymous: graph.RoleNone},
		Deadline:    10 * time.Second,
		Instruments: metrics,
		// As server.go runs it.
		PersistedQueries: graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes),
	}
	// The main passes measure the read planner: every read goes to the backend (no partition
	// cache). The floor's comparison measures the cached server too (cachedHandler).
	h.handler = graph.GraphQLHandler(h.store, opts)
	h.cachedHandler = graph.GraphQLHandler(h.store, cacheOptions(cfg, opts))
	h.ops = operations(opConfig{shape: cfg.shape, gen: h.gen, capIndex: cfg.shape.Capabilities / 2})
	only, err := regexp.Compile(cfg.only)
	if err != nil {
		return nil, fmt.Errorf("-ops: %w", err)
	}
	for _, op := range h.ops {
		if only.MatchString(op.Name) {
			rep.results = append(rep.results, &opResult{Op: op})
		}
	}
	if err := h.measure(ctx, rep); err != nil {
		return nil, err
	}
	if cfg.embedded {
		if rep.embedded, err = measureEmbedded(ctx, cfg, h.logf); err != nil {
			return nil, fmt.Errorf("embedded default: %w", err)
		}
	}
	if cfg.subs.enabled {
		if rep.subs, err = measureSubscriptions(ctx, cfg, h.logf); err != nil {
			return nil, fmt.Errorf("subscriptions: %w", err)
		}
	}
	if cfg.search.enabled {
		if rep.search, err = measureSearch(ctx, cfg, h.logf); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
	}
	if cfg.pg.enabled {
		if rep.pg, err = pgSection(ctx, cfg, h.logf); err != nil {
			return nil, fmt.Errorf("postgraphile: %w", err)
		}
	}
	rep.loadAfter = loadAverage()
	if cfg.cpuprofile != "" {
		if err := h.profile(ctx); err != nil {
			return nil, err
		}
	}
	switch {
	case cfg.endpoint != "":
		rep.cpuIncludes = "the benchmark driver and the SDK client; the external backend is not counted"
	case cfg.backendProcess:
		rep.cpuIncludes = "the driver's in-process call of the handler; the backend runs in a child process and is not counted"
	default:
		rep.cpuIncludes = "the backend, which runs in this process (-backend-process=false)"
	}
	return rep, nil
}

// load bulk-loads the catalogue through dynamo.Store.BulkWrite, cfg.loaders calls at once, small
// groups of bundles each, with no injected delay, then recounts the counters once
// (RepairCounters, as BulkLoad ends: one Scan of the table, not one per group).
func (h *harness) load(ctx context.Context) (int, error) {
	s := h.cfg.shape
	const group = 4
	var total atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(h.cfg.loaders, 1))
	for start := 0; start < s.Capabilities; start += group {
		g.Go(func() error {
			var bundles []*catalog.Bundle
			for i := start; i < min(start+group, s.Capabilities); i++ {
				bundles = append(bundles, h.gen.bundle(i))
			}
			n, err := h.store.BulkWrite(gctx, bundles, h.cfg.writers)
			total.Add(int64(n))
			return err
		})
	}
	if s.Large {
		g.Go(func() error {
			n, err := h.store.BulkWrite(gctx, []*catalog.Bundle{h.gen.largeBundle()}, h.cfg.writers)
			total.Add(int64(n))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return int(total.Load()), err
	}
	_, err := h.store.RepairCounters(ctx)
	return int(total.Load()), err
}

// sample is one run of an operation.
type sample struct {
	lat time.Duration
	// before and after are the parts of lat before the first DynamoDB call started and after
	// the last one ended (the SDK's own work on a call counts as the call's).
	before, after time.Duration
	requests      int
	items         int
	trace         *trace
	summary       string
}

// runOurs sends the operation to the GraphQL handler in this process and checks the answer.
// With full set, it decodes the data and summarizes it.
func (h *harness) runOurs(ctx context.Context, op *operation, body []byte, full bool) (sample, error) {
	return h.runOn(ctx, h.handler, op, body, full)
}

// runOn is runOurs on the handler given.
func (h *harness) runOn(ctx context.Context, handler http.Handler, op *operation, body []byte, full bool) (sample, error) {
	ctx, tr := withTrace(ctx)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.apiKey)
	rec := httptest.NewRecorder()
	start := time.Now()
	handler.ServeHTTP(rec, req)
	end := time.Now()
	lat := end.Sub(start)
	out := rec.Body.Bytes()
	if rec.Code != http.StatusOK || bytes.Contains(out, []byte(`"errors":[`)) {
		return sample{}, fmt.Errorf("%s: status %d: %.600s", op.Name, rec.Code, out)
	}
	s := sample{lat: lat, requests: requestsOf(out), items: tr.items, trace: tr}
	s.before, s.after = tr.around(start, end)
	if full {
		var resp struct{ Data json.RawMessage }
		if err := json.Unmarshal(out, &resp); err != nil {
			return sample{}, err
		}
		sum, err := op.Summarize(resp.Data)
		if err != nil {
			return sample{}, fmt.Errorf("%s: %w", op.Name, err)
		}
		s.summary = sum
	}
	return s, nil
}

// requestsOf reads extensions.dynamodb.requests from a response without decoding it all.
func requestsOf(body []byte) int {
	key := []byte(`"dynamodb":{"requests":`)
	i := bytes.LastIndex(body, key)
	if i < 0 {
		return -1
	}
	rest := body[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(string(rest[:j]))
	if err != nil {
		return -1
	}
	return n
}

// runBaseline runs the per-field baseline of the operation.
func (h *harness) runBaseline(ctx context.Context, op *operation) (sample, error) {
	ctx, st := dynamo.WithStats(ctx)
	ctx, tr := withTrace(ctx)
	start := time.Now()
	sum, err := op.Baseline(&baselineRunner{ctx: ctx, st: h.store, now: time.Now})
	lat := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("baseline %s: %w", op.Name, err)
	}
	return sample{lat: lat, requests: st.Snapshot().Requests, items: tr.items, trace: tr, summary: sum}, nil
}

// runMany runs fn n times on c workers and returns the samples in completion order and the
// wall time.
func runMany(ctx context.Context, n, c int, fn func(context.Context) (sample, error)) ([]sample, time.Duration, error) {
	out := make([]sample, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range max(min(c, n), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				s, err := fn(ctx)
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				out[i] = s
			}
		}()
	}
	wg.Wait()
	return out, time.Since(start), firstErr
}

func percentile(lats []time.Duration, p float64) time.Duration {
	if len(lats) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), lats...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(float64(len(s))*p+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

func medianInt(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	return s[(len(s)-1)/2]
}

// measure runs the passes: with the delay at concurrency 1 (critical path) and at concurrency c
// (latency percentiles, throughput, requests counted by the backend), then without the delay at
// concurrency 1 (CPU time and allocations).
func (h *harness) measure(ctx context.Context, rep *report) error {
	cfg := h.cfg
	if err := h.be.SetDelay(cfg.delay); err != nil {
		return err
	}
	if err := h.be.Reset(); err != nil {
		return err
	}
	for _, r := range rep.results {
		op := r.Op
		body := op.body()
		ours := func(ctx context.Context) (sample, error) { return h.runOurs(ctx, op, body, false) }
		base := func(ctx context.Context) (sample, error) { return h.runBaseline(ctx, op) }

		// Correctness first: the server and the baseline must return the same data.
		s, err := h.runOurs(ctx, op, body, true)
		if err != nil {
			return err
		}
		r.Ours.Summary = s.summary
		if r.APQ, err = h.persisted(ctx, op, s.summary); err != nil {
			return err
		}
		if op.Once {
			r.Ours.Requests, r.Ours.Items, r.Ours.Depth, r.Ours.P50C1 = s.requests, s.items, s.trace.depth(), s.lat
			r.Ours.P50, r.Ours.P99, r.Ours.Counted = s.lat, s.lat, -1
			h.logf("%-62s once: %d requests, %d items read, %v", op.Name, s.requests, s.items, s.lat.Round(time.Microsecond))
			continue
		}
		if err := h.pass(ctx, &r.Ours, s.requests, ours); err != nil {
			return err
		}
		if !cfg.noBase && op.Baseline != nil {
			b, err := h.runBaseline(ctx, op)
			if err != nil {
				return err
			}
			if b.summary != r.Ours.Summary {
				return fmt.Errorf("%s: the baseline read other data than the server:\n  server:   %s\n  baseline: %s", op.Name, r.Ours.Summary, b.summary)
			}
			r.Base = &stats{Summary: b.summary}
			if err := h.pass(ctx, r.Base, b.requests, base); err != nil {
				return err
			}
		}
		h.logf("%-62s ours %3d req p50 %6.2f ms p99 %6.2f ms | baseline %s", op.Name, r.Ours.Requests,
			ms(r.Ours.P50), ms(r.Ours.P99), baseLine(r.Base))
	}
	rep.delays = h.delays

	// CPU and allocations, without the delay.
	if err := h.be.SetDelay(0); err != nil {
		return err
	}
	for _, r := range rep.results {
		if r.Op.Once {
			continue
		}
		op := r.Op
		body := op.body()
		if err := h.cpuPass(ctx, &r.Ours, func(ctx context.Context) (sample, error) { return h.runOurs(ctx, op, body, false) }); err != nil {
			return err
		}
		if r.Base != nil {
			if err := h.cpuPass(ctx, r.Base, func(ctx context.Context) (sample, error) { return h.runBaseline(ctx, op) }); err != nil {
				return err
			}
		}
		h.logf("%-62s cpu ours %7.0f µs %7.0f allocs | baseline %s", r.Op.Name, us(r.Ours.CPU), r.Ours.Allocs, baseCPU(r.Base))
	}
	if err := h.measureFloor(ctx, rep); err != nil {
		return err
	}

	// Where our CPU goes, by layer, for the operations the targets are about.
	if h.cfg.breakdownOps == "" || h.cfg.breakdownTime <= 0 {
		return nil
	}
	re, err := regexp.Compile(h.cfg.breakdownOps)
	if err != nil {
		return fmt.Errorf("-breakdown: %w", err)
	}
	for _, r := range rep.results {
		if r.Op.Once || !re.MatchString(r.Op.Name) {
			continue
		}
		if r.Breakdown, err = h.breakdown(ctx, r.Op, h.cfg.breakdownTime); err != nil {
			return err
		}
		h.logf("%-62s cpu profile: %d runs, %d samples", r.Op.Name, r.Breakdown.Runs, r.Breakdown.Samples)
	}
	return nil
}

func baseLine(b *stats) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%4d req p50 %6.2f ms p99 %6.2f ms", b.Requests, ms(b.P50), ms(b.P99))
}

func baseCPU(b *stats) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%7.0f µs %7.0f allocs", us(b.CPU), b.Allocs)
}

// runs is how many runs an implementation of an operation gets: the configured number, cut so
// that the runs cost at most cfg.budget DynamoDB requests (the per-field baseline of a list sends
// hundreds per operation), but never fewer than floor.
func (cfg config) runs(configured, floor, requests int) int {
	if cfg.budget <= 0 || requests <= 0 {
		return configured
	}
	return min(configured, max(floor, cfg.budget/requests))
}

// delays are the injected delays measured by the backend's handler during the passes with the
// delay on, at concurrency 1 and at concurrency c.
type delays struct {
	slept1, sleptC     time.Duration
	delayed1, delayedC int
}

// pass measures one implementation of an operation with the delay on. requests is what one run
// costs, from the verification run.
func (h *harness) pass(ctx context.Context, st *stats, requests int, fn func(context.Context) (sample, error)) error {
	cfg := h.cfg
	if cfg.warm > 0 {
		if _, _, err := runMany(ctx, cfg.runs(cfg.warm, 2, requests*4), cfg.c, fn); err != nil {
			return err
		}
	}
	// Concurrency 1: the critical path.
	if err := h.be.Reset(); err != nil {
		return err
	}
	st.Runs1 = cfg.runs(cfg.n1, 5, requests*2)
	one, _, err := runMany(ctx, st.Runs1, 1, fn)
	if err != nil {
		return err
	}
	c1, err := h.be.Counts()
	if err != nil {
		return err
	}
	h.delays.slept1 += c1.Slept
	h.delays.delayed1 += c1.total()
	if n := c1.total(); n > 0 {
		st.Held1 = c1.Slept / time.Duration(n)
	}
	var lats, befores, afters []time.Duration
	var depths, items []int
	for _, s := range one {
		lats = append(lats, s.lat)
		befores = append(befores, s.before)
		afters = append(afters, s.after)
		depths = append(depths, s.trace.depth())
		items = append(items, s.items)
	}
	st.P50C1, st.Depth, st.Items = percentile(lats, 0.5), medianInt(depths), medianInt(items)
	st.Before1, st.After1 = percentile(befores, 0.5), percentile(afters, 0.5)

	// Concurrency c: latency percentiles, throughput, the backend's own count.
	if err := h.be.Reset(); err != nil {
		return err
	}
	st.RunsC = cfg.runs(cfg.n, 10, requests)
	many, wall, err := runMany(ctx, st.RunsC, cfg.c, fn)
	if err != nil {
		return err
	}
	c, err := h.be.Counts()
	if err != nil {
		return err
	}
	h.delays.sleptC += c.Slept
	h.delays.delayedC += c.total()
	if n := c.total(); n > 0 {
		st.HeldC = c.Slept / time.Duration(n)
	}
	lats = lats[:0]
	st.Requests = requests
	for _, s := range append(one, many...) {
		if s.requests != requests {
			st.RequestsVary = true
			if st.Odd == nil {
				st.Odd = map[int]int{}
			}
			st.Odd[s.requests]++
		}
	}
	for _, s := range many {
		lats = append(lats, s.lat)
	}
	st.P50, st.P99 = percentile(lats, 0.5), percentile(lats, 0.99)
	st.Throughput = float64(st.RunsC) / wall.Seconds()
	st.Counted = -1
	if h.be.controlled() {
		st.Counted = float64(c.total()) / float64(st.RunsC)
	}
	return nil
}

// cpuPass measures CPU time (getrusage of this process: user + system) and allocations per
// operation at concurrency 1 with no delay.
func (h *harness) cpuPass(ctx context.Context, st *stats, fn func(context.Context) (sample, error)) error {
	n := h.cfg.runs(h.cfg.cpuN, 10, st.Requests)
	st.RunsCPU = n
	if _, _, err := runMany(ctx, min(n, 20), 1, fn); err != nil {
		return err
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	c0, b0 := processCPU(), h.be.childCPU()
	if _, _, err := runMany(ctx, n, 1, fn); err != nil {
		return err
	}
	c1, b1 := processCPU(), h.be.childCPU()
	runtime.ReadMemStats(&m1)
	st.CPU = (c1 - c0) / time.Duration(n)
	st.BackendCPU = (b1 - b0) / time.Duration(n)
	st.Allocs = float64(m1.Mallocs-m0.Mallocs) / float64(n)
	st.Bytes = float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
	return nil
}

// profile writes a CPU profile of one operation, served at concurrency 1 without delay.
func (h *harness) profile(ctx context.Context) error {
	re, err := regexp.Compile(h.cfg.profileOp)
	if err != nil {
		return fmt.Errorf("-profile-op: %w", err)
	}
	var op *operation
	for _, o := range h.ops {
		if re.MatchString(o.Name) && !o.Once {
			op = o
			break
		}
	}
	if op == nil {
		return fmt.Errorf("-profile-op %q matches no operation", h.cfg.profileOp)
	}
	if err := h.be.SetDelay(0); err != nil {
		return err
	}
	f, err := os.Create(h.cfg.cpuprofile)
	if err != nil {
		return err
	}
	defer f.Close()
	var allocs func() (*profile.Profile, error)
	if h.cfg.memprofile != "" {
		if allocs, err = profileAllocs(4096); err != nil {
			return err
		}
	}
	n, err := h.profileRuns(ctx, op, f, h.cfg.profileTime)
	if err != nil {
		return err
	}
	h.logf("cpu profile of %d runs of %s written to %s", n, op.Name, h.cfg.cpuprofile)
	if h.cfg.memprofile != "" {
		m, err := os.Create(h.cfg.memprofile)
		if err != nil {
			return err
		}
		defer m.Close()
		d, err := allocs()
		if err != nil {
			return err
		}
		if err := d.Write(m); err != nil {
			return err
		}
	}
	return nil
}

// profileRuns serves op at concurrency 1 for about d with a CPU profile written to w, and
// returns how many runs it made.
func (h *harness) profileRuns(ctx context.Context, op *operation, w io.Writer, d time.Duration) (int, error) {
	body := op.body()
	if err := pprof.StartCPUProfile(w); err != nil {
		return 0, err
	}
	defer pprof.StopCPUProfile()
	n := 0
	for deadline := time.Now().Add(d); time.Now().Before(deadline); n++ {
		if _, err := h.runOurs(ctx, op, body, false); err != nil {
			return n, err
		}
	}
	return n, nil
}

// loadAverage returns the 1-, 5- and 15-minute load averages, or "" where unknown.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
