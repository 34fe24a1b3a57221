package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/reqstats"
)

// Options configure the HTTP surface.
type Options struct {
	// Logger receives request and error logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Introspection allows schema introspection (GraphiQL needs it).
	Introspection bool
	// UI, when set, serves every path not claimed by the API (the explorer at /, GraphiQL at
	// /graphiql).
	UI http.Handler
	// Auth, when set, authenticates requests; nil lets every caller act as admin (tests and
	// library use).
	Auth *Auth
	// Limits bound requests; zero fields take DefaultLimits.
	Limits Limits
	// Deadline bounds each request; what resolved by then is returned and the rest carries
	// TIMEOUT errors. Zero means no deadline.
	Deadline time.Duration
	// Artifacts and Archive, when set, serve job artifacts and metrics archived in S3; every
	// response then also reports extensions.s3.
	Artifacts Artifacts
	Archive   MetricsArchive
	// BatchWindow is how long the metadata loader collects capability IDs that resolvers ask
	// for one by one before it reads them in one BatchGetItem; zero means DefaultBatchWindow.
	// Root capability(id:) fields and every list's capabilities are read at once, without it.
	BatchWindow time.Duration
	// FullItems makes partition reads fetch whole items instead of the Data keys the
	// operation can use (a ProjectionExpression worked out from the whole query).
	FullItems bool
	// PartitionCache, when set, is the server's cache of decoded partition ranges (see
	// PartitionCache; NewPartitionCache): every response's extensions.dynamodb then reports
	// its hits and misses. Nil reads every range from DynamoDB.
	PartitionCache *PartitionCache
	// Instruments, when set, records request metrics; MetricsHandler serves them at /metrics, to
	// callers with an API key when Auth is set (serve it on an address of its own to let a
	// scraper in without one).
	Instruments    *Instruments
	MetricsHandler http.Handler
	// LoopbackOnly answers only loopback clients that address the server by a loopback name
	// (HTTP 403 for the rest, on every route): for a server whose pages carry a generated key.
	LoopbackOnly bool
	// MaxInFlight bounds the GraphQL requests served at once; beyond it a request is answered
	// at once with HTTP 503 and Retry-After. Requests without a key may hold three quarters of
	// them. Zero means DefaultMaxInFlight; negative, no bound.
	MaxInFlight int
	// PersistedQueries, when set, serves automatic persisted queries (Apollo's protocol) from
	// this store; nil answers a hash without a query with PERSISTED_QUERY_NOT_SUPPORTED.
	PersistedQueries *PersistedQueries
	// Hub, when set, serves subscriptions over a WebSocket at /graphql (graphql-transport-ws):
	// one hub per server, shared by its handlers, started with Run and closed at shutdown.
	Hub *Hub
	// WebSocketOrigins are the host patterns (path.Match syntax, as coder/websocket's
	// OriginPatterns) of other origins whose pages may open a WebSocket; a page of the
	// server's own origin, and a client that sends no Origin, always may.
	WebSocketOrigins []string
	// CORSOrigins are the exact origins (as ParseCORSOrigins returns them) of web UIs on other
	// origins that may call /graphql from a browser: their preflights are answered and their
	// responses carry Access-Control-Allow-Origin (see withCORS). None by default; ignored with
	// LoopbackOnly, whose pages carry a generated admin key that no other origin may use. The
	// WebSocket's origin check is WebSocketOrigins, separately.
	CORSOrigins []string

	inFlight *slots
}

// DefaultMaxInFlight is the default bound on concurrent GraphQL requests: with bodies of up to
// 1 MiB it bounds what requests in progress hold to about 64 MiB.
const DefaultMaxInFlight = 64

// NewHandler returns the whole HTTP surface: POST/GET /graphql (GraphQL over HTTP, JSON only: no
// multipart, no form posts, no batches), /healthz, /readyz, and the UI for the rest.
func NewHandler(store Store, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	mux := http.NewServeMux()
	gql := GraphQLHandler(store, opts)
	if !opts.LoopbackOnly {
		gql = withCORS(opts.CORSOrigins, gql)
	}
	mux.Handle("/graphql", gql)
	if opts.UI != nil {
		mux.Handle("/", opts.UI)
	}
	if opts.MetricsHandler != nil {
		mux.Handle("GET /metrics", requireKey(opts.Auth, opts.MetricsHandler))
	}
	mux.HandleFunc("GET /auth/config", func(w http.ResponseWriter, r *http.Request) {
		// What the explorer needs to sign in through the identity provider; {} without one
		// (or without -oidc-client-id, or before discovery): the explorer then uses API keys.
		var body any = struct{}{}
		if opts.Auth != nil && opts.Auth.OIDC != nil {
			if c, ok := opts.Auth.OIDC.Explorer(r.Context()); ok {
				body = c
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(body)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		err := store.Ping(ctx)
		if err == nil && opts.Artifacts != nil {
			err = opts.Artifacts.Ping(ctx)
		}
		if err != nil {
			opts.Logger.WarnContext(ctx, "not ready", "err", err)
			http.Error(w, "not ready: the table or the object store is unreachable", http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ready")
	})
	if opts.LoopbackOnly {
		return loopbackOnly(mux)
	}
	return mux
}

// GraphQLHandler returns the /graphql endpoint alone. Each request gets its own loaders and
// DynamoDB request counter.
func GraphQLHandler(store Store, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	opts.inFlight = newSlots(opts.MaxInFlight)
	r := &Resolver{store: store, artifacts: opts.Artifacts, archive: opts.Archive, log: opts.Logger, now: opts.Now}
	schema := NewExecutableSchema(Config{Resolvers: r, Directives: DirectiveRoot{HasRole: hasRole}})
	segments, err := declaredSegments(schema.Schema())
	if err != nil {
		panic(fmt.Sprintf("graph: the schema's @reads: %v", err)) // compiled in: any test that builds a handler fails
	}
	r.segments = segments
	r.schema = schema.Schema()
	srv := handler.New(schema)
	if opts.Hub != nil {
		srv.AddTransport(opts.Hub.websocketTransport(opts))
		r.hub = opts.Hub
	}
	srv.AddTransport(httpTransport{parserTokens: opts.Limits.ParserTokens, persisted: opts.PersistedQueries})
	cache := newDocCache(1000, 4<<20)
	srv.SetQueryCache(cache)
	srv.SetParserTokenLimit(opts.Limits.ParserTokens)
	if opts.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		// Suggestions ("did you mean ...") would reveal the schema that introspection hides.
		srv.SetDisableSuggestion(true)
	}
	// The persisted query replaces its hash before the limiter checks the document.
	srv.Use(newPersistedQueries(opts.PersistedQueries))
	srv.Use(nullDefaults{schema: schema.Schema()}) // before every extension that reads arguments
	srv.Use(limiter{limits: opts.Limits, cache: cache})
	srv.Use(absentNulls{})
	srv.Use(freshPerMutation{})
	srv.Use(dynamoStats{s3: opts.Artifacts != nil || opts.Archive != nil})
	srv.Use(operationRecorder{})
	srv.Use(socketOperations{store: store, opts: opts})
	srv.SetErrorPresenter(errorPresenter(opts.Logger))
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		opts.Logger.ErrorContext(ctx, "panic in resolver", "panic", fmt.Sprint(p))
		return fmt.Errorf("panic: %v", p)
	})
	return serveGraphQL(srv, store, opts)
}

// dynamoStats adds extensions.dynamodb to every response: the DynamoDB requests, capacity and
// operations that this one GraphQL operation cost; with S3 configured, extensions.s3 too.
type dynamoStats struct{ s3 bool }

var (
	_ graphql.HandlerExtension    = dynamoStats{}
	_ graphql.ResponseInterceptor = dynamoStats{}
)

func (dynamoStats) ExtensionName() string                   { return "DynamoDBStats" }
func (dynamoStats) Validate(graphql.ExecutableSchema) error { return nil }

func (d dynamoStats) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Query {
			// The fields of one query that need the catalogue's counters share one read.
			ctx = dynamo.WithCountsOnce(ctx)
		}
	}
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	snap := reqstats.Empty(reqstats.Capacity)
	if s := dynamo.StatsFrom(ctx); s != nil {
		snap = s.Snapshot()
	}
	if l, ok := ctx.Value(loadersKey{}).(*Loaders); ok {
		if hits, misses, on := l.CacheCounts(); on {
			snap.Cache = &reqstats.CacheCounts{Hits: hits, Misses: misses}
		}
	}
	resp.Extensions["dynamodb"] = snap
	if d.s3 {
		s3 := reqstats.Empty(reqstats.Bytes)
		if st := blob.StatsFrom(ctx); st != nil {
			s3 = st.Snapshot()
		}
		resp.Extensions["s3"] = s3
	}
	return resp
}
