package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/notify"
	"github.com/capcat/catalogue/sample"
)

var testNow = time.Now().UTC().Truncate(time.Minute)

const capID = "CAP-ALERT-MGT-001"

var secret = []byte("test-secret")

// receiver is a webhook that verifies signatures and records what it got; it answers 500 to
// the first failFirst posts.
type receiver struct {
	mu        sync.Mutex
	failFirst int
	posts     []notify.Body
	bad       []string
	clock     func() time.Time
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := notify.Verify(secret, req.Header.Get(notify.HeaderSignature), b, r.clock(), 0); err != nil {
		r.bad = append(r.bad, err.Error())
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var body notify.Body
	if err := json.Unmarshal(b, &body); err != nil || body.DeliveryID != req.Header.Get(notify.HeaderDelivery) {
		r.bad = append(r.bad, "delivery id header and body differ")
	}
	r.posts = append(r.posts, body)
	if len(r.posts) <= r.failFirst {
		http.Error(w, "try later", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type fixture struct {
	env   *dynamotest.Env
	now   time.Time
	recv  *receiver
	url   string
	execs []*catalog.RuleExecution
}

func (f *fixture) clock() time.Time { return f.now }

// newFixture loads the sample catalogue and executes the seed's severity rule, which queues a
// notification to slack and one to pagerduty.
func newFixture(t *testing.T, failFirst int) *fixture {
	t.Helper()
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return testNow }})
	env.RequireTransactions(t)
	ctx := context.Background()
	if _, err := env.Store.BulkLoad(ctx, sample.Catalogue(testNow), 4); err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: env, now: testNow}
	f.recv = &receiver{failFirst: failFirst, clock: f.clock}
	srv := httptest.NewServer(f.recv)
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/hook/s3cret-path?token=s3cret"
	typ := catalog.RuleBusiness
	execs, err := env.Store.ExecuteRules(ctx, capID, map[string]any{"source": "production", "error_count": 150}, &typ, dynamo.Idempotency{})
	if err != nil {
		t.Fatal(err)
	}
	f.execs = execs
	return f
}

func (f *fixture) deliverer(opts notify.Options) *notify.Deliverer {
	opts.Webhooks = map[string]string{"slack": f.url}
	opts.Secret, opts.Now = secret, f.clock
	return notify.New(f.env.Store, opts)
}

func (f *fixture) notifications(t *testing.T) map[string]*catalog.Notification {
	t.Helper()
	p, err := f.env.Store.CapabilityNotifications(context.Background(), capID, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*catalog.Notification{}
	for _, n := range p.Items {
		out[n.Channel] = n
	}
	return out
}

// A notification is posted signed, with its delivery ID, to its channel's webhook, and marked
// DELIVERED; one whose channel is not configured is FAILED without a post.
func TestDeliverSigned(t *testing.T) {
	f := newFixture(t, 0)
	reg := prometheus.NewRegistry()
	d := f.deliverer(notify.Options{Registerer: reg})
	f.env.Counter.Reset()
	res, err := d.RunOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one pass: %d DynamoDB requests %v", f.env.Counter.Total(), f.env.Counter.Ops())
	if res != (notify.Result{Delivered: 1, Failed: 1}) {
		t.Errorf("RunOnce = %+v, want 1 delivered (slack), 1 failed (pagerduty, not configured)", res)
	}
	if len(f.recv.bad) > 0 || len(f.recv.posts) != 1 {
		t.Fatalf("receiver got %d posts, rejected %v", len(f.recv.posts), f.recv.bad)
	}
	post := f.recv.posts[0]
	if post.Capability != capID || post.Rule == nil || post.Rule.ID != "rule-alert-severity-mapping" || post.Severity == nil ||
		*post.Severity != "medium" || post.Score == nil || *post.Score != 5 || post.Template == nil || *post.Template != "alert-notification-v2" ||
		post.InputSummary["source"] != "production" || post.Channel != "slack" {
		t.Errorf("body = %+v, want the capability, rule, severity medium, score 5, template and input summary", post)
	}
	ns := f.notifications(t)
	if s := ns["slack"]; s == nil || s.Status != catalog.NotificationDelivered || s.Attempts != 1 || s.DeliveredAt == nil || s.DeliveryID != post.DeliveryID {
		t.Errorf("slack = %+v, want DELIVERED after 1 attempt with the posted delivery id", s)
	}
	if p := ns["pagerduty"]; p == nil || p.Status != catalog.NotificationFailed || p.LastError == nil || *p.LastError != notify.ErrNotConfigured || p.Attempts != 0 {
		t.Errorf("pagerduty = %+v, want FAILED: channel not configured, no attempt", p)
	}
	// /metrics counts them.
	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0].GetCounter().GetValue()
	}
	if got["catalogue_notifications_delivered_total"] != 1 || got["catalogue_notifications_failed_total"] != 1 || got["catalogue_notifications_retried_total"] != 0 {
		t.Errorf("metrics = %v, want delivered 1, failed 1, retried 0", got)
	}
	// Nothing is due any more.
	if res, err := d.RunOnce(context.Background()); err != nil || res != (notify.Result{}) {
		t.Errorf("second pass = %+v, %v; want nothing", res, err)
	}
	// A tampered body or an old timestamp fails verification.
	b := []byte(`{"deliveryId":"x"}`)
	sig := notify.Sign(secret, testNow, b)
	if err := notify.Verify(secret, sig, []byte(`{"deliveryId":"y"}`), testNow, 0); err == nil {
		t.Error("Verify accepted a tampered body")
	}
	if err := notify.Verify(secret, sig, b, testNow.Add(10*time.Minute), 0); err == nil {
		t.Error("Verify accepted a signature outside the replay window")
	}
	if err := notify.Verify(secret, sig, b, testNow.Add(time.Minute), 0); err != nil {
		t.Errorf("Verify = %v for a good signature", err)
	}
}

// A receiver that fails twice gets the notification a third time, after the backoff; the last
// error is kept without the webhook's secret path or query.
func TestDeliverRetries(t *testing.T) {
	f := newFixture(t, 2)
	d := f.deliverer(notify.Options{Backoff: func(n int) time.Duration { return time.Duration(n) * time.Minute }})
	ctx := context.Background()
	for i, want := range []notify.Result{{Retried: 1, Failed: 1}, {}, {Retried: 1}, {Delivered: 1}} {
		res, err := d.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res != want {
			t.Errorf("pass %d = %+v, want %+v", i, res, want)
		}
		if i == 0 {
			s := f.notifications(t)["slack"]
			if s.Status != catalog.NotificationPending || s.LastError == nil || strings.Contains(*s.LastError, "s3cret") || s.NextAttemptAt == nil {
				t.Errorf("after a failure: %+v (lastError %v), want PENDING with a sanitised error and a next attempt", s, s.LastError)
			}
		}
		if i != 0 {
			f.now = f.now.Add(3 * time.Minute) // pass 1 comes before the backoff ends, the others after
		}
	}
	if len(f.recv.posts) != 3 {
		t.Errorf("receiver got %d posts, want 3", len(f.recv.posts))
	}
	for _, p := range f.recv.posts {
		if p.DeliveryID != f.recv.posts[0].DeliveryID {
			t.Errorf("retries carry delivery ids %s and %s, want one", p.DeliveryID, f.recv.posts[0].DeliveryID)
		}
	}
	if s := f.notifications(t)["slack"]; s.Status != catalog.NotificationDelivered || s.Attempts != 3 {
		t.Errorf("slack = %+v, want DELIVERED after 3 attempts", s)
	}
}

// A deliverer stopped after the receiver accepted a post and before it wrote the notification
// back: the next one posts it again with the same delivery ID; once written back it is never
// posted again.
func TestDeliverRestart(t *testing.T) {
	f := newFixture(t, 0)
	ctx := context.Background()
	crash := errors.New("stopped")
	first := f.deliverer(notify.Options{AfterPost: func(*catalog.Notification) error { return crash }})
	if _, err := first.RunOnce(ctx); !errors.Is(err, crash) {
		t.Fatalf("first pass = %v, want the stop", err)
	}
	if s := f.notifications(t)["slack"]; s.Status != catalog.NotificationPending {
		t.Fatalf("after the stop: %+v, want still PENDING", s)
	}
	second := f.deliverer(notify.Options{})
	if _, err := second.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	third := f.deliverer(notify.Options{})
	if res, err := third.RunOnce(ctx); err != nil || res != (notify.Result{}) {
		t.Errorf("after delivery: %+v, %v; want nothing", res, err)
	}
	if len(f.recv.posts) != 2 || f.recv.posts[0].DeliveryID != f.recv.posts[1].DeliveryID {
		t.Fatalf("posts = %+v, want the same delivery twice (at least once)", f.recv.posts)
	}
	if s := f.notifications(t)["slack"]; s.Status != catalog.NotificationDelivered || s.DeliveryID != f.recv.posts[0].DeliveryID {
		t.Errorf("slack = %+v, want DELIVERED", s)
	}
}

func TestParseWebhooks(t *testing.T) {
	got, err := notify.ParseWebhooks("slack=https://hooks.example/a?x=1, pagerduty=http://127.0.0.1:9/p")
	if err != nil || len(got) != 2 || got["slack"] != "https://hooks.example/a?x=1" {
		t.Errorf("ParseWebhooks = %v, %v", got, err)
	}
	for _, bad := range []string{"slack", "slack=ftp://x", "slack=/relative", "a=http://x,a=http://y"} {
		if _, err := notify.ParseWebhooks(bad); err == nil {
			t.Errorf("ParseWebhooks(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "ftp://x") {
			t.Errorf("error %q shows the URL", err)
		}
	}
}

// A recordMetrics that moves a component's health status (healthy -> unhealthy) queues one
// health alert per health channel, in its transaction; a sample that leaves the status where
// it is queues none.
func TestHealthAlertOncePerTransition(t *testing.T) {
	env := dynamotest.New(t, dynamotest.Options{Now: func() time.Time { return testNow }, HealthChannels: []string{"ops"}})
	env.RequireTransactions(t)
	ctx := context.Background()
	if _, err := env.Store.BulkLoad(ctx, sample.Catalogue(testNow), 4); err != nil {
		t.Fatal(err)
	}
	const cap = "CAP-FRAUD-DET-001"
	if _, err := env.Store.AddComponent(ctx, &catalog.Component{CapabilityID: cap, ComponentID: "hc-1", Name: "Health probe",
		ComponentType: "cache", Order: 61, Status: catalog.ComponentActive}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	sample := func(minutesAgo int, availability float64) {
		t.Helper()
		m := &catalog.Metric{CapabilityID: cap, ComponentID: "hc-1", MetricType: catalog.MetricPerformance, Interval: "5m",
			Timestamp: catalog.NewTimestamp(testNow.Add(-time.Duration(minutesAgo) * time.Minute)),
			Values:    &catalog.MetricValues{Availability: &catalog.AvailabilityValue{Value: availability}}}
		env.Counter.Reset()
		if _, err := env.Store.RecordMetrics(ctx, []*catalog.Metric{m}, dynamo.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	alerts := func() []*catalog.Notification {
		t.Helper()
		p, err := env.Store.CapabilityNotifications(ctx, cap, 20, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []*catalog.Notification
		for _, n := range p.Items {
			if n.Kind == catalog.NotificationHealth {
				out = append(out, n)
			}
		}
		return out
	}
	sample(30, 99.95) // first health: healthy, no transition
	if a := alerts(); len(a) != 0 {
		t.Fatalf("alerts after the first sample = %d, want 0", len(a))
	}
	sample(20, 95) // healthy -> unhealthy
	if a := alerts(); len(a) != 1 || a[0].Channel != "ops" || a[0].Severity == nil || *a[0].Severity != "unhealthy" {
		t.Fatalf("alerts after the transition = %+v, want one to ops, unhealthy", a)
	}
	tr, _ := json.Marshal(alerts()[0].InputSummary["transitions"])
	if !strings.Contains(string(tr), `"from":"healthy"`) || !strings.Contains(string(tr), `"id":"hc-1"`) || !strings.Contains(string(tr), `"to":"unhealthy"`) {
		t.Errorf("transitions = %s, want hc-1 healthy -> unhealthy", tr)
	}
	sample(10, 94) // still unhealthy
	if a := alerts(); len(a) != 1 {
		t.Errorf("alerts after a sample that moved nothing = %d, want still 1", len(a))
	}
}

// check runs the catalogue-wide check and fails on any finding.
func check(t *testing.T, env *dynamotest.Env) {
	t.Helper()
	report, err := env.Store.Check(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range report.Findings {
		t.Errorf("check: %s", f)
	}
}

// notificationChanges returns the capability's NOTIFICATION changes.
func notificationChanges(t *testing.T, env *dynamotest.Env) []*catalog.ChangeRecord {
	t.Helper()
	p, err := env.Store.CapabilityChanges(context.Background(), capID, dynamo.ChangeFilter{Entities: []catalog.ChangeEntity{catalog.ChangeNotification}}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return p.Items
}

// Every write-back of the deliverer records a change (NOTIFICATION, the delivery ID) in its
// transaction, so the change feed, the subscriptions and the explorer see the delivery state
// move: UPDATED after a failed attempt that will be retried, TRANSITIONED when delivered or
// given up. A pass costs 1 Query and, per notification, a GetItem of METADATA and one
// TransactWriteItems.
func TestDeliverRecordsChange(t *testing.T) {
	f := newFixture(t, 1)
	ctx := context.Background()
	ids := map[string]string{}
	for _, x := range f.execs {
		for _, a := range x.Actions {
			for i, ch := range a.Channels {
				if i < len(a.DeliveryIDs) {
					ids[ch] = a.DeliveryIDs[i]
				}
			}
		}
	}
	if len(notificationChanges(t, f.env)) != 0 {
		t.Fatal("NOTIFICATION changes before any delivery")
	}
	d := f.deliverer(notify.Options{Backoff: func(int) time.Duration { return time.Minute }})
	f.env.Counter.Reset()
	if res, err := d.RunOnce(ctx); err != nil || res != (notify.Result{Retried: 1, Failed: 1}) {
		t.Fatalf("first pass = %+v, %v", res, err)
	}
	ops := f.env.Counter.Ops()
	if f.env.Counter.Total() != 5 || ops["Query"] != 1 || ops["GetItem"] != 2 || ops["TransactWriteItems"] != 2 {
		t.Errorf("a pass over 2 notifications made %d requests %v, want 5: 1 Query, 2 GetItem, 2 TransactWriteItems", f.env.Counter.Total(), ops)
	}
	got := notificationChanges(t, f.env)
	if len(got) != 2 {
		t.Fatalf("%d NOTIFICATION changes after the first pass, want 2", len(got))
	}
	byID := map[string]*catalog.ChangeRecord{}
	for _, c := range got {
		byID[c.EntityID] = c
	}
	if c := byID[ids["pagerduty"]]; c == nil || c.Action != catalog.ChangeTransitioned || c.Detail == nil || !strings.Contains(*c.Detail, notify.ErrNotConfigured) {
		t.Errorf("pagerduty's change = %+v, want TRANSITIONED, channel not configured", c)
	}
	if c := byID[ids["slack"]]; c == nil || c.Action != catalog.ChangeUpdated || strings.Join(c.Fields, ",") != "attempts,lastError,nextAttemptAt" || c.Actor.Name != catalog.SystemActor.Name {
		t.Errorf("slack's change = %+v, want UPDATED attempts,lastError,nextAttemptAt by the system", c)
	}
	f.now = f.now.Add(2 * time.Minute)
	if res, err := d.RunOnce(ctx); err != nil || res != (notify.Result{Delivered: 1}) {
		t.Fatalf("second pass = %+v, %v", res, err)
	}
	got = notificationChanges(t, f.env)
	if len(got) != 3 || got[2].EntityID != ids["slack"] || got[2].Action != catalog.ChangeTransitioned || got[2].Detail == nil || !strings.Contains(*got[2].Detail, "delivered to slack") {
		t.Errorf("changes after the delivery = %+v, want slack TRANSITIONED last", got)
	}
	// The catalogue-wide feed has them too (the subscriptions' source).
	all, err := f.env.Store.Changes(ctx, dynamo.ChangeFilter{Entities: []catalog.ChangeEntity{catalog.ChangeNotification}}, 100, "")
	if err != nil || len(all.Items) != 3 {
		t.Errorf("catalogue-wide NOTIFICATION changes = %d, %v; want 3", len(all.Items), err)
	}
	check(t, f.env)
}

// A notification queued before its capability is deleted is still delivered: the delete moves
// the pending ones out of the partition with their outbox entries, the deliverer delivers
// them (retrying as ever) and deletes each once settled, so nothing is left behind.
func TestDeliverAfterCapabilityDeleted(t *testing.T) {
	f := newFixture(t, 1)
	ctx := context.Background()
	queued := map[string]string{}
	for _, n := range f.notifications(t) {
		queued[n.Channel] = n.DeliveryID
	}
	c, err := f.env.Store.Capability(ctx, capID)
	if err != nil {
		t.Fatal(err)
	}
	f.env.Counter.Reset()
	if err := f.env.Store.DeleteCapability(ctx, capID, c.Revision, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleteCapability: %d DynamoDB requests %v", f.env.Counter.Total(), f.env.Counter.Ops())
	d := f.deliverer(notify.Options{Backoff: func(int) time.Duration { return time.Minute }})
	f.env.Counter.Reset()
	if res, err := d.RunOnce(ctx); err != nil || res != (notify.Result{Retried: 1, Failed: 1}) {
		t.Fatalf("first pass = %+v, %v; want slack retried, pagerduty given up", res, err)
	}
	ops := f.env.Counter.Ops()
	if f.env.Counter.Total() != 3 || ops["Query"] != 1 || ops["PutItem"] != 1 || ops["DeleteItem"] != 1 {
		t.Errorf("a pass over 2 detached notifications made %d requests %v, want 3: 1 Query, 1 PutItem, 1 DeleteItem", f.env.Counter.Total(), ops)
	}
	f.now = f.now.Add(2 * time.Minute)
	if res, err := d.RunOnce(ctx); err != nil || res != (notify.Result{Delivered: 1}) {
		t.Fatalf("second pass = %+v, %v; want slack delivered", res, err)
	}
	if len(f.recv.bad) > 0 || len(f.recv.posts) != 2 {
		t.Fatalf("receiver got %d posts, rejected %v; want 2 (a failure, then the delivery)", len(f.recv.posts), f.recv.bad)
	}
	for _, p := range f.recv.posts {
		if p.DeliveryID != queued["slack"] || p.Capability != capID || p.Rule == nil || p.Rule.ID != "rule-alert-severity-mapping" {
			t.Errorf("post = %+v, want slack's delivery %s of the deleted capability's rule", p, queued["slack"])
		}
	}
	if res, err := d.RunOnce(ctx); err != nil || res != (notify.Result{}) {
		t.Errorf("third pass = %+v, %v; want nothing left", res, err)
	}
	due, err := f.env.Store.DueNotifications(ctx, f.now.Add(24*time.Hour), 100)
	if err != nil || len(due) != 0 {
		t.Errorf("due after settling = %d, %v; want none", len(due), err)
	}
	check(t, f.env)
}
