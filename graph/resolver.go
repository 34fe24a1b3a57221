// Package graph is the GraphQL surface of the catalogue: the gqlgen executor generated from
// schema.graphqls, thin resolvers, the per-request loaders that batch every DynamoDB read, the
// error presenter, and NewHandler, which returns the whole HTTP surface.
package graph

import (
	"context"
	"log/slog"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Store is what the GraphQL layer needs of the catalogue store.
type Store interface {
	CapabilitiesByID(ctx context.Context, ids []string) ([]*catalog.Capability, error)
	ReadRange(ctx context.Context, capabilityID string, rng dynamo.Segment) (*dynamo.Partition, error)
	Capabilities(ctx context.Context, domain string, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	CapabilitiesByDomain(ctx context.Context, domain string, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	CapabilitiesByHealth(ctx context.Context, status catalog.HealthStatus, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	ComponentsByType(ctx context.Context, componentType string, first int, after string) (*dynamo.Page[*catalog.Component], error)
	JobByID(ctx context.Context, jobID string) (*catalog.Job, error)
	Jobs(ctx context.Context, capabilityID string, f dynamo.JobFilter, first int, after string) (*dynamo.Page[*catalog.Job], error)
	Metrics(ctx context.Context, capabilityID string, f dynamo.MetricFilter, first int, after string) (*dynamo.Page[*catalog.Metric], error)
	ComponentMetrics(ctx context.Context, f dynamo.MetricFilter, first int, after string) (*dynamo.Page[*catalog.Metric], error)
	Ping(ctx context.Context) error
}

var _ Store = (*dynamo.Store)(nil)

// Resolver is the root resolver. It holds no per-request state: that lives in the Loaders.
type Resolver struct {
	store Store
	log   *slog.Logger
	now   func() time.Time
}
