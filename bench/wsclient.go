package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// The benchmark's client of the graphql-transport-ws protocol
// (https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md), as a browser or another
// service speaks it to /graphql: connection_init with the API key in its payload, then
// subscribe, next, error, complete, ping and pong. It reads every message in one goroutine per
// connection and hands each `next` to its subscription's callback with the time it was read.

// wsSubprotocol is the subprotocol the server accepts.
const wsSubprotocol = "graphql-transport-ws"

// wsMessage is one protocol message.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// wsEnd is how a subscription or its connection ended: an `error` message (its payload), a
// `complete`, or the connection closing (its close status and reason, or the read error).
type wsEnd struct {
	Kind    string // "error", "complete", "next with errors", "closed"
	Payload string // the error payload, or the close status and reason
	At      time.Time
}

// wsSub is one subscription on a connection.
type wsSub struct {
	id     string
	onNext func(at time.Time, payload json.RawMessage)

	mu  sync.Mutex
	end *wsEnd
}

// ended returns how the subscription ended, nil while it runs.
func (s *wsSub) ended() *wsEnd {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

func (s *wsSub) finish(e wsEnd) {
	s.mu.Lock()
	if s.end == nil {
		s.end = &e
	}
	s.mu.Unlock()
}

// wsConn is one acknowledged connection.
type wsConn struct {
	conn *websocket.Conn

	wmu  sync.Mutex // one writer at a time
	mu   sync.Mutex
	subs map[string]*wsSub
	next int
}

// dialWS opens a graphql-transport-ws connection to url (http:// or ws://, the /graphql path
// included), sends connection_init with key as the bearer token and waits for connection_ack.
// The connection reads nothing until start is called.
func dialWS(ctx context.Context, url, key string) (*wsConn, error) {
	url = strings.Replace(url, "http://", "ws://", 1)
	tr := &http.Transport{DialContext: (&net.Dialer{Timeout: 10 * time.Second}).DialContext}
	dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, url, &websocket.DialOptions{
		HTTPClient:   &http.Client{Transport: tr},
		Subprotocols: []string{wsSubprotocol},
	})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("websocket %s: status %d: %w", url, resp.StatusCode, err)
		}
		return nil, fmt.Errorf("websocket %s: %w", url, err)
	}
	if conn.Subprotocol() != wsSubprotocol {
		conn.CloseNow()
		return nil, fmt.Errorf("websocket %s: subprotocol %q, want %q", url, conn.Subprotocol(), wsSubprotocol)
	}
	conn.SetReadLimit(1 << 20)
	c := &wsConn{conn: conn, subs: map[string]*wsSub{}}
	init, _ := json.Marshal(map[string]any{"Authorization": "Bearer " + key})
	if err := c.send(dctx, wsMessage{Type: "connection_init", Payload: init}); err != nil {
		conn.CloseNow()
		return nil, err
	}
	for {
		m, err := c.read(dctx)
		if err != nil {
			conn.CloseNow()
			return nil, fmt.Errorf("waiting for connection_ack: %w", err)
		}
		switch m.Type {
		case "connection_ack":
			return c, nil
		case "ping":
			if err := c.send(dctx, wsMessage{Type: "pong"}); err != nil {
				conn.CloseNow()
				return nil, err
			}
		default:
			conn.CloseNow()
			return nil, fmt.Errorf("waiting for connection_ack: got %s %s", m.Type, m.Payload)
		}
	}
}

func (c *wsConn) send(ctx context.Context, m wsMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.conn.Write(ctx, websocket.MessageText, b)
}

func (c *wsConn) read(ctx context.Context) (wsMessage, error) {
	typ, b, err := c.conn.Read(ctx)
	if err != nil {
		return wsMessage{}, err
	}
	if typ != websocket.MessageText {
		return wsMessage{}, fmt.Errorf("binary message of %d bytes", len(b))
	}
	var m wsMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return wsMessage{}, fmt.Errorf("message %.200s: %w", b, err)
	}
	return m, nil
}

// subscribe sends a subscribe message; onNext gets each `next` payload (data and errors) with
// the time it was read. Messages are read only once start has been called.
func (c *wsConn) subscribe(ctx context.Context, query string, vars map[string]any, onNext func(time.Time, json.RawMessage)) (*wsSub, error) {
	c.mu.Lock()
	c.next++
	s := &wsSub{id: fmt.Sprint(c.next), onNext: onNext}
	c.subs[s.id] = s
	c.mu.Unlock()
	p, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	return s, c.send(ctx, wsMessage{ID: s.id, Type: "subscribe", Payload: p})
}

// start runs the read loop until the connection ends (close or ctx), then ends every
// subscription still running as "closed". A `next` whose payload carries errors ends its
// subscription as "next with errors" after its callback ran.
func (c *wsConn) start(ctx context.Context) {
	go func() {
		e := wsEnd{Kind: "closed", Payload: closeText(c.loop(ctx)), At: time.Now()}
		c.mu.Lock()
		for _, s := range c.subs {
			s.finish(e)
		}
		c.mu.Unlock()
	}()
}

func (c *wsConn) loop(ctx context.Context) error {
	for {
		m, err := c.read(ctx)
		if err != nil {
			return err
		}
		at := time.Now()
		switch m.Type {
		case "ping":
			if err := c.send(ctx, wsMessage{Type: "pong"}); err != nil {
				return err
			}
			continue
		case "pong":
			continue
		}
		c.mu.Lock()
		s := c.subs[m.ID]
		c.mu.Unlock()
		if s == nil {
			return fmt.Errorf("%s for unknown subscription %q: %.200s", m.Type, m.ID, m.Payload)
		}
		switch m.Type {
		case "next":
			s.onNext(at, m.Payload)
			var p struct{ Errors json.RawMessage }
			if json.Unmarshal(m.Payload, &p) == nil && len(p.Errors) > 0 && string(p.Errors) != "null" {
				s.finish(wsEnd{Kind: "next with errors", Payload: string(p.Errors), At: at})
			}
		case "error":
			s.finish(wsEnd{Kind: "error", Payload: string(m.Payload), At: at})
		case "complete":
			s.finish(wsEnd{Kind: "complete", At: at})
		default:
			return fmt.Errorf("unexpected message %s: %.200s", m.Type, m.Payload)
		}
	}
}

// closeText describes why a connection ended: the close frame's status and reason, or the error.
func closeText(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("close %d (%s) %q", int(ce.Code), ce.Code, ce.Reason)
	}
	if err == nil {
		return "closed"
	}
	return err.Error()
}

// closeNow drops the connection at once.
func (c *wsConn) closeNow() { c.conn.CloseNow() }
