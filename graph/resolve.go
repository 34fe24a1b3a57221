package graph

import (
	"context"
	"errors"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Helpers of the resolvers in schema.resolvers.go, kept here because gqlgen rewrites that file.

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func timeKey(t *catalog.Timestamp) string {
	if t == nil {
		return ""
	}
	return t.String()
}

// partition returns the wanted segments of a capability's partition through the loaders.
func partition(ctx context.Context, capabilityID string, want dynamo.Segment) (*dynamo.Partition, error) {
	return For(ctx).Partition(ctx, capabilityID, want)
}

// componentByID returns a component of a capability, or nil when it is not there.
func componentByID(ctx context.Context, capabilityID, componentID string) (*catalog.Component, error) {
	p, err := partition(ctx, capabilityID, dynamo.SegComponents)
	if err != nil {
		return nil, err
	}
	for _, c := range p.Components {
		if c.ComponentID == componentID {
			return c, nil
		}
	}
	return nil, nil
}

// neighbours returns the components on the far side of c's edges: its targets when outgoing,
// its sources otherwise, in the order of the edges.
func neighbours(ctx context.Context, c *catalog.Component, outgoing bool) ([]*catalog.Component, error) {
	p, err := partition(ctx, c.CapabilityID, dynamo.SegComponents|dynamo.SegDependencies)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*catalog.Component, len(p.Components))
	for _, x := range p.Components {
		byID[x.ComponentID] = x
	}
	out := []*catalog.Component{}
	for _, d := range p.Dependencies {
		near, far := d.TargetComponentID, d.SourceComponentID
		if outgoing {
			near, far = d.SourceComponentID, d.TargetComponentID
		}
		if near == c.ComponentID && byID[far] != nil {
			out = append(out, byID[far])
		}
	}
	return out, nil
}

// capabilityOrNull returns the capability, nil without error when it does not exist.
func capabilityOrNull(ctx context.Context, id string) (*catalog.Capability, error) {
	c, err := For(ctx).Capability(ctx, id)
	if errors.Is(err, dynamo.ErrNotFound) {
		return nil, nil
	}
	return c, err
}

// filter returns the elements of xs for which keep holds, never nil.
func filter[T any](xs []T, keep func(T) bool) []T {
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if keep(x) {
			out = append(out, x)
		}
	}
	return out
}

func metricsWindow(ctx context.Context, k metricsKey) (*dynamo.Page[*catalog.Metric], error) {
	return For(ctx).Metrics(ctx, k)
}

// capabilityRef returns the capability with the given ID for a child field: when the query
// selects nothing of it but its ID, no read is made.
func capabilityRef(ctx context.Context, id string) (*catalog.Capability, error) {
	if !selected(ctx).needsMetadata() {
		return &catalog.Capability{CapabilityID: id}, nil
	}
	return For(ctx).Capability(ctx, id)
}
