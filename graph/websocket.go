package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// The WebSocket edge of /graphql: subscriptions over graphql-transport-ws (docs/api.md#subscriptions).

// WebSocket close codes beyond RFC 6455's: graphql-transport-ws's 4403 Forbidden; 4401 when
// the caller's token expires; 1013 (Try Again Later) for a key at its limit of connections;
// 1001 (Going Away) at shutdown.
const (
	closeForbidden = 4403
	// closeTokenExpired closes the socket of a token that expired.
	closeTokenExpired = 4401
	closeBadMessage   = 4400
	closeTryLater     = 1013
	closeGoingAway    = 1001
	wsInitTimeout     = 10 * time.Second
	wsPingInterval    = 25 * time.Second
	wsMaxMessage      = 64 << 10
	goingAwayReason   = "going away: the server is shutting down, reconnect"
)

// socketTransport is gqlgen's WebSocket transport for WebSocket upgrades only: gqlgen's claims
// any request with an Upgrade header, which would take a POST that offers h2c (curl --http2)
// away from the HTTP transport.
type socketTransport struct{ transport.Websocket }

// Supports reports whether r asks for a WebSocket.
func (socketTransport) Supports(r *http.Request) bool { return isWebSocketUpgrade(r) }

// Do serves one socket with gqlgen's transport and closes it when the transport is done with
// it. gqlgen's returns without closing the socket when connection_init's payload is not a JSON
// object (`"payload": []`): nobody would read or close it again, so before any key is checked
// or counted a client could hold sockets (file descriptors) past the init timeout, and past
// its own going away, without bound. Such a socket is closed with 4400 (graphql-transport-ws's
// invalid message); after a socket's normal end the close is a no-op.
func (t socketTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	var accepted *hubConn
	if impl, ok := t.Implementation.(hubImplementation); ok {
		impl.accepted = &accepted
		t.Implementation = impl
	}
	t.Websocket.Do(w, r, exec)
	if accepted != nil {
		_ = accepted.WriteClose(closeBadMessage, "invalid connection_init payload: want an object")
		_ = accepted.Close()
	}
}

// isWebSocketUpgrade reports whether r asks to upgrade to a WebSocket.
func isWebSocketUpgrade(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Upgrade"), ",") {
		if strings.EqualFold(strings.TrimSpace(v), "websocket") {
			return true
		}
	}
	return false
}

// websocketTransport returns gqlgen's WebSocket transport bound to the hub: authentication
// from connection_init, the Origin check on upgrade, the bounds of SubscriptionLimits, and every
// socket tracked so that shutdown can close it.
func (h *Hub) websocketTransport(opts Options) socketTransport {
	limit := int64(wsMaxMessage)
	return socketTransport{transport.Websocket{
		Implementation: hubImplementation{hub: h, inner: transport.CoderWebsocketImplementation{
			// coder/websocket refuses an Origin whose host is not the request's Host unless
			// it matches a pattern: a page on another site cannot open a socket with the
			// visitor's cookies or network position (cross-site WebSocket hijacking).
			AcceptOptions: coderws.AcceptOptions{OriginPatterns: opts.WebSocketOrigins},
		}},
		InitFunc:              h.initFunc(opts.Auth),
		InitTimeout:           wsInitTimeout,
		CloseFunc:             h.closeFunc,
		KeepAlivePingInterval: wsPingInterval,
		PingPongInterval:      wsPingInterval,
		PayloadReadLimit:      &limit,
		ErrorFunc: func(ctx context.Context, err error) {
			opts.Logger.DebugContext(ctx, "websocket", "err", err)
		},
	}}
}

// connState is one authenticated connection.
type connState struct {
	caller        Caller
	subscriptions int // guarded by Hub.mu
	// expiry closes the socket when its caller's token expires (nil for API keys).
	expiry *time.Timer
}

// socketKey carries, in a socket's context, where hubImplementation.Accept puts the accepted
// socket (a **hubConn): connection_init closes it when its token expires.
type socketKey struct{}

// tokenExpiredReason is the close reason of a socket whose token expired.
const tokenExpiredReason = "the token expired: sign in again and reconnect"

type connStateKey struct{}

func connStateFrom(ctx context.Context) *connState {
	c, _ := ctx.Value(connStateKey{}).(*connState)
	return c
}

// upgradeCallerKey carries the caller of an upgrade request that sent Authorization.
type upgradeCallerKey struct{}

// unauthenticatedCaller names, in a socket's log line, a caller that never finished
// connection_init on a server with keys.
const unauthenticatedCaller = "unauthenticated"

// pendingKey carries the function that ends a socket's count among those before
// connection_init (enterPending).
type pendingKey struct{}

// enterPending counts a socket among those that have not finished connection_init, and
// reports false when Limits.Unauthenticated are already: a caller is known only after
// connection_init, so until then no key's limit holds the socket, and without this bound any
// client could hold sockets (goroutines, descriptors, buffers) for the init timeout each, as
// many as it can open. leave ends the count (once; at connection_init, whatever its outcome,
// or when the socket ends).
func (h *Hub) enterPending() (leave func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending >= h.opts.Limits.Unauthenticated {
		return nil, false
	}
	h.pending++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.pending--
			h.mu.Unlock()
		})
	}, true
}

// initFunc authenticates connection_init: its payload's Authorization (else the upgrade
// request's, else none: the anonymous role) through the same key check as HTTP. A wrong key
// closes the socket with 4403 Forbidden; a caller at its limit of connections with 1013.
func (h *Hub) initFunc(auth *Auth) transport.WebsocketInitFunc {
	return func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		if leave, ok := ctx.Value(pendingKey{}).(func()); ok {
			leave() // past connection_init: the key's limits hold it from here
		}
		caller := CallerFrom(ctx)
		if auth != nil {
			c, fromUpgrade := ctx.Value(upgradeCallerKey{}).(Caller)
			var err error
			if a := payload.Authorization(); a != "" || !fromUpgrade {
				c, err = auth.authorize(ctx, a)
			}
			if err != nil {
				ctx = transport.WithWebsocketCloseCode(ctx, closeForbidden)
				return transport.AppendCloseReason(ctx, "Forbidden"), nil, err
			}
			caller = c
		}
		if info := requestInfoFrom(ctx); info != nil {
			info.setCaller(caller) // the socket's log line names it
		}
		if !h.openConn(caller.Name) {
			ctx = transport.WithWebsocketCloseCode(ctx, closeTryLater)
			reason := fmt.Sprintf("this key holds %d connections, its limit", h.opts.Limits.ConnectionsPerKey)
			if h.isClosed() {
				ctx, reason = transport.WithWebsocketCloseCode(ctx, closeGoingAway), goingAwayReason
			}
			return transport.AppendCloseReason(ctx, reason), nil, errors.New(reason)
		}
		ctx = WithCaller(ctx, caller)
		ctx = dynamo.WithActor(ctx, catalog.Actor{Name: caller.Name, Role: caller.Role.String()}, "")
		state := &connState{caller: caller}
		if hc, ok := ctx.Value(socketKey{}).(**hubConn); ok && *hc != nil && !caller.Expires.IsZero() {
			// A token's socket ends when the token does: closed with 4401 and the reason, its
			// subscriptions end with it; the client reconnects with a new token.
			conn := *hc
			state.expiry = time.AfterFunc(time.Until(caller.Expires), func() {
				_ = conn.WriteClose(closeTokenExpired, tokenExpiredReason)
			})
		}
		return context.WithValue(ctx, connStateKey{}, state), nil, nil
	}
}

func (h *Hub) closeFunc(ctx context.Context, _ int) {
	if c := connStateFrom(ctx); c != nil {
		if c.expiry != nil {
			c.expiry.Stop()
		}
		h.closeConn(c.caller.Name)
	}
}

func (h *Hub) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// openConn counts a connection of caller and reports whether it is within the limit.
func (h *Hub) openConn(caller string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.conns[caller] >= h.opts.Limits.ConnectionsPerKey {
		return false
	}
	h.conns[caller]++
	h.opts.Instruments.connectionsOpen(1)
	return true
}

func (h *Hub) closeConn(caller string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns[caller]--; h.conns[caller] <= 0 {
		delete(h.conns, caller)
	}
	h.opts.Instruments.connectionsOpen(-1)
}

// hubImplementation accepts sockets with coder/websocket and tracks them in the hub.
type hubImplementation struct {
	hub   *Hub
	inner transport.CoderWebsocketImplementation
	// accepted, when set, receives the socket accepted (socketTransport.Do closes it).
	accepted **hubConn
}

func (i hubImplementation) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := i.inner.Accept(w, r, o)
	if err != nil {
		return nil, err
	}
	hc := &hubConn{WebsocketConn: c, hub: i.hub}
	if slot, ok := r.Context().Value(socketKey{}).(**hubConn); ok {
		*slot = hc
	}
	if i.accepted != nil {
		*i.accepted = hc
	}
	i.hub.mu.Lock()
	closed := i.hub.closed
	if !closed {
		i.hub.sockets[hc] = struct{}{}
	}
	i.hub.mu.Unlock()
	if closed {
		hc.goingAway()
	}
	return hc, nil
}

// hubConn is a tracked socket.
type hubConn struct {
	transport.WebsocketConn
	hub *Hub
}

var (
	_ transport.WebsocketReadLimiter   = (*hubConn)(nil)
	_ transport.WebsocketReadDeadliner = (*hubConn)(nil)
)

func (c *hubConn) Close() error {
	c.hub.mu.Lock()
	delete(c.hub.sockets, c)
	c.hub.mu.Unlock()
	return c.WebsocketConn.Close()
}

func (c *hubConn) SetReadLimit(n int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(n)
	}
}

func (c *hubConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// socketContext returns the context a socket is served with: ctx's values without its
// cancellation, ended when the hub has closed its sockets. The server's base context ends as
// shutdown begins, and gqlgen's transport closes a socket whose context ends with 1000 (normal
// closure, "terminated"): clients would take that for a deliberate end and not reconnect. The
// hub's Close sends 1001 (going away) first, and only then ends the sockets' contexts. A socket
// whose client goes away ends on the transport's read error, as before.
func (h *Hub) socketContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(h.gone, cancel)
	return ctx, func() { stop(); cancel() }
}

// goingAway closes the socket with 1001: the transport's reader then ends the connection.
func (c *hubConn) goingAway() {
	_ = c.WriteClose(closeGoingAway, goingAwayReason)
}

// socketOperations serves each operation sent over a socket as a POST is served: fresh loaders,
// a DynamoDB counter and request info of its own. Only subscriptions are served there: a query
// or mutation is refused with OPERATION_NOT_SUPPORTED.
type socketOperations struct {
	store Store
	opts  Options
}

var (
	_ graphql.HandlerExtension     = socketOperations{}
	_ graphql.OperationInterceptor = socketOperations{}
)

func (socketOperations) ExtensionName() string                   { return "SocketOperations" }
func (socketOperations) Validate(graphql.ExecutableSchema) error { return nil }

func (s socketOperations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	conn := connStateFrom(ctx)
	op := graphql.GetOperationContext(ctx)
	if conn == nil {
		if op.Operation != nil && op.Operation.Operation == ast.Subscription {
			return graphql.OneShot(&graphql.Response{Errors: []*gqlerror.Error{codedError(CodeOperationNotSupported,
				"subscriptions are served over a WebSocket at /graphql (graphql-transport-ws), not over POST or GET")}})
		}
		rh := next(ctx)
		if s.opts.Hub == nil || op.Operation == nil || op.Operation.Operation != ast.Mutation {
			return rh
		}
		// A write of this process: poll now rather than at the next tick (the poll still
		// reads the index and the partition, as for any other writer's change).
		return func(ctx context.Context) *graphql.Response {
			resp := rh(ctx)
			s.opts.Hub.Ring()
			return resp
		}
	}
	if op.Operation == nil || op.Operation.Operation != ast.Subscription {
		return graphql.OneShot(&graphql.Response{Errors: []*gqlerror.Error{codedError(CodeOperationNotSupported,
			"only subscriptions are served over the WebSocket: send queries and mutations with POST /graphql")}})
	}
	if keys := graphql.CollectFields(op, op.Operation.SelectionSet, []string{"Subscription"}); len(keys) != 1 {
		// gqlparser's rule counts top-level field names, not response keys: `a: changes
		// b: changes` passed validation and gqlgen failed it as an internal error.
		return graphql.OneShot(&graphql.Response{Errors: []*gqlerror.Error{codedError(CodeValidationFailed,
			"a subscription must select exactly one top-level field (aliases count apart)")}})
	}
	info := &requestInfo{id: newRequestID(&http.Request{})}
	if conn := requestInfoFrom(ctx); conn != nil {
		info.setCost(conn.getCost()) // the limiter priced the document on the connection's info
	}
	ctx, _ = dynamo.WithStats(ctx)
	ctx, _ = blob.WithStats(ctx)
	ctx = context.WithValue(ctx, requestInfoKey{}, info)
	ctx = WithLoaders(ctx, NewLoaders(s.store, LoaderOptions{Instruments: s.opts.Instruments, BatchWindow: s.opts.BatchWindow, FullItems: s.opts.FullItems, Cache: s.opts.PartitionCache}))
	s.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "graphql subscription",
		slog.String("requestId", info.id), slog.String("operation", op.OperationName),
		slog.String("caller", conn.caller.Name), slog.String("role", conn.caller.Role.String()))
	return next(ctx)
}
