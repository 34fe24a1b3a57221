package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/capcat/catalogue/graph"
)

// -cors-origins is parsed and validated at startup: exact origins only, and only with a keys
// file (with the generated admin key, CORS stays off: the flag is refused).
func TestCORSOriginsFlag(t *testing.T) {
	env := map[string]string{"API_KEYS_FILE": "keys"}
	getenv := func(k string) string { return env[k] }
	c, err := parseConfig([]string{"-cors-origins", "https://UI.example.com, http://localhost:5173,https://ui.example.com:443"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.corsOrigins, " "); got != "https://ui.example.com http://localhost:5173" {
		t.Errorf("corsOrigins = %q", got)
	}
	env["CORS_ORIGINS"] = "https://a.example"
	if c, err := parseConfig(nil, getenv, io.Discard); err != nil || len(c.corsOrigins) != 1 {
		t.Errorf("CORS_ORIGINS: %q, %v", c.corsOrigins, err)
	}
	delete(env, "CORS_ORIGINS")
	if c, err := parseConfig(nil, getenv, io.Discard); err != nil || len(c.corsOrigins) != 0 {
		t.Errorf("default: %q, %v; want no origins", c.corsOrigins, err)
	}
	for _, bad := range []string{"*", "https://*.example.com", "null", "https://ui.example.com/app", "https://ui.example.com/", "ui.example.com", "https://ui.example.com,ftp://x.example"} {
		if _, err := parseConfig([]string{"-cors-origins", bad}, getenv, io.Discard); err == nil || !strings.Contains(err.Error(), "-cors-origins") {
			t.Errorf("-cors-origins %q: %v, want an error naming the flag", bad, err)
		}
	}
	noKeys := func(string) string { return "" }
	if _, err := parseConfig([]string{"-cors-origins", "https://ui.example.com"}, noKeys, io.Discard); err == nil || !strings.Contains(err.Error(), "-api-keys-file") {
		t.Errorf("-cors-origins with the generated key: %v, want a refusal naming -api-keys-file", err)
	}
	// An identity provider is the other way to serve without a generated key: tokens, not a
	// key in the pages, so other origins may call it.
	if _, err := parseConfig([]string{"-cors-origins", "https://ui.example.com", "-oidc-issuer", "https://login.example.com", "-oidc-audience", "catalogue"}, noKeys, io.Discard); err != nil {
		t.Errorf("-cors-origins with -oidc-issuer and no keys file: %v, want it accepted", err)
	}
	if err := run(context.Background(), []string{"-port", "0", "-cors-origins", "https://ui.example.com"}, noKeys, io.Discard, io.Discard); err == nil {
		t.Error("run started with -cors-origins and a generated admin key")
	}
}

// The running server answers a listed origin's preflight and marks its responses; a foreign
// origin gets no CORS header and its preflight is refused.
func TestRunCORS(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("viewer "+graph.HashKey("ui-key")+" ui\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const ui = "http://localhost:5173"
	base, _, _, out := startServer(t, []string{"-cors-origins", ui}, map[string]string{"API_KEYS_FILE": keys})
	if banner := bannerOf(out); !strings.Contains(banner, "CORS on /graphql): "+ui) {
		t.Errorf("the banner does not name the CORS origins: %q", banner)
	}
	send := func(method, origin string, hdr map[string]string, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, base+"/graphql", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
	post := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer ui-key"}
	query := `{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name } }"}`

	if r := send(http.MethodOptions, ui, preflight, ""); r.StatusCode != http.StatusNoContent || r.Header.Get("Access-Control-Allow-Origin") != ui || !strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("listed preflight = %d, Allow-Origin %q, Allow-Headers %q", r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"), r.Header.Get("Access-Control-Allow-Headers"))
	}
	if r := send(http.MethodPost, ui, post, query); r.StatusCode != http.StatusOK || r.Header.Get("Access-Control-Allow-Origin") != ui {
		t.Errorf("listed POST = %d, Allow-Origin %q", r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"))
	}
	for _, foreign := range []string{"http://localhost:5174", "https://evil.example.net"} {
		if r := send(http.MethodOptions, foreign, preflight, ""); r.StatusCode != http.StatusForbidden || r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s preflight = %d, Allow-Origin %q; want 403 and none", foreign, r.StatusCode, r.Header.Get("Access-Control-Allow-Origin"))
		}
		if r := send(http.MethodPost, foreign, post, query); r.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s POST carries Allow-Origin %q", foreign, r.Header.Get("Access-Control-Allow-Origin"))
		}
	}
}
