package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/internal/lru"
)

// docCache is the cache of parsed and validated documents, bounded by their weight as well as
// their number: a parsed document keeps its source text and its syntax tree, and a cache bounded
// by count alone (gqlgen's own) lets a client pin a thousand documents of the largest body, or
// small list literals that parse to trees a hundred times their size. A document's weight is its text's bytes
// plus 256 per node of its tree (fields, arguments, values, directives); one over maxBytes/64 is
// not kept at all. The least recently used go first.
type docCache struct {
	maxBytes int
	lru      *lru.LRU[*ast.QueryDocument]
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
	return &docCache{maxBytes: maxBytes, lru: lru.New[*ast.QueryDocument](maxEntries, maxBytes)}
}

// Get returns the document of a query text, if cached.
func (c *docCache) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	return c.lru.Get(query)
}

// Add caches the document of a query text, evicting the least recently used past the bounds.
func (c *docCache) Add(_ context.Context, query string, doc *ast.QueryDocument) {
	if len(query) > c.maxBytes/64 {
		return
	}
	if w := docWeight(query, doc); w <= c.maxBytes/64 {
		c.lru.Add(query, doc, w)
	}
}

// Len returns how many documents are cached and their weight.
func (c *docCache) Len() (entries, bytes int) { return c.lru.Len() }
