package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/graph"
)

// writesFeed is the sequence of mutations the subscription tests send through server B.
func writesFeed(capID string) []string {
	return []string{
		fmt.Sprintf(`mutation { createCapability(input: {capabilityId: %q, name: "Feed", businessDomain: "testing", priority: HIGH}) { revision } }`, capID),
		fmt.Sprintf(`mutation { updateCapability(id: %q, expectedRevision: 1, input: {owner: "feed-team", description: "d"}) { revision } }`, capID),
		fmt.Sprintf(`mutation { addComponent(capabilityId: %q, input: {componentId: "feed-api-1", name: "API", componentType: "api-server", order: 1}) { revision } }`, capID),
	}
}

// allChanges reads every change of the catalogue (capabilityID empty) or of a capability with
// Query.changes through s.
func allChanges(t *testing.T, s *subsServer, capabilityID, after string) []changeNode {
	t.Helper()
	var all []changeNode
	for range 1000 {
		vars := map[string]any{"first": 100}
		if capabilityID != "" {
			vars["cap"] = capabilityID
		}
		if after != "" {
			vars["after"] = after
		}
		resp := s.post(t, "", `query($cap: ID, $first: Int, $after: String) { changes(capabilityId: $cap, first: $first, after: $after) { nodes { `+changeFields+` } pageInfo { hasNextPage endCursor } } }`, vars)
		if len(resp.Errors) > 0 {
			t.Fatalf("changes: %s", resp.Body)
		}
		var out struct {
			Changes struct {
				Nodes    []changeNode
				PageInfo struct {
					HasNextPage bool
					EndCursor   *string
				}
			}
		}
		if err := json.Unmarshal(resp.Data, &out); err != nil {
			t.Fatal(err)
		}
		all = append(all, out.Changes.Nodes...)
		if !out.Changes.PageInfo.HasNextPage || out.Changes.PageInfo.EndCursor == nil {
			return all
		}
		after = *out.Changes.PageInfo.EndCursor
	}
	t.Fatal("changes: too many pages")
	return nil
}

func ids(cs []changeNode) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func sameChanges(t *testing.T, what string, got, want []changeNode) {
	t.Helper()
	if !slices.Equal(ids(got), ids(want)) {
		var g, w []string
		for _, c := range got {
			g = append(g, c.String())
		}
		for _, c := range want {
			w = append(w, c.String())
		}
		t.Fatalf("%s: got\n%s\nwant\n%s", what, strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	for i := range got {
		if got[i].String() != want[i].String() || got[i].At != want[i].At {
			t.Errorf("%s: change %d = %s at %s, Query.changes says %s at %s", what, i, got[i], got[i].At, want[i], want[i].At)
		}
	}
}

// TestSubscriptionAcrossInstances: a subscriber on server A receives, exactly once and in
// order, what mutations through server B wrote, as Query.changes lists it; for a capability and
// for the whole catalogue.
func TestSubscriptionAcrossInstances(t *testing.T) {
	h := newSubsHarness(t, subsConfig{run: true})
	const capID = "CAP-SUBS-001"
	c := connect(t, h.a, "")
	c.subscribe("cap", `subscription($cap: ID) { changes(capabilityId: $cap) { `+subChangeFields+` } }`, map[string]any{"cap": capID})
	c.subscribe("all", `subscription { changes { `+subChangeFields+` } }`, nil)
	waitSubscribed(t, h.a.hub, 2) // graphql-transport-ws acknowledges no subscribe
	before := allChanges(t, h.b, "", "")
	writes := writesFeed(capID)
	for _, w := range writes {
		if resp := h.b.post(t, "", w, nil); len(resp.Errors) > 0 {
			t.Fatalf("%s: %s", w, resp.Body)
		}
	}
	want := allChanges(t, h.b, capID, "")
	if len(want) != len(writes) {
		t.Fatalf("Query.changes lists %d changes, want %d", len(want), len(writes))
	}
	var gotCap, gotAll []changeNode
	for len(gotCap) < len(want) || len(gotAll) < len(want) {
		m := c.next()
		got := c.decode(m)
		switch m.ID {
		case "cap":
			gotCap = append(gotCap, got)
		case "all":
			gotAll = append(gotAll, got)
		}
	}
	sameChanges(t, "capability subscription", gotCap, want)
	sameChanges(t, "catalogue subscription", gotAll, want)
	allAfter := allChanges(t, h.b, "", "")
	sameChanges(t, "catalogue subscription against Query.changes", gotAll, allAfter[len(before):])
}

// testAuth has an admin key (alice), a viewer key (victor) and anonymous viewers.
func testAuth() *graph.Auth {
	keys := &graph.KeyRing{}
	keys.Add("alice-key", graph.RoleAdmin, "alice")
	keys.Add("victor-key", graph.RoleViewer, "victor")
	return &graph.Auth{Keys: keys, Anonymous: graph.RoleViewer}
}

// mustWrite posts a mutation through s and fails on an error.
func mustWrite(t *testing.T, s *subsServer, key, q string) {
	t.Helper()
	if resp := s.post(t, key, q, nil); len(resp.Errors) > 0 {
		t.Fatalf("%s: %s", q, resp.Body)
	}
}

// TestSubscriptionEveryWritePath: a subscriber on A gets, exactly once and in the order of
// Query.changes, the changes of mutations through B and of what the import and archive-metrics
// commands run (the same functions, on the same table, from stores of their own).
func TestSubscriptionEveryWritePath(t *testing.T) {
	h := newSubsHarness(t, subsConfig{run: true})
	c := connect(t, h.a, "")
	c.subscribe("all", `subscription { changes { `+subChangeFields+` } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	before := allChanges(t, h.b, "", "")
	received := 0
	check := func(what string) {
		t.Helper()
		all := allChanges(t, h.b, "", "")
		want := all[len(before)+received:]
		if len(want) == 0 {
			t.Fatalf("%s recorded no change", what)
		}
		sameChanges(t, what, c.changes("all", len(want)), want)
		received += len(want)
	}

	// Mutations through B.
	for _, w := range writesFeed("CAP-SUBS-PATHS") {
		mustWrite(t, h.b, "", w)
	}
	check("mutations through B")

	// import, from a file another table exported.
	src := dynamotest.New(t, dynamotest.Options{})
	if _, err := src.Store.CreateCapability(context.Background(), &catalog.Capability{CapabilityID: "CAP-SUBS-IMPORTED", Name: "Imported", BusinessDomain: "testing", Priority: catalog.PriorityHigh, Status: catalog.CapabilityPlanning}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if _, err := src.Store.Export(context.Background(), &file); err != nil {
		t.Fatal(err)
	}
	importer := dynamo.New(h.env.Client, dynamo.Options{Table: h.env.Table, CursorSecret: []byte("test-secret"), Logger: testLogger()})
	if _, err := importer.Import(context.Background(), &file, 4); err != nil {
		t.Fatal(err)
	}
	check("import")

	// archive-metrics, as the command runs it.
	objects, emb, err := blob.OpenEmbedded(context.Background(), blob.Options{MinArchiveAge: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	archiver := archive.New(dynamo.New(h.env.Client, dynamo.Options{Table: h.env.Table, CursorSecret: []byte("test-secret"), Logger: testLogger()}), objects, archive.Options{})
	var out bytes.Buffer
	if err := archive.RunCommand(context.Background(), []string{"-before", time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)}, &out, archiver); err != nil {
		t.Fatalf("archive-metrics: %v\n%s", err, out.String())
	}
	check("archive-metrics")

	// Nothing more, nothing twice: the next change is the next write.
	mustWrite(t, h.b, "", `mutation { transitionCapability(id: "CAP-SUBS-PATHS", to: DEVELOPMENT, expectedRevision: 2) { revision } }`)
	check("a last mutation")
}

// TestSubscriptionFailedMutationDeliversNothing: a mutation that fails (a stale revision)
// commits nothing and so delivers nothing; the next event is the next write that committed.
func TestSubscriptionFailedMutationDeliversNothing(t *testing.T) {
	h := newSubsHarness(t, subsConfig{})
	const capID = "CAP-SUBS-FAIL"
	mustWrite(t, h.b, "", writesFeed(capID)[0])
	// The hub reads the creation before the subscription starts (a subscription without
	// after gets what the hub reads after it started).
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := connect(t, h.a, "")
	c.subscribe("s", `subscription($cap: ID) { changes(capabilityId: $cap) { `+subChangeFields+` } }`, map[string]any{"cap": capID})
	if resp := h.b.post(t, "", `mutation { updateCapability(id: "CAP-SUBS-FAIL", expectedRevision: 7, input: {owner: "x"}) { revision } }`, nil); resp.code(0) != "CONFLICT" {
		t.Fatalf("stale update: %s", resp.Body)
	}
	mustWrite(t, h.b, "", writesFeed(capID)[1])
	waitSubscribed(t, h.a.hub, 1)
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := c.changes("s", 1)
	all := allChanges(t, h.b, capID, "")
	if len(all) != 2 || got[0].ID != all[1].ID || got[0].Action != "UPDATED" {
		t.Fatalf("first event %s; the capability's changes %v", got[0], all)
	}
}

// TestSubscriptionResume: a client that drops its connection and resubscribes with the last
// id it received gets every change written meanwhile (and during the replay), none twice, for
// a capability and for the catalogue.
func TestSubscriptionResume(t *testing.T) {
	for _, scope := range []string{"capability", "catalogue"} {
		t.Run(scope, func(t *testing.T) {
			h := newSubsHarness(t, subsConfig{run: true})
			capID := "CAP-SUBS-RESUME"
			var vars map[string]any
			q := `subscription($after: String) { changes(after: $after) { ` + subChangeFields + ` } }`
			if scope == "capability" {
				q = `subscription($cap: ID, $after: String) { changes(capabilityId: $cap, after: $after) { ` + subChangeFields + ` } }`
				vars = map[string]any{"cap": capID}
			}
			with := func(after string) map[string]any {
				v := map[string]any{"after": after}
				for k, x := range vars {
					v[k] = x
				}
				if after == "" {
					delete(v, "after")
				}
				return v
			}
			before := allChanges(t, h.b, "", "")
			c := connect(t, h.a, "")
			c.subscribe("s", q, with(""))
			waitSubscribed(t, h.a.hub, 1)
			writes := writesFeed(capID)
			mustWrite(t, h.b, "", writes[0])
			first := c.changes("s", 1)
			_ = c.conn.CloseNow()

			// Written while no one listens.
			mustWrite(t, h.b, "", writes[1])
			mustWrite(t, h.b, "", writes[2])
			c2 := connect(t, h.a, "")
			c2.subscribe("s", q, with(first[0].ID))
			// Written while the replay runs (or just after).
			mustWrite(t, h.b, "", `mutation { transitionCapability(id: "CAP-SUBS-RESUME", to: DEVELOPMENT, expectedRevision: 2) { revision } }`)
			all := allChanges(t, h.b, "", "")[len(before):]
			if len(all) != 4 {
				t.Fatalf("Query.changes lists %d changes, want 4", len(all))
			}
			got := c2.changes("s", 3)
			sameChanges(t, "resumed", got, all[1:])
			// Nothing repeated after the seam: the next event is the next write.
			mustWrite(t, h.b, "", `mutation { updateCapability(id: "CAP-SUBS-RESUME", expectedRevision: 3, input: {owner: "y"}) { revision } }`)
			next := c2.changes("s", 1)
			last := allChanges(t, h.b, capID, "")
			if next[0].ID != last[len(last)-1].ID {
				t.Fatalf("after the replay got %s, want the last write %s", next[0], last[len(last)-1])
			}
		})
	}
}

// TestSubscriptionCursorBeyondRetention: a cursor older than the retention is BAD_USER_INPUT
// naming the oldest change available; a cursor of another capability too.
func TestSubscriptionCursorBeyondRetention(t *testing.T) {
	h := newSubsHarness(t, subsConfig{})
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-OLD")[0])
	id := allChanges(t, h.b, "CAP-SUBS-OLD", "")[0].ID
	// A server that keeps changes a millisecond: the change is already past it.
	short := dynamo.New(h.env.Client, dynamo.Options{Table: h.env.Table, CursorSecret: []byte("test-secret"), ChangeRetention: time.Millisecond, Logger: testLogger()})
	hub := graph.NewHub(short, graph.HubOptions{Logger: testLogger()})
	t.Cleanup(hub.Close)
	s := &subsServer{store: short, hub: hub, h: graph.NewHandler(short, graph.Options{Logger: testLogger(), Hub: hub})}
	s.http = httptest.NewServer(s.h)
	t.Cleanup(s.http.Close)
	time.Sleep(2 * time.Millisecond)
	c := connect(t, s, "")
	for i, tc := range []struct {
		cap, want string
	}{
		{"CAP-SUBS-OLD", "older than the change retention"},
		{"", "older than the change retention"},
	} {
		opID := fmt.Sprint(i)
		c.subscribe(opID, `subscription($cap: ID, $after: String) { changes(capabilityId: $cap, after: $after) { id } }`, map[string]any{"cap": nilIfEmpty(tc.cap), "after": id})
		code, msg := c.failure(opID)
		if code != "BAD_USER_INPUT" || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "oldest change available is from") {
			t.Errorf("cap %q: %s %q", tc.cap, code, msg)
		}
	}
	c2 := connect(t, h.a, "")
	c2.subscribe("x", `subscription($after: String) { changes(capabilityId: "CAP-FRAUD-DET-001", after: $after) { id } }`, map[string]any{"after": id})
	if code, msg := c2.failure("x"); code != "BAD_USER_INPUT" {
		t.Errorf("another capability's cursor: %s %q", code, msg)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestSubscriptionActorVisibility: a viewer's events show the writer's role, not its key's
// name; an admin's show the name.
func TestSubscriptionActorVisibility(t *testing.T) {
	h := newSubsHarness(t, subsConfig{run: true, auth: testAuth()})
	viewer := connect(t, h.a, "victor-key")
	admin := connect(t, h.a, "alice-key")
	anon := connect(t, h.a, "")
	for _, c := range []*wsClient{viewer, admin, anon} {
		c.subscribe("s", `subscription { changes(capabilityId: "CAP-SUBS-ACTOR") { actor { name role } } }`, nil)
	}
	waitSubscribed(t, h.a.hub, 3)
	mustWrite(t, h.b, "alice-key", writesFeed("CAP-SUBS-ACTOR")[0])
	for _, tc := range []struct {
		c    *wsClient
		want string
	}{{viewer, "hidden/admin"}, {admin, "alice/admin"}, {anon, "hidden/admin"}} {
		got := tc.c.changes("s", 1)[0].Actor
		if got.Name+"/"+got.Role != tc.want {
			t.Errorf("actor %+v, want %s", got, tc.want)
		}
	}
}

// TestSubscriptionAuthentication: a wrong key in connection_init closes with 4403; a wrong key
// in the upgrade request is HTTP 401; the upgrade's key serves when connection_init has none.
func TestSubscriptionAuthentication(t *testing.T) {
	h := newSubsHarness(t, subsConfig{auth: testAuth()})
	bad := dial(t, h.a, nil, map[string]any{"Authorization": "Bearer wrong"})
	if code := bad.closed(); code != 4403 {
		t.Errorf("wrong key: close %d, want 4403", code)
	}
	noKeys := &graph.Auth{Anonymous: graph.RoleNone}
	s := newSubsServer(t, h.env, subsConfig{auth: noKeys}, false)
	if code := dial(t, s, nil, nil).closed(); code != 4403 {
		t.Errorf("no key where one is required: close %d, want 4403", code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.a.http.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"Authorization": {"Bearer wrong"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong key on upgrade: %v %v", resp, err)
	}
	c := dial(t, h.a, http.Header{"Authorization": {"Bearer alice-key"}}, nil)
	if m := c.next(); m.Type != "connection_ack" {
		t.Fatalf("upgrade with a key: %s %s", m.Type, m.Payload)
	}
	c.subscribe("s", `subscription { changes(capabilityId: "CAP-SUBS-AUTH") { actor { name } } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	mustWrite(t, h.b, "alice-key", writesFeed("CAP-SUBS-AUTH")[0])
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := c.changes("s", 1)[0].Actor.Name; got != "alice" {
		t.Errorf("the upgrade's admin key sees actor %q, want alice", got)
	}
}

// TestSubscriptionInitPayloadNotObject: a connection_init whose payload is not a JSON object
// closes the socket with 4400. gqlgen's transport gave up on such a socket without closing it:
// it stayed open, unauthenticated and uncounted, past the init timeout and past its client.
func TestSubscriptionInitPayloadNotObject(t *testing.T) {
	h := newSubsHarness(t, subsConfig{auth: testAuth()})
	for _, payload := range []string{`["Bearer alice-key"]`, `"Bearer alice-key"`, `42`} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.a.http.URL, "http")+"/graphql", &websocket.DialOptions{
			Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			cancel()
			t.Fatalf("dial: %v", err)
		}
		if err := conn.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init","payload":`+payload+`}`)); err != nil {
			t.Fatalf("write: %v", err)
		}
		_, data, err := conn.Read(ctx) // bounded by waitLimit: without the fix no message and no close came
		if code := websocket.CloseStatus(err); code != 4400 {
			t.Errorf("payload %s: got %q, %v; want close 4400", payload, data, err)
		}
		_ = conn.CloseNow()
		cancel()
	}
}

// TestSubscriptionOrigin: a page of another origin cannot open a socket (cross-site WebSocket
// hijacking) unless configured; the server's own origin can.
func TestSubscriptionOrigin(t *testing.T) {
	h := newSubsHarness(t, subsConfig{configure: func(o *graph.Options) { o.WebSocketOrigins = []string{"app.example.com"} }})
	for _, tc := range []struct {
		origin string
		ok     bool
	}{{"https://evil.example.net", false}, {"https://app.example.com", true}, {h.a.http.URL, true}} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.a.http.URL, "http")+"/graphql", &websocket.DialOptions{
			Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"Origin": {tc.origin}}})
		cancel()
		if (err == nil) != tc.ok {
			t.Errorf("origin %s: %v %v, want allowed %v", tc.origin, resp, err, tc.ok)
		}
		if conn != nil {
			_ = conn.CloseNow()
		}
	}
}

// TestSubscriptionLoopbackOnly: with LoopbackOnly (the generated-key default) an upgrade
// addressed by a name that is not loopback is refused, as every route is (DNS rebinding).
func TestSubscriptionLoopbackOnly(t *testing.T) {
	h := newSubsHarness(t, subsConfig{configure: func(o *graph.Options) { o.LoopbackOnly = true }})
	for _, tc := range []struct {
		host string
		ok   bool
	}{{"rebound.example.com", false}, {"localhost", true}} {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.a.http.URL, "http")+"/graphql", &websocket.DialOptions{
			Subprotocols: []string{"graphql-transport-ws"}, Host: tc.host})
		cancel()
		if (err == nil) != tc.ok || (!tc.ok && (resp == nil || resp.StatusCode != http.StatusForbidden)) {
			t.Errorf("Host %s: %v %v, want allowed %v", tc.host, resp, err, tc.ok)
		}
		if conn != nil {
			_ = conn.CloseNow()
		}
	}
}

// TestSubscriptionOperationsOverSocket: queries and mutations sent over the socket are refused
// with OPERATION_NOT_SUPPORTED and write nothing; a subscription over POST likewise.
func TestSubscriptionOperationsOverSocket(t *testing.T) {
	h := newSubsHarness(t, subsConfig{})
	c := connect(t, h.a, "")
	c.subscribe("q", `{ capability(id: "CAP-FRAUD-DET-001") { name } }`, nil)
	c.subscribe("m", writesFeed("CAP-SUBS-NOTHING")[0], nil)
	for _, id := range []string{"q", "m"} {
		if code, msg := c.failure(id); code != "OPERATION_NOT_SUPPORTED" {
			t.Errorf("%s over the socket: %s %q", id, code, msg)
		}
	}
	if all := allChanges(t, h.b, "CAP-SUBS-NOTHING", ""); len(all) != 0 {
		t.Errorf("a mutation over the socket wrote %d changes", len(all))
	}
	if resp := h.a.post(t, "", `subscription { changes { id } }`, nil); resp.code(0) != "OPERATION_NOT_SUPPORTED" {
		t.Errorf("subscription over POST: %s", resp.Body)
	}
	// A POST that offers another protocol (curl --http2 sends Upgrade: h2c) is served as a POST.
	req, _ := http.NewRequest(http.MethodPost, h.a.http.URL+"/graphql", strings.NewReader(`{"query":"{ capability(id: \"CAP-FRAUD-DET-001\") { name } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "Upgrade, HTTP2-Settings")
	req.Header.Set("Upgrade", "h2c")
	req.Header.Set("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"name"`) {
		t.Errorf("POST with Upgrade: h2c = %d %s", resp.StatusCode, body)
	}
}

// TestSubscriptionDocumentLimits: a subscription's document meets the limits a query's does,
// and a message over 64 KiB closes the socket (1009).
func TestSubscriptionDocumentLimits(t *testing.T) {
	h := newSubsHarness(t, subsConfig{})
	c := connect(t, h.a, "")
	var aliases []string
	for i := range 31 {
		aliases = append(aliases, fmt.Sprintf("a%d: id", i))
	}
	c.subscribe("a", `subscription { changes { `+strings.Join(aliases, " ")+` } }`, nil)
	if code, msg := c.failure("a"); code != "ALIAS_LIMIT_EXCEEDED" {
		t.Errorf("31 aliases: %s %q", code, msg)
	}
	// Two aliases of changes are two root fields: a validation error, not an internal one.
	c.subscribe("two", `subscription { a: changes { id } b: changes { id } }`, nil)
	if code, msg := c.failure("two"); code != graph.CodeValidationFailed {
		t.Errorf("two aliased root fields: %s %q", code, msg)
	}
	c.subscribe("b", `subscription { changes { id } }`, map[string]any{"pad": strings.Repeat("x", 70<<10)})
	if code := c.closed(); code != websocket.StatusMessageTooBig {
		t.Errorf("a message of 70 KiB: close %d, want 1009", code)
	}
}

// TestSubscriptionLimits: subscriptions per connection, per key and connections per key.
func TestSubscriptionLimits(t *testing.T) {
	h := newSubsHarness(t, subsConfig{auth: testAuth(), hub: graph.HubOptions{Limits: graph.SubscriptionLimits{PerConnection: 2, PerKey: 3, ConnectionsPerKey: 2}}})
	const q = `subscription { changes { id } }`
	c1 := connect(t, h.a, "alice-key")
	// One at a time: the transport starts each operation in a goroutine of its own.
	c1.subscribe("1", q, nil)
	waitSubscribed(t, h.a.hub, 1)
	c1.subscribe("2", q, nil)
	waitSubscribed(t, h.a.hub, 2)
	c1.subscribe("3", q, nil)
	if code, _ := c1.failure("3"); code != "TOO_MANY_SUBSCRIPTIONS" {
		t.Errorf("third on one connection: %s", code)
	}
	c2 := connect(t, h.a, "alice-key")
	c2.subscribe("4", q, nil)
	waitSubscribed(t, h.a.hub, 3)
	c2.subscribe("5", q, nil)
	if code, msg := c2.failure("5"); code != "TOO_MANY_SUBSCRIPTIONS" || !strings.Contains(msg, "API key") {
		t.Errorf("fourth of one key: %s %q", code, msg)
	}
	if code := dial(t, h.a, nil, map[string]any{"Authorization": "Bearer alice-key"}).closed(); code != 1013 {
		t.Errorf("third connection of one key: close %d, want 1013", code)
	}
	// Another key has its own bounds.
	v := connect(t, h.a, "victor-key")
	v.subscribe("v", q, nil)
	waitSubscribed(t, h.a.hub, 4)
	mustWrite(t, h.b, "alice-key", writesFeed("CAP-SUBS-LIMITS")[0])
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	v.changes("v", 1)
	// A subscription that ends frees its place.
	c1.send(wsMessage{ID: "1", Type: "complete"})
	waitSubscribed(t, h.a.hub, 3)
	c2.subscribe("6", q, nil)
	waitSubscribed(t, h.a.hub, 4)
	mustWrite(t, h.b, "alice-key", writesFeed("CAP-SUBS-LIMITS")[1])
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for {
		m := c2.next()
		if m.ID == "6" {
			c2.decode(m)
			break
		}
	}
}

// TestSubscriptionSlowSubscriber: a subscriber whose queue overflows is closed with
// SUBSCRIBER_TOO_SLOW and the last id it was sent; another keeps receiving everything.
func TestSubscriptionSlowSubscriber(t *testing.T) {
	h := newSubsHarness(t, subsConfig{hub: graph.HubOptions{Queue: 1}})
	const capID = "CAP-SUBS-SLOW"
	mustWrite(t, h.b, "", writesFeed(capID)[0])
	mustWrite(t, h.b, "", writesFeed(capID)[2])
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	slow := connect(t, h.a, "")
	slow.subscribe("s", `subscription { changes(capabilityId: "CAP-SUBS-SLOW") { id } }`, nil)
	// A queue of one, and one poll delivering a burst: a change per component of one
	// recordMetrics call.
	big := graph.HubOptions{Queue: 100, Poll: time.Hour, Hold: -1, Logger: testLogger()}
	other := newSubsServer(t, h.env, subsConfig{hub: big}, false)
	if err := other.hub.Poll(context.Background()); err != nil { // its first look at the capability
		t.Fatal(err)
	}
	fast := connect(t, other, "")
	fast.subscribe("f", `subscription { changes(capabilityId: "CAP-SUBS-SLOW") { id } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	waitSubscribed(t, other.hub, 1)
	var inputs []string
	for i := range 10 {
		mustWrite(t, h.b, "", fmt.Sprintf(`mutation { addComponent(capabilityId: %q, input: {componentId: "slow-%d", name: "C", componentType: "api-server", order: %d}) { revision } }`, capID, i, i+2))
		inputs = append(inputs, fmt.Sprintf(`{capabilityId: %q, componentId: "slow-%d", metricType: PERFORMANCE, timestamp: %q, interval: "1m", values: {availability: {value: 99}}}`, capID, i, time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)))
	}
	mustWrite(t, h.b, "", `mutation { recordMetrics(inputs: [`+strings.Join(inputs, ",")+`]) { recorded } }`)
	for _, hub := range []*graph.Hub{h.a.hub, other.hub} {
		if err := hub.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := allChanges(t, h.b, capID, "")[2:]
	if got := fast.changes("f", len(want)); !slices.Equal(ids(got), ids(want)) {
		t.Errorf("the fast subscriber got %d changes, want %d", len(got), len(want))
	}
	var last string
	for {
		m := slow.next()
		if m.Type == "next" {
			last = slow.decode(m).ID
			continue
		}
		var errs []gqlError
		if err := json.Unmarshal(m.Payload, &errs); err != nil || m.Type != "error" || len(errs) != 1 {
			t.Fatalf("slow subscriber got %s %s", m.Type, m.Payload)
		}
		if errs[0].Extensions["code"] != "SUBSCRIBER_TOO_SLOW" || errs[0].Extensions["lastId"] != last || last == "" {
			t.Fatalf("slow subscriber's error %+v after %q", errs[0], last)
		}
		break
	}
	waitSubscribed(t, h.a.hub, 0)
}

// waitSubscribed waits until the hub holds n subscriptions.
func waitSubscribed(t *testing.T, hub *graph.Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for hub.Subscriptions() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the hub holds %d subscriptions, want %d", hub.Subscriptions(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSubscriptionShutdown: closing the hub (what the server's shutdown does) closes every
// socket with 1001 Going Away, and a new socket is turned away the same way.
func TestSubscriptionShutdown(t *testing.T) {
	h := newSubsHarness(t, subsConfig{})
	c := connect(t, h.a, "")
	c.subscribe("s", `subscription { changes { id } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	h.a.hub.Close()
	if code := c.closed(); code != websocket.StatusGoingAway {
		t.Errorf("open socket closed with %d, want 1001", code)
	}
	if code := dial(t, h.a, nil, nil).closed(); code != websocket.StatusGoingAway {
		t.Errorf("new socket closed with %d, want 1001", code)
	}
	waitSubscribed(t, h.a.hub, 0)
}

// TestSubscriptionPollRequests counts the poller's DynamoDB requests: one Query of the index
// per poll when nothing changed, and one more per capability that did.
func TestSubscriptionPollRequests(t *testing.T) {
	h := newSubsHarness(t, subsConfig{})
	hub := h.a.hub
	poll := func(want int64, what string) {
		t.Helper()
		before, calls := hub.Requests(), h.env.Counter.Total()
		if err := hub.Poll(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := hub.Requests() - before; got != want {
			t.Errorf("%s: %d requests, want %d", what, got, want)
		}
		if got := h.env.Counter.Total() - calls; int64(got) != want {
			t.Errorf("%s: the backend saw %d requests, want %d", what, got, want)
		}
	}
	for range 3 {
		poll(1, "an idle poll")
	}
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-POLL-1")[0])
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-POLL-2")[0])
	poll(3, "two capabilities changed")
	poll(1, "an idle poll with those changes still in the overlap window")
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-POLL-1")[1])
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-POLL-1")[2])
	poll(2, "one capability changed twice")
	poll(1, "an idle poll")
}

// TestSubscriptionMetrics: /metrics counts open subscriptions and connections, changes
// delivered and the poller's requests.
func TestSubscriptionMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics := graph.NewInstruments(reg)
	h := newSubsHarness(t, subsConfig{hub: graph.HubOptions{Instruments: metrics}})
	c := connect(t, h.a, "")
	c.subscribe("s", `subscription { changes(capabilityId: "CAP-SUBS-METRICS") { id } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-METRICS")[0])
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.changes("s", 1)
	values := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			values[f.GetName()] += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	// Both servers' hubs share the instruments here: B's holds nothing and did not poll.
	for name, want := range map[string]float64{
		"catalogue_subscriptions_open":                   1,
		"catalogue_websocket_connections_open":           1,
		"catalogue_subscription_changes_delivered_total": 1,
		"catalogue_subscriptions_dropped_total":          0,
		"catalogue_change_poll_requests_total":           3, // the index when the subscription primed the hub; the poll's index, and the capability's partition
	} {
		if got := values[name]; got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestSubscriptionIdleCost: 1,000 idle subscriptions (10 connections of 100) add no goroutine
// of the hub's (the transport's one per operation and a few per connection) and no request to
// the poll, which stays one Query of the index.
func TestSubscriptionIdleCost(t *testing.T) {
	h := newSubsHarness(t, subsConfig{hub: graph.HubOptions{Limits: graph.SubscriptionLimits{PerConnection: 100, PerKey: 1000, ConnectionsPerKey: 10}}})
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	const conns, per = 10, 100
	for i := range conns {
		c := connect(t, h.a, "")
		for j := range per {
			c.subscribe(fmt.Sprint(j), `subscription { changes { id } }`, nil)
		}
		waitSubscribed(t, h.a.hub, (i+1)*per)
	}
	const perConnection = 12 // the server's and the test client's goroutines of one socket
	t.Logf("goroutines added: %d", runtime.NumGoroutine()-before)
	if got := runtime.NumGoroutine() - before; got > conns*per+conns*perConnection {
		t.Errorf("1000 subscriptions on %d connections added %d goroutines, want at most %d", conns, got, conns*per+conns*perConnection)
	}
	r := h.a.hub.Requests()
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.a.hub.Requests() - r; got != 1 {
		t.Errorf("an idle poll with 1000 subscribers made %d requests, want 1", got)
	}
}

// TestSubscriptionCatalogueOrder: a change whose index entry arrives after a later-timed one
// (a writer whose clock is behind) still reaches catalogue-wide subscribers in the order of
// Query.changes, thanks to the hold; a capability subscriber gets it at once.
func TestSubscriptionCatalogueOrder(t *testing.T) {
	var offset atomic.Int64 // the hubs' clock runs ahead of the real one by this much
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	h := newSubsHarness(t, subsConfig{hub: graph.HubOptions{Hold: time.Second, Now: clock}})
	c := connect(t, h.a, "")
	c.subscribe("all", `subscription { changes { `+subChangeFields+` } }`, nil)
	c.subscribe("y", `subscription { changes(capabilityId: "CAP-SUBS-ORDER-Y") { `+subChangeFields+` } }`, nil)
	waitSubscribed(t, h.a.hub, 2)
	before := allChanges(t, h.b, "", "")

	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-ORDER-X")[0])
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A writer 300 ms behind: its change sorts before X's in the catalogue's order.
	behind := dynamo.New(h.env.Client, dynamo.Options{Table: h.env.Table, CursorSecret: []byte("test-secret"), Logger: testLogger(),
		Now: func() time.Time { return time.Now().Add(-300 * time.Millisecond) }})
	if _, err := behind.CreateCapability(context.Background(), &catalog.Capability{CapabilityID: "CAP-SUBS-ORDER-Y", Name: "Y", BusinessDomain: "testing", Priority: catalog.PriorityHigh, Status: catalog.CapabilityPlanning}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The capability subscriber is not held.
	y := c.changes("y", 1)
	offset.Store(int64(2 * time.Second))
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := allChanges(t, h.b, "", "")[len(before):]
	if len(want) != 2 || want[0].CapabilityID != "CAP-SUBS-ORDER-Y" || want[0].ID != y[0].ID {
		t.Fatalf("Query.changes lists %v", want)
	}
	sameChanges(t, "catalogue subscription", c.changes("all", 2), want)
}

// TestSubscriptionPartitionReadFails: a capability whose partition cannot be read at a poll is
// read again at the next, even when its index entry has left the poll's window by then: its
// change is delivered once, late rather than never.
func TestSubscriptionPartitionReadFails(t *testing.T) {
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	h := newSubsHarness(t, subsConfig{hub: graph.HubOptions{Now: clock}})
	h.env.RequireFaults(t)
	c := connect(t, h.a, "")
	c.subscribe("s", `subscription { changes(capabilityId: "CAP-SUBS-RETRY") { `+subChangeFields+` } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	mustWrite(t, h.b, "", writesFeed("CAP-SUBS-RETRY")[0])
	h.env.EmulateIndexFailure("", true) // the table fails, the index answers
	if err := h.a.hub.Poll(context.Background()); err == nil {
		t.Fatal("a poll whose partition read failed reported no error")
	}
	h.env.EmulateIndexFailure("", false)
	offset.Store(int64(time.Minute)) // the change's index entry is out of the next poll's window
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := allChanges(t, h.b, "CAP-SUBS-RETRY", "")
	sameChanges(t, "after a failed read", c.changes("s", 1), want)
	// Read once: the next poll has nothing to retry.
	r := h.a.hub.Requests()
	if err := h.a.hub.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := h.a.hub.Requests() - r; n != 1 {
		t.Errorf("the poll after the retry made %d requests, want 1", n)
	}
}

// TestSubscriptionIdleHubSendsNothing: a running hub with no subscription sends no DynamoDB
// request; it polls while one is open, and stops again when the last one ends. A subscription
// opened after an idle spell gets what is written after it, not what was written while nobody
// listened (the hub's marks from before the spell are stale; it starts afresh).
func TestSubscriptionIdleHubSendsNothing(t *testing.T) {
	// The overlap must outlast the time a write takes from its change's stamp to its commit,
	// or the poll that reads past the stamp before the commit never rings for it: 20 ms did
	// not on a loaded CI machine (the component written after the idle spell never came).
	const overlap = 400 * time.Millisecond
	h := newSubsHarness(t, subsConfig{run: true, hub: graph.HubOptions{Overlap: overlap}})
	idle := func(what string) {
		t.Helper()
		before := h.a.hub.Requests()
		time.Sleep(60 * time.Millisecond) // a dozen ticks of the 5 ms poll
		if got := h.a.hub.Requests() - before; got != 0 {
			t.Errorf("%s: the hub sent %d requests with nobody subscribed", what, got)
		}
	}
	idle("before any subscription")

	const capID = "CAP-SUBS-IDLE"
	c := connect(t, h.a, "")
	c.subscribe("s", `subscription { changes(capabilityId: "`+capID+`") { entity action } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	mustWrite(t, h.b, "", writesFeed(capID)[0])
	if got := c.changes("s", 1); got[0].Action != "CREATED" {
		t.Fatalf("first subscription got %+v, want the capability's CREATED", got)
	}
	if h.a.hub.Requests() == 0 {
		t.Error("the hub delivered a change without a request")
	}
	c.send(wsMessage{ID: "s", Type: "complete"})
	waitSubscribed(t, h.a.hub, 0)
	time.Sleep(20 * time.Millisecond) // a poll already under way when it ended
	idle("after the last subscription ended")

	mustWrite(t, h.b, "", writesFeed(capID)[1]) // while nobody listens
	time.Sleep(overlap + 200*time.Millisecond)  // past the overlap window
	c2 := connect(t, h.a, "")
	c2.subscribe("s2", `subscription { changes(capabilityId: "`+capID+`") { entity action } }`, nil)
	waitSubscribed(t, h.a.hub, 1)
	mustWrite(t, h.b, "", writesFeed(capID)[2])
	if got := c2.changes("s2", 1); got[0].Entity != "COMPONENT" {
		t.Errorf("after the idle spell the subscription got %+v first, want the COMPONENT written after it", got)
	}
}

// TestSubscriptionStartsAtItsSubscribe: a subscription without after: gets what is written
// after it, not the changes of the overlap window before it, whether it is the hub's first
// (a new server whose poller ran with nobody subscribed) or comes after an idle spell.
func TestSubscriptionStartsAtItsSubscribe(t *testing.T) {
	h := newSubsHarness(t, subsConfig{run: true})
	const capID = "CAP-SUBS-START"
	mustWrite(t, h.b, "", writesFeed(capID)[0]) // within the overlap window of the first subscribe
	mustWrite(t, h.b, "", writesFeed(capID)[1])
	for round, w := range []struct{ write, entity, action string }{
		{writesFeed(capID)[2], "COMPONENT", "CREATED"},
		{fmt.Sprintf(`mutation { updateCapability(id: %q, expectedRevision: 2, input: {description: "again"}) { revision } }`, capID), "CAPABILITY", "UPDATED"},
	} {
		c := connect(t, h.a, "")
		c.subscribe("s", `subscription { changes(capabilityId: "`+capID+`") { entity action } }`, nil)
		waitSubscribed(t, h.a.hub, 1)
		mustWrite(t, h.b, "", w.write)
		if got := c.changes("s", 1)[0]; got.Entity != w.entity || got.Action != w.action {
			t.Errorf("round %d: the subscription's first change is %s %s, want the write after it (%s %s)", round, got.Entity, got.Action, w.entity, w.action)
		}
		c.send(wsMessage{ID: "s", Type: "complete"})
		waitSubscribed(t, h.a.hub, 0)
		time.Sleep(30 * time.Millisecond) // the poller finds the hub idle
	}
}

// TestSubscriptionSocketsBeforeInit: sockets that have not finished connection_init are bounded
// for all callers together (no key's limit can hold them yet): beyond the bound an upgrade is
// HTTP 503 OVERLOADED with Retry-After, and a socket that finishes its init, or goes away,
// frees its place.
func TestSubscriptionSocketsBeforeInit(t *testing.T) {
	h := newSubsHarness(t, subsConfig{hub: graph.HubOptions{Limits: graph.SubscriptionLimits{Unauthenticated: 2}}})
	url := "ws" + strings.TrimPrefix(h.a.http.URL, "http") + "/graphql"
	raw := func() (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if c != nil {
			t.Cleanup(func() { _ = c.CloseNow() })
		}
		return c, resp, err
	}
	refused := func(what string) {
		t.Helper()
		_, resp, err := raw()
		if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Fatalf("%s: upgrade answered %d (%v), want 503 with Retry-After", what, status, err)
		}
	}
	accepted := func(what string) *websocket.Conn {
		t.Helper()
		c, _, err := raw()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return c
	}
	first := accepted("first socket without init")
	accepted("second socket without init")
	refused("third socket while two wait for connection_init")

	// One finishes its init: its place is free (its key's limits hold it now).
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := first.Write(ctx, websocket.MessageText, []byte(`{"type":"connection_init"}`)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := first.Read(ctx); err != nil || !strings.Contains(string(data), "connection_ack") {
		t.Fatalf("init: %s, %v", data, err)
	}
	third := accepted("a socket after one finished its init")
	refused("again two waiting")

	// One that goes away frees its place too.
	_ = third.CloseNow()
	deadline := time.Now().Add(waitLimit)
	for {
		c, _, err := raw()
		if err == nil {
			_ = c.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a socket that went away before its init kept its place")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSubscriptionSocketLogNamesItsCaller: a socket's log line names the caller that
// connection_init authenticated, and "unauthenticated" for one that never finished it; it named
// the server's default caller ("local", admin) for every upgrade without a key in its header.
func TestSubscriptionSocketLogNamesItsCaller(t *testing.T) {
	logs := &syncBuffer{}
	h := newSubsHarness(t, subsConfig{auth: testAuth(), configure: func(o *graph.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	}})
	socketLines := func() []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "graphql request" && m["operation"] == "websocket" {
				out = append(out, m)
			}
		}
		return out
	}
	waitLines := func(n int) []map[string]any {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for {
			if lines := socketLines(); len(lines) >= n {
				return lines
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d socket log lines, want %d:\n%s", len(socketLines()), n, logs.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	c := connect(t, h.a, "victor-key")
	_ = c.conn.Close(websocket.StatusNormalClosure, "")
	got := waitLines(1)[0]
	if got["caller"] != "victor" || got["role"] != "viewer" {
		t.Errorf("an authenticated socket logs caller %v role %v, want victor viewer", got["caller"], got["role"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	raw, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.a.http.URL, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = raw.Close(websocket.StatusNormalClosure, "")
	got = waitLines(2)[1]
	if got["caller"] != "unauthenticated" || got["role"] != "none" {
		t.Errorf("a socket that never sent connection_init logs caller %v role %v, want unauthenticated none", got["caller"], got["role"])
	}
}
