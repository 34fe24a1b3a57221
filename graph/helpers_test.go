package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/sample"
)

// testNow is the clock of the tests: the sample catalogue's metrics end here.
var testNow = time.Now().UTC().Truncate(time.Minute)

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Status     int
	Data       json.RawMessage `json:"data"`
	Errors     []gqlError      `json:"errors"`
	Extensions struct {
		DynamoDB dynamo.StatsSnapshot `json:"dynamodb"`
		Cost     struct{ Requested, Limit int }
	} `json:"extensions"`
	Body   string
	Header http.Header
}

func (r *gqlResponse) code(i int) string {
	if i >= len(r.Errors) {
		return ""
	}
	c, _ := r.Errors[i].Extensions["code"].(string)
	return c
}

type harness struct {
	env     *dynamotest.Env
	handler http.Handler
	// wrote reports whether an operation of the test wrote to the table: the harness then
	// checks the whole catalogue when the test ends (checkCatalogue).
	wrote bool
}

// newHarness starts the test backend (memdyn; see dynamotest) behind a request counter, loads the sample catalogue and serves the
// real handler.
func newHarness(tb testing.TB) *harness {
	tb.Helper()
	return newHarnessWith(tb, nil)
}

// newHarnessWith is newHarness with handler options changed by configure.
func newHarnessWith(tb testing.TB, configure func(*graph.Options)) *harness {
	tb.Helper()
	env := dynamotest.New(tb, dynamotest.Options{Now: func() time.Time { return testNow }})
	if _, err := env.Store.BulkLoad(context.Background(), sample.Catalogue(testNow), 4); err != nil {
		tb.Fatalf("BulkLoad: %v", err)
	}
	env.Counter.Reset()
	opts := graph.Options{Logger: testLogger(), Introspection: true, Now: func() time.Time { return testNow }}
	if configure != nil {
		configure(&opts)
	}
	h := &harness{env: env, handler: graph.NewHandler(env.Store, opts)}
	tb.Cleanup(func() {
		if h.wrote && !tb.Failed() {
			checkCatalogue(tb, h)
		}
	})
	return h
}

// do posts one GraphQL operation and decodes the response; the counter is reset first.
func (h *harness) do(tb testing.TB, query string, vars map[string]any) *gqlResponse {
	tb.Helper()
	return h.doAs(tb, "", query, vars)
}

// postAs posts an operation to handler with an API key (none when empty) and decodes the answer.
func postAs(tb testing.TB, handler http.Handler, key, query string, vars map[string]any) *gqlResponse {
	tb.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	handler.ServeHTTP(w, req)
	resp := &gqlResponse{Status: w.Code, Body: w.Body.String(), Header: w.Header()}
	if err := json.Unmarshal(w.Body.Bytes(), resp); err != nil {
		tb.Fatalf("decode response %q: %v", w.Body.String(), err)
	}
	return resp
}

// doAs posts an operation with an API key (none when empty).
func (h *harness) doAs(tb testing.TB, key, query string, vars map[string]any) *gqlResponse {
	tb.Helper()
	h.env.Counter.Reset()
	resp := postAs(tb, h.handler, key, query, vars)
	for _, op := range []string{"TransactWriteItems", "BatchWriteItem", "PutItem", "DeleteItem", "UpdateItem"} {
		h.wrote = h.wrote || resp.Extensions.DynamoDB.Operations[op] > 0
	}
	return resp
}

// ok posts an operation, fails on any error, and decodes data into out.
func (h *harness) ok(tb testing.TB, query string, vars map[string]any, out any) *gqlResponse {
	tb.Helper()
	resp := h.do(tb, query, vars)
	if len(resp.Errors) > 0 {
		tb.Fatalf("query returned errors: %s", resp.Body)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Data, out); err != nil {
			tb.Fatalf("decode data %s: %v", resp.Data, err)
		}
	}
	return resp
}

// testLogger discards logs unless TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
