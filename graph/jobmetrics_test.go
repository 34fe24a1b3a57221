package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// Job.componentMetrics' fixture: CAP-JM-001 with four components, jm-a, jm-b and jm-c the
// targets of its jobs and jm-d none's.
var (
	jmStart = testNow.Add(-48 * time.Hour).Truncate(time.Hour) // JOB-JM-DONE ran from here
	jmEnd   = jmStart.Add(time.Hour)                           // to here
	jmRun   = testNow.Add(-30 * time.Minute)                   // JOB-JM-RUN runs from here
)

type jmSample struct {
	at   time.Time
	comp string
	typ  catalog.MetricType
}

func (s jmSample) String() string {
	return s.at.UTC().Format(catalog.TimeLayout) + " " + s.comp + " " + string(s.typ)
}

// jmSamples are the fixture's samples: around each margin of JOB-JM-DONE (15 minutes, the
// default), inside it with two types at one timestamp, a non-target's inside it, and around
// JOB-JM-RUN's start and now.
func jmSamples() []jmSample {
	var out []jmSample
	for _, c := range []string{"jm-a", "jm-b", "jm-c"} {
		out = append(out,
			jmSample{jmStart.Add(-15*time.Minute - time.Second), c, catalog.MetricPerformance}, // just outside
			jmSample{jmStart.Add(-15 * time.Minute), c, catalog.MetricPerformance},             // just inside
			jmSample{jmStart.Add(30 * time.Minute), c, catalog.MetricPerformance},
			jmSample{jmStart.Add(30 * time.Minute), c, catalog.MetricBusiness},
			jmSample{jmEnd.Add(15 * time.Minute), c, catalog.MetricPerformance},             // just inside
			jmSample{jmEnd.Add(15*time.Minute + time.Second), c, catalog.MetricPerformance}, // just outside
		)
	}
	out = append(out,
		jmSample{jmStart.Add(30 * time.Minute), "jm-d", catalog.MetricPerformance},
		jmSample{jmRun.Add(-15*time.Minute - time.Second), "jm-a", catalog.MetricPerformance},
		jmSample{jmRun.Add(-15 * time.Minute), "jm-a", catalog.MetricPerformance},
		jmSample{testNow.Add(-time.Minute), "jm-a", catalog.MetricPerformance},
		jmSample{testNow.Add(2 * time.Minute), "jm-a", catalog.MetricPerformance}, // after now
	)
	return out
}

// loadJobMetrics loads the fixture into h's table, and extra samples.
func loadJobMetrics(t *testing.T, h *harness, extra ...jmSample) {
	t.Helper()
	b := &catalog.Bundle{
		Capability: &catalog.Capability{CapabilityID: "CAP-JM-001", Name: "Job Metrics", BusinessDomain: "jm", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow},
	}
	for i, c := range []string{"jm-a", "jm-b", "jm-c", "jm-d"} {
		b.Components = append(b.Components, &catalog.Component{ComponentID: c, Name: c, ComponentType: "api-server", Order: i + 1, Status: catalog.ComponentActive})
	}
	end := catalog.NewTimestamp(jmEnd)
	targets := []catalog.TargetComponent{{ComponentID: "jm-c"}, {ComponentID: "jm-a"}, {ComponentID: "jm-b"}}
	b.Jobs = []*catalog.Job{
		{JobID: "JOB-JM-DONE", JobType: catalog.JobDeployment, Status: catalog.JobCompleted, StartTime: catalog.NewTimestamp(jmStart), EndTime: &end, TargetComponents: targets},
		{JobID: "JOB-JM-RUN", JobType: catalog.JobDeployment, Status: catalog.JobRunning, StartTime: catalog.NewTimestamp(jmRun), TargetComponents: targets[1:2]},
		{JobID: "JOB-JM-NONE", JobType: catalog.JobMaintenance, Status: catalog.JobCompleted, StartTime: catalog.NewTimestamp(jmStart), EndTime: &end},
	}
	for _, s := range append(jmSamples(), extra...) {
		b.Metrics = append(b.Metrics, &catalog.Metric{ComponentID: s.comp, MetricType: s.typ, Timestamp: catalog.NewTimestamp(s.at), Interval: "5m",
			Values: &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: 99.9}}})
	}
	if _, err := h.env.Store.BulkLoad(t.Context(), []*catalog.Bundle{b}, 1); err != nil {
		t.Fatal(err)
	}
}

// jmWant is what the fixture's job window [from, to] holds, of one type or all, in the field's
// order (time, component, type).
func jmWant(targets []string, from, to time.Time, typ catalog.MetricType, extra ...jmSample) []string {
	var out []jmSample
	for _, s := range append(jmSamples(), extra...) {
		if slices.Contains(targets, s.comp) && !s.at.Before(from) && !s.at.After(to) && (typ == "" || s.typ == typ) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b jmSample) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		if c := strings.Compare(a.comp, b.comp); c != 0 {
			return c
		}
		return strings.Compare(string(a.typ), string(b.typ))
	})
	strs := make([]string, len(out))
	for i, s := range out {
		strs[i] = s.String()
	}
	return strs
}

type jmPage struct {
	Job struct {
		ComponentMetrics struct {
			Edges []struct {
				Cursor string
				Node   struct {
					Timestamp, MetricType string
					Component             struct{ ComponentID string }
				}
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   *string
			}
		}
	}
}

const jmQuery = `query($id: ID!, $margin: String, $type: MetricType, $first: Int, $after: String) {
  job(id: $id) { componentMetrics(margin: $margin, metricType: $type, first: $first, after: $after) {
    edges { cursor node { timestamp metricType component { componentId } } } pageInfo { hasNextPage endCursor } } } }`

// jmWalk reads every page of a job's componentMetrics, checking hasNextPage on each.
func jmWalk(t *testing.T, h *harness, vars map[string]any) []string {
	t.Helper()
	var got []string
	after := ""
	for range 100 {
		v := map[string]any{"after": nil}
		for k, x := range vars {
			v[k] = x
		}
		if after != "" {
			v["after"] = after
		}
		var p jmPage
		h.ok(t, jmQuery, v, &p)
		c := p.Job.ComponentMetrics
		for _, e := range c.Edges {
			at, err := time.Parse(time.RFC3339Nano, e.Node.Timestamp)
			if err != nil {
				t.Fatalf("timestamp %q: %v", e.Node.Timestamp, err)
			}
			got = append(got, jmSample{at, e.Node.Component.ComponentID, catalog.MetricType(strings.ToLower(e.Node.MetricType))}.String())
		}
		if !c.PageInfo.HasNextPage {
			return got
		}
		if len(c.Edges) == 0 {
			t.Fatalf("an empty page with hasNextPage after %v", got)
		}
		after = c.Edges[len(c.Edges)-1].Cursor
	}
	t.Fatal("more than 100 pages")
	return nil
}

func TestJobComponentMetricsWindow(t *testing.T) {
	h := newHarness(t)
	loadJobMetrics(t, h)
	abc := []string{"jm-a", "jm-b", "jm-c"}
	tests := []struct {
		name string
		vars map[string]any
		want []string
	}{
		{"the default margin of 15m: the samples at the margins are in, a second beyond out, jm-d (no target) never",
			map[string]any{"id": "JOB-JM-DONE"}, jmWant(abc, jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute), "")},
		{"margin 0s: the job's own time", map[string]any{"id": "JOB-JM-DONE", "margin": "0s"}, jmWant(abc, jmStart, jmEnd, "")},
		{"margin 1h: the samples a second beyond 15m too", map[string]any{"id": "JOB-JM-DONE", "margin": "1h"}, jmWant(abc, jmStart.Add(-time.Hour), jmEnd.Add(time.Hour), "")},
		{"an explicit null margin is the default", map[string]any{"id": "JOB-JM-DONE", "margin": nil}, jmWant(abc, jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute), "")},
		{"metricType BUSINESS", map[string]any{"id": "JOB-JM-DONE", "type": "BUSINESS"}, jmWant(abc, jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute), catalog.MetricBusiness)},
		{"metricType PERFORMANCE", map[string]any{"id": "JOB-JM-DONE", "type": "PERFORMANCE"}, jmWant(abc, jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute), catalog.MetricPerformance)},
		{"a running job's window ends now: a sample after now is out", map[string]any{"id": "JOB-JM-RUN"}, jmWant([]string{"jm-a"}, jmRun.Add(-15*time.Minute), testNow, "")},
		{"a job without targets has none", map[string]any{"id": "JOB-JM-NONE"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name != "a job without targets has none" && len(tt.want) < 2 {
				t.Fatalf("the fixture gives %d samples: too few to test", len(tt.want))
			}
			got := jmWalk(t, h, tt.vars)
			if !slices.Equal(got, tt.want) {
				t.Errorf("componentMetrics(%v) =\n%s\nwant\n%s", tt.vars, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// Pages of every size give the whole window in order, each page full while samples remain and
// hasNextPage exact (false on a last page that is exactly full).
func TestJobComponentMetricsPages(t *testing.T) {
	h := newHarness(t)
	loadJobMetrics(t, h)
	want := jmWant([]string{"jm-a", "jm-b", "jm-c"}, jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute), "")
	for first := 1; first <= len(want)+1; first++ {
		var got []string
		after := any(nil)
		for page := 0; ; page++ {
			var p jmPage
			h.ok(t, jmQuery, map[string]any{"id": "JOB-JM-DONE", "first": first, "after": after}, &p)
			c := p.Job.ComponentMetrics
			for _, e := range c.Edges {
				at, _ := time.Parse(time.RFC3339Nano, e.Node.Timestamp)
				got = append(got, jmSample{at, e.Node.Component.ComponentID, catalog.MetricType(strings.ToLower(e.Node.MetricType))}.String())
			}
			remaining := len(want) - page*first
			if wantLen := min(first, remaining); len(c.Edges) != wantLen {
				t.Fatalf("first %d, page %d: %d samples, want %d", first, page, len(c.Edges), wantLen)
			}
			if hasNext := remaining > first; c.PageInfo.HasNextPage != hasNext {
				t.Fatalf("first %d, page %d: hasNextPage %v, want %v", first, page, c.PageInfo.HasNextPage, hasNext)
			}
			if !c.PageInfo.HasNextPage {
				break
			}
			after = *c.PageInfo.EndCursor
		}
		if !slices.Equal(got, want) {
			t.Errorf("first %d: pages =\n%s\nwant\n%s", first, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestJobComponentMetricsBadInput(t *testing.T) {
	h := newHarness(t)
	loadJobMetrics(t, h)
	var p jmPage
	h.ok(t, jmQuery, map[string]any{"id": "JOB-JM-DONE", "first": 2}, &p)
	cursor := *p.Job.ComponentMetrics.PageInfo.EndCursor
	var capPage struct {
		Capability struct {
			Metrics struct{ PageInfo struct{ EndCursor string } }
		}
	}
	h.ok(t, `{ capability(id: "CAP-JM-001") { metrics(first: 1) { pageInfo { endCursor } } } }`, nil, &capPage)
	tampered := []byte(cursor)
	tampered[len(tampered)/2] ^= 1
	tests := []struct {
		name  string
		vars  map[string]any
		field string
	}{
		{"a margin that is no duration", map[string]any{"margin": "15 minutes"}, "margin"},
		{"a negative margin", map[string]any{"margin": "-1m"}, "margin"},
		{"a margin over 24h", map[string]any{"margin": "24h1s"}, "margin"},
		{"a day written as 1d", map[string]any{"margin": "1d"}, "margin"},
		{"first 0", map[string]any{"first": 0}, "first"},
		{"first over 1000", map[string]any{"first": 1001}, "first"},
		{"a tampered cursor", map[string]any{"after": string(tampered)}, "after"},
		{"a cursor of Capability.metrics", map[string]any{"after": capPage.Capability.Metrics.PageInfo.EndCursor}, "after"},
		{"the cursor with another margin", map[string]any{"margin": "1h", "after": cursor}, "after"},
		{"the cursor with another metric type", map[string]any{"type": "PERFORMANCE", "after": cursor}, "after"},
		{"the cursor on another job", map[string]any{"id": "JOB-JM-RUN", "after": cursor}, "after"},
		{"a cursor on a job without targets", map[string]any{"id": "JOB-JM-NONE", "after": cursor}, "after"},
		{"a cursor that is not one", map[string]any{"after": "not-a-cursor"}, "after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{"id": "JOB-JM-DONE"}
			for k, v := range tt.vars {
				vars[k] = v
			}
			resp := h.do(t, jmQuery, vars)
			if resp.code(0) != "BAD_USER_INPUT" || resp.Errors[0].Extensions["field"] != tt.field {
				t.Errorf("componentMetrics(%v) = %s, want BAD_USER_INPUT on %s", vars, resp.Body, tt.field)
			}
		})
	}
	// The cursor goes on with the same query.
	resp := h.do(t, jmQuery, map[string]any{"id": "JOB-JM-DONE", "after": cursor})
	if len(resp.Errors) > 0 {
		t.Errorf("the cursor on its own query: %s", resp.Body)
	}
}

const jmBudgetQuery = `query($id: ID!, $type: MetricType, $first: Int) {
  job(id: $id) { jobId componentMetrics(metricType: $type, first: $first) { nodes { timestamp metricType componentId } pageInfo { hasNextPage } } } }`

// A job with three targets reads one Query per target, all in one round trip after the job's
// own read (its JOB# index entry): with a metric type too (each a key range of that type,
// however many samples of other types the window holds), and whatever the page size.
func TestJobComponentMetricsRoundTrips(t *testing.T) {
	// 40 samples of another type at each target in the window, before its PERFORMANCE ones:
	// a type read through the METRICS# index would read past them.
	var extra []jmSample
	for _, c := range []string{"jm-a", "jm-b", "jm-c"} {
		for i := range 40 {
			extra = append(extra, jmSample{jmStart.Add(-14*time.Minute + time.Duration(i)*time.Second), c, catalog.MetricResource})
		}
	}
	for _, hybrid := range []bool{false, true} {
		t.Run(fmt.Sprintf("archive %v", hybrid), func(t *testing.T) {
			h := newHarness(t)
			if hybrid {
				h = newHybridHarness(t)
			}
			loadJobMetrics(t, h, extra...)
			from, to := jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute)
			abc := []string{"jm-a", "jm-b", "jm-c"}
			tests := []struct {
				name string
				vars map[string]any
				want []string
			}{
				{"every type, first 5", map[string]any{"first": 5}, jmWant(abc, from, to, "", extra...)[:5]},
				{"PERFORMANCE, first 2", map[string]any{"first": 2, "type": "PERFORMANCE"}, jmWant(abc, from, to, catalog.MetricPerformance, extra...)[:2]},
				{"every type, first 1000", map[string]any{"first": 1000}, jmWant(abc, from, to, "", extra...)},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					vars := map[string]any{"id": "JOB-JM-DONE"}
					for k, v := range tt.vars {
						vars[k] = v
					}
					// The job's own read, for reference: its JOB# entry, then its capability.
					stop := h.env.RoundTrips(40 * time.Millisecond)
					h.ok(t, `query($id: ID!) { job(id: $id) { jobId } }`, map[string]any{"id": "JOB-JM-DONE"}, nil)
					jobReq, jobRT := stop()
					jobQueries := h.env.Counter.Ops()["Query"]
					stop = h.env.RoundTrips(40 * time.Millisecond)
					resp := h.do(t, jmBudgetQuery, vars)
					req, rt := stop()
					if len(resp.Errors) > 0 {
						t.Fatalf("errors: %s", resp.Body)
					}
					ops := h.env.Counter.Ops()
					if req-jobReq != 3 || ops["Query"]-jobQueries != 3 || rt-jobRT != 1 {
						t.Errorf("%d requests (%v), %d round trips, the job's read alone %d requests, %d round trips; want 3 Queries more (one per target) in 1 round trip more", req, ops, rt, jobReq, jobRT)
					}
					var p struct {
						Job struct {
							ComponentMetrics struct {
								Nodes []struct{ Timestamp, MetricType, ComponentID string }
							}
						}
					}
					if err := json.Unmarshal(resp.Data, &p); err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, n := range p.Job.ComponentMetrics.Nodes {
						at, _ := time.Parse(time.RFC3339Nano, n.Timestamp)
						got = append(got, jmSample{at, n.ComponentID, catalog.MetricType(strings.ToLower(n.MetricType))}.String())
					}
					if !slices.Equal(got, tt.want) {
						t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
					}
				})
			}
		})
	}
}

// A job older than the archive boundary shows the same samples after they moved to S3.
func TestJobComponentMetricsArchived(t *testing.T) {
	h := newHybridHarness(t)
	loadJobMetrics(t, h)
	vars := map[string]any{"id": "JOB-JM-DONE", "first": 4}
	before := jmWalk(t, h, vars)
	var rep struct {
		ArchiveMetrics struct{ ItemsDeleted int }
	}
	h.ok(t, `mutation($b: DateTime!) { archiveMetrics(before: $b) { itemsDeleted } }`, map[string]any{"b": testNow.Add(-24 * time.Hour).Format(time.RFC3339)}, &rep)
	if rep.ArchiveMetrics.ItemsDeleted < len(before) {
		t.Fatalf("archived %d items, want at least the job's %d", rep.ArchiveMetrics.ItemsDeleted, len(before))
	}
	after := jmWalk(t, h, vars)
	want := jmWant([]string{"jm-a", "jm-b", "jm-c"}, jmStart.Add(-15*time.Minute), jmEnd.Add(15*time.Minute), "")
	if !slices.Equal(before, want) || !slices.Equal(after, want) {
		t.Errorf("before archiving\n%s\nafter\n%s\nwant\n%s", strings.Join(before, "\n"), strings.Join(after, "\n"), strings.Join(want, "\n"))
	}
}
