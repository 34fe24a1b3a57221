package graph_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capcat/catalogue/graph"
)

const (
	corsUI      = "https://ui.example.com"
	corsForeign = "https://evil.example.net"
)

// corsHarness serves the catalogue with API keys and one listed origin.
func corsHarness(t *testing.T, loopbackOnly bool) *harness {
	t.Helper()
	return newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, "devops "+graph.HashKey("ui-key")+" ui"), Anonymous: graph.RoleNone}
		o.CORSOrigins = []string{corsUI, "http://localhost:5173"}
		o.LoopbackOnly = loopbackOnly
	})
}

func corsRequest(h http.Handler, method, target, origin string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.Host, req.RemoteAddr = "localhost:8080", "127.0.0.1:4000" // passes LoopbackOnly's checks
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func accessControl(h http.Header) []string {
	var out []string
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			out = append(out, k)
		}
	}
	return out
}

// A listed origin's preflight is answered with what the endpoint accepts, and its POST with an
// API key runs and carries Access-Control-Allow-Origin with that exact origin.
func TestCORSAllowedOrigin(t *testing.T) {
	h := corsHarness(t, false)
	pre := corsRequest(h.handler, http.MethodOptions, "/graphql", corsUI, map[string]string{
		"Access-Control-Request-Method":  "POST",
		"Access-Control-Request-Headers": "authorization,content-type",
	}, "")
	if pre.Code != http.StatusNoContent {
		t.Fatalf("preflight = %d, want 204: %s", pre.Code, pre.Body.String())
	}
	ph := pre.Header()
	if got := ph.Get("Access-Control-Allow-Origin"); got != corsUI {
		t.Errorf("preflight Allow-Origin = %q, want %q", got, corsUI)
	}
	for _, m := range []string{"GET", "POST"} {
		if !strings.Contains(ph.Get("Access-Control-Allow-Methods"), m) {
			t.Errorf("Allow-Methods %q lacks %s", ph.Get("Access-Control-Allow-Methods"), m)
		}
	}
	allowHeaders := strings.ToLower(ph.Get("Access-Control-Allow-Headers"))
	for _, hd := range []string{"authorization", "content-type", "accept", "x-request-id", "apollographql-client-name", "apollographql-client-version", "apollo-require-preflight"} {
		if !strings.Contains(allowHeaders, hd) {
			t.Errorf("Allow-Headers %q lacks %s", allowHeaders, hd)
		}
	}
	if ph.Get("Access-Control-Max-Age") == "" {
		t.Error("no Access-Control-Max-Age")
	}
	if ph.Get("Access-Control-Allow-Credentials") != "" {
		t.Error("Allow-Credentials is set: bearer tokens need no credentials mode")
	}
	if !strings.Contains(strings.Join(ph.Values("Vary"), ","), "Origin") {
		t.Errorf("preflight Vary = %q, want Origin", ph.Values("Vary"))
	}
	// The preflight runs nothing.
	if n := h.env.Counter.Total(); n != 0 {
		t.Errorf("the preflight cost %d DynamoDB requests", n)
	}

	body, _ := json.Marshal(map[string]any{"query": `{ capability(id: "CAP-ALERT-MGT-001") { name } }`})
	res := corsRequest(h.handler, http.MethodPost, "/graphql", corsUI, map[string]string{
		"Content-Type": "application/json", "Authorization": "Bearer ui-key",
	}, string(body))
	if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), `"name":"Alert Management"`) {
		t.Fatalf("POST from the listed origin = %d: %s", res.Code, res.Body.String())
	}
	rh := res.Header()
	if got := rh.Get("Access-Control-Allow-Origin"); got != corsUI {
		t.Errorf("response Allow-Origin = %q, want %q", got, corsUI)
	}
	if exp := rh.Get("Access-Control-Expose-Headers"); !strings.Contains(exp, graph.RequestIDHeader) {
		t.Errorf("Expose-Headers %q lacks %s (the explorer reads it)", exp, graph.RequestIDHeader)
	}
	if rh.Get("Access-Control-Allow-Credentials") != "" || rh.Get("Access-Control-Allow-Methods") != "" {
		t.Errorf("the actual response carries preflight or credential headers: %v", accessControl(rh))
	}
	if !strings.Contains(strings.Join(rh.Values("Vary"), ","), "Origin") {
		t.Errorf("response Vary = %q, want Origin", rh.Values("Vary"))
	}
	var decoded struct {
		Extensions struct {
			DynamoDB struct{ Requests int } `json:"dynamodb"`
		} `json:"extensions"`
	}
	if err := json.Unmarshal(res.Body.Bytes(), &decoded); err != nil || decoded.Extensions.DynamoDB.Requests != 1 {
		t.Errorf("the query cost %d DynamoDB requests, want 1 (CORS adds none): %v", decoded.Extensions.DynamoDB.Requests, err)
	}

	// The second listed origin, with its port, is matched exactly too.
	if got := corsRequest(h.handler, http.MethodOptions, "/graphql", "http://localhost:5173", map[string]string{"Access-Control-Request-Method": "GET"}, "").Header().Get("Access-Control-Allow-Origin"); got != "http://localhost:5173" {
		t.Errorf("second origin's Allow-Origin = %q", got)
	}
	// A plain OPTIONS (no preflight) still gets the endpoint's Allow.
	if w := corsRequest(h.handler, http.MethodOptions, "/graphql", "", map[string]string{"Authorization": "Bearer ui-key"}, ""); w.Code != http.StatusOK || w.Header().Get("Allow") == "" {
		t.Errorf("OPTIONS without Origin = %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

// An origin that is not listed exactly gets no Access-Control header, and its preflight is
// refused with 403; the UI and the other routes never carry CORS headers.
func TestCORSForeignOrigin(t *testing.T) {
	h := corsHarness(t, false)
	for _, origin := range []string{corsForeign, "https://ui.example.com:8443", "http://ui.example.com", "https://UI.example.com.evil.net", "https://sub.ui.example.com", "null", "https://ui.example.com/"} {
		pre := corsRequest(h.handler, http.MethodOptions, "/graphql", origin, map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}, "")
		if pre.Code != http.StatusForbidden {
			t.Errorf("%s: preflight = %d, want 403", origin, pre.Code)
		}
		if ac := accessControl(pre.Header()); len(ac) > 0 {
			t.Errorf("%s: preflight carries %v", origin, ac)
		}
		res := corsRequest(h.handler, http.MethodPost, "/graphql", origin, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer ui-key"}, `{"query":"{ __typename }"}`)
		if ac := accessControl(res.Header()); len(ac) > 0 {
			t.Errorf("%s: response carries %v", origin, ac)
		}
	}
	for _, path := range []string{"/healthz", "/graphiql", "/"} {
		w := corsRequest(h.handler, http.MethodGet, path, corsUI, nil, "")
		if ac := accessControl(w.Header()); len(ac) > 0 {
			t.Errorf("GET %s from a listed origin carries %v: only /graphql is shared", path, ac)
		}
	}
}

// With LoopbackOnly (a generated admin key in the pages) no origin is ever granted, whatever
// CORSOrigins says; the server refuses -cors-origins without a keys file at startup.
func TestCORSOffWithLoopbackOnly(t *testing.T) {
	h := corsHarness(t, true)
	pre := corsRequest(h.handler, http.MethodOptions, "/graphql", corsUI, map[string]string{"Access-Control-Request-Method": "POST"}, "")
	if ac := accessControl(pre.Header()); len(ac) > 0 {
		t.Errorf("loopback-only preflight carries %v", ac)
	}
	res := corsRequest(h.handler, http.MethodPost, "/graphql", corsUI, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer ui-key"}, `{"query":"{ __typename }"}`)
	if res.Code != http.StatusOK {
		t.Fatalf("loopback-only POST = %d: %s", res.Code, res.Body.String())
	}
	if ac := accessControl(res.Header()); len(ac) > 0 {
		t.Errorf("loopback-only response carries %v", ac)
	}
}

func TestParseCORSOrigins(t *testing.T) {
	got, err := graph.ParseCORSOrigins([]string{"https://UI.Example.com", "http://localhost:5173", "https://ui.example.com:443", "http://127.0.0.1:80", "http://[::1]:3000", "https://[2001:db8::1]"})
	want := []string{"https://ui.example.com", "http://localhost:5173", "http://127.0.0.1", "http://[::1]:3000", "https://[2001:db8::1]"}
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ParseCORSOrigins = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{
		"", "null", "NULL", "*", "https://*.example.com", "https://ui.example.com/", "https://ui.example.com/app",
		"https://ui.example.com?x", "https://ui.example.com#f", "ui.example.com", "//ui.example.com", "ftp://ui.example.com",
		"file:///tmp", "https://user@ui.example.com", "https://ui.example.com:0", "https://ui.example.com:70000",
		"https://ui.example.com:", "https://", "javascript:alert(1)", "https://ui example.com",
	} {
		if o, err := graph.ParseCORSOrigin(bad); err == nil {
			t.Errorf("ParseCORSOrigin(%q) = %q, want an error", bad, o)
		}
	}
	// A list that names an origin twice keeps one.
	if got, _ := graph.ParseCORSOrigins([]string{"https://a.example", "https://A.example:443"}); len(got) != 1 {
		t.Errorf("duplicates kept: %q", got)
	}
	// The handler refuses origins that were not parsed (a library caller's mistake) at once.
	h := corsHarness(t, false)
	defer func() {
		if p := fmt.Sprint(recover()); !strings.Contains(p, "CORS origin") {
			t.Errorf("NewHandler with an unparsed origin: panic %q, want one naming the CORS origin", p)
		}
	}()
	graph.NewHandler(h.env.Store, graph.Options{CORSOrigins: []string{"https://ui.example.com/"}})
}
