package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

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
// defaults"); a list is emptied with [], a string with "" and a number set to 0, at any depth.
// A JSON value (featureFlags) replaces the stored one.
// raw is the input as the request gave it (rawInput): it says which zero values of nested
// objects were given, which their Go types (omitempty) leave out of the JSON.
func patch[T any](fields, raw map[string]any, clear []string) func(*T) error {
	fields = withoutNulls(fields)
	return func(v *T) error {
		b, err := json.Marshal(fields)
		if err != nil {
			return catalog.Invalid("input", "%v", err)
		}
		if b, err = withGivenZeros(b, raw); err != nil {
			return catalog.Invalid("input", "%v", err)
		}
		var given map[string]any
		if err := json.Unmarshal(b, &given); err != nil {
			return catalog.Invalid("input", "%v", err)
		}
		clearMaps(reflect.ValueOf(v), given)
		if err := json.Unmarshal(b, v); err != nil {
			var invalid *catalog.ValidationError
			if errors.As(err, &invalid) {
				return err
			}
			return catalog.Invalid("input", "%v", err)
		}
		for _, name := range clear {
			clearField(reflect.ValueOf(v), name)
		}
		return nil
	}
}

// cleared splits an update input into its fields and the names its clear lists, checked
// against the input type of the field being resolved and the entity it returns: each must be
// another field of the input, optional in the entity (not `Type!`; a list, `[T]!`, clears to
// empty), and not also given a value.
func (r *Resolver) cleared(ctx context.Context, input map[string]any) (map[string]any, []string, error) {
	fields := make(map[string]any, len(input))
	for k, v := range input {
		if k != "clear" {
			fields[k] = v
		}
	}
	names, _ := input["clear"].([]string)
	if len(names) == 0 {
		return fields, nil, nil
	}
	field := graphql.GetFieldContext(ctx).Field.Definition
	def := r.schema.Types[field.Arguments.ForName("input").Type.Name()]
	entity := r.schema.Types[field.Type.Name()] // the updated entity, as the mutation returns it
	for _, n := range names {
		if n == "clear" || def.Fields.ForName(n) == nil {
			return nil, nil, catalog.Invalid("clear", "%q is not a field of %s", n, def.Name)
		}
		if f := entity.Fields.ForName(n); f != nil && f.Type.NonNull && f.Type.Elem == nil { // a list clears to []
			return nil, nil, catalog.Invalid("clear", "%q cannot be cleared: %s.%s is required", n, entity.Name, n)
		}
		if v, ok := fields[n]; ok && !isNull(v) {
			return nil, nil, catalog.Invalid("clear", "%q is given a value and cleared", n)
		}
	}
	return fields, names, nil
}

// clearField sets to its zero value (absent when stored) the field of the struct v (or a
// pointer to one, or a struct it embeds) whose JSON name is name.
func clearField(v reflect.Value, name string) {
	eachJSONField(v, func(n string, fv reflect.Value) {
		if n == name {
			fv.SetZero()
		}
	})
}

// eachJSONField calls fn with the JSON name and value of every settable field of the struct v
// (or the struct a non-nil pointer v points to), the fields of embedded structs included.
func eachJSONField(v reflect.Value, fn func(name string, fv reflect.Value)) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if f.Anonymous {
			eachJSONField(fv, fn)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		if fv.CanSet() {
			fn(name, fv)
		}
	}
}

// isNull reports whether v is a null: nil, or a nil pointer, slice, map or interface (gqlgen
// decodes an update input's fields into typed values).
func isNull(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// withoutNulls returns fields without its null values: gqlgen decodes an update input's fields
// into typed values, so a null is a nil pointer, slice or map (nested objects are structs whose
// unset fields are omitted from the JSON, so their nulls change nothing either).
func withoutNulls(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		if !isNull(v) {
			out[k] = v
		}
	}
	return out
}

// rawInput returns the argument input of the field being resolved as the request gave it:
// values as sent (nested objects as maps), without the Go types' encoding.
func rawInput(ctx context.Context) map[string]any {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return nil
	}
	raw, _ := fc.Field.ArgumentMap(graphql.GetOperationContext(ctx).Variables)["input"].(map[string]any)
	return raw
}

// withGivenZeros returns the JSON object b of an update input's fields with the zero values
// that raw gives inside nested objects put back: the nested objects are bound to the domain
// types, whose omitempty drops 0, "", false, [] and {} when they are encoded, so that
// {deployment: {replicas: 0}} would change nothing.
func withGivenZeros(b []byte, raw map[string]any) ([]byte, error) {
	if len(raw) == 0 {
		return b, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var typed map[string]any
	if err := d.Decode(&typed); err != nil {
		return nil, err
	}
	changed := false
	for k, tv := range typed {
		if tm, ok := tv.(map[string]any); ok {
			if rm, ok := raw[k].(map[string]any); ok {
				changed = addGivenZeros(tm, rm) || changed
			}
		}
	}
	if !changed {
		return b, nil
	}
	return json.Marshal(typed)
}

// addGivenZeros adds to the nested object typed the fields raw gives with a value that typed
// left out (a zero value), at any depth of nested objects, and reports whether it added any.
// A null in raw stays out: it changes nothing.
func addGivenZeros(typed, raw map[string]any) bool {
	changed := false
	for k, rv := range raw {
		if rv == nil {
			continue
		}
		tv, ok := typed[k]
		if !ok {
			typed[k] = rv
			changed = true
			continue
		}
		if tm, ok := tv.(map[string]any); ok {
			if rm, ok := rv.(map[string]any); ok {
				changed = addGivenZeros(tm, rm) || changed
			}
		}
	}
	return changed
}

// clearMaps sets to nil the map fields of v (a struct or a pointer to one, and the structs
// nested in it) that the patch given sets: a JSON value replaces the stored one, where
// json.Unmarshal would merge its keys into the stored map.
func clearMaps(v reflect.Value, given map[string]any) {
	eachJSONField(v, func(name string, fv reflect.Value) {
		pv, ok := given[name]
		if !ok || pv == nil {
			return
		}
		switch fv.Kind() {
		case reflect.Map:
			fv.SetZero()
		case reflect.Struct, reflect.Pointer:
			if pm, ok := pv.(map[string]any); ok {
				clearMaps(fv, pm)
			}
		}
	})
}
