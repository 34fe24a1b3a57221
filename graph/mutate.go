package graph

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// idempotency returns the idempotency of a mutation request: the client's token and a hash
// of the mutation's name (the field being resolved, whatever its alias) and arguments.
func idempotency(ctx context.Context, token *string, args ...any) (dynamo.Idempotency, error) {
	if token == nil {
		return dynamo.Idempotency{}, nil
	}
	return dynamo.NewIdempotency(*token, graphql.GetFieldContext(ctx).Field.Name, args...)
}

// patch returns a change that writes the given fields of an update input over an entity: the
// stored JSON field names are the input's, so the patch is applied through JSON. Nested objects
// merge field by field; lists replace.
func patch[T any](fields map[string]any) func(*T) error {
	return func(v *T) error {
		b, err := json.Marshal(fields)
		if err != nil {
			return catalog.Invalid("input", "%v", err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			var invalid *catalog.ValidationError
			if errors.As(err, &invalid) {
				return err
			}
			return catalog.Invalid("input", "%v", err)
		}
		return nil
	}
}
