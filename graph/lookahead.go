package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
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

// nodes returns the selection of a connection's nodes, through `nodes` and `edges { node }`.
func (s selection) nodes(ctx context.Context) selection {
	out := s.child(ctx, "nodes")
	for k, v := range s.child(ctx, "edges").child(ctx, "node") {
		out[k] = append(out[k], v...)
	}
	return out
}

// Capability fields answered without the METADATA item.
var idFields = map[string]bool{"id": true, "capabilityId": true, "__typename": true}

// fieldSegments holds, by type and field, the partition segments the field's resolver reads:
// the schema's @reads declarations, read once when the handler is built. A field it does not
// hold reads none.
type fieldSegments map[string]map[string]dynamo.Segment

// declaredSegments returns the @reads declarations of schema s. It fails on a declaration
// without segments or with a segment it does not know.
func declaredSegments(s *ast.Schema) (fieldSegments, error) {
	t := fieldSegments{}
	for typ, def := range s.Types {
		for _, f := range def.Fields {
			d := f.Directives.ForName("reads")
			if d == nil {
				continue
			}
			arg := d.Arguments.ForName("segments")
			if arg == nil || arg.Value == nil {
				return nil, fmt.Errorf("%s.%s: @reads without segments", typ, f.Name)
			}
			values := []*ast.Value{arg.Value} // a single value stands for a list of one
			if arg.Value.Kind == ast.ListValue {
				values = values[:0]
				for _, c := range arg.Value.Children {
					values = append(values, c.Value)
				}
			}
			var want dynamo.Segment
			for _, v := range values {
				seg, ok := segment(model.Segment(v.Raw))
				if !ok {
					return nil, fmt.Errorf("%s.%s: @reads names an unknown segment %q", typ, f.Name, v.Raw)
				}
				want |= seg
			}
			if want == 0 {
				continue
			}
			if t[typ] == nil {
				t[typ] = map[string]dynamo.Segment{}
			}
			t[typ][f.Name] = want
		}
	}
	return t, nil
}

// segment returns the partition segment of a value of the schema's Segment enum.
func segment(v model.Segment) (dynamo.Segment, bool) {
	switch v {
	case model.SegmentComponents:
		return dynamo.SegComponents, true
	case model.SegmentDependencies:
		return dynamo.SegDependencies, true
	case model.SegmentRules:
		return dynamo.SegRules, true
	}
	return 0, false
}

// read returns the segments that selection s, on type typ, will read: those of its fields, and
// those of the fields selected beneath a field that reads the partition (a dependency's ends, a
// component's neighbours), which resolve from the same capability's partition.
func (t fieldSegments) read(ctx context.Context, typ string, s selection) dynamo.Segment {
	var want dynamo.Segment
	for name, fields := range s {
		seg := t[typ][name]
		if seg == 0 {
			continue
		}
		want |= seg
		if def := fields[0].Definition; def != nil && def.Type != nil && t[def.Type.Name()] != nil {
			below := t[def.Type.Name()]
			for child := range s.child(ctx, name) {
				want |= below[child]
			}
		}
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
func (r *Resolver) prefetchCapability(ctx context.Context, id string, s selection, metadata bool) {
	r.prefetchCapabilityReads(ctx, id, s, r.segments.read(ctx, "Capability", s), metadata)
}

// prefetchCapabilityReads is prefetchCapability with the segments of s already known (want):
// a list's capabilities share one selection, whose segments are worked out once.
func (r *Resolver) prefetchCapabilityReads(ctx context.Context, id string, s selection, want dynamo.Segment, metadata bool) {
	l := For(ctx)
	if metadata && s.needsMetadata() {
		l.PrefetchCapability(ctx, id)
	}
	if want != 0 {
		l.Prefetch(ctx, id, want)
	}
	r.prefetchWindows(ctx, id, s)
}

// prefetchWindows starts the jobs and metrics windows that a capability's selection s asks for,
// under the keys their resolvers will build, so that they go out with the metadata and segment
// reads instead of one round trip later, once the capability has resolved. A metrics window is
// started the way its resolver reads it (metricsRead: the table alone, or through the archive
// when it reaches archived hours), so that the resolver finds it started. Arguments it cannot
// read are left to the resolver, which reports them.
func (r *Resolver) prefetchWindows(ctx context.Context, id string, s selection) {
	if len(s["jobs"]) == 0 && len(s["metrics"]) == 0 {
		return
	}
	defer func() { _ = recover() }() // a prefetch never fails a request
	l := For(ctx)
	vars := graphql.GetOperationContext(ctx).Variables
	for _, f := range s["jobs"] {
		if k, ok := jobsWindowKey(id, f.ArgumentMap(vars)); ok {
			l.jobs.Load(ctx, k)
		}
	}
	for _, f := range s["metrics"] {
		if k, ok := metricsWindowKey(id, f.ArgumentMap(vars)); ok {
			r.metricsRead(ctx, k, id)
		}
	}
}

// jobsWindowKey is the key Capability.jobs builds from these arguments.
func jobsWindowKey(id string, args map[string]any) (k jobsKey, ok bool) {
	k = jobsKey{CapabilityID: id, First: 20}
	return k, argInt(args, "first", &k.First) && argString(args, "after", &k.After) &&
		argEnum(args, "status", &k.Filter.Status) && argEnum(args, "jobType", &k.Filter.JobType)
}

// metricsWindowKey is the key Capability.metrics builds from these arguments.
func metricsWindowKey(id string, args map[string]any) (k metricsKey, ok bool) {
	k = metricsKey{CapabilityID: id, First: 100}
	return k, argString(args, "componentId", &k.ComponentID) && argEnum(args, "metricType", &k.MetricType) &&
		argTime(args, "from", &k.From) && argTime(args, "to", &k.To) &&
		argInt(args, "first", &k.First) && argString(args, "after", &k.After)
}

func argInt(args map[string]any, name string, dst *int) bool {
	if v := args[name]; v != nil {
		n, err := graphql.UnmarshalInt(v)
		*dst = n
		return err == nil
	}
	return true
}

func argString(args map[string]any, name string, dst *string) bool {
	if v := args[name]; v != nil {
		s, err := graphql.UnmarshalString(v)
		*dst = s
		return err == nil
	}
	return true
}

func argEnum[T any, P interface {
	*T
	graphql.Unmarshaler
}](args map[string]any, name string, dst *T) bool {
	if v := args[name]; v != nil {
		return P(dst).UnmarshalGQL(v) == nil
	}
	return true
}

func argTime(args map[string]any, name string, dst *string) bool {
	if v := args[name]; v != nil {
		var t catalog.Timestamp
		if err := t.UnmarshalGQL(v); err != nil {
			return false
		}
		*dst = timeKey(&t)
	}
	return true
}

// prefetchComponents starts the reads the selection s of each component will need: its
// capability (through Component.capability) and the segments of its partition (its neighbours).
func (r *Resolver) prefetchComponents(ctx context.Context, comps []*catalog.Component, s selection) {
	if len(s) == 0 {
		return
	}
	capSel := s.child(ctx, "capability")
	want := r.segments.read(ctx, "Component", s)
	var capWant dynamo.Segment
	if len(capSel) > 0 {
		capWant = r.segments.read(ctx, "Capability", capSel)
	}
	l := For(ctx)
	// The metadata of every capability at once, not one key at a time into the batch window
	// (under load the window can close halfway and cost a second BatchGetItem).
	if capSel.needsMetadata() {
		ids := make([]string, len(comps))
		for i, c := range comps {
			ids[i] = c.CapabilityID
		}
		l.PrefetchCapabilities(ctx, ids)
	}
	for _, c := range comps {
		if len(capSel) > 0 {
			r.prefetchCapabilityReads(ctx, c.CapabilityID, capSel, capWant, false)
		}
		if want != 0 {
			l.Prefetch(ctx, c.CapabilityID, want)
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
	}
	want := r.segments.read(ctx, "Capability", s)
	if want != 0 {
		l.PrefetchVersions(ctx, caps, want) // before the range reads that wait for them
	}
	for _, c := range caps {
		r.prefetchCapabilityReads(ctx, c.CapabilityID, s, want, false)
	}
}

// rootCapabilityIDs returns the valid IDs of the operation's root capability(id:) fields and
// of its root node(id:) fields that name a capability,
// fragments and @skip/@include applied. Anything it cannot read is left to the resolvers.
func rootCapabilityIDs(ctx context.Context) (ids []string) {
	defer func() {
		if recover() != nil { // a prefetch never fails a request
			ids = nil
		}
	}()
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return nil
	}
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		args := f.ArgumentMap(oc.Variables)
		switch f.Name {
		case "capability":
			if id, ok := args["id"].(string); ok && dynamo.ValidateID("id", id) == nil {
				ids = append(ids, id)
			}
		case "node":
			if id, ok := args["id"].(string); ok {
				if n, err := catalog.ParseNodeID("id", id); err == nil && n.Kind == catalog.KindCapability {
					ids = append(ids, n.CapabilityID)
				}
			}
		}
	}
	return ids
}
