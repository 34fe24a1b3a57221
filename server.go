// Command catalogue serves the Capability Catalogue GraphQL API over one DynamoDB table.
//
// With no DYNAMODB_ENDPOINT and no -aws it runs an embedded, in-memory DynamoDB (memdyn),
// creates the table and loads the sample catalogue, so `go run .` works on a fresh clone.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/datafile"
	"github.com/capcat/catalogue/internal/tlsreload"
	"github.com/capcat/catalogue/internal/tune"
	"github.com/capcat/catalogue/notify"
	"github.com/capcat/catalogue/sample"
	"github.com/capcat/catalogue/sweep"
	"github.com/capcat/catalogue/web"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// config is the server's configuration from flags and environment.
type config struct {
	port          int
	host          string
	table         string
	endpoint      string
	useAWS        bool
	createTable   bool
	seed          bool
	introspection bool
	keysFile      string
	anonymous     string
	maxCost       int
	timeout       time.Duration
	archiveMinAge time.Duration
	maxInFlight   int
	apqBytes      int
	cacheBytes    int
	archiveEvery  time.Duration
	// notify* configure the notification deliverer (-notify-webhooks ...).
	notifyWebhooks       map[string]string
	notifySecret         string
	notifyEvery          time.Duration
	notifyHealthChannels []string
	// rollbackSweepEvery is how often the rollback sweeper runs (-rollback-sweep-every).
	rollbackSweepEvery time.Duration
	// changeRetention is how long the change feed keeps a change (-change-retention).
	changeRetention time.Duration
	// changePoll, changeHold and the subscription limits configure the subscription hub.
	changePoll, changeHold                                time.Duration
	subsPerConn, subsPerKey, connsPerKey, connsBeforeInit int
	wsOrigins                                             string
	metricsAddr                                           string
	tlsCert                                               string
	tlsKey                                                string
	// corsOrigins are the parsed -cors-origins (graph.ParseCORSOrigins).
	corsOrigins []string
	// dataFile keeps the embedded backend's data across restarts (-data, DATA_FILE).
	dataFile string
	// emptyEmbedded starts the embedded backend without the sample when it has no data file
	// to load (the import command loads its own).
	emptyEmbedded bool
	// oidc* configure single sign-on with an OpenID Connect provider (-oidc-issuer ...).
	oidcIssuer, oidcAudience, oidcClientID, oidcRoleClaim, oidcGroupsClaim, oidcRoleMap, oidcScopes string
	// hostGiven reports whether -host or HOST was given: without it, a server with a generated
	// key listens on loopback only.
	hostGiven bool
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("catalogue", flag.ContinueOnError)
	fs.SetOutput(stderr)
	envInt := func(k string, def int) int {
		if v, err := strconv.Atoi(getenv(k)); err == nil {
			return v
		}
		return def
	}
	envStr := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	c := &config{}
	fs.IntVar(&c.port, "port", envInt("PORT", 8080), "HTTP port (env PORT); 0 picks a free port")
	fs.StringVar(&c.host, "host", envStr("HOST", ""), "interface to listen on (env HOST); empty means all, or 127.0.0.1 when the admin key is generated")
	fs.StringVar(&c.table, "table", envStr("TABLE_NAME", dynamo.DefaultTable), "DynamoDB table name (env TABLE_NAME)")
	fs.StringVar(&c.endpoint, "dynamodb-endpoint", getenv("DYNAMODB_ENDPOINT"), "DynamoDB-compatible endpoint URL, e.g. dynalite (env DYNAMODB_ENDPOINT); empty runs the embedded in-memory backend")
	fs.BoolVar(&c.useAWS, "aws", getenv("USE_AWS") == "1", "use real DynamoDB through the standard AWS configuration chain (env USE_AWS=1)")
	fs.BoolVar(&c.createTable, "create-table", false, "create the table (with GSI1 and TTL) if it does not exist")
	fs.BoolVar(&c.seed, "seed", false, "load the sample catalogue into the configured backend")
	fs.BoolVar(&c.introspection, "introspection", false, "allow GraphQL introspection (always on for the embedded default; GraphiQL needs it)")
	fs.StringVar(&c.keysFile, "api-keys-file", getenv("API_KEYS_FILE"), "file of API keys, one \"role sha256-hex-of-key name\" a line (env API_KEYS_FILE)")
	fs.StringVar(&c.anonymous, "anonymous", envStr("ANONYMOUS_ROLE", "viewer"), "role of requests without a key: viewer, or none to refuse them (env ANONYMOUS_ROLE)")
	fs.IntVar(&c.maxCost, "max-cost", envInt("MAX_QUERY_COST", graph.DefaultLimits.MaxCost), "most nodes one query may request (env MAX_QUERY_COST)")
	fs.DurationVar(&c.timeout, "request-timeout", 10*time.Second, "deadline of each GraphQL request")
	fs.DurationVar(&c.archiveMinAge, "archive-min-age", envDuration(getenv, "ARCHIVE_MIN_AGE", 0),
		"how old metrics must be before they may move to S3 (env ARCHIVE_MIN_AGE; default 24h, 10m for the embedded default)")
	fs.DurationVar(&c.archiveEvery, "archive-every", envDuration(getenv, "ARCHIVE_EVERY", 24*time.Hour),
		"archive metrics older than -archive-min-age to S3 this often, one instance at a time across the fleet (env ARCHIVE_EVERY; 0 turns it off)")
	webhooks := fs.String("notify-webhooks", getenv("NOTIFY_WEBHOOKS"),
		"webhook of each notification channel, name=url,name=url, or @file with one name=url a line (env NOTIFY_WEBHOOKS); the only URLs notifications go to")
	fs.StringVar(&c.notifySecret, "notify-secret", getenv("NOTIFY_SECRET"),
		"secret that signs every notification (HMAC-SHA256 of timestamp.body in X-Catalogue-Signature; env NOTIFY_SECRET)")
	fs.DurationVar(&c.notifyEvery, "notify-every", envDuration(getenv, "NOTIFY_EVERY", 5*time.Second),
		"how often the deliverer posts due notifications, one instance at a time across the fleet (env NOTIFY_EVERY; 0 turns it off)")
	fs.DurationVar(&c.rollbackSweepEvery, "rollback-sweep-every", envDuration(getenv, "ROLLBACK_SWEEP_EVERY", time.Minute),
		"how often the sweeper rolls back running automatic deployments whose targets breached their threshold since they started (a recordMetrics call stopped before its rollback), one instance at a time across the fleet (env ROLLBACK_SWEEP_EVERY; 0 turns it off)")
	healthChannels := fs.String("notify-health-channels", getenv("NOTIFY_HEALTH_CHANNELS"),
		"channels that get a notification when recordMetrics moves a component's or capability's health status, comma-separated (env NOTIFY_HEALTH_CHANNELS)")
	fs.DurationVar(&c.changeRetention, "change-retention", envDuration(getenv, "CHANGE_RETENTION", dynamo.DefaultChangeRetention),
		"how long the change feed (the changes queries) keeps each change, as its TTL (env CHANGE_RETENTION, e.g. 720h)")
	fs.DurationVar(&c.changePoll, "change-poll", envDuration(getenv, "CHANGE_POLL", graph.DefaultChangePoll),
		"how often each server reads the change index for subscribers (env CHANGE_POLL): one DynamoDB Query a poll, and one more per capability that changed")
	fs.DurationVar(&c.changeHold, "change-hold", envDuration(getenv, "CHANGE_HOLD", graph.DefaultChangeHold),
		"how long catalogue-wide subscribers' changes wait so that late index entries sort in (env CHANGE_HOLD); capability subscriptions are not held")
	fs.IntVar(&c.subsPerConn, "subscriptions-per-connection", envInt("SUBSCRIPTIONS_PER_CONNECTION", graph.DefaultSubscriptionLimits.PerConnection), "most subscriptions on one WebSocket (env SUBSCRIPTIONS_PER_CONNECTION)")
	fs.IntVar(&c.subsPerKey, "subscriptions-per-key", envInt("SUBSCRIPTIONS_PER_KEY", graph.DefaultSubscriptionLimits.PerKey), "most subscriptions of one API key, and of all callers without a key together (env SUBSCRIPTIONS_PER_KEY)")
	fs.IntVar(&c.connsPerKey, "connections-per-key", envInt("CONNECTIONS_PER_KEY", graph.DefaultSubscriptionLimits.ConnectionsPerKey), "most WebSockets of one API key, and of all callers without a key together (env CONNECTIONS_PER_KEY)")
	fs.IntVar(&c.connsBeforeInit, "connections-before-init", envInt("CONNECTIONS_BEFORE_INIT", graph.DefaultSubscriptionLimits.Unauthenticated), "most WebSockets that have not finished connection_init, all callers together; beyond it an upgrade is HTTP 503 (env CONNECTIONS_BEFORE_INIT)")
	fs.StringVar(&c.wsOrigins, "websocket-origins", getenv("WEBSOCKET_ORIGINS"), "comma-separated host patterns of other origins whose pages may open a WebSocket, e.g. app.example.com,*.example.com (env WEBSOCKET_ORIGINS); the server's own origin always may")
	corsOrigins := fs.String("cors-origins", getenv("CORS_ORIGINS"), "comma-separated exact origins (scheme://host[:port]) of web UIs on other origins that may call /graphql from a browser with an API key or token (env CORS_ORIGINS); none by default. Needs -api-keys-file or -oidc-issuer. WebSockets are -websocket-origins")
	fs.IntVar(&c.maxInFlight, "max-in-flight", envInt("MAX_IN_FLIGHT", graph.DefaultMaxInFlight), "most GraphQL requests served at once; beyond it 503 with Retry-After (env MAX_IN_FLIGHT; -1 for no bound)")
	fs.IntVar(&c.apqBytes, "apq-cache-bytes", envInt("APQ_CACHE_BYTES", graph.DefaultPersistedQueryBytes), "bytes of automatic persisted queries kept (env APQ_CACHE_BYTES); 0 turns them off")
	fs.IntVar(&c.cacheBytes, "cache-bytes", envInt("CACHE_BYTES", graph.DefaultCacheBytes), "bytes of decoded partition ranges (components, dependencies, rules) kept, each used only while its capability's WriteSeq is unchanged, and an eighth more of archived metric hours, each used only while its object's ETag is unchanged (env CACHE_BYTES); 0 turns both off")
	fs.StringVar(&c.metricsAddr, "metrics-addr", getenv("METRICS_ADDR"), "serve /metrics on this address (e.g. 10.0.0.5:9090) without a key, and not on the API's; empty serves it on the API's address to API keys (env METRICS_ADDR)")
	fs.StringVar(&c.tlsCert, "tls-cert", getenv("TLS_CERT_FILE"), "PEM certificate (chain) for HTTPS, reloaded when it changes or on SIGHUP (env TLS_CERT_FILE)")
	fs.StringVar(&c.tlsKey, "tls-key", getenv("TLS_KEY_FILE"), "PEM private key of -tls-cert (env TLS_KEY_FILE)")
	fs.StringVar(&c.dataFile, "data", getenv("DATA_FILE"), "keep the embedded backend's data in this file (env DATA_FILE): loaded at start (the sample only when the file is absent), saved within a second of every write and on exit")
	fs.StringVar(&c.oidcIssuer, "oidc-issuer", getenv("OIDC_ISSUER"), "accept bearer tokens (JWTs) of this OpenID Connect issuer beside API keys (env OIDC_ISSUER); discovery reads ISSUER/.well-known/openid-configuration")
	fs.StringVar(&c.oidcAudience, "oidc-audience", getenv("OIDC_AUDIENCE"), "a token's aud must include this (env OIDC_AUDIENCE); required with -oidc-issuer")
	fs.StringVar(&c.oidcClientID, "oidc-client-id", getenv("OIDC_CLIENT_ID"), "public client (authorization code with PKCE) the explorer signs in with (env OIDC_CLIENT_ID); empty: no sign-in in the explorer")
	fs.StringVar(&c.oidcScopes, "oidc-scopes", envStr("OIDC_SCOPES", "openid,profile"), "comma-separated scopes the explorer asks for (env OIDC_SCOPES); openid is always asked")
	fs.StringVar(&c.oidcRoleClaim, "oidc-role-claim", envStr("OIDC_ROLE_CLAIM", graph.DefaultOIDCRoleClaim), "claim (string or array; a dotted path such as realm_access.roles reaches into objects) naming viewer, devops or admin, or values mapped by -oidc-role-map; the highest wins (env OIDC_ROLE_CLAIM)")
	fs.StringVar(&c.oidcGroupsClaim, "oidc-groups-claim", getenv("OIDC_GROUPS_CLAIM"), "claim of groups whose values give roles through -oidc-role-map only (env OIDC_GROUPS_CLAIM), e.g. groups")
	fs.StringVar(&c.oidcRoleMap, "oidc-role-map", getenv("OIDC_ROLE_MAP"), "comma-separated value=role pairs mapping values of the role or groups claim to roles (env OIDC_ROLE_MAP), e.g. 'platform-admins=admin,sre=devops'")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { c.hostGiven = c.hostGiven || f.Name == "host" })
	hooks, herr := notify.ParseWebhooks(*webhooks)
	if herr != nil {
		return nil, herr
	}
	c.notifyWebhooks = hooks
	for _, ch := range strings.Split(*healthChannels, ",") {
		if ch = strings.TrimSpace(ch); ch != "" && !slices.Contains(c.notifyHealthChannels, ch) {
			c.notifyHealthChannels = append(c.notifyHealthChannels, ch)
		}
	}
	if len(c.notifyHealthChannels) > dynamo.MaxHealthChannels {
		return nil, fmt.Errorf("-notify-health-channels (NOTIFY_HEALTH_CHANNELS) names %d channels, at most %d", len(c.notifyHealthChannels), dynamo.MaxHealthChannels)
	}
	c.hostGiven = c.hostGiven || getenv("HOST") != ""
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return nil, errors.New("-tls-cert and -tls-key go together")
	}
	if c.timeout <= 0 {
		return nil, errors.New("-request-timeout must be positive")
	}
	if c.archiveMinAge >= dynamo.MetricRetention {
		return nil, fmt.Errorf("-archive-min-age (ARCHIVE_MIN_AGE) %s is at or beyond the %s retention of metrics: samples would expire before they may be archived",
			c.archiveMinAge, dynamo.MetricRetention)
	}
	if c.useAWS && c.endpoint != "" {
		return nil, errors.New("-aws and -dynamodb-endpoint exclude each other")
	}
	if c.dataFile != "" && !c.embedded() {
		return nil, errors.New("-data (DATA_FILE) keeps the embedded backend's data: it does not go with -aws or -dynamodb-endpoint, whose data lives in that DynamoDB")
	}
	var err error
	if c.corsOrigins, err = graph.ParseCORSOrigins(splitList(*corsOrigins)); err != nil {
		return nil, fmt.Errorf("-cors-origins (CORS_ORIGINS): %w", err)
	}
	if len(c.corsOrigins) > 0 && c.generatesKey() {
		return nil, errors.New("-cors-origins needs -api-keys-file (API_KEYS_FILE) or -oidc-issuer (OIDC_ISSUER): without either the server generates an admin key, renders it into its pages and answers loopback clients only, so no other origin may call it")
	}
	if c.anonymous != "none" && c.anonymous != "viewer" {
		return nil, fmt.Errorf("-anonymous must be viewer or none, not %q", c.anonymous)
	}
	if (c.oidcIssuer == "") != (c.oidcAudience == "") {
		return nil, errors.New("-oidc-issuer and -oidc-audience go together")
	}
	if c.oidcIssuer == "" && (c.oidcClientID != "" || c.oidcGroupsClaim != "" || c.oidcRoleMap != "") {
		return nil, errors.New("-oidc-client-id, -oidc-groups-claim and -oidc-role-map need -oidc-issuer")
	}
	if _, err := parseRoleMap(c.oidcRoleMap); err != nil {
		return nil, err
	}
	if c.embedded() {
		c.introspection = true
		if c.archiveMinAge == 0 {
			c.archiveMinAge = blob.EmbeddedMinArchiveAge
		}
	}
	return c, nil
}

func envDuration(getenv func(string) string, k string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(getenv(k)); err == nil {
		return d
	}
	return def
}

// embedded reports whether the configuration runs the in-process backend.
func (c *config) embedded() bool { return c.endpoint == "" && !c.useAWS }

// generatesKey reports whether the server generates an admin key for this run (loadAuth),
// which the banner prints and the pages embed: with neither an API keys file nor an OIDC
// issuer nobody could write otherwise. parseConfig refuses -cors-origins on the same decision.
func (c *config) generatesKey() bool { return c.keysFile == "" && c.oidcIssuer == "" }

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := commandNamed(args)
	if cmd != nil {
		args = args[1:]
	}
	cfg, err := parseConfig(configArgs(args, cmd != nil), getenv, stderr)
	if err != nil {
		return err
	}
	if cmd != nil {
		if err := cmd.prepare(cfg); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := graph.NewInstruments(reg)
	// The server's partition cache follows the writes of its own store (PartitionCache.Retag):
	// it is built before the store, which calls it after each committed mutation.
	var cache *graph.PartitionCache
	var onCommit func(dynamo.Commit)
	if cmd == nil {
		cache = graph.NewPartitionCache(cfg.cacheBytes, reg)
		if cache != nil {
			onCommit = cache.Retag
		}
	}
	b, err := openBackends(ctx, cfg, getenv, log, metrics, onCommit)
	if err != nil {
		return err
	}
	defer b.close()
	if cmd != nil {
		return cmd.runWith(ctx, cfg, archiveArgs(args), commandIO{stdin: os.Stdin, stdout: stdout, stderr: stderr}, b)
	}
	if b.data != nil && !b.data.Exists() {
		// A new data file is written at once: it holds the sample from the start, and a
		// location that cannot be written fails now, not at the first write.
		if err := b.data.Save(ctx); err != nil {
			return err
		}
	}
	store := b.store
	log.Info("runtime", "gogc", tune.GC(getenv), "gomaxprocs", runtime.GOMAXPROCS(0))
	if cfg.archiveEvery > 0 {
		// The first run comes a while after start (a restarted fleet does not archive at
		// once), then one every interval; a lease in the table keeps it to one instance.
		holder := "server-" + graph.NewAPIKey()[:12]
		first := min(cfg.archiveEvery, 10*time.Minute)
		go b.archiver.Schedule(ctx, first, cfg.archiveEvery, holder, func(r archive.ScheduleResult) {
			switch {
			case r.Err != nil:
				log.Warn("scheduled archive stopped; the next run resumes it", "err", r.Err, "itemsDeleted", r.Report.ItemsDeleted)
			case r.Ran:
				log.Info("scheduled archive", "objectsWritten", r.Report.ObjectsWritten, "pointsArchived", r.Report.PointsArchived,
					"itemsDeleted", r.Report.ItemsDeleted, "itemsKept", r.Report.ItemsKept)
			}
		})
	}
	if cfg.notifyEvery > 0 {
		// The outbox's due notifications are posted by one instance at a time (a lease).
		d := notify.New(store, notify.Options{Webhooks: cfg.notifyWebhooks, Secret: []byte(cfg.notifySecret), Registerer: reg})
		holder := "server-" + graph.NewAPIKey()[:12]
		go d.Run(ctx, cfg.notifyEvery, holder, func(r notify.Result, err error) {
			switch {
			case err != nil:
				log.Warn("notification deliverer pass stopped; the next pass resumes it", "err", err)
			case r != (notify.Result{}):
				log.Info("notifications", "delivered", r.Delivered, "failed", r.Failed, "retried", r.Retried)
			}
		})
	}
	if cfg.rollbackSweepEvery > 0 {
		// Automatic rollbacks a recordMetrics call left undone are finished by one instance
		// at a time (a lease).
		sw := sweep.New(store, reg)
		holder := "server-" + graph.NewAPIKey()[:12]
		go sw.Run(ctx, cfg.rollbackSweepEvery, holder, func(r sweep.Result, err error) {
			switch {
			case err != nil:
				log.Warn("rollback sweep pass stopped; the next pass resumes it", "err", err)
			case r.RolledBack > 0:
				log.Info("rollback sweep", "checked", r.Checked, "rolledBack", r.RolledBack, "requests", r.Requests)
			}
		})
	}
	go func() {
		// Deletes that a crash stopped after their first step are finished now.
		n, err := store.ResumeDeletes(ctx)
		switch {
		case err != nil:
			log.Warn("resume deletes", "err", err, "finished", n)
		case n > 0:
			log.Info("resumed unfinished deletes", "finished", n)
		}
	}()
	reg.MustRegister(graph.NewCatalogueCollector(store, 15*time.Second))
	auth, generatedKey, err := loadAuth(cfg)
	if err != nil {
		return err
	}
	if auth.OIDC, err = loadOIDC(cfg, log); err != nil {
		return err
	}
	if auth.OIDC != nil {
		// The server starts even when the provider is unreachable: discovery is retried in
		// the background, and until it succeeds tokens are answered 503 (API keys work).
		go auth.OIDC.DiscoverInBackground(ctx)
	}
	if generatedKey != "" {
		if !cfg.hostGiven {
			cfg.host = "127.0.0.1"
		} else if !loopbackHost(cfg.host) {
			fmt.Fprintf(stderr, "WARNING: -host %q with a generated admin key: the pages embed the key, so the server answers loopback clients only (HTTP 403 to the rest); configure API_KEYS_FILE to serve others\n", cfg.host)
		}
	}
	var certs *tlsreload.Reloader
	if cfg.tlsCert != "" {
		if certs, err = tlsreload.New(cfg.tlsCert, cfg.tlsKey, tlsreload.WithLogger(log)); err != nil {
			return err
		}
		certs.WatchSignals(ctx, syscall.SIGHUP)
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	metricsHandler := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	opts := graph.Options{
		Logger:           log,
		Introspection:    cfg.introspection,
		UI:               web.Handler(web.Options{APIKey: generatedKey, SignInOrigin: signInOrigin(cfg)}),
		Auth:             auth,
		Limits:           graph.Limits{MaxCost: cfg.maxCost},
		Deadline:         cfg.timeout,
		Instruments:      metrics,
		MetricsHandler:   metricsHandler,
		Artifacts:        b.objects,
		Archive:          b.archiver,
		MaxInFlight:      cfg.maxInFlight,
		PersistedQueries: graph.NewPersistedQueries(cfg.apqBytes),
		PartitionCache:   cache,
		LoopbackOnly:     generatedKey != "",
		Hub: graph.NewHub(store, graph.HubOptions{Poll: cfg.changePoll, Hold: cfg.changeHold, Logger: log, Instruments: metrics,
			Limits: graph.SubscriptionLimits{PerConnection: cfg.subsPerConn, PerKey: cfg.subsPerKey, ConnectionsPerKey: cfg.connsPerKey, Unauthenticated: cfg.connsBeforeInit}}),
		WebSocketOrigins: splitList(cfg.wsOrigins),
		CORSOrigins:      cfg.corsOrigins,
	}
	go opts.Hub.Run(ctx)
	defer opts.Hub.Close()
	var servers []*http.Server
	var metricsLn net.Listener
	if cfg.metricsAddr != "" {
		opts.MetricsHandler = nil
		metricsLn, err = net.Listen("tcp", cfg.metricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen for metrics: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", metricsHandler)
		msrv := newHTTPServer(ctx, mux, cfg.timeout, log)
		servers = append(servers, msrv)
		go func() { _ = msrv.Serve(metricsLn) }()
	}
	srv := newHTTPServer(ctx, graph.NewHandler(store, opts), cfg.timeout, log)
	// Shutdown does not wait for hijacked connections: the hub closes every WebSocket with
	// 1001 (going away) so that clients reconnect to another server.
	srv.RegisterOnShutdown(opts.Hub.Close)
	if certs != nil {
		srv.TLSConfig = certs.Config()
	}
	servers = append(servers, srv)
	banner(stdout, cfg, ln.Addr(), b, auth, generatedKey)
	if metricsLn != nil {
		fmt.Fprintf(stdout, "  metrics:     http://%s/metrics (no key: keep this address private)\n", metricsLn.Addr())
	}

	errc := make(chan error, 1)
	go func() {
		if certs != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "shutting down: draining in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(shutdownCtx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	// The requests are done: a last save of what they wrote.
	return b.closeData()
}

// newHTTPServer returns a server of h whose connections cannot be held open: headers must
// arrive within 10 s, a whole request within the request deadline and 5 s more (a GraphQL
// request's own read deadline is its deadline), the response be written within the deadline
// and 10 s more (so a client that reads slowly is cut off), and an idle keep-alive connection
// is closed after a minute.
func newHTTPServer(ctx context.Context, h http.Handler, deadline time.Duration, log *slog.Logger) *http.Server {
	return &http.Server{
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       deadline + 5*time.Second,
		WriteTimeout:      deadline + 10*time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}

// loopbackHost reports whether host (an interface to listen on) is a loopback name or address.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// signInOrigin is the origin of the identity provider the explorer signs in with ("" without
// -oidc-client-id): the issuer's, where the token endpoint is at every provider documented.
func signInOrigin(cfg *config) string {
	if cfg.oidcClientID == "" {
		return ""
	}
	return cfg.oidcIssuer
}

// parseRoleMap reads -oidc-role-map: comma-separated value=role pairs.
func parseRoleMap(s string) (map[string]graph.Role, error) {
	m := map[string]graph.Role{}
	for _, pair := range splitList(s) {
		value, role, ok := strings.Cut(pair, "=")
		r, err := graph.ParseRole(strings.TrimSpace(role))
		if !ok || strings.TrimSpace(value) == "" || err != nil {
			return nil, fmt.Errorf("-oidc-role-map: want value=viewer|devops|admin pairs, not %q", pair)
		}
		m[strings.TrimSpace(value)] = r
	}
	return m, nil
}

// loadOIDC returns the token verifier of cfg (nil without -oidc-issuer).
func loadOIDC(cfg *config, log *slog.Logger) (*graph.OIDC, error) {
	if cfg.oidcIssuer == "" {
		return nil, nil
	}
	roles, err := parseRoleMap(cfg.oidcRoleMap)
	if err != nil {
		return nil, err
	}
	return graph.NewOIDC(graph.OIDCConfig{Issuer: cfg.oidcIssuer, Audience: cfg.oidcAudience, ClientID: cfg.oidcClientID,
		Scopes: splitList(cfg.oidcScopes), RoleClaim: cfg.oidcRoleClaim, GroupsClaim: cfg.oidcGroupsClaim, RoleMap: roles, Logger: log})
}

// loadAuth builds the authentication of cfg: the keys of API_KEYS_FILE, or, without a key file,
// one random admin key for this run that the banner prints and the explorer sends (so a server
// is never left without anyone able to write), unless an OIDC issuer is configured: its tokens
// then say who writes, and no key is generated.
func loadAuth(cfg *config) (*graph.Auth, string, error) {
	auth := &graph.Auth{Keys: &graph.KeyRing{}, Anonymous: graph.RoleViewer}
	if cfg.anonymous == "none" {
		auth.Anonymous = graph.RoleNone
	}
	if cfg.keysFile != "" {
		f, err := os.Open(cfg.keysFile)
		if err != nil {
			return nil, "", fmt.Errorf("api keys: %w", err)
		}
		defer f.Close()
		if auth.Keys, err = graph.ParseKeyRing(f); err != nil {
			return nil, "", err
		}
	}
	generated := ""
	if cfg.generatesKey() {
		generated = graph.NewAPIKey()
		auth.Keys.Add(generated, graph.RoleAdmin, "embedded-default")
	}
	return auth, generated, nil
}

func banner(w io.Writer, cfg *config, addr net.Addr, b *backends, auth *graph.Auth, generatedKey string) {
	port := addr.(*net.TCPAddr).Port
	scheme := "http"
	if cfg.tlsCert != "" {
		scheme = "https"
	}
	where := "on every interface"
	if ip := net.ParseIP(strings.Trim(cfg.host, "[]")); cfg.host != "" && (ip == nil || !ip.IsUnspecified()) {
		where = "on " + cfg.host + " only"
	}
	// The URLs name the address listened on, 127.0.0.1 when that is every interface.
	base := fmt.Sprintf("%s://127.0.0.1:%d", scheme, port)
	if ip := addr.(*net.TCPAddr).IP; ip != nil && !ip.IsUnspecified() {
		base = scheme + "://" + net.JoinHostPort(ip.String(), strconv.Itoa(port))
	}
	fmt.Fprintf(w, "Capability Catalogue GraphQL API\n")
	fmt.Fprintf(w, "  listening on %s (%s)\n", base, where)
	fmt.Fprintf(w, "  GraphQL:     %s/graphql\n", base)
	fmt.Fprintf(w, "  explorer:    %s/   (GraphiQL at /graphiql)\n", base)
	switch {
	case cfg.embedded():
		fmt.Fprintf(w, "  backend:     embedded in-memory DynamoDB (memdyn), table %s\n", cfg.table)
		if b.data != nil {
			fmt.Fprintf(w, "  data:        %s (saved within 1 s of each write and on exit; object bodies in %s)\n", b.data.Path(), b.data.ObjectsDir())
		} else {
			fmt.Fprintf(w, "  data:        in memory only (lost on exit; -data FILE keeps it)\n")
		}
	case cfg.useAWS:
		fmt.Fprintf(w, "  backend:     AWS DynamoDB, table %s\n", cfg.table)
	default:
		fmt.Fprintf(w, "  backend:     %s, table %s\n", cfg.endpoint, cfg.table)
	}
	switch {
	case b.s3Embedded && b.data != nil:
		fmt.Fprintf(w, "  object store: embedded in-memory S3 (gofakes3), buckets %s and %s: kept in the data file too\n", b.buckets[0], b.buckets[1])
	case b.s3Embedded:
		fmt.Fprintf(w, "  object store: embedded in-memory S3 (gofakes3), buckets %s and %s: also lost on exit\n", b.buckets[0], b.buckets[1])
	default:
		fmt.Fprintf(w, "  object store: %s, buckets %s and %s\n", b.s3Where, b.buckets[0], b.buckets[1])
	}
	if b.loaded != nil {
		fmt.Fprintf(w, "  data file loaded: %d items, %d objects\n", b.loaded.Items, b.loaded.Objects)
	}
	if b.seeded > 0 {
		fmt.Fprintf(w, "  sample catalogue loaded: %d items, %d job artifacts\n", b.seeded, b.artifacts)
	}
	if cfg.metricsAddr == "" {
		fmt.Fprintf(w, "  metrics:     %s/metrics (with an API key)\n", base)
	}
	if generatedKey != "" {
		fmt.Fprintf(w, "  admin API key (generated for this run; the explorer sends it; loopback clients only):\n    Authorization: Bearer %s\n", generatedKey)
	} else {
		fmt.Fprintf(w, "  API keys:    %d loaded\n", auth.Keys.Len())
	}
	if auth.OIDC != nil {
		c := auth.OIDC.Config()
		signIn := "no explorer sign-in (no -oidc-client-id)"
		if c.ClientID != "" {
			signIn = "explorer signs in as client " + c.ClientID
		}
		fmt.Fprintf(w, "  OIDC tokens: issuer %s, audience %s, role claim %s; %s\n", c.Issuer, c.Audience, c.RoleClaim, signIn)
	}
	fmt.Fprintf(w, "  anonymous requests: %s; introspection: %v\n", auth.Anonymous, cfg.introspection)
	if len(cfg.corsOrigins) > 0 {
		fmt.Fprintf(w, "  cross-origin web UIs (CORS on /graphql): %s\n", strings.Join(cfg.corsOrigins, ", "))
	}
}

// backends are the stores the server runs on.
type backends struct {
	store      *dynamo.Store
	objects    *blob.Store
	archiver   *archive.Archiver
	seeded     int
	artifacts  int
	s3Embedded bool
	s3Where    string
	buckets    [2]string
	closers    []func() error
	// data is the embedded backend's data file (-data), loaded is what it held at start.
	data   *datafile.File
	loaded *datafile.LoadReport
}

// closeData stops saving the data file after a last save of what changed, and returns that
// save's error (nil without -data).
func (b *backends) closeData() error {
	if b.data == nil {
		return nil
	}
	return b.data.Close()
}

func (b *backends) close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		_ = b.closers[i]()
	}
}

// openBackends connects DynamoDB and S3 as cfg says: the embedded in-memory pair by default
// (table created; with -data the data file loaded, or when it is absent, or without -data, the
// sample catalogue and artifacts), an endpoint, or AWS. With -data every later write is saved
// (b.close saves the last ones).
func openBackends(ctx context.Context, cfg *config, getenv func(string) string, log *slog.Logger, metrics *graph.Instruments, onCommit func(dynamo.Commit)) (_ *backends, err error) {
	b := &backends{}
	var data *datafile.File
	defer func() {
		if err != nil {
			b.close()
			if data != nil {
				_ = data.Close() // not started: releases the file, saves nothing
			}
		}
	}()
	endpoint, key := cfg.endpoint, ""
	var httpClient aws.HTTPClient // nil: the SDK's; the embedded DynamoDB's is in process
	var generation func() uint64  // the embedded DynamoDB's write generation (dynamo.Options)
	var watchDB, watchS3 func(http.Handler) http.Handler
	if cfg.embedded() {
		if cfg.dataFile != "" {
			if data, err = datafile.Open(cfg.dataFile, datafile.Options{Logger: log}); err != nil {
				return nil, err
			}
			watchDB, watchS3 = data.WatchDynamoDB, data.WatchS3
		}
		emb, err := dynamo.StartEmbedded(watchDB)
		if err != nil {
			return nil, err
		}
		b.closers = append(b.closers, emb.Close)
		endpoint, key, httpClient, generation = emb.URL, emb.Key, emb, emb.Generation
		cfg.createTable = true
		cfg.seed = !cfg.emptyEmbedded && (data == nil || !data.Exists())
	}
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: endpoint, AccessKeyID: key, HTTPClient: httpClient}, Observer: metrics})
	if err != nil {
		return nil, err
	}
	b.store = dynamo.New(client, dynamo.Options{Table: cfg.table, Logger: log, CursorSecret: []byte(getenv("CURSOR_SECRET")), ChangeRetention: cfg.changeRetention, Generation: generation,
		HealthChannels: cfg.notifyHealthChannels, OnCommit: onCommit})
	if cfg.createTable {
		if err := b.store.CreateTable(ctx, 2*time.Minute); err != nil {
			return nil, fmt.Errorf("create table: %w", err)
		}
	}

	s3cfg, s3opts := blob.FromEnv(getenv)
	s3opts.Logger, s3opts.MinArchiveAge = log, cfg.archiveMinAge
	var s3emb *blob.Embedded
	if s3cfg.Endpoint == "" && !cfg.useAWS {
		objects, emb, err := blob.OpenEmbeddedWrapped(ctx, s3opts, watchS3)
		if err != nil {
			return nil, err
		}
		b.closers = append(b.closers, emb.Close)
		b.objects, b.s3Embedded, s3emb = objects, true, emb
	} else {
		c, err := blob.NewClient(ctx, s3cfg)
		if err != nil {
			return nil, err
		}
		b.objects, b.s3Where = blob.New(c, s3opts), "AWS S3"
		if s3cfg.Endpoint != "" {
			b.s3Where = s3cfg.Endpoint
		}
		if cfg.createTable {
			if err := b.objects.EnsureBuckets(ctx); err != nil {
				return nil, fmt.Errorf("create buckets: %w", err)
			}
		}
	}
	b.buckets = b.objects.Buckets()
	b.archiver = archive.New(b.store, b.objects, archive.Options{CursorSecret: []byte(getenv("CURSOR_SECRET")), HourCacheBytes: archive.HourCacheShare(cfg.cacheBytes)})
	if data != nil {
		data.Bind(b.store, s3emb)
		if data.Exists() {
			if b.loaded, err = data.Load(ctx); err != nil {
				return nil, err
			}
		}
	}
	if cfg.seed {
		bundles := sample.Catalogue(time.Now())
		if b.seeded, err = b.store.BulkLoad(ctx, bundles, 4); err != nil {
			return nil, fmt.Errorf("load sample catalogue: %w", err)
		}
		if b.artifacts, err = sample.LoadArtifacts(ctx, b.objects, bundles); err != nil {
			return nil, fmt.Errorf("load sample artifacts: %w", err)
		}
	}
	if data != nil {
		// Closed before the embedded servers (closers run last first): the last save reads them.
		data.Start()
		b.data = data
		b.closers = append(b.closers, data.Close)
	}
	return b, nil
}

// commandIO is where a command reads and writes.
type commandIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is a subcommand, `go run . NAME [connection flags] [its arguments]`: it works on the
// configured backends instead of serving.
type command struct {
	name string
	// does ends the note "this command ..." printed when the command runs on the embedded
	// backend without -data: a fresh copy that is gone when it ends.
	does string
	// dataOut reports whether the command writes its result on stdout (its note goes to stderr).
	dataOut bool
	// empty starts that fresh copy without the sample catalogue.
	empty bool
	// readsData refuses a -data file that does not exist: there would be nothing to read.
	readsData bool
	run       func(ctx context.Context, args []string, cio commandIO, b *backends) error
}

// commands are the subcommands.
func commands() []command {
	const elsewhere = "Point DYNAMODB_ENDPOINT (or -aws) at the table, or give -data FILE for the embedded default's data file."
	return []command{
		{name: archive.Command,
			does: "archives its own fresh copy. To archive a running embedded server use the archiveMetrics mutation, or point DYNAMODB_ENDPOINT and S3_ENDPOINT at shared backends.",
			run: func(ctx context.Context, args []string, cio commandIO, b *backends) error {
				return archive.RunCommand(ctx, args, cio.stdout, b.archiver)
			}},
		{name: checkCommand, does: "checks its own fresh copy. " + elsewhere,
			run: func(ctx context.Context, args []string, cio commandIO, b *backends) error {
				return runCheck(ctx, args, cio.stdout, b.store, b.archiver)
			}},
		{name: exportCommand, does: "exports its own fresh copy of the sample catalogue. " + elsewhere, dataOut: true, readsData: true,
			run: func(ctx context.Context, args []string, cio commandIO, b *backends) error {
				return runExport(ctx, args, cio, b.store)
			}},
		{name: importCommand, does: "imports into a fresh, empty copy that is gone when it ends (the file is checked and loaded, and nothing is kept). " + elsewhere, empty: true,
			run: func(ctx context.Context, args []string, cio commandIO, b *backends) error {
				return runImport(ctx, args, cio, b.store)
			}},
	}
}

// commandNamed returns the command that args begin with, or nil (serve).
func commandNamed(args []string) *command {
	if len(args) == 0 {
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return &c
		}
	}
	return nil
}

// prepare adjusts cfg to the command before the backends open.
func (c *command) prepare(cfg *config) error {
	cfg.emptyEmbedded = c.empty
	if c.readsData && cfg.dataFile != "" {
		if _, err := os.Stat(cfg.dataFile); err != nil {
			return fmt.Errorf("%s: no data file to read: %w", c.name, err)
		}
	}
	return nil
}

// runWith runs the command on b (with a note when b is a fresh embedded copy), then saves the
// data file if the command changed it. -h is not an error.
func (c *command) runWith(ctx context.Context, cfg *config, args []string, cio commandIO, b *backends) error {
	if cfg.embedded() && cfg.dataFile == "" {
		note := cio.stdout
		if c.dataOut {
			note = cio.stderr
		}
		fmt.Fprintln(note, "note: the embedded backend lives inside one process; this command "+c.does)
	}
	err := c.run(ctx, args, cio, b)
	if errors.Is(err, flag.ErrHelp) {
		err = nil
	}
	return errors.Join(err, b.closeData())
}

// Names of the backup commands.
const (
	exportCommand = "export"
	importCommand = "import"
)

// runExport runs `export`: the whole catalogue as JSON lines on stdout.
func runExport(ctx context.Context, args []string, cio commandIO, store *dynamo.Store) error {
	fs := flag.NewFlagSet(exportCommand, flag.ContinueOnError)
	fs.SetOutput(cio.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: export [-table NAME] [-dynamodb-endpoint URL | -aws | -data FILE] > backup.jsonl

Writes the whole catalogue to standard output as JSON lines, sorted by key: every capability
with its components, dependencies, jobs, metric samples, rules and history (versions and
tombstones), one entity a line in the seed's field names with its revision, times and writer.
Index items and component ID claims are left out (import rebuilds them), and so are
idempotency tokens, leases and expired samples. Metric samples archived to S3 are not in the
table, and not in the export: they stay in the metrics bucket. Load it with import.
`)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("export: unexpected arguments %q (the export goes to standard output)", fs.Args())
	}
	n, err := store.Export(ctx, cio.stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.stderr, "exported %d lines\n", n)
	return nil
}

// runImport runs `import FILE` (- for stdin): a file that export wrote, into the table.
func runImport(ctx context.Context, args []string, cio commandIO, store *dynamo.Store) error {
	fs := flag.NewFlagSet(importCommand, flag.ContinueOnError)
	fs.SetOutput(cio.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: import FILE|- [-table NAME] [-create-table] [-dynamodb-endpoint URL | -aws | -data FILE]

Loads a file that export wrote (- reads standard input), keeping IDs, revisions, times, writers
and history; keys, index items and component ID claims are rebuilt. The whole file is checked
first: a bad line writes nothing, and the error names its line and field. A capability that
the table holds already is refused, unless it is exactly as in the file (then it is skipped):
an import that stopped midway is finished by running it again. -create-table creates the
table first if it does not exist. With -data the embedded default's data file receives it (and
is created when absent, without the sample).
`)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("import: give one file to import (- for standard input), got %q", fs.Args())
	}
	var r io.Reader = cio.stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		defer f.Close()
		r = f
	}
	report, err := store.Import(ctx, r, 4)
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.stdout, "imported %d lines: %d capabilities, %d deleted ones (history only), %d items written\n",
		report.Lines, report.Capabilities, report.Deleted, report.Items)
	if len(report.Skipped) > 0 {
		fmt.Fprintf(cio.stdout, "skipped, already in the table as in the file: %s\n", strings.Join(report.Skipped, ", "))
	}
	for _, p := range report.Problems {
		fmt.Fprintf(cio.stdout, "problem   %s\n", p)
	}
	if len(report.Problems) > 0 {
		return fmt.Errorf("import: %d capabilities differ from a recount of what was written: see `check`, and `check -repair`", len(report.Problems))
	}
	return nil
}

// checkCommand names the command that checks the whole table (and with -repair fixes it).
const checkCommand = "check"

// runCheck runs `check [-repair]`: it prints every finding (and with -repair every repair) and
// returns an error when findings remain, so the process exits non-zero.
func runCheck(ctx context.Context, args []string, stdout io.Writer, store *dynamo.Store, archiver *archive.Archiver) error {
	fs := flag.NewFlagSet(checkCommand, flag.ContinueOnError)
	fs.SetOutput(stdout)
	repair := fs.Bool("repair", false, "fix what can be fixed (safe to rerun), then check again")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("check: unexpected arguments %q", fs.Args())
	}
	report, err := store.Check(ctx, *repair)
	if err != nil {
		return err
	}
	if *repair && archiver != nil && slices.ContainsFunc(report.Findings, func(f dynamo.Finding) bool { return f.Kind == dynamo.FindingUnarchived }) {
		// Samples near their TTL that no archive took: archive now, as the schedule would.
		rep, err := archiver.Archive(ctx, archiver.Now().Add(-archive.DefaultOlderThan), nil)
		if err != nil {
			return fmt.Errorf("check: archive: %w", err)
		}
		fmt.Fprintf(stdout, "archived  %d points in %d objects (%d items deleted)\n", rep.PointsArchived, rep.ObjectsWritten, rep.ItemsDeleted)
		after, err := store.Check(ctx, false)
		if err != nil {
			return err
		}
		for _, f := range report.Findings {
			same := func(g dynamo.Finding) bool { return g.Kind == f.Kind && g.Subject == f.Subject }
			if f.Kind == dynamo.FindingUnarchived && !slices.ContainsFunc(after.Findings, same) {
				report.Repaired = append(report.Repaired, f)
			}
		}
		report.Findings = after.Findings
	}
	for _, f := range report.Repaired {
		fmt.Fprintf(stdout, "repaired  %s\n", f)
	}
	for _, f := range report.Findings {
		how := "cannot be repaired"
		if f.Repairable {
			how = "repairable with -repair"
		}
		fmt.Fprintf(stdout, "finding   %s (%s)\n", f, how)
	}
	fmt.Fprintf(stdout, "checked %d items: %d findings, %d repaired\n", report.Items, len(report.Findings), len(report.Repaired))
	if len(report.Findings) > 0 {
		return fmt.Errorf("check: %d findings", len(report.Findings))
	}
	return nil
}

// configArgs and archiveArgs split the arguments of a command: the server's connection
// flags go to parseConfig, the rest to the archive command.
func configArgs(args []string, archive bool) []string {
	if !archive {
		return args
	}
	var out []string
	for i := 0; i < len(args); i++ {
		if name, ok := connectionFlag(args[i]); ok {
			out = append(out, args[i])
			if !strings.Contains(args[i], "=") && connectionFlagTakesValue(name) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
		}
	}
	return out
}

func archiveArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if name, ok := connectionFlag(args[i]); ok {
			if !strings.Contains(args[i], "=") && connectionFlagTakesValue(name) {
				i++
			}
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// connectionFlag reports whether arg is one of the flags that say where the data lives.
func connectionFlag(arg string) (string, bool) {
	name := strings.TrimLeft(arg, "-")
	name, _, _ = strings.Cut(name, "=")
	switch name {
	case "table", "dynamodb-endpoint", "aws", "archive-min-age", "data", "create-table":
		return name, strings.HasPrefix(arg, "-")
	}
	return "", false
}

// connectionFlagTakesValue reports whether a connection flag is followed by its value (the
// others are booleans).
func connectionFlagTakesValue(name string) bool { return name != "aws" && name != "create-table" }

// splitList returns the non-empty, trimmed items of a comma-separated list.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
