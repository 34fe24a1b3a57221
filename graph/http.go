package graph

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// requestInfo is what the middleware and the extensions learn about one request, for the
// request log and the metrics.
type requestInfo struct {
	id string

	mu        sync.Mutex
	operation string
	cost      int
	errors    int
	// apqHash and apqQuery are a persisted query that the request registers, stored once the
	// request passes every check before execution (PersistedQueries.commitPersisted).
	apqHash, apqQuery string
	// caller is the caller a WebSocket's log line names: set at the upgrade and again by
	// connection_init (initFunc), read when the socket ends.
	caller Caller
}

type requestInfoKey struct{}

func requestInfoFrom(ctx context.Context) *requestInfo {
	i, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return i
}

func (i *requestInfo) setCost(n int) {
	i.mu.Lock()
	i.cost = n
	i.mu.Unlock()
}

func (i *requestInfo) getCost() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.cost
}

func (i *requestInfo) setCaller(c Caller) {
	i.mu.Lock()
	i.caller = c
	i.mu.Unlock()
}

func (i *requestInfo) getCaller() Caller {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.caller
}

func (i *requestInfo) setOperation(name string) {
	i.mu.Lock()
	i.operation = name
	i.mu.Unlock()
}

func (i *requestInfo) addErrors(n int) {
	i.mu.Lock()
	i.errors += n
	i.mu.Unlock()
}

// RequestIDHeader carries the request ID, echoed (or made) by the server.
const RequestIDHeader = "X-Request-ID"

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)

func newRequestID(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); requestIDPattern.MatchString(id) {
		return id
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Codes of the errors answered at the HTTP level, before GraphQL runs, each with an HTTP status
// of its own.
const (
	CodeBadRequest           = "BAD_REQUEST"            // 400: a request that is not GraphQL over HTTP
	CodeBatchingNotSupported = "BATCHING_NOT_SUPPORTED" // 400: a JSON array of operations
	CodeUnauthenticated      = "UNAUTHENTICATED"        // 401: a wrong key, or none with -anonymous=none
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"     // 405, with Allow
	CodeRequestTooLarge      = "REQUEST_TOO_LARGE"      // 413
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE" // 415: a POST body that is not application/json
	CodeOverloaded           = "OVERLOADED"             // 503, with Retry-After
	// CodeIdentityProviderUnavailable (503, with Retry-After): a token arrived before OIDC
	// discovery succeeded.
	CodeIdentityProviderUnavailable = "IDENTITY_PROVIDER_UNAVAILABLE"
)

// writeHTTPError answers r with a GraphQL-shaped JSON error and an HTTP status: the errors that
// happen before GraphQL runs (400, 401, 405, 413, 415, 503). The body is labelled with the media
// type r accepts (responseType) and never quotes the request.
func writeHTTPError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", responseType(r))
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": map[string]any{"code": code}}},
	})
}

// boundBody refuses a POST body whose declared length is over max with HTTP 413, and bounds
// what the transport may read of any other, which then answers 413 itself past max. It reports
// whether the request may go on.
func boundBody(w http.ResponseWriter, r *http.Request, max int64) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return true
	}
	if r.ContentLength > max {
		writeHTTPError(w, r, http.StatusRequestEntityTooLarge, CodeRequestTooLarge, "the request body is over the limit")
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, max)
	return true
}

// slots bounds the requests served at once; a nil *slots bounds nothing. Anonymous requests (and
// those of tokens that name no role, which get the anonymous role) may hold at most three
// quarters of them, so that callers without a key (a client sending bodies
// slowly, say) cannot lock out the callers with one.
type slots struct {
	mu              sync.Mutex
	used, anonymous int
	max, anonMax    int
}

func newSlots(n int) *slots {
	if n <= 0 {
		return nil
	}
	return &slots{max: n, anonMax: max(1, n*3/4)}
}

// acquire takes a slot without waiting and reports whether there was one.
func (s *slots) acquire(anonymous bool) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used >= s.max || (anonymous && s.anonymous >= s.anonMax) {
		return false
	}
	s.used++
	if anonymous {
		s.anonymous++
	}
	return true
}

func (s *slots) release(anonymous bool) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
	if anonymous {
		s.anonymous--
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

// WriteHeader records the status.
func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Hijack hands the connection to a WebSocket (status 101).
func (s *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(s.ResponseWriter).Hijack()
	if err == nil {
		s.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// authenticateOr401 returns the caller of r's key, or answers 401 with WWW-Authenticate and
// reports false.
func authenticateOr401(w http.ResponseWriter, r *http.Request, auth *Auth) (Caller, bool) {
	c, err := auth.authenticate(r)
	if err != nil {
		authFailure(w, r, err)
		return Caller{}, false
	}
	return c, true
}

// serveGraphQL is the per-request chain in front of the executor: request ID, body bounds,
// authentication, the deadline, per-request loaders and DynamoDB counter, then one structured
// log line and the metrics.
func serveGraphQL(srv http.Handler, store Store, opts Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{id: newRequestID(r)}
		w.Header().Set(RequestIDHeader, info.id)
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		ctx, stats := dynamo.WithStats(r.Context())
		ctx, _ = blob.WithStats(ctx)
		ctx = context.WithValue(ctx, requestInfoKey{}, info)
		caller := Caller{Name: "local", Role: RoleAdmin}
		defer func() {
			snap := stats.Snapshot()
			outcome := "ok"
			switch {
			case rec.status >= 400:
				outcome = "rejected"
			case info.errors > 0:
				outcome = "error"
			}
			info.mu.Lock()
			op := info.operation
			info.mu.Unlock()
			d := time.Since(start)
			opts.Instruments.operation(op, outcome, d)
			opts.Logger.LogAttrs(ctx, slog.LevelInfo, "graphql request",
				slog.String("requestId", info.id), slog.String("operation", op), slog.String("outcome", outcome),
				slog.Int("status", rec.status), slog.Float64("durationMs", float64(d.Microseconds())/1000), slog.Int("dynamodbRequests", snap.Requests),
				slog.String("caller", caller.Name), slog.String("role", caller.Role.String()))
		}()
		if opts.Hub != nil && isWebSocketUpgrade(r) {
			// A WebSocket: no deadline, body bound or request slot (it lives as long as its
			// subscriptions; the hub bounds connections and subscriptions per key). A key in the
			// upgrade request is checked now; connection_init's (graphql.initFunc) may replace it.
			if opts.Auth != nil && r.Header.Get("Authorization") != "" {
				c, ok := authenticateOr401(rec, r, opts.Auth)
				if !ok {
					return
				}
				caller = c
				ctx = context.WithValue(ctx, upgradeCallerKey{}, c)
			}
			info.setOperation("websocket")
			leave, ok := opts.Hub.enterPending()
			if !ok {
				rec.Header().Set("Retry-After", "1")
				writeHTTPError(rec, r, http.StatusServiceUnavailable, CodeOverloaded, "too many WebSocket connections are waiting for connection_init: retry in a moment")
				return
			}
			defer leave()
			ctx = context.WithValue(ctx, pendingKey{}, leave)
			// The socket's log line (written when it ends) names the caller connection_init
			// authenticated; until then, with keys, nobody is.
			info.setCaller(caller)
			if opts.Auth != nil && r.Header.Get("Authorization") == "" {
				info.setCaller(Caller{Name: unauthenticatedCaller, Role: RoleNone})
			}
			ctx = context.WithValue(ctx, socketKey{}, new(*hubConn))
			sctx, end := opts.Hub.socketContext(WithCaller(ctx, caller))
			defer end()
			srv.ServeHTTP(rec, r.WithContext(sctx))
			caller = info.getCaller()
			return
		}
		if opts.Deadline > 0 {
			// The deadline covers the whole request: reading the body, parsing, validation and
			// execution. The connection's read deadline follows it, so a client that sends its
			// body slowly is cut off too (the server's WriteTimeout bounds a slow reader).
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, opts.Deadline)
			defer cancel()
			_ = http.NewResponseController(w).SetReadDeadline(start.Add(opts.Deadline))
		}
		// The key is checked before the body is read: a wrong key costs one header.
		if opts.Auth != nil {
			c, ok := authenticateOr401(rec, r, opts.Auth)
			if !ok {
				return
			}
			caller = c
		}
		anonymous := caller.countsAsAnonymous()
		if !opts.inFlight.acquire(anonymous) {
			rec.Header().Set("Retry-After", "1")
			writeHTTPError(rec, r, http.StatusServiceUnavailable, CodeOverloaded, "the server is at its limit of concurrent requests: retry in a moment")
			return
		}
		defer opts.inFlight.release(anonymous)
		if !boundBody(rec, r, opts.Limits.MaxBody) {
			return
		}
		ctx = WithCaller(ctx, caller)
		ctx = dynamo.WithActor(ctx, catalog.Actor{Name: caller.Name, Role: caller.Role.String()}, info.id)
		ctx = WithLoaders(ctx, NewLoaders(store, LoaderOptions{Instruments: opts.Instruments, BatchWindow: opts.BatchWindow, FullItems: opts.FullItems, Cache: opts.PartitionCache}))
		srv.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// operationRecorder notes the operation's name and error count for the request log.
type operationRecorder struct{}

var (
	_ graphql.HandlerExtension    = operationRecorder{}
	_ graphql.ResponseInterceptor = operationRecorder{}
)

func (operationRecorder) ExtensionName() string                   { return "OperationRecorder" }
func (operationRecorder) Validate(graphql.ExecutableSchema) error { return nil }

func (operationRecorder) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if info := requestInfoFrom(ctx); info != nil {
		if graphql.HasOperationContext(ctx) {
			if op := graphql.GetOperationContext(ctx); op != nil {
				info.setOperation(op.OperationName)
				if op.OperationName == "" && op.Operation != nil {
					info.setOperation(op.Operation.Name)
				}
			}
		}
		if resp != nil {
			info.addErrors(len(resp.Errors))
		}
	}
	return resp
}
