// Package model holds the GraphQL types that are not domain types of package catalog: gqlgen
// generates most of them (models_gen.go); the connections are one generic type, here.
package model

import (
	"context"
	"errors"

	"github.com/capcat/catalogue/catalog"
)

// Connection is one page of a GraphQL connection: its nodes, an edge per node with the node's
// cursor, and where the page ends. Every XConnection of the schema is one (gqlgen.yml binds them).
type Connection[T any] struct {
	Edges    []*Edge[T] `json:"edges"`
	Nodes    []T        `json:"nodes"`
	PageInfo *PageInfo  `json:"pageInfo"`
	// Count counts every item of the connection (all pages), when totalCount is asked for.
	Count func(ctx context.Context) (int, error) `json:"-"`
}

// ErrNotCounted is the error of totalCount on a connection whose producer set no Count.
var ErrNotCounted = errors.New("this connection does not count its items")

// TotalCount is the connection's totalCount: computed only when a query selects it.
func (c *Connection[T]) TotalCount(ctx context.Context) (int, error) {
	if c.Count == nil {
		return 0, ErrNotCounted
	}
	return c.Count(ctx)
}

// Edge is a node of a Connection with its cursor.
type Edge[T any] struct {
	Cursor string `json:"cursor"`
	Node   T      `json:"node"`
}

// The schema's connections and edges.
type (
	CapabilityConnection        = Connection[*catalog.Capability]
	CapabilityEdge              = Edge[*catalog.Capability]
	ComponentConnection         = Connection[*catalog.Component]
	ComponentEdge               = Edge[*catalog.Component]
	JobConnection               = Connection[*catalog.Job]
	JobEdge                     = Edge[*catalog.Job]
	MetricConnection            = Connection[*catalog.Metric]
	MetricEdge                  = Edge[*catalog.Metric]
	CapabilityVersionConnection = Connection[*catalog.CapabilityVersion]
	CapabilityVersionEdge       = Edge[*catalog.CapabilityVersion]
	NotificationConnection      = Connection[*catalog.Notification]
	NotificationEdge            = Edge[*catalog.Notification]
	RuleVersionConnection       = Connection[*catalog.RuleVersion]
	RuleVersionEdge             = Edge[*catalog.RuleVersion]
	ChangeConnection            = Connection[*catalog.ChangeRecord]
	ChangeEdge                  = Edge[*catalog.ChangeRecord]
	OwnerConnection             = Connection[*Owner]
	OwnerEdge                   = Edge[*Owner]
)

// Owner is a capability's owner or a component's team, with its counts; its capabilities and
// components are resolved by graph.
type Owner struct {
	Name            string `json:"name"`
	CapabilityCount int    `json:"capabilityCount"`
	ComponentCount  int    `json:"componentCount"`
}
