// Package model holds the GraphQL types that are not domain types of package catalog: gqlgen
// generates most of them (models_gen.go); the connections are one generic type, here.
package model

import "github.com/capcat/catalogue/catalog"

// Connection is one page of a GraphQL connection: its nodes, an edge per node with the node's
// cursor, and where the page ends. Every XConnection of the schema is one (gqlgen.yml binds them).
type Connection[T any] struct {
	Edges    []*Edge[T] `json:"edges"`
	Nodes    []T        `json:"nodes"`
	PageInfo *PageInfo  `json:"pageInfo"`
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
	RuleVersionConnection       = Connection[*catalog.RuleVersion]
	RuleVersionEdge             = Edge[*catalog.RuleVersion]
	ChangeConnection            = Connection[*catalog.ChangeRecord]
	ChangeEdge                  = Edge[*catalog.ChangeRecord]
)
