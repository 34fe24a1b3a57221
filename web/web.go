// Package web serves the browser side of the catalogue:
//
//   - the explorer at /: plain HTML, CSS and ES modules embedded in the binary (assets/ and
//     templates/), with no build step, no CDN and no third-party file, so it works offline on a
//     fresh clone;
//   - GraphiQL at /graphiql: served from GraphiQL's UMD build in web/node_modules when `npm ci`
//     has installed it there (web/package.json pins the versions), else gqlgen's playground,
//     which loads GraphiQL from a public CDN. The page says which of the two it is.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"
)

//go:embed assets templates
var files embed.FS

// EnvNodeModules names the environment variable that points at the node_modules directory
// holding GraphiQL's UMD build, when it is not web/node_modules or node_modules under the
// working directory.
const EnvNodeModules = "CATALOGUE_NODE_MODULES"

// Options configure the web surface.
type Options struct {
	// Endpoint is the GraphQL endpoint the pages call, normally /graphql (the default).
	Endpoint string
	// APIKey, when set, is sent by the pages as a bearer token (the embedded default's key). It
	// is rendered into the pages, so set it only for a key that every viewer may use.
	APIKey string
	// NodeModules is the node_modules directory that `npm ci` in web/ fills. Empty means
	// $CATALOGUE_NODE_MODULES, else web/node_modules, else node_modules, both relative to the
	// working directory. It is looked up on every request of /graphiql, so installing GraphiQL
	// while the server runs takes effect on the next reload.
	NodeModules string
	// SignInOrigin is the identity provider's origin (scheme://host[:port]) when the explorer
	// signs in through it: the page's Content-Security-Policy lets it POST to the provider's
	// token endpoint there, and nowhere else.
	SignInOrigin string
}

// Content types of the files the package serves.
const (
	typeHTML = "text/html; charset=utf-8"
	typeJS   = "text/javascript; charset=utf-8"
	typeCSS  = "text/css; charset=utf-8"
	typeSVG  = "image/svg+xml"
	typeJSON = "application/json"
)

// contentType returns the content type of a file by its extension; ES modules need a
// JavaScript type, so the package does not depend on the host's mime.types.
func contentType(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".html":
		return typeHTML
	case ".js", ".mjs":
		return typeJS
	case ".css":
		return typeCSS
	case ".svg":
		return typeSVG
	case ".json":
		return typeJSON
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// vendorFile is one file of GraphiQL's browser build, served at /graphiql/vendor/<name> from
// <node_modules>/<rel>. Only these files are served: never the rest of node_modules.
type vendorFile struct{ name, rel string }

var vendorFiles = []vendorFile{
	{"react.production.min.js", "react/umd/react.production.min.js"},
	{"react-dom.production.min.js", "react-dom/umd/react-dom.production.min.js"},
	{"graphiql.min.js", "graphiql/graphiql.min.js"},
	{"graphiql.min.css", "graphiql/graphiql.min.css"},
}

// asset is an embedded file with its precomputed validator.
type asset struct {
	body  []byte
	etag  string
	ctype string
}

type server struct {
	opts     Options
	assets   map[string]asset // by path under assets/, e.g. js/app.js
	index    []byte
	indexCSP string
	local    *template.Template
	cdnPage  []byte
}

// Handler returns the explorer at /, its files at /assets/, and GraphiQL at /graphiql. GET of a
// path it does not know is 404; other methods than GET and HEAD are 405.
func Handler(opts Options) http.Handler {
	if opts.Endpoint == "" {
		opts.Endpoint = "/graphql"
	}
	s := &server{opts: opts, assets: map[string]asset{}}
	if err := s.load(); err != nil {
		// The embedded files are part of the binary: a failure here is a build defect.
		panic("web: " + err.Error())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveIndex)
	mux.HandleFunc("GET /index.html", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /assets/{file...}", s.serveAsset)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		s.writeAsset(w, r, "favicon.svg")
	})
	mux.HandleFunc("GET /graphiql", s.serveGraphiQL)
	mux.HandleFunc("GET /graphiql/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/graphiql", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /graphiql/vendor/{name}", s.serveVendor)
	mux.HandleFunc("GET /", notFound)
	return secure(mux)
}

func (s *server) load() error {
	err := fs.WalkDir(files, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		s.assets[strings.TrimPrefix(p, "assets/")] = asset{
			body:  body,
			etag:  `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
			ctype: contentType(p),
		}
		return nil
	})
	if err != nil {
		return err
	}
	index, err := template.ParseFS(files, "templates/index.html")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := index.Execute(&buf, map[string]string{"Endpoint": s.opts.Endpoint, "APIKey": s.opts.APIKey}); err != nil {
		return err
	}
	s.index = buf.Bytes()
	s.indexCSP = explorerCSP(s.opts.Endpoint, s.opts.SignInOrigin)
	if s.local, err = template.ParseFS(files, "templates/graphiql.html"); err != nil {
		return err
	}
	s.cdnPage = cdnPlayground(s.opts)
	return nil
}

// explorerCSP allows the explorer's own files and the GraphQL endpoint, nothing else: no inline
// script, no third-party host. It enforces in the browser what the tests check in the files.
//
// The live updates' WebSocket goes to the endpoint too: for the same host, 'self' allows it
// (CSP Level 3 matches ws: and wss: of the page's own host under 'self'); an endpoint on another
// host is allowed by its origin and by that origin's ws: or wss: twin. No bare ws: or wss:
// scheme source, which would allow a socket to any host. signIn, when set, is the identity
// provider's origin, where the sign-in exchanges its code for tokens.
func explorerCSP(endpoint, signIn string) string {
	connect := "'self'"
	if u, err := url.Parse(signIn); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
	}
	if u, err := url.Parse(endpoint); err == nil && u.Scheme != "" && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
		switch u.Scheme {
		case "https":
			connect += " wss://" + u.Host
		case "http":
			connect += " ws://" + u.Host
		}
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"font-src 'self'; connect-src " + connect + "; manifest-src 'self'; base-uri 'none'; " +
		"form-action 'none'; frame-ancestors 'none'"
}

// secure sets the headers every response of the web surface carries.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

func (s *server) serveIndex(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", typeHTML)
	h.Set("Content-Security-Policy", s.indexCSP)
	// The page may carry the API key: never keep it in a shared cache.
	h.Set("Cache-Control", "no-store")
	http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(s.index))
}

func (s *server) serveAsset(w http.ResponseWriter, r *http.Request) {
	s.writeAsset(w, r, r.PathValue("file"))
}

func (s *server) writeAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := s.assets[name]
	if !ok {
		notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("ETag", a.etag)
	// Revalidate every time: a new binary serves new files under the same names.
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
}

func notFound(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", typeHTML)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method == http.MethodHead {
		return
	}
	_ = notFoundPage.Execute(w, r.URL.Path)
}

var notFoundPage = template.Must(template.New("404").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found · Capability Catalogue</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/assets/app.css"></head>
<body class="plain"><main class="plain-page"><h1>Not found</h1>
<p>Nothing is served at <code>{{.}}</code>.</p>
<p><a href="/">Open the catalogue explorer</a> · <a href="/graphiql">GraphiQL</a> · the API is at <code>POST /graphql</code>.</p>
</main></body></html>
`))

// GraphiQL.

// graphiQLInstall is where GraphiQL's local copy was found, or what was tried.
type graphiQLInstall struct {
	dir      string   // the node_modules directory holding every vendor file; empty if none
	version  string   // graphiql's version from its package.json
	react    string   // react's version
	searched []string // the directories tried, for the fallback banner
}

// candidates returns the node_modules directories to try, in order.
func (s *server) candidates() []string {
	if s.opts.NodeModules != "" {
		return []string{s.opts.NodeModules}
	}
	if d := os.Getenv(EnvNodeModules); d != "" {
		return []string{d}
	}
	return []string{filepath.Join("web", "node_modules"), "node_modules"}
}

func (s *server) findGraphiQL() graphiQLInstall {
	var in graphiQLInstall
	for _, dir := range s.candidates() {
		in.searched = append(in.searched, dir)
		if hasVendorFiles(dir) {
			in.dir = dir
			in.version = packageVersion(filepath.Join(dir, "graphiql"))
			in.react = packageVersion(filepath.Join(dir, "react"))
			return in
		}
	}
	return in
}

func hasVendorFiles(dir string) bool {
	for _, f := range vendorFiles {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f.rel)))
		if err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// packageVersion returns the version field of dir/package.json, or "".
func packageVersion(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.Version
}

func (s *server) serveGraphiQL(w http.ResponseWriter, r *http.Request) {
	in := s.findGraphiQL()
	h := w.Header()
	h.Set("Content-Type", typeHTML)
	h.Set("Cache-Control", "no-store")
	if in.dir == "" {
		h.Set("X-GraphiQL-Mode", "cdn")
		_, _ = w.Write(s.cdnPage)
		return
	}
	h.Set("X-GraphiQL-Mode", "local")
	h.Set("Content-Security-Policy", graphiQLCSP)
	var buf bytes.Buffer
	err := s.local.Execute(&buf, map[string]string{
		"Endpoint": s.opts.Endpoint, "APIKey": s.opts.APIKey, "Version": in.version, "React": in.react,
	})
	if err != nil {
		http.Error(w, "render GraphiQL: "+err.Error(), http.StatusInternalServerError)
		return
	}
	_, _ = w.Write(buf.Bytes())
}

// graphiQLCSP is the local GraphiQL's policy: its files come from this server; its components
// set inline styles and its CSS embeds fonts and images as data: URLs.
const graphiQLCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'none'"

func (s *server) serveVendor(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var rel string
	for _, f := range vendorFiles {
		if f.name == name {
			rel = f.rel
		}
	}
	in := s.findGraphiQL()
	if rel == "" || in.dir == "" {
		notFound(w, r)
		return
	}
	f, err := os.Open(filepath.Join(in.dir, filepath.FromSlash(rel)))
	if err != nil {
		notFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		notFound(w, r)
		return
	}
	w.Header().Set("Content-Type", contentType(name))
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, st.ModTime(), f)
}

// cdnPlayground renders gqlgen's playground (GraphiQL from cdn.jsdelivr.net) once, with a
// banner that says so and what to do offline.
func cdnPlayground(opts Options) []byte {
	var popts []playground.GraphiqlConfigOption
	if opts.APIKey != "" {
		popts = append(popts, playground.WithGraphiqlFetcherHeaders(map[string]string{"Authorization": "Bearer " + opts.APIKey}))
	}
	rec := &bufferWriter{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/graphiql", nil)
	playground.Handler("GraphiQL · Capability Catalogue", opts.Endpoint, popts...).ServeHTTP(rec, req)
	page := rec.body.String()
	page = strings.Replace(page, "<head>", "<head>\n"+cdnHead, 1)
	page = strings.Replace(page, "<body>", "<body>\n"+cdnBanner, 1)
	page = strings.Replace(page, "</body>", cdnFailed+"\n</body>", 1)
	return []byte(page)
}

const cdnHead = `<meta name="graphiql-mode" content="cdn">
	<meta name="viewport" content="width=device-width, initial-scale=1">
	<style>
		body { display: flex; flex-direction: column; height: 100vh; font-family: system-ui, sans-serif; }
		#graphiql { height: auto !important; flex: 1; min-height: 0; }
		.graphiql-mode { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: baseline; padding: .55rem 1rem; background: #fff7e6; border-bottom: 1px solid #f0c36d; color: #5c3d00; font-size: 14px; line-height: 1.4; }
		.graphiql-mode a { color: #3b3bd1; }
		.graphiql-mode code { font-size: 13px; background: #fdebc8; padding: 0 .25em; border-radius: 3px; }
		.graphiql-offline { max-width: 40rem; margin: 3rem auto; padding: 0 1rem; font-size: 16px; line-height: 1.5; color: #7a1d1d; }
	</style>`

const cdnBanner = `<div class="graphiql-mode" role="note" aria-label="GraphiQL mode">
		<strong>GraphiQL from the CDN (cdn.jsdelivr.net)</strong>
		<span>No local copy is installed: run <code>npm ci</code> in <code>web/</code> (or <code>web/install.sh</code>) and reload to serve it from this server. Without internet this page stays empty; the <a href="/#/console">explorer's query console</a> works offline.</span>
		<a href="/">← Explorer</a>
	</div>`

// bufferWriter collects what a handler writes.
type bufferWriter struct {
	header http.Header
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header         { return b.header }
func (b *bufferWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferWriter) WriteHeader(int)             {}

// cdnFailed replaces the playground's endless "Loading…" when the CDN is out of reach.
const cdnFailed = `<script>
		window.addEventListener('load', function () {
			if (window.GraphiQL) return;
			var root = document.getElementById('graphiql');
			var p = document.createElement('p');
			p.className = 'graphiql-offline';
			p.setAttribute('role', 'alert');
			p.textContent = 'GraphiQL could not be loaded from cdn.jsdelivr.net: this machine seems to be offline. ' +
				'Run npm ci in web/ to serve it from this server, or use the explorer\u2019s query console at /#/console.';
			root.replaceChildren(p);
		});
	</script>`
