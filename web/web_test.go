package web

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// noGraphiQL returns options whose node_modules holds nothing, so /graphiql falls back.
func noGraphiQL(t *testing.T) Options {
	return Options{NodeModules: t.TempDir()}
}

func TestIndexServesTheExplorer(t *testing.T) {
	h := Handler(noGraphiQL(t))
	rec := get(t, h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store (the page may carry a key)", cc)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	// The live updates' socket is the page's own host, which 'self' covers (the browser tests
	// connect under this policy): no other source, and never a bare ws: or wss: (any host).
	if connect := cspDirective(csp, "connect-src"); connect != "'self'" {
		t.Errorf("connect-src = %q, want 'self' alone", connect)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<script type="module" src="/assets/js/app.js"></script>`,
		`<link rel="stylesheet" href="/assets/app.css">`,
		`<meta name="catalogue-endpoint" content="/graphql">`,
		`id="op-status"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %s", want)
		}
	}
	if rec := get(t, h, http.MethodHead, "/", nil); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("HEAD / = %d with %d bytes", rec.Code, rec.Body.Len())
	}
}

func TestAPIKeyMetaOnlyWhenSet(t *testing.T) {
	without := get(t, Handler(noGraphiQL(t)), http.MethodGet, "/", nil).Body.String()
	if strings.Contains(without, "catalogue-api-key") {
		t.Error("the page names an API key although none is set")
	}

	opts := noGraphiQL(t)
	opts.APIKey = "k-3f9a"
	with := get(t, Handler(opts), http.MethodGet, "/", nil).Body.String()
	if !strings.Contains(with, `<meta name="catalogue-api-key" content="k-3f9a">`) {
		t.Error("the page lacks the API key meta tag")
	}

	opts.APIKey = `"><script>alert(1)</script>`
	hostile := get(t, Handler(opts), http.MethodGet, "/", nil).Body.String()
	if strings.Contains(hostile, "<script>alert(1)") {
		t.Error("the API key is not escaped in the page")
	}

	// The CDN playground carries the key as a fetcher header only when it is set.
	opts.APIKey = "k-3f9a"
	if cdn := get(t, Handler(opts), http.MethodGet, "/graphiql", nil).Body.String(); !strings.Contains(cdn, "Bearer k-3f9a") {
		t.Error("the CDN GraphiQL does not send the key")
	}
	if cdn := get(t, Handler(noGraphiQL(t)), http.MethodGet, "/graphiql", nil).Body.String(); strings.Contains(cdn, "Bearer") {
		t.Error("the CDN GraphiQL sends an Authorization header although no key is set")
	}
}

func TestCustomEndpoint(t *testing.T) {
	opts := noGraphiQL(t)
	opts.Endpoint = "https://api.example.com/graphql"
	rec := get(t, Handler(opts), http.MethodGet, "/", nil)
	if !strings.Contains(rec.Body.String(), `content="https://api.example.com/graphql"`) {
		t.Error("the page does not carry the endpoint")
	}
	if csp := rec.Header().Get("Content-Security-Policy"); cspDirective(csp, "connect-src") != "'self' https://api.example.com wss://api.example.com" {
		t.Errorf("CSP %q does not allow the endpoint's origin and its socket, or allows more", csp)
	}
	opts.Endpoint = "http://catalogue.internal:8080/graphql"
	if csp := get(t, Handler(opts), http.MethodGet, "/", nil).Header().Get("Content-Security-Policy"); cspDirective(csp, "connect-src") != "'self' http://catalogue.internal:8080 ws://catalogue.internal:8080" {
		t.Errorf("CSP %q: an http endpoint's socket is ws: of its host", csp)
	}
}

// cspDirective returns the sources of one directive of a Content-Security-Policy.
func cspDirective(csp, name string) string {
	for _, d := range strings.Split(csp, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var wantType = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
}

func TestAssetsServedFromTheEmbeddedFS(t *testing.T) {
	h := Handler(noGraphiQL(t))
	n := 0
	err := fs.WalkDir(files, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		want, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		rec := get(t, h, http.MethodGet, "/"+p, nil)
		if rec.Code != http.StatusOK {
			t.Errorf("GET /%s = %d", p, rec.Code)
			return nil
		}
		ct, ok := wantType[path.Ext(p)]
		if !ok {
			t.Errorf("%s: no expected content type for %q; add one", p, path.Ext(p))
		} else if got := rec.Header().Get("Content-Type"); got != ct {
			t.Errorf("GET /%s Content-Type = %q, want %q", p, got, ct)
		}
		if rec.Body.String() != string(want) {
			t.Errorf("GET /%s is not the embedded file", p)
		}
		if rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET /%s lacks nosniff", p)
		}
		etag := rec.Header().Get("ETag")
		if etag == "" {
			t.Errorf("GET /%s has no ETag", p)
		} else if rec := get(t, h, http.MethodGet, "/"+p, map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
			t.Errorf("GET /%s with its ETag = %d, want 304", p, rec.Code)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("only %d embedded assets: the embed pattern lost files", n)
	}
	if rec := get(t, h, http.MethodGet, "/assets/js/nope.js", nil); rec.Code != http.StatusNotFound {
		t.Errorf("missing asset = %d, want 404", rec.Code)
	}
	if rec := get(t, h, http.MethodGet, "/favicon.ico", nil); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" {
		t.Errorf("favicon = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// Every ES module import and every file the page names resolves to an embedded file: a typo
// would otherwise show only in a browser.
func TestModuleGraphResolves(t *testing.T) {
	importRe := regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]`)
	err := fs.WalkDir(files, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".js" {
			return err
		}
		src, _ := files.ReadFile(p)
		for _, m := range importRe.FindAllStringSubmatch(string(src), -1) {
			spec := m[1]
			if !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
				t.Errorf("%s imports %q: only relative imports of embedded files are allowed", p, spec)
				continue
			}
			target := path.Join(path.Dir(p), spec)
			if _, err := fs.Stat(files, target); err != nil {
				t.Errorf("%s imports %q, which is not embedded (%s)", p, spec, target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refRe := regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`)
	for _, tmpl := range []string{"templates/index.html", "templates/graphiql.html"} {
		src, _ := files.ReadFile(tmpl)
		for _, m := range refRe.FindAllStringSubmatch(string(src), -1) {
			if _, err := fs.Stat(files, strings.TrimPrefix(m[1], "/")); err != nil {
				t.Errorf("%s references %s, which is not embedded", tmpl, m[1])
			}
		}
	}
}

// The explorer works offline: no embedded file refers to another host.
func TestNoExternalReferences(t *testing.T) {
	urlRe := regexp.MustCompile(`(?i)\bhttps?://[^\s"'<>()\x60]+`)
	// Namespace names are identifiers that are never fetched.
	allowed := map[string]bool{"http://www.w3.org/2000/svg": true}
	protoRelative := regexp.MustCompile(`(?i)(?:src|href|action)\s*=\s*["']//|url\(\s*["']?//|@import|from\s+["']//|import\(\s*["']//`)
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		for _, u := range urlRe.FindAllString(string(src), -1) {
			if !allowed[u] {
				t.Errorf("%s refers to %s: the explorer must not load anything from another host", p, u)
			}
		}
		if m := protoRelative.FindString(string(src)); m != "" {
			t.Errorf("%s has a protocol-relative or imported reference: %q", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// fakeNodeModules writes the files GraphiQL's local mode serves.
func fakeNodeModules(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range vendorFiles {
		p := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("/* "+f.name+" */"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for pkg, v := range map[string]string{"graphiql": "4.1.2", "react": "18.2.0"} {
		if err := os.WriteFile(filepath.Join(dir, pkg, "package.json"), []byte(`{"version":"`+v+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGraphiQLLocal(t *testing.T) {
	dir := fakeNodeModules(t)
	h := Handler(Options{NodeModules: dir, APIKey: "k-1"})
	rec := get(t, h, http.MethodGet, "/graphiql", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("X-GraphiQL-Mode") != "local" {
		t.Fatalf("GET /graphiql = %d, mode %q", rec.Code, rec.Header().Get("X-GraphiQL-Mode"))
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<meta name="graphiql-mode" content="local">`,
		"GraphiQL 4.1.2, served locally",
		"React 18.2.0",
		`src="/graphiql/vendor/react.production.min.js"`,
		`src="/graphiql/vendor/react-dom.production.min.js"`,
		`src="/graphiql/vendor/graphiql.min.js"`,
		`href="/graphiql/vendor/graphiql.min.css"`,
		`src="/assets/graphiql-init.js"`,
		`<meta name="catalogue-api-key" content="k-1">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("local GraphiQL page lacks %s", want)
		}
	}
	if strings.Contains(body, "cdn.jsdelivr") || strings.Contains(body, "https://") {
		t.Error("the local GraphiQL page refers to another host")
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("local GraphiQL CSP = %q", csp)
	}
	for _, f := range vendorFiles {
		rec := get(t, h, http.MethodGet, "/graphiql/vendor/"+f.name, nil)
		if rec.Code != http.StatusOK || rec.Body.String() != "/* "+f.name+" */" {
			t.Errorf("GET vendor %s = %d %q", f.name, rec.Code, rec.Body.String())
		}
		if got, want := rec.Header().Get("Content-Type"), wantType[path.Ext(f.name)]; got != want {
			t.Errorf("vendor %s Content-Type = %q, want %q", f.name, got, want)
		}
	}
	// Only the listed files: nothing else of node_modules, no way out of it.
	for _, p := range []string{"/graphiql/vendor/package.json", "/graphiql/vendor/..%2Fgraphiql%2Fpackage.json", "/graphiql/vendor/..%2F..%2Fetc%2Fpasswd"} {
		if rec := get(t, h, http.MethodGet, p, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
	if rec := get(t, h, http.MethodGet, "/graphiql/", nil); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/graphiql" {
		t.Errorf("GET /graphiql/ = %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestGraphiQLFallsBackToTheCDN(t *testing.T) {
	h := Handler(noGraphiQL(t))
	rec := get(t, h, http.MethodGet, "/graphiql", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("X-GraphiQL-Mode") != "cdn" {
		t.Fatalf("GET /graphiql = %d, mode %q", rec.Code, rec.Header().Get("X-GraphiQL-Mode"))
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<meta name="graphiql-mode" content="cdn">`,
		"GraphiQL from the CDN",
		"npm ci",
		"https://cdn.jsdelivr.net/npm/graphiql@",
		`href="/#/console"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("CDN GraphiQL page lacks %s", want)
		}
	}
	if rec := get(t, h, http.MethodGet, "/graphiql/vendor/graphiql.min.js", nil); rec.Code != http.StatusNotFound {
		t.Errorf("vendor file without a local copy = %d, want 404", rec.Code)
	}
}

func TestGraphiQLFoundThroughTheEnvironment(t *testing.T) {
	t.Setenv(EnvNodeModules, fakeNodeModules(t))
	if mode := get(t, Handler(Options{}), http.MethodGet, "/graphiql", nil).Header().Get("X-GraphiQL-Mode"); mode != "local" {
		t.Errorf("mode with $%s = %q, want local", EnvNodeModules, mode)
	}
	// Installing while the server runs takes effect on the next request.
	dir := t.TempDir()
	h := Handler(Options{NodeModules: dir})
	if mode := get(t, h, http.MethodGet, "/graphiql", nil).Header().Get("X-GraphiQL-Mode"); mode != "cdn" {
		t.Fatalf("mode before install = %q", mode)
	}
	if err := os.CopyFS(dir, os.DirFS(fakeNodeModules(t))); err != nil {
		t.Fatal(err)
	}
	if mode := get(t, h, http.MethodGet, "/graphiql", nil).Header().Get("X-GraphiQL-Mode"); mode != "local" {
		t.Errorf("mode after install = %q, want local", mode)
	}
}

// web/package.json pins exact versions, the lock file agrees, and when `npm ci` has run the
// real GraphiQL is served locally.
func TestPinnedGraphiQL(t *testing.T) {
	var pkg struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	readJSON(t, "package.json", &pkg)
	exact := regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	all := map[string]string{}
	for k, v := range pkg.Dependencies {
		all[k] = v
	}
	for k, v := range pkg.DevDependencies {
		all[k] = v
	}
	for _, name := range []string{"graphiql", "react", "react-dom", "playwright-core"} {
		if !exact.MatchString(all[name]) {
			t.Errorf("package.json: %s is %q, want an exact version", name, all[name])
		}
	}
	if _, ok := all["playwright"]; ok {
		t.Error("package.json depends on playwright, which downloads its own browser; use playwright-core")
	}
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	readJSON(t, "package-lock.json", &lock)
	if lock.LockfileVersion < 2 {
		t.Errorf("package-lock.json lockfileVersion %d, want >= 2 for npm ci", lock.LockfileVersion)
	}
	for name, v := range all {
		if got := lock.Packages["node_modules/"+name].Version; got != v {
			t.Errorf("package-lock.json has %s %q, package.json pins %q", name, got, v)
		}
	}

	if !hasVendorFiles("node_modules") {
		t.Skip("web/node_modules is not installed (npm ci in web/): the local GraphiQL was not checked")
	}
	rec := get(t, Handler(Options{}), http.MethodGet, "/graphiql", nil)
	if rec.Header().Get("X-GraphiQL-Mode") != "local" {
		t.Fatalf("with web/node_modules installed, /graphiql is in mode %q", rec.Header().Get("X-GraphiQL-Mode"))
	}
	if want := "GraphiQL " + all["graphiql"] + ", served locally"; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("local page lacks %q", want)
	}
	js := get(t, Handler(Options{}), http.MethodGet, "/graphiql/vendor/graphiql.min.js", nil)
	if js.Code != http.StatusOK || !strings.Contains(js.Body.String(), "GraphiQL") {
		t.Errorf("the installed graphiql.min.js was not served: %d", js.Code)
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestUnknownPathsAndMethods(t *testing.T) {
	h := Handler(noGraphiQL(t))
	rec := get(t, h, http.MethodGet, "/nope", nil)
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "Not found") {
		t.Errorf("GET /nope = %d", rec.Code)
	}
	if !strings.Contains(rec.Body.String(), "<code>/nope</code>") {
		t.Error("the 404 page does not name the path")
	}
	if rec := get(t, h, http.MethodGet, "/<script>", nil); strings.Contains(rec.Body.String(), "<script>") {
		t.Error("the 404 page does not escape the path")
	}
	if rec := get(t, h, http.MethodPost, "/", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d, want 405", rec.Code)
	}
	if rec := get(t, h, http.MethodGet, "/index.html", nil); rec.Code != http.StatusMovedPermanently {
		t.Errorf("GET /index.html = %d, want 301", rec.Code)
	}
	resp := get(t, h, http.MethodGet, "/assets/app.css", nil).Result()
	b, _ := io.ReadAll(resp.Body)
	if len(b) == 0 {
		t.Error("empty stylesheet")
	}
}

// With sign-in the page may also connect to the identity provider's origin (its token
// endpoint), and to nothing else.
func TestSignInOriginInCSP(t *testing.T) {
	for origin, want := range map[string]string{
		"https://login.example.com/realms/catalogue": "'self' https://login.example.com",
		"":                    "'self'",
		"javascript:alert(1)": "'self'",
	} {
		rec := get(t, Handler(Options{SignInOrigin: origin}), http.MethodGet, "/", nil)
		if got := cspDirective(rec.Header().Get("Content-Security-Policy"), "connect-src"); got != want {
			t.Errorf("SignInOrigin %q: connect-src = %q, want %q", origin, got, want)
		}
	}
}
