package blob_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capcat/catalogue/blob"
)

// openMemo is the embedded S3 with its Store as the server opens it: listings kept while
// nothing was written.
func openMemo(t *testing.T) *blob.Store {
	t.Helper()
	s, emb, err := blob.OpenEmbedded(context.Background(), blob.Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	return s
}

// list lists a job's artifacts and returns their names and the S3 requests sent.
func list(t *testing.T, s *blob.Store, job string) ([]string, int) {
	t.Helper()
	ctx, stats := blob.WithStats(context.Background())
	l, err := s.ListArtifacts(ctx, "CAP-ALERT-MGT-001", job, blob.ArtifactListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range l.Artifacts {
		names = append(names, a.Name)
	}
	return names, stats.Snapshot().Requests
}

// On the embedded S3 a repeated listing (a job's artifacts, a component's archived hours) sends
// no request while nothing was written; a put through the Store, a presigned upload from
// outside and an archived hour written are seen by the next listing.
func TestEmbeddedListingsMemo(t *testing.T) {
	s := openMemo(t)
	ctx := context.Background()
	const job = "JOB-DEPLOY-456"
	if err := s.PutArtifact(ctx, "CAP-ALERT-MGT-001", job, "logs/a.log", "", []byte("a")); err != nil {
		t.Fatal(err)
	}
	first, n := list(t, s, job)
	if n != 1 || !slices.Equal(first, []string{"logs/a.log"}) {
		t.Fatalf("first listing = %v, %d requests; want logs/a.log, 1", first, n)
	}
	if again, n := list(t, s, job); n != 0 || !slices.Equal(again, first) {
		t.Errorf("repeated listing = %v, %d requests; want the same, 0", again, n)
	}
	// A presigned upload, as a pipeline sends it, goes around the Store.
	up, err := s.PresignUpload(ctx, "CAP-ALERT-MGT-001", job, "logs/b.log", "text/plain")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(up.Method, up.URL, strings.NewReader("b"))
	for k, v := range up.Headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("presigned PUT = %v, %v", resp, err)
	}
	resp.Body.Close()
	if got, n := list(t, s, job); n != 1 || !slices.Equal(got, []string{"logs/a.log", "logs/b.log"}) {
		t.Errorf("listing after a presigned upload = %v, %d requests; want both, 1", got, n)
	}

	hour := testNow.Add(-48 * time.Hour).Truncate(time.Hour)
	hours := func() ([]blob.ArchivedHour, int) {
		t.Helper()
		ctx, stats := blob.WithStats(ctx)
		h, _, err := s.ListArchivedHours(ctx, "CAP-ALERT-MGT-001", "api-server-alert-001", time.Time{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return h, stats.Snapshot().Requests
	}
	if h, n := hours(); len(h) != 0 || n != 1 {
		t.Fatalf("hours = %v, %d requests; want none, 1", h, n)
	}
	if h, n := hours(); len(h) != 0 || n != 0 {
		t.Errorf("repeated hours = %v, %d requests; want none, 0", h, n)
	}
	if err := s.PutMetricsObject(ctx, blob.MetricsKey("CAP-ALERT-MGT-001", "api-server-alert-001", hour), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if h, n := hours(); len(h) != 1 || !h[0].Hour.Equal(hour) || n != 1 {
		t.Errorf("hours after an hour was written = %v, %d requests; want %s, 1", h, n, hour)
	}
}

// Listings racing puts through the Store (-race): no listing misses an artifact whose put had
// returned before the listing began.
func TestEmbeddedListingsMemoInterleaved(t *testing.T) {
	s := openMemo(t)
	ctx := context.Background()
	const job, puts = "JOB-DEPLOY-789", 40
	var done atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range puts {
			if err := s.PutArtifact(ctx, "CAP-ALERT-MGT-001", job, fmt.Sprintf("logs/%03d.log", i), "", []byte("x")); err != nil {
				t.Error(err)
				return
			}
			done.Add(1)
		}
	}()
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < puts {
				before := done.Load()
				l, err := s.ListArtifacts(ctx, "CAP-ALERT-MGT-001", job, blob.ArtifactListOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				if int64(len(l.Artifacts)) < before {
					t.Errorf("listing shows %d artifacts after %d puts had returned", len(l.Artifacts), before)
					return
				}
			}
		}()
	}
	wg.Wait()
}
