package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Look-ahead: a resolver that returns capabilities or components inspects what the query
// selected beneath it and starts, at once and together, exactly the partition reads its
// children will ask for. The children then find their data in the loaders' cache.

// selection is the set of fields selected on one object, with their sub-selections.
type selection map[string][]graphql.CollectedField

// selected returns the fields selected under the field being resolved.
func selected(ctx context.Context) selection {
	return group(graphql.CollectFieldsCtx(ctx, nil))
}

func group(fields []graphql.CollectedField) selection {
	s := selection{}
	for _, f := range fields {
		s[f.Name] = append(s[f.Name], f)
	}
	return s
}

// child returns the merged selection under every occurrence (aliases included) of name.
func (s selection) child(ctx context.Context, name string) selection {
	out := selection{}
	op := graphql.GetOperationContext(ctx)
	for _, f := range s[name] {
		for k, v := range group(graphql.CollectFields(op, f.Selections, nil)) {
			out[k] = append(out[k], v...)
		}
	}
	return out
}

func (s selection) has(names ...string) bool {
	for _, n := range names {
		if len(s[n]) > 0 {
			return true
		}
	}
	return false
}

// nodes returns the selection of a connection's nodes, through `nodes` and `edges { node }`.
func (s selection) nodes(ctx context.Context) selection {
	out := s.child(ctx, "nodes")
	for k, v := range s.child(ctx, "edges").child(ctx, "node") {
		out[k] = append(out[k], v...)
	}
	return out
}

// Fields of Capability that read each partition segment.
var (
	componentFields  = []string{"components", "component", "slaBreaches", "dependencyGraph", "impact", "slaReport"}
	dependencyFields = []string{"dependencies", "dependencyGraph", "impact", "slaReport"}
	ruleFields       = []string{"rules", "evaluateRules"}
	// Capability fields answered without the METADATA item.
	idFields = map[string]bool{"id": true, "capabilityId": true, "__typename": true}
)

// capabilitySegments returns the segments a capability's selection will read.
func capabilitySegments(ctx context.Context, s selection) dynamo.Segment {
	var want dynamo.Segment
	if s.has(componentFields...) {
		want |= dynamo.SegComponents
	}
	if s.has(dependencyFields...) {
		want |= dynamo.SegDependencies
	}
	if s.has(ruleFields...) {
		want |= dynamo.SegRules
	}
	// Edges resolve their ends, components their neighbours.
	if s.child(ctx, "dependencies").has("source", "target") {
		want |= dynamo.SegComponents
	}
	if s.child(ctx, "components").has("dependsOn", "dependents") || s.child(ctx, "component").has("dependsOn", "dependents") {
		want |= dynamo.SegDependencies
	}
	return want
}

// needsMetadata reports whether a capability's selection reads more than its ID.
func (s selection) needsMetadata() bool {
	for name := range s {
		if !idFields[name] {
			return true
		}
	}
	return false
}

// prefetchCapability starts the reads a capability's selection s will need: its metadata
// (unless known or not needed) and its partition segments.
func prefetchCapability(ctx context.Context, id string, s selection, metadata bool) {
	l := For(ctx)
	if metadata && s.needsMetadata() {
		l.PrefetchCapability(ctx, id)
	}
	if want := capabilitySegments(ctx, s); want != 0 {
		l.Prefetch(ctx, id, want)
	}
}

// prefetchComponents starts the reads the selection s of each component will need: its
// capability (through Component.capability) and its neighbours.
func prefetchComponents(ctx context.Context, comps []*catalog.Component, s selection) {
	if len(s) == 0 {
		return
	}
	capSel := s.child(ctx, "capability")
	neighbours := s.has("dependsOn", "dependents")
	l := For(ctx)
	for _, c := range comps {
		if len(capSel) > 0 {
			prefetchCapability(ctx, c.CapabilityID, capSel, true)
		}
		if neighbours {
			l.Prefetch(ctx, c.CapabilityID, dynamo.SegComponents|dynamo.SegDependencies)
		}
	}
}

// prefetchCapabilities records the capabilities of a list (read whole from GSI1 items) in the
// metadata cache and starts the partition reads their selection needs, all at once.
func (r *Resolver) prefetchCapabilities(ctx context.Context, caps []*catalog.Capability) {
	s := selected(ctx).nodes(ctx)
	l := For(ctx)
	for _, c := range caps {
		l.PrimeCapability(ctx, c)
		prefetchCapability(ctx, c.CapabilityID, s, false)
	}
}
