// Package loopback serves an http.Handler on a free loopback port: how the embedded backends
// (minidyn, gofakes3) run inside the process.
//
// Nothing in them checks who calls, so the server does: it answers only requests addressed to
// its own loopback address (a page on another site that rebinds its name to 127.0.0.1 sends its
// own Host), never grants a cross-origin request (no CORS headers, preflights refused), and
// only to a caller that signs with its secret access key ID (Key; PresignKey for presigned
// reads, UploadKey for presigned uploads). A local user or a web page cannot read or change the embedded data without the
// process's keys.
package loopback

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Server is a handler served on 127.0.0.1.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string
	// Key is the access key ID a client must sign with (in the Authorization header).
	Key string
	// PresignKey is the access key ID of presigned download URLs (X-Amz-Credential in the
	// query), which the server gives to clients: it only reads (GET and HEAD). UploadKey is
	// that of presigned upload URLs: it only puts objects (PUT).
	PresignKey, UploadKey string
	srv                   *http.Server
}

// Serve starts h on 127.0.0.1 at a free port behind the guard, wrapped by wrap when it is not
// nil (to count, delay or fail requests). It returns an error when no port can be had.
func Serve(h http.Handler, wrap func(http.Handler) http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	if wrap != nil {
		h = wrap(h)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), Key: newKey(), PresignKey: newKey(), UploadKey: newKey()}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.srv = &http.Server{Handler: s.guard(h, port), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// newKey returns a random access key ID: 20 upper-case hex characters, as AWS's are 20.
func newKey() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "LOCAL" + strings.ToUpper(hex.EncodeToString(b))[:15]
}

// guard answers only requests addressed to this server that carry one of its keys.
func (s *Server) guard(h http.Handler, port string) http.Handler {
	hosts := map[string]bool{"127.0.0.1:" + port: true, "localhost:" + port: true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !hosts[strings.ToLower(r.Host)]:
			http.Error(w, "forbidden: not addressed to this server", http.StatusForbidden)
		case r.Method == http.MethodOptions:
			http.Error(w, "forbidden: no cross-origin requests", http.StatusForbidden)
		case !s.signed(r):
			http.Error(w, "forbidden: not signed with this server's key", http.StatusForbidden)
		default:
			h.ServeHTTP(noCORS{w}, r)
		}
	})
}

// signed reports whether r names the server's key as its credential: in its Authorization
// header, or, for a read, in a presigned URL's X-Amz-Credential.
func (s *Server) signed(r *http.Request) bool {
	if auth := r.Header.Get("Authorization"); auth != "" {
		return strings.Contains(auth, "Credential="+s.Key+"/")
	}
	cred := r.URL.Query().Get("X-Amz-Credential")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return strings.HasPrefix(cred, s.PresignKey+"/")
	case http.MethodPut:
		return strings.HasPrefix(cred, s.UploadKey+"/") && r.URL.Query().Get("uploads") == "" && r.URL.Query().Get("acl") == ""
	}
	return false
}

// noCORS drops every Access-Control header the handler sets.
type noCORS struct{ http.ResponseWriter }

func (w noCORS) WriteHeader(code int) {
	for k := range w.Header() {
		if strings.HasPrefix(k, "Access-Control-") {
			w.Header().Del(k)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w noCORS) Write(b []byte) (int, error) {
	for k := range w.Header() {
		if strings.HasPrefix(k, "Access-Control-") {
			w.Header().Del(k)
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w noCORS) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
