package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

// defaultChangePage is the page size of a changes connection read backwards without last
// (before alone); forwards, first's default in the schema (50) applies.
const defaultChangePage = 50

// givenArgument reports whether the request gave field f the argument name: written in the
// document, or a variable the request set. An explicit null counts as not given (nullDefaults
// has already dropped a null in a defaulted position), and so does a default the schema fills
// in, which is how first's default (50) is told from a first the client sent with last.
func givenArgument(f *ast.Field, name string, vars map[string]any) bool {
	a := f.Arguments.ForName(name)
	if a == nil || a.Value == nil {
		return false
	}
	switch a.Value.Kind {
	case ast.NullValue:
		return false
	case ast.Variable:
		v, ok := vars[a.Value.Raw]
		return ok && v != nil
	}
	return true
}

// changePageArgs are the Relay arguments of a changes connection.
type changePageArgs struct {
	first  *int
	after  *string
	last   *int
	before *string
}

// changes serves both changes connections: a capability's (capabilityID set) or the
// catalogue's, forwards (first/after) or backwards (last/before). Mixing the two directions is
// a *catalog.ValidationError (BAD_USER_INPUT).
func (r *Resolver) changes(ctx context.Context, capabilityID *string, f dynamo.ChangeFilter, a changePageArgs) (*model.Connection[*catalog.ChangeRecord], error) {
	if fc := graphql.GetFieldContext(ctx); (a.last != nil || a.before != nil) && fc != nil && fc.Field.Field != nil &&
		!givenArgument(fc.Field.Field, "first", graphql.GetOperationContext(ctx).Variables) {
		a.first = nil // first's default, not the request's: this page reads backwards
	}
	switch {
	case a.first != nil && a.last != nil:
		return nil, catalog.Invalid("last", "give first or last, not both")
	case a.last != nil && a.after != nil:
		return nil, catalog.Invalid("after", "after pages forwards: use before with last")
	case a.first != nil && a.before != nil:
		return nil, catalog.Invalid("before", "before pages backwards: use after with first")
	}
	var p *dynamo.Page[*catalog.ChangeRecord]
	var err error
	if a.last != nil || a.before != nil {
		last := deref(a.last, defaultChangePage)
		if capabilityID != nil {
			p, err = r.store.CapabilityChangesBefore(ctx, *capabilityID, f, last, deref(a.before, ""))
		} else {
			p, err = r.store.ChangesBefore(ctx, f, last, deref(a.before, ""))
		}
	} else {
		first := deref(a.first, defaultChangePage)
		if capabilityID != nil {
			p, err = r.store.CapabilityChanges(ctx, *capabilityID, f, first, deref(a.after, ""))
		} else {
			p, err = r.store.Changes(ctx, f, first, deref(a.after, ""))
		}
	}
	if err != nil {
		return nil, err
	}
	return connection(p), nil
}

// hiddenActorName is what a change's actor is called for a caller below admin when it is an
// API key: the key's name is an admin's to see (docs/security.md); the role stays visible.
const hiddenActorName = "hidden"

// visibleActor returns a change's actor as the caller may see it: whole for an admin, and for
// anyone else with an API key's name replaced by hiddenActorName. The names the server gives
// itself ("system", "anonymous", "unknown") are no key's and stay.
func visibleActor(ctx context.Context, a catalog.Actor) *catalog.Actor {
	if CallerFrom(ctx).Role >= RoleAdmin {
		return &a
	}
	switch a.Name {
	case catalog.SystemActor.Name, catalog.UnknownActor.Name, anonymousCaller:
		return &a
	}
	return &catalog.Actor{Name: hiddenActorName, Role: a.Role}
}
