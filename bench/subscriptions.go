package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/tune"
	samplecat "github.com/capcat/catalogue/sample"
)

// The subscriptions section (issue #18): delivery latency from a write through one server
// instance to subscribers on another, exactly once and in order; what the instances' polling of
// the change feed costs in DynamoDB requests; the memory of idle subscriptions; and a
// subscriber that stops reading. Two real servers (graph.NewHandler, each with its own store,
// DynamoDB client and change hub) share one backend (memdyn in a child process, the sample
// catalogue), served over loopback HTTP; the subscribers are the benchmark's own
// graphql-transport-ws client (wsclient.go). See docs/performance.md.

// subConfig is the section's part of the configuration.
type subConfig struct {
	enabled  bool          // run the section (-subscriptions)
	only     bool          // run only the section and splice it into -out (-subscriptions-only)
	rate     float64       // writes per second through instance B
	duration time.Duration // of each write phase
	idle     time.Duration // of each idle count
	idleSubs int           // idle subscriptions on the child server
	caps     int           // capabilities written
	target   time.Duration // the p99 target across instances
	// stall runs the second phase, with a connection that stops reading: it lasts until the
	// server closes its subscriptions, which takes the sockets' buffers filling (tests skip it).
	stall bool
}

// registerSubFlags adds the section's flags.
func registerSubFlags(fs *flag.FlagSet, c *subConfig) {
	*c = subConfig{enabled: true, stall: true, rate: 20, duration: 20 * time.Second, idle: 15 * time.Second, idleSubs: 1000, caps: 4, target: time.Second}
	fs.BoolVar(&c.enabled, "subscriptions", c.enabled, "measure subscriptions: delivery latency across two instances, polling cost, idle memory, back-pressure (subscriptions.go)")
	fs.BoolVar(&c.only, "subscriptions-only", false, "measure subscriptions only and replace their section of -out (the rest of the file stays as it is)")
	fs.Float64Var(&c.rate, "sub-rate", c.rate, "writes per second through the writing instance in the subscription phases")
	fs.DurationVar(&c.duration, "sub-duration", c.duration, "length of each subscription write phase")
	fs.DurationVar(&c.idle, "sub-idle", c.idle, "length of each idle request count (no subscribers, then subscribers)")
	fs.IntVar(&c.idleSubs, "sub-idle-subs", c.idleSubs, "idle subscriptions held on one server for the memory bound")
	fs.IntVar(&c.caps, "sub-caps", c.caps, "capabilities the subscription phases write to")
}

// subscriptionQuery is what every subscriber of the benchmark asks for.
const subscriptionQuery = `subscription Changes($cap: ID, $entities: [ChangeEntity!]) {
  changes(capabilityId: $cap, entities: $entities) { id at capabilityId entity entityId action revision requestId }
}`

// changesQuery reads a capability's feed, the ground truth the subscribers are held to.
const changesQuery = `query Feed($cap: ID!, $after: String) {
  changes(capabilityId: $cap, first: 100, after: $after) {
    nodes { id capabilityId entity requestId }
    pageInfo { hasNextPage endCursor }
  }
}`

// subReport is the section.
type subReport struct {
	Delay      time.Duration
	Items      int
	Caps       []string
	Rate       float64
	Duration   time.Duration
	Idle       time.Duration
	Kinds      []string
	Load       string
	Phases     []*subPhase
	Polling    []pollRow
	Memory     *memReport
	Stalled    *stallReport
	Target     time.Duration
	ChangePoll string
	Queue      int       // the hub's queue per subscriber
	Command    string    // set when the section was run alone (-subscriptions-only)
	At         time.Time // when it was run alone
}

// pollRow is one instance's DynamoDB requests per minute in one state.
type pollRow struct {
	Instance, State string
	PerMinute       float64
	Ops             map[string]int
	Span            time.Duration
	Poller          float64 // per minute, the server's own count of its poller's requests (catalogue_change_poll_requests_total)
	Note            string
}

// subPhase is one write phase.
type subPhase struct {
	Name      string
	Writes    int // mutations that committed
	Refused   int // CONFLICT answers retried (they record no change)
	Changes   int // changes of the phase's writes in the feed
	Subs      []*subResult
	Wall      time.Duration
	MutationQ int // DynamoDB requests of the mutations (extensions.dynamodb)
	// With a subscriber that does not read: when A closed it (-1: not within the phase), the
	// writes sent and the changes they recorded by then.
	Stalled                       bool
	DroppedAt                     time.Duration
	DroppedWrites, DroppedChanges int
	droppedReqs                   []string
	feed                          []feedChange // the phase's changes, each capability's in order
}

// subResult is one subscriber's delivery in a phase.
type subResult struct {
	Name, Instance string
	Catalogue      bool // subscribed to the whole catalogue (no capabilityId)
	Check          deliveryCheck
	FromCommit     []time.Duration
	FromSent       []time.Duration
}

// stallReport is what happened to the connection that stopped reading.
type stallReport struct {
	Subs      int            // its subscriptions
	Nexts     int            // changes they read once it read again
	Ends      map[string]int // how they ended (kind, code and message), how many each way
	TooSlow   int            // ended with the server's SUBSCRIBER_TOO_SLOW error
	NotPrefix int            // read other than the feed's first changes, in order
	WrongLast int            // ended with a lastId other than the last change read
	Wait      time.Duration
}

// endText is how a subscription ended, without what differs between subscriptions (the IDs).
func endText(e *wsEnd) string {
	var errs []struct {
		Message    string
		Extensions struct{ Code string }
	}
	if e.Kind == "error" && json.Unmarshal([]byte(e.Payload), &errs) == nil && len(errs) == 1 {
		return fmt.Sprintf("error %s: %s", errs[0].Extensions.Code, errs[0].Message)
	}
	return e.Kind + ": " + e.Payload
}

// isPrefix reports whether got holds, for each capability, the first changes of that
// capability in feed, in order, and nothing else.
func isPrefix(feed []feedChange, got []recvChange) bool {
	want := map[string][]string{}
	for _, f := range feed {
		want[f.CapabilityID] = append(want[f.CapabilityID], f.ID)
	}
	n := map[string]int{}
	for _, g := range got {
		w := want[g.Cap]
		if n[g.Cap] >= len(w) || w[n[g.Cap]] != g.ID {
			return false
		}
		n[g.Cap]++
	}
	return true
}

// tooSlowCode is the server's extensions.code for a subscriber closed for falling behind.
const tooSlowCode = "SUBSCRIBER_TOO_SLOW"

// memReport is the memory bound of idle subscriptions.
type memReport struct {
	Subs              int
	Before, After     memStats
	Idle              time.Duration
	Received, Missing int // after the idle time: subscriptions that got their change, that did not
	ExtraOrDup        int
	Child             bool // the server ran in a child process (else in this one, clients included)
}

// memStats is the child server's own view of itself, after a forced GC.
type memStats struct {
	HeapInuse  uint64 `json:"heapInuse"`
	HeapAlloc  uint64 `json:"heapAlloc"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
	RSS        int64  `json:"rss"`
}

// countingObserver counts every DynamoDB HTTP attempt of one instance by operation, and passes
// the calls on to the instance's Prometheus instruments.
type countingObserver struct {
	next dynamo.Observer
	mu   sync.Mutex
	ops  map[string]int
}

func newCountingObserver(next dynamo.Observer) *countingObserver {
	return &countingObserver{next: next, ops: map[string]int{}}
}

func (c *countingObserver) Attempt(op string, err error) {
	c.mu.Lock()
	c.ops[op]++
	c.mu.Unlock()
	c.next.Attempt(op, err)
}

func (c *countingObserver) Call(op string, attempts int, rcu, wcu float64, err error) {
	c.next.Call(op, attempts, rcu, wcu, err)
}

// take returns the counts since the last take and zeroes them.
func (c *countingObserver) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.ops
	c.ops = map[string]int{}
	return out
}

func sumOps(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// subServer is one server instance as server.go builds it on an existing table: its own
// DynamoDB client and store, its Prometheus registry, and graph.NewHandler.
type subServer struct {
	reg     *prometheus.Registry
	handler http.Handler
	store   *dynamo.Store
	count   *countingObserver
	stop    func()
}

// newSubServer builds a server instance on the DynamoDB endpoint.
func newSubServer(ctx context.Context, endpoint string, keys *graph.KeyRing) (*subServer, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := graph.NewInstruments(reg)
	count := newCountingObserver(metrics)
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: endpoint}, Observer: count})
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	store := dynamo.New(client, dynamo.Options{Logger: log, CursorSecret: []byte("bench")})
	opts := graph.Options{
		Logger:           log,
		Auth:             &graph.Auth{Keys: keys, Anonymous: graph.RoleNone},
		Deadline:         10 * time.Second, // server.go's -request-timeout default
		Instruments:      metrics,
		MetricsHandler:   promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
		PartitionCache:   graph.NewPartitionCache(graph.DefaultCacheBytes, nil),
		PersistedQueries: graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes),
	}
	// As server.go runs it: one hub per server at the default settings, its poller started with
	// Run, closed at shutdown.
	opts.Hub = graph.NewHub(store, graph.HubOptions{Logger: log, Instruments: metrics})
	hctx, cancel := context.WithCancel(context.Background())
	go opts.Hub.Run(hctx)
	stop := func() {
		opts.Hub.Close()
		cancel()
	}
	return &subServer{reg: reg, handler: graph.NewHandler(store, opts), store: store, count: count, stop: stop}, nil
}

// The server's own counters the section reads.
const (
	droppedMetric = "catalogue_subscriptions_dropped_total" // subscribers closed as too slow
	pollMetric    = "catalogue_change_poll_requests_total"  // DynamoDB requests of the poller
)

// metric returns the value of the server's counter or gauge of that name (summed over its
// labels), -1 when it has none.
func (s *subServer) metric(name string) float64 {
	mfs, err := s.reg.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		v := 0.0
		for _, m := range mf.GetMetric() {
			v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
		return v
	}
	return -1
}

// subInstance is a server instance served over loopback HTTP in this process.
type subInstance struct {
	name   string
	url    string
	srv    *subServer
	http   *http.Server
	client *http.Client
}

func startSubInstance(ctx context.Context, name, endpoint string, keys *graph.KeyRing) (*subInstance, error) {
	s, err := newSubServer(ctx, endpoint, keys)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.stop()
		return nil, err
	}
	hs := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}
	return &subInstance{name: name, url: "http://" + ln.Addr().String(), srv: s, http: hs, client: &http.Client{Transport: tr}}, nil
}

func (i *subInstance) close() {
	_ = i.http.Close()
	i.srv.stop()
	i.client.CloseIdleConnections()
}

// gqlAnswer is a GraphQL response over HTTP.
type gqlAnswer struct {
	Data       json.RawMessage
	Errors     []gqlError
	Extensions struct {
		DynamoDB struct{ Requests int }
	}
}

type gqlError struct {
	Message    string
	Extensions struct {
		Code            string
		CurrentRevision int
	}
}

// post sends one GraphQL request with the key and request ID.
func (i *subInstance) post(ctx context.Context, key, requestID, query string, vars map[string]any) (*gqlAnswer, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, i.url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if requestID != "" {
		req.Header.Set(graph.RequestIDHeader, requestID)
	}
	resp, err := i.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var a gqlAnswer
	if err := json.Unmarshal(out, &a); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %.400s", i.name, resp.StatusCode, out)
	}
	return &a, nil
}

// subWrite is one mutation of a phase.
type subWrite struct {
	RequestID string
	Cap       string
	Kind      string
	Sent      time.Time
	Committed time.Time // the response was read
}

// capTarget is a capability the phases write to.
type capTarget struct {
	mu         sync.Mutex
	id         string
	components []string
	rev        int
	job        string // the last job started and not yet finished
}

// subWriter sends the phases' mutations through one instance.
type subWriter struct {
	inst   *subInstance
	key    string
	caps   []*capTarget
	nonce  string
	seq    atomic.Int64
	mu     sync.Mutex
	writes map[string]*subWrite
	refuse int
	dynReq int
}

// subKinds are the mutations a phase cycles through, per capability.
var subKinds = []string{"updateCapability", "startJob", "updateJob", "recordMetrics"}

// write sends the i-th mutation of the phase: capability i mod caps, the kinds in turn.
func (w *subWriter) write(ctx context.Context, phase string, i int) error {
	c := w.caps[i%len(w.caps)]
	kind := subKinds[(i/len(w.caps))%len(subKinds)]
	c.mu.Lock()
	defer c.mu.Unlock()
	if kind == "updateJob" && c.job == "" {
		kind = "startJob"
	}
	for attempt := 0; ; attempt++ {
		reqID := fmt.Sprintf("bsub-%s-%s-%d-%d", w.nonce, phase, i, attempt)
		var query string
		var vars map[string]any
		switch kind {
		case "updateCapability":
			query = `mutation($id: ID!, $rev: Int!, $d: String!) { updateCapability(id: $id, expectedRevision: $rev, input: {description: $d}) { revision } }`
			vars = map[string]any{"id": c.id, "rev": c.rev, "d": "written by the subscription benchmark, " + reqID}
		case "startJob":
			c.job = fmt.Sprintf("JOB-BSUB-%s-%d", w.nonce, w.seq.Add(1))
			query = `mutation($cap: ID!, $job: ID!) { startJob(capabilityId: $cap, input: {jobId: $job, jobType: DEPLOYMENT, status: RUNNING}) { revision } }`
			vars = map[string]any{"cap": c.id, "job": c.job}
		case "updateJob":
			query = `mutation($job: ID!) { updateJob(jobId: $job, expectedRevision: 1, input: {status: COMPLETED}) { revision } }`
			vars = map[string]any{"job": c.job}
		case "recordMetrics":
			at := time.Now().UTC().Truncate(time.Minute).Format(time.RFC3339)
			var in []map[string]any
			for _, comp := range c.components[:min(2, len(c.components))] {
				in = append(in, map[string]any{"capabilityId": c.id, "componentId": comp, "metricType": "PERFORMANCE", "timestamp": at, "interval": "1m",
					"values": map[string]any{"availability": map[string]any{"value": 99.9}}})
			}
			query = `mutation($in: [MetricInput!]!) { recordMetrics(inputs: $in) { recorded } }`
			vars = map[string]any{"in": in}
		}
		wr := &subWrite{RequestID: reqID, Cap: c.id, Kind: kind, Sent: time.Now()}
		a, err := w.inst.post(ctx, w.key, reqID, query, vars)
		wr.Committed = time.Now()
		if err != nil {
			return fmt.Errorf("%s %s: %w", kind, c.id, err)
		}
		if len(a.Errors) == 1 && a.Errors[0].Extensions.Code == "CONFLICT" && kind == "updateCapability" && attempt < 3 {
			c.rev = a.Errors[0].Extensions.CurrentRevision
			w.mu.Lock()
			w.refuse++
			w.mu.Unlock()
			continue
		}
		if len(a.Errors) > 0 {
			return fmt.Errorf("%s %s: %s (%s)", kind, c.id, a.Errors[0].Message, a.Errors[0].Extensions.Code)
		}
		switch kind {
		case "updateCapability":
			var d struct{ UpdateCapability struct{ Revision int } }
			if err := json.Unmarshal(a.Data, &d); err != nil {
				return err
			}
			c.rev = d.UpdateCapability.Revision
		case "updateJob":
			c.job = ""
		}
		w.mu.Lock()
		w.writes[reqID] = wr
		w.dynReq += a.Extensions.DynamoDB.Requests
		w.mu.Unlock()
		return nil
	}
}

// recvChange is one change a subscriber read.
type recvChange struct {
	At        time.Time
	ID        string
	Cap       string
	Entity    string
	RequestID string
}

// subscriber is one subscription of the benchmark.
type subscriber struct {
	name     string
	instance string
	cap      string   // "" for the catalogue's
	entities []string // nil for every entity
	conn     *wsConn
	sub      *wsSub

	mu  sync.Mutex
	got []recvChange
	bad int // payloads that were not a change
}

func (s *subscriber) onNext(at time.Time, payload json.RawMessage) {
	var p struct {
		Data struct {
			Changes struct {
				ID, CapabilityID, Entity string
				RequestID                *string
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := json.Unmarshal(payload, &p); err != nil || p.Data.Changes.ID == "" {
		s.bad++
		return
	}
	c := p.Data.Changes
	r := recvChange{At: at, ID: c.ID, Cap: c.CapabilityID, Entity: c.Entity}
	if c.RequestID != nil {
		r.RequestID = *c.RequestID
	}
	s.got = append(s.got, r)
}

// take returns what the subscriber read since the last take.
func (s *subscriber) take() []recvChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.got
	s.got = nil
	return out
}

func (s *subscriber) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// wants reports whether the subscriber's filter passes a change of that capability and entity.
func (s *subscriber) wants(capID, entity string) bool {
	if s.cap != "" && s.cap != capID {
		return false
	}
	if s.entities == nil {
		return true
	}
	for _, e := range s.entities {
		if e == entity {
			return true
		}
	}
	return false
}

// subscribe opens a connection to the instance and subscribes.
func subscribe(ctx context.Context, inst *subInstance, key, name, capID string, entities []string, start bool) (*subscriber, error) {
	conn, err := dialWS(ctx, inst.url+"/graphql", key)
	if err != nil {
		return nil, fmt.Errorf("subscriber %s: %w", name, err)
	}
	s, err := subscribeOn(ctx, conn, inst, name, capID, entities)
	if err != nil {
		conn.closeNow()
		return nil, err
	}
	if start {
		conn.start(ctx)
	}
	return s, nil
}

// subscribeOn adds a subscription to an open connection.
func subscribeOn(ctx context.Context, conn *wsConn, inst *subInstance, name, capID string, entities []string) (*subscriber, error) {
	s := &subscriber{name: name, instance: inst.name, cap: capID, entities: entities}
	vars := map[string]any{}
	if capID != "" {
		vars["cap"] = capID
	}
	if entities != nil {
		vars["entities"] = entities
	}
	sub, err := conn.subscribe(ctx, subscriptionQuery, vars, s.onNext)
	if err != nil {
		return nil, fmt.Errorf("subscriber %s: %w", name, err)
	}
	s.conn, s.sub = conn, sub
	return s, nil
}

// feedChange is one change of the feed as the changes query lists it.
type feedChange struct {
	ID, CapabilityID, Entity string
	RequestID                *string
}

// readFeed returns the capability's whole feed, oldest first.
func readFeed(ctx context.Context, inst *subInstance, key, capID string) ([]feedChange, error) {
	var out []feedChange
	var after any
	for range 1000 {
		a, err := inst.post(ctx, key, "", changesQuery, map[string]any{"cap": capID, "after": after})
		if err != nil {
			return nil, err
		}
		if len(a.Errors) > 0 {
			return nil, fmt.Errorf("changes(%s): %s", capID, a.Errors[0].Message)
		}
		var d struct {
			Changes struct {
				Nodes    []feedChange
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		if err := json.Unmarshal(a.Data, &d); err != nil {
			return nil, err
		}
		out = append(out, d.Changes.Nodes...)
		if !d.Changes.PageInfo.HasNextPage || d.Changes.PageInfo.EndCursor == nil {
			return out, nil
		}
		after = *d.Changes.PageInfo.EndCursor
	}
	return nil, fmt.Errorf("changes(%s): more than 1000 pages", capID)
}

// subHarness holds the section's servers, clients and writer.
type subHarness struct {
	cfg       config
	logf      func(string, ...any)
	be        *backend
	a, b      *subInstance
	keys      *graph.KeyRing
	adminKey  string
	viewerKey string
	writer    *subWriter
	subs      []*subscriber
	bundles   []*catalog.Bundle
	items     int
}

// measureSubscriptions runs the section.
func measureSubscriptions(ctx context.Context, cfg config, logf func(string, ...any)) (*subReport, error) {
	sc := cfg.subs
	h := &subHarness{cfg: cfg, logf: logf}
	var err error
	if cfg.backendProcess {
		h.be, err = startChild("memdyn")
	} else {
		h.be, err = startLocal("memdyn")
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
	if err := h.load(ctx); err != nil {
		return nil, err
	}
	if err := h.be.SetDelay(cfg.delay); err != nil {
		return nil, err
	}
	h.keys = &graph.KeyRing{}
	h.adminKey, h.viewerKey = graph.NewAPIKey(), graph.NewAPIKey()
	h.keys.Add(h.adminKey, graph.RoleAdmin, "bench-writer")
	h.keys.Add(h.viewerKey, graph.RoleViewer, "bench-subscriber")
	if h.a, err = startSubInstance(ctx, "A", h.be.URL, h.keys); err != nil {
		return nil, err
	}
	defer h.a.close()
	if h.b, err = startSubInstance(ctx, "B", h.be.URL, h.keys); err != nil {
		return nil, err
	}
	defer h.b.close()
	rep := &subReport{Delay: cfg.delay, Items: h.items, Rate: sc.rate, Duration: sc.duration, Idle: sc.idle, Kinds: subKinds, Load: loadAverage(), Target: sc.target}
	for _, c := range h.writer.caps {
		rep.Caps = append(rep.Caps, c.id)
	}
	h.writer.inst, h.writer.key = h.b, h.adminKey

	// Idle, no subscribers.
	logf("subscriptions: idle %v, no subscribers", sc.idle)
	rep.Polling = append(rep.Polling, h.idle(ctx, sc.idle, "idle, no subscription")...)

	// The subscribers: on A (another instance than the writer's) one per capability written,
	// one for the catalogue, one for the catalogue filtered to jobs and metrics; on B (the
	// writer's) one per capability and one for the catalogue.
	defer func() {
		for _, s := range h.subs {
			s.conn.closeNow()
		}
	}()
	for _, inst := range []*subInstance{h.a, h.b} {
		for _, c := range h.writer.caps {
			s, err := subscribe(ctx, inst, h.viewerKey, inst.name+": "+c.id, c.id, nil, true)
			if err != nil {
				return nil, err
			}
			h.subs = append(h.subs, s)
		}
		s, err := subscribe(ctx, inst, h.viewerKey, inst.name+": catalogue", "", nil, true)
		if err != nil {
			return nil, err
		}
		h.subs = append(h.subs, s)
		if inst == h.a {
			s, err := subscribe(ctx, inst, h.viewerKey, inst.name+": catalogue, JOB and METRIC", "", []string{"JOB", "METRIC"}, true)
			if err != nil {
				return nil, err
			}
			h.subs = append(h.subs, s)
		}
	}
	logf("subscriptions: idle %v, %d subscribers", sc.idle, len(h.subs))
	rep.Polling = append(rep.Polling, h.idle(ctx, sc.idle, fmt.Sprintf("idle, %d subscriptions on A, %d on B", h.onInstance("A"), h.onInstance("B")))...)

	// Phase 1: writes at the steady rate.
	p1, poll, err := h.phase(ctx, "steady", nil)
	if err != nil {
		return nil, err
	}
	rep.Phases = append(rep.Phases, p1)
	rep.Polling = append(rep.Polling, poll...)

	// Phase 2: the same, with a connection to A that does not read.
	if sc.stall {
		if err := h.stallPhase(ctx, rep); err != nil {
			return nil, err
		}
	}
	for _, s := range h.subs {
		s.conn.closeNow()
	}
	h.subs = nil

	// The memory bound, on a server in a child process.
	if sc.idleSubs > 0 {
		if rep.Memory, err = h.memory(ctx, sc.idleSubs); err != nil {
			return nil, fmt.Errorf("idle subscriptions: %w", err)
		}
	}
	rep.ChangePoll = fmt.Sprintf(" (-change-poll %v, -change-hold %v)", graph.DefaultChangePoll, graph.DefaultChangeHold)
	rep.Queue = graph.DefaultQueue
	return rep, nil
}

// stallPhase is the second phase: the steady writes with a connection to A that holds as many
// subscriptions to the whole catalogue as it may and reads nothing, until A closes them.
func (h *subHarness) stallPhase(ctx context.Context, rep *subReport) error {
	conn, err := dialWS(ctx, h.a.url+"/graphql", h.viewerKey)
	if err != nil {
		return err
	}
	defer conn.closeNow()
	var stalled []*subscriber
	for i := range stallSubs() {
		s, err := subscribeOn(ctx, conn, h.a, fmt.Sprint("A: catalogue, not reading ", i), "", nil)
		if err != nil {
			return err
		}
		stalled = append(stalled, s)
	}
	p2, _, err := h.phase(ctx, "with a connection that does not read", stalled)
	if err != nil {
		return err
	}
	rep.Phases = append(rep.Phases, p2)
	rep.Stalled = h.unstall(ctx, stalled, p2)
	return nil
}

func (h *subHarness) onInstance(name string) int {
	n := 0
	for _, s := range h.subs {
		if s.instance == name {
			n++
		}
	}
	return n
}

// load bulk-loads the sample catalogue (no delay) and picks the capabilities to write to.
func (h *subHarness) load(ctx context.Context) error {
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: h.be.URL}})
	if err != nil {
		return err
	}
	store := dynamo.New(client, dynamo.Options{Logger: quietLogger(), CursorSecret: []byte("bench")})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		return err
	}
	h.bundles = samplecat.Catalogue(time.Now())
	if h.items, err = store.BulkLoad(ctx, h.bundles, 4); err != nil {
		return err
	}
	h.writer = &subWriter{nonce: fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff), writes: map[string]*subWrite{}}
	for _, b := range h.bundles {
		if len(h.writer.caps) == h.cfg.subs.caps {
			break
		}
		if len(b.Components) < 2 {
			continue
		}
		c := &capTarget{id: b.Capability.CapabilityID, rev: b.Capability.Revision}
		for _, comp := range b.Components {
			c.components = append(c.components, comp.ComponentID)
		}
		h.writer.caps = append(h.writer.caps, c)
	}
	if len(h.writer.caps) == 0 {
		return fmt.Errorf("the sample catalogue has no capability with two components")
	}
	return nil
}

// idle counts each instance's DynamoDB requests over d with nothing written.
func (h *subHarness) idle(ctx context.Context, d time.Duration, state string) []pollRow {
	h.a.srv.count.take()
	h.b.srv.count.take()
	poll0 := []float64{h.a.srv.metric(pollMetric), h.b.srv.metric(pollMetric)}
	start := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	span := time.Since(start)
	var rows []pollRow
	for i, inst := range []*subInstance{h.a, h.b} {
		ops := inst.srv.count.take()
		rows = append(rows, pollRow{Instance: inst.name, State: state, PerMinute: float64(sumOps(ops)) * float64(time.Minute) / float64(span), Ops: ops, Span: span,
			Poller: (inst.srv.metric(pollMetric) - poll0[i]) * float64(time.Minute) / float64(span)})
	}
	return rows
}

// phase writes at the configured rate through B for the configured time, waits until every
// subscriber has read every change of the phase's writes (or 10 s), and checks each
// subscriber against the feed.
func (h *subHarness) phase(ctx context.Context, name string, stalled []*subscriber) (*subPhase, []pollRow, error) {
	sc := h.cfg.subs
	w := h.writer
	w.mu.Lock()
	w.writes, w.refuse, w.dynReq = map[string]*subWrite{}, 0, 0
	w.mu.Unlock()
	for _, s := range h.subs {
		s.take()
	}
	h.a.srv.count.take()
	h.b.srv.count.take()
	n := int(sc.rate * sc.duration.Seconds())
	period := time.Duration(float64(time.Second) / sc.rate)
	h.logf("subscriptions: phase %q: %d writes at %.0f/s through B", name, n, sc.rate)
	// With a subscriber that does not read, the phase goes on at the same rate until A has
	// closed it (its catalogue_subscriptions_dropped_total moved), for at most two minutes more.
	dropped0 := h.a.srv.metric(droppedMetric)
	droppedAt, droppedWrites := time.Duration(-1), 0
	most := n + int(sc.rate*120)
	poll0A, poll0B := h.a.srv.metric(pollMetric), h.b.srv.metric(pollMetric)
	start := time.Now()
	var wg sync.WaitGroup
	var firstErr error
	var once sync.Once
	for i := 0; ; i++ {
		if stalled != nil && droppedAt < 0 && h.a.srv.metric(droppedMetric) > dropped0 {
			droppedAt, droppedWrites = time.Since(start), i
		}
		if i >= n && (stalled == nil || droppedAt >= 0 || i >= most) {
			break
		}
		if d := time.Until(start.Add(time.Duration(i) * period)); d > 0 {
			time.Sleep(d)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.write(ctx, name[:1], i); err != nil {
				once.Do(func() { firstErr = err })
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr != nil {
		return nil, nil, firstErr
	}
	opsA, opsB := h.a.srv.count.take(), h.b.srv.count.take()
	perMin := func(v float64) float64 { return v * float64(time.Minute) / float64(wall) }
	w.mu.Lock()
	writes := w.writes
	p := &subPhase{Name: name, Writes: len(writes), Refused: w.refuse, Wall: wall, MutationQ: w.dynReq, Stalled: stalled != nil, DroppedAt: droppedAt}
	w.mu.Unlock()
	polls := []pollRow{
		{Instance: "A", State: fmt.Sprintf("%.0f writes/s through B", sc.rate), PerMinute: perMin(float64(sumOps(opsA))), Ops: opsA, Span: wall,
			Poller: perMin(h.a.srv.metric(pollMetric) - poll0A)},
		{Instance: "B", State: fmt.Sprintf("%.0f writes/s through it", sc.rate), PerMinute: perMin(float64(sumOps(opsB) - p.MutationQ)), Ops: opsB, Span: wall,
			Poller: perMin(h.b.srv.metric(pollMetric) - poll0B),
			Note:   fmt.Sprintf("its %d requests less the mutations' own %d (extensions.dynamodb)", sumOps(opsB), p.MutationQ)},
	}
	if droppedAt >= 0 {
		p.DroppedWrites = droppedWrites
		for _, wr := range writes {
			if wr.Sent.Before(start.Add(droppedAt)) {
				p.droppedReqs = append(p.droppedReqs, wr.RequestID)
			}
		}
	}

	// The ground truth: the feed of each capability, the phase's writes only.
	var feed []feedChange
	for _, c := range w.caps {
		f, err := readFeed(ctx, h.b, h.adminKey, c.id)
		if err != nil {
			return nil, nil, err
		}
		for _, x := range f {
			if x.RequestID != nil && writes[*x.RequestID] != nil {
				feed = append(feed, x)
			}
		}
	}
	p.Changes, p.feed = len(feed), feed
	before := map[string]bool{}
	for _, id := range p.droppedReqs {
		before[id] = true
	}
	for _, x := range feed {
		if before[*x.RequestID] {
			p.DroppedChanges++
		}
	}
	expect := map[*subscriber][]delivered{}
	for _, s := range h.subs {
		for _, x := range feed {
			if s.wants(x.CapabilityID, x.Entity) {
				expect[s] = append(expect[s], delivered{Cap: x.CapabilityID, ID: x.ID})
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		done := true
		for _, s := range h.subs {
			if s.count() < len(expect[s]) {
				done = false
			}
		}
		if done {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Late duplicates would come within a few polls.
	time.Sleep(time.Second)
	for _, s := range h.subs {
		got := s.take()
		r := &subResult{Name: s.name, Instance: s.instance, Catalogue: s.cap == ""}
		var ds []delivered
		for _, g := range got {
			ds = append(ds, delivered{Cap: g.Cap, ID: g.ID})
		}
		r.Check = checkDelivery(expect[s], ds)
		seen := map[string]bool{}
		for _, g := range got {
			wr := writes[g.RequestID]
			if wr == nil || seen[g.ID] {
				continue
			}
			seen[g.ID] = true
			r.FromCommit = append(r.FromCommit, g.At.Sub(wr.Committed))
			r.FromSent = append(r.FromSent, g.At.Sub(wr.Sent))
		}
		if s.bad > 0 {
			r.Check.Unexpected += s.bad
		}
		if e := s.sub.ended(); e != nil {
			return nil, nil, fmt.Errorf("subscriber %s ended during phase %q: %s %s", s.name, name, e.Kind, e.Payload)
		}
		p.Subs = append(p.Subs, r)
		h.logf("subscriptions:   %-34s %s  p50 %7.1f ms  p99 %7.1f ms", s.name, r.Check, ms(percentile(r.FromCommit, 0.5)), ms(percentile(r.FromCommit, 0.99)))
	}
	return p, polls, nil
}

// stallSubs is how many subscriptions to the whole catalogue the connection that stops reading
// holds: each change is that many messages on its socket, so that the socket's buffers fill
// within the phase and then each subscription's queue.
func stallSubs() int { return graph.DefaultSubscriptionLimits.PerConnection }

// unstall reads the stalled connection again and reports how its subscriptions ended.
func (h *subHarness) unstall(ctx context.Context, subs []*subscriber, ph *subPhase) *stallReport {
	r := &stallReport{Subs: len(subs), Ends: map[string]int{}}
	subs[0].conn.start(ctx)
	start := time.Now()
	ended := func() bool {
		for _, s := range subs {
			if s.sub.ended() == nil {
				return false
			}
		}
		return true
	}
	for time.Since(start) < 10*time.Second && !ended() {
		time.Sleep(20 * time.Millisecond)
	}
	r.Wait = time.Since(start)
	for _, s := range subs {
		got := s.take()
		r.Nexts += len(got)
		if !isPrefix(ph.feed, got) {
			r.NotPrefix++
		}
		e := s.sub.ended()
		if e == nil {
			continue
		}
		r.Ends[endText(e)]++
		if e.Kind == "error" && strings.Contains(e.Payload, `"code":"`+tooSlowCode+`"`) {
			r.TooSlow++
			if len(got) > 0 && !strings.Contains(e.Payload, `"lastId":"`+got[len(got)-1].ID+`"`) {
				r.WrongLast++
			}
		}
	}
	h.logf("subscriptions: the connection that did not read: %d changes read, then %v", r.Nexts, r.Ends)
	return r
}

// delivered is a change as a subscriber got it (or should have).
type delivered struct{ Cap, ID string }

// deliveryCheck compares what a subscriber read with what it should have read.
type deliveryCheck struct {
	Expected, Received int
	Missing            int // expected, never read
	Duplicates         int // read more than once (the extra reads)
	OutOfOrder         int // read after a change that comes later in its capability's feed
	Unexpected         int // read, but not expected
}

func (c deliveryCheck) ok() bool {
	return c.Missing == 0 && c.Duplicates == 0 && c.OutOfOrder == 0 && c.Unexpected == 0
}

func (c deliveryCheck) String() string {
	s := fmt.Sprintf("%d/%d", c.Received, c.Expected)
	if c.ok() {
		return s + " exactly once, in order"
	}
	return fmt.Sprintf("%s: %d MISSING, %d DUPLICATE, %d OUT OF ORDER, %d UNEXPECTED", s, c.Missing, c.Duplicates, c.OutOfOrder, c.Unexpected)
}

// checkDelivery holds got (in the order read) to want (each capability's changes in feed
// order): every change exactly once, and within each capability in the feed's order.
func checkDelivery(want, got []delivered) deliveryCheck {
	c := deliveryCheck{Expected: len(want), Received: len(got)}
	pos := map[delivered]int{}
	for i, w := range want {
		pos[w] = i
	}
	seen := map[delivered]bool{}
	last := map[string]int{} // per capability: the feed position of the last change read
	for _, g := range got {
		i, ok := pos[g]
		switch {
		case !ok:
			c.Unexpected++
			continue
		case seen[g]:
			c.Duplicates++
			continue
		}
		seen[g] = true
		if l, ok := last[g.Cap]; ok && i < l {
			c.OutOfOrder++
			continue
		}
		last[g.Cap] = i
	}
	c.Missing = len(want) - len(seen)
	return c
}

// latencySummary is p50, p99 and max of a set of latencies.
type latencySummary struct {
	N             int
	P50, P99, Max time.Duration
}

func summarize(lats []time.Duration) latencySummary {
	s := latencySummary{N: len(lats), P50: percentile(lats, 0.5), P99: percentile(lats, 0.99)}
	for _, l := range lats {
		s.Max = max(s.Max, l)
	}
	return s
}

// Subscription kinds for pooled.
const (
	anyKind       = iota
	capKind       // with capabilityId
	catalogueKind // the whole catalogue
)

// pooled returns the latencies of the phase's subscribers of that kind on the instance.
func (p *subPhase) pooled(instance string, kind int, fromSent bool) []time.Duration {
	var out []time.Duration
	for _, s := range p.Subs {
		if s.Instance != instance || kind == capKind && s.Catalogue || kind == catalogueKind && !s.Catalogue {
			continue
		}
		if fromSent {
			out = append(out, s.FromSent...)
		} else {
			out = append(out, s.FromCommit...)
		}
	}
	return out
}

func (p *subPhase) allDelivered() (bool, int, int) {
	ok, n, reads := true, 0, 0
	for _, s := range p.Subs {
		ok = ok && s.Check.ok()
		n += s.Check.Expected
		reads += s.Check.Received
	}
	return ok, n, reads
}

// ---- the memory bound: a server in a child process ----

// subChild is a server instance in a child process (this binary with -serve-subscriptions).
type subChild struct {
	url     string
	keyList []string // viewer keys, each for at most connectionsPerKey connections
	cmd     *exec.Cmd
	in      io.Closer
	http    *http.Client
}

// startSubChild starts a server instance in a child process on the endpoint.
func startSubChild(endpoint string, subs int) (*subChild, error) {
	cmd, stdin, line, err := startSelf("subscription server", "-serve-subscriptions", "127.0.0.1:0", "-endpoint", endpoint, "-sub-idle-subs", fmt.Sprint(subs))
	if err != nil {
		return nil, err
	}
	var url, keys string
	if _, err := fmt.Sscanf(line, "LISTEN %s KEYS %s", &url, &keys); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("subscription server child said %q: %w", line, err)
	}
	return &subChild{url: url, keyList: strings.Split(keys, ","), cmd: cmd, in: stdin, http: &http.Client{}}, nil
}

func (c *subChild) mem() (memStats, error) {
	var m memStats
	resp, err := c.http.Get(c.url + "/_bench/mem")
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

func (c *subChild) close() {
	_ = c.in.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// connectionsPerKey is how many WebSocket connections one API key may hold open on a server.
func connectionsPerKey() int { return graph.DefaultSubscriptionLimits.ConnectionsPerKey }

// keysFor returns how many API keys n subscriptions need, one connection each, plus one for
// the warm-up.
func keysFor(n int) int { return (n+connectionsPerKey()-1)/connectionsPerKey() + 1 }

// serveSubscriptions is the child's main: a server instance as server.go builds it on the
// endpoint's table, with keys for subs subscriptions (one connection each), its own memory at
// /_bench/mem (after a forced GC), until stdin closes.
func serveSubscriptions(addr, endpoint string, subs int) error {
	ctx := context.Background()
	keys := &graph.KeyRing{}
	var list []string
	for i := range keysFor(subs) {
		key := graph.NewAPIKey()
		keys.Add(key, graph.RoleViewer, fmt.Sprint("bench-subscriber-", i))
		list = append(list, key)
	}
	s, err := newSubServer(ctx, endpoint, keys)
	if err != nil {
		return err
	}
	defer s.stop()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_bench/mem", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(ownMem())
	})
	mux.Handle("/", s.handler)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("LISTEN http://%s KEYS %s\n", ln.Addr(), strings.Join(list, ","))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return srv.Close()
}

// ownMem returns this process's memory after two forced GCs, and its goroutines.
func ownMem() memStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memStats{HeapInuse: ms.HeapInuse, HeapAlloc: ms.HeapAlloc, Sys: ms.Sys, Goroutines: runtime.NumGoroutine(), RSS: selfRSS()}
}

// memServer is the server that holds the idle subscriptions: a child process, or (with
// -backend-process=false, in tests) this process, whose figures then include the clients'.
type memServer interface {
	instance() *subInstance
	keys() []string
	mem() (memStats, error)
	close()
}

func (c *subChild) instance() *subInstance { return &subInstance{name: "child", url: c.url} }
func (c *subChild) keys() []string         { return c.keyList }

// localMem is a memServer in this process.
type localMem struct {
	inst    *subInstance
	keyList []string
}

func startLocalMem(ctx context.Context, endpoint string, subs int) (*localMem, error) {
	keys := &graph.KeyRing{}
	var list []string
	for i := range keysFor(subs) {
		key := graph.NewAPIKey()
		keys.Add(key, graph.RoleViewer, fmt.Sprint("bench-subscriber-", i))
		list = append(list, key)
	}
	inst, err := startSubInstance(ctx, "local", endpoint, keys)
	if err != nil {
		return nil, err
	}
	return &localMem{inst: inst, keyList: list}, nil
}

func (l *localMem) instance() *subInstance { return l.inst }
func (l *localMem) keys() []string         { return l.keyList }
func (l *localMem) mem() (memStats, error) { return ownMem(), nil }
func (l *localMem) close()                 { l.inst.close() }

// selfRSS returns this process's resident set size in bytes (0 where /proc is missing).
func selfRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

// memory opens n idle subscriptions on a child server (one connection each, as many browser
// tabs would), one per capability of the sample in turn, reads the child's memory before and
// after, leaves them idle, then writes one change to each capability through B and checks that
// every subscription read exactly its capability's.
func (h *subHarness) memory(ctx context.Context, n int) (*memReport, error) {
	var child memServer
	var err error
	r := &memReport{Subs: n, Idle: h.cfg.subs.idle, Child: h.cfg.backendProcess}
	if r.Child {
		child, err = startSubChild(h.be.URL, n)
	} else {
		child, err = startLocalMem(ctx, h.be.URL, n)
	}
	if err != nil {
		return nil, err
	}
	defer child.close()
	inst := child.instance()
	keys := child.keys()
	// A first subscription warms the server's one-time state (schema caches, the hub, the
	// poller), so that the figures are of subscriptions.
	warm, err := subscribe(ctx, inst, keys[len(keys)-1], "warm-up", "", nil, true)
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	if r.Before, err = child.mem(); err != nil {
		return nil, err
	}
	h.logf("subscriptions: %d idle subscriptions on a child server", n)
	var caps []string
	for _, b := range h.bundles {
		caps = append(caps, b.Capability.CapabilityID)
	}
	subs := make([]*subscriber, n)
	defer func() {
		warm.conn.closeNow()
		for _, s := range subs {
			if s != nil {
				s.conn.closeNow()
			}
		}
	}()
	for i := range subs {
		if subs[i], err = subscribe(ctx, inst, keys[i/connectionsPerKey()], fmt.Sprint("idle ", i), caps[i%len(caps)], nil, true); err != nil {
			return nil, err
		}
	}
	time.Sleep(2 * time.Second)
	for _, s := range subs {
		if e := s.sub.ended(); e != nil {
			return nil, fmt.Errorf("subscription %s ended: %s %s", s.name, e.Kind, e.Payload)
		}
	}
	if r.After, err = child.mem(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(r.Idle):
	}
	w := h.writer
	w.caps = w.caps[:0]
	for _, b := range h.bundles {
		c := &capTarget{id: b.Capability.CapabilityID, rev: b.Capability.Revision}
		w.caps = append(w.caps, c)
	}
	// Revisions moved on in the phases: updateCapability learns them from CONFLICT.
	for i := range w.caps {
		if err := w.write(ctx, "m", i); err != nil {
			return nil, err
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		done := true
		for _, s := range subs {
			if s.count() < 1 {
				done = false
				break
			}
		}
		if done {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	for _, s := range subs {
		got := s.take()
		switch {
		case len(got) == 0:
			r.Missing++
		default:
			r.Received++
			if len(got) > 1 || got[0].Cap != s.cap {
				r.ExtraOrDup++
			}
		}
	}
	return r, nil
}

// ---- the report ----

func kb(b float64) string { return fmt.Sprintf("%.1f KB", b/1024) }

func (r *report) writeSubscriptions(p func(string, ...any)) {
	if r.subs != nil {
		r.subs.write(p)
	}
}

func (s *subReport) write(p func(string, ...any)) {
	p("## Subscriptions")
	p("")
	if s.Command != "" {
		p("Measured alone by `%s` on %s; the rest of this file comes from the whole run above.", s.Command, s.At.UTC().Format("2006-01-02 15:04 MST"))
		p("")
	}
	p("Two server instances, A and B, each built as `server.go` builds it (`graph.NewHandler`, its own DynamoDB client and store, its own change hub and poller at the default settings%s), served over loopback HTTP, share one table: memdyn in a child process, holding the sample catalogue (%d items), every DynamoDB request held %v as in the sections above.", s.ChangePoll, s.Items, s.Delay)
	p("The benchmark writes through B at %.0f mutations a second for %v per phase, to %d capabilities (%s) in turn, cycling through %s, each with its own `X-Request-ID`.", s.Rate, s.Duration, len(s.Caps), strings.Join(s.Caps, ", "), strings.Join(s.Kinds, ", "))
	p("Its subscribers (graphql-transport-ws over `github.com/coder/websocket`, one connection each, a viewer key in `connection_init`) hold, on A and on B, one subscription per capability written and one to the whole catalogue; A has a third filtered to JOB and METRIC.")
	p("Latency is from the mutation's response read by the writer (the commit) to the subscriber reading the change, matched by its `requestId`; \"from sent\" starts when the mutation was sent. After each phase every subscriber is held to the feed (`changes(capabilityId:)` of each capability, the phase's requests): every change exactly once, in the feed's order within each capability.")
	p("Load average when the section started: %s.", s.Load)
	p("")
	p("| target | measured | met |")
	p("|---|---|---|")
	if len(s.Phases) > 0 {
		ph := s.Phases[0]
		cross := summarize(ph.pooled("A", anyKind, false))
		perCap, all := summarize(ph.pooled("A", capKind, false)), summarize(ph.pooled("A", catalogueKind, false))
		met := "yes"
		if cross.N == 0 || cross.P99 >= s.Target {
			met = "**NO**"
		}
		p("| p99 from commit to a subscriber on another instance < %v at the default settings | p99 %.0f ms, p50 %.0f ms, max %.0f ms (%d deliveries in the steady phase); with capabilityId p99 %.0f ms, the whole catalogue p99 %.0f ms | %s |",
			s.Target, ms(cross.P99), ms(cross.P50), ms(cross.Max), cross.N, ms(perCap.P99), ms(all.P99), met)
	}
	allOK, total, reads := true, 0, 0
	for _, ph := range s.Phases {
		ok, n, rd := ph.allDelivered()
		allOK, total, reads = allOK && ok, total+n, reads+rd
	}
	if allOK {
		p("| every change reaches every subscriber exactly once, in order per capability | %d deliveries expected, %d read, none missing, duplicated or out of order | yes |", total, reads)
	} else {
		p("| every change reaches every subscriber exactly once, in order per capability | **CHANGES LOST, DUPLICATED OR OUT OF ORDER**: %d expected, %d read (see the table) | **NO** |", total, reads)
	}
	if st := s.Stalled; st != nil {
		p("| a subscriber that stops reading is closed with the server's error | %d of %d subscriptions of the connection that stopped reading ended with %s, each after the first changes of the feed in order, its lastId the last it read (see Back-pressure) | %s |",
			st.TooSlow, st.Subs, tooSlowCode, yesNo(st.TooSlow == st.Subs && st.NotPrefix == 0 && st.WrongLast == 0))
	}
	if len(s.Phases) > 1 {
		a, b := summarize(s.Phases[0].pooled("A", anyKind, false)), summarize(s.Phases[1].pooled("A", anyKind, false))
		p("| the other subscribers' latency is unaffected by it | A's subscribers p50 / p99: %.0f / %.0f ms without it, %.0f / %.0f ms with it | reported |", ms(a.P50), ms(a.P99), ms(b.P50), ms(b.P99))
	}
	if m := s.Memory; m != nil {
		heap := float64(int64(m.After.HeapInuse) - int64(m.Before.HeapInuse))
		p("| %d idle subscriptions on one server: their memory, and each still receives a change | %.1f MB more heap in use, %d more goroutines (%s and %.1f goroutines per subscription, one connection each); %d of %d received their change after %v idle | %s |",
			m.Subs, heap/(1<<20), m.After.Goroutines-m.Before.Goroutines, kb(heap/float64(m.Subs)), float64(m.After.Goroutines-m.Before.Goroutines)/float64(m.Subs), m.Received, m.Subs, m.Idle, yesNo(m.Missing == 0 && m.ExtraOrDup == 0))
	}
	p("")
	p("### Delivery latency")
	p("")
	p("| phase | path | deliveries | from commit p50 | p99 | max | from sent p50 | p99 |")
	p("|---|---|---:|---:|---:|---:|---:|---:|")
	for _, ph := range s.Phases {
		for _, path := range []struct{ inst, name string }{{"A", "across instances (subscribers on A)"}, {"B", "same instance (subscribers on B)"}} {
			for _, kind := range []struct {
				k    int
				name string
			}{{anyKind, "all"}, {capKind, "with capabilityId"}, {catalogueKind, "the whole catalogue"}} {
				c, f := summarize(ph.pooled(path.inst, kind.k, false)), summarize(ph.pooled(path.inst, kind.k, true))
				p("| %s | %s, %s | %d | %.1f ms | %.1f ms | %.1f ms | %.1f ms | %.1f ms |", ph.Name, path.name, kind.name, c.N, ms(c.P50), ms(c.P99), ms(c.Max), ms(f.P50), ms(f.P99))
			}
		}
	}
	p("")
	for _, ph := range s.Phases {
		if l := ph.pooled("B", anyKind, false); len(l) > 0 && slices.Min(l) < 0 {
			p("A negative figure from commit is a change read before the writer read the mutation's response.")
			p("")
			break
		}
	}
	p("| phase | subscriber | delivery | p50 | p99 | max |")
	p("|---|---|---|---:|---:|---:|")
	for _, ph := range s.Phases {
		for _, sub := range ph.Subs {
			l := summarize(sub.FromCommit)
			p("| %s | %s | %s | %.1f ms | %.1f ms | %.1f ms |", ph.Name, sub.Name, sub.Check, ms(l.P50), ms(l.P99), ms(l.Max))
		}
	}
	p("")
	for _, ph := range s.Phases {
		p("Phase \"%s\": %d mutations committed in %v (%d refused with CONFLICT and retried, recording nothing), %d changes in the feed.", ph.Name, ph.Writes, ph.Wall.Round(time.Millisecond), ph.Refused, ph.Changes)
	}
	p("")
	p("### Polling cost")
	p("")
	p("DynamoDB requests each instance sent, per minute: counted by an observer on its own client (every HTTP attempt), and by the server itself (`catalogue_change_poll_requests_total`, its poller's requests only). The README's \"What subscriptions cost\" gives the model to hold them to: nothing while an instance holds no subscription, else one index Query a poll and one partition Query per capability that changed since the last poll.")
	p("")
	p("| instance | state | requests per minute | of them the poller's | by operation | counted over |")
	p("|---|---|---:|---:|---|---:|")
	for _, r := range s.Polling {
		poller := "–"
		if r.Poller >= 0 {
			poller = fmt.Sprintf("%.0f", r.Poller)
		}
		p("| %s | %s | %.0f | %s | %s | %v |", r.Instance, r.State, r.PerMinute, poller, opsText(r.Ops), r.Span.Round(100*time.Millisecond))
	}
	for _, r := range s.Polling {
		if r.Note != "" {
			p("")
			p("%s under writes: %s. Its own writes also ring its hub (`Hub.Ring`), which then polls at once rather than at its next tick.", r.Instance, r.Note)
		}
	}
	p("")
	if st := s.Stalled; st != nil {
		p("### Back-pressure")
		p("")
		p("In the second phase a connection to A held %d subscriptions to the whole catalogue (the most one connection may hold) and read nothing: each change is %d messages on that socket, so that the sockets' buffers (a few MB on loopback) fill within the phase, and then each subscription's queue (%d changes). The phase went on at the same rate until A closed one (its `%s` moved), for two minutes more at most.",
			st.Subs, st.Subs, s.Queue, droppedMetric)
		if ph := s.Phases[len(s.Phases)-1]; ph.DroppedAt >= 0 {
			p("A closed the first %v into the phase, after %d writes that recorded %d changes.", ph.DroppedAt.Round(100*time.Millisecond), ph.DroppedWrites, ph.DroppedChanges)
		} else {
			p("**A closed none within the phase.**")
		}
		p("After the phase the connection read again: %d changes in all (%d subscriptions read other than the first changes of the feed in order; %d ended with a lastId other than the last change they read), and its subscriptions ended so (within %v):", st.Nexts, st.NotPrefix, st.WrongLast, st.Wait.Round(time.Millisecond))
		p("")
		ends := make([]string, 0, len(st.Ends))
		for e := range st.Ends {
			ends = append(ends, e)
		}
		sort.Strings(ends)
		for _, e := range ends {
			p("- %d × `%s`", st.Ends[e], mdCode(e))
		}
		if n := st.Subs - sumOps(st.Ends); n > 0 {
			p("- %d × **not ended**", n)
		}
		p("")
	}
	if m := s.Memory; m != nil {
		p("### Idle subscriptions")
		p("")
		if m.Child {
			p("A third server instance runs in a child process (this binary with `-serve-subscriptions`, the same `graph.NewHandler` on the same table), so that the subscribers' side is not counted: it reports its own heap in use and goroutines after two forced GCs (`runtime.ReadMemStats`, `/_bench/mem`).")
		} else {
			p("A third server instance runs in this process (-backend-process=false): the figures include the subscribers' side.")
		}
		p("After one warm-up subscription, %d subscriptions, one connection each (a key holds at most %d connections: the subscriptions use %d keys), one per capability of the sample in turn:", m.Subs, connectionsPerKey(), keysFor(m.Subs)-1)
		p("")
		p("| | heap in use | heap allocated | goroutines | RSS |")
		p("|---|---:|---:|---:|---:|")
		p("| before | %s | %s | %d | %s |", kb(float64(m.Before.HeapInuse)), kb(float64(m.Before.HeapAlloc)), m.Before.Goroutines, kb(float64(m.Before.RSS)))
		p("| with %d idle subscriptions | %s | %s | %d | %s |", m.Subs, kb(float64(m.After.HeapInuse)), kb(float64(m.After.HeapAlloc)), m.After.Goroutines, kb(float64(m.After.RSS)))
		p("| per subscription | %s | %s | %.1f | %s |", kb(float64(int64(m.After.HeapInuse)-int64(m.Before.HeapInuse))/float64(m.Subs)), kb(float64(int64(m.After.HeapAlloc)-int64(m.Before.HeapAlloc))/float64(m.Subs)),
			float64(m.After.Goroutines-m.Before.Goroutines)/float64(m.Subs), kb(float64(m.After.RSS-m.Before.RSS)/float64(m.Subs)))
		p("")
		p("After %v idle, one write to each capability through B: %d of %d subscriptions read their change, %d read none, %d read another or more than one.", m.Idle, m.Received, m.Subs, m.Missing, m.ExtraOrDup)
		p("")
	}
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**NO**"
}

// mdCode makes s safe inside a Markdown code span.
func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

// opsText lists counts by operation, largest first.
func opsText(ops map[string]int) string {
	if len(ops) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if ops[keys[i]] != ops[keys[j]] {
			return ops[keys[i]] > ops[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, ops[k]))
	}
	return strings.Join(parts, ", ")
}

// spliceSection replaces the "## Subscriptions" section of doc with section (up to the next
// "## " heading), or inserts it before "## What each operation asks", or appends it.
func spliceSection(doc, section string) string {
	return spliceHeading(doc, "## Subscriptions\n", section)
}

// spliceHeading replaces the section of doc that starts with the line head with section (up to
// the next "## " heading), or inserts it before "## What each operation asks", or appends it.
func spliceHeading(doc, head, section string) string {
	if i := strings.Index(doc, head); i >= 0 {
		rest := doc[i+len(head):]
		if j := strings.Index(rest, "\n## "); j >= 0 {
			return doc[:i] + section + rest[j+1:]
		}
		return doc[:i] + section
	}
	if i := strings.Index(doc, "## What each operation asks"); i >= 0 {
		return doc[:i] + section + doc[i:]
	}
	if doc != "" && !strings.HasSuffix(doc, "\n\n") {
		doc = strings.TrimRight(doc, "\n") + "\n\n"
	}
	return doc + section
}

// subscriptionsOnly runs the section alone, prints it and, unless out is "-", replaces the
// section of the file out (BENCHMARKS.md) with it, leaving the rest as it is.
func subscriptionsOnly(cfg config, command, out string, stdout, stderr io.Writer) error {
	return sectionOnly(sectionRun[*subReport]{
		name: "subscriptions", heading: "## Subscriptions\n", out: out, stdout: stdout, stderr: stderr,
		measure: func(logf func(string, ...any)) (*subReport, error) {
			rep, err := measureSubscriptions(context.Background(), cfg, logf)
			if err == nil {
				rep.Command, rep.At = command, time.Now()
			}
			return rep, err
		},
		write:  func(r *subReport, p func(string, ...any)) { r.write(p) },
		failed: func(r *subReport) error { return r.lost() },
	})
}

// sectionRun is one section of the report run alone (-subscriptions-only, -search-only).
type sectionRun[R any] struct {
	name, heading, out string
	stdout, stderr     io.Writer
	measure            func(logf func(string, ...any)) (R, error)
	write              func(R, func(string, ...any))
	// failed is the run's verdict, given after the report is written.
	failed func(R) error
}

// sectionOnly measures one section alone, prints it and, unless out is "-", replaces its
// heading's section of the file out (BENCHMARKS.md) with it, leaving the rest as it is; then it
// returns the section's verdict.
func sectionOnly[R any](s sectionRun[R]) error {
	logf := func(format string, args ...any) { fmt.Fprintf(s.stderr, format+"\n", args...) }
	tune.GC(os.Getenv) // measure the servers as they run
	start := time.Now()
	rep, err := s.measure(logf)
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	var buf bytes.Buffer
	s.write(rep, func(format string, args ...any) { fmt.Fprintf(&buf, format+"\n", args...) })
	logf("bench: %s done in %v", s.name, time.Since(start).Round(time.Second))
	if _, err := s.stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if s.out == "-" || s.out == "" {
		return s.failed(rep)
	}
	doc, err := os.ReadFile(s.out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.WriteFile(s.out, []byte(spliceHeading(string(doc), s.heading, buf.String())), 0o644); err != nil {
		return err
	}
	return s.failed(rep)
}

// lost returns an error when a subscriber missed, repeated or reordered a change, or when an
// idle subscription did not receive its change: the run writes its report, then fails.
func (s *subReport) lost() error {
	if s == nil {
		return nil
	}
	var bad []string
	for _, ph := range s.Phases {
		for _, sub := range ph.Subs {
			if !sub.Check.ok() {
				bad = append(bad, fmt.Sprintf("phase %q, %s: %s", ph.Name, sub.Name, sub.Check))
			}
		}
	}
	if m := s.Memory; m != nil && (m.Missing > 0 || m.ExtraOrDup > 0) {
		bad = append(bad, fmt.Sprintf("idle subscriptions: %d of %d received nothing, %d another change or more than one", m.Missing, m.Subs, m.ExtraOrDup))
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("SUBSCRIPTIONS LOST, REPEATED OR REORDERED CHANGES:\n  %s", strings.Join(bad, "\n  "))
}
