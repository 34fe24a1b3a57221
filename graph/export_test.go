package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// RewriteNulls applies to oc what the handler's nullDefaults extension does to every
// operation after validation.
func RewriteNulls(s *ast.Schema, oc *graphql.OperationContext) {
	if err := (nullDefaults{schema: s}).MutateOperationContext(context.Background(), oc); err != nil {
		panic(err)
	}
}
