package graph

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// docCache is the cache of parsed and validated documents, bounded by their weight as well as
// their number: a parsed document keeps its source text and its syntax tree, and a cache bounded
// by count alone (gqlgen's own) lets a client pin a thousand documents of the largest body, or
// small list literals that parse to trees a hundred times their size. A document's weight is its text's bytes
// plus 256 per node of its tree (fields, arguments, values, directives); one over maxBytes/64 is
// not kept at all. The least recently used go first.
type docCache struct {
	maxBytes int
	lru      *lru[*ast.QueryDocument]
}

// nodeWeight is what one node of a syntax tree counts for in a document's weight: a field or
// value node with its position and slices takes a few hundred bytes.
const nodeWeight = 256

// docWeight returns the weight of a document: its text and its syntax tree.
func docWeight(query string, doc *ast.QueryDocument) int {
	n := 0
	var value func(v *ast.Value)
	value = func(v *ast.Value) {
		if v == nil {
			return
		}
		n++
		for _, c := range v.Children {
			value(c.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			n++
			for _, a := range d.Arguments {
				value(a.Value)
			}
		}
	}
	var set func(ss ast.SelectionSet)
	set = func(ss ast.SelectionSet) {
		for _, s := range ss {
			n++
			switch x := s.(type) {
			case *ast.Field:
				for _, a := range x.Arguments {
					value(a.Value)
				}
				directives(x.Directives)
				set(x.SelectionSet)
			case *ast.InlineFragment:
				directives(x.Directives)
				set(x.SelectionSet)
			case *ast.FragmentSpread:
				directives(x.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		n++
		for _, v := range op.VariableDefinitions {
			n++
			value(v.DefaultValue)
		}
		directives(op.Directives)
		set(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n++
		directives(f.Directives)
		set(f.SelectionSet)
	}
	return len(query) + n*nodeWeight
}

var _ graphql.Cache[*ast.QueryDocument] = (*docCache)(nil)

func newDocCache(maxEntries, maxBytes int) *docCache {
	return &docCache{maxBytes: maxBytes, lru: newLRU[*ast.QueryDocument](maxEntries, maxBytes)}
}

// Get returns the document of a query text, if cached.
func (c *docCache) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	return c.lru.get(query)
}

// Add caches the document of a query text, evicting the least recently used past the bounds.
func (c *docCache) Add(_ context.Context, query string, doc *ast.QueryDocument) {
	if len(query) > c.maxBytes/64 {
		return
	}
	if w := docWeight(query, doc); w <= c.maxBytes/64 {
		c.lru.add(query, doc, w)
	}
}

// Len returns how many documents are cached and their weight.
func (c *docCache) Len() (entries, bytes int) { return c.lru.len() }

// lru is a map bounded by the number of its entries and the sum of their weights (what the
// caller counts them for, in bytes), the least recently used evicted first.
type lru[V any] struct {
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

func newLRU[V any](maxEntries, maxBytes int) *lru[V] {
	return &lru[V]{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), index: map[string]*list.Element{}}
}

// get returns the value of key, if present, and makes it the most recently used.
func (c *lru[V]) get(key string) (V, bool) {
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

// add stores value under key with its weight, unless key is present (then it is only made the
// most recently used), and evicts the least recently used past the bounds. A weight over
// maxBytes is not stored. It returns how many entries it evicted.
func (c *lru[V]) add(key string, value V, weight int) (evicted int) {
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

// set stores value under key with its weight, replacing what key held, and evicts the least
// recently used past the bounds; a weight over maxBytes removes key instead. It returns how
// many entries it evicted (a replaced value is not counted).
func (c *lru[V]) set(key string, value V, weight int) (evicted int) {
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

// swap replaces the value of key, if present, by what replace returns when it returns true,
// with the same weight and without making it more recently used; all under the lock, so that
// nothing stored between the test and the replacement is lost.
func (c *lru[V]) swap(key string, replace func(V) (V, bool)) {
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
func (c *lru[V]) evict() (evicted int) {
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

// len returns how many entries are stored and their weight.
func (c *lru[V]) len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
