package graph_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/sample"
)

// newHybridHarness is the harness with an in-process S3 (gofakes3) holding the sample
// artifacts, and an archive that may move anything older than 10 minutes.
func newHybridHarness(t *testing.T, opts ...func(*graph.Options)) *harness {
	t.Helper()
	objects, emb, err := blob.OpenEmbedded(context.Background(), blob.Options{MinArchiveAge: 10 * time.Minute, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	if _, err := sample.LoadArtifacts(context.Background(), objects, sample.Catalogue(testNow)); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	archiver := archive.New(h.env.Store, objects, archive.Options{})
	o := graph.Options{Logger: testLogger(), Introspection: true, Now: func() time.Time { return testNow }, Artifacts: objects, Archive: archiver}
	for _, f := range opts {
		f(&o)
	}
	h.handler = graph.NewHandler(h.env.Store, o)
	return h
}

func TestJobArtifacts(t *testing.T) {
	h := newHybridHarness(t)
	var out struct {
		Job struct {
			Artifacts []struct {
				Name, Key, ContentType, DownloadURL string
				Size                                int
			}
		}
	}
	resp := h.ok(t, `{ job(id: "JOB-DEPLOY-456") { artifacts { name key size contentType downloadUrl } } }`, nil, &out)
	names := map[string]bool{}
	for _, a := range out.Job.Artifacts {
		names[a.Name] = true
		if !strings.HasPrefix(a.Key, "capabilities/CAP-ALERT-MGT-001/jobs/JOB-DEPLOY-456/") || a.Size == 0 {
			t.Errorf("artifact %+v", a)
		}
	}
	for _, want := range []string{"deployment-plan.yaml", "logs/pre-deployment.log", "logs/deployment.log", "logs/post-deployment.log", "reports/test-results.json", "reports/performance-baseline.json"} {
		if !names[want] {
			t.Errorf("artifacts lack %s: %v", want, names)
		}
	}
	if !strings.Contains(resp.Body, `"s3":{"requests":1`) {
		t.Errorf("extensions.s3 = %s", resp.Body)
	}
	// The presigned URL works with a plain HTTP client.
	var plan string
	for _, a := range out.Job.Artifacts {
		if a.Name == "deployment-plan.yaml" {
			r, err := http.Get(a.DownloadURL)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			plan = string(b)
		}
	}
	if !strings.Contains(plan, "JOB-DEPLOY-456") {
		t.Errorf("downloaded plan = %q", plan)
	}

	// A pipeline uploads through a presigned PUT, and the artifact is listed.
	var up struct {
		CreateArtifactUpload struct {
			Method, URL string
			Headers     map[string]string
		}
	}
	h.ok(t, `mutation { createArtifactUpload(jobId: "JOB-DEPLOY-456", name: "logs/smoke.log", contentType: "text/plain") { method url headers } }`, nil, &up)
	req, _ := http.NewRequest(up.CreateArtifactUpload.Method, up.CreateArtifactUpload.URL, strings.NewReader("smoke ok\n"))
	for k, v := range up.CreateArtifactUpload.Headers {
		req.Header.Set(k, v)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("presigned PUT = %v, %v", r, err)
	}
	r.Body.Close()
	h.ok(t, `{ job(id: "JOB-DEPLOY-456") { artifacts { name } } }`, nil, &out)
	found := false
	for _, a := range out.Job.Artifacts {
		found = found || a.Name == "logs/smoke.log"
	}
	if !found {
		t.Error("uploaded artifact not listed")
	}
	for _, bad := range []string{"../other-job/x.log", "/etc/passwd", "logs//x", `logs\x`, ".."} {
		resp := h.do(t, `mutation($n: String!) { createArtifactUpload(jobId: "JOB-DEPLOY-456", name: $n, contentType: "text/plain") { url } }`, map[string]any{"n": bad})
		if resp.code(0) != "BAD_USER_INPUT" {
			t.Errorf("name %q: %s", bad, resp.Body)
		}
	}
}

// The last six hours of a component read the same before and after archiving everything older
// than 30 minutes, and the read after reports S3 requests.
func TestArchiveAndReadAcross(t *testing.T) {
	h := newHybridHarness(t)
	q := `query($from: DateTime) { componentMetrics(componentId: "api-server-alert-001", from: $from, first: 1000) { nodes { timestamp metricType values { latency { p95 } } } } }`
	vars := map[string]any{"from": testNow.Add(-6 * time.Hour).Format(time.RFC3339)}
	before := h.ok(t, q, vars, nil)
	var rep struct {
		ArchiveMetrics struct{ ObjectsWritten, PointsArchived, ItemsDeleted int }
	}
	h.ok(t, `mutation($b: DateTime!) { archiveMetrics(before: $b) { objectsWritten pointsArchived itemsDeleted } }`, map[string]any{"b": testNow.Add(-30 * time.Minute).Format(time.RFC3339)}, &rep)
	if rep.ArchiveMetrics.ObjectsWritten == 0 || rep.ArchiveMetrics.PointsArchived != rep.ArchiveMetrics.ItemsDeleted {
		t.Errorf("archive report = %+v", rep.ArchiveMetrics)
	}
	after := h.ok(t, q, vars, nil)
	if string(before.Data) != string(after.Data) {
		t.Errorf("metrics differ after archiving:\nbefore %s\nafter  %s", before.Data, after.Data)
	}
	var ext struct {
		Extensions struct{ S3 struct{ Requests int } }
	}
	_ = json.Unmarshal([]byte(after.Body), &ext)
	if ext.Extensions.S3.Requests < 2 {
		t.Errorf("read after archiving reports %d S3 requests: %s", ext.Extensions.S3.Requests, after.Body)
	}
	resp := h.do(t, `mutation { archiveMetrics(before: "2999-01-01T00:00:00Z") { objectsWritten } }`, nil)
	if resp.code(0) != "BAD_USER_INPUT" {
		t.Errorf("archive of the future = %s", resp.Body)
	}
}

// A capability's metrics window that reaches the archive is read once per request: the
// planner's prefetch starts it the way the resolver reads it (through the archive), so each
// component's range is one Query. It was read twice (the prefetch read the table alone, then
// the resolver read it again through the archive: 4 wasted Queries on the explorer's
// capability page of the default server, whose archive may move samples older than 10 minutes).
func TestArchivedMetricsWindowReadOnce(t *testing.T) {
	h := newHybridHarness(t)
	q := `query($from: DateTime!) { capability(id: "CAP-ALERT-MGT-001") {
		components { componentId }
		metrics(metricType: PERFORMANCE, from: $from, first: 1000) { nodes { componentId timestamp } }
	} }`
	var out struct {
		Capability struct {
			Components []struct{ ComponentID string }
			Metrics    struct {
				Nodes []struct{ ComponentID string }
			}
		}
	}
	resp := h.ok(t, q, map[string]any{"from": testNow.Add(-6 * time.Hour).Format(time.RFC3339)}, &out)
	comps := len(out.Capability.Components)
	if comps == 0 || len(out.Capability.Metrics.Nodes) == 0 {
		t.Fatalf("no components or metrics: %s", resp.Body)
	}
	// The metadata, the components' range, and one Query per component's metrics.
	ops := resp.Extensions.DynamoDB.Operations
	if ops["BatchGetItem"] != 1 || ops["Query"] != 1+comps || resp.Extensions.DynamoDB.Requests != 2+comps {
		t.Errorf("DynamoDB requests = %+v, want 1 BatchGetItem and %d Queries (the components, then one per component)", resp.Extensions.DynamoDB, 1+comps)
	}
}

// The explorer's capability page, for a caller without a key, on a server whose archive has
// moved everything older than 10 minutes (the default server does so 10 minutes after it
// starts): its 6-hour metrics window reads an archived hour per component and hour, and its
// jobs list their artifacts. It ran out of the anonymous S3 budget (a quarter of 100): the
// metrics field failed with REQUEST_BUDGET_EXCEEDED, and the capability with it. A second load
// sends no S3 request.
func TestAnonymousCapabilityPageAfterArchive(t *testing.T) {
	h := newHybridHarness(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, "admin "+graph.HashKey("admin-key")+" ops"), Anonymous: graph.RoleViewer}
	})
	rep := h.doAs(t, "admin-key", `mutation($b: DateTime!) { archiveMetrics(before: $b) { objectsWritten } }`, map[string]any{"b": testNow.Add(-10 * time.Minute).Format(time.RFC3339)})
	if len(rep.Errors) > 0 || !strings.Contains(string(rep.Data), `"objectsWritten":`) || strings.Contains(string(rep.Data), `"objectsWritten":0`) {
		t.Fatalf("archiveMetrics = %s", rep.Body)
	}
	page := `query($from: DateTime!) { capability(id: "CAP-ALERT-MGT-001") {
		name
		jobs(first: 4) { nodes { jobId artifacts { name downloadUrl } } }
		metrics(metricType: PERFORMANCE, from: $from, first: 1000) { nodes { componentId timestamp values { availability { value } } } }
	} }`
	vars := map[string]any{"from": testNow.Add(-6 * time.Hour).Format(time.RFC3339)}
	type s3ext struct {
		Extensions struct {
			S3 struct {
				Requests   int
				Operations map[string]int
			}
		}
	}
	var loads []s3ext
	for range 2 {
		resp := h.doAs(t, "", page, vars)
		var out struct {
			Capability *struct {
				Metrics struct {
					Nodes []struct{ ComponentID string }
				}
				Jobs struct {
					Nodes []struct {
						Artifacts []struct{ DownloadURL string }
					}
				}
			}
		}
		if len(resp.Errors) > 0 || json.Unmarshal(resp.Data, &out) != nil || out.Capability == nil {
			t.Fatalf("anonymous capability page after the archive = %s", resp.Body)
		}
		if len(out.Capability.Metrics.Nodes) == 0 || len(out.Capability.Jobs.Nodes) == 0 || len(out.Capability.Jobs.Nodes[0].Artifacts) == 0 {
			t.Fatalf("anonymous capability page lacks metrics, jobs or artifacts: %s", resp.Data)
		}
		var ext s3ext
		_ = json.Unmarshal([]byte(resp.Body), &ext)
		loads = append(loads, ext)
	}
	if loads[0].Extensions.S3.Operations["GetObject"] == 0 {
		t.Errorf("first load read no archived hour (S3 %+v): the window does not reach the archive", loads[0].Extensions.S3)
	}
	// The archived hours come from the archive's cache, the listings (artifacts, archived hours)
	// from the embedded S3's listings memo: nothing was written in between.
	if loads[1].Extensions.S3.Requests != 0 {
		t.Errorf("second load: S3 %+v, want no request", loads[1].Extensions.S3)
	}
}

// A caller without a key has the whole S3 budget: a metrics window that reaches more archived
// hours than a quarter of it (the capability's components × the window's hours) is answered.
// With a quarter (100) the explorer's capability page of a capability of 13 or more components
// failed with REQUEST_BUDGET_EXCEEDED once its window had been archived.
func TestAnonymousArchivedWindowBeyondAQuarterOfTheBudget(t *testing.T) {
	h := newHybridHarness(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, "admin "+graph.HashKey("admin-key")+" ops"), Anonymous: graph.RoleViewer}
	})
	// A sample an hour for 40 hours on each of the capability's 4 components: 160 archived hours.
	var inputs []map[string]any
	for _, comp := range []string{"ui-dashboard-alert-001", "api-server-alert-001", "database-alert-001", "mcp-server-alert-001"} {
		for i := range 40 {
			inputs = append(inputs, map[string]any{"capabilityId": "CAP-ALERT-MGT-001", "componentId": comp, "metricType": "PERFORMANCE",
				"timestamp": testNow.Add(-time.Duration(i+1) * time.Hour).Truncate(time.Hour).Format(time.RFC3339), "interval": "1h",
				"values": map[string]any{"availability": map[string]any{"value": 99.9}}})
		}
	}
	for len(inputs) > 0 {
		n := min(len(inputs), 100)
		if rep := h.doAs(t, "admin-key", `mutation($in: [MetricInput!]!) { recordMetrics(inputs: $in) { recorded } }`, map[string]any{"in": inputs[:n]}); len(rep.Errors) > 0 {
			t.Fatalf("recordMetrics = %s", rep.Body)
		}
		inputs = inputs[n:]
	}
	rep := h.doAs(t, "admin-key", `mutation($b: DateTime!) { archiveMetrics(before: $b) { objectsWritten } }`, map[string]any{"b": testNow.Add(-10 * time.Minute).Format(time.RFC3339)})
	if len(rep.Errors) > 0 {
		t.Fatalf("archiveMetrics = %s", rep.Body)
	}
	q := `query($from: DateTime!) { capability(id: "CAP-ALERT-MGT-001") { metrics(metricType: PERFORMANCE, from: $from, first: 1000) { nodes { componentId timestamp } } } }`
	resp := h.doAs(t, "", q, map[string]any{"from": testNow.Add(-41 * time.Hour).Format(time.RFC3339)})
	var ext struct {
		Extensions struct{ S3 struct{ Requests int } }
	}
	_ = json.Unmarshal([]byte(resp.Body), &ext)
	if len(resp.Errors) > 0 || !strings.Contains(string(resp.Data), `"componentId"`) {
		t.Fatalf("anonymous window of archived hours = %s", resp.Body)
	}
	if ext.Extensions.S3.Requests <= graph.DefaultLimits.MaxS3Requests/4 {
		t.Errorf("the window cost %d S3 requests: it does not test more than a quarter of the budget (%d)", ext.Extensions.S3.Requests, graph.DefaultLimits.MaxS3Requests/4)
	}
}
