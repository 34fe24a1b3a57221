package dynamo_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
)

// The embedded default's client (the Embedded as HTTPClient, as server.go builds it) serves
// memdyn in process: it keeps working with the loopback port closed, every request passes the
// wrap (the -data file's write hooks) and the guard, and a client with another key is refused.
func TestEmbeddedInProcess(t *testing.T) {
	var seen atomic.Int32
	emb, err := dynamo.StartEmbedded(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Add(1)
			h.ServeHTTP(w, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := emb.Close(); err != nil { // the port: no request below may need it
		t.Fatal(err)
	}
	ctx := context.Background()
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	store := dynamo.New(client, dynamo.Options{})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		t.Fatalf("CreateTable in process, port closed = %v", err)
	}
	if err := store.Ping(ctx); err != nil {
		t.Fatalf("Ping = %v", err)
	}
	if seen.Load() < 2 {
		t.Errorf("the wrap saw %d requests, want every one (at least 2)", seen.Load())
	}
	other, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: "LOCALNOTTHEKEY", HTTPClient: emb, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.New(other, dynamo.Options{}).Ping(ctx); err == nil {
		t.Error("a client without the embedded key was served in process")
	}
}
