package graph_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/graph"
)

func keyFile(t *testing.T, lines ...string) *graph.KeyRing {
	t.Helper()
	k, err := graph.ParseKeyRing(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("ParseKeyRing: %v", err)
	}
	return k
}

func TestParseKeyRing(t *testing.T) {
	good := keyFile(t, "# keys", "", "admin "+graph.HashKey("a-key")+" ops lead", "viewer "+graph.HashKey("v-key")+" dashboards")
	if c, ok := good.Lookup("a-key"); !ok || c.Role != graph.RoleAdmin || c.Name != "ops lead" {
		t.Errorf("Lookup(a-key) = %+v, %v", c, ok)
	}
	if _, ok := good.Lookup("nope"); ok {
		t.Error("Lookup(nope) found a caller")
	}
	for _, bad := range []string{"root " + graph.HashKey("x") + " n", "admin deadbeef n", "admin " + graph.HashKey("x"), "admin zz" + graph.HashKey("x")[2:] + " n"} {
		if _, err := graph.ParseKeyRing(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseKeyRing(%q) accepted", bad)
		}
	}
}

func TestRoles(t *testing.T) {
	keys := []string{"admin " + graph.HashKey("admin-key") + " admin", "devops " + graph.HashKey("devops-key") + " pipeline", "viewer " + graph.HashKey("viewer-key") + " ui"}
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, keys...), Anonymous: graph.RoleViewer}
	})
	read := `{ capability(id: "CAP-ALERT-MGT-001") { name } }`
	addComponent := `mutation { addComponent(capabilityId: "CAP-ALERT-MGT-001", input: {componentId: "role-test-1", name: "x", componentType: "cache", order: 9}) { componentId } }`
	createRule := `mutation { createRule(capabilityId: "CAP-ALERT-MGT-001", input: {ruleId: "role-rule-1", name: "r", ruleType: ROUTING, priority: LOW, order: 50, conditions: [], actions: []}) { ruleId } }`
	tests := []struct {
		name, key, query string
		status           int
		code             string
	}{
		{"anonymous reads", "", read, 200, ""},
		{"anonymous cannot write", "", addComponent, 200, "FORBIDDEN"},
		{"wrong key is 401", "not-a-key", read, 401, "UNAUTHENTICATED"},
		{"viewer cannot write", "viewer-key", addComponent, 200, "FORBIDDEN"},
		{"devops adds components", "devops-key", addComponent, 200, ""},
		{"devops cannot create rules", "devops-key", createRule, 200, "FORBIDDEN"},
		{"admin creates rules", "admin-key", createRule, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.doAs(t, tt.key, tt.query, nil)
			if resp.Status != tt.status || resp.code(0) != tt.code {
				t.Fatalf("status %d code %q, want %d %q: %s", resp.Status, resp.code(0), tt.status, tt.code, resp.Body)
			}
			if tt.code == "FORBIDDEN" && (strings.Contains(resp.Errors[0].Message, "input:") || !strings.Contains(resp.Errors[0].Message, "role")) {
				t.Errorf("message = %q", resp.Errors[0].Message)
			}
			if tt.code != "" && h.writes() != 0 {
				t.Errorf("refused request made %d writes", h.writes())
			}
			if tt.status == 401 && h.env.Counter.Total() != 0 {
				t.Errorf("401 made %d DynamoDB requests", h.env.Counter.Total())
			}
		})
	}
	t.Run("anonymous none", func(t *testing.T) {
		h := newHarnessWith(t, func(o *graph.Options) { o.Auth = &graph.Auth{Keys: keyFile(t, keys...), Anonymous: graph.RoleNone} })
		if resp := h.doAs(t, "", read, nil); resp.Status != 401 {
			t.Errorf("anonymous with -anonymous=none = %d", resp.Status)
		}
		if resp := h.doAs(t, "viewer-key", read, nil); resp.Status != 200 || len(resp.Errors) > 0 {
			t.Errorf("viewer key = %d %s", resp.Status, resp.Body)
		}
	})
}

func TestQueryLimits(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) { o.Introspection = false })
	deep := "{ capability(id: \"CAP-ALERT-MGT-001\") { " + strings.Repeat("components { capability { ", 8) + "name" + strings.Repeat(" } }", 8) + " } }"
	var aliases strings.Builder
	aliases.WriteString("{ ")
	for i := range 31 {
		fmt.Fprintf(&aliases, "a%d: capability(id: \"CAP-ALERT-MGT-001\") { name } ", i)
	}
	aliases.WriteString("}")
	tests := []struct {
		name, query string
		code        string
	}{
		{"cost over the limit", `{ capabilities(first: 100) { nodes { jobs(first: 100) { nodes { capability { history(first: 100) { nodes { name } } } } } } } }`, "COST_LIMIT_EXCEEDED"},
		{"depth over 15", deep, "DEPTH_LIMIT_EXCEEDED"},
		{"31 aliases", aliases.String(), "ALIAS_LIMIT_EXCEEDED"},
		{"first over 100 nested", `{ capability(id: "CAP-ALERT-MGT-001") { jobs(first: 500) { nodes { jobId } } } }`, "BAD_USER_INPUT"},
		{"first zero", `{ capabilitiesByDomain(domain: "operations", first: 0) { nodes { id } } }`, "BAD_USER_INPUT"},
		{"introspection off", `{ __schema { types { name } } }`, "INTROSPECTION_DISABLED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, tt.query, nil)
			if resp.code(0) != tt.code {
				t.Fatalf("code = %q, want %q: %s", resp.code(0), tt.code, resp.Body)
			}
			if n := h.env.Counter.Total(); n != 0 {
				t.Errorf("refused query made %d DynamoDB requests", n)
			}
		})
	}
	t.Run("cost reported on every response", func(t *testing.T) {
		resp := h.ok(t, `{ capabilities(first: 10) { nodes { jobs(first: 20) { nodes { jobId } } } } }`, nil, nil)
		if resp.Extensions.Cost.Requested != 10+10*20 || resp.Extensions.Cost.Limit != 50000 {
			t.Errorf("extensions.cost = %+v, want requested 210 limit 50000", resp.Extensions.Cost)
		}
	})
	t.Run("no suggestions without introspection", func(t *testing.T) {
		resp := h.do(t, `{ capabilitie { nodes { id } } }`, nil)
		if len(resp.Errors) == 0 || strings.Contains(resp.Body, "Did you mean") {
			t.Errorf("response = %s", resp.Body)
		}
	})
	t.Run("body over 1 MiB is 413", func(t *testing.T) {
		big := `{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name } }","variables":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
		w := post(h.handler, big, "application/json")
		if w.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("status = %d", w.Code)
		}
	})
	t.Run("malformed body is not echoed", func(t *testing.T) {
		w := post(h.handler, `{"query": "<script>alert(1)</script>"`, "application/json")
		if w.Code != http.StatusBadRequest || strings.Contains(w.Body.String(), "script") {
			t.Errorf("status %d body %s", w.Code, w.Body.String())
		}
	})
	t.Run("form posts and multipart are not transports", func(t *testing.T) {
		for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"} {
			w := post(h.handler, `query={capability(id:"x"){name}}`, ct)
			if w.Code < 400 {
				t.Errorf("%s answered %d", ct, w.Code)
			}
		}
	})
	t.Run("GET never runs a mutation", func(t *testing.T) {
		q := url.QueryEscape(`mutation { deleteRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rule-alert-severity-mapping") }`)
		req := httptest.NewRequest(http.MethodGet, "/graphql?query="+q, nil)
		w := httptest.NewRecorder()
		h.env.Counter.Reset()
		h.handler.ServeHTTP(w, req)
		if w.Code < 400 && !strings.Contains(w.Body.String(), "errors") {
			t.Errorf("GET mutation = %d %s", w.Code, w.Body.String())
		}
		if h.writes() != 0 {
			t.Errorf("GET mutation wrote")
		}
	})
}

func post(h http.Handler, body, contentType string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// A slow database: what resolved by the deadline is returned, the rest carries TIMEOUT.
func TestRequestDeadline(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) { o.Deadline = 300 * time.Millisecond })
	h.env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op == "Query" {
			time.Sleep(time.Second)
		}
		return false
	}
	defer func() { h.env.Counter.Before = nil }()
	resp := h.do(t, `{ a: capability(id: "CAP-ALERT-MGT-001") { name } b: capability(id: "CAP-FRAUD-DET-001") { name components { name } } }`, nil)
	if !strings.Contains(string(resp.Data), "Alert Management") || !strings.Contains(string(resp.Data), `"b":null`) {
		t.Errorf("resolved field missing: %s", resp.Body)
	}
	if resp.code(0) != "TIMEOUT" {
		t.Errorf("code = %q, want TIMEOUT: %s", resp.code(0), resp.Body)
	}
}

// Throttled twice, then served: the SDK retryer hides it. Down for good: UNAVAILABLE, and the
// server keeps serving once the database is back.
func TestFaultTolerance(t *testing.T) {
	h := newHarness(t)
	var throttled atomic.Int32
	h.env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op == "BatchGetItem" && throttled.Add(1) <= 2 {
			throttle(w)
			return true
		}
		return false
	}
	resp := h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil, nil)
	if !strings.Contains(string(resp.Data), "Alert Management") || resp.Extensions.DynamoDB.Requests != 3 {
		t.Errorf("after two throttles = %s", resp.Body)
	}
	h.env.Counter.Before = func(op string, w http.ResponseWriter) bool { throttle(w); return true }
	resp = h.do(t, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil)
	if resp.code(0) != "UNAVAILABLE" || strings.Contains(resp.Body, "Throughput") {
		t.Errorf("persistent throttling = %s", resp.Body)
	}
	h.env.Counter.Before = nil
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil, nil)
}

func throttle(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"throttled"}`)
}

func TestReadiness(t *testing.T) {
	h := newHarness(t)
	ready := func() int {
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return w.Code
	}
	if c := ready(); c != 200 {
		t.Fatalf("/readyz = %d", c)
	}
	h.env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	}
	if c := ready(); c != 503 {
		t.Errorf("/readyz with the table unreachable = %d, want 503", c)
	}
	h.env.Counter.Before = nil
	if c := ready(); c != 200 {
		t.Errorf("/readyz after recovery = %d, want 200", c)
	}
}

// Shutdown lets an in-flight request finish.
func TestGracefulShutdownDrains(t *testing.T) {
	h := newHarness(t)
	h.env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		time.Sleep(400 * time.Millisecond)
		return false
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.handler}
	go func() { _ = srv.Serve(ln) }()
	var wg sync.WaitGroup
	var status int
	var body string
	wg.Go(func() {
		resp, err := http.Post("http://"+ln.Addr().String()+"/graphql", "application/json", strings.NewReader(`{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name } }"}`))
		if err != nil {
			t.Errorf("in-flight request failed: %v", err)
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		status, body = resp.StatusCode, string(b)
	})
	time.Sleep(100 * time.Millisecond)
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if status != 200 || !strings.Contains(body, "Alert Management") {
		t.Errorf("drained request = %d %s", status, body)
	}
}

func TestObservability(t *testing.T) {
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	metrics := graph.NewInstruments(reg)
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		o.Instruments = metrics
		o.MetricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	})
	reg.MustRegister(graph.NewCatalogueCollector(h.env.Store, time.Minute))
	resp := h.ok(t, `query AlertView { capability(id: "CAP-ALERT-MGT-001") { name components { name } } }`, nil, nil)
	id := resp.Header.Get(graph.RequestIDHeader)
	if id == "" {
		t.Fatal("no request ID header")
	}
	line := logs.String()
	for _, want := range []string{`"requestId":"` + id + `"`, `"operation":"AlertView"`, `"dynamodbRequests":2`, `"outcome":"ok"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log %s lacks %s", line, want)
		}
	}
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	out := w.Body.String()
	for _, want := range []string{
		`catalogue_graphql_operations_total{operation="AlertView",outcome="ok"} 1`,
		`catalogue_graphql_operation_duration_seconds_count{operation="AlertView"} 1`,
		`catalogue_loader_batch_size_count{loader="capability"}`,
		`catalogue_loader_batch_size_count{loader="partition"}`,
		`catalogue_capability_health_score{business_domain="operations",capability_id="CAP-ALERT-MGT-001"}`,
		`catalogue_capability_active_rules{`,
		`catalogue_capability_deployment_success_ratio{`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// With the index down, queries that need it fail with UNAVAILABLE while the ones that read
// the base table keep working; leftovers of a batch are retried, never dropped.
func TestPartialOutage(t *testing.T) {
	h := newHarness(t)
	h.env.EmulateIndexFailure("GSI1", true)
	resp := h.do(t, `{ capabilities { nodes { id } } }`, nil)
	if resp.code(0) != "UNAVAILABLE" {
		t.Errorf("list with GSI1 down = %s", resp.Body)
	}
	h.ok(t, `{ capability(id: "CAP-ALERT-MGT-001") { name components { name } } }`, nil, nil)
	h.env.EmulateIndexFailure("GSI1", false)
	h.ok(t, `{ capabilities { nodes { id } } }`, nil, nil)

	var calls atomic.Int32
	h.env.EmulateUnprocessedItems(func(n int, raw dynamotest.Item) bool {
		return n == 0 && calls.Add(1) <= 2
	})
	defer h.env.EmulateUnprocessedItems(nil)
	var out struct {
		A, B, C *struct{ Name string }
	}
	resp = h.ok(t, `{ a: capability(id: "CAP-ALERT-MGT-001") { name } b: capability(id: "CAP-FRAUD-DET-001") { name } c: capability(id: "CAP-PAY-PROC-001") { name } }`, nil, &out)
	if out.A == nil || out.B == nil || out.C == nil {
		t.Errorf("capabilities with unprocessed keys = %s", resp.Data)
	}
	if n := h.env.Counter.Ops()["BatchGetItem"]; n != 3 {
		t.Errorf("BatchGetItem calls = %d, want 3 (two leftovers retried)", n)
	}
}

// A backend without transactions (dynalite) refuses writes with a clear code, not an
// internal error, and without its AWS text.
func TestBackendWithoutTransactions(t *testing.T) {
	h := newHarness(t)
	h.env.Counter.Before = func(op string, w http.ResponseWriter) bool {
		if op != "TransactWriteItems" {
			return false
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"com.amazon.coral.service#UnknownOperationException","message":"UnknownError"}`)
		return true
	}
	resp := h.do(t, `mutation { deleteRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rule-alert-severity-mapping") }`, nil)
	if resp.code(0) != "UNSUPPORTED_BY_BACKEND" || strings.Contains(resp.Body, "UnknownOperation") {
		t.Errorf("write on a backend without transactions = %s", resp.Body)
	}
}
