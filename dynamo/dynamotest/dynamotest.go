// Package dynamotest starts a DynamoDB for tests: minidyn in-process behind a request-counting
// http.Handler, or, when DYNAMODB_TEST_ENDPOINT is set, that endpoint (dynalite, DynamoDB Local)
// with a fresh table per test.
package dynamotest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	miniserver "github.com/truora/minidyn/server"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
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

// Env is a DynamoDB for one test.
type Env struct {
	Store   *dynamo.Store
	Client  *dynamodb.Client
	Table   string
	URL     string
	Counter *Counter
	// Mini is the minidyn server (nil against an external endpoint).
	Mini *miniserver.Server
	// External reports whether the backend is DYNAMODB_TEST_ENDPOINT.
	External bool
}

// Options tune an Env.
type Options struct {
	Now         func() time.Time
	MaxAttempts int
}

// New starts a backend with the table created. It is closed when the test ends.
func New(tb testing.TB, opts Options) *Env {
	tb.Helper()
	ctx := context.Background()
	env := &Env{Table: dynamo.DefaultTable}
	var handler http.Handler
	if ep := os.Getenv("DYNAMODB_TEST_ENDPOINT"); ep != "" {
		env.External = true
		env.Table = "test-" + randomHex(6)
		handler = proxy(ep)
	} else {
		env.Mini = miniserver.NewServer()
		handler = env.Mini
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
	env.Store = dynamo.New(client, dynamo.Options{Table: env.Table, Now: opts.Now, CursorSecret: []byte("test-secret"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
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
		tb.Skip("DYNAMODB_TEST_ENDPOINT backend (dynalite) has no TransactWriteItems: transactional test runs on minidyn only")
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
