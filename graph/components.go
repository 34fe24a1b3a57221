package graph

import (
	"context"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

// componentFilter is the store's form of a ComponentFilter (nil: no filter).
func componentFilter(f *model.ComponentFilter) dynamo.ComponentFilter {
	if f == nil {
		return dynamo.ComponentFilter{}
	}
	return dynamo.ComponentFilter{Search: deref(f.Search, ""), Types: f.Types, Statuses: f.Statuses,
		HealthStatuses: f.HealthStatuses, Team: deref(f.Team, "")}
}

// componentConnection is a page of the components that match f across the catalogue
// (Query.components, Owner.components), prefetched as componentsByType's are, and its
// totalCount (CountComponents, read only when selected).
func (r *Resolver) componentConnection(ctx context.Context, f dynamo.ComponentFilter, first *int, after *string) (*model.Connection[*catalog.Component], error) {
	p, err := r.store.Components(ctx, f, deref(first, 50), deref(after, ""))
	if err != nil {
		return nil, err
	}
	return r.componentsAcross(ctx, p, f)
}

// componentsAcross is the connection of a page of components across the catalogue (components,
// Owner.components, componentsByType): prefetched for the fields selected of them, without
// the components of a capability being deleted when their capability is read anyway, and its
// totalCount, the count of f (CountComponents, read only when selected).
func (r *Resolver) componentsAcross(ctx context.Context, p *dynamo.Page[*catalog.Component], f dynamo.ComponentFilter) (*model.Connection[*catalog.Component], error) {
	var err error
	nodes := selected(ctx).nodes(ctx)
	r.prefetchComponents(ctx, p.Items, nodes)
	if nodes.child(ctx, "capability").needsMetadata() {
		// The capabilities are read anyway: drop the components of one being deleted.
		if p, err = liveOnly(ctx, p, func(c *catalog.Component) string { return c.CapabilityID }); err != nil {
			return nil, err
		}
	}
	c := connection(p)
	c.Count = func(ctx context.Context) (int, error) { return r.store.CountComponents(ctx, f) }
	return c, nil
}
