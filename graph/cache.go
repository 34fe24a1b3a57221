package graph

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// docCache is the cache of parsed and validated documents, bounded by the bytes of their text
// as well as their number: a parsed document keeps its source, and gqlgen's own cache, bounded by
// count alone, let a client pin a thousand 1 MiB documents. A document over maxBytes/64 is not
// kept at all. The least recently used go first.
type docCache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	bytes int
	order *list.List // of *docEntry, most recent first
	index map[string]*list.Element
}

type docEntry struct {
	query string
	doc   *ast.QueryDocument
}

var _ graphql.Cache[*ast.QueryDocument] = (*docCache)(nil)

func newDocCache(maxEntries, maxBytes int) *docCache {
	return &docCache{maxEntries: maxEntries, maxBytes: maxBytes, order: list.New(), index: map[string]*list.Element{}}
}

// Get returns the document of a query text, if cached.
func (c *docCache) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.index[query]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*docEntry).doc, true
}

// Add caches the document of a query text, evicting the least recently used past the bounds.
func (c *docCache) Add(_ context.Context, query string, doc *ast.QueryDocument) {
	if len(query) > c.maxBytes/64 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.index[query]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.index[query] = c.order.PushFront(&docEntry{query: query, doc: doc})
	c.bytes += len(query)
	for c.order.Len() > c.maxEntries || c.bytes > c.maxBytes {
		last := c.order.Back()
		old := last.Value.(*docEntry)
		c.order.Remove(last)
		delete(c.index, old.query)
		c.bytes -= len(old.query)
	}
}

// Len returns how many documents are cached and their bytes.
func (c *docCache) Len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.bytes
}
