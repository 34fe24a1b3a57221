package graph

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

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
// merge field by field; lists replace. A null field, at any depth of nested objects, changes
// nothing: typed clients send null for every field they leave unset (api.md, "Nulls and
// defaults"); a list is emptied with [] and a string with "".
func patch[T any](fields map[string]any) func(*T) error {
	fields = withoutNulls(fields)
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

// withoutNulls returns fields without its null values: gqlgen decodes an update input's fields
// into typed values, so a null is a nil pointer, slice or map (nested objects are structs whose
// unset fields are omitted from the JSON, so their nulls change nothing either).
func withoutNulls(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		if v == nil {
			continue
		}
		switch rv := reflect.ValueOf(v); rv.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			if rv.IsNil() {
				continue
			}
		}
		out[k] = v
	}
	return out
}
