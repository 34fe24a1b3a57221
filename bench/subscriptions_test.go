package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// checkDelivery counts every way a subscriber's reads can differ from the feed: a change never
// read, read twice, read before an earlier change of its capability, or not in the feed at
// all. Changes of different capabilities may interleave in any order.
func TestCheckDelivery(t *testing.T) {
	a1, a2, a3 := delivered{"A", "a1"}, delivered{"A", "a2"}, delivered{"A", "a3"}
	b1, b2 := delivered{"B", "b1"}, delivered{"B", "b2"}
	want := []delivered{a1, b1, a2, b2, a3}
	tests := []struct {
		name string
		got  []delivered
		want deliveryCheck
	}{
		{"all in order", []delivered{a1, b1, a2, b2, a3}, deliveryCheck{Expected: 5, Received: 5}},
		{"capabilities interleaved otherwise", []delivered{b1, b2, a1, a2, a3}, deliveryCheck{Expected: 5, Received: 5}},
		{"one missing", []delivered{a1, b1, b2, a3}, deliveryCheck{Expected: 5, Received: 4, Missing: 1}},
		{"a duplicate", []delivered{a1, b1, a2, a2, b2, a3}, deliveryCheck{Expected: 5, Received: 6, Duplicates: 1}},
		{"a late duplicate", []delivered{a1, b1, a2, b2, a3, a1}, deliveryCheck{Expected: 5, Received: 6, Duplicates: 1}},
		{"out of order in a capability", []delivered{a2, a1, b1, b2, a3}, deliveryCheck{Expected: 5, Received: 5, OutOfOrder: 1}},
		{"unexpected", []delivered{a1, b1, a2, b2, a3, {"C", "c1"}}, deliveryCheck{Expected: 5, Received: 6, Unexpected: 1}},
		{"an ID of another capability", []delivered{a1, b1, a2, b2, {"B", "a3"}}, deliveryCheck{Expected: 5, Received: 5, Missing: 1, Unexpected: 1}},
		{"nothing", nil, deliveryCheck{Expected: 5, Missing: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkDelivery(want, tt.got)
			if got != tt.want {
				t.Errorf("checkDelivery(%v) = %+v, want %+v", tt.got, got, tt.want)
			}
			if got.ok() != (tt.want.Missing+tt.want.Duplicates+tt.want.OutOfOrder+tt.want.Unexpected == 0) {
				t.Errorf("checkDelivery(%v).ok() = %v", tt.got, got.ok())
			}
		})
	}
	if s := checkDelivery(want, nil).String(); !strings.Contains(s, "5 MISSING") {
		t.Errorf("a failed check reads %q: it must say so loudly", s)
	}
}

// summarize's p50, p99 and max, and pooled's choice of subscribers by instance and kind.
func TestLatencySummaryAndPooling(t *testing.T) {
	var lats []time.Duration
	for i := 1; i <= 200; i++ {
		lats = append(lats, time.Duration(i)*time.Millisecond)
	}
	s := summarize(lats)
	if s.N != 200 || s.P50 != 100*time.Millisecond || s.P99 != 198*time.Millisecond || s.Max != 200*time.Millisecond {
		t.Errorf("summarize(1..200 ms) = %+v, want N 200, p50 100ms, p99 198ms, max 200ms", s)
	}
	if s := summarize(nil); s != (latencySummary{}) {
		t.Errorf("summarize(nil) = %+v, want zero", s)
	}
	ms := func(v int) []time.Duration { return []time.Duration{time.Duration(v) * time.Millisecond} }
	p := &subPhase{Subs: []*subResult{
		{Instance: "A", FromCommit: ms(1), FromSent: ms(11)},
		{Instance: "A", Catalogue: true, FromCommit: ms(2), FromSent: ms(12)},
		{Instance: "B", FromCommit: ms(3), FromSent: ms(13)},
	}}
	tests := []struct {
		inst     string
		kind     int
		fromSent bool
		want     time.Duration // sum
	}{
		{"A", anyKind, false, 3 * time.Millisecond},
		{"A", capKind, false, time.Millisecond},
		{"A", catalogueKind, false, 2 * time.Millisecond},
		{"A", anyKind, true, 23 * time.Millisecond},
		{"B", anyKind, false, 3 * time.Millisecond},
		{"B", catalogueKind, false, 0},
	}
	for _, tt := range tests {
		var sum time.Duration
		for _, l := range p.pooled(tt.inst, tt.kind, tt.fromSent) {
			sum += l
		}
		if sum != tt.want {
			t.Errorf("pooled(%s, %d, %v) sums to %v, want %v", tt.inst, tt.kind, tt.fromSent, sum, tt.want)
		}
	}
}

// -subscriptions-only replaces its own section and nothing else; a file without one gets it
// where a whole run puts it.
func TestSpliceSection(t *testing.T) {
	section := "## Subscriptions\n\nnew\n\n"
	tests := []struct{ name, doc, want string }{
		{"replaces", "# B\n\n## Other\n\nx\n\n## Subscriptions\n\nold\n\n### Part\n\nold\n\n## What each operation asks\n\ny\n",
			"# B\n\n## Other\n\nx\n\n## Subscriptions\n\nnew\n\n## What each operation asks\n\ny\n"},
		{"replaces the last", "# B\n\n## Subscriptions\n\nold\n", "# B\n\n## Subscriptions\n\nnew\n\n"},
		{"inserts", "# B\n\n## Other\n\nx\n\n## What each operation asks\n\ny\n", "# B\n\n## Other\n\nx\n\n## Subscriptions\n\nnew\n\n## What each operation asks\n\ny\n"},
		{"appends", "# B\n\n## Other\n\nx\n", "# B\n\n## Other\n\nx\n\n## Subscriptions\n\nnew\n\n"},
		{"empty", "", section},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := spliceSection(tt.doc, section); got != tt.want {
				t.Errorf("spliceSection(%q) = %q, want %q", tt.doc, got, tt.want)
			}
		})
	}
}

// fakeWS is a graphql-transport-ws server for the client's test: it acknowledges an init with
// the right key, pings once, and answers each subscription with the script for its variables.
func fakeWS(t *testing.T, key string, script func(id string, vars map[string]any, send func(wsMessage))) *httptest.Server {
	t.Helper()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{wsSubprotocol}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		var mu sync.Mutex
		send := func(m wsMessage) {
			b, _ := json.Marshal(m)
			mu.Lock()
			defer mu.Unlock()
			_ = c.Write(ctx, websocket.MessageText, b)
		}
		ponged := false
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m wsMessage
			if err := json.Unmarshal(b, &m); err != nil {
				return
			}
			switch m.Type {
			case "connection_init":
				var p map[string]string
				_ = json.Unmarshal(m.Payload, &p)
				if p["Authorization"] != "Bearer "+key {
					_ = c.Close(4403, "Forbidden")
					return
				}
				send(wsMessage{Type: "ping"}) // before the ack: the client must answer it
			case "pong":
				if !ponged {
					ponged = true
					send(wsMessage{Type: "connection_ack"})
				}
			case "subscribe":
				var p struct{ Variables map[string]any }
				_ = json.Unmarshal(m.Payload, &p)
				if p.Variables["cap"] == "close" {
					_ = c.Close(websocket.StatusGoingAway, "shutting down")
					return
				}
				script(m.ID, p.Variables, send)
			}
		}
	}))
}

// The benchmark's client speaks graphql-transport-ws: it sends the key in connection_init,
// answers pings, hands each next to its subscription in order, and tells how a subscription
// ended (an error message, complete, a next with errors, or the connection closing).
func TestWSClient(t *testing.T) {
	srv := fakeWS(t, "k", func(id string, vars map[string]any, send func(wsMessage)) {
		next := func(cid string) {
			send(wsMessage{ID: id, Type: "next", Payload: json.RawMessage(`{"data":{"changes":{"id":"` + cid + `","capabilityId":"CAP-1","entity":"JOB","requestId":"r1"}}}`)})
		}
		switch vars["cap"] {
		case "error":
			next("c1")
			send(wsMessage{ID: id, Type: "error", Payload: json.RawMessage(`[{"message":"too slow","extensions":{"code":"SUBSCRIBER_TOO_SLOW"}}]`)})
		case "complete":
			next("c1")
			next("c2")
			send(wsMessage{ID: id, Type: "complete"})
		case "next-errors":
			send(wsMessage{ID: id, Type: "next", Payload: json.RawMessage(`{"errors":[{"message":"no"}],"data":null}`)})
		}
	})
	defer srv.Close()
	ctx := context.Background()
	if _, err := dialWS(ctx, srv.URL, "wrong"); err == nil || !strings.Contains(err.Error(), "4403") {
		t.Errorf("dialWS with a wrong key: %v, want the server's close 4403", err)
	}
	inst := &subInstance{name: "fake", url: strings.TrimSuffix(srv.URL, "/")}
	for _, tt := range []struct {
		cap, end string
		changes  int
		bad      int
	}{{"error", "error", 1, 0}, {"complete", "complete", 2, 0}, {"next-errors", "next with errors", 0, 1}} {
		s, err := subscribe(ctx, inst, "k", tt.cap, tt.cap, nil, true)
		if err != nil {
			t.Fatalf("subscribe %s: %v", tt.cap, err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for s.sub.ended() == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		e := s.sub.ended()
		if e == nil || e.Kind != tt.end {
			t.Errorf("subscription %s ended %+v, want %s", tt.cap, e, tt.end)
		}
		got := s.take()
		if len(got) != tt.changes || s.bad != tt.bad {
			t.Errorf("subscription %s read %d changes and %d other payloads, want %d and %d", tt.cap, len(got), s.bad, tt.changes, tt.bad)
		}
		for i, g := range got {
			if g.Cap != "CAP-1" || g.RequestID != "r1" || g.At.IsZero() || g.ID != []string{"c1", "c2"}[i] {
				t.Errorf("subscription %s read %+v", tt.cap, g)
			}
		}
		s.conn.closeNow()
	}
	// A connection that closes ends its subscriptions with the close status.
	s, err := subscribe(ctx, inst, "k", "closed", "close", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.sub.ended() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if e := s.sub.ended(); e == nil || e.Kind != "closed" || !strings.Contains(e.Payload, "1001") {
		t.Errorf("subscription on a closed connection ended %+v, want closed with 1001", e)
	}
}

// The connection that stopped reading must have read, per capability, the feed's first changes
// in order; its subscriptions' ends are grouped without the IDs that differ between them.
func TestStallChecks(t *testing.T) {
	feed := []feedChange{{ID: "a1", CapabilityID: "A"}, {ID: "b1", CapabilityID: "B"}, {ID: "a2", CapabilityID: "A"}, {ID: "b2", CapabilityID: "B"}}
	r := func(cap, id string) recvChange { return recvChange{Cap: cap, ID: id} }
	tests := []struct {
		name string
		got  []recvChange
		want bool
	}{
		{"nothing", nil, true},
		{"all", []recvChange{r("A", "a1"), r("B", "b1"), r("A", "a2"), r("B", "b2")}, true},
		{"a prefix of each", []recvChange{r("B", "b1"), r("A", "a1")}, true},
		{"a gap", []recvChange{r("A", "a2")}, false},
		{"a repeat", []recvChange{r("A", "a1"), r("A", "a1")}, false},
		{"past the end", []recvChange{r("A", "a1"), r("A", "a2"), r("A", "a3")}, false},
		{"another capability", []recvChange{r("C", "c1")}, false},
	}
	for _, tt := range tests {
		if got := isPrefix(feed, tt.got); got != tt.want {
			t.Errorf("isPrefix(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
	e1 := &wsEnd{Kind: "error", Payload: `[{"message":"fell behind","extensions":{"code":"SUBSCRIBER_TOO_SLOW","lastId":"x1"}}]`}
	e2 := &wsEnd{Kind: "error", Payload: `[{"message":"fell behind","extensions":{"code":"SUBSCRIBER_TOO_SLOW","lastId":"x2"}}]`}
	if endText(e1) != endText(e2) || endText(e1) != "error SUBSCRIBER_TOO_SLOW: fell behind" {
		t.Errorf("endText = %q and %q, want both %q", endText(e1), endText(e2), "error SUBSCRIBER_TOO_SLOW: fell behind")
	}
	if got := endText(&wsEnd{Kind: "closed", Payload: "close 1001"}); got != "closed: close 1001" {
		t.Errorf("endText(closed) = %q", got)
	}
}

// The section end to end, in process and small: two instances on one memdyn, every change read
// exactly once and in order by every subscriber on either instance, idle subscriptions each
// reading their change, and the polling counted on both instances. Nothing here is timed. The
// phase with a connection that stops reading is left out: it lasts until the sockets' buffers
// (megabytes) and the hub's queues have filled.
func TestSubscriptionsSection(t *testing.T) {
	if testing.Short() {
		t.Skip("writes for several seconds")
	}
	cfg := config{delay: time.Millisecond, subs: subConfig{enabled: true, rate: 50, duration: 2 * time.Second, idle: time.Second, idleSubs: 12, caps: 2, target: time.Second}}
	rep, err := measureSubscriptions(context.Background(), cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.lost(); err != nil {
		t.Error(err)
	}
	if len(rep.Phases) != 1 || rep.Stalled != nil {
		t.Fatalf("%d phases (stalled %v), want the steady one alone", len(rep.Phases), rep.Stalled)
	}
	for _, ph := range rep.Phases {
		if ph.Writes < 100 || ph.Changes < ph.Writes {
			t.Errorf("phase %q: %d writes, %d changes: want at least 100 writes and a change for each", ph.Name, ph.Writes, ph.Changes)
		}
		if n := len(ph.pooled("A", anyKind, false)); n == 0 {
			t.Errorf("phase %q: no deliveries on A", ph.Name)
		}
	}
	if m := rep.Memory; m == nil || m.Received != m.Subs || m.After.Goroutines <= m.Before.Goroutines {
		t.Errorf("idle subscriptions: %+v, want each to read its change and goroutines to grow", m)
	}
	for _, r := range rep.Polling {
		// An instance nobody subscribes to sends nothing; one with subscribers polls.
		none := r.State == "idle, no subscription"
		if none && (r.PerMinute != 0 || r.Poller != 0) {
			t.Errorf("polling %s %s: %.0f requests a minute, the poller's %.0f: want none", r.Instance, r.State, r.PerMinute, r.Poller)
		}
		if !none && (r.PerMinute <= 0 || r.Poller <= 0) {
			t.Errorf("polling %s %s: %.0f requests a minute, the poller's %.0f: want both counted", r.Instance, r.State, r.PerMinute, r.Poller)
		}
	}
	var buf strings.Builder
	rep.write(func(format string, args ...any) { fmt.Fprintf(&buf, format+"\n", args...) })
	for _, want := range []string{"## Subscriptions", "| p99 from commit to a subscriber on another instance", "exactly once, in order", "### Polling cost", "### Idle subscriptions"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the section lacks %q", want)
		}
	}
}
