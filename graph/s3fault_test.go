package graph_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/sample"
)

// s3Fault is what the object store does to each request: nothing, answer 503 (down), or hold
// the request until its caller gives up (slow).
type s3Fault int32

const (
	s3Healthy s3Fault = iota
	s3Down
	s3Slow
)

// faultyS3 is a hybrid harness whose S3 fails as fault says, with direct access to its client.
type faultyS3 struct {
	*harness
	fault  atomic.Int32
	client *s3.Client
	store  *blob.Store
}

// newFaultyS3 serves the handler over an embedded S3 that fails on demand, with the sample
// artifacts.
func newFaultyS3(t *testing.T) *faultyS3 {
	t.Helper()
	f := &faultyS3{}
	emb, err := blob.StartEmbedded(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch s3Fault(f.fault.Load()) {
			case s3Down:
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>Please reduce your request rate.</Message><RequestId>REQ-S3-LEAK</RequestId></Error>`))
				return
			case s3Slow:
				<-r.Context().Done()
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	ctx := context.Background()
	f.client, err = blob.NewClient(ctx, blob.ClientConfig{Endpoint: emb.URL, AccessKeyID: emb.Key, MaxAttempts: 2, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f.store = blob.New(f.client, blob.Options{MinArchiveAge: 10 * time.Minute, Now: func() time.Time { return testNow },
		PresignAccessKeyID: emb.PresignKey, UploadAccessKeyID: emb.UploadKey})
	if err := f.store.EnsureBuckets(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sample.LoadArtifacts(ctx, f.store, sample.Catalogue(testNow)); err != nil {
		t.Fatal(err)
	}
	f.harness = newHarness(t)
	f.serve(0)
	return f
}

// serve replaces the handler by one whose requests have deadline (0: the default).
func (f *faultyS3) serve(deadline time.Duration) {
	f.handler = graph.NewHandler(f.env.Store, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }, Deadline: deadline,
		Artifacts: f.store, Archive: archive.New(f.env.Store, f.store, archive.Options{})})
}

const (
	artifactsQuery = `{ job(id: "JOB-DEPLOY-456") { jobId artifacts { name } } }`
	archivedQuery  = `query($from: DateTime) { componentMetrics(componentId: "api-server-alert-001", from: $from, first: 1000) { nodes { timestamp } } }`
)

const archiveMutation = `mutation($b: DateTime!) { archiveMetrics(before: $b) { objectsWritten } }`

// archiveVars archive every sample older than 30 minutes.
func archiveVars() map[string]any {
	return map[string]any{"b": testNow.Add(-30 * time.Minute).Format(time.RFC3339)}
}

// archive moves every sample older than 30 minutes to S3.
func (f *faultyS3) archive(t *testing.T) {
	t.Helper()
	f.ok(t, archiveMutation, archiveVars(), nil)
}

func archivedVars() map[string]any {
	return map[string]any{"from": testNow.Add(-6 * time.Hour).Format(time.RFC3339)}
}

// wantCode fails unless resp has exactly one error, with code, and no S3 text in it.
func wantCode(t *testing.T, what string, resp *gqlResponse, code string) {
	t.Helper()
	if len(resp.Errors) != 1 || resp.code(0) != code {
		t.Fatalf("%s: errors = %s, want one %s", what, resp.Body, code)
	}
	for _, leak := range []string{"REQ-S3-LEAK", "reduce your request rate", "operation error", "capability-", "StatusCode"} {
		if strings.Contains(resp.Body, leak) {
			t.Errorf("%s: the response tells the client %q: %s", what, leak, resp.Body)
		}
	}
}

// TestS3Down: an object store that answers 503 to everything is UNAVAILABLE to the client,
// for the archive, artifact listings and archived metrics, while what DynamoDB alone holds is
// still served; once it is back, so is everything.
func TestS3Down(t *testing.T) {
	f := newFaultyS3(t)
	f.fault.Store(int32(s3Down))
	wantCode(t, "archive with S3 down", f.do(t, archiveMutation, archiveVars()), "UNAVAILABLE")
	f.fault.Store(int32(s3Healthy))
	f.archive(t)
	f.fault.Store(int32(s3Down))
	wantCode(t, "artifacts with S3 down", f.do(t, artifactsQuery, nil), "UNAVAILABLE")
	wantCode(t, "archived metrics with S3 down", f.do(t, archivedQuery, archivedVars()), "UNAVAILABLE")
	f.ok(t, `{ job(id: "JOB-DEPLOY-456") { jobId status } }`, nil, nil)
	f.fault.Store(int32(s3Healthy))
	f.ok(t, artifactsQuery, nil, nil)
	f.ok(t, archivedQuery, archivedVars(), nil)
}

// TestS3Slow: an object store that does not answer before the request's deadline is TIMEOUT
// on the fields that need it.
func TestS3Slow(t *testing.T) {
	f := newFaultyS3(t)
	f.archive(t)
	f.serve(300 * time.Millisecond)
	f.fault.Store(int32(s3Slow))
	wantCode(t, "artifacts with S3 slow", f.do(t, artifactsQuery, nil), "TIMEOUT")
	wantCode(t, "archived metrics with S3 slow", f.do(t, archivedQuery, archivedVars()), "TIMEOUT")
}

// TestS3CorruptArchive: an archived metrics object that is not what the archive wrote is
// DATA_CORRUPT, not an internal error, and its key stays in the log.
func TestS3CorruptArchive(t *testing.T) {
	f := newFaultyS3(t)
	f.archive(t)
	ctx := context.Background()
	list, err := f.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(f.store.MetricsBucket()),
		Prefix: aws.String("capabilities/CAP-ALERT-MGT-001/components/api-server-alert-001/")})
	if err != nil || len(list.Contents) == 0 {
		t.Fatalf("list archived objects: %v, %d objects", err, len(list.Contents))
	}
	if _, err := f.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(f.store.MetricsBucket()), Key: list.Contents[0].Key,
		Body: bytes.NewReader([]byte("not gzip")), ContentType: aws.String(blob.MetricsContentType)}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "archived metrics with a corrupt object", f.do(t, archivedQuery, archivedVars()), "DATA_CORRUPT")
}
