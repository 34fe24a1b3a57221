package graph_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capcat/catalogue/graph"
)

// countingBody is a request body that counts what the server reads of it.
type countingBody struct {
	r    io.Reader
	read int
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read += n
	return n, err
}

func (b *countingBody) Close() error { return nil }

// A wrong key, or no key when anonymous requests are refused, is 401 before a byte of the body
// is read; a right key is read as usual. The Bearer scheme is case-insensitive (RFC 9110).
func TestKeyCheckedBeforeBody(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("good-key")+" ui"), Anonymous: graph.RoleNone}
	})
	query := `{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name } }"}`
	tests := []struct {
		name, authorization string
		status              int
		bodyRead            bool
	}{
		{"wrong key", "Bearer not-a-key", http.StatusUnauthorized, false},
		{"no key with -anonymous=none", "", http.StatusUnauthorized, false},
		{"another scheme", "Basic Z29vZC1rZXk=", http.StatusUnauthorized, false},
		{"right key", "Bearer good-key", http.StatusOK, true},
		{"scheme in lower case", "bearer good-key", http.StatusOK, true},
		{"scheme in upper case", "BEARER good-key", http.StatusOK, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &countingBody{r: strings.NewReader(query)}
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			req.Body = body
			req.Header.Set("Content-Type", "application/json")
			if tt.authorization != "" {
				req.Header.Set("Authorization", tt.authorization)
			}
			w := httptest.NewRecorder()
			h.handler.ServeHTTP(w, req)
			if w.Code != tt.status {
				t.Fatalf("status = %d, want %d: %s", w.Code, tt.status, w.Body.String())
			}
			if read := body.read > 0; read != tt.bodyRead {
				t.Errorf("read %d bytes of the body; want read = %v", body.read, tt.bodyRead)
			}
			if tt.status == http.StatusOK && !strings.Contains(w.Body.String(), "Alert Management") {
				t.Errorf("body = %s", w.Body.String())
			}
		})
	}
}

// blockingBody is a body that delivers nothing until released: a client sending slowly.
// reading, when set, is called once, when the server first reads it.
type blockingBody struct {
	release chan struct{}
	reading func()
	once    sync.Once
}

func (b *blockingBody) Read(p []byte) (int, error) {
	if b.reading != nil {
		b.once.Do(b.reading)
	}
	<-b.release
	return 0, io.EOF
}

func (b *blockingBody) Close() error { return nil }

// Beyond MaxInFlight concurrent requests the server answers 503 with Retry-After at once, and
// serves again when a slot frees. Requests without a key hold at most three quarters of the
// slots: slow anonymous clients cannot lock out the callers with a key.
func TestConcurrencyBound(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) {
		o.MaxInFlight = 4
		o.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("ui-key")+" ui"), Anonymous: graph.RoleViewer}
	})
	query := `{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name } }"}`
	postAs := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(query))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, req)
		return w
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	var held sync.WaitGroup
	held.Add(3)
	for range 3 { // three anonymous clients that never finish their bodies
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			req.Body = &blockingBody{release: release, reading: held.Done}
			req.Header.Set("Content-Type", "application/json")
			h.handler.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
	held.Wait()
	w := postAs("")
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "OVERLOADED") {
		t.Errorf("a fourth anonymous request = %d %v %s, want 503 with Retry-After", w.Code, w.Header(), w.Body.String())
	}
	if w := postAs("ui-key"); w.Code != http.StatusOK {
		t.Errorf("a request with a key while anonymous ones hold their share = %d %s", w.Code, w.Body.String())
	}
	close(release)
	wg.Wait()
	if w := postAs(""); w.Code != http.StatusOK {
		t.Errorf("after the slots freed: %d %s", w.Code, w.Body.String())
	}
}

// A body that is JSON of the wrong shape, or not JSON, is refused with a message of its own:
// nothing of the body comes back.
func TestBodyNeverEchoed(t *testing.T) {
	h := newHarness(t)
	marker := strings.Repeat("ECHO", 1000)
	for _, body := range []string{
		`["` + marker + `"]`,
		`"` + marker + `"`,
		`{"query": "{ __typename }", "variables": ["` + marker + `"]}`,
		`{"query": ["` + marker + `"]}`,
		`{"query": "{ __typename }", "extensions": "` + marker + `"}`,
		`{"query": "{ __typename }"} ["` + marker + `"]`,
		`{"query": "` + marker,
	} {
		w := post(h.handler, body, "application/json")
		if w.Code != http.StatusBadRequest || strings.Contains(w.Body.String(), "ECHO") {
			t.Errorf("body %.40q: %d %.200s", body, w.Code, w.Body.String())
		}
	}
}

// A request that fails before execution (parse, validation, a limit) has no data entry, under
// either media type; under application/graphql-response+json a parse or validation failure is
// 400, under application/json 200. GET runs no mutation: 405 with Allow: POST.
func TestRequestErrorsHaveNoData(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name, query, accept string
		status              int
	}{
		{"parse error, graphql-response+json", "{", "application/graphql-response+json", 400},
		{"validation error, graphql-response+json", "{ nope }", "application/graphql-response+json", 400},
		{"parse error, json", "{", "application/json", 200},
		{"validation error, json", "{ nope }", "application/json", 200},
		{"limit, graphql-response+json", "{ " + strings.Repeat("__typename ", 51) + "}", "application/graphql-response+json", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(map[string]string{"query": tt.query})
			req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", tt.accept)
			w := httptest.NewRecorder()
			h.handler.ServeHTTP(w, req)
			var resp map[string]json.RawMessage
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if _, ok := resp["data"]; ok || resp["errors"] == nil || w.Code != tt.status {
				t.Errorf("%d %s, want %d with errors and no data", w.Code, w.Body.String(), tt.status)
			}
			if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.accept) {
				t.Errorf("Content-Type = %q, want %s", ct, tt.accept)
			}
		})
	}
	t.Run("executed operation has data", func(t *testing.T) {
		resp := h.do(t, `{ capability(id: "CAP-NOPE-0001") { name } }`, nil)
		if !strings.Contains(resp.Body, `"data":`) {
			t.Errorf("body = %s", resp.Body)
		}
	})
	t.Run("GET mutation is 405", func(t *testing.T) {
		q := url.QueryEscape(`mutation { deleteRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rule-alert-severity-mapping") }`)
		req := httptest.NewRequest(http.MethodGet, "/graphql?query="+q, nil)
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, req)
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != http.MethodPost {
			t.Errorf("GET mutation = %d %v", w.Code, w.Header())
		}
	})
}

// With LoopbackOnly every route answers only a loopback client that addresses the server by a
// loopback name: DNS rebinding (a foreign Host) and remote clients get 403 and nothing else.
func TestLoopbackOnly(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "page with the key") })
	h := newHarnessWith(t, func(o *graph.Options) { o.LoopbackOnly = true; o.UI = ui })
	tests := []struct {
		name, host, remote string
		status             int
	}{
		{"localhost", "localhost:8080", "127.0.0.1:5000", 200},
		{"localhost without port", "localhost", "127.0.0.1:5000", 200},
		{"LOCALHOST", "LOCALHOST:8080", "127.0.0.1:5000", 200},
		{"127.0.0.1", "127.0.0.1:8080", "127.0.0.1:5000", 200},
		{"[::1]", "[::1]:8080", "[::1]:5000", 200},
		{"[::1] without port", "[::1]", "[::1]:5000", 200},
		{"rebinding host", "evil.example.com", "127.0.0.1:5000", 403},
		{"rebinding host with port", "evil.example.com:8080", "127.0.0.1:5000", 403},
		{"localhost as a subdomain", "localhost.evil.example.com:8080", "127.0.0.1:5000", 403},
		{"another address of the machine", "192.0.2.10:8080", "127.0.0.1:5000", 403},
		{"no host", "", "127.0.0.1:5000", 403},
		{"bad port", "localhost:http", "127.0.0.1:5000", 403},
		{"remote client", "localhost:8080", "192.0.2.7:5000", 403},
		{"remote client, mapped v4", "localhost:8080", "[::ffff:192.0.2.7]:5000", 403},
	}
	for _, tt := range tests {
		for _, path := range []string{"/", "/graphiql", "/graphql?query=%7B__typename%7D", "/healthz"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host, req.RemoteAddr = tt.host, tt.remote
			w := httptest.NewRecorder()
			h.handler.ServeHTTP(w, req)
			if w.Code != tt.status {
				t.Errorf("%s: GET %s = %d, want %d: %s", tt.name, path, w.Code, tt.status, w.Body.String())
			}
			if tt.status == 403 && (strings.Contains(w.Body.String(), "key\n") || strings.Count(strings.TrimSpace(w.Body.String()), "\n") != 0) {
				t.Errorf("%s: 403 body = %q, want one line without the page", tt.name, w.Body.String())
			}
		}
	}
}

// /metrics is for API keys only when authentication is on, and its labels are bounded: no free
// text (names), and client-chosen operation names capped in length and number.
func TestMetricsGuardedAndBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics := graph.NewInstruments(reg)
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Instruments = metrics
		o.MetricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
		o.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("scraper-key")+" prometheus", "admin "+graph.HashKey("admin-key")+" ops"), Anonymous: graph.RoleViewer}
	})
	reg.MustRegister(graph.NewCatalogueCollector(h.env.Store, 0))
	scrape := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, req)
		return w
	}
	if w := scrape(""); w.Code != http.StatusUnauthorized || strings.Contains(w.Body.String(), "CAP-") {
		t.Errorf("anonymous /metrics = %d %.200s", w.Code, w.Body.String())
	}
	if w := scrape("wrong"); w.Code != http.StatusUnauthorized {
		t.Errorf("/metrics with a wrong key = %d", w.Code)
	}
	// A capability whose name is long: it must not become a label.
	long := strings.Repeat("N", 200)
	if resp := h.doAs(t, "admin-key", `mutation($in: CreateCapabilityInput!) { createCapability(input: $in) { id } }`,
		map[string]any{"in": map[string]any{"capabilityId": "CAP-LABEL-001", "name": long, "businessDomain": "labels", "priority": "LOW"}}); len(resp.Errors) > 0 {
		t.Fatalf("createCapability: %s", resp.Body)
	}
	for i := range 250 {
		h.do(t, fmt.Sprintf("query Op%d { __typename }", i), nil)
	}
	h.do(t, "query "+strings.Repeat("L", 100)+" { __typename }", nil)
	w := scrape("scraper-key")
	if w.Code != http.StatusOK {
		t.Fatalf("/metrics with a key = %d", w.Code)
	}
	out := w.Body.String()
	if !strings.Contains(out, `capability_id="CAP-LABEL-001"`) || strings.Contains(out, long) || strings.Contains(out, `name="`) {
		t.Errorf("capability labels carry names or lack the ID")
	}
	names := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, `catalogue_graphql_operations_total{operation="`); ok {
			names[rest[:strings.Index(rest, `"`)]] = true
		}
	}
	if len(names) > 202 || !names["other"] || names[strings.Repeat("L", 100)] {
		t.Errorf("%d operation labels (other: %v), want at most 202 (200 names, anonymous, other)", len(names), names["other"])
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 400 {
			t.Errorf("metrics line of %d bytes: %.120s", len(line), line)
		}
	}
}

// A document with many errors answers with the first 20 and a count of the rest.
func TestRequestErrorsBounded(t *testing.T) {
	h := newHarness(t)
	resp := h.do(t, "{ "+repeat(60, func(i int) string { return fmt.Sprintf("unknown%d", i) })+" }", nil)
	if len(resp.Errors) != 21 || !strings.Contains(resp.Errors[20].Message, "40 more errors") {
		t.Errorf("%d errors, last %+v", len(resp.Errors), resp.Errors[len(resp.Errors)-1])
	}
}

// A query may make at most MaxDynamoDBRequests calls: the ones past it fail with
// REQUEST_BUDGET_EXCEEDED unsent. Mutations have no such budget.
func TestRequestBudget(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) { o.Limits.MaxDynamoDBRequests = 3 })
	resp := h.do(t, `{ capabilities(first: 7) { nodes { name components { name } jobs(first: 5) { nodes { jobId } } rules { ruleId } } } }`, nil)
	codes := map[string]bool{}
	for i := range resp.Errors {
		codes[resp.code(i)] = true
	}
	if !codes["REQUEST_BUDGET_EXCEEDED"] || len(codes) != 1 {
		t.Errorf("codes = %v, want REQUEST_BUDGET_EXCEEDED only: %.300s", codes, resp.Body)
	}
	if n := h.env.Counter.Total(); n > 3 {
		t.Errorf("%d DynamoDB requests sent, budget 3", n)
	}
	if resp := h.do(t, `mutation { addComponent(capabilityId: "CAP-ALERT-MGT-001", input: {componentId: "budget-1", name: "b", componentType: "cache", order: 60}) { componentId } }`, nil); len(resp.Errors) > 0 {
		t.Errorf("mutation under the budget: %s", resp.Body)
	}
}

// Callers without a key have a quarter of the request budget.
func TestAnonymousRequestBudget(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Limits.MaxDynamoDBRequests = 8
		o.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("ui-key")+" ui"), Anonymous: graph.RoleViewer}
	})
	q := `{ capabilities(first: 7) { nodes { name components { name } } } }` // 1 + 7 calls
	if resp := h.doAs(t, "", q, nil); resp.code(0) != "REQUEST_BUDGET_EXCEEDED" {
		t.Errorf("anonymous: %.300s", resp.Body)
	}
	if resp := h.doAs(t, "ui-key", q, nil); len(resp.Errors) > 0 {
		t.Errorf("with a key: %.300s", resp.Body)
	}
}
