package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"

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
// Owner.capabilities. When the query selects totalCount, the count is started with the page,
// so that its reads go out with the page's first ones rather than after the page.
func (r *Resolver) searchCapabilities(ctx context.Context, q dynamo.CapabilityQuery, first *int, after *string) (*model.Connection[*catalog.Capability], error) {
	return r.searchPage(ctx, q, nil, func() (*dynamo.Page[*catalog.Capability], error) {
		return r.store.SearchCapabilities(ctx, q, deref(first, 50), deref(after, ""))
	})
}

// searchPage is the connection of the page read (started with the count when totalCount is
// selected); count, when not nil, is the count already started.
func (r *Resolver) searchPage(ctx context.Context, q dynamo.CapabilityQuery, count *pageAhead, read func() (*dynamo.Page[*catalog.Capability], error)) (*model.Connection[*catalog.Capability], error) {
	if _, ok := selected(ctx)["totalCount"]; ok && count == nil {
		count = startAhead(func() (any, error) { return r.store.CountCapabilities(ctx, q) })
	}
	p, err := read()
	if err != nil {
		return nil, err
	}
	r.prefetchCapabilities(ctx, p.Items)
	return counted(p, func(ctx context.Context) (int, error) {
		if count == nil {
			return r.store.CountCapabilities(ctx, q)
		}
		n, err := count.wait()
		if err != nil {
			return 0, err
		}
		return n.(int), nil
	}), nil
}

// pageAhead is a read started before the field that needs it resolves.
type pageAhead struct {
	done  chan struct{}
	value any
	err   error
}

// startAhead starts read in its own goroutine.
func startAhead(read func() (any, error)) *pageAhead {
	a := &pageAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.value, a.err = read()
	}()
	return a
}

// wait returns the read's result once it is done.
func (a *pageAhead) wait() (any, error) {
	<-a.done
	return a.value, a.err
}

// ownerPageKey names an owner's capabilities page by the field's arguments.
func ownerPageKey(name string, first int, after string) string {
	return fmt.Sprintf("%d|%s|%s", first, after, name)
}

// ownerCapabilities is what Owner.capabilities reads: the owner's capabilities in name order.
func ownerCapabilities(name string) dynamo.CapabilityQuery {
	return dynamo.CapabilityQuery{Owner: &name, Order: dynamo.OrderName}
}

// startOwnerPages starts, before owner(name) reads the owner's counts, the capabilities pages
// its selection asks for (Owner.capabilities with each occurrence's first and after), so that
// they go out with the counters' read: owner(name) with its first page is 2 round trips, not
// 3. When the owner owns nothing the page read is spent for nothing (one Query, empty).
func (r *Resolver) startOwnerPages(ctx context.Context, name string) {
	fields := selected(ctx)["capabilities"]
	// Owner.capabilities is asked with the owner's name as the counters key it (Owner.name).
	if name = dynamo.OwnerKey(name); len(fields) == 0 || name == "" {
		return
	}
	vars := graphql.GetOperationContext(ctx).Variables
	l := For(ctx)
	for _, f := range fields {
		args := f.ArgumentMap(vars)
		first, after := 50, ""
		if v, err := graphql.UnmarshalInt(args["first"]); err == nil && args["first"] != nil {
			first = v
		}
		if v, ok := args["after"].(string); ok {
			after = v
		}
		key := ownerPageKey(name, first, after)
		l.mu.Lock()
		if l.ahead == nil {
			l.ahead = map[string]*pageAhead{}
		}
		if l.ahead[key] == nil {
			l.ahead[key] = startAhead(func() (any, error) {
				return r.store.SearchCapabilities(ctx, ownerCapabilities(name), first, after)
			})
		}
		l.mu.Unlock()
	}
}

// ownerPage returns the capabilities page of the owner started by startOwnerPages, nil when
// none was.
func ownerPage(ctx context.Context, name string, first int, after string) *pageAhead {
	l := For(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ahead[ownerPageKey(name, first, after)]
}
