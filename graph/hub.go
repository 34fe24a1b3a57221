package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Feed is what the hub reads of the change feed (dynamo.Store implements it).
type Feed interface {
	ChangeBells(ctx context.Context, from time.Time) ([]dynamo.Bell, error)
	ChangesAfterPos(ctx context.Context, capabilityID, pos string) ([]dynamo.FeedChange, bool, error)
	LatestChanges(ctx context.Context, capabilityID string, since time.Time) ([]dynamo.FeedChange, error)
	FeedPosition(r *catalog.ChangeRecord) (capabilityID, pos, order string, err error)
	CheckFeedCursor(capabilityID, after string) error
	CapabilityChanges(ctx context.Context, capabilityID string, f dynamo.ChangeFilter, first int, after string) (*dynamo.Page[*catalog.ChangeRecord], error)
	Changes(ctx context.Context, f dynamo.ChangeFilter, first int, after string) (*dynamo.Page[*catalog.ChangeRecord], error)
}

var _ Feed = (*dynamo.Store)(nil)

// Defaults of HubOptions.
const (
	DefaultChangePoll    = 250 * time.Millisecond
	DefaultChangeOverlap = 5 * time.Second
	DefaultChangeHold    = 500 * time.Millisecond
	DefaultQueue         = 256
)

// Subscription error codes (extensions.code).
const (
	CodeSubscriberTooSlow     = "SUBSCRIBER_TOO_SLOW"
	CodeOperationNotSupported = "OPERATION_NOT_SUPPORTED"
	CodeTooManySubscriptions  = "TOO_MANY_SUBSCRIPTIONS"
	CodeShuttingDown          = "SHUTTING_DOWN"
)

// HubOptions configure a Hub; zero fields take the defaults.
type HubOptions struct {
	// Poll is how often the hub reads the catalogue-wide change index (DefaultChangePoll).
	Poll time.Duration
	// Overlap is how far back each poll reads the index before the previous poll started, for
	// index entries that arrive late (index lag, writers' clocks, long transactions).
	Overlap time.Duration
	// Hold is how long a change waits before catalogue-wide subscribers get it, so that the
	// changes of several capabilities go out in the order of Query.changes.
	Hold time.Duration
	// Queue bounds each subscriber's queue of changes not yet written to its socket.
	Queue int
	// Limits bound connections and subscriptions.
	Limits SubscriptionLimits
	// Now is the clock; nil means time.Now.
	Now         func() time.Time
	Logger      *slog.Logger
	Instruments *Instruments
}

// SubscriptionLimits bound what WebSocket clients may hold; zero fields take the defaults.
// Callers without a key count together as one ("anonymous").
type SubscriptionLimits struct {
	PerConnection     int // subscriptions on one connection
	PerKey            int // subscriptions of one API key, over all its connections
	ConnectionsPerKey int // open connections of one API key
	// Unauthenticated bounds the sockets that have not finished connection_init yet (their
	// caller is not known, so no key's limit holds them): all callers together. Beyond it an
	// upgrade is answered HTTP 503 OVERLOADED with Retry-After; each such socket is closed
	// after the init timeout (10 s) anyway.
	Unauthenticated int
}

// DefaultSubscriptionLimits are the limits unless configured.
var DefaultSubscriptionLimits = SubscriptionLimits{PerConnection: 20, PerKey: 500, ConnectionsPerKey: 100, Unauthenticated: 256}

func (l SubscriptionLimits) withDefaults() SubscriptionLimits {
	d := DefaultSubscriptionLimits
	if l.PerConnection > 0 {
		d.PerConnection = l.PerConnection
	}
	if l.PerKey > 0 {
		d.PerKey = l.PerKey
	}
	if l.ConnectionsPerKey > 0 {
		d.ConnectionsPerKey = l.ConnectionsPerKey
	}
	if l.Unauthenticated > 0 {
		d.Unauthenticated = l.Unauthenticated
	}
	return d
}

// Hub delivers every committed change to the subscribers of this server: one poller reads the
// catalogue-wide index as a doorbell and each rung capability's partition, strongly
// consistent, after the last change it delivered of it (its mark), and hands each change once,
// in the capability's order, to the subscribers it matches. See docs/design.md#subscriptions.
type Hub struct {
	feed Feed
	opts HubOptions

	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	perKey  map[string]int // open subscriptions by caller name
	conns   map[string]int // open connections by caller name
	pending int            // sockets before connection_init (enterPending)
	sockets map[*hubConn]struct{}
	held    []dynamo.FeedChange // changes waiting for catalogue-wide subscribers, by Order
	closed  bool

	// marks and from belong to the poller (Poll is never run twice at once: pollMu; a
	// replay's end reads marks under it too).
	pollMu sync.Mutex
	marks  map[string]string
	retry  map[string]bool // capabilities whose last read failed
	// primed says the marks are current: set by prime (the first subscription after the
	// hub started or sat idle, or a poll by hand), cleared when Run finds nobody subscribed.
	primed  bool
	from    time.Time
	started time.Time

	ring     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	runOnce  sync.Once
	stopOnce sync.Once
	// gone ends when Close has closed every socket with 1001: the sockets' contexts end then
	// (socketContext), not before.
	gone    context.Context
	endGone context.CancelFunc

	requests  atomic.Int64 // DynamoDB requests of the poller
	delivered atomic.Int64
	dropped   atomic.Int64
}

// NewHub returns a hub reading feed. Run starts its poller; Close stops it and closes every
// socket.
func NewHub(feed Feed, opts HubOptions) *Hub {
	if opts.Poll <= 0 {
		opts.Poll = DefaultChangePoll
	}
	if opts.Overlap <= 0 {
		opts.Overlap = DefaultChangeOverlap
	}
	if opts.Hold < 0 {
		opts.Hold = 0
	} else if opts.Hold == 0 {
		opts.Hold = DefaultChangeHold
	}
	if opts.Queue <= 0 {
		opts.Queue = DefaultQueue
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Limits = opts.Limits.withDefaults()
	now := opts.Now()
	gone, endGone := context.WithCancel(context.Background())
	return &Hub{gone: gone, endGone: endGone, feed: feed, opts: opts, subs: map[*subscriber]struct{}{}, perKey: map[string]int{}, conns: map[string]int{},
		sockets: map[*hubConn]struct{}{}, marks: map[string]string{}, retry: map[string]bool{}, started: now, from: now.Add(-opts.Overlap),
		ring: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// Run polls every opts.Poll (and when rung) until Close or ctx ends, while the hub holds a
// subscription: a server nobody subscribes to sends no request. The first poll after such an
// idle spell starts afresh, as a new hub does (its marks would be stale).
func (h *Hub) Run(ctx context.Context) {
	h.runOnce.Do(func() {
		defer close(h.done)
		t := time.NewTicker(h.opts.Poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-h.stop:
				return
			case <-t.C:
			case <-h.ring:
			}
			if h.pauseIfIdle() {
				continue // nobody listens: no request
			}
			if err := h.Poll(ctx); err != nil && ctx.Err() == nil {
				h.opts.Logger.WarnContext(ctx, "change poll failed; the next poll reads the same range", "err", err)
			}
		}
	})
}

// pauseIfIdle reports whether the hub holds no subscription, and then marks it unprimed: the
// marks go stale while nobody polls, so the next subscription primes them again. Subscribe
// primes and registers under pollMu, so no subscription slips in between the check and the
// mark.
func (h *Hub) pauseIfIdle() bool {
	h.pollMu.Lock()
	defer h.pollMu.Unlock()
	h.mu.Lock()
	idle := len(h.subs) == 0
	h.mu.Unlock()
	if idle {
		h.primed = false
	}
	return idle
}

// prime makes the marks current without delivering anything: one read of the index from now
// less the overlap, each capability's mark its newest entry there. It runs (under pollMu) for
// the first subscription after the hub started or sat idle, before that subscription is
// registered: marks kept from before an idle spell would be read from and hand old changes to
// new subscribers, and a hub that had not read the index would hand a new subscriber the last
// overlap's changes as if they were new. A change committed after prime is past its
// capability's mark and delivered; one committed just before it whose index entry was late
// may be too (a subscription without after: may include changes from just before it).
func (h *Hub) prime(ctx context.Context) error {
	if h.primed {
		return nil
	}
	now := h.opts.Now()
	ctx, counted := h.countRequests(ctx)
	defer counted()
	bells, err := h.feed.ChangeBells(ctx, now.Add(-h.opts.Overlap))
	if err != nil {
		return err
	}
	clear(h.marks)
	clear(h.retry)
	for _, b := range bells {
		if b.Pos > h.marks[b.CapabilityID] {
			h.marks[b.CapabilityID] = b.Pos
		}
	}
	h.started, h.from, h.primed = now, now.Add(-h.opts.Overlap), true
	h.mu.Lock()
	h.held = nil // held for subscribers that are gone
	h.mu.Unlock()
	return nil
}

// countRequests returns ctx counting DynamoDB requests, and the func that adds them to the
// poller's count and metric (prime and Poll defer it).
func (h *Hub) countRequests(ctx context.Context) (context.Context, func()) {
	ctx, stats := dynamo.WithStats(ctx)
	return ctx, func() {
		n := stats.Snapshot().Requests
		h.requests.Add(int64(n))
		h.opts.Instruments.pollRequests(n)
	}
}

// Ring makes the poller poll now rather than at its next tick: this process committed a write.
func (h *Hub) Ring() {
	if h == nil {
		return
	}
	select {
	case h.ring <- struct{}{}:
	default:
	}
}

// Subscriptions returns how many subscriptions the hub holds.
func (h *Hub) Subscriptions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Requests returns how many DynamoDB requests the poller has sent.
func (h *Hub) Requests() int64 { return h.requests.Load() }

// Poll reads the index once and delivers what changed: one Query of the index (two around
// midnight UTC) and one strongly consistent Query per capability whose newest change in the
// index is past its mark. When the index cannot be read the next poll reads the same range
// again; a capability whose partition cannot be read is read again at the next poll.
func (h *Hub) Poll(ctx context.Context) error {
	h.pollMu.Lock()
	defer h.pollMu.Unlock()
	if !h.primed {
		// Nobody subscribed since the hub started or sat idle (a poll by hand): the marks
		// are made current, and nothing before them is delivered.
		return h.prime(ctx)
	}
	start := h.opts.Now()
	ctx, counted := h.countRequests(ctx)
	defer counted()
	bells, err := h.feed.ChangeBells(ctx, h.from)
	if err != nil {
		return err
	}
	newest := map[string]string{}
	for _, b := range bells {
		if b.Pos > newest[b.CapabilityID] {
			newest[b.CapabilityID] = b.Pos
		}
	}
	ids := make([]string, 0, len(newest)+len(h.retry))
	for id, pos := range newest {
		if mark, ok := h.marks[id]; !h.retry[id] && (!ok || pos > mark) {
			ids = append(ids, id)
		}
	}
	for id := range h.retry {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var batch []dynamo.FeedChange
	var failed error
	for _, id := range ids {
		changes, err := h.read(ctx, id)
		if err != nil {
			// Read again at the next poll, whether or not the index still shows it: the
			// window moves on, the mark does not.
			h.retry[id] = true
			failed = errors.Join(failed, err)
			continue
		}
		delete(h.retry, id)
		if len(changes) > 0 {
			h.marks[id] = changes[len(changes)-1].Pos
			batch = append(batch, changes...)
		} else if _, ok := h.marks[id]; !ok {
			h.marks[id] = newest[id]
		}
	}
	h.from = start.Add(-h.opts.Overlap)
	h.deliver(batch, h.opts.Now())
	return failed
}

// read returns a capability's changes after its mark; for a capability without one, those
// made since the hub started (less the overlap).
func (h *Hub) read(ctx context.Context, id string) ([]dynamo.FeedChange, error) {
	mark, ok := h.marks[id]
	if !ok {
		return h.feed.LatestChanges(ctx, id, h.started.Add(-h.opts.Overlap))
	}
	var all []dynamo.FeedChange
	for {
		changes, more, err := h.feed.ChangesAfterPos(ctx, id, mark)
		if err != nil {
			return all, err
		}
		all = append(all, changes...)
		if !more || len(changes) == 0 {
			return all, nil
		}
		mark = changes[len(changes)-1].Pos
	}
}

// deliver hands changes (each capability's in order) to the subscribers of their capability
// at once, and, in Order, those held for Hold to the catalogue-wide subscribers.
func (h *Hub) deliver(batch []dynamo.FeedChange, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range batch {
		for s := range h.subs {
			if s.capabilityID != "" && s.capabilityID == c.Record.CapabilityID {
				h.offer(s, c)
			}
		}
		i := sort.Search(len(h.held), func(i int) bool { return h.held[i].Order > c.Order })
		h.held = slices.Insert(h.held, i, c)
	}
	cut := now.Add(-h.opts.Hold)
	n := 0
	for n < len(h.held) && !h.held[n].At.After(cut) {
		n++
	}
	for _, c := range h.held[:n] {
		for s := range h.subs {
			if s.capabilityID == "" {
				h.offer(s, c)
			}
		}
	}
	h.held = slices.Delete(h.held, 0, n)
}

// subscriber is one subscription: a bounded queue, and while it replays the changes before
// `after`, the live changes that arrive meanwhile.
type subscriber struct {
	ctx          context.Context
	caller       string
	conn         *connState
	capabilityID string
	entities     []catalog.ChangeEntity
	ch           chan *catalog.ChangeRecord

	// Guarded by Hub.mu.
	replaying bool
	pending   []dynamo.FeedChange
	// skip holds, by capability, the position of the last change the replay sent, for the
	// capabilities whose live changes the hub had not delivered yet when the replay ended:
	// the hub delivers each change once but may be behind the replay's own read, so what it
	// offers up to that position was sent already. An entry goes once the hub reaches it.
	skip   map[string]string
	last   string // the ID of the last change queued
	failed *gqlerror.Error
	done   bool
}

func (s *subscriber) matches(c dynamo.FeedChange) bool {
	return len(s.entities) == 0 || slices.Contains(s.entities, c.Record.Entity)
}

// offer queues c for s, or, when its queue is full, ends s with SUBSCRIBER_TOO_SLOW. h.mu is
// held.
func (h *Hub) offer(s *subscriber, c dynamo.FeedChange) {
	if s.done || s.failed != nil {
		return
	}
	if p, ok := s.skip[c.Record.CapabilityID]; ok {
		if c.Pos < p {
			return
		}
		delete(s.skip, c.Record.CapabilityID)
		if c.Pos == p {
			return
		}
	}
	if !s.matches(c) {
		return
	}
	if s.replaying {
		if len(s.pending) >= h.opts.Queue {
			h.fail(s, h.tooSlow(s))
			return
		}
		s.pending = append(s.pending, c)
		return
	}
	select {
	case s.ch <- c.Record:
		s.last = c.Record.ID
		h.delivered.Add(1)
		h.opts.Instruments.subscriptionDelivered()
	default:
		h.fail(s, h.tooSlow(s))
	}
}

func (h *Hub) tooSlow(s *subscriber) *gqlerror.Error {
	h.dropped.Add(1)
	h.opts.Instruments.subscriptionDropped()
	ext := map[string]any{"code": CodeSubscriberTooSlow}
	if s.last != "" {
		ext["lastId"] = s.last
	}
	return &gqlerror.Error{Message: fmt.Sprintf("the subscriber fell more than %d changes behind and was closed: resubscribe with after: the last id received", h.opts.Queue), Extensions: ext}
}

// fail ends s with err: the changes queued go out first, then the error. h.mu is held.
func (h *Hub) fail(s *subscriber, err *gqlerror.Error) {
	if s.failed != nil || s.done {
		return
	}
	s.failed = err
	h.remove(s)
	if !s.replaying {
		h.finish(s)
	}
}

// finish closes s's queue (its replay is over), with its error if it failed. h.mu is held.
func (h *Hub) finish(s *subscriber) {
	if s.done {
		return
	}
	s.done = true
	if s.failed != nil {
		transport.AddSubscriptionError(s.ctx, s.failed)
	}
	close(s.ch)
}

// remove forgets s and frees its place in the limits. h.mu is held.
func (h *Hub) remove(s *subscriber) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	h.perKey[s.caller]--
	if h.perKey[s.caller] <= 0 {
		delete(h.perKey, s.caller)
	}
	if s.conn != nil {
		s.conn.subscriptions--
	}
	h.opts.Instruments.subscriptionsOpen(-1)
}

// Subscribe registers a subscription of the caller in ctx and returns its queue: with after,
// the changes after that cursor first, then the live ones, the seam without gap or repeat.
func (h *Hub) Subscribe(ctx context.Context, capabilityID string, entities []catalog.ChangeEntity, after string) (<-chan *catalog.ChangeRecord, error) {
	if capabilityID != "" {
		if err := dynamo.ValidateID("capabilityId", capabilityID); err != nil {
			return nil, err
		}
	}
	for _, e := range entities {
		if !e.Valid() {
			return nil, catalog.Invalid("entities", "%q is not a change entity", e)
		}
	}
	if after != "" {
		if err := h.feed.CheckFeedCursor(capabilityID, after); err != nil {
			return nil, err
		}
	}
	caller := CallerFrom(ctx).Name
	conn := connStateFrom(ctx)
	s := &subscriber{ctx: ctx, caller: caller, conn: conn, capabilityID: capabilityID, entities: entities,
		ch: make(chan *catalog.ChangeRecord, h.opts.Queue), replaying: after != ""}
	// The first subscription after the hub started or sat idle primes the marks before it is
	// registered (prime), under pollMu so that Run cannot find the hub idle in between.
	h.pollMu.Lock()
	defer h.pollMu.Unlock()
	if err := h.prime(ctx); err != nil {
		return nil, fmt.Errorf("read the change feed: %w", err)
	}
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return nil, codedError(CodeShuttingDown, "the server is shutting down: reconnect")
	case conn != nil && conn.subscriptions >= h.opts.Limits.PerConnection:
		h.mu.Unlock()
		return nil, codedError(CodeTooManySubscriptions, fmt.Sprintf("a connection may hold %d subscriptions", h.opts.Limits.PerConnection))
	case h.perKey[caller] >= h.opts.Limits.PerKey:
		h.mu.Unlock()
		return nil, codedError(CodeTooManySubscriptions, fmt.Sprintf("an API key (or all callers without one together) may hold %d subscriptions", h.opts.Limits.PerKey))
	}
	h.subs[s] = struct{}{}
	h.perKey[caller]++
	if conn != nil {
		conn.subscriptions++
	}
	h.opts.Instruments.subscriptionsOpen(1)
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.remove(s)
		if !s.replaying {
			h.finish(s)
		}
	})
	if after != "" {
		go h.replay(s, after)
	}
	return s.ch, nil
}

// replay sends s the changes after `after`, then what arrived meanwhile minus what the replay
// already sent (by each capability's position), then lets the hub deliver to s directly.
func (h *Hub) replay(s *subscriber, after string) {
	seen := map[string]string{}
	send := func(r *catalog.ChangeRecord) bool {
		select {
		case s.ch <- r:
			h.mu.Lock()
			s.last = r.ID
			h.mu.Unlock()
			h.delivered.Add(1)
			h.opts.Instruments.subscriptionDelivered()
			return true
		case <-s.ctx.Done():
			return false
		}
	}
	err := func() error {
		f := dynamo.ChangeFilter{Entities: s.entities, Consistent: true}
		for {
			var p *dynamo.Page[*catalog.ChangeRecord]
			var err error
			if s.capabilityID != "" {
				p, err = h.feed.CapabilityChanges(s.ctx, s.capabilityID, f, dynamo.MaxPage, after)
			} else {
				p, err = h.feed.Changes(s.ctx, f, dynamo.MaxPage, after)
			}
			if err != nil {
				return err
			}
			for _, r := range p.Items {
				id, pos, _, err := h.feed.FeedPosition(r)
				if err != nil {
					return err
				}
				if pos > seen[id] {
					seen[id] = pos
				}
				if !send(r) {
					return s.ctx.Err()
				}
				after = r.ID
			}
			if !p.HasNext {
				return nil
			}
			if len(p.Items) == 0 {
				after = p.End
			}
		}
	}()
	for err == nil {
		// pollMu first (as Poll takes them): no poll is half done, so each mark is what
		// the hub has offered.
		h.pollMu.Lock()
		h.mu.Lock()
		pending := s.pending
		s.pending = nil
		if len(pending) == 0 || s.failed != nil {
			// Where the hub is past the replay it offers only later changes: no entry needed.
			// A catalogue-wide subscriber still gets the changes held, so those count as
			// not yet offered.
			held := map[string]string{}
			if s.capabilityID == "" {
				for _, c := range h.held {
					if p, ok := held[c.Record.CapabilityID]; !ok || c.Pos < p {
						held[c.Record.CapabilityID] = c.Pos
					}
				}
			}
			for id, p := range seen {
				if oldest, ok := held[id]; h.marks[id] >= p && (!ok || oldest > p) {
					delete(seen, id)
				}
			}
			if len(seen) > 0 {
				s.skip = seen
			}
			s.replaying = false
			h.endReplay(s)
			h.mu.Unlock()
			h.pollMu.Unlock()
			return
		}
		h.mu.Unlock()
		h.pollMu.Unlock()
		for _, c := range pending {
			// The hub offers each capability's changes in order: once it offered the
			// replay's last of a capability, or a later one, it is past the replay there.
			p, ok := seen[c.Record.CapabilityID]
			if ok && c.Pos >= p {
				delete(seen, c.Record.CapabilityID)
			}
			if ok && c.Pos <= p {
				continue
			}
			if !send(c.Record) {
				err = s.ctx.Err()
				break
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.failed == nil && s.ctx.Err() == nil {
		s.failed = errorPresenter(h.opts.Logger)(s.ctx, err)
	}
	s.replaying = false
	h.remove(s)
	h.finish(s)
}

// endReplay ends a replay: s now takes changes from the hub directly, unless it was already
// removed (failed, or its operation ended). h.mu is held.
func (h *Hub) endReplay(s *subscriber) {
	if _, ok := h.subs[s]; !ok {
		h.finish(s)
	}
}

// Close stops the poller, refuses new subscriptions and closes every open WebSocket with 1001
// "going away", so that clients reconnect to another server. It is safe to call twice.
func (h *Hub) Close() {
	h.stopOnce.Do(func() {
		close(h.stop)
		h.mu.Lock()
		h.closed = true
		sockets := make([]*hubConn, 0, len(h.sockets))
		for c := range h.sockets {
			sockets = append(sockets, c)
		}
		h.mu.Unlock()
		for _, c := range sockets {
			c.goingAway()
		}
		h.endGone()
	})
}

// codedError returns an error of the WebSocket edge with its extensions.code (the presenter
// passes a *gqlerror.Error without a cause through as it is).
func codedError(code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
}
