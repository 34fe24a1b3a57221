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
		req.Header.Set("Accept", "application/graphql-response+json")
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
	if ct := w.Header().Get("Content-Type"); ct != "application/graphql-response+json" {
		t.Errorf("503 Content-Type = %q, want the media type accepted", ct)
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

// Every request the transport refuses before GraphQL runs gets a status of its own, a JSON body
// labelled with the media type the client accepts (application/json unless it asks for
// application/graphql-response+json), an error code, no data entry, nothing of the request's
// bytes, and no DynamoDB request. A mutation by GET is 405 with Allow: POST, valid or not.
func TestTransportRefusals(t *testing.T) {
	const marker = "ECHOED"
	h := newHarnessWith(t, func(o *graph.Options) { o.Limits.MaxBody = 4 << 10 })
	keyed := newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("good-key")+" ui"), Anonymous: graph.RoleNone}
	})
	get := func(query string, extra ...string) string {
		v := url.Values{"query": {query}}
		for i := 0; i+1 < len(extra); i += 2 {
			v.Set(extra[i], extra[i+1])
		}
		return "/graphql?" + v.Encode()
	}
	okBody := `{"query":"{ __typename } # ` + marker + `"}`
	big := `{"query":"{ __typename }","variables":{"pad":"` + strings.Repeat(marker, 1<<10) + `"}}`
	tests := []struct {
		name, method, target, contentType, body string
		unknownLength                           bool // a body sent without Content-Length
		handler                                 http.Handler
		status                                  int
		code, allow                             string
	}{
		{name: "PUT", method: http.MethodPut, contentType: "application/json", body: okBody, status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET, POST, OPTIONS"},
		{name: "DELETE", method: http.MethodDelete, status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET, POST, OPTIONS"},
		{name: "PATCH", method: http.MethodPatch, contentType: "application/json", body: okBody, status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET, POST, OPTIONS"},
		{name: "HEAD", method: http.MethodHead, target: get("{ __typename }"), status: 405, code: "METHOD_NOT_ALLOWED", allow: "GET, POST, OPTIONS"},
		{name: "GET mutation", target: get(`mutation ` + marker + ` { deleteRule(capabilityId: "CAP-ALERT-MGT-001", ruleId: "rule-alert-severity-mapping") }`), status: 405, code: "METHOD_NOT_ALLOWED", allow: "POST"},
		{name: "GET mutation that fails validation", target: get(`mutation { ` + marker + ` }`), status: 405, code: "METHOD_NOT_ALLOWED", allow: "POST"},
		{name: "GET mutation with bad variables", target: get(`mutation($id: ID!) { deleteRule(capabilityId: $id, ruleId: "x") }`, "variables", `{"id": 1}`), status: 405, code: "METHOD_NOT_ALLOWED", allow: "POST"},
		{name: "GET mutation chosen by operationName", target: get(`query Q { __typename } mutation M { __typename }`, "operationName", "M"), status: 405, code: "METHOD_NOT_ALLOWED", allow: "POST"},
		{name: "GET with a query string that does not parse", target: "/graphql?query=%zz" + marker, status: 400, code: "BAD_REQUEST"},
		{name: "GET with variables not an object", target: get("{ __typename }", "variables", `["`+marker+`"]`), status: 400, code: "BAD_REQUEST"},
		{name: "GET with extensions not JSON", target: get("{ __typename }", "extensions", marker), status: 400, code: "BAD_REQUEST"},
		{name: "application/graphql", contentType: "application/graphql", body: "{ __typename } # " + marker, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "form-encoded", contentType: "application/x-www-form-urlencoded", body: "query=" + marker, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "multipart", contentType: "multipart/form-data; boundary=" + marker, body: "--" + marker + "--", status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "text/plain", contentType: "text/plain", body: okBody, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "no Content-Type", body: okBody, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "malformed Content-Type", contentType: "application/json; " + marker, body: okBody, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "charset other than UTF-8", contentType: "application/json; charset=" + marker, body: okBody, status: 415, code: "UNSUPPORTED_MEDIA_TYPE"},
		{name: "batch", contentType: "application/json", body: `[{"query":"{ __typename } # ` + marker + `"},{"query":"{ __typename }"}]`, status: 400, code: "BATCHING_NOT_SUPPORTED"},
		{name: "batch after whitespace", contentType: "application/json", body: " \r\n\t[" + okBody + "]", status: 400, code: "BATCHING_NOT_SUPPORTED"},
		{name: "array of strings", contentType: "application/json", body: `["` + marker + `"]`, status: 400, code: "BATCHING_NOT_SUPPORTED"},
		{name: "empty body", contentType: "application/json", status: 400, code: "BAD_REQUEST"},
		{name: "not JSON", contentType: "application/json", body: `{"query": "` + marker, status: 400, code: "BAD_REQUEST"},
		{name: "JSON of another shape", contentType: "application/json", body: `{"query": ["` + marker + `"]}`, status: 400, code: "BAD_REQUEST"},
		{name: "a string", contentType: "application/json", body: `"` + marker + `"`, status: 400, code: "BAD_REQUEST"},
		{name: "trailing data", contentType: "application/json", body: okBody + ` ["` + marker + `"]`, status: 400, code: "BAD_REQUEST"},
		{name: "body over the limit, declared", contentType: "application/json", body: big, status: 413, code: "REQUEST_TOO_LARGE"},
		{name: "body over the limit, undeclared", contentType: "application/json", body: big, unknownLength: true, status: 413, code: "REQUEST_TOO_LARGE"},
		{name: "batch over the limit", contentType: "application/json", body: "[" + big + "]", unknownLength: true, status: 400, code: "BATCHING_NOT_SUPPORTED"},
		{name: "wrong key", contentType: "application/json", body: okBody, handler: keyed.handler, status: 401, code: "UNAUTHENTICATED"},
	}
	h.env.Counter.Reset()
	for _, tt := range tests {
		for _, accept := range []string{"application/graphql-response+json", "application/json", "", "*/*", "text/html"} {
			t.Run(tt.name+"/"+accept, func(t *testing.T) {
				method, target, handler := tt.method, tt.target, tt.handler
				if method == "" {
					method = http.MethodPost
					if target != "" {
						method = http.MethodGet
					}
				}
				if target == "" {
					target = "/graphql"
				}
				if handler == nil {
					handler = h.handler
				}
				req := httptest.NewRequest(method, target, strings.NewReader(tt.body))
				if tt.unknownLength {
					req.ContentLength = -1
				}
				if tt.contentType != "" {
					req.Header.Set("Content-Type", tt.contentType)
				}
				if tt.handler != nil {
					req.Header.Set("Authorization", "Bearer "+marker)
				}
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				w := httptest.NewRecorder()
				handler.ServeHTTP(w, req)
				want := "application/json"
				if accept == "application/graphql-response+json" {
					want = accept
				}
				if w.Code != tt.status || w.Header().Get("Content-Type") != want || w.Header().Get("Allow") != tt.allow {
					t.Errorf("%s %.60s = %d, Content-Type %q, Allow %q; want %d, %s, Allow %q",
						method, target, w.Code, w.Header().Get("Content-Type"), w.Header().Get("Allow"), tt.status, want, tt.allow)
				}
				var resp struct {
					Data   *json.RawMessage `json:"data"`
					Errors []struct {
						Message    string
						Extensions struct{ Code string }
					}
				}
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Fatalf("body is not JSON (%v): %.200q", err, w.Body.String())
				}
				if len(resp.Errors) != 1 || resp.Errors[0].Extensions.Code != tt.code || resp.Errors[0].Message == "" || resp.Data != nil {
					t.Errorf("body = %.300s, want one error with code %s and no data", w.Body.String(), tt.code)
				}
				if strings.Contains(w.Body.String(), marker) || strings.Contains(strings.Join(w.Header().Values("Allow"), " "), marker) {
					t.Errorf("the answer quotes the request: %.300s", w.Body.String())
				}
			})
		}
	}
	if n := h.env.Counter.Total(); n != 0 {
		t.Errorf("refusals made %d DynamoDB requests, want 0", n)
	}
	t.Run("OPTIONS", func(t *testing.T) {
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, httptest.NewRequest(http.MethodOptions, "/graphql", nil))
		if w.Code != http.StatusOK || w.Header().Get("Allow") != "GET, POST, OPTIONS" || w.Body.Len() != 0 {
			t.Errorf("OPTIONS = %d, Allow %q, body %q", w.Code, w.Header().Get("Allow"), w.Body.String())
		}
	})
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
