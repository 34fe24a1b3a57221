package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
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

func TestIndexServesTheExplorer(t *testing.T) {
	h := Handler(Options{})
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
	without := get(t, Handler(Options{}), http.MethodGet, "/", nil).Body.String()
	if strings.Contains(without, "catalogue-api-key") {
		t.Error("the page names an API key although none is set")
	}

	opts := Options{}
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

	// GraphiQL's page carries the key the same way, only when it is set.
	opts.APIKey = "k-3f9a"
	if page := get(t, Handler(opts), http.MethodGet, "/graphiql", nil).Body.String(); !strings.Contains(page, `<meta name="catalogue-api-key" content="k-3f9a">`) {
		t.Error("GraphiQL's page does not carry the key")
	}
	if page := get(t, Handler(Options{}), http.MethodGet, "/graphiql", nil).Body.String(); strings.Contains(page, "catalogue-api-key") {
		t.Error("GraphiQL's page names an API key although none is set")
	}
}

func TestCustomEndpoint(t *testing.T) {
	opts := Options{}
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
	h := Handler(Options{})
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

// GraphiQL is served from the binary: the page, its four files and their licences, whatever
// the working directory holds (no node_modules is looked for).
func TestGraphiQLEmbedded(t *testing.T) {
	t.Chdir(t.TempDir())
	h := Handler(Options{APIKey: "k-1"})
	rec := get(t, h, http.MethodGet, "/graphiql", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /graphiql = %d", rec.Code)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GraphiQL page Cache-Control = %q, want no-store (it may carry a key)", cc)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); cspDirective(csp, "script-src") != "'self'" || cspDirective(csp, "connect-src") != "'self'" {
		t.Errorf("GraphiQL CSP = %q", csp)
	}
	body := rec.Body.String()
	var m vendorManifest
	b, err := vendorFS.ReadFile("graphiql/vendor/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<meta name="graphiql-mode" content="embedded">`,
		"GraphiQL " + m.Packages["graphiql"].Version + ", embedded in this server",
		"React " + m.Packages["react"].Version,
		`<meta name="catalogue-api-key" content="k-1">`,
		`src="/assets/graphiql-init.js"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("GraphiQL page lacks %s", want)
		}
	}
	refs := regexp.MustCompile(`(?:src|href)="(/graphiql/vendor/[^"?]+)\?v=([^"]+)"`).FindAllStringSubmatch(body, -1)
	want := map[string]string{
		"/graphiql/vendor/react/react.production.min.js":         wantType[".js"],
		"/graphiql/vendor/react-dom/react-dom.production.min.js": wantType[".js"],
		"/graphiql/vendor/graphiql/graphiql.min.js":              wantType[".js"],
		"/graphiql/vendor/graphiql/graphiql.min.css":             wantType[".css"],
	}
	if len(refs) != len(want) {
		t.Errorf("the page references %d versioned vendor files, want %d: %q", len(refs), len(want), refs)
	}
	for _, ref := range refs {
		file, version := ref[1], ref[2]
		ctype, ok := want[file]
		if !ok {
			t.Errorf("the page references %s", file)
			continue
		}
		embedded, err := vendorFS.ReadFile("graphiql/vendor/" + strings.TrimPrefix(file, "/graphiql/vendor/"))
		if err != nil {
			t.Fatal(err)
		}
		// The current version: the embedded bytes, cacheable for a year.
		rec := get(t, h, http.MethodGet, file+"?v="+version, nil)
		if rec.Code != http.StatusOK || rec.Body.String() != string(embedded) {
			t.Errorf("GET %s?v=%s = %d with %d bytes, want the %d embedded bytes", file, version, rec.Code, rec.Body.Len(), len(embedded))
		}
		if got := rec.Header().Get("Content-Type"); got != ctype {
			t.Errorf("%s Content-Type = %q, want %q", file, got, ctype)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s?v=<its hash> Cache-Control = %q, want a year, immutable", file, cc)
		}
		etag := rec.Header().Get("ETag")
		if !strings.Contains(etag, version) {
			t.Errorf("%s ETag %q does not carry its content hash %q", file, etag, version)
		}
		// Another version (an old page), or none: revalidated by the ETag.
		for _, q := range []string{"", "?v=old"} {
			rec := get(t, h, http.MethodGet, file+q, nil)
			if rec.Code != http.StatusOK || rec.Header().Get("Cache-Control") != "no-cache" {
				t.Errorf("GET %s%s = %d, Cache-Control %q, want 200 no-cache", file, q, rec.Code, rec.Header().Get("Cache-Control"))
			}
		}
		if rec := get(t, h, http.MethodGet, file, map[string]string{"If-None-Match": etag}); rec.Code != http.StatusNotModified {
			t.Errorf("GET %s If-None-Match its ETag = %d, want 304", file, rec.Code)
		}
	}
	for _, lic := range []string{"graphiql/LICENSE", "graphiql/THIRD_PARTY_LICENSES", "react/LICENSE", "react-dom/LICENSE"} {
		rec := get(t, h, http.MethodGet, "/graphiql/vendor/"+lic, nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Permission is hereby granted") || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("GET /graphiql/vendor/%s = %d %q", lic, rec.Code, rec.Header().Get("Content-Type"))
		}
		if !strings.Contains(body, `href="/graphiql/vendor/`+lic+`"`) && strings.HasPrefix(lic, "graphiql/") {
			t.Errorf("the page does not link %s", lic)
		}
	}
	for _, p := range []string{"/graphiql/vendor/manifest.json", "/graphiql/vendor/graphiql/package.json", "/graphiql/vendor/..%2F..%2Fweb.go", "/graphiql/vendor/react.production.min.js"} {
		if rec := get(t, h, http.MethodGet, p, nil); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, rec.Code)
		}
	}
	if rec := get(t, h, http.MethodGet, "/graphiql/", nil); rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != "/graphiql" {
		t.Errorf("GET /graphiql/ = %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

// GraphiQL's page references only this server: every URL in it is a path (or a fragment), none
// names a scheme or a host, with or without an API key and with the default endpoint.
func TestGraphiQLPageIsSameOrigin(t *testing.T) {
	for _, opts := range []Options{{}, {APIKey: "k-1"}} {
		body := get(t, Handler(opts), http.MethodGet, "/graphiql", nil).Body.String()
		if m := regexp.MustCompile(`(?i)\b(?:https?|wss?):|//[a-z0-9.-]+\.[a-z]`).FindString(body); m != "" {
			t.Errorf("the GraphiQL page names another host or a scheme: %q", m)
		}
		refs := regexp.MustCompile(`(?i)\b(?:src|href|content|action)="([^"]*)"`).FindAllStringSubmatch(body, -1)
		if len(refs) < 7 {
			t.Fatalf("only %d references found in the page", len(refs))
		}
		for _, r := range refs {
			u := r[1]
			if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
				continue
			}
			if !strings.Contains(u, "/") && !strings.Contains(u, ":") { // a meta value: a key, a mode
				continue
			}
			if strings.HasPrefix(u, "width=") {
				continue
			}
			t.Errorf("the GraphiQL page references %q, not a path of this server", u)
		}
	}
}

// The embedded GraphiQL is what web/package-lock.json pins: manifest.json names the lock file's
// versions and integrities of graphiql, react and react-dom, every embedded file is listed in it
// with its SHA-256 (so a hand edit fails), and each file is there. When `npm ci` has installed
// web/node_modules, the embedded files equal the installed ones byte for byte.
func TestVendoredGraphiQL(t *testing.T) {
	var m vendorManifest
	b, err := vendorFS.ReadFile("graphiql/vendor/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	readJSON(t, "package-lock.json", &lock)
	wantFiles := map[string][]string{
		"graphiql":  {"LICENSE", "THIRD_PARTY_LICENSES", "graphiql.min.css", "graphiql.min.js"},
		"react":     {"LICENSE", "react.production.min.js"},
		"react-dom": {"LICENSE", "react-dom.production.min.js"},
	}
	if len(m.Packages) != len(wantFiles) {
		t.Errorf("manifest.json lists %d packages, want %d", len(m.Packages), len(wantFiles))
	}
	for pkg, files := range wantFiles {
		got, locked := m.Packages[pkg], lock.Packages["node_modules/"+pkg]
		if got.Version == "" || got.Version != locked.Version || got.Integrity != locked.Integrity {
			t.Errorf("%s: embedded %s (%s), package-lock.json pins %s (%s): run web/vendor-graphiql.sh", pkg, got.Version, got.Integrity, locked.Version, locked.Integrity)
		}
		for _, f := range files {
			if _, ok := got.Files[f]; !ok {
				t.Errorf("manifest.json does not list %s/%s", pkg, f)
			}
		}
	}
	listed := map[string]bool{"graphiql/vendor/manifest.json": true}
	for pkg, p := range m.Packages {
		for name, sum := range p.Files {
			file := "graphiql/vendor/" + pkg + "/" + name
			listed[file] = true
			body, err := vendorFS.ReadFile(file)
			if err != nil {
				t.Errorf("manifest.json lists %s, which is not embedded", file)
				continue
			}
			if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s: SHA-256 %x, manifest.json records %s", file, got, sum)
			}
			installed, err := os.ReadFile(filepath.Join("node_modules", pkg, installedPath(pkg, name)))
			if err == nil && !bytes.Equal(installed, body) {
				t.Errorf("%s differs from web/node_modules/%s/%s: run web/vendor-graphiql.sh", file, pkg, installedPath(pkg, name))
			}
		}
	}
	err = fs.WalkDir(vendorFS, "graphiql/vendor", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !listed[p] {
			t.Errorf("%s is embedded but not in manifest.json", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// installedPath is where an embedded file is in its npm package.
func installedPath(pkg, name string) string {
	if strings.HasSuffix(name, ".js") && pkg != "graphiql" {
		return "umd/" + name
	}
	if name == "THIRD_PARTY_LICENSES" { // written by web/vendor-graphiql.sh, not in the package
		return "-"
	}
	return name
}

// web/package.json pins exact versions and the lock file agrees.
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
	h := Handler(Options{})
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

// GraphiQL's files go out gzipped to a client that accepts it (about a quarter of their size),
// with an ETag of their own and Vary: Accept-Encoding; identity otherwise.
func TestGraphiQLGzip(t *testing.T) {
	h := Handler(Options{})
	const file = "/graphiql/vendor/graphiql/graphiql.min.js"
	embedded, err := vendorFS.ReadFile("graphiql/vendor/graphiql/graphiql.min.js")
	if err != nil {
		t.Fatal(err)
	}
	plain := get(t, h, http.MethodGet, file, nil)
	for _, ae := range []string{"gzip, deflate, br, zstd", "br;q=1.0, gzip;q=0.8", "*", "GZIP"} {
		rec := get(t, h, http.MethodGet, file, map[string]string{"Accept-Encoding": ae})
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want gzip", ae, rec.Header().Get("Content-Encoding"))
			continue
		}
		n := rec.Body.Len()
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(body, embedded) {
			t.Errorf("Accept-Encoding %q: the gunzipped body differs from the embedded file (%v)", ae, err)
		}
		if n == 0 || n > len(embedded)/2 {
			t.Errorf("gzipped size %d of %d bytes, want at most half", n, len(embedded))
		}
		if etag := rec.Header().Get("ETag"); etag == "" || etag == plain.Header().Get("ETag") {
			t.Errorf("gzipped ETag %q, identity ETag %q: they must differ", etag, plain.Header().Get("ETag"))
		}
		if !strings.Contains(strings.Join(rec.Header().Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("Vary = %q", rec.Header().Values("Vary"))
		}
		if rec := get(t, h, http.MethodGet, file, map[string]string{"Accept-Encoding": ae, "If-None-Match": rec.Header().Get("ETag")}); rec.Code != http.StatusNotModified {
			t.Errorf("If-None-Match the gzipped ETag = %d, want 304", rec.Code)
		}
	}
	for _, ae := range []string{"", "identity", "gzip;q=0", "br, gzip; q=0.000", "deflate"} {
		rec := get(t, h, http.MethodGet, file, map[string]string{"Accept-Encoding": ae})
		if rec.Header().Get("Content-Encoding") != "" || !bytes.Equal(rec.Body.Bytes(), embedded) {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, %d bytes; want the identity body", ae, rec.Header().Get("Content-Encoding"), rec.Body.Len())
		}
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
