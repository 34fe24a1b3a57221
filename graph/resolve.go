package graph

import (
	"context"
	"errors"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
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
	ix, err := For(ctx).components(ctx, capabilityID)
	if err != nil {
		return nil, err
	}
	return ix[componentID], nil
}

// neighbours returns the components on the far side of c's edges: its targets when outgoing,
// its sources otherwise, in the order of the edges.
func neighbours(ctx context.Context, c *catalog.Component, outgoing bool) ([]*catalog.Component, error) {
	g, err := For(ctx).edges(ctx, c.CapabilityID)
	if err != nil {
		return nil, err
	}
	near := g.in
	if outgoing {
		near = g.out
	}
	if n := near[c.ComponentID]; n != nil {
		return n, nil
	}
	return []*catalog.Component{}, nil
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

// metricsPage returns a window of metrics: from the table alone (the metrics loader, which
// the planner's prefetch may have started), or, when an archive is configured and the window
// reaches the hours it may have moved to S3, merged from the table and the archive. owner is
// the capability whose archive holds the component's samples ("" for k.CapabilityID).
func (r *Resolver) metricsPage(ctx context.Context, k metricsKey, owner string) (*dynamo.Page[*catalog.Metric], error) {
	return r.metricsRead(ctx, k, owner)()
}

// metricsRead starts metricsPage's read and returns its result. Under the same key and owner,
// one request reads a window once: the prefetch (prefetchWindows) and the resolver share it,
// whichever path it takes.
func (r *Resolver) metricsRead(ctx context.Context, k metricsKey, owner string) func() (*dynamo.Page[*catalog.Metric], error) {
	l := For(ctx)
	if r.archive == nil {
		return l.metricWindows.Load(ctx, k)
	}
	from, err := parseKeyTime(k.From)
	if err != nil {
		return failed[*dynamo.Page[*catalog.Metric]](err)
	}
	to, err := parseKeyTime(k.To)
	if err != nil {
		return failed[*dynamo.Page[*catalog.Metric]](err)
	}
	if !r.archive.Reaches(from) {
		return l.metricWindows.Load(ctx, k)
	}
	if owner == "" {
		owner = k.CapabilityID
	}
	q := archive.MetricsQuery{CapabilityID: owner, ComponentID: k.ComponentID, MetricType: k.MetricType, From: from, To: to, First: k.First, After: k.After}
	return l.archivedWindow(ctx, k, owner, func(ctx context.Context) (*dynamo.Page[*catalog.Metric], error) {
		table := func(ctx context.Context) (*dynamo.Page[*catalog.Metric], error) { return metricsWindow(ctx, k) }
		components := func(ctx context.Context) ([]string, error) {
			p, err := partition(ctx, k.CapabilityID, dynamo.SegComponents)
			if err != nil {
				return nil, err
			}
			ids := make([]string, 0, len(p.Components))
			for _, c := range p.Components {
				ids = append(ids, c.ComponentID)
			}
			return ids, nil
		}
		return r.archive.Page(ctx, q, table, components)
	})
}

// failed is the result of a read that could not start.
func failed[T any](err error) func() (T, error) {
	return func() (T, error) {
		var zero T
		return zero, err
	}
}

// liveOnly drops from a page of index reads (components by type, a job by ID, a component's
// metrics) the items whose capability is being deleted or gone: the index lists them until the
// delete's second step has removed them, and a capability is gone from every read from the
// delete's first transaction. The capabilities are read through the loader, in one
// BatchGetItem shared with the query's capability fields.
func liveOnly[T any](ctx context.Context, p *dynamo.Page[T], capabilityOf func(T) string) (*dynamo.Page[T], error) {
	if p == nil || len(p.Items) == 0 {
		return p, nil
	}
	var ids []string
	seen := map[string]bool{}
	for _, it := range p.Items {
		if id := capabilityOf(it); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	l := For(ctx)
	l.PrefetchCapabilities(ctx, ids)
	live := make(map[string]bool, len(ids))
	for _, id := range ids {
		c, err := l.Capability(ctx, id)
		if err != nil && !dynamo.IsNotFound(err) {
			return nil, err
		}
		live[id] = err == nil && c != nil
	}
	out := &dynamo.Page[T]{HasNext: p.HasNext}
	for i, it := range p.Items {
		if live[capabilityOf(it)] {
			out.Items = append(out.Items, it)
			if i < len(p.Cursors) {
				out.Cursors = append(out.Cursors, p.Cursors[i])
			}
		}
	}
	return out, nil
}

// jobArtifacts lists a job's objects, or none when no object store is configured.
func (r *Resolver) jobArtifacts(ctx context.Context, j *catalog.Job) ([]*blob.Artifact, error) {
	if r.artifacts == nil {
		return []*blob.Artifact{}, nil
	}
	list, err := r.artifacts.ListArtifacts(ctx, j.CapabilityID, j.JobID, blob.ArtifactListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Artifacts, nil
}

// errNoObjectStore answers S3 operations on a server without an object store.
var errNoObjectStore = catalog.NewError(catalog.Unavailable, "no object store is configured")
