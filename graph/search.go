package graph

import (
	"context"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

// capabilityQuery turns Query.capabilities' arguments into the store's query; ok is false when
// neither a filter field nor an order is given (the CAPABILITIES listing of before).
func capabilityQuery(filter *model.CapabilityFilter, orderBy *model.CapabilityOrder, domain *string) (q dynamo.CapabilityQuery, ok bool) {
	q.Domain = deref(domain, "")
	if f := filter; f != nil {
		q.Search, q.Domains, q.Statuses, q.Priorities = f.Search, f.Domains, f.Statuses, f.Priorities
		q.HealthStatuses, q.Owner, q.Tags = f.HealthStatuses, f.Owner, f.Tags
		ok = f.Search != nil || f.Domains != nil || f.Statuses != nil || f.Priorities != nil || f.HealthStatuses != nil ||
			f.Owner != nil || f.Tags != nil
	}
	if orderBy != nil {
		q.Order = string(orderBy.Field)
		q.Desc = orderBy.Direction != nil && *orderBy.Direction == model.OrderDirectionDesc
		ok = true
	}
	return q, ok
}

// counted is connection(p) with its totalCount counted by count.
func counted[T any](p *dynamo.Page[T], count func(ctx context.Context) (int, error)) *model.Connection[T] {
	c := connection(p)
	c.Count = count
	return c
}

// searchCapabilities answers Query.capabilities with a filter or an order, and
// Owner.capabilities.
func (r *Resolver) searchCapabilities(ctx context.Context, q dynamo.CapabilityQuery, first *int, after *string) (*model.Connection[*catalog.Capability], error) {
	p, err := r.store.SearchCapabilities(ctx, q, deref(first, 50), deref(after, ""))
	if err != nil {
		return nil, err
	}
	r.prefetchCapabilities(ctx, p.Items)
	return counted(p, func(ctx context.Context) (int, error) { return r.store.CountCapabilities(ctx, q) }), nil
}
