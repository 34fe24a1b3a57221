package graph

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"
	"github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// DefaultBatchWindow is how long the metadata loader collects keys before it dispatches.
// Resolvers look ahead and prime every key of a level in one loop (PrefetchCapabilities,
// PrefetchRoots), which dispatches at once; the window only serves IDs asked for one by one: a
// millisecond, because the dataloader's default window is paid again at every level.
const DefaultBatchWindow = time.Millisecond

// maxConcurrentQueries bounds the partition queries one request runs at once: a page of up to
// dynamo.MaxPage capabilities reads all its partitions in one round trip (a lower bound would
// split a full page into several).
const maxConcurrentQueries = dynamo.MaxPage

// rangeKey names one contiguous sort-key range of one capability's partition.
type rangeKey struct {
	CapabilityID string
	Range        dynamo.Segment
}

// jobsKey names one window of a capability's job history.
type jobsKey struct {
	CapabilityID string
	Filter       dynamo.JobFilter
	First        int
	After        string
}

// metricsKey names one metrics window: of a capability (Capability.metrics) or, with an empty
// CapabilityID, of one component across types (componentMetrics, Component.metrics).
type metricsKey struct {
	CapabilityID string
	ComponentID  string
	MetricType   catalog.MetricType
	From, To     string
	First        int
	After        string
}

// Loaders own every DynamoDB read of one HTTP request: identical keys are fetched once, and
// metadata lookups are batched into BatchGetItem calls of up to 100 keys.
type Loaders struct {
	store         Store
	metrics       *Instruments
	capabilities  *dataloader.Loader[string, *catalog.Capability]
	capCache      *dataloader.InMemoryCache[string, *catalog.Capability] // the capabilities loader's cache
	jobs          *dataloader.Loader[jobsKey, *dynamo.Page[*catalog.Job]]
	metricWindows *dataloader.Loader[metricsKey, *dynamo.Page[*catalog.Metric]]

	mu      sync.Mutex
	planned map[string][]dynamo.Segment // ranges already requested, by capability
	ranges  map[rangeKey]*rangeRead     // their reads
	queries chan struct{}               // bounds the partition queries in flight

	// ahead holds the capability pages started before the field that asks for them (an
	// owner's first page, read with its counts), by ownerPageKey.
	ahead map[string]*pageAhead
	// archived holds the metrics windows read through the archive (Resolver.metricsRead).
	archived map[archivedKey]*windowRead

	roots  sync.Once     // PrefetchRoots
	window time.Duration // the metadata loader's batch window

	// Per capability, built once from its partition: components by ID, and the neighbours of
	// each component (componentByID and neighbours run once per component of a list, each in
	// its own goroutine; a map lookup keeps them cheap).
	byID  map[string]map[string]*catalog.Component
	graph map[string]*edgeIndex

	fieldsOnce sync.Once
	fullItems  bool          // Options.FullItems
	fields     dynamo.Fields // what partition reads fetch: partitionFields of the operation

	// The partition cache (nil: off) and what this request did with it. With the cache on,
	// metadata reads are strongly consistent, consistent records the IDs whose metadata in
	// the capabilities loader came from such a read (not from a list page's index item), and
	// fresh reads, consistently, the metadata of the others when one of their ranges misses.
	cache        *PartitionCache
	table        string
	fresh        *dataloader.Loader[string, *catalog.Capability]
	freshCache   *dataloader.InMemoryCache[string, *catalog.Capability] // the fresh loader's cache
	consistent   map[string]bool                                        // guarded by mu
	hits, misses atomic.Int64
}

// LoaderOptions tune the loaders of a request.
type LoaderOptions struct {
	Instruments *Instruments
	// BatchWindow is the metadata loader's batch window; 0 means DefaultBatchWindow.
	BatchWindow time.Duration
	// FullItems reads whole partition items instead of the Data keys the operation selects.
	FullItems bool
	// Cache, when set, is the server's partition cache (see PartitionCache).
	Cache *PartitionCache
}

// NewLoaders returns the loaders of one request.
func NewLoaders(store Store, opts LoaderOptions) *Loaders {
	window, metrics := opts.BatchWindow, opts.Instruments
	if window <= 0 {
		window = DefaultBatchWindow
	}
	l := &Loaders{store: store, metrics: metrics, planned: map[string][]dynamo.Segment{}, fullItems: opts.FullItems, window: window,
		byID: map[string]map[string]*catalog.Component{}, graph: map[string]*edgeIndex{},
		ranges: map[rangeKey]*rangeRead{}, queries: make(chan struct{}, maxConcurrentQueries)}
	l.capCache = dataloader.NewCache[string, *catalog.Capability]()
	l.capabilities = dataloader.NewBatchedLoader(l.loadCapabilities,
		dataloader.WithWait[string, *catalog.Capability](window),
		dataloader.WithBatchCapacity[string, *catalog.Capability](100),
		dataloader.WithCache[string, *catalog.Capability](l.capCache))
	l.jobs = dataloader.NewBatchedLoader(eachConcurrently(l.metrics, "jobs", l.loadJobs),
		dataloader.WithWait[jobsKey, *dynamo.Page[*catalog.Job]](0))
	l.metricWindows = dataloader.NewBatchedLoader(eachConcurrently(l.metrics, "metrics", l.loadMetrics),
		dataloader.WithWait[metricsKey, *dynamo.Page[*catalog.Metric]](0))
	if opts.Cache != nil {
		l.cache, l.consistent = opts.Cache, map[string]bool{}
		if t, ok := store.(interface{ Table() string }); ok {
			l.table = t.Table()
		}
		l.freshCache = dataloader.NewCache[string, *catalog.Capability]()
		l.fresh = dataloader.NewBatchedLoader(l.loadFresh,
			dataloader.WithWait[string, *catalog.Capability](window),
			dataloader.WithBatchCapacity[string, *catalog.Capability](100),
			dataloader.WithCache[string, *catalog.Capability](l.freshCache))
	}
	return l
}

// Reset forgets everything the loaders read or started (their counters stay): what is read next
// is read again. A mutation operation's root fields run one after another, each a write, and
// each one's payload must show the catalogue as it left it, not as an earlier field's payload
// read it (freshPerMutation). Nothing may be loading while it runs.
func (l *Loaders) Reset() {
	l.capabilities.ClearAll()
	l.jobs.ClearAll()
	l.metricWindows.ClearAll()
	if l.fresh != nil {
		l.fresh.ClearAll()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.planned, l.ranges, l.ahead, l.archived = map[string][]dynamo.Segment{}, map[rangeKey]*rangeRead{}, nil, nil
	l.byID, l.graph = map[string]map[string]*catalog.Component{}, map[string]*edgeIndex{}
	if l.consistent != nil {
		l.consistent = map[string]bool{}
	}
	l.roots = sync.Once{}
}

// freshPerMutation gives each root field of a mutation operation loaders that have read
// nothing yet (Loaders.Reset before it runs): gqlgen runs them one after another, and the
// payload of a later write read through an earlier one's loaders showed what the earlier one
// read (a component renamed twice in one request answered the first name under its
// capability).
type freshPerMutation struct{}

var (
	_ graphql.HandlerExtension     = freshPerMutation{}
	_ graphql.RootFieldInterceptor = freshPerMutation{}
)

func (freshPerMutation) ExtensionName() string                   { return "FreshPerMutation" }
func (freshPerMutation) Validate(graphql.ExecutableSchema) error { return nil }

func (freshPerMutation) InterceptRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if oc := graphql.GetOperationContext(ctx); oc != nil && oc.Operation != nil && oc.Operation.Operation == ast.Mutation {
		if l, ok := ctx.Value(loadersKey{}).(*Loaders); ok {
			l.Reset()
		}
	}
	return next(ctx)
}

// CacheCounts returns how many partition ranges this request found in the partition cache and
// how many it read; ok is false when the cache is off.
func (l *Loaders) CacheCounts() (hits, misses int, ok bool) {
	return int(l.hits.Load()), int(l.misses.Load()), l.cache != nil
}

type loadersKey struct{}

// WithLoaders returns ctx carrying l.
func WithLoaders(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, loadersKey{}, l)
}

// For returns the loaders of the request ctx belongs to.
func For(ctx context.Context) *Loaders {
	l, ok := ctx.Value(loadersKey{}).(*Loaders)
	if !ok {
		panic("graph: no loaders in context; wrap the handler with NewHandler")
	}
	return l
}

// loadCapabilities is the batch function of the metadata loader: one BatchGetItem per 100 keys,
// results in key order, a missing capability as ErrNotFound.
func (l *Loaders) loadCapabilities(ctx context.Context, ids []string) []*dataloader.Result[*catalog.Capability] {
	l.metrics.batch("capability", len(ids))
	var caps []*catalog.Capability
	var err error
	if l.cache != nil {
		caps, err = l.store.CapabilitiesByIDConsistent(ctx, ids)
		if err == nil {
			l.mu.Lock()
			for i, id := range ids {
				if caps[i] != nil {
					l.consistent[id] = true
				}
			}
			l.mu.Unlock()
		}
	} else {
		caps, err = l.store.CapabilitiesByID(ctx, ids)
	}
	return capabilityResults(ctx, l.capabilities, ids, caps, err)
}

// loadFresh is the batch function of the fresh loader: a strongly consistent BatchGetItem of
// capabilities known so far from index items only, a missing capability as ErrNotFound.
func (l *Loaders) loadFresh(ctx context.Context, ids []string) []*dataloader.Result[*catalog.Capability] {
	l.metrics.batch("fresh", len(ids))
	caps, err := l.store.CapabilitiesByIDConsistent(ctx, ids)
	return capabilityResults(ctx, l.fresh, ids, caps, err)
}

// capabilityResults are a capability batch's results in key order: a missing capability is
// ErrNotFound; on an error every key fails and is cleared from loader, so that a later load in
// the request tries again.
func capabilityResults(ctx context.Context, loader *dataloader.Loader[string, *catalog.Capability], ids []string, caps []*catalog.Capability, err error) []*dataloader.Result[*catalog.Capability] {
	res := make([]*dataloader.Result[*catalog.Capability], len(ids))
	for i := range ids {
		switch {
		case err != nil:
			res[i] = &dataloader.Result[*catalog.Capability]{Error: err}
		case caps[i] == nil:
			res[i] = &dataloader.Result[*catalog.Capability]{Error: catalog.Missing(catalog.EntityCapability, ids[i], dynamo.ErrNotFound)}
		default:
			res[i] = &dataloader.Result[*catalog.Capability]{Data: caps[i]}
		}
	}
	if err != nil {
		for _, id := range ids {
			loader.Clear(ctx, id)
		}
	}
	return res
}

func (l *Loaders) loadRange(ctx context.Context, k rangeKey) (*dynamo.Partition, error) {
	return l.store.ReadRange(ctx, k.CapabilityID, k.Range, l.partitionFields(ctx))
}

// cachedRange answers a range read with the partition cache on. It uses a cached range only at
// the version of the capability this request read; on a miss it reads the range strongly
// consistent after a strongly consistent read of the capability's version completed, and
// caches it under that version: a write that commits between the two reads changes the
// version every later read returns, so an entry that may hold part of it is never used. A
// capability this request cannot read (missing, being deleted) has its range read as without
// the cache, and nothing is cached.
func (l *Loaders) cachedRange(ctx context.Context, k rangeKey) (*dynamo.Partition, error) {
	c, err := l.Capability(ctx, k.CapabilityID)
	if err != nil {
		return l.query(ctx, k, false)
	}
	v := versionOf(c)
	if p, ok := l.cache.get(l.table, k, v); ok {
		l.hit()
		return p, nil
	}
	l.mu.Lock()
	consistent := l.consistent[k.CapabilityID]
	l.mu.Unlock()
	if !consistent {
		// Known from a list page's index item, read eventually consistent: read the version
		// to fill with (one BatchGetItem for every such capability of the request).
		fc, err := l.fresh.Load(ctx, k.CapabilityID)()
		if err != nil {
			if dynamo.IsNotFound(err) {
				return l.query(ctx, k, false)
			}
			return nil, err
		}
		v = versionOf(fc)
		if p, ok := l.cache.get(l.table, k, v); ok {
			l.hit()
			return p, nil
		}
	}
	p, err := l.query(ctx, k, true)
	if err != nil {
		return nil, err
	}
	l.cache.put(l.table, k, v, p)
	return p, nil
}

func (l *Loaders) hit() {
	l.hits.Add(1)
	l.cache.hits.Inc()
}

// query reads a range within the request's bound on queries in flight: with consistent set,
// whole items strongly consistent (a cache miss), else as without the cache.
func (l *Loaders) query(ctx context.Context, k rangeKey, consistent bool) (*dynamo.Partition, error) {
	select {
	case l.queries <- struct{}{}:
		defer func() { <-l.queries }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.misses.Add(1)
	l.cache.misses.Inc()
	if consistent {
		return l.store.ReadRangeConsistent(ctx, k.CapabilityID, k.Range)
	}
	return l.loadRange(ctx, k)
}

// partitionFields works out once per request which Data keys partition reads fetch.
func (l *Loaders) partitionFields(ctx context.Context) dynamo.Fields {
	l.fieldsOnce.Do(func() {
		if !l.fullItems && graphql.HasOperationContext(ctx) {
			l.fields = partitionFields(graphql.GetOperationContext(ctx))
		}
	})
	return l.fields
}

func (l *Loaders) loadJobs(ctx context.Context, k jobsKey) (*dynamo.Page[*catalog.Job], error) {
	return l.store.Jobs(ctx, k.CapabilityID, k.Filter, k.First, k.After)
}

func (l *Loaders) loadMetrics(ctx context.Context, k metricsKey) (*dynamo.Page[*catalog.Metric], error) {
	f := dynamo.MetricFilter{ComponentID: k.ComponentID, MetricType: k.MetricType}
	var err error
	if f.From, err = parseKeyTime(k.From); err != nil {
		return nil, err
	}
	if f.To, err = parseKeyTime(k.To); err != nil {
		return nil, err
	}
	if k.CapabilityID == "" {
		return l.store.ComponentMetrics(ctx, f, k.First, k.After)
	}
	return l.store.Metrics(ctx, k.CapabilityID, f, k.First, k.After)
}

// archivedKey is a metrics window read through the archive, and the capability whose archive
// holds it.
type archivedKey struct {
	metricsKey
	owner string
}

// windowRead is one read of an archived window: done is closed once page and err are set.
type windowRead struct {
	done chan struct{}
	page *dynamo.Page[*catalog.Metric]
	err  error
}

// archivedWindow starts read for the window k of owner unless this request started it already,
// and returns its result, waited for. The read runs in its own goroutine with the context of
// whoever started it (the request's, with its budget and counts), so that a prefetch does not
// wait for it.
func (l *Loaders) archivedWindow(ctx context.Context, k metricsKey, owner string, read func(context.Context) (*dynamo.Page[*catalog.Metric], error)) func() (*dynamo.Page[*catalog.Metric], error) {
	key := archivedKey{k, owner}
	l.mu.Lock()
	w, started := l.archived[key]
	if !started {
		if l.archived == nil {
			l.archived = map[archivedKey]*windowRead{}
		}
		w = &windowRead{done: make(chan struct{})}
		l.archived[key] = w
	}
	l.mu.Unlock()
	if !started {
		go func() {
			defer close(w.done)
			defer func() {
				if p := recover(); p != nil {
					w.page, w.err = nil, fmt.Errorf("read metrics of %s: panic: %v", owner, p)
				}
			}()
			w.page, w.err = read(ctx)
		}()
	}
	return func() (*dynamo.Page[*catalog.Metric], error) {
		select {
		case <-w.done:
			return w.page, w.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func parseKeyTime(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := catalog.ParseTimestamp(s)
	if err != nil {
		return nil, err
	}
	return &t.Time, nil
}

// eachConcurrently turns a one-key fetch into a batch function that runs one fetch per key,
// concurrently, returning results in key order.
func eachConcurrently[K comparable, V any](m *Instruments, name string, fetch func(context.Context, K) (V, error)) dataloader.BatchFunc[K, V] {
	return func(ctx context.Context, keys []K) []*dataloader.Result[V] {
		m.batch(name, len(keys))
		res := make([]*dataloader.Result[V], len(keys))
		if len(keys) == 1 { // the batch's own goroutine does it: no second one to start
			v, err := fetch(ctx, keys[0])
			res[0] = &dataloader.Result[V]{Data: v, Error: err}
			return res
		}
		var g errgroup.Group
		g.SetLimit(maxConcurrentQueries)
		for i, k := range keys {
			g.Go(func() error {
				v, err := fetch(ctx, k)
				res[i] = &dataloader.Result[V]{Data: v, Error: err}
				return nil
			})
		}
		_ = g.Wait()
		return res
	}
}

// PrimeCapability records a capability read elsewhere (a GSI1 item carries the whole Data), so
// that later lookups of its ID cost nothing.
func (l *Loaders) PrimeCapability(ctx context.Context, c *catalog.Capability) {
	l.capabilities.Prime(ctx, c.CapabilityID, c)
}

// PrefetchCapability starts loading a capability's metadata without waiting for it.
func (l *Loaders) PrefetchCapability(ctx context.Context, id string) {
	l.capabilities.Load(ctx, id)
}

// PrefetchCapabilities starts reading, at once, the metadata of the capabilities among ids not
// requested yet in this request: one BatchGetItem per 100 of them, whatever the time it took to
// list them (keys loaded one by one can straddle the batch window and cost a second call), and
// no batch window to wait for. Later lookups of these IDs share the read.
func (l *Loaders) PrefetchCapabilities(ctx context.Context, ids []string) {
	prefetchInto(ctx, l.capCache, l.loadCapabilities, ids)
}

// PrefetchVersions, with the partition cache on, starts reading at once, in one strongly
// consistent BatchGetItem per 100, the versions of the capabilities of a list page (known from
// index items) that have a wanted range not cached at the page's version: a range that misses
// is read after its capability's version (cachedRange), and this read serves them all.
func (l *Loaders) PrefetchVersions(ctx context.Context, caps []*catalog.Capability, want dynamo.Segment) {
	if l.cache == nil {
		return
	}
	var ids []string
	for _, c := range caps {
		v := versionOf(c)
		for _, r := range dynamo.PlanRanges(want) {
			if _, ok := l.cache.get(l.table, rangeKey{CapabilityID: c.CapabilityID, Range: r}, v); !ok {
				ids = append(ids, c.CapabilityID)
				break
			}
		}
	}
	prefetchInto(ctx, l.freshCache, l.loadFresh, ids)
}

// prefetchInto starts batch on the IDs among ids not in cache yet, at once and without a batch
// window, and records their results in cache: later loads of these IDs share the read.
func prefetchInto(ctx context.Context, cache *dataloader.InMemoryCache[string, *catalog.Capability],
	batch func(context.Context, []string) []*dataloader.Result[*catalog.Capability], ids []string) {
	var fresh []string
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := cache.Get(ctx, id); ok || seen[id] {
			continue
		}
		seen[id] = true
		fresh = append(fresh, id)
	}
	if len(fresh) == 0 {
		return
	}
	done := make(chan struct{})
	var res []*dataloader.Result[*catalog.Capability]
	for i, id := range fresh {
		cache.Set(ctx, id, func() (*catalog.Capability, error) {
			<-done
			return res[i].Data, res[i].Error
		})
	}
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil { // as the dataloader does for its batch functions
				err := fmt.Errorf("panic reading capabilities: %v", p)
				res = make([]*dataloader.Result[*catalog.Capability], len(fresh))
				for i := range res {
					res[i] = &dataloader.Result[*catalog.Capability]{Error: err}
				}
			}
		}()
		res = batch(ctx, fresh)
	}()
}

// edgeIndex holds, for each component ID, the components on the far side of its outgoing and
// incoming dependencies, in the order of the dependencies.
type edgeIndex struct {
	out, in map[string][]*catalog.Component
}

// components returns a capability's components by ID.
func (l *Loaders) components(ctx context.Context, capabilityID string) (map[string]*catalog.Component, error) {
	l.mu.Lock()
	ix, ok := l.byID[capabilityID]
	l.mu.Unlock()
	if ok {
		return ix, nil
	}
	p, err := l.Partition(ctx, capabilityID, dynamo.SegComponents)
	if err != nil {
		return nil, err
	}
	ix = make(map[string]*catalog.Component, len(p.Components))
	for _, c := range p.Components {
		ix[c.ComponentID] = c
	}
	l.mu.Lock()
	l.byID[capabilityID] = ix
	l.mu.Unlock()
	return ix, nil
}

// edges returns a capability's dependency neighbours by component.
func (l *Loaders) edges(ctx context.Context, capabilityID string) (*edgeIndex, error) {
	l.mu.Lock()
	g, ok := l.graph[capabilityID]
	l.mu.Unlock()
	if ok {
		return g, nil
	}
	p, err := l.Partition(ctx, capabilityID, dynamo.SegComponents|dynamo.SegDependencies)
	if err != nil {
		return nil, err
	}
	byID, err := l.components(ctx, capabilityID) // the same components, read once
	if err != nil {
		return nil, err
	}
	g = &edgeIndex{out: map[string][]*catalog.Component{}, in: map[string][]*catalog.Component{}}
	for _, d := range p.Dependencies {
		if dst := byID[d.TargetComponentID]; dst != nil {
			g.out[d.SourceComponentID] = append(g.out[d.SourceComponentID], dst)
		}
		if src := byID[d.SourceComponentID]; src != nil {
			g.in[d.TargetComponentID] = append(g.in[d.TargetComponentID], src)
		}
	}
	l.mu.Lock()
	l.graph[capabilityID] = g
	l.mu.Unlock()
	return g, nil
}

// PrefetchRoots starts reading, in one BatchGetItem and without a batch window, the metadata
// of every capability the operation's root capability(id:) and node(id:) fields name. gqlgen
// runs root fields concurrently, so each such resolver calls this and the first one does the
// work: the aliased roots of one query still share one read, and a single capability view does
// not wait the metadata loader's window before its first request.
func (l *Loaders) PrefetchRoots(ctx context.Context) {
	l.roots.Do(func() { l.PrefetchCapabilities(ctx, rootCapabilityIDs(ctx)) })
}

// Capability returns the capability with the given ID. It returns an error wrapping
// dynamo.ErrNotFound if none exists.
func (l *Loaders) Capability(ctx context.Context, id string) (*catalog.Capability, error) {
	th := l.capabilities.Load(ctx, id)
	if _, deadline := ctx.Deadline(); !deadline || l.window <= DefaultBatchWindow {
		return th()
	}
	// A configured window longer than the default could outlast the request's deadline: the
	// wait gives up with the context (the read itself honours it once dispatched).
	type result struct {
		c   *catalog.Capability
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := th()
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		return r.c, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Prefetch starts reading the wanted segments of a capability's partition without waiting:
// resolvers call it as soon as they know which children the query selected, so that the reads
// of one level go out together.
func (l *Loaders) Prefetch(ctx context.Context, capabilityID string, want dynamo.Segment) {
	l.reads(ctx, capabilityID, want)
}

// Partition returns the wanted segments of a capability's partition. A segment already
// requested in this request (by look-ahead or another resolver) is not read again.
func (l *Loaders) Partition(ctx context.Context, capabilityID string, want dynamo.Segment) (*dynamo.Partition, error) {
	p := &dynamo.Partition{}
	for _, r := range l.reads(ctx, capabilityID, want) {
		<-r.done
		if r.err != nil {
			return nil, r.err
		}
		p.Components = append(p.Components, r.part.Components...)
		p.Dependencies = append(p.Dependencies, r.part.Dependencies...)
		p.Rules = append(p.Rules, r.part.Rules...)
	}
	return p, nil
}

// rangeRead is one partition range read of the request; done closes when part or err is set.
type rangeRead struct {
	done chan struct{}
	part *dynamo.Partition
	err  error
}

// reads plans the ranges that cover want for a capability, reusing ranges already requested,
// starts the new ones at once (no batch window: each range is its own Query anyway), and
// returns the reads of the ranges that hold a wanted segment.
func (l *Loaders) reads(ctx context.Context, capabilityID string, want dynamo.Segment) []*rangeRead {
	l.mu.Lock()
	have := l.planned[capabilityID]
	var covered dynamo.Segment
	for _, r := range have {
		covered |= r
	}
	fresh := dynamo.PlanRanges(want &^ covered)
	l.planned[capabilityID] = append(have, fresh...)
	started := make([]*rangeRead, len(fresh))
	for i, r := range fresh {
		started[i] = &rangeRead{done: make(chan struct{})}
		l.ranges[rangeKey{CapabilityID: capabilityID, Range: r}] = started[i]
	}
	var out []*rangeRead
	for _, r := range l.planned[capabilityID] {
		if r&want != 0 {
			out = append(out, l.ranges[rangeKey{CapabilityID: capabilityID, Range: r}])
		}
	}
	l.mu.Unlock()
	if len(fresh) > 0 {
		l.metrics.batch("partition", len(fresh))
	}
	for i, r := range fresh {
		go l.read(ctx, rangeKey{CapabilityID: capabilityID, Range: r}, started[i])
	}
	return out
}

func (l *Loaders) read(ctx context.Context, k rangeKey, r *rangeRead) {
	defer close(r.done)
	defer func() {
		if p := recover(); p != nil { // as the dataloader does for its batch functions
			r.part, r.err = nil, fmt.Errorf("panic reading %s of %s: %v", k.Range, k.CapabilityID, p)
		}
	}()
	if l.cache != nil && !rangeAlone(ctx) {
		r.part, r.err = l.cachedRange(ctx, k)
		return
	}
	select {
	case l.queries <- struct{}{}:
		defer func() { <-l.queries }()
	case <-ctx.Done():
		r.err = ctx.Err()
		return
	}
	r.part, r.err = l.loadRange(ctx, k)
}

// Jobs returns a window of a capability's jobs, newest first.
func (l *Loaders) Jobs(ctx context.Context, k jobsKey) (*dynamo.Page[*catalog.Job], error) {
	return l.jobs.Load(ctx, k)()
}

// Metrics returns a metrics window.
func (l *Loaders) Metrics(ctx context.Context, k metricsKey) (*dynamo.Page[*catalog.Metric], error) {
	return l.metricWindows.Load(ctx, k)()
}

// rangeAloneKey marks the context of a read that needs a range and not its capability.
type rangeAloneKey struct{}

// withRangeAlone marks ctx for reads of ranges whose capability the request does not read:
// the partition cache would first read the capability's version to validate an entry (two
// requests where one does), so such a read goes to DynamoDB in one request, as without the
// cache, and fills nothing (node(id:) of a component, dependency or rule: docs/api.md).
func withRangeAlone(ctx context.Context) context.Context {
	return context.WithValue(ctx, rangeAloneKey{}, true)
}

func rangeAlone(ctx context.Context) bool {
	v, _ := ctx.Value(rangeAloneKey{}).(bool)
	return v
}
