// Package tlsreload serves a TLS certificate and key read from files, and reads them again when
// the files change or when asked to (on SIGHUP), so a renewed certificate is served without a
// restart.
package tlsreload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// defaultCheckInterval is how often, at most, handshakes look at the files.
const defaultCheckInterval = time.Second

// Reloader holds the certificate read from a certificate file and a key file. Its methods are
// safe for concurrent use.
type Reloader struct {
	certFile, keyFile string
	every             time.Duration
	now               func() time.Time
	log               *slog.Logger

	cert      atomic.Pointer[tls.Certificate]
	nextCheck atomic.Int64 // Unix nanoseconds before which handshakes do not look at the files

	mu     sync.Mutex // serialises loads and guards the fields below
	loaded stamp      // the files' state read before the served certificate was loaded
	logged failure    // the last failure logged, so that a broken pair is logged once
}

// stamp is what a check compares to tell that the files changed.
type stamp struct {
	certMod, keyMod   int64 // modification times, Unix nanoseconds
	certSize, keySize int64
}

// failure identifies a failed load for logging.
type failure struct {
	st  stamp
	msg string
}

// Option configures a Reloader.
type Option func(*Reloader)

// WithCheckInterval sets how often, at most, a handshake looks at the files' modification times
// and sizes; the default is one second. A d of zero or less turns the checks off: the
// certificate then changes only through Reload.
func WithCheckInterval(d time.Duration) Option {
	return func(r *Reloader) { r.every = d }
}

// WithClock sets the clock that paces the checks; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(r *Reloader) { r.now = now }
}

// WithLogger sets where reloads and failed checks are reported; by default they are not.
func WithLogger(l *slog.Logger) Option {
	return func(r *Reloader) {
		if l != nil {
			r.log = l
		}
	}
}

// New reads the PEM certificate chain in certFile and the PEM private key in keyFile. It returns
// an error naming both files when either cannot be read, holds no PEM data, or the key does not
// match the certificate.
func New(certFile, keyFile string, opts ...Option) (*Reloader, error) {
	r := &Reloader{
		certFile: certFile,
		keyFile:  keyFile,
		every:    defaultCheckInterval,
		now:      time.Now,
		log:      slog.New(slog.DiscardHandler),
	}
	for _, opt := range opts {
		opt(r)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reloadLocked(); err != nil {
		return nil, err
	}
	r.nextCheck.Store(r.now().Add(r.every).UnixNano())
	return r, nil
}

// Config returns a server configuration that serves the current certificate, with TLS 1.2 as the
// minimum version and HTTP/2 offered before HTTP/1.1. Each call returns a new Config. Leave its
// Certificates empty: crypto/tls serves Certificates[0] to clients that send no server name
// (those connecting to an IP address), bypassing the reloader.
func (r *Reloader) Config() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: r.getCertificate,
	}
}

// Certificate returns the certificate being served, its Leaf parsed. The caller must not modify
// it.
func (r *Reloader) Certificate() *tls.Certificate {
	return r.cert.Load()
}

// Reload reads the files now. It returns an error naming both files when they cannot be read or
// do not form a valid pair; the previous certificate is then still served.
func (r *Reloader) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reloadLocked()
}

// WatchSignals calls Reload each time the process receives one of sig (SIGHUP when none is
// given) until ctx is done, logging failures. The signals are being caught when it returns;
// after ctx is done they get their default behaviour back.
func (r *Reloader) WatchSignals(ctx context.Context, sig ...os.Signal) {
	if len(sig) == 0 {
		sig = []os.Signal{syscall.SIGHUP}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig...)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-ch:
				if err := r.Reload(); err != nil {
					r.log.Error("TLS certificate reload failed; serving the previous certificate",
						"signal", s.String(), "err", err)
				}
			}
		}
	}()
}

// getCertificate is the Config's GetCertificate: it serves the current certificate, first
// looking at the files when the check interval has passed.
func (r *Reloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.maybeCheck()
	return r.cert.Load(), nil
}

// maybeCheck looks at the files if the check interval has passed since the last look. One
// handshake per interval wins the compare-and-swap and does the look; the others go on with the
// current certificate without waiting.
func (r *Reloader) maybeCheck() {
	if r.every <= 0 {
		return
	}
	now := r.now().UnixNano()
	next := r.nextCheck.Load()
	if now < next || !r.nextCheck.CompareAndSwap(next, now+int64(r.every)) {
		return
	}
	r.check()
}

// check reloads the files when their modification times or sizes differ from those of the
// served pair. A failed load leaves the served pair's stamp in place, so the next check tries
// again; each distinct failure is logged once.
func (r *Reloader) check() {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, err := statPair(r.certFile, r.keyFile)
	if err == nil && st == r.loaded {
		return
	}
	if err = r.reloadLocked(); err == nil {
		return
	}
	f := failure{st: st, msg: err.Error()}
	if f != r.logged {
		r.logged = f
		r.log.Error("TLS certificate reload failed; serving the previous certificate", "err", err)
	}
}

// reloadLocked loads the pair and serves it. On failure it keeps the served certificate and
// returns the error. r.mu must be held.
func (r *Reloader) reloadLocked() error {
	st, cert, err := load(r.certFile, r.keyFile)
	if err != nil {
		return err
	}
	r.cert.Store(cert)
	r.loaded, r.logged = st, failure{}
	r.log.Info("TLS certificate loaded",
		"cert", r.certFile,
		"subject", cert.Leaf.Subject.String(),
		"serial", cert.Leaf.SerialNumber.String(),
		"not_after", cert.Leaf.NotAfter)
	return nil
}

// load reads the pair, stating the files first so that a change made while they are read shows
// at the next check. Its errors name both files.
func load(certFile, keyFile string) (stamp, *tls.Certificate, error) {
	st, cert, err := loadPair(certFile, keyFile)
	if err != nil {
		return stamp{}, nil, fmt.Errorf("load TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return st, cert, nil
}

func loadPair(certFile, keyFile string) (stamp, *tls.Certificate, error) {
	st, err := statPair(certFile, keyFile)
	if err != nil {
		return stamp{}, nil, err
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return stamp{}, nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return stamp{}, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return stamp{}, nil, err
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return stamp{}, nil, err
		}
	}
	return st, &cert, nil
}

// statPair returns the files' modification times and sizes.
func statPair(certFile, keyFile string) (stamp, error) {
	c, err := os.Stat(certFile)
	if err != nil {
		return stamp{}, err
	}
	k, err := os.Stat(keyFile)
	if err != nil {
		return stamp{}, err
	}
	return stamp{
		certMod: c.ModTime().UnixNano(), certSize: c.Size(),
		keyMod: k.ModTime().UnixNano(), keySize: k.Size(),
	}, nil
}
