package graph

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// maxNodes is the most IDs one nodes(ids:) takes.
const maxNodes = 100

// selectedAs returns the fields selected under the field being resolved (node, nodes) that
// apply to an object of type typ: its own and those of fragments on typ or on Node.
func selectedAs(ctx context.Context, typ catalog.NodeKind) selection {
	return group(graphql.CollectFieldsCtx(ctx, []string{string(typ), "Node"}))
}

// prefetchNodes starts the reads that resolving ids will need, with what the query selects of
// them, without waiting: the metadata of every capability among them in one BatchGetItem, and
// per capability the union of the segments its nodes and their selections read, so that the
// nodes of one capability share its reads.
func (r *Resolver) prefetchNodes(ctx context.Context, ids []catalog.NodeID) {
	l := For(ctx)
	var capIDs []string
	want := map[string]dynamo.Segment{}
	var order []string
	for _, n := range ids {
		s := selectedAs(ctx, n.Kind)
		var seg dynamo.Segment
		switch n.Kind {
		case catalog.KindCapability:
			capIDs = append(capIDs, n.CapabilityID)
			seg = r.segments.read(ctx, string(n.Kind), s)
			r.prefetchWindows(ctx, n.CapabilityID, s)
		case catalog.KindComponent:
			seg = dynamo.SegComponents | r.segments.read(ctx, string(n.Kind), s)
		case catalog.KindDependency:
			seg = dynamo.SegDependencies | r.segments.read(ctx, string(n.Kind), s)
		case catalog.KindRule:
			seg = dynamo.SegRules
		}
		if seg != 0 {
			if _, ok := want[n.CapabilityID]; !ok {
				order = append(order, n.CapabilityID)
			}
			want[n.CapabilityID] |= seg
		}
	}
	l.PrefetchCapabilities(ctx, capIDs)
	for _, id := range order {
		pctx := ctx
		if !slices.Contains(capIDs, id) {
			pctx = withRangeAlone(ctx)
		}
		l.Prefetch(pctx, id, want[id])
	}
}

// node returns the object n names, or nil when there is none or the caller may not read it.
// Every kind costs at most one DynamoDB request (see docs/api.md, "Object identity and
// node(id:)"); reads prefetchNodes started are shared.
func (r *Resolver) node(ctx context.Context, n catalog.NodeID) (catalog.Node, error) {
	switch n.Kind {
	case catalog.KindCapability:
		if c, err := capabilityOrNull(ctx, n.CapabilityID); c != nil || err != nil {
			return c, err
		}
	case catalog.KindComponent:
		if c, err := componentByID(ctx, n.CapabilityID, n.LocalID); c != nil || err != nil {
			return c, err
		}
	case catalog.KindDependency:
		p, err := partition(ctx, n.CapabilityID, dynamo.SegDependencies)
		if err != nil {
			return nil, err
		}
		for _, d := range p.Dependencies {
			if d.SourceComponentID == n.LocalID && d.TargetComponentID == n.TargetID {
				return d, nil
			}
		}
	case catalog.KindRule:
		p, err := partition(ctx, n.CapabilityID, dynamo.SegRules)
		if err != nil {
			return nil, err
		}
		for _, x := range p.Rules {
			if x.RuleID == n.LocalID {
				return x, nil
			}
		}
	case catalog.KindJob:
		j, err := r.store.JobByID(ctx, n.LocalID)
		if err != nil && !dynamo.IsNotFound(err) {
			return nil, err
		}
		if j != nil && j.CapabilityID == n.CapabilityID {
			return j, nil
		}
	case catalog.KindCapabilityVersion:
		v, err := r.store.CapabilityVersion(ctx, n.CapabilityID, n.Revision, !mayReadAnyHistory(ctx))
		if err != nil && !dynamo.IsNotFound(err) {
			return nil, err
		}
		if v != nil {
			return v, nil
		}
	case catalog.KindRuleVersion:
		v, err := r.store.RuleVersion(ctx, n.CapabilityID, n.LocalID, n.Revision, !mayReadAnyHistory(ctx))
		if err != nil && !dynamo.IsNotFound(err) {
			return nil, err
		}
		if v != nil {
			return v, nil
		}
	}
	return nil, nil
}

// mayReadAnyHistory reports whether the caller may read versions of deleted capabilities
// (capabilityHistory's role). Anyone else reads the versions of live capabilities only, as
// Capability.history and Rule.history show them.
func mayReadAnyHistory(ctx context.Context) bool { return CallerFrom(ctx).Role >= RoleAdmin }

// nodes resolves the IDs of nodes(ids:): every ID is parsed before anything is read, every
// read starts at once (the IDs of one capability share its segment reads), and the results
// keep the order of ids.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]catalog.Node, error) {
	if len(ids) > maxNodes {
		return nil, catalog.Invalid("ids", "at most %d IDs, got %d", maxNodes, len(ids))
	}
	parsed := make([]catalog.NodeID, len(ids))
	for i, id := range ids {
		n, err := catalog.ParseNodeID("ids", id)
		if err != nil {
			return nil, err
		}
		parsed[i] = n
	}
	r.prefetchNodes(ctx, parsed)
	out := make([]catalog.Node, len(parsed))
	errs := make([]error, len(parsed))
	var wg sync.WaitGroup
	for i, n := range parsed {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = r.node(ctx, n)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// localID returns the local ID an argument that takes one (Capability.component(id:),
// job(id:)) was given: id itself, or the local ID of a global ID of kind. in is the capability
// the global ID must belong to ("" for any), and ok is false when it belongs to another.
func localID(field, id string, kind catalog.NodeKind, in string) (local, capabilityID string, ok bool, err error) {
	if !strings.Contains(id, "/") {
		return id, "", true, dynamo.ValidateID(field, id)
	}
	n, err := catalog.ParseNodeID(field, id)
	if err != nil {
		return "", "", false, err
	}
	if n.Kind != kind {
		return "", "", false, catalog.Invalid(field, "%q is the ID of a %s, not of a %s", id, n.Kind, kind)
	}
	return n.LocalID, n.CapabilityID, in == "" || n.CapabilityID == in, nil
}
