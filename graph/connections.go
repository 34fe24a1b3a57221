package graph

import (
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

// connection returns the GraphQL connection of page p: its nodes, an edge per node with the
// node's cursor, and where the page ends. It serves every connection of the schema.
func connection[T any](p *dynamo.Page[T]) *model.Connection[T] {
	c := &model.Connection[T]{Nodes: p.Items, Edges: make([]*model.Edge[T], len(p.Items)), PageInfo: &model.PageInfo{HasNextPage: p.HasNext}}
	for i, node := range p.Items {
		c.Edges[i] = &model.Edge[T]{Cursor: p.Cursors[i], Node: node}
	}
	c.PageInfo.HasPreviousPage = p.HasPrevious
	if n := len(p.Cursors); n > 0 {
		c.PageInfo.StartCursor = &p.Cursors[0]
		c.PageInfo.EndCursor = &p.Cursors[n-1]
	} else if p.End != "" {
		c.PageInfo.EndCursor = &p.End
	}
	if len(p.Cursors) == 0 && p.Start != "" {
		c.PageInfo.StartCursor = &p.Start
	}
	return c
}
