package graph

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Instruments are the server's Prometheus metrics: GraphQL operations, DynamoDB requests and
// capacity, loader batches, and the seed's application metrics read from the CAPABILITIES index.
// It implements dynamo.Observer: give it to dynamo.ClientConfig.Observer.
type Instruments struct {
	operations  *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	attempts    *prometheus.CounterVec
	calls       *prometheus.CounterVec
	retries     *prometheus.CounterVec
	throttles   *prometheus.CounterVec
	conditional *prometheus.CounterVec
	rcu, wcu    *prometheus.CounterVec
	batches     *prometheus.HistogramVec

	subscriptions, connections prometheus.Gauge
	delivered, dropped         prometheus.Counter
	polls                      prometheus.Counter

	// names are the operation names given a label of their own so far.
	mu    sync.Mutex
	names map[string]bool
}

// Operation names are chosen by clients: a label per name would let a client grow the metrics
// without bound. The first maxOperationNames names of at most maxOperationNameLength characters
// get their own label; the rest are counted as "other".
const (
	maxOperationNames      = 200
	maxOperationNameLength = 64
	otherOperations        = "other"
)

var _ dynamo.Observer = (*Instruments)(nil)

// NewInstruments registers the metrics with reg.
func NewInstruments(reg prometheus.Registerer) *Instruments {
	m := &Instruments{
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_graphql_operations_total",
			Help: "GraphQL operations by operation name and outcome (ok, error, rejected)."}, []string{"operation", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "catalogue_graphql_operation_duration_seconds",
			Help: "GraphQL operation latency.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}, []string{"operation"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_requests_total",
			Help: "DynamoDB HTTP requests (retries included) by API operation and outcome."}, []string{"operation", "outcome"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_calls_total",
			Help: "DynamoDB API calls after retries by API operation and outcome."}, []string{"operation", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_retries_total",
			Help: "DynamoDB requests that were retries of an earlier attempt."}, []string{"operation"}),
		throttles: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_throttles_total",
			Help: "DynamoDB requests refused by throttling."}, []string{"operation"}),
		conditional: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_conditional_check_failures_total",
			Help: "DynamoDB writes whose condition failed (stale revision, concurrent writer, existing item)."}, []string{"operation"}),
		rcu: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_consumed_read_capacity_units_total",
			Help: "Read capacity consumed (reported by DynamoDB, estimated from item sizes where a backend omits it)."}, []string{"operation"}),
		wcu: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "catalogue_dynamodb_consumed_write_capacity_units_total",
			Help: "Write capacity consumed (reported by DynamoDB, estimated where a backend omits it)."}, []string{"operation"}),
		batches: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "catalogue_loader_batch_size",
			Help: "Keys per loader batch.", Buckets: []float64{1, 2, 5, 10, 25, 50, 100}}, []string{"loader"}),
	}
	m.subscriptions = prometheus.NewGauge(prometheus.GaugeOpts{Name: "catalogue_subscriptions_open",
		Help: "GraphQL subscriptions open on this server."})
	m.connections = prometheus.NewGauge(prometheus.GaugeOpts{Name: "catalogue_websocket_connections_open",
		Help: "WebSocket connections open on this server (after connection_init)."})
	m.delivered = prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_subscription_changes_delivered_total",
		Help: "Changes queued to subscribers (replayed or live)."})
	m.dropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_subscriptions_dropped_total",
		Help: "Subscribers closed with SUBSCRIBER_TOO_SLOW."})
	m.polls = prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_change_poll_requests_total",
		Help: "DynamoDB requests of the subscription hub's poller (index doorbell and partition reads)."})
	m.names = map[string]bool{}
	reg.MustRegister(m.subscriptions, m.connections, m.delivered, m.dropped, m.polls)
	reg.MustRegister(m.operations, m.duration, m.attempts, m.calls, m.retries, m.throttles, m.conditional, m.rcu, m.wcu, m.batches)
	return m
}

// Attempt counts one DynamoDB HTTP request.
func (m *Instruments) Attempt(op string, err error) {
	outcome := dynamo.Outcome(err)
	m.attempts.WithLabelValues(op, outcome).Inc()
	switch outcome {
	case "throttled":
		m.throttles.WithLabelValues(op).Inc()
	case "conditional_check_failed":
		m.conditional.WithLabelValues(op).Inc()
	}
}

// Call counts one DynamoDB API call with its retries and capacity.
func (m *Instruments) Call(op string, attempts int, rcu, wcu float64, err error) {
	m.calls.WithLabelValues(op, dynamo.Outcome(err)).Inc()
	if attempts > 1 {
		m.retries.WithLabelValues(op).Add(float64(attempts - 1))
	}
	if rcu > 0 {
		m.rcu.WithLabelValues(op).Add(rcu)
	}
	if wcu > 0 {
		m.wcu.WithLabelValues(op).Add(wcu)
	}
}

func (m *Instruments) operation(name, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	name = m.operationLabel(name)
	m.operations.WithLabelValues(name, outcome).Inc()
	m.duration.WithLabelValues(name).Observe(d.Seconds())
}

// operationLabel returns the label of an operation name: the name, "anonymous", or "other"
// once the name is too long or the set of names is full.
func (m *Instruments) operationLabel(name string) string {
	if name == "" {
		return "anonymous"
	}
	if len(name) > maxOperationNameLength {
		return otherOperations
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.names[name] {
		if len(m.names) >= maxOperationNames {
			return otherOperations
		}
		m.names[name] = true
	}
	return name
}

func (m *Instruments) batch(loader string, n int) {
	if m != nil {
		m.batches.WithLabelValues(loader).Observe(float64(n))
	}
}

// CatalogueCollector exports the seed's application metrics (health score per capability,
// deployment success rate, active rules) from the CAPABILITIES index, re-read at most every
// refresh interval so that scrapes stay cheap. Its labels are the capability's ID and business
// domain, both identifiers of at most 128 characters: never a name, which is free text.
type CatalogueCollector struct {
	store   Store
	refresh time.Duration
	timeout time.Duration

	health, success, rules, components *prometheus.Desc
	up                                 *prometheus.Desc
	archivedAt, unarchivedAge          *prometheus.Desc

	mu      sync.Mutex
	at      time.Time
	cached  []*catalog.Capability
	archive *dynamo.ArchiveState
	lastErr error
}

// NewCatalogueCollector returns the collector; register it with a prometheus.Registerer.
func NewCatalogueCollector(store Store, refresh time.Duration) *CatalogueCollector {
	labels := []string{"capability_id", "business_domain"}
	return &CatalogueCollector{
		store: store, refresh: refresh, timeout: 5 * time.Second,
		health:     prometheus.NewDesc("catalogue_capability_health_score", "Capability health score (0-100).", labels, nil),
		success:    prometheus.NewDesc("catalogue_capability_deployment_success_ratio", "Successful jobs over finished jobs.", labels, nil),
		rules:      prometheus.NewDesc("catalogue_capability_active_rules", "Active configuration rules.", labels, nil),
		components: prometheus.NewDesc("catalogue_capability_active_components", "Active components.", labels, nil),
		up:         prometheus.NewDesc("catalogue_catalogue_scrape_ok", "1 when the CAPABILITIES index could be read.", nil, nil),
		archivedAt: prometheus.NewDesc("catalogue_metrics_last_archive_timestamp_seconds",
			"When the last complete metrics archive run finished (Unix seconds).", nil, nil),
		unarchivedAge: prometheus.NewDesc("catalogue_metrics_oldest_unarchived_age_seconds",
			"Age of the oldest sample the table held after the last complete archive run (0: none); samples expire unread at 90 days.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *CatalogueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.health, c.success, c.rules, c.components, c.up, c.archivedAt, c.unarchivedAge} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *CatalogueCollector) Collect(ch chan<- prometheus.Metric) {
	caps, err := c.capabilities()
	ok := 1.0
	if err != nil {
		ok = 0
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, ok)
	c.mu.Lock()
	archive := c.archive
	c.mu.Unlock()
	if archive != nil {
		ch <- prometheus.MustNewConstMetric(c.archivedAt, prometheus.GaugeValue, float64(archive.RanAt.Unix()))
		age := 0.0
		if !archive.OldestUnarchived.IsZero() {
			age = max(0, time.Since(archive.OldestUnarchived).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.unarchivedAge, prometheus.GaugeValue, age)
	}
	for _, cp := range caps {
		l := []string{cp.CapabilityID, cp.BusinessDomain}
		a := cp.Aggregates
		ch <- prometheus.MustNewConstMetric(c.health, prometheus.GaugeValue, a.HealthScore, l...)
		ch <- prometheus.MustNewConstMetric(c.rules, prometheus.GaugeValue, float64(a.ActiveRules), l...)
		ch <- prometheus.MustNewConstMetric(c.components, prometheus.GaugeValue, float64(a.ActiveComponents), l...)
		if finished := a.SuccessfulJobs + a.FailedJobs; finished > 0 {
			ch <- prometheus.MustNewConstMetric(c.success, prometheus.GaugeValue, float64(a.SuccessfulJobs)/float64(finished), l...)
		}
	}
}

func (c *CatalogueCollector) capabilities() ([]*catalog.Capability, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < c.refresh {
		return c.cached, c.lastErr
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var all []*catalog.Capability
	after := ""
	for {
		p, err := c.store.Capabilities(ctx, "", dynamo.MaxPage, after)
		if err != nil {
			c.lastErr, c.at = err, time.Now()
			return c.cached, err
		}
		all = append(all, p.Items...)
		if !p.HasNext || len(p.Cursors) == 0 {
			break
		}
		after = p.Cursors[len(p.Cursors)-1]
	}
	// The last archive run's state, when one has run (one GetItem per refresh).
	if st, err := c.store.ArchiveState(ctx); err == nil {
		c.archive = &st
	}
	c.cached, c.lastErr, c.at = all, nil, time.Now()
	return all, nil
}

func (m *Instruments) subscriptionsOpen(d int) {
	if m != nil {
		m.subscriptions.Add(float64(d))
	}
}

func (m *Instruments) connectionsOpen(d int) {
	if m != nil {
		m.connections.Add(float64(d))
	}
}

func (m *Instruments) subscriptionDelivered() {
	if m != nil {
		m.delivered.Inc()
	}
}

func (m *Instruments) subscriptionDropped() {
	if m != nil {
		m.dropped.Inc()
	}
}

func (m *Instruments) pollRequests(n int) {
	if m != nil {
		m.polls.Add(float64(n))
	}
}
