package dynamo

import (
	"context"
	"sync"
	"time"
)

// Planning statistics: the catalogue's counters (Counts) as the search planner's estimate of
// each counted range's size (a domain, a status, a priority, a health status, an owner), so
// that a page drives from the smallest range rather than by a fixed order of filters.
//
// The statistics are a copy of the counters kept per Store for a short time (StatsTTL). They
// are refreshed by every read of the counters an operation makes anyway (a totalCount, the
// summary, owners: Counts) and, when a search would have a choice to make and they are older
// than the TTL, by one read in the background that the search does not wait for. A search
// with no statistics (a cold Store) plans by the fixed order of before and sends no extra
// request. Statistics only choose which range a page reads and how many candidates it asks
// for at once: every range the planner may choose holds every match of the filter, every card
// read is checked against the whole filter and every capability against METADATA, so stale or
// missing statistics change what a page costs, never what it answers.

// DefaultStatsTTL is how long the planning statistics are trusted before a search that needs
// them refreshes them in the background.
const DefaultStatsTTL = 5 * time.Second

// planStats is a Store's planning statistics.
type planStats struct {
	// ttl is how long counts are fresh; negative: never refreshed in the background.
	ttl time.Duration

	mu         sync.Mutex
	counts     *Counts
	at         time.Time
	refreshing bool
	// background counts the refreshes under way (tests wait for them: WaitStats).
	background sync.WaitGroup
}

// offer records counts read at t (by Counts) as the statistics.
func (p *planStats) offer(c *Counts, t time.Time) {
	if c == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.Before(p.at) {
		return
	}
	p.counts, p.at = c, t
}

// planningStats returns the planning statistics (nil when none were read yet). When they are
// missing or older than the TTL, it starts one refresh in the background (unless one is under
// way or background refreshes are off) and returns what it has: a search that asks for them
// never waits for a read.
func (s *Store) planningStats() *Counts {
	p := &s.stats
	now := s.now()
	p.mu.Lock()
	c, stale := p.counts, p.counts == nil || now.Sub(p.at) > p.ttl
	start := stale && !p.refreshing && p.ttl >= 0
	if start {
		p.refreshing = true
		p.background.Add(1)
	}
	p.mu.Unlock()
	if start {
		go s.refreshStats()
	}
	return c
}

// refreshStats reads the counters into the statistics: one BatchGetItem, on a context of its
// own (no operation waits for it or pays for it).
func (s *Store) refreshStats() {
	defer s.stats.background.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Counts offers what it reads; an error leaves the statistics as they were (the next
	// search that needs them tries again).
	_, err := s.Counts(ctx)
	if err != nil {
		s.log.Debug("planning statistics: read counters", "err", err)
	}
	s.stats.mu.Lock()
	s.stats.refreshing = false
	s.stats.mu.Unlock()
}
