package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/catalog"
)

// absentNulls installs absentAsNull as the operation's field middleware. gqlgen runs a field
// interceptor registered with AroundFields (or Use) through a chain it builds per field call: a
// closure allocated on every field and three more frames on every field's stack, which the
// goroutines gqlgen starts per list element pay again as stack growth. Wrapped around the
// operation's ResolverMiddleware once per operation instead, it does the same work on every
// field (and still runs outside any field interceptor registered with the server) without them.
type absentNulls struct{}

var (
	_ graphql.HandlerExtension        = absentNulls{}
	_ graphql.OperationContextMutator = absentNulls{}
)

func (absentNulls) ExtensionName() string                   { return "AbsentAsNull" }
func (absentNulls) Validate(graphql.ExecutableSchema) error { return nil }

func (absentNulls) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	inner := oc.ResolverMiddleware
	oc.ResolverMiddleware = func(ctx context.Context, next graphql.Resolver) (any, error) {
		res, err := inner(ctx, next)
		return nullIfAbsent(ctx, res, err)
	}
	return nil
}

// absentAsNull is the field middleware that answers null for an absent value: the domain types
// bound as GraphQL objects (package catalog) hold an unset string as "" and an unset time as
// the zero Timestamp, which a nullable String, ID or DateTime field returns as null. A non-null
// field keeps its value. Most results are neither, and cost one type switch; only an empty
// string or a zero time looks up the field's definition.
func absentAsNull(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	return nullIfAbsent(ctx, res, err)
}

// nullIfAbsent is absentAsNull's answer for a field that resolved to res, err.
func nullIfAbsent(ctx context.Context, res any, err error) (any, error) {
	if err != nil || !absent(res) {
		return res, err
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Definition != nil && !fc.Field.Definition.Type.NonNull {
		switch fc.Field.Definition.Type.NamedType {
		case "String", "ID", "DateTime":
			return nil, nil
		}
	}
	return res, nil
}

// absent reports whether a field's result is an empty string or a zero time.
func absent(res any) bool {
	switch v := res.(type) {
	case string:
		return v == ""
	case *string:
		return v != nil && *v == ""
	case catalog.Timestamp:
		return v.IsZero()
	case *catalog.Timestamp:
		return v != nil && v.IsZero()
	}
	return false
}
