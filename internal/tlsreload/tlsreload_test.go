package tlsreload

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"io/fs"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestVersions(t *testing.T) {
	// Let crypto/tls default to accepting TLS 1.0, so that the refusals below come from Config.
	t.Setenv("GODEBUG", "tls10server=1")
	p := newPair(t, "v", 1)
	r, _ := startReloader(t, p)
	addr := serve(t, r)
	tests := []struct {
		name    string
		version uint16
		ok      bool
	}{
		{"TLS 1.3", tls.VersionTLS13, true},
		{"TLS 1.2", tls.VersionTLS12, true},
		{"TLS 1.1", tls.VersionTLS11, false},
		{"TLS 1.0", tls.VersionTLS10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := clientConfig(p.leaf)
			cfg.MinVersion, cfg.MaxVersion = tt.version, tt.version
			client := &http.Client{
				Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, DisableKeepAlives: true},
				Timeout:   10 * time.Second,
			}
			resp, err := client.Get("https://" + addr + "/")
			if !tt.ok {
				if err == nil {
					resp.Body.Close()
				}
				// The server's alert reaches the client as a net.OpError with Op "remote error".
				var opErr *net.OpError
				if !errors.As(err, &opErr) || opErr.Op != "remote error" || !strings.Contains(opErr.Err.Error(), "protocol version") {
					t.Fatalf("GET with %s: err = %v, want the server's protocol version alert", tt.name, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("GET with %s: %v", tt.name, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.TLS.Version != tt.version || resp.ProtoMajor != 2 || string(body) != "ok" {
				t.Errorf("GET with %s = %s over %s, %q; want %s over HTTP/2, %q",
					tt.name, tls.VersionName(resp.TLS.Version), resp.Proto, body, tt.name, "ok")
			}
		})
	}
}

func TestReloadOnChange(t *testing.T) {
	a, b := newPair(t, "a", 1), newPair(t, "b", 2)
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	r, f := startReloader(t, a, WithClock(clk.Now))
	addr := serve(t, r)

	f.write(t, b.cert, b.key)
	clk.Advance(defaultCheckInterval / 2)
	if got := served(t, addr, a, b); got.SerialNumber.Cmp(a.leaf.SerialNumber) != 0 {
		t.Fatalf("served serial %v before the check interval passed, want %v", got.SerialNumber, a.leaf.SerialNumber)
	}
	clk.Advance(defaultCheckInterval / 2)
	if got := served(t, addr, a, b); got.SerialNumber.Cmp(b.leaf.SerialNumber) != 0 {
		t.Fatalf("served serial %v after the check interval passed, want %v", got.SerialNumber, b.leaf.SerialNumber)
	}
	if got := r.Certificate().Leaf.Subject.CommonName; got != "b" {
		t.Errorf("Certificate().Leaf.Subject.CommonName = %q, want %q", got, "b")
	}
}

func TestReloadOnChangeRealClock(t *testing.T) {
	a, b := newPair(t, "a", 1), newPair(t, "b", 2)
	r, f := startReloader(t, a, WithCheckInterval(time.Millisecond))
	addr := serve(t, r)

	f.write(t, b.cert, b.key)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if served(t, addr, a, b).SerialNumber.Cmp(b.leaf.SerialNumber) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("served serial still %v after the files changed, want %v", a.leaf.SerialNumber, b.leaf.SerialNumber)
		}
	}
}

func TestReload(t *testing.T) {
	a, b := newPair(t, "a", 1), newPair(t, "b", 2)
	clk := &clock{t: time.Unix(1_800_000_000, 0)} // never advanced: no check runs
	r, f := startReloader(t, a, WithClock(clk.Now))
	addr := serve(t, r)

	f.write(t, b.cert, b.key)
	if err := r.Reload(); err != nil {
		t.Fatalf("Reload() = %v, want nil", err)
	}
	if got := served(t, addr, a, b); got.SerialNumber.Cmp(b.leaf.SerialNumber) != 0 {
		t.Errorf("served serial %v after Reload, want %v", got.SerialNumber, b.leaf.SerialNumber)
	}
}

func TestBrokenPairKeepsPrevious(t *testing.T) {
	a, b, c := newPair(t, "a", 1), newPair(t, "b", 2), newPair(t, "c", 3)
	tests := []struct {
		name      string
		cert, key []byte
		wantErr   string
	}{
		{"garbage key", b.cert, []byte("garbage"), "key input"},
		{"empty key", b.cert, nil, "key input"},
		{"mismatched key", b.cert, c.key, "does not match"},
		{"half-written cert", b.cert[:len(b.cert)/2], b.key, "certificate input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			clk := &clock{t: time.Unix(1_800_000_000, 0)}
			r, f := startReloader(t, a, WithClock(clk.Now), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			addr := serve(t, r)
			f.write(t, tt.cert, tt.key)

			// A check finds the broken pair: the previous certificate is served, the failure logged.
			for range 3 {
				clk.Advance(defaultCheckInterval)
				if got := served(t, addr, a, b); got.SerialNumber.Cmp(a.leaf.SerialNumber) != 0 {
					t.Fatalf("served serial %v with a broken pair, want %v", got.SerialNumber, a.leaf.SerialNumber)
				}
			}
			if n := strings.Count(logs.String(), "reload failed"); n != 1 {
				t.Errorf("logged %d reload failures over three checks of one broken pair, want 1; logs:\n%s", n, logs.String())
			}

			err := r.Reload()
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) ||
				!strings.Contains(err.Error(), f.cert) || !strings.Contains(err.Error(), f.key) {
				t.Fatalf("Reload() = %v, want an error naming %s and %s and saying %q", err, f.cert, f.key, tt.wantErr)
			}
			if got := served(t, addr, a, b); got.SerialNumber.Cmp(a.leaf.SerialNumber) != 0 {
				t.Fatalf("served serial %v after a failed Reload, want %v", got.SerialNumber, a.leaf.SerialNumber)
			}

			// The next good pair is picked up at the next check.
			f.write(t, b.cert, b.key)
			clk.Advance(defaultCheckInterval)
			if got := served(t, addr, a, b); got.SerialNumber.Cmp(b.leaf.SerialNumber) != 0 {
				t.Errorf("served serial %v after the pair was fixed, want %v", got.SerialNumber, b.leaf.SerialNumber)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	a, b := newPair(t, "a", 1), newPair(t, "b", 2)
	dir := t.TempDir()
	file := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	certA, keyA, keyB := file("a.crt", a.cert), file("a.key", a.key), file("b.key", b.key)
	garbage, missing := file("garbage.pem", []byte("not PEM")), filepath.Join(dir, "missing.pem")
	tests := []struct {
		name          string
		cert, key     string
		wantIn        string
		wantNotExists bool
	}{
		{"missing cert", missing, keyA, "stat " + missing, true},
		{"missing key", certA, missing, "stat " + missing, true},
		{"mismatched pair", certA, keyB, "does not match", false},
		{"garbage cert", garbage, keyA, "certificate input", false},
		{"garbage key", certA, garbage, "key input", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(tt.cert, tt.key)
			if err == nil {
				t.Fatalf("New(%q, %q) = %v, nil; want an error", tt.cert, tt.key, r)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.cert) || !strings.Contains(msg, tt.key) || !strings.Contains(msg, tt.wantIn) {
				t.Errorf("New(%q, %q) error = %q, want it to name both files and say %q", tt.cert, tt.key, msg, tt.wantIn)
			}
			if got := errors.Is(err, fs.ErrNotExist); got != tt.wantNotExists {
				t.Errorf("errors.Is(New(%q, %q) error, fs.ErrNotExist) = %v, want %v", tt.cert, tt.key, got, tt.wantNotExists)
			}
		})
	}
}

func TestWatchSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGHUP on Windows")
	}
	a, b := newPair(t, "a", 1), newPair(t, "b", 2)
	r, f := startReloader(t, a, WithCheckInterval(0))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r.WatchSignals(ctx, syscall.SIGHUP)

	f.write(t, b.cert, b.key)
	p, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); r.Certificate().Leaf.SerialNumber.Cmp(b.leaf.SerialNumber) != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Certificate() serial still %v after SIGHUP, want %v", r.Certificate().Leaf.SerialNumber, b.leaf.SerialNumber)
		}
	}
}

// TestConcurrentHandshakes runs handshakes while the files are rewritten and checks come due, so
// that the race detector sees loads and handshakes overlap. Every handshake must succeed.
func TestConcurrentHandshakes(t *testing.T) {
	a, b := newPair(t, "a", 1), newPair(t, "b", 2)
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	r, f := startReloader(t, a, WithClock(clk.Now))
	addr := serve(t, r)

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := dial(addr, clientConfig(a.leaf, b.leaf)); err != nil {
					t.Errorf("handshake during reloads: %v", err)
					return
				}
			}
		})
	}
	for i := range 20 {
		p := a
		if i%2 == 0 {
			p = b
		}
		f.write(t, p.cert, p.key)
		clk.Advance(defaultCheckInterval)
		runtime.Gosched()
	}
	wg.Wait()
	clk.Advance(defaultCheckInterval)
	if got := served(t, addr, a, b); got.SerialNumber.Cmp(a.leaf.SerialNumber) != 0 {
		t.Errorf("served serial %v after the last write, want %v", got.SerialNumber, a.leaf.SerialNumber)
	}
}

// pair is a self-signed certificate for 127.0.0.1 and its key, PEM-encoded.
type pair struct {
	cert, key []byte
	leaf      *x509.Certificate
}

func newPair(tb testing.TB, commonName string, serial int64) pair {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own root, so a client can verify it
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return pair{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		leaf: leaf,
	}
}

// files is a certificate file and a key file in a test's directory.
type files struct {
	cert, key string
	n         int // writes so far; the nth write stamps the files n seconds after a fixed time
}

// write replaces both files' contents. File systems stamp modification times with a coarse
// clock, so two writes in quick succession could share a stamp; each write sets a distinct one.
func (f *files) write(tb testing.TB, cert, key []byte) {
	tb.Helper()
	f.n++
	mod := time.Unix(1_700_000_000+int64(f.n), 0)
	for _, w := range []struct {
		path string
		data []byte
	}{{f.cert, cert}, {f.key, key}} {
		if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
			tb.Fatal(err)
		}
		if err := os.Chtimes(w.path, mod, mod); err != nil {
			tb.Fatal(err)
		}
	}
}

// startReloader writes p to a new directory and returns a Reloader for it.
func startReloader(tb testing.TB, p pair, opts ...Option) (*Reloader, *files) {
	tb.Helper()
	dir := tb.TempDir()
	f := &files{cert: filepath.Join(dir, "tls.crt"), key: filepath.Join(dir, "tls.key")}
	f.write(tb, p.cert, p.key)
	r, err := New(f.cert, f.key, opts...)
	if err != nil {
		tb.Fatalf("New(%q, %q) = %v", f.cert, f.key, err)
	}
	return r, f
}

// serve serves HTTPS on 127.0.0.1 with r's Config, as the server does, and returns the address.
func serve(tb testing.TB, r *Reloader) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }),
		TLSConfig:         r.Config(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // refused handshakes are expected
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	tb.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// clientConfig trusts roots and offers HTTP/2.
func clientConfig(roots ...*x509.Certificate) *tls.Config {
	pool := x509.NewCertPool()
	for _, c := range roots {
		pool.AddCert(c)
	}
	return &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}}
}

// dial completes a handshake on a new connection to addr and returns the leaf served.
func dial(addr string, cfg *tls.Config) (*x509.Certificate, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: cfg}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
}

// served returns the leaf served to a new connection that trusts the given pairs.
func served(tb testing.TB, addr string, trusted ...pair) *x509.Certificate {
	tb.Helper()
	var roots []*x509.Certificate
	for _, p := range trusted {
		roots = append(roots, p.leaf)
	}
	leaf, err := dial(addr, clientConfig(roots...))
	if err != nil {
		tb.Fatalf("handshake with %s: %v", addr, err)
	}
	return leaf
}

// clock is a fake clock for WithClock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a bytes.Buffer safe for a logger used by concurrent handshakes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
