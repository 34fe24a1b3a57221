package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	samplecat "github.com/capcat/catalogue/sample"
	"github.com/capcat/catalogue/web"
)

// The embedded default, measured against GraphQL's trivial query on the same server in the same
// run (issue #17, goal 2). The server is built as `go run .` builds it: memdyn in this process
// behind dynamo.StartEmbedded, the embedded S3, the sample catalogue and its artifacts, and
// graph.NewHandler with the server's options, served over loopback HTTP, its DynamoDB client
// calling memdyn in process (loopback.Server.Do) as the server's does. Its CPU and the
// backend's share this process, as they do under `go run .`.

// listAllQuery is the nested list of all the sample's capabilities with their components,
// dependencies and rules.
const listAllQuery = `query ListAll {
  capabilities(first: 50) {
    nodes { id name status priority
      components { componentId name status componentType health { status } }
      dependencies { sourceComponentId targetComponentId dependencyType criticality }
      rules { ruleId name ruleType status priority } }
    pageInfo { hasNextPage endCursor }
  }
}`

const trivialQuery = `{ __typename }`

// touchMutation is the cheap write before each cold read: it bumps the capability's revision
// (and WriteSeq) and changes nothing a read shows but the description.
const touchMutation = `mutation Touch($id: ID!, $rev: Int!, $d: String!) {
  updateCapability(id: $id, expectedRevision: $rev, input: {description: $d}) { revision }
}`

// embTargets are goal 2's targets: p50 at concurrency 1 at most maxP50 × the trivial query's,
// throughput at concurrency 16 at least 1/minThroughput of the trivial query's.
var embTargets = map[string]struct{ maxP50, minThroughput float64 }{
	"complete view": {8, 10},
	"list all":      {12, 14},
}

// pageTarget is the explorer's capability page, all its requests, at concurrency 1.
const pageTarget = 25 * time.Millisecond

// embRow is one operation in one mode (warm or cold) on the embedded default.
type embRow struct {
	Name, Mode     string
	Requests       int // DynamoDB requests per run (extensions.dynamodb)
	P50C1          time.Duration
	P50C16, P99C16 time.Duration
	Throughput     float64 // at concurrency 16
	PastDeadline   int     // at concurrency 16: TIMEOUT errors, 503s or runs longer than the deadline
	Runs1, Runs16  int

	// The trivial query measured beside this operation, interleaved with its runs (measureOp):
	// the ratios of goal 2 are of these, so that both terms share the machine's state. Zero
	// for the trivial query's own row, which is measured alone.
	TrivP50C1      time.Duration
	TrivThroughput float64
}

// trivP50 and trivThroughput are the trivial query's figures the row is judged against: those
// measured beside it, else (the trivial row itself, measured alone) the trivial row's.
func (r *embRow) trivP50(triv *embRow) time.Duration {
	if r.TrivP50C1 > 0 {
		return r.TrivP50C1
	}
	return triv.P50C1
}

func (r *embRow) trivThroughput(triv *embRow) float64 {
	if r.TrivThroughput > 0 {
		return r.TrivThroughput
	}
	return triv.Throughput
}

// p50Ratio and throughputRatio are goal 2's two ratios: the row's p50 at C=1 over the trivial
// query's, and the trivial query's throughput at C=16 over the row's.
func (r *embRow) p50Ratio(triv *embRow) float64 {
	return float64(r.P50C1) / float64(max(r.trivP50(triv), 1))
}

func (r *embRow) throughputRatio(triv *embRow) float64 {
	return r.trivThroughput(triv) / max(r.Throughput, 1e-9)
}

// embReport is the embedded default's section.
type embReport struct {
	Items     int
	Deadline  time.Duration
	Rows      []*embRow
	Load      string   // /proc/loadavg when it started
	PageOps   []string // the operations the explorer's capability page sends on load
	CacheNote string
	// Command and At are set when the section ran alone (-embedded-only).
	Command string
	At      time.Time
}

// embeddedOnly runs the section alone, prints it and, unless out is "-", replaces the section of
// the file out (BENCHMARKS.md) with it, leaving the rest as it is.
func embeddedOnly(cfg config, command, out string, stdout, stderr io.Writer) error {
	return sectionOnly(sectionRun[*embReport]{
		name: "embedded default", heading: embeddedHeading, out: out, stdout: stdout, stderr: stderr,
		measure: func(logf func(string, ...any)) (*embReport, error) {
			rep, err := measureEmbedded(context.Background(), cfg, logf)
			if err == nil {
				rep.Command, rep.At = command, time.Now()
			}
			return rep, err
		},
		write:  func(r *embReport, p func(string, ...any)) { (&report{embedded: r}).writeEmbedded(p) },
		failed: func(*embReport) error { return nil }, // the targets are reported, PASS or FAIL, as in the full run
	})
}

const embeddedHeading = "## The embedded default against GraphQL's trivial query\n"

func (e *embReport) row(name, mode string) *embRow {
	for _, r := range e.Rows {
		if r.Name == name && r.Mode == mode {
			return r
		}
	}
	return nil
}

// embServer is the embedded default under test.
type embServer struct {
	url    string
	key    string
	client *http.Client
	close  func()

	// elsewhere reaches the same memdyn through its port, as another server instance or a
	// command does: its writes are the "elsewhere" mode's (no read memo, no re-tag here).
	elsewhere *dynamo.Store

	mu   sync.Mutex
	revs map[string]int // each capability's revision, for the cold reads' writes
}

// The modes an operation is measured in: warm (the same read repeated), cold (right after a
// write through this server) and elsewhere (right after a write through memdyn's port).
const (
	modeWarm      = "warm"
	modeCold      = "cold"
	modeElsewhere = "after a write elsewhere"
)

// cacheOptions is the one place where the benchmark passes its partition-cache setting
// (-cache-bytes, as the server's flag; 0 turns it off) to the servers it builds: the embedded
// default, the main passes and the floor's comparison all run with it.
func cacheOptions(cfg config, o graph.Options) graph.Options {
	return withCache(graph.NewPartitionCache(int(cfg.cacheBytes), nil), o)
}

// withCache returns o with the partition cache c (built from -cache-bytes).
func withCache(c *graph.PartitionCache, o graph.Options) graph.Options {
	o.PartitionCache = c
	return o
}

// startEmbedded builds the embedded default as server.go does and loads the sample.
func startEmbedded(ctx context.Context, cfg config) (*embServer, int, []*catalog.Bundle, error) {
	emb, err := dynamo.StartEmbedded(nil)
	if err != nil {
		return nil, 0, nil, err
	}
	closers := []func(){func() { _ = emb.Close() }}
	fail := func(err error) (*embServer, int, []*catalog.Bundle, error) {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		return nil, 0, nil, err
	}
	metrics := graph.NewInstruments(prometheus.NewRegistry())
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb}, Observer: metrics})
	if err != nil {
		return fail(err)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	// As server.go builds it: the partition cache follows the store's own writes (Retag).
	cache := graph.NewPartitionCache(int(cfg.cacheBytes), nil)
	var onCommit func(dynamo.Commit)
	if cache != nil && !cfg.noRetag {
		onCommit = cache.Retag
	}
	store := dynamo.New(client, dynamo.Options{Logger: log, CursorSecret: []byte("bench"), Generation: emb.Generation, OnCommit: onCommit})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		return fail(err)
	}
	// As the embedded default server: its archive may move what is 10 minutes old, and it does
	// (below) as that server's first scheduled run does 10 minutes after start, so that reads
	// of metrics windows merge the table and the archive as they do there.
	s3opts := blob.Options{Logger: log, MinArchiveAge: blob.EmbeddedMinArchiveAge}
	objects, s3emb, err := blob.OpenEmbeddedWrapped(ctx, s3opts, nil)
	if err != nil {
		return fail(err)
	}
	closers = append(closers, func() { _ = s3emb.Close() })
	bundles := samplecat.Catalogue(time.Now())
	items, err := store.BulkLoad(ctx, bundles, 4)
	if err != nil {
		return fail(err)
	}
	if _, err := samplecat.LoadArtifacts(ctx, objects, bundles); err != nil {
		return fail(err)
	}
	archiver := archive.New(store, objects, archive.Options{CursorSecret: []byte("bench"), HourCacheBytes: archive.HourCacheShare(int(cfg.cacheBytes))})
	if _, err := archiver.Archive(ctx, time.Now().Add(-blob.EmbeddedMinArchiveAge), nil); err != nil {
		return fail(err)
	}
	keys := &graph.KeyRing{}
	key := graph.NewAPIKey()
	keys.Add(key, graph.RoleAdmin, "bench")
	opts := withCache(cache, graph.Options{
		Logger:           log,
		Auth:             &graph.Auth{Keys: keys, Anonymous: graph.RoleNone},
		Deadline:         10 * time.Second, // server.go's -request-timeout default
		Instruments:      metrics,
		Artifacts:        objects,
		Archive:          archiver,
		PersistedQueries: graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes),
	})
	srv := httptest.NewServer(graph.NewHandler(store, opts))
	closers = append(closers, srv.Close)
	port, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key}})
	if err != nil {
		return fail(err)
	}
	elsewhere := dynamo.New(port, dynamo.Options{Logger: log, CursorSecret: []byte("bench")})
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}
	closers = append(closers, tr.CloseIdleConnections)
	es := &embServer{url: srv.URL, key: key, client: &http.Client{Transport: tr}, elsewhere: elsewhere, revs: map[string]int{}}
	es.close = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	return es, items, bundles, nil
}

// embAnswer is what one request returned.
type embAnswer struct {
	status   int
	body     []byte
	requests int
}

func (e *embServer) post(ctx context.Context, body []byte) (embAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return embAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.key)
	resp, err := e.client.Do(req)
	if err != nil {
		return embAnswer{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return embAnswer{status: resp.StatusCode, body: out, requests: requestsOf(out)}, err
}

// touch writes to the capability (untimed): the cold reads come right after it. The first
// write of a capability learns its revision from the CONFLICT answer.
func (e *embServer) touch(ctx context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for range 2 {
		rev := e.revs[id]
		body, _ := json.Marshal(map[string]any{"query": touchMutation, "variables": map[string]any{"id": id, "rev": rev, "d": fmt.Sprintf("touched by the benchmark, revision %d", rev+1)}})
		a, err := e.post(ctx, body)
		if err != nil {
			return err
		}
		var resp struct {
			Data *struct {
				UpdateCapability struct{ Revision int }
			}
			Errors []struct {
				Extensions struct {
					Code            string
					CurrentRevision int
				}
			}
		}
		if err := json.Unmarshal(a.body, &resp); err != nil || a.status != http.StatusOK {
			return fmt.Errorf("touch %s: status %d: %.400s", id, a.status, a.body)
		}
		if len(resp.Errors) == 1 && resp.Errors[0].Extensions.Code == "CONFLICT" {
			e.revs[id] = resp.Errors[0].Extensions.CurrentRevision
			continue
		}
		if len(resp.Errors) > 0 || resp.Data == nil {
			return fmt.Errorf("touch %s: %.400s", id, a.body)
		}
		e.revs[id] = resp.Data.UpdateCapability.Revision
		return nil
	}
	return fmt.Errorf("touch %s: revision conflicts", id)
}

// touchElsewhere is touch through memdyn's port (another instance, a command): the server
// learns of it only from the versions it reads.
func (e *embServer) touchElsewhere(ctx context.Context, id string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur, err := e.elsewhere.Capability(ctx, id)
	if err != nil {
		return fmt.Errorf("touch %s elsewhere: %w", id, err)
	}
	c, err := e.elsewhere.UpdateCapability(ctx, id, cur.Revision, func(c *catalog.Capability) error {
		c.Description = fmt.Sprintf("touched elsewhere by the benchmark, revision %d", cur.Revision+1)
		return nil
	}, dynamo.Idempotency{})
	if err != nil {
		return fmt.Errorf("touch %s elsewhere: %w", id, err)
	}
	e.revs[id] = c.Revision
	return nil
}

// embOp is a measured unit: one or more requests, sent at once or one after another as the
// explorer's page sends them.
type embOp struct {
	name       string
	bodies     [][]byte
	sequential bool   // each request after the previous one answered
	touch      string // the capability written before each cold run
}

// runOnce sends the op's requests (in parallel, or in order when sequential) and returns its wall time and whether any
// answer was past the deadline (TIMEOUT, 503); any other error fails the run.
func (e *embServer) runOnce(ctx context.Context, op *embOp, deadline time.Duration) (time.Duration, int, bool, error) {
	start := time.Now()
	answers := make([]embAnswer, len(op.bodies))
	errs := make([]error, len(op.bodies))
	var wg sync.WaitGroup
	for i, b := range op.bodies {
		if op.sequential {
			answers[i], errs[i] = e.post(ctx, b)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = e.post(ctx, b)
		}()
	}
	wg.Wait()
	lat := time.Since(start)
	late := lat > deadline
	reqs := 0
	for i, a := range answers {
		if errs[i] != nil {
			return 0, 0, false, errs[i]
		}
		reqs += a.requests
		switch {
		case a.status == http.StatusServiceUnavailable || bytes.Contains(a.body, []byte(`"TIMEOUT"`)):
			late = true
		case a.status != http.StatusOK || bytes.Contains(a.body, []byte(`"errors":[`)):
			return 0, 0, false, fmt.Errorf("%s: status %d: %.600s", op.name, a.status, a.body)
		}
	}
	return lat, reqs, late, nil
}

// measureEmbedded runs goal 2's measurements on the embedded default.
func measureEmbedded(ctx context.Context, cfg config, logf func(string, ...any)) (*embReport, error) {
	e, items, bundles, err := startEmbedded(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer e.close()
	rep := &embReport{Items: items, Deadline: 10 * time.Second, Load: loadAverage()}
	rep.CacheNote = cacheNote(cfg.cacheBytes)
	id := bundles[0].Capability.CapabilityID
	body := func(q string, vars map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		return b
	}
	page, err := explorerPage(id, time.Now())
	if err != nil {
		return nil, err
	}
	// The explorer sends hashes: register its documents once, as its first visit does.
	for _, p := range page.register {
		if _, err := e.post(ctx, p); err != nil {
			return nil, err
		}
	}
	ops := []*embOp{
		{name: "trivial", bodies: [][]byte{body(trivialQuery, nil)}},
		{name: "complete view", bodies: [][]byte{body(completeViewQuery, map[string]any{"id": id})}, touch: id},
		{name: "list all", bodies: [][]byte{body(listAllQuery, nil)}, touch: id},
		{name: "explorer capability page", bodies: page.hashed, sequential: true, touch: id},
	}
	for _, op := range ops {
		modes := []string{modeWarm}
		if op.touch != "" {
			modes = append(modes, modeCold, modeElsewhere)
		}
		var triv *embOp // the trivial query beside each operation but itself
		if op != ops[0] {
			triv = ops[0]
		}
		for _, mode := range modes {
			r, err := e.measureOp(ctx, cfg, op, triv, mode, rep.Deadline)
			if err != nil {
				return nil, err
			}
			rep.Rows = append(rep.Rows, r)
			logf("embedded %-26s %-23s %2d req  p50 C=1 %7.2f ms (trivial beside it %5.2f ms)  C=16 p50 %7.2f ms  %8.0f/s (trivial %6.0f/s)  past deadline %d",
				op.name, mode, r.Requests, ms(r.P50C1), ms(r.TrivP50C1), ms(r.P50C16), r.Throughput, r.TrivThroughput, r.PastDeadline)
		}
	}
	rep.PageOps = page.names
	return rep, nil
}

// measureOp measures op in one mode at concurrency 1 and 16, interleaved with the trivial query
// triv (nil: op alone), so that the two terms of each of goal 2's ratios are measured under the
// same conditions: on a shared machine (a VM, a CI runner) the speed of both moves by a third
// from one minute to the next, and a trivial query measured once at the start made each ratio
// a quotient of two moments. op's runs and triv's alternate in blocks (abba); within a block
// each runs as it would alone, its caches its own (a trivial query run right after each list
// took half as long again as in a row of its own, which would flatter every ratio).
func (e *embServer) measureOp(ctx context.Context, cfg config, op, triv *embOp, mode string, deadline time.Duration) (*embRow, error) {
	r := &embRow{Name: op.name, Mode: mode}
	var mu sync.Mutex
	late := 0
	run := func(ctx context.Context, o *embOp) (sample, error) {
		lat, reqs, past, err := e.runOnce(ctx, o, deadline)
		if past {
			mu.Lock()
			late++
			mu.Unlock()
		}
		return sample{lat: lat, requests: reqs}, err
	}
	one := func(ctx context.Context) (sample, error) {
		switch mode {
		case modeCold:
			if err := e.touch(ctx, op.touch); err != nil {
				return sample{}, err
			}
		case modeElsewhere:
			if err := e.touchElsewhere(ctx, op.touch); err != nil {
				return sample{}, err
			}
		}
		return run(ctx, op)
	}
	var trivOne func(context.Context) (sample, error)
	if triv != nil {
		trivOne = func(ctx context.Context) (sample, error) { return run(ctx, triv) }
	}
	if _, _, err := runMany(ctx, max(cfg.warm, 4), 4, one); err != nil {
		return nil, err
	}
	n1, n16 := cfg.embN1, cfg.embN16
	if mode != modeWarm {
		n1, n16 = max(n1/2, 2), max(n16/2, 4)
	}
	s1, t1, err := abba(ctx, n1, 1, 4, one, trivOne)
	if err != nil {
		return nil, err
	}
	var reqs []int
	for _, s := range s1.samples {
		reqs = append(reqs, s.requests)
	}
	r.P50C1, r.Requests, r.Runs1 = percentile(s1.lats(), 0.5), medianInt(reqs), len(s1.samples)
	if triv != nil {
		r.TrivP50C1 = percentile(t1.lats(), 0.5)
	}
	late = 0
	s16, t16, err := abba(ctx, n16, 16, 2, one, trivOne)
	if err != nil {
		return nil, err
	}
	lats := s16.lats()
	r.P50C16, r.P99C16, r.Runs16 = percentile(lats, 0.5), percentile(lats, 0.99), len(lats)
	r.Throughput = s16.throughput()
	if triv != nil {
		r.TrivThroughput = t16.throughput()
	}
	r.PastDeadline = late
	return r, nil
}

// blocks are the samples of one side of abba and the wall time of its blocks.
type blocks struct {
	samples []sample
	wall    time.Duration
}

func (b *blocks) lats() []time.Duration {
	out := make([]time.Duration, len(b.samples))
	for i, s := range b.samples {
		out[i] = s.lat
	}
	return out
}

func (b *blocks) throughput() float64 { return float64(len(b.samples)) / max(b.wall.Seconds(), 1e-9) }

// abba runs about n of a's runs and as many of b's, each at concurrency c, in blocks a, b, b, a,
// rounds times over (b nil: a's blocks alone), and returns each side's samples and the wall
// time of its blocks. Interleaving the two sides so cancels what drifts between them (a
// neighbour on the machine, the heap growing) while each block runs as that side alone would.
func abba(ctx context.Context, n, c, rounds int, a, b func(context.Context) (sample, error)) (*blocks, *blocks, error) {
	per := max(n/(2*rounds), 1)
	sa, sb := &blocks{}, &blocks{}
	for k := range 4 * rounds {
		side, fn := sa, a
		if k%4 == 1 || k%4 == 2 {
			if b == nil {
				continue
			}
			side, fn = sb, b
		}
		s, wall, err := runMany(ctx, per, c, fn)
		if err != nil {
			return nil, nil, err
		}
		side.samples = append(side.samples, s...)
		side.wall += wall
	}
	return sa, sb, nil
}

// explorer is what the explorer's capability page sends on load.
type explorer struct {
	names    []string // operation names, in the order the page sends them (one after another)
	hashed   [][]byte // the requests as it sends them once its documents are known: hash only
	register [][]byte // the requests that register them (query and hash)
}

// explorerPage reads the explorer's capability page from the embedded web assets (the files the
// binary serves) and returns the requests it sends on load for the capability id at now, in
// order: LiveCursor (the newest change, which its subscription resumes after), then
// CapabilityPage with the variables render() passes (the default metrics window, the first
// metrics and jobs). The sections (graph, metrics, jobs, rules) send theirs only on a click, so
// they are not part of the load; the subscription goes over its WebSocket, not counted here.
func explorerPage(id string, now time.Time) (*explorer, error) {
	files := map[string]string{}
	ui := web.Handler(web.Options{})
	for _, f := range []string{"views/capability.js", "sections/jobs.js", "sections/rules.js", "sections/metrics.js", "sections/graph.js", "sections/live.js"} {
		rec := httptest.NewRecorder()
		ui.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/assets/js/"+f, nil))
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("explorer asset %s: status %d", f, rec.Code)
		}
		files[f] = rec.Body.String()
	}
	consts, nums := jsConstants(files)
	q, ok := consts["CAPABILITY_PAGE"]
	if !ok {
		return nil, fmt.Errorf("views/capability.js: no CAPABILITY_PAGE")
	}
	// render(): const from = windowStart(WINDOWS[DEFAULT_WINDOW].ms), the window's start at the
	// start of its minute (sections/metrics.js).
	if !strings.Contains(files["views/capability.js"], "const from = windowStart(WINDOWS[windowKey].ms);") {
		return nil, fmt.Errorf("views/capability.js: render() no longer takes its window's start from windowStart")
	}
	window, err := jsWindow(files["sections/metrics.js"])
	if err != nil {
		return nil, err
	}
	from := now.Add(-window).UTC().Truncate(time.Minute).Format("2006-01-02T15:04:05.000Z")
	vars := map[string]any{"id": id, "from": from, "metricsFirst": nums["METRICS_FIRST"], "jobsFirst": nums["JOBS_FIRST"]}
	if nums["METRICS_FIRST"] == 0 || nums["JOBS_FIRST"] == 0 {
		return nil, fmt.Errorf("explorer: METRICS_FIRST or JOBS_FIRST not found")
	}
	cursor, ok := consts["LIVE_CURSOR"]
	if !ok {
		return nil, fmt.Errorf("sections/live.js: no LIVE_CURSOR")
	}
	page := &explorer{}
	for _, op := range []struct {
		name, query string
		vars        map[string]any
	}{{"LiveCursor", cursor, map[string]any{"id": id}}, {"CapabilityPage", q, vars}} {
		sum := sha256.Sum256([]byte(op.query))
		ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
		hashed, _ := json.Marshal(map[string]any{"extensions": ext, "variables": op.vars})
		register, _ := json.Marshal(map[string]any{"query": op.query, "extensions": ext, "variables": op.vars})
		page.names = append(page.names, op.name)
		page.hashed, page.register = append(page.hashed, hashed), append(page.register, register)
	}
	return page, nil
}

var (
	jsTemplate = regexp.MustCompile("(?s)export const ([A-Z_]+) = `(.*?)`;")
	jsNumber   = regexp.MustCompile(`export const ([A-Z_]+) = (\d+);`)
	jsInterp   = regexp.MustCompile(`\$\{([A-Z_]+)\}`)
)

// jsConstants returns the template-literal constants of the files, ${NAME} expanded from the
// others, and the integer constants.
func jsConstants(files map[string]string) (map[string]string, map[string]int) {
	raw, nums := map[string]string{}, map[string]int{}
	for _, src := range files {
		for _, m := range jsTemplate.FindAllStringSubmatch(src, -1) {
			raw[m[1]] = m[2]
		}
		for _, m := range jsNumber.FindAllStringSubmatch(src, -1) {
			n, _ := strconv.Atoi(m[2])
			nums[m[1]] = n
		}
	}
	out := map[string]string{}
	for k, v := range raw {
		out[k] = jsInterp.ReplaceAllStringFunc(v, func(s string) string { return raw[s[2:len(s)-1]] })
	}
	return out, nums
}

// jsWindow returns the metrics section's default window: WINDOWS[DEFAULT_WINDOW].ms.
func jsWindow(src string) (time.Duration, error) {
	m := regexp.MustCompile(`DEFAULT_WINDOW = '([^']+)'`).FindStringSubmatch(src)
	if m == nil {
		return 0, fmt.Errorf("sections/metrics.js: no DEFAULT_WINDOW")
	}
	w := regexp.MustCompile(`'` + regexp.QuoteMeta(m[1]) + `': \{ ms: ([^,]+),`).FindStringSubmatch(src)
	if w == nil {
		return 0, fmt.Errorf("sections/metrics.js: no window %q", m[1])
	}
	// The windows are written as N * 3600e3 or 3600e3.
	total := 1.0
	for _, f := range strings.Split(w[1], "*") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return 0, fmt.Errorf("sections/metrics.js: window %q: %w", w[1], err)
		}
		total *= v
	}
	return time.Duration(total * float64(time.Millisecond)), nil
}

// cacheNote says which partition cache the servers of the run had.
func cacheNote(cacheBytes int64) string {
	if cacheBytes <= 0 {
		return "The servers ran without the partition cache (-cache-bytes 0): every range read goes to memdyn; the embedded store's read memo still answers repeated metadata reads and list pages while nothing was written"
	}
	return fmt.Sprintf("The servers ran with the partition cache on (-cache-bytes %d, the server's default is %d): warm reads take their ranges from it and their metadata, list pages, job and notification pages and metric ranges from the embedded store's read memo (memdyn's write generation unchanged: no request), and the explorer page's archived hours and S3 listings from the archive's hour cache and the embedded S3's listings memo; cold ones (right after a write through the same server) take the capability as the write put it from the memo, its list pages carried when the write left every entry in place, and the ranges the write did not touch from the cache (PartitionCache.Retag), and read the rest again", cacheBytes, graph.DefaultCacheBytes)
}
