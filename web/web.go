// Package web serves the browser side of the catalogue:
//
//   - the explorer at /: plain HTML, CSS and ES modules embedded in the binary (assets/ and
//     templates/), with no build step, no CDN and no third-party file, so it works offline on a
//     fresh clone;
//   - GraphiQL at /graphiql: GraphiQL's and React's prebuilt browser files, pinned by
//     web/package-lock.json and copied into graphiql/vendor/ by web/vendor-graphiql.sh, embedded
//     too: no CDN, no npm at run time, it works offline.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed assets templates
var files embed.FS

// Options configure the web surface.
type Options struct {
	// Endpoint is the GraphQL endpoint the pages call, normally /graphql (the default).
	Endpoint string
	// APIKey, when set, is sent by the pages as a bearer token (the embedded default's key). It
	// is rendered into the pages, so set it only for a key that every viewer may use.
	APIKey string
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
	graphiql []byte     // the rendered GraphiQL page
	vendor   *vendorSet // GraphiQL's files, shared by every handler
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
	mux.HandleFunc("GET /graphiql/vendor/{file...}", s.serveVendor)
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
	if s.vendor, err = loadVendor(); err != nil {
		return err
	}
	page, err := template.ParseFS(files, "templates/graphiql.html")
	if err != nil {
		return err
	}
	var gbuf bytes.Buffer // not buf: s.index holds its bytes
	err = page.Execute(&gbuf, map[string]string{
		"Endpoint": s.opts.Endpoint, "APIKey": s.opts.APIKey,
		"Version": s.vendor.manifest.Packages["graphiql"].Version, "React": s.vendor.manifest.Packages["react"].Version,
		"GraphiQLJS": s.vendorURL("graphiql/graphiql.min.js"), "GraphiQLCSS": s.vendorURL("graphiql/graphiql.min.css"),
		"ReactJS": s.vendorURL("react/react.production.min.js"), "ReactDOMJS": s.vendorURL("react-dom/react-dom.production.min.js"),
	})
	if err != nil {
		return err
	}
	s.graphiql = gbuf.Bytes()
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

// vendorFS holds GraphiQL's browser build and React's, byte for byte from the packages that
// web/package-lock.json pins, with their licences and manifest.json (web/vendor-graphiql.sh
// writes them; TestVendoredGraphiQL checks them).
//
//go:embed graphiql/vendor
var vendorFS embed.FS

// vendorManifest is graphiql/vendor/manifest.json.
type vendorManifest struct {
	Packages map[string]struct {
		Version   string            `json:"version"`
		Integrity string            `json:"integrity"`
		License   string            `json:"license"`
		Files     map[string]string `json:"files"` // file name -> SHA-256, hex
	} `json:"packages"`
}

// vendorSet is the embedded GraphiQL: its manifest and its files by path under
// graphiql/vendor/ (e.g. graphiql/graphiql.min.js).
type vendorSet struct {
	manifest vendorManifest
	files    map[string]*vendorAsset
}

// loadVendor reads the embedded GraphiQL files once per process: every handler shares them (and
// their gzipped copies).
var loadVendor = sync.OnceValues(func() (*vendorSet, error) {
	v := &vendorSet{files: map[string]*vendorAsset{}}
	b, err := vendorFS.ReadFile("graphiql/vendor/manifest.json")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &v.manifest); err != nil {
		return nil, fmt.Errorf("graphiql/vendor/manifest.json: %w", err)
	}
	for _, pkg := range []string{"graphiql", "react", "react-dom"} {
		if v.manifest.Packages[pkg].Version == "" {
			return nil, fmt.Errorf("graphiql/vendor/manifest.json names no version of %s", pkg)
		}
	}
	err = fs.WalkDir(vendorFS, "graphiql/vendor", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := vendorFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		tag := base64.RawURLEncoding.EncodeToString(sum[:12])
		ctype := contentType(p)
		if !strings.Contains(path.Base(p), ".") { // LICENSE, THIRD_PARTY_LICENSES
			ctype = "text/plain; charset=utf-8"
		}
		v.files[strings.TrimPrefix(p, "graphiql/vendor/")] = &vendorAsset{asset: asset{body: body, etag: `"` + tag + `"`, ctype: ctype}, version: tag}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
})

// vendorAsset is an embedded GraphiQL file; version (its content hash) goes into the URL the
// page uses, ?v=<version>, so that a new binary's file has a new URL.
type vendorAsset struct {
	asset
	version string
	gzOnce  sync.Once
	gz      []byte // the body gzipped, made at the first request that accepts it; nil when that does not pay
}

// gzipped returns the body compressed with gzip, or nil when that saves less than a tenth. The
// files are compressed once, on first use, not at start: most handlers never serve them.
func (a *vendorAsset) gzipped() []byte {
	a.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		if zw.Close() == nil && b.Len() < len(a.body)*9/10 {
			a.gz = b.Bytes()
		}
	})
	return a.gz
}

// acceptsGzip reports whether a request's Accept-Encoding allows gzip: named, or "*", with a
// q-value that is not zero.
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "*" {
				continue
			}
			for _, p := range strings.Split(params, ";") {
				if k, q, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(q), 64); err == nil && f == 0 {
						return false
					}
				}
			}
			return true
		}
	}
	return false
}

// vendorURL is the URL of an embedded GraphiQL file with its content hash.
func (s *server) vendorURL(name string) string {
	return "/graphiql/vendor/" + name + "?v=" + s.vendor.files[name].version
}

func (s *server) serveGraphiQL(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", typeHTML)
	h.Set("Content-Security-Policy", graphiQLCSP)
	// The page may carry the API key: never keep it in a shared cache.
	h.Set("Cache-Control", "no-store")
	http.ServeContent(w, r, "graphiql.html", time.Time{}, bytes.NewReader(s.graphiql))
}

// graphiQLCSP is GraphiQL's policy: its files come from this server; its components set inline
// styles and its CSS embeds fonts and images as data: URLs.
const graphiQLCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'none'"

// serveVendor serves an embedded GraphiQL file. Asked for by its current content hash (?v=, as
// the page does) it may be cached for a year; otherwise (an old page, a hand-typed URL) it is
// revalidated by its ETag.
func (s *server) serveVendor(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	a, ok := s.vendor.files[name]
	if !ok || name == "manifest.json" {
		notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Add("Vary", "Accept-Encoding")
	body, etag := a.body, a.etag
	if acceptsGzip(r) {
		if gz := a.gzipped(); gz != nil {
			// Its own ETag: a cache must not answer an identity request with the gzipped bytes.
			body, etag = gz, `"`+a.version+`-gzip"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, path.Base(name), time.Time{}, bytes.NewReader(body))
}
