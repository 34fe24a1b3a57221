// Package loopback serves an http.Handler on a free loopback port: how the embedded backends
// (minidyn, gofakes3) run inside the process.
package loopback

import (
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a handler served on 127.0.0.1.
type Server struct {
	// URL is the server's base URL, http://127.0.0.1:port.
	URL string
	srv *http.Server
}

// Serve starts h on 127.0.0.1 at a free port, wrapped by wrap when it is not nil (to count,
// delay or fail requests). It returns an error when no port can be had.
func Serve(h http.Handler, wrap func(http.Handler) http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	if wrap != nil {
		h = wrap(h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Server{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }
