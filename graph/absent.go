package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/capcat/catalogue/catalog"
)

// absentAsNull is the field middleware that answers null for an absent value: the domain types
// bound as GraphQL objects (package catalog) hold an unset string as "" and an unset time as
// the zero Timestamp, which a nullable String, ID or DateTime field returns as null. A non-null
// field keeps its value. Most results are neither, and cost one type switch; only an empty
// string or a zero time looks up the field's definition.
func absentAsNull(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
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
