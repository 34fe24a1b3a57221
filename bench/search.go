package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
)

// The search section (issue #19): a generated catalogue of -search-caps capabilities (10,000 by
// default) with known attributes, loaded into its own table on its own delaying, counting
// backend, and for each shape of Query.capabilities (search, filters, orders, totalCount), of
// catalogueSummary, activeJobs and owner(name): our server against a Scan-and-filter baseline
// and, where it applies, the per-field (AppSync-style) baseline. Every shape's first page is
// compared with the brute-force answer computed in Go from the generated data
// (searchtruth.go), and the run fails when they differ or when our server sent a Scan.

// searchConfig is the section's part of the command line.
type searchConfig struct {
	enabled  bool
	only     bool
	caps     int
	n1       int    // runs of ours per shape, at concurrency 1 with the delay
	baseN    int    // runs of each baseline per shape
	perField bool   // run the per-field baseline
	shapes   string // regexp of the shapes to measure
}

func registerSearchFlags(fs *flag.FlagSet, c *searchConfig) {
	*c = searchConfig{enabled: true, caps: 10_000, n1: 20, baseN: 2, perField: true}
	fs.BoolVar(&c.enabled, "search", c.enabled, "measure search, filters, orders and counts on a generated catalogue of -search-caps capabilities (search.go)")
	fs.BoolVar(&c.only, "search-only", false, "measure the search section only and replace its section of -out (the rest of the file stays as it is)")
	fs.IntVar(&c.caps, "search-caps", c.caps, "capabilities in the search section's catalogue")
	fs.IntVar(&c.n1, "search-n1", c.n1, "runs of the server per search shape at concurrency 1 with the delay")
	fs.IntVar(&c.baseN, "search-base-n", c.baseN, "runs of each baseline per search shape (0: no baselines)")
	fs.BoolVar(&c.perField, "search-per-field", c.perField, "run the per-field baseline of the search shapes (it reads the whole CAPABILITIES index per run)")
	fs.StringVar(&c.shapes, "search-shapes", "", "measure only the search shapes whose name matches this regular expression")
}

// searchShape is one measured shape.
type searchShape struct {
	Name  string
	Query string
	Vars  map[string]any
	// Page2 measures the page after the first: the run reads page 1 first and sends its
	// endCursor as $after.
	Page2 bool
	// Matches is how many items of the catalogue the shape matches (brute force).
	Matches int
	// Check compares the server's data with the brute-force answer; Want is that answer.
	Check func(data json.RawMessage) (got string, ok bool, err error)
	Want  string
	// Scan is the Scan-and-filter baseline.
	Scan scanSpec
	// PerField is the per-field baseline (nil where it does not apply); it returns its answer,
	// which must equal Want.
	PerField func(p *perFieldRunner) (string, error)
	// Needs says what any answer of the shape must read without an index.
	Needs string
}

// searchRow is a shape's measurements.
type searchRow struct {
	Shape    *searchShape
	Ours     searchStats
	Scan     *searchStats
	PerField *searchStats
	Scans    int // Scan requests our server sent (must be 0)
	// Mismatch describes how our page differed from the brute force ("" when equal).
	Mismatch string
}

// failed returns an error when a shape's page differed from the brute force or our server sent
// a Scan: the run writes its report, then fails.
func (r *searchReport) failed() error {
	if r == nil {
		return nil
	}
	var bad []string
	for _, x := range r.Rows {
		if x.Mismatch != "" {
			bad = append(bad, "DIFFERS FROM THE BRUTE FORCE: "+x.Mismatch)
		}
		if x.Scans > 0 {
			bad = append(bad, fmt.Sprintf("SCAN ISSUED BY OUR SERVER: shape %q, %d Scans in %d runs", x.Shape.Name, x.Scans, x.Ours.Runs))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("search: %s", strings.Join(bad, "\n"))
}

type searchStats struct {
	Requests, Depth, Items int
	RCU                    float64
	P50                    time.Duration
	Runs                   int
	Vary                   bool // request counts differed between runs
}

// searchReport is the section.
type searchReport struct {
	Caps, Items, Components, ActiveJobs int
	Owners, Tags, Domains               int
	Load, LoadCPU, LoadChildCPU         time.Duration
	Delay                               time.Duration
	Rows                                []*searchRow
	Whole                               *searchStats // a Scan of the whole table
	Command                             string
	At                                  time.Time
	PerField                            bool
	LoadBefore, LoadAfter               string // load averages: other work on the machine
}

// searchHarness runs the section.
type searchHarness struct {
	cfg     config
	be      *backend
	store   *dynamo.Store
	db      *dynamodb.Client
	handler http.Handler
	apiKey  string
	bundles []*catalog.Bundle
	logf    func(string, ...any)
	// whole is what the whole-table Scan read of capabilities, components and jobs, and
	// wholeStats its figures: the Scan baseline of every shape that needs the whole table.
	whole      []*scanItem
	wholeStats *searchStats
}

// measureSearch builds the catalogue, loads it and measures every shape.
func measureSearch(ctx context.Context, cfg config, logf func(string, ...any)) (*searchReport, error) {
	h, rep, err := newSearchHarness(ctx, cfg, logf)
	if err != nil {
		return nil, err
	}
	defer h.be.Close()
	rep.LoadBefore = loadAverage()
	defer func() { rep.LoadAfter = loadAverage() }()
	sc := cfg.search
	only, err := regexp.Compile(sc.shapes)
	if err != nil {
		return nil, fmt.Errorf("-search-shapes: %w", err)
	}
	if err := h.be.SetDelay(cfg.delay); err != nil {
		return nil, err
	}
	if sc.baseN > 0 {
		// The whole table, read once per run for every shape that needs it (their answers are
		// checked on what it read).
		if rep.Whole, err = h.wholeScan(ctx); err != nil {
			return nil, err
		}
	}
	for _, s := range searchShapes(h.bundles) {
		if !only.MatchString(s.Name) {
			continue
		}
		row, err := h.measureShape(ctx, s)
		if err != nil {
			return nil, err
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// newSearchHarness starts the section's backend, creates its table, loads the generated
// catalogue and builds the server; the caller closes h.be.
func newSearchHarness(ctx context.Context, cfg config, logf func(string, ...any)) (h *searchHarness, rep *searchReport, err error) {
	sc := cfg.search
	h = &searchHarness{cfg: cfg, logf: logf}
	if cfg.backendProcess {
		h.be, err = startChild(cfg.backend)
	} else {
		h.be, err = startLocal(cfg.backend)
	}
	if err != nil {
		return nil, nil, err
	}
	be := h.be
	defer func() {
		if err != nil {
			be.Close()
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err = waitReady(wctx, h.be.URL); err != nil {
		return nil, nil, err
	}
	metrics := graph.NewInstruments(prometheus.NewRegistry())
	if h.store, h.db, err = newStoreClient(ctx, h.be.URL, cfg.idleConns, metrics); err != nil {
		return nil, nil, err
	}
	if err = h.be.SetDelay(0); err != nil {
		return nil, nil, err
	}
	if err = h.store.CreateTable(ctx, time.Minute); err != nil {
		return nil, nil, err
	}
	now := cfg.now
	if now.IsZero() {
		now = time.Now()
	}
	rep = &searchReport{Caps: sc.caps, Delay: cfg.delay, PerField: sc.perField && sc.baseN > 0}
	h.bundles = searchCatalogue(sc.caps, now)
	start, cpu0, child0 := time.Now(), processCPU(), h.be.childCPU()
	if rep.Items, err = h.load(ctx); err != nil {
		return nil, nil, err
	}
	rep.Load, rep.LoadCPU, rep.LoadChildCPU = time.Since(start), processCPU()-cpu0, h.be.childCPU()-child0
	logf("search: loaded %d capabilities, %d items in %v (CPU: this process %v, backend %v)", sc.caps, rep.Items,
		rep.Load.Round(time.Millisecond), rep.LoadCPU.Round(time.Millisecond), rep.LoadChildCPU.Round(time.Millisecond))
	owners, tags, domains := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, b := range h.bundles {
		owners[catalog.Fold(b.Capability.Owner)] = true
		domains[b.Capability.BusinessDomain] = true
		for _, t := range b.Capability.Tags {
			tags[t] = true
		}
		for _, c := range b.Components {
			owners[catalog.Fold(c.Ownership.Team)] = true
		}
		rep.Components += len(b.Components)
	}
	rep.Owners, rep.Tags, rep.Domains = len(owners), len(tags), len(domains)
	rep.ActiveJobs = truthActiveJobs(h.bundles, 0).Total

	// The server's store plans with statistics read once here, as a serving server has them
	// after its first searches: it reads them in the background (at most every
	// dynamo.DefaultStatsTTL), a read no operation waits for or is counted for, which this
	// section's count of each operation's requests at the backend would otherwise see.
	serving := dynamo.New(h.db, dynamo.Options{Logger: quietLogger(), CursorSecret: []byte("bench"), StatsTTL: -1})
	if _, err = serving.Counts(ctx); err != nil {
		return nil, nil, err
	}
	keys := &graph.KeyRing{}
	h.apiKey = graph.NewAPIKey()
	keys.Add(h.apiKey, graph.RoleViewer, "bench")
	h.handler = graph.GraphQLHandler(serving, graph.Options{
		Logger:      slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Auth:        &graph.Auth{Keys: keys, Anonymous: graph.RoleNone},
		Deadline:    30 * time.Second,
		Instruments: metrics,
	})
	return h, rep, nil
}

// load bulk-loads the bundles in one BulkLoad call with cfg.loaders × cfg.writers
// BatchWriteItem calls in flight: BulkLoad recounts the catalogue's counters after every call
// (it reads them all), so one call for the whole catalogue.
func (h *searchHarness) load(ctx context.Context) (int, error) {
	return h.store.BulkLoad(ctx, h.bundles, max(h.cfg.loaders, 1)*max(h.cfg.writers, 1))
}

// post sends a GraphQL request to our server and returns its data, requests, read capacity and
// trace; a response with errors is an error.
func (h *searchHarness) post(ctx context.Context, query string, vars map[string]any) (json.RawMessage, sample, float64, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	ctx, tr := withTrace(ctx)
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.apiKey)
	rec := httptest.NewRecorder()
	start := time.Now()
	h.handler.ServeHTTP(rec, req)
	lat := time.Since(start)
	out := rec.Body.Bytes()
	if rec.Code != http.StatusOK || bytes.Contains(out, []byte(`"errors":[`)) {
		return nil, sample{}, 0, fmt.Errorf("status %d: %.600s", rec.Code, out)
	}
	var resp struct{ Data json.RawMessage }
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, sample{}, 0, err
	}
	return resp.Data, sample{lat: lat, requests: requestsOf(out), items: tr.items, trace: tr}, rcuOf(out), nil
}

// rcuOf reads extensions.dynamodb.readCapacityUnits from a response (0 when absent).
func rcuOf(body []byte) float64 {
	key := []byte(`"readCapacityUnits":`)
	i := bytes.LastIndex(body, key)
	if i < 0 {
		return 0
	}
	rest := body[i+len(key):]
	j := 0
	for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.' || rest[j] == 'e' || rest[j] == '-' || rest[j] == '+') {
		j++
	}
	f, _ := strconv.ParseFloat(string(rest[:j]), 64)
	return f
}

// measureShape checks the shape's answer, then measures ours and the baselines.
func (h *searchHarness) measureShape(ctx context.Context, s *searchShape) (*searchRow, error) {
	row := &searchRow{Shape: s}
	vars := s.Vars
	if s.Page2 {
		data, _, _, err := h.post(ctx, s.Query, vars)
		if err != nil {
			return nil, fmt.Errorf("search shape %q, page 1: %w", s.Name, err)
		}
		cursor, err := endCursor(data)
		if err != nil {
			return nil, fmt.Errorf("search shape %q, page 1: %w", s.Name, err)
		}
		vars = maps(vars, "after", cursor)
	}
	// The outside check: our first page equals the brute-force answer.
	data, _, _, err := h.post(ctx, s.Query, vars)
	if err != nil {
		// Not served (an error answer): recorded, the baselines measured all the same.
		row.Mismatch = fmt.Sprintf("shape %q: the server answered with an error: %.300s", s.Name, err)
		h.logf("search: %s", row.Mismatch)
		return row, h.measureBaselines(ctx, s, row)
	}
	got, ok, err := s.Check(data)
	if err != nil {
		return nil, fmt.Errorf("search shape %q: %w", s.Name, err)
	}
	if !ok {
		row.Mismatch = fmt.Sprintf("shape %q (variables %s), %s:\n  server:      %s\n  brute force: %s", s.Name, jsonOf(vars), firstDifference(got, s.Want), got, s.Want)
		h.logf("search: DIFFERS FROM THE BRUTE FORCE: %s", row.Mismatch)
	}
	// Ours, at concurrency 1 with the delay; the backend counts every request by operation.
	for range 2 {
		if _, _, _, err := h.post(ctx, s.Query, vars); err != nil {
			return nil, fmt.Errorf("search shape %q: %w", s.Name, err)
		}
	}
	if err := h.be.Reset(); err != nil {
		return nil, err
	}
	n := max(h.cfg.search.n1, 1)
	var lats []time.Duration
	var reqs, depths, items []int
	var rcus []float64
	for range n {
		_, smp, rcu, err := h.post(ctx, s.Query, vars)
		if err != nil {
			return nil, fmt.Errorf("search shape %q: %w", s.Name, err)
		}
		lats = append(lats, smp.lat)
		reqs = append(reqs, smp.requests)
		depths = append(depths, smp.trace.depth())
		items = append(items, smp.items)
		rcus = append(rcus, rcu)
	}
	c, err := h.be.Counts()
	if err != nil {
		return nil, err
	}
	row.Scans = c.Ops["Scan"]
	if row.Scans > 0 {
		h.logf("search: SCAN ISSUED BY OUR SERVER: shape %q sent %d Scan requests in %d runs (requests by operation: %v)", s.Name, row.Scans, n, c.Ops)
	}
	if h.be.controlled() && c.total() != sum(reqs) {
		return nil, fmt.Errorf("search shape %q: the backend counted %d requests, extensions.dynamodb said %d", s.Name, c.total(), sum(reqs))
	}
	slices.Sort(rcus)
	row.Ours = searchStats{Requests: medianInt(reqs), Depth: medianInt(depths), Items: medianInt(items), RCU: rcus[(len(rcus)-1)/2],
		P50: percentile(lats, 0.5), Runs: n, Vary: slices.Min(reqs) != slices.Max(reqs)}

	if err := h.measureBaselines(ctx, s, row); err != nil {
		return nil, err
	}
	h.logf("search: %-44s %6d matches | ours %3d req %2d rt %5d items %7.1f RCU p50 %7.2f ms | scan %s | per-field %s",
		s.Name, s.Matches, row.Ours.Requests, row.Ours.Depth, row.Ours.Items, row.Ours.RCU, ms(row.Ours.P50), statsLine(row.Scan), statsLine(row.PerField))
	return row, nil
}

// measureBaselines measures the shape's Scan and per-field baselines, checking their answers.
func (h *searchHarness) measureBaselines(ctx context.Context, s *searchShape, row *searchRow) error {
	if h.cfg.search.baseN <= 0 {
		return nil
	}
	var st *searchStats
	var matched []string
	if s.Scan.Whole && h.whole != nil {
		st, matched = h.wholeStats, s.Scan.apply(h.whole)
	} else {
		var err error
		if st, matched, err = h.scanPass(ctx, s.Scan); err != nil {
			return fmt.Errorf("search shape %q, Scan baseline: %w", s.Name, err)
		}
	}
	if err := s.Scan.check(matched); err != nil {
		return fmt.Errorf("search shape %q, Scan baseline: %w", s.Name, err)
	}
	var err error
	row.Scan = st
	if h.cfg.search.perField && s.PerField != nil {
		if row.PerField, err = h.perFieldPass(ctx, s); err != nil {
			return fmt.Errorf("search shape %q, per-field baseline: %w", s.Name, err)
		}
	}
	return nil
}

func statsLine(s *searchStats) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%d req %d rt %d items %.1f RCU p50 %.1f ms", s.Requests, s.Depth, s.Items, s.RCU, ms(s.P50))
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// maps returns a copy of m with k set to v.
func maps(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for x, y := range m {
		if x != k {
			out[x] = y
		}
	}
	return out
}

func endCursor(data json.RawMessage) (string, error) {
	var d struct {
		Capabilities struct {
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	if !d.Capabilities.PageInfo.HasNextPage || d.Capabilities.PageInfo.EndCursor == nil {
		return "", fmt.Errorf("no second page")
	}
	return *d.Capabilities.PageInfo.EndCursor, nil
}

// perFieldPass runs the per-field baseline baseN times, checking its answer each time.
func (h *searchHarness) perFieldPass(ctx context.Context, s *searchShape) (*searchStats, error) {
	st := &searchStats{}
	var lats []time.Duration
	var reqs, depths, items []int
	var rcus []float64
	for range h.cfg.search.baseN {
		sctx, stats := dynamo.WithStats(ctx)
		sctx, tr := withTrace(sctx)
		start := time.Now()
		got, err := s.PerField(&perFieldRunner{ctx: sctx, st: h.store})
		lat := time.Since(start)
		if err != nil {
			return nil, err
		}
		if got != s.Want {
			return nil, fmt.Errorf("its answer differs from the brute force:\n  per-field:   %s\n  brute force: %s", got, s.Want)
		}
		snap := stats.Snapshot()
		lats = append(lats, lat)
		reqs = append(reqs, snap.Requests)
		depths = append(depths, tr.depth())
		items = append(items, tr.items)
		rcus = append(rcus, snap.ReadCapacityUnits)
	}
	slices.Sort(rcus)
	*st = searchStats{Requests: medianInt(reqs), Depth: medianInt(depths), Items: medianInt(items), RCU: rcus[(len(rcus)-1)/2],
		P50: percentile(lats, 0.5), Runs: len(lats), Vary: slices.Min(reqs) != slices.Max(reqs)}
	return st, nil
}

// searchOnly runs the section alone, prints it and, unless out is "-", replaces the section of
// the file out (BENCHMARKS.md) with it, leaving the rest as it is.
func searchOnly(cfg config, command, out string, stdout, stderr io.Writer) error {
	return sectionOnly(sectionRun[*searchReport]{
		name: "search", heading: searchHeading, out: out, stdout: stdout, stderr: stderr,
		measure: func(logf func(string, ...any)) (*searchReport, error) {
			rep, err := measureSearch(context.Background(), cfg, logf)
			if err == nil {
				rep.Command, rep.At = command, time.Now()
			}
			return rep, err
		},
		write:  func(r *searchReport, p func(string, ...any)) { r.write(p) },
		failed: func(r *searchReport) error { return r.failed() },
	})
}

const searchHeading = "## Search, filters and counts at scale\n"

// write writes the section.
func (r *searchReport) write(p func(string, ...any)) {
	if r == nil {
		return
	}
	p("%s", strings.TrimSuffix(searchHeading, "\n"))
	p("")
	if r.Command != "" {
		p("Measured by `%s` (%s UTC, %s); the other sections are from the full run.", r.Command, r.At.UTC().Format("2006-01-02 15:04"), machine())
		p("")
	}
	p("A generated catalogue (bench/searchgen.go, fixed seed) of **%d capabilities**: %d business domains (skewed), every status and priority, health from %d components (one or two each, one in ten reporting no health), 0–5 tags each from a vocabulary of 200 (%d in use, skewed), %d owners and component teams (folded; some capitalised, some accented), names of two or three words from a list of 108 (the first word skewed, so names share prefixes; one in twelve with an accented word), %d active jobs. "+
		"Loaded into its own table with `BulkLoad` (%d items) in **%v** (CPU: bench %v, backend %v), on its own backend behind the delaying, counting handler, %v before every request.",
		r.Caps, r.Domains, r.Components, r.Tags, r.Owners, r.ActiveJobs, r.Items, r.Load.Round(100*time.Millisecond),
		r.LoadCPU.Round(100*time.Millisecond), r.LoadChildCPU.Round(100*time.Millisecond), r.Delay)
	if r.LoadBefore != "" {
		p("Load average before and after the section: %s / %s (the machine is shared: latencies are inflated by other work; requests, items and RCU are not).", r.LoadBefore, r.LoadAfter)
	}
	p("")
	p("Every shape's page was compared with the brute-force answer computed in Go from the generated data (bench/searchtruth.go: the contract of schema.graphqls); the run fails, after writing this section, on a difference (marked in the table and shown below it) and on any Scan sent by our server (counted by the backend's handler, by operation). Ours: the median of %d runs at concurrency 1; requests and read capacity from `extensions.dynamodb`, items read and round trips (the critical path) from the client's trace.", r.rowsRuns())
	p("")
	p("| shape | matches | ours: requests | round trips | items read | RCU | p50 ms | Scans by ours | Scan-and-filter: requests (= round trips) | items read | RCU | p50 ms | per-field: requests | round trips | items read | RCU | p50 ms |")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.Rows {
		o := x.Ours
		vary := ""
		if o.Vary {
			vary = " (varies)"
		}
		sc := "– | – | – | –"
		if s := x.Scan; s != nil {
			sc = fmt.Sprintf("%d | %d | %.1f | %.1f", s.Requests, s.Items, s.RCU, ms(s.P50))
		}
		pf := "– | – | – | – | –"
		if s := x.PerField; s != nil {
			pf = fmt.Sprintf("%d | %d | %d | %.1f | %.1f", s.Requests, s.Depth, s.Items, s.RCU, ms(s.P50))
		}
		name := x.Shape.Name
		if x.Mismatch != "" {
			name += " — **DIFFERS FROM THE BRUTE FORCE** (below)"
		}
		scans := fmt.Sprint(x.Scans)
		if x.Scans > 0 {
			scans = "**" + scans + " SCANS**"
		}
		ours := fmt.Sprintf("%d%s | %d | %d | %.1f | %.2f", o.Requests, vary, o.Depth, o.Items, o.RCU, ms(o.P50))
		if o.Runs == 0 {
			ours = "error | – | – | – | –"
		}
		p("| %s | %d | %s | %s | %s | %s |", name, x.Shape.Matches, ours, scans, sc, pf)
	}
	p("")
	if r.Whole != nil {
		p("**Scan-and-filter** (bench/searchbase.go): a DynamoDB Scan with a FilterExpression (entity type and whatever else an expression can say: domain, status, health, tag; search words, folded owners and case-insensitive tags are matched in code), paging with ExclusiveStartKey until 50 matches are found (100 for page 2) or the table ends: what a team without indexes would do. That page is in table order, not the order asked for: an ordered page, an exact totalCount, the summary, every active job and an owner's counts need the whole table, which is what those rows read. The whole table is %d Scan requests, %d items, %.0f RCU, %.0f ms at p50 (%d runs).", r.Whole.Requests, r.Whole.Items, r.Whole.RCU, ms(r.Whole.P50), r.Whole.Runs)
		p("")
	}
	if r.PerField {
		p("**Per-field** (AppSync style, bench/searchbase.go): the resolver lists from an existing index — DOMAIN# for one domain, HEALTH# for one health status, else the CAPABILITIES index, 100 a page, page after page — and filters in code; for an owner it also Queries each candidate's components (one request each, 100 at a time), as a `components` field resolver would. None of those indexes is in the order asked for, so it reads the whole range before it can answer. It has no index for the summary, active jobs or an owner's counts (–).")
		p("")
	}
	for _, x := range r.Rows {
		if x.Mismatch != "" {
			p("**DIFFERS FROM THE BRUTE FORCE**: %s", strings.ReplaceAll(x.Mismatch, "\n", "<br>"))
			p("")
		}
	}
	p("What each shape asks:")
	p("")
	for _, x := range r.Rows {
		p("- **%s** — `%s`. %s", x.Shape.Name, jsonOf(x.Shape.Vars), x.Shape.Needs)
	}
	p("")
}

func (r *searchReport) rowsRuns() int {
	if len(r.Rows) == 0 {
		return 0
	}
	return r.Rows[0].Ours.Runs
}

// firstDifference says where two answers first differ, by space-separated word.
func firstDifference(a, b string) string {
	x, y := strings.Fields(a), strings.Fields(b)
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			return fmt.Sprintf("first difference at word %d: %q against %q", i+1, x[i], y[i])
		}
	}
	return fmt.Sprintf("%d words against %d", len(x), len(y))
}
