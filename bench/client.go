package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptrace"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
)

// trace records the DynamoDB calls of one unit of work (one GraphQL operation, one baseline
// run): the items each read and when it started and ended, for the critical path.
type trace struct {
	mu    sync.Mutex
	calls []span
	items int
}

type span struct{ start, end time.Time }

type traceKey struct{}

func withTrace(ctx context.Context) (context.Context, *trace) {
	t := &trace{}
	return context.WithValue(ctx, traceKey{}, t), t
}

func traceFrom(ctx context.Context) *trace {
	t, _ := ctx.Value(traceKey{}).(*trace)
	return t
}

func (t *trace) record(s span, items int) {
	t.mu.Lock()
	t.calls = append(t.calls, s)
	t.items += items
	t.mu.Unlock()
}

// around splits a unit of work that ran from start to end into the time before its first
// DynamoDB call started, and after its last one ended (zero without calls).
func (t *trace) around(start, end time.Time) (before, after time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.calls) == 0 {
		return 0, 0
	}
	first, last := t.calls[0].start, t.calls[0].end
	for _, c := range t.calls[1:] {
		if c.start.Before(first) {
			first = c.start
		}
		if c.end.After(last) {
			last = c.end
		}
	}
	return first.Sub(start), end.Sub(last)
}

// depth is the length, in DynamoDB round trips, of the longest chain of calls each of which
// started after the previous one ended: the critical path of the unit of work, as a delaying
// proxy sees it. Calls that overlap count once.
func (t *trace) depth() int {
	t.mu.Lock()
	calls := append([]span(nil), t.calls...)
	t.mu.Unlock()
	sort.Slice(calls, func(i, j int) bool { return calls[i].start.Before(calls[j].start) })
	d := make([]int, len(calls))
	best := 0
	for i, c := range calls {
		d[i] = 1
		for j := range i {
			if !calls[j].end.After(c.start) && d[j]+1 > d[i] {
				d[i] = d[j] + 1
			}
		}
		best = max(best, d[i])
	}
	return best
}

// traceMiddleware records every DynamoDB call (retries included) into the trace of its context:
// its span, and the items it read (ScannedCount for a Query, items returned for the gets).
func traceMiddleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("BenchTrace", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		t := traceFrom(ctx)
		if t == nil {
			return next.HandleInitialize(ctx, in)
		}
		start := time.Now()
		out, md, err := next.HandleInitialize(ctx, in)
		items := 0
		switch o := out.Result.(type) {
		case *dynamodb.QueryOutput:
			items = int(o.ScannedCount)
		case *dynamodb.GetItemOutput:
			if len(o.Item) > 0 {
				items = 1
			}
		case *dynamodb.BatchGetItemOutput:
			for _, its := range o.Responses {
				items += len(its)
			}
			// The store's wire decoder takes the items out of the SDK's output.
			if n, ok := dynamo.ResponseItems(md); ok {
				items = n
			}
		}
		t.record(span{start, time.Now()}, items)
		return out, md, err
	}), middleware.After)
}

// newStore returns a store on the endpoint with the trace middleware; idleConns sizes the
// HTTP connection pool to DynamoDB (0: the store's default, dynamo.DefaultMaxIdleConns).
func newStore(ctx context.Context, endpoint string, idleConns int, obs dynamo.Observer) (*dynamo.Store, error) {
	st, _, err := newStoreClient(ctx, endpoint, idleConns, obs)
	return st, err
}

// newStoreClient is newStore, with the SDK client it uses (the search section's Scan baseline
// sends its Scans through it).
func newStoreClient(ctx context.Context, endpoint string, idleConns int, obs dynamo.Observer) (*dynamo.Store, *dynamodb.Client, error) {
	c, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: endpoint}, Observer: obs, MaxIdleConns: idleConns})
	if err != nil {
		return nil, nil, err
	}
	client := dynamodb.New(c.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, traceMiddleware)
		if os.Getenv("BENCH_DEBUG") != "" {
			o.APIOptions = append(o.APIOptions, debugMiddleware)
		}
	})
	return dynamo.New(client, dynamo.Options{Logger: quietLogger(), CursorSecret: []byte("bench")}), client, nil
}

// quietLogger drops everything below errors, cheaply (the handler is disabled, so no record is
// formatted).
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 4}))
}

// debugMiddleware logs every failed DynamoDB attempt (retries included) with a trace of its
// connection: BENCH_DEBUG=1 go run ./bench.
func debugMiddleware(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("BenchDebug", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
		var mu sync.Mutex
		var events []string
		start := time.Now()
		note := func(format string, args ...any) {
			mu.Lock()
			events = append(events, fmt.Sprintf("%6dµs ", time.Since(start).Microseconds())+fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) {
				note("got conn %v reused=%v idle=%v(%v)", i.Conn.LocalAddr(), i.Reused, i.WasIdle, i.IdleTime)
			},
			WroteRequest:         func(i httptrace.WroteRequestInfo) { note("wrote request err=%v", i.Err) },
			GotFirstResponseByte: func() { note("first response byte") },
			PutIdleConn:          func(err error) { note("put idle conn err=%v", err) },
		})
		out, md, err := next.HandleFinalize(ctx, in)
		if err != nil {
			mu.Lock()
			fmt.Fprintf(os.Stderr, "bench: attempt %s failed: %v\n  %s\n", middleware.GetOperationName(ctx), err, strings.Join(events, "\n  "))
			mu.Unlock()
		}
		return out, md, err
	}), middleware.After)
}
