package dynamo

import "github.com/capcat/catalogue/catalog"

// CardCount is how many search cards c keeps (for the tests that count a bulk load's items).
func CardCount(c *catalog.Capability) int { return len(cardEntries(c, cardOf(c))) }

// SetSortLimit makes a search page read at most n cards of its driving range to sort them
// itself, so that tests take the order's own ranges with a small catalogue.
func SetSortLimit(s *Store, n int) { s.sortLimit = n }

// SetStats makes c the planner's statistics of s, as if just read (nil: none), whatever the
// catalogue holds: tests plan with true, stale or wrong statistics.
func SetStats(s *Store, c *Counts) {
	s.stats.mu.Lock()
	s.stats.counts, s.stats.at = c, s.now()
	s.stats.mu.Unlock()
}

// WaitStats waits for the statistics' background refreshes under way.
func WaitStats(s *Store) { s.stats.background.Wait() }
