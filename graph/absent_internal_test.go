package graph

import (
	"context"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/catalog"
)

// TestAbsentAsNull holds the field middleware to its table: an empty string or a zero time is
// null in a nullable String, ID or DateTime field and kept anywhere else.
func TestAbsentAsNull(t *testing.T) {
	empty, zero, now := "", catalog.Timestamp{}, catalog.TimePtr(time.Unix(1e9, 0))
	for _, tt := range []struct {
		typ  *ast.Type
		res  any
		null bool
	}{
		{ast.NamedType("String", nil), "", true},
		{ast.NamedType("String", nil), &empty, true},
		{ast.NamedType("ID", nil), "", true},
		{ast.NamedType("DateTime", nil), zero, true},
		{ast.NamedType("DateTime", nil), &zero, true},
		{ast.NonNullNamedType("String", nil), "", false},
		{ast.NonNullNamedType("DateTime", nil), zero, false},
		{ast.NamedType("String", nil), "x", false},
		{ast.NamedType("DateTime", nil), now, false},
		{ast.NamedType("JSON", nil), "", false},
		{ast.NamedType("Int", nil), 0, false},
	} {
		fc := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Definition: &ast.FieldDefinition{Type: tt.typ}}}}
		got, err := absentAsNull(graphql.WithFieldContext(context.Background(), fc), func(context.Context) (any, error) { return tt.res, nil })
		if err != nil || (got == nil) != tt.null {
			t.Errorf("absentAsNull(%s, %#v) = %#v, %v; want null %v", tt.typ, tt.res, got, err, tt.null)
		}
	}
}

// TestAbsentNullsPerField: installed once per operation around the operation's field middleware,
// absentAsNull runs inside no per-field chain: it allocates nothing on a field, still nulls an
// absent value, and still runs whatever field middleware the operation had (here one that
// counts the fields).
func TestAbsentNullsPerField(t *testing.T) {
	calls := 0
	oc := &graphql.OperationContext{ResolverMiddleware: func(ctx context.Context, next graphql.Resolver) (any, error) {
		calls++
		return next(ctx)
	}}
	if err := (absentNulls{}).MutateOperationContext(context.Background(), oc); err != nil {
		t.Fatal(err)
	}
	fc := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Definition: &ast.FieldDefinition{Type: ast.NamedType("String", nil)}}}}
	ctx := graphql.WithFieldContext(context.Background(), fc)
	if got, err := oc.ResolverMiddleware(ctx, func(context.Context) (any, error) { return "", nil }); got != nil || err != nil {
		t.Errorf("empty nullable String = %#v, %v; want null", got, err)
	}
	if got, _ := oc.ResolverMiddleware(ctx, func(context.Context) (any, error) { return "x", nil }); got != "x" {
		t.Errorf("\"x\" = %#v", got)
	}
	if calls != 2 {
		t.Errorf("the operation's own field middleware ran %d times for 2 fields", calls)
	}
	next := func(context.Context) (any, error) { return 42, nil }
	if n := testing.AllocsPerRun(100, func() { _, _ = oc.ResolverMiddleware(ctx, next) }); n != 0 {
		t.Errorf("%v allocations per field, want 0", n)
	}
}

// BenchmarkAbsentAsNull measures what the middleware adds to one field, against calling the
// resolver directly: for a result that is not a string or time (one type switch), a non-empty
// string, and an empty string of a nullable field (the field context looked up).
func BenchmarkAbsentAsNull(b *testing.B) {
	fc := &graphql.FieldContext{Field: graphql.CollectedField{Field: &ast.Field{Definition: &ast.FieldDefinition{Type: ast.NamedType("String", nil)}}}}
	ctx := graphql.WithFieldContext(context.Background(), fc)
	for _, bb := range []struct {
		name string
		res  any
	}{{"int", 42}, {"string", "x"}, {"empty string", ""}} {
		next := func(context.Context) (any, error) { return bb.res, nil }
		b.Run(bb.name+"/direct", func(b *testing.B) {
			for b.Loop() {
				_, _ = next(ctx)
			}
		})
		b.Run(bb.name+"/middleware", func(b *testing.B) {
			for b.Loop() {
				_, _ = absentAsNull(ctx, next)
			}
		})
	}
}
