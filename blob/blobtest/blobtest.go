// Package blobtest starts an in-process S3 (gofakes3) for tests, behind a handler that records
// each request and fails those a test says: the S3 half of dynamotest.
package blobtest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/capcat/catalogue/blob"
)

// Faults is an http.Handler around gofakes3 that records each S3 request as "METHOD path" (the
// query dropped) and, when fail is set and says so, answers it with a 500 InternalError instead.
type Faults struct {
	next http.Handler
	mu   sync.Mutex
	fail func(method, key string) bool
	log  []string
}

func (f *Faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.log = append(f.log, r.Method+" "+r.URL.Path)
	fail := f.fail
	f.mu.Unlock()
	if fail != nil && fail(r.Method, r.URL.Path) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected fault</Message></Error>`)
		return
	}
	f.next.ServeHTTP(w, r)
}

// Set installs fail (nil clears it) and clears the log.
func (f *Faults) Set(fail func(method, key string) bool) {
	f.mu.Lock()
	f.fail, f.log = fail, nil
	f.mu.Unlock()
}

// Requests returns the requests seen since the last Set.
func (f *Faults) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

// Env is an embedded S3 behind Faults, and a Store over it with its buckets made.
type Env struct {
	S3     *blob.Embedded
	Client *s3.Client
	Faults *Faults
	Store  *blob.Store
}

// New starts an Env whose Store has opts (with the embedded server's presigning keys and a
// silent logger), with the SDK's retries off so that an injected fault is seen by the code
// under test. The server stops when the test ends.
func New(tb testing.TB, now func() time.Time, opts blob.Options) *Env {
	tb.Helper()
	e := &Env{}
	emb, err := blob.StartEmbedded(func(h http.Handler) http.Handler {
		e.Faults = &Faults{next: h}
		return e.Faults
	})
	if err != nil {
		tb.Fatalf("StartEmbedded(wrap) = %v", err)
	}
	tb.Cleanup(func() { _ = emb.Close() })
	ctx := context.Background()
	client, err := blob.NewClient(ctx, blob.ClientConfig{Endpoint: emb.URL, MaxAttempts: 1, AccessKeyID: emb.Key})
	if err != nil {
		tb.Fatalf("NewClient(%s) = %v", emb.URL, err)
	}
	opts.Now, opts.PresignAccessKeyID, opts.UploadAccessKeyID = now, emb.PresignKey, emb.UploadKey
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	e.S3, e.Client, e.Store = emb, client, blob.New(client, opts)
	if err := e.Store.EnsureBuckets(ctx); err != nil {
		tb.Fatalf("EnsureBuckets() = %v", err)
	}
	e.Faults.Set(nil)
	return e
}
