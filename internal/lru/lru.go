// Package lru is a map bounded by the number of its entries and the sum of their weights: the
// partition cache, the parsed-document cache and the persisted queries of package graph, and
// the archive's cache of archived hours.
package lru

import (
	"container/list"
	"sync"

	gojson "github.com/goccy/go-json"
)

// JSONWeight estimates the bytes a decoded value holds: twice its JSON (a decoded struct's
// strings, slices and pointers take about that), computed once when it is kept. A value that
// does not encode weighs more than any bound (1 TiB), so that it is not kept.
func JSONWeight(v any) int {
	b, err := gojson.Marshal(v)
	if err != nil {
		return 1 << 40
	}
	return 2 * len(b)
}

// LRU is a map bounded by the number of its entries and the sum of their weights (what the
// caller counts them for, in bytes), the least recently used evicted first.
type LRU[V any] struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	bytes int
	order *list.List // of *lruEntry[V], most recent first
	index map[string]*list.Element
}

type lruEntry[V any] struct {
	key    string
	value  V
	weight int
}

// New returns an LRU holding at most maxEntries entries whose weights sum to at most maxBytes.
func New[V any](maxEntries, maxBytes int) *LRU[V] {
	return &LRU[V]{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), index: map[string]*list.Element{}}
}

// Get returns the value of key, if present, and makes it the most recently used.
func (c *LRU[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry[V]).value, true
}

// Add stores value under key with its weight, unless key is present (then it is only made the
// most recently used), and evicts the least recently used past the bounds. A weight over
// maxBytes is not stored. It returns how many entries it evicted.
func (c *LRU[V]) Add(key string, value V, weight int) (evicted int) {
	if weight > c.maxBytes {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[key]; ok {
		c.order.MoveToFront(e)
		return 0
	}
	c.index[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, weight: weight})
	c.bytes += weight
	return c.evict()
}

// Set stores value under key with its weight, replacing what key held, and evicts the least
// recently used past the bounds; a weight over maxBytes removes key instead. It returns how
// many entries it evicted (a replaced value is not counted).
func (c *LRU[V]) Set(key string, value V, weight int) (evicted int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[key]; ok {
		c.bytes -= e.Value.(*lruEntry[V]).weight
		c.order.Remove(e)
		delete(c.index, key)
	}
	if weight > c.maxBytes {
		return 0
	}
	c.index[key] = c.order.PushFront(&lruEntry[V]{key: key, value: value, weight: weight})
	c.bytes += weight
	return c.evict()
}

// Swap replaces the value of key, if present, by what replace returns when it returns true,
// with the same weight and without making it more recently used; all under the lock, so that
// nothing stored between the test and the replacement is lost.
func (c *LRU[V]) Swap(key string, replace func(V) (V, bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[key]
	if !ok {
		return
	}
	ent := e.Value.(*lruEntry[V])
	if v, ok := replace(ent.value); ok {
		ent.value = v
	}
}

// evict removes the least recently used entries past the bounds; c.mu is held.
func (c *LRU[V]) evict() (evicted int) {
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		last := c.order.Back()
		old := last.Value.(*lruEntry[V])
		c.order.Remove(last)
		delete(c.index, old.key)
		c.bytes -= old.weight
		evicted++
	}
	return evicted
}

// Len returns how many entries are stored and their weight.
func (c *LRU[V]) Len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
