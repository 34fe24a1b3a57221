package graph_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/sample"
)

// waitLimit bounds how long a test waits for a message before it fails: a bound on a hang,
// not a timing assertion.
const waitLimit = 20 * time.Second

// subsServer is one server of a multi-instance test: its own store (same table, same cursor
// secret), hub and handler.
type subsServer struct {
	store *dynamo.Store
	hub   *graph.Hub
	http  *httptest.Server
	h     http.Handler
}

// subsHarness is two servers on one backend, on the real clock (the hub's hold and overlap
// windows are measured against it).
type subsHarness struct {
	env  *dynamotest.Env
	a, b *subsServer
}

type subsConfig struct {
	hub       graph.HubOptions
	auth      *graph.Auth
	run       bool // run A's poller (else the test polls by hand)
	configure func(*graph.Options)
}

func newSubsHarness(tb testing.TB, cfg subsConfig) *subsHarness {
	tb.Helper()
	env := dynamotest.New(tb, dynamotest.Options{})
	if _, err := env.Store.BulkLoad(context.Background(), sample.Catalogue(time.Now().UTC().Truncate(time.Minute)), 4); err != nil {
		tb.Fatalf("BulkLoad: %v", err)
	}
	h := &subsHarness{env: env}
	h.a = newSubsServer(tb, env, cfg, cfg.run)
	h.b = newSubsServer(tb, env, cfg, false)
	env.Counter.Reset()
	return h
}

func newSubsServer(tb testing.TB, env *dynamotest.Env, cfg subsConfig, run bool) *subsServer {
	tb.Helper()
	store := dynamo.New(env.Client, dynamo.Options{Table: env.Table, CursorSecret: []byte("test-secret"), Logger: testLogger()})
	hubOpts := cfg.hub
	if hubOpts.Poll == 0 {
		hubOpts.Poll = 5 * time.Millisecond
	}
	if hubOpts.Hold == 0 {
		hubOpts.Hold = -1 // no hold: the test's writes come from one clock
	}
	hubOpts.Logger = testLogger()
	hub := graph.NewHub(store, hubOpts)
	opts := graph.Options{Logger: testLogger(), Introspection: true, Hub: hub, Auth: cfg.auth}
	if cfg.configure != nil {
		cfg.configure(&opts)
	}
	s := &subsServer{store: store, hub: hub, h: graph.NewHandler(store, opts)}
	s.http = httptest.NewServer(s.h)
	ctx, cancel := context.WithCancel(context.Background())
	if run {
		go hub.Run(ctx)
	}
	tb.Cleanup(func() {
		cancel()
		hub.Close()
		s.http.Close()
	})
	return s
}

// post sends one GraphQL operation over HTTP with an API key (none when empty).
func (s *subsServer) post(tb testing.TB, key, query string, vars map[string]any) *gqlResponse {
	tb.Helper()
	return postAs(tb, s.h, key, query, vars)
}

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsClient speaks graphql-transport-ws over a real WebSocket (coder/websocket).
type wsClient struct {
	tb   testing.TB
	conn *websocket.Conn
	mu   sync.Mutex
	msgs chan wsMessage
	// closeErr is the error that ended the reader (its close status, for websocket.CloseStatus).
	closeErr error
	done     chan struct{}
	// stash holds messages of other operations that failure read past.
	stash []wsMessage
}

// dial opens a socket to s and sends connection_init with payload (nil for none); it does not
// wait for the ack.
func dial(tb testing.TB, s *subsServer, header http.Header, payload map[string]any) *wsClient {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.http.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: header})
	if err != nil {
		tb.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(1 << 20)
	c := &wsClient{tb: tb, conn: conn, msgs: make(chan wsMessage, 10000), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				c.mu.Lock()
				c.closeErr = err
				c.mu.Unlock()
				close(c.msgs)
				return
			}
			var m wsMessage
			if json.Unmarshal(data, &m) == nil {
				if m.Type == "ping" {
					c.send(wsMessage{Type: "pong"})
					continue
				}
				c.msgs <- m
			}
		}
	}()
	tb.Cleanup(func() { _ = conn.CloseNow() })
	init := wsMessage{Type: "connection_init"}
	if payload != nil {
		init.Payload, _ = json.Marshal(payload)
	}
	c.send(init)
	return c
}

// connect dials and waits for connection_ack.
func connect(tb testing.TB, s *subsServer, key string) *wsClient {
	tb.Helper()
	var payload map[string]any
	if key != "" {
		payload = map[string]any{"Authorization": "Bearer " + key}
	}
	c := dial(tb, s, nil, payload)
	if m := c.next(); m.Type != "connection_ack" {
		tb.Fatalf("after connection_init got %s %s, want connection_ack", m.Type, m.Payload)
	}
	return c
}

func (c *wsClient) send(m wsMessage) {
	c.tb.Helper()
	data, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_ = c.conn.Write(ctx, websocket.MessageText, data)
}

// subscribe starts operation id.
func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.send(wsMessage{ID: id, Type: "subscribe", Payload: payload})
}

// next returns the next message, failing the test when none comes or the socket closed.
func (c *wsClient) next() wsMessage {
	c.tb.Helper()
	if len(c.stash) > 0 {
		m := c.stash[0]
		c.stash = c.stash[1:]
		return m
	}
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.tb.Fatalf("the socket closed: %v", c.closeErr)
		}
		if testing.Verbose() {
			c.tb.Logf("message %s %s %s", m.ID, m.Type, m.Payload)
		}
		return m
	case <-time.After(waitLimit):
		c.tb.Fatalf("no message within %s", waitLimit)
	}
	return wsMessage{}
}

// closed waits for the socket to close and returns its close status.
func (c *wsClient) closed() websocket.StatusCode {
	c.tb.Helper()
	select {
	case <-c.done:
	case <-time.After(waitLimit):
		c.tb.Fatalf("the socket did not close within %s", waitLimit)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return websocket.CloseStatus(c.closeErr)
}

// subChange is a Change as a subscription event carries it.
type subChange struct {
	Changes changeNode
}

// decode returns the change of a next message, failing on anything else.
func (c *wsClient) decode(m wsMessage) changeNode {
	c.tb.Helper()
	var p struct {
		Data   subChange
		Errors []gqlError
	}
	if m.Type != "next" {
		c.tb.Fatalf("got %s %s for %q, want a change", m.Type, m.Payload, m.ID)
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		c.tb.Fatalf("event %s: %v", m.Payload, err)
	}
	return p.Data.Changes
}

// changes reads n next messages of operation id, each a change, failing on anything else.
func (c *wsClient) changes(id string, n int) []changeNode {
	c.tb.Helper()
	var out []changeNode
	for len(out) < n {
		m := c.next()
		if m.ID != id || m.Type != "next" {
			c.tb.Fatalf("got %s %s for %q, want a change for %q (%d of %d so far)", m.Type, m.Payload, m.ID, id, len(out), n)
		}
		var p struct {
			Data   subChange
			Errors []gqlError
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
			c.tb.Fatalf("event %s: %v", m.Payload, err)
		}
		out = append(out, p.Data.Changes)
	}
	return out
}

const subChangeFields = `id at capabilityId entity entityId action revision actor { name role } requestId fields detail`

// failure reads the next message of operation id, which must be an error (an error message, or
// a next carrying errors), and returns its code and message.
func (c *wsClient) failure(id string) (code, msg string) {
	c.tb.Helper()
	var other []wsMessage
	defer func() { c.stash = append(other, c.stash...) }()
	for {
		m := c.next()
		if m.ID != id {
			other = append(other, m)
			continue
		}
		var errs []gqlError
		switch m.Type {
		case "error":
			_ = json.Unmarshal(m.Payload, &errs)
		case "next":
			var p struct{ Errors []gqlError }
			_ = json.Unmarshal(m.Payload, &p)
			errs = p.Errors
		}
		if len(errs) == 0 {
			c.tb.Fatalf("operation %s: got %s %s, want an error", id, m.Type, m.Payload)
		}
		code, _ = errs[0].Extensions["code"].(string)
		return code, errs[0].Message
	}
}
