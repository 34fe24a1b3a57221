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
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
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
	handler               http.Handler // the guarded, wrapped handler the port serves
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
	s.handler = s.guard(h, port)
	s.srv = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
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

// Do serves r in the calling goroutine, without a socket, through the same guard and wrap as
// the port (the key check, the -data file's write hooks), and returns the response: an HTTP
// client (aws.HTTPClient) for a client in this process. It saves what loopback HTTP costs per
// request (two socket writes and reads, the connection's goroutines and their wake-ups, the
// server's request parsing). r must be addressed to the server (URL); the port keeps serving
// everything else that dials it. A request whose context is done is not served.
func (s *Server) Do(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	in := *r // as a server sees it: Host from the URL, the client's request left as it was
	if in.Host == "" && in.URL != nil {
		in.Host = in.URL.Host
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RequestURI = in.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	rec := &recorder{header: http.Header{}}
	err := serve(s.handler, rec, &in)
	_ = in.Body.Close()
	if err != nil {
		return nil, err
	}
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	body := rec.body.Bytes()
	rec.header.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status:        strconv.Itoa(rec.code) + " " + http.StatusText(rec.code),
		StatusCode:    rec.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}, nil
}

// serve runs h, turning a panic into an error as the port's server turns it into a closed
// connection.
func serve(h http.Handler, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("loopback: handler panicked: %v", p)
		}
	}()
	h.ServeHTTP(w, r)
	return nil
}

// recorder is the response writer of Do.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
