package blob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/internal/budget"
	"github.com/capcat/catalogue/sample"
)

func TestValidateArtifactName(t *testing.T) {
	long := strings.Repeat("a", blob.MaxArtifactNameLength-4) + ".log"
	tests := []struct {
		name string
		ok   bool
	}{
		{blob.ArtifactDeploymentPlan, true},
		{blob.ArtifactDeploymentLog, true},
		{blob.ArtifactPerformanceBaseline, true},
		{"reports/k6/run_2.html", true},
		{long, true},
		{"a/b/c/d/e/f/g/h.txt", true},
		{"", false},
		{"..", false},
		{".", false},
		{"../x", false},
		{"logs/../../other-job/plan.yaml", false},
		{"logs/./deployment.log", false},
		{"/etc/passwd", false},
		{"a//b", false},
		{"logs/", false},
		{`a\b`, false},
		{`logs\..\x`, false},
		{".env", false},
		{"logs/deploy ment.log", false},
		{"logs/%2e%2e/x", false},
		{"logs/dépl.log", false},
		{"logs/a\x00b", false},
		{long + "x", false},
		{strings.Repeat("a/", blob.MaxArtifactNameDepth) + "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name[:min(len(tt.name), 40)], func(t *testing.T) {
			err := blob.ValidateArtifactName(tt.name)
			if tt.ok && err != nil {
				t.Errorf("ValidateArtifactName(%q) = %v, want nil", tt.name, err)
			}
			if !tt.ok && !isValidation(err, "name") {
				t.Errorf("ValidateArtifactName(%q) = %v, want a validation error on name", tt.name, err)
			}
		})
	}
}

func TestPresignRejects(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name, capabilityID, jobID, artifact, contentType, field string
	}{
		{"traversal", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "../x", "", "name"},
		{"absolute", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "/etc/passwd", "", "name"},
		{"empty segment", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "a//b", "", "name"},
		{"backslash", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", `a\b`, "", "name"},
		{"dot-dot", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "..", "", "name"},
		{"very long", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", strings.Repeat("x", 5000), "", "name"},
		{"forged job", "CAP-ALERT-MGT-001", "JOB-1/../JOB-2", "x.log", "", "jobId"},
		{"forged capability", "../CAP", "JOB-DEPLOY-456", "x.log", "", "capabilityId"},
		{"not a media type", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "x.log", "text", "contentType"},
		{"header injection", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "x.log", "text/plain\r\nX-Evil: 1", "contentType"},
		{"long content type", "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "x.log", "text/" + strings.Repeat("a", blob.MaxContentTypeLength), "contentType"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := e.store.PresignUpload(ctx, tt.capabilityID, tt.jobID, tt.artifact, tt.contentType); !isValidation(err, tt.field) {
				t.Errorf("PresignUpload(%q, %q, %.40q, %q) = %v, want a validation error on %s", tt.capabilityID, tt.jobID, tt.artifact, tt.contentType, err, tt.field)
			}
			if tt.field != "contentType" {
				if _, err := e.store.PresignDownload(ctx, tt.capabilityID, tt.jobID, tt.artifact); !isValidation(err, tt.field) {
					t.Errorf("PresignDownload(%q, %q, %.40q) = %v, want a validation error on %s", tt.capabilityID, tt.jobID, tt.artifact, err, tt.field)
				}
			}
		})
	}
	if got := e.faults.Requests(); len(got) != 0 {
		t.Errorf("rejected presign requests sent %v to S3, want nothing", got)
	}
}

// do sends a request with a plain HTTP client (no AWS SDK, no credentials).
func do(tb testing.TB, method, url string, headers map[string]string, body []byte) (int, []byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("NewRequest(%s %s) = %v", method, url, err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s = %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp.StatusCode, b, resp.Header
}

func TestPresignedURLsWithPlainHTTP(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const capID, jobID = "CAP-ALERT-MGT-001", "JOB-DEPLOY-999"
	body := []byte(`{"suite":"smoke","passed":12,"failed":0}` + "\n")

	put, err := e.store.PresignUpload(ctx, capID, jobID, "reports/smoke.json", "")
	if err != nil {
		t.Fatalf("PresignUpload(reports/smoke.json) = %v", err)
	}
	wantKey := "capabilities/" + capID + "/jobs/" + jobID + "/reports/smoke.json"
	if put.Method != http.MethodPut || put.Key != wantKey || put.Headers["Content-Type"] != "application/json" || put.Bucket != blob.DefaultArtifactsBucket {
		t.Errorf("PresignUpload(reports/smoke.json) = %s %s/%s %v, want PUT %s/%s with Content-Type application/json", put.Method, put.Bucket, put.Key, put.Headers, blob.DefaultArtifactsBucket, wantKey)
	}
	for _, p := range []string{"X-Amz-Signature=", "X-Amz-Expires=900", "X-Amz-SignedHeaders="} {
		if !strings.Contains(put.URL, p) {
			t.Errorf("PresignUpload URL %s lacks %s", put.URL, p)
		}
	}
	if want := testNow.Add(blob.DefaultPresignExpiry); !put.Expires.Equal(want) {
		t.Errorf("PresignUpload expires %v, want %v", put.Expires, want)
	}
	if code, b, _ := do(t, put.Method, put.URL, put.Headers, body); code != http.StatusOK {
		t.Fatalf("PUT presigned URL = %d %s, want 200", code, b)
	}

	get, err := e.store.PresignDownload(ctx, capID, jobID, "reports/smoke.json")
	if err != nil {
		t.Fatalf("PresignDownload(reports/smoke.json) = %v", err)
	}
	code, got, hdr := do(t, get.Method, get.URL, nil, nil)
	if code != http.StatusOK || !bytes.Equal(got, body) {
		t.Errorf("GET presigned URL = %d %q, want 200 %q", code, got, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET presigned URL Content-Type = %q, want application/json", ct)
	}

	list, err := e.store.ListArtifacts(ctx, capID, jobID, blob.ArtifactListOptions{})
	if err != nil || len(list.Artifacts) != 1 {
		t.Fatalf("ListArtifacts(%s) = %+v, %v; want the one uploaded", jobID, list, err)
	}
	a := list.Artifacts[0]
	if a.Name != "reports/smoke.json" || a.Key != wantKey || a.Size != int64(len(body)) || a.URI != "s3://"+blob.DefaultArtifactsBucket+"/"+wantKey || a.LastModified.IsZero() {
		t.Errorf("ListArtifacts(%s)[0] = %+v", jobID, a)
	}
	if code, got, _ := do(t, http.MethodGet, a.DownloadURL, nil, nil); code != http.StatusOK || !bytes.Equal(got, body) {
		t.Errorf("GET ListArtifacts DownloadURL = %d %q, want 200 %q", code, got, body)
	}
	// A missing artifact: the presigned URL answers 404.
	miss, err := e.store.PresignDownload(ctx, capID, jobID, "logs/none.log")
	if err != nil {
		t.Fatalf("PresignDownload(logs/none.log) = %v", err)
	}
	if code, _, _ := do(t, miss.Method, miss.URL, nil, nil); code != http.StatusNotFound {
		t.Errorf("GET presigned URL of a missing artifact = %d, want 404", code)
	}
}

func TestSampleArtifacts(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	bundles := sample.Catalogue(testNow)
	n, err := sample.LoadArtifacts(ctx, e.store, bundles)
	if err != nil {
		t.Fatalf("LoadArtifacts(sample) = %d, %v", n, err)
	}
	jobs := 0
	for _, b := range bundles {
		jobs += len(b.Jobs)
	}
	if n < jobs {
		t.Errorf("LoadArtifacts(sample) = %d objects for %d jobs, want at least a plan each", n, jobs)
	}

	sctx, stats := blob.WithStats(ctx)
	list, err := e.store.ListArtifacts(sctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", blob.ArtifactListOptions{StoredContentTypes: true})
	if err != nil {
		t.Fatalf("ListArtifacts(JOB-DEPLOY-456) = %v", err)
	}
	want := []string{blob.ArtifactDeploymentPlan, blob.ArtifactDeploymentLog, blob.ArtifactPostDeploymentLog, blob.ArtifactPreDeploymentLog, blob.ArtifactPerformanceBaseline, blob.ArtifactTestResults}
	var names []string
	types := map[string]string{}
	for _, a := range list.Artifacts {
		names = append(names, a.Name)
		types[a.Name] = a.ContentType
	}
	if !slices.Equal(names, want) || list.Truncated {
		t.Errorf("ListArtifacts(JOB-DEPLOY-456) = %v (truncated %v), want %v", names, list.Truncated, want)
	}
	if s := stats.Snapshot(); s.Requests != 1+len(want) || s.Operations["ListObjectsV2"] != 1 || s.Operations["HeadObject"] != len(want) {
		t.Errorf("ListArtifacts(StoredContentTypes) S3 requests = %+v, want 1 ListObjectsV2 and %d HeadObject", s, len(want))
	}
	for name, ct := range map[string]string{blob.ArtifactDeploymentPlan: "application/yaml", blob.ArtifactDeploymentLog: "text/plain; charset=utf-8", blob.ArtifactTestResults: "application/json"} {
		if types[name] != ct {
			t.Errorf("ListArtifacts(JOB-DEPLOY-456) %s content type = %q, want %q", name, types[name], ct)
		}
	}

	read := func(name string) string {
		t.Helper()
		b, _, err := e.store.GetArtifact(ctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", name)
		if err != nil {
			t.Fatalf("GetArtifact(JOB-DEPLOY-456, %s) = %v", name, err)
		}
		return string(b)
	}
	plan := read(blob.ArtifactDeploymentPlan)
	for _, s := range []string{"jobId: JOB-DEPLOY-456", "componentId: api-server-alert-001", `toVersion: "1.6.0"`, `fromVersion: "2.3.0"`, `type: "rolling"`, "percentage: 10"} {
		if !strings.Contains(plan, s) {
			t.Errorf("deployment-plan.yaml of JOB-DEPLOY-456 lacks %q:\n%s", s, plan)
		}
	}
	line := regexp.MustCompile(`^2025-11-22T10:\d\d:\d\d\.\d{3}Z (INFO |WARN |ERROR) \[[a-z-]+\] .+$`)
	for _, name := range []string{blob.ArtifactPreDeploymentLog, blob.ArtifactDeploymentLog, blob.ArtifactPostDeploymentLog} {
		lines := strings.Split(strings.TrimSuffix(read(name), "\n"), "\n")
		if len(lines) < 5 {
			t.Errorf("%s of JOB-DEPLOY-456 has %d lines, want a real log", name, len(lines))
		}
		for _, l := range lines {
			if !line.MatchString(l) {
				t.Errorf("%s of JOB-DEPLOY-456: line %q is not `time LEVEL [phase] message` within the job", name, l)
			}
		}
	}
	var tr struct {
		JobID   string `json:"jobId"`
		Summary struct {
			Total, Passed, Failed int
			Status                string
		} `json:"summary"`
		Suites []json.RawMessage `json:"suites"`
	}
	if err := json.Unmarshal([]byte(read(blob.ArtifactTestResults)), &tr); err != nil || tr.JobID != "JOB-DEPLOY-456" || len(tr.Suites) != 6 || tr.Summary.Status != "passed" || tr.Summary.Passed != tr.Summary.Total {
		t.Errorf("test-results.json of JOB-DEPLOY-456 = %+v, %v; want 6 passed suites", tr, err)
	}
	var pb struct {
		Components []struct {
			ComponentID string `json:"componentId"`
			Candidate   struct {
				Version string `json:"version"`
			} `json:"candidate"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(read(blob.ArtifactPerformanceBaseline)), &pb); err != nil || len(pb.Components) != 2 || pb.Components[0].Candidate.Version != "1.6.0" {
		t.Errorf("performance-baseline.json of JOB-DEPLOY-456 = %+v, %v; want the two targets at their new versions", pb, err)
	}

	// A running job has no post-deployment log and no reports yet.
	running, err := e.store.ListArtifacts(ctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-457", blob.ArtifactListOptions{})
	if err != nil {
		t.Fatalf("ListArtifacts(JOB-DEPLOY-457) = %v", err)
	}
	names = nil
	for _, a := range running.Artifacts {
		names = append(names, a.Name)
	}
	if want := []string{blob.ArtifactDeploymentPlan, blob.ArtifactDeploymentLog, blob.ArtifactPreDeploymentLog}; !slices.Equal(names, want) {
		t.Errorf("ListArtifacts(JOB-DEPLOY-457, running) = %v, want %v", names, want)
	}

	// The artifacts are the same for the same catalogue.
	if _, err := sample.LoadArtifacts(ctx, e.store, sample.Catalogue(testNow)); err != nil {
		t.Fatalf("LoadArtifacts(sample) again = %v", err)
	}
	if got := read(blob.ArtifactDeploymentPlan); got != plan {
		t.Errorf("deployment-plan.yaml of JOB-DEPLOY-456 changed when loaded again")
	}
}

func TestListArtifactsEmptyAndMissingBucket(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	list, err := e.store.ListArtifacts(ctx, "CAP-ALERT-MGT-001", "JOB-NONE-1", blob.ArtifactListOptions{})
	if err != nil || len(list.Artifacts) != 0 {
		t.Errorf("ListArtifacts(JOB-NONE-1) = %+v, %v; want an empty list", list, err)
	}
	client, err := blob.NewClient(ctx, blob.ClientConfig{Endpoint: e.s3.URL, MaxAttempts: 1, AccessKeyID: e.s3.Key})
	if err != nil {
		t.Fatalf("NewClient() = %v", err)
	}
	other := blob.New(client, blob.Options{ArtifactsBucket: "no-such-bucket"})
	if _, err := other.ListArtifacts(ctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", blob.ArtifactListOptions{}); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("ListArtifacts() in a missing bucket = %v, want an error wrapping ErrNotFound", err)
	}
	if err := other.Ping(ctx); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Ping() with a missing bucket = %v, want an error wrapping ErrNotFound", err)
	}
	if err := e.store.Ping(ctx); err != nil {
		t.Errorf("Ping() = %v, want nil", err)
	}
	e.faults.Set(func(string, string) bool { return true })
	if err := e.store.Ping(ctx); !errors.Is(err, blob.ErrUnavailable) {
		t.Errorf("Ping() against a failing S3 = %v, want an error wrapping ErrUnavailable", err)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{blob.EnvEndpoint: "http://localhost:9000", blob.EnvMetricsBucket: "metrics-archive"}
	cc, opts := blob.FromEnv(func(k string) string { return env[k] })
	if cc.Endpoint != "http://localhost:9000" || opts.MetricsBucket != "metrics-archive" || opts.ArtifactsBucket != "" {
		t.Errorf("FromEnv(%v) = %+v, %+v", env, cc, opts)
	}
	client, err := blob.NewClient(context.Background(), cc)
	if err != nil {
		t.Fatalf("NewClient(%+v) = %v", cc, err)
	}
	s := blob.New(client, opts)
	if s.ArtifactsBucket() != blob.DefaultArtifactsBucket || s.MetricsBucket() != "metrics-archive" || s.MinArchiveAge() != blob.DefaultMinArchiveAge {
		t.Errorf("New(FromEnv) buckets = %s, %s, min age %s", s.ArtifactsBucket(), s.MetricsBucket(), s.MinArchiveAge())
	}
}

func TestOpenEmbedded(t *testing.T) {
	ctx := context.Background()
	s, emb, err := blob.OpenEmbedded(ctx, blob.Options{ArtifactsBucket: "deployments-test"})
	if err != nil {
		t.Fatalf("OpenEmbedded() = %v", err)
	}
	defer emb.Close()
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping() after OpenEmbedded = %v, want nil", err)
	}
	n, err := sample.LoadArtifacts(ctx, s, sample.Catalogue(time.Date(2025, 11, 22, 14, 32, 0, 0, time.UTC)))
	if err != nil || n == 0 {
		t.Fatalf("LoadArtifacts(sample) = %d, %v", n, err)
	}
	uris, err := s.JobArtifactURIs("CAP-ALERT-MGT-001", "JOB-DEPLOY-456")
	if err != nil || uris.DeploymentPlan != "s3://deployments-test/capabilities/CAP-ALERT-MGT-001/jobs/JOB-DEPLOY-456/deployment-plan.yaml" ||
		uris.Logs != "s3://deployments-test/capabilities/CAP-ALERT-MGT-001/jobs/JOB-DEPLOY-456/logs/" {
		t.Errorf("JobArtifactURIs(JOB-DEPLOY-456) = %+v, %v", uris, err)
	}
	if _, err := s.JobArtifactURIs("CAP-ALERT-MGT-001", "../JOB"); !isValidation(err, "jobId") {
		t.Errorf("JobArtifactURIs(../JOB) = %v, want a validation error on jobId", err)
	}
}

// Presigning makes no request, so it spends none of a query's S3 budget: a job's listing with
// six artifacts is one request and must pass under a budget of one. (It failed with
// REQUEST_BUDGET_EXCEEDED on the second presign: the presign clients ran the client's budget
// middleware, so an anonymous explorer page, whose budget is a quarter, lost job artifacts.)
func TestPresigningSpendsNoBudget(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := sample.LoadArtifacts(ctx, e.store, sample.Catalogue(testNow)); err != nil {
		t.Fatal(err)
	}
	sctx, stats := blob.WithStats(ctx)
	stats.Limit(1)
	list, err := e.store.ListArtifacts(sctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", blob.ArtifactListOptions{})
	if err != nil {
		t.Fatalf("ListArtifacts under a budget of 1 = %v", err)
	}
	if len(list.Artifacts) != 6 || list.Artifacts[0].DownloadURL == "" {
		t.Errorf("ListArtifacts = %d artifacts, first URL %q; want 6 with URLs", len(list.Artifacts), list.Artifacts[0].DownloadURL)
	}
	for _, presign := range []func() (*blob.PresignedRequest, error){
		func() (*blob.PresignedRequest, error) {
			return e.store.PresignDownload(sctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", blob.ArtifactDeploymentPlan)
		},
		func() (*blob.PresignedRequest, error) {
			return e.store.PresignUpload(sctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", blob.ArtifactDeploymentPlan, "")
		},
	} {
		if p, err := presign(); err != nil || p.URL == "" {
			t.Errorf("presign after the budget was spent = %+v, %v; want a URL", p, err)
		}
	}
	if s := stats.Snapshot(); s.Requests != 1 {
		t.Errorf("S3 requests = %+v, want the one ListObjectsV2", s)
	}
	// The budget still bounds real requests.
	if _, err := e.store.ListArtifacts(sctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", blob.ArtifactListOptions{}); !errors.Is(err, budget.ErrExceeded) {
		t.Errorf("a second ListArtifacts past the budget = %v, want budget.ErrExceeded", err)
	}
}
