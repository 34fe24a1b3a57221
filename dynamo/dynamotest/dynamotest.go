// Package dynamotest starts a DynamoDB for tests behind a request-counting http.Handler: memdyn
// in-process, the engine the server embeds by default, so that the tests run what users run;
// minidyn in-process when DYNAMODB_TEST_BACKEND=minidyn; or, when DYNAMODB_TEST_ENDPOINT is set,
// that endpoint (dynalite, DynamoDB Local) with a fresh table per test.
package dynamotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	miniserver "github.com/truora/minidyn/server"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/memdyn"
)

// Counter is an http.Handler that counts the DynamoDB requests passing through it by operation
// (from the X-Amz-Target header): a count taken outside the code under test.
type Counter struct {
	next http.Handler
	mu   sync.Mutex
	ops  map[string]int
	// Before, when set, runs before each request is passed on; when it reports true it has
	// answered the request itself (fault injection).
	Before func(op string, w http.ResponseWriter) bool
	// Inspect is like Before but also sees the request body.
	Inspect func(op string, body []byte, w http.ResponseWriter) bool
}

// NewCounter wraps next.
func NewCounter(next http.Handler) *Counter { return &Counter{next: next, ops: map[string]int{}} }

func (c *Counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	c.mu.Lock()
	c.ops[op]++
	before, inspect := c.Before, c.Inspect
	c.mu.Unlock()
	if before != nil && before(op, w) {
		return
	}
	if inspect != nil {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if inspect(op, body, w) {
			return
		}
	}
	c.next.ServeHTTP(w, r)
}

// Total returns the number of requests since the last Reset.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.ops {
		n += v
	}
	return n
}

// Ops returns the counts by operation since the last Reset.
func (c *Counter) Ops() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.ops))
	for k, v := range c.ops {
		out[k] = v
	}
	return out
}

// Reset zeroes the counts.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.ops = map[string]int{}
	c.mu.Unlock()
}

// RoundTrips makes every request wait delay at the counter and records when each came, until
// the returned function is called: it returns the requests and the round trips, the longest
// chain of requests each sent after the previous one's answer (a request that came less than
// delay after another overlapped it: they went out together). A machine too loaded to start
// parallel requests within delay of each other counts more round trips, never fewer: use a
// delay well above scheduling noise (tens of milliseconds).
func (e *Env) RoundTrips(delay time.Duration) (stop func() (requests, roundTrips int)) {
	var mu sync.Mutex
	var starts []time.Time
	e.Counter.mu.Lock()
	e.Counter.Before = func(string, http.ResponseWriter) bool {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(delay)
		return false
	}
	e.Counter.mu.Unlock()
	return func() (int, int) {
		e.Counter.mu.Lock()
		e.Counter.Before = nil
		e.Counter.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
		depth := make([]int, len(starts))
		best := 0
		for i, s := range starts {
			depth[i] = 1
			for j := range i {
				if !starts[j].Add(delay).After(s) && depth[j]+1 > depth[i] {
					depth[i] = depth[j] + 1
				}
			}
			best = max(best, depth[i])
		}
		return len(starts), best
	}
}

// Env is a DynamoDB for one test.
type Env struct {
	Store   *dynamo.Store
	Client  *dynamodb.Client
	Table   string
	URL     string
	Counter *Counter
	// Mem is the memdyn server (nil on another backend).
	Mem *memdyn.Server
	// Mini is the minidyn server (nil on another backend).
	Mini *miniserver.Server
	// External reports whether the backend is DYNAMODB_TEST_ENDPOINT.
	External bool

	faultMu sync.Mutex
	faults  memdyn.Faults
}

// Options tune an Env.
type Options struct {
	Now         func() time.Time
	MaxAttempts int
	// StatsTTL is the store's dynamo.Options.StatsTTL; zero means none in the background (a
	// test counts every request it sends): the planner's statistics then come only from the
	// counters operations read.
	StatsTTL time.Duration
	// HealthChannels is the store's dynamo.Options.HealthChannels.
	HealthChannels []string
	// OnCommit is the store's dynamo.Options.OnCommit.
	OnCommit func(dynamo.Commit)
}

// New starts a backend with the table created. It is closed when the test ends.
func New(tb testing.TB, opts Options) *Env {
	tb.Helper()
	ctx := context.Background()
	env := &Env{Table: dynamo.DefaultTable}
	var handler http.Handler
	switch backend := os.Getenv("DYNAMODB_TEST_BACKEND"); {
	case os.Getenv("DYNAMODB_TEST_ENDPOINT") != "":
		env.External = true
		env.Table = "test-" + randomHex(6)
		handler = proxy(os.Getenv("DYNAMODB_TEST_ENDPOINT"))
	case backend == "minidyn":
		env.Mini = miniserver.NewServer()
		handler = env.Mini
	case backend == "" || backend == "memdyn":
		env.Mem = memdyn.New()
		if opts.Now != nil {
			env.Mem.SetClock(opts.Now) // items expire by the tests' clock, as the store reads
		}
		handler = env.Mem
	default:
		tb.Fatalf("DYNAMODB_TEST_BACKEND=%q: want memdyn (the default) or minidyn", backend)
	}
	env.Counter = NewCounter(handler)
	srv := httptest.NewServer(env.Counter)
	tb.Cleanup(srv.Close)
	env.URL = srv.URL
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: srv.URL, MaxAttempts: opts.MaxAttempts, MaxBackoff: 20 * time.Millisecond}})
	if err != nil {
		tb.Fatalf("NewClient: %v", err)
	}
	env.Client = client
	statsTTL := opts.StatsTTL
	if statsTTL == 0 {
		statsTTL = -1
	}
	env.Store = dynamo.New(client, dynamo.Options{Table: env.Table, Now: opts.Now, CursorSecret: []byte("test-secret"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		StatsTTL: statsTTL, HealthChannels: opts.HealthChannels, OnCommit: opts.OnCommit})
	if err := env.Store.CreateTable(ctx, time.Minute); err != nil {
		tb.Fatalf("CreateTable: %v", err)
	}
	env.Counter.Reset()
	return env
}

// RequireTransactions skips a test against a backend without TransactWriteItems (dynalite),
// saying why.
func (e *Env) RequireTransactions(tb testing.TB) {
	tb.Helper()
	if e.External {
		tb.Skip("DYNAMODB_TEST_ENDPOINT backend (dynalite) has no TransactWriteItems: transactional test runs on the in-process backends only")
	}
}

// RequireFaults skips a test against an external backend, where faults cannot be injected.
func (e *Env) RequireFaults(tb testing.TB) {
	tb.Helper()
	if e.External {
		tb.Skip("DYNAMODB_TEST_ENDPOINT backend: faults are injected in the in-process backends (memdyn's Faults, minidyn's Emulate*), which an external server does not have")
	}
}

// KeepExpired makes the backend keep items past their TTL, as DynamoDB does for up to a few
// days before it deletes them (memdyn deletes them at once; minidyn and dynalite never do):
// for tests of how the store treats expired items it still reads.
func (e *Env) KeepExpired() {
	if e.Mem != nil {
		e.Mem.SetClock(func() time.Time { return time.Time{} })
	}
}

// Item is an item as a fault predicate sees it (DynamoDB's wire format).
type Item = map[string]*memdyn.AttributeValue

// EmulateFailure makes every call fail with InternalServerError while on.
func (e *Env) EmulateFailure(on bool) {
	switch {
	case e.Mini != nil:
		e.Mini.EmulateFailure(map[bool]miniserver.FailureCondition{true: miniserver.FailureConditionInternalServerError, false: miniserver.FailureConditionNone}[on])
	case e.Mem != nil:
		e.setFail(func(op, table, index string) string { return "InternalServerError" }, on)
	}
}

// EmulateIndexFailure makes every call on the table's index fail with InternalServerError
// while on.
func (e *Env) EmulateIndexFailure(index string, on bool) {
	switch {
	case e.Mini != nil:
		e.Mini.EmulateFailureForTable(e.Table, map[bool]miniserver.FailureCondition{true: miniserver.FailureConditionInternalServerError, false: miniserver.FailureConditionNone}[on], index)
	case e.Mem != nil:
		e.setFail(func(op, table, ix string) string {
			if table == e.Table && ix == index {
				return "InternalServerError"
			}
			return ""
		}, on)
	}
}

func (e *Env) setFail(f func(op, table, index string) string, on bool) {
	e.faultMu.Lock()
	defer e.faultMu.Unlock()
	e.faults.Fail = nil
	if on {
		e.faults.Fail = f
	}
	faults := e.faults
	e.Mem.SetFaults(&faults)
}

// EmulateUnprocessedItems leaves the sub-requests of the table's BatchGetItem and
// BatchWriteItem calls that match reports (n: the position in the call, item: the key or the
// item) unprocessed, as DynamoDB may; nil stops it.
func (e *Env) EmulateUnprocessedItems(match func(n int, item Item) bool) {
	switch {
	case e.Mini != nil:
		if match == nil {
			e.Mini.ClearUnprocessedItems()
			return
		}
		e.Mini.EmulateUnprocessedItems(e.Table, func(n int, raw map[string]*miniserver.AttributeValue) bool {
			var it Item
			js, err := json.Marshal(raw)
			if err == nil {
				err = json.Unmarshal(js, &it)
			}
			if err != nil {
				panic(fmt.Sprintf("dynamotest: a minidyn item in the wire format: %v", err))
			}
			return match(n, it)
		})
	case e.Mem != nil:
		e.faultMu.Lock()
		defer e.faultMu.Unlock()
		e.faults.Unprocessed = nil
		if match != nil {
			e.faults.Unprocessed = func(table string, n int, item Item) bool { return table == e.Table && match(n, item) }
		}
		faults := e.faults
		e.Mem.SetFaults(&faults)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// proxy forwards requests to an external endpoint.
func proxy(endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, endpoint+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.Host = r.Host
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32*1024)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	})
}
