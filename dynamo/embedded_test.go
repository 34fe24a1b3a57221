package dynamo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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

// The in-process client (inprocess.go) skips SigV4 and AWS's bookkeeping headers but still names
// its access key ID as the guard reads it; a client of any other endpoint (here a plain HTTP
// server standing for DynamoDB Local or AWS) still signs every request as the SDK does.
func TestInProcessShortcutsOnlyInProcess(t *testing.T) {
	ctx := context.Background()
	var inProc http.Header
	emb, err := dynamo.StartEmbedded(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inProc = r.Header.Clone()
			h.ServeHTTP(w, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.New(client, dynamo.Options{}).CreateTable(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, want := inProc.Get("Authorization"), "Credential="+emb.Key+"/"; !strings.Contains(got, want) {
		t.Errorf("in process: Authorization = %q, want it to contain %q", got, want)
	}
	for _, h := range []string{"X-Amz-Content-Sha256", "Amz-Sdk-Invocation-Id", "X-Amz-Date"} {
		if v := inProc.Get(h); v != "" {
			t.Errorf("in process: %s = %q, want none (no signing, no AWS bookkeeping)", h, v)
		}
	}
	signed := regexp.MustCompile(`Signature=[0-9a-f]{64}$`)
	if signed.MatchString(inProc.Get("Authorization")) {
		t.Errorf("in process: Authorization %q carries a signature", inProc.Get("Authorization"))
	}

	var remote http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remote = r.Header.Clone()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{"TableNames":[]}`))
	}))
	defer srv.Close()
	other, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: srv.URL, AccessKeyID: "LOCALREMOTE", MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.ListTables(ctx, &dynamodb.ListTablesInput{}); err != nil {
		t.Fatal(err)
	}
	auth := remote.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=LOCALREMOTE/") || !signed.MatchString(auth) {
		t.Errorf("endpoint client: Authorization = %q, want a SigV4 signature", auth)
	}
	for _, h := range []string{"Amz-Sdk-Invocation-Id", "X-Amz-Date"} {
		if remote.Get(h) == "" {
			t.Errorf("endpoint client: no %s header", h)
		}
	}
	if !strings.Contains(remote.Get("User-Agent"), "aws-sdk-go-v2") {
		t.Errorf("endpoint client: User-Agent = %q, want the SDK's", remote.Get("User-Agent"))
	}
}
