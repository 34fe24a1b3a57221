package graph_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/capcat/catalogue/graph"
)

// wrap puts a selection where a type is reached from the root of an operation.
type wrap func(inner string) string

// selectionPaths returns, for every object type reachable from Query (or else Mutation), how to
// select something on it: the operation and the fields (with their required arguments) that
// lead there.
func selectionPaths(s *ast.Schema) map[string]wrap {
	paths := map[string]wrap{}
	var queue []string
	for _, root := range []*ast.Definition{s.Query, s.Mutation} {
		kind := strings.ToLower(root.Name)
		paths[root.Name] = func(inner string) string { return kind + "VARS { " + inner + " }" }
		queue = append(queue, root.Name)
		for len(queue) > 0 {
			typ := queue[0]
			queue = queue[1:]
			for _, f := range s.Types[typ].Fields {
				def := s.Types[f.Type.Name()]
				if strings.HasPrefix(f.Name, "__") || def == nil {
					continue
				}
				var reached []string
				switch def.Kind {
				case ast.Object:
					reached = []string{def.Name}
				case ast.Interface, ast.Union:
					for _, p := range s.GetPossibleTypes(def) {
						reached = append(reached, p.Name)
					}
				}
				for _, r := range reached {
					if _, seen := paths[r]; seen {
						continue
					}
					outer, head, frag := paths[typ], strings.TrimSuffix(call(s, f, "x"), " { __typename }"), ""
					if def.Kind != ast.Object {
						frag = "... on " + r + " "
					}
					paths[r] = func(inner string) string { return outer(head + " { " + frag + "{ " + inner + " } }") }
					if frag == "" {
						paths[r] = func(inner string) string { return outer(head + " { " + inner + " }") }
					}
					queue = append(queue, r)
				}
			}
		}
	}
	return paths
}

// target finds the field aliased "target" in a selection set.
func target(set ast.SelectionSet) *ast.Field {
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			if x.Alias == "target" {
				return x
			}
			if f := target(x.SelectionSet); f != nil {
				return f
			}
		case *ast.InlineFragment:
			if f := target(x.SelectionSet); f != nil {
				return f
			}
		}
	}
	return nil
}

// rewritten validates an operation, coerces its variables, applies the handler's null rewrite
// and returns the arguments of the field aliased "target", before and after.
func rewritten(tb testing.TB, s *ast.Schema, op string, vars map[string]any) (before, after map[string]any) {
	tb.Helper()
	doc, errs := gqlparser.LoadQueryWithRules(s, op, nil)
	if len(errs) > 0 {
		tb.Fatalf("%s: %v", op, errs)
	}
	coerced, err := validator.VariableValues(s, doc.Operations[0], vars)
	if err != nil {
		tb.Fatalf("%s with %v: %v", op, vars, err)
	}
	f := target(doc.Operations[0].SelectionSet)
	before = f.ArgumentMap(maps.Clone(coerced))
	oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: coerced}
	graph.RewriteNulls(s, oc)
	if again := f.ArgumentMap(maps.Clone(coerced)); len(vars) == 0 && !reflect.DeepEqual(again, before) {
		tb.Errorf("%s: the rewrite changed the cached document: %v, was %v", op, again, before)
	}
	return before, target(oc.Operation.SelectionSet).ArgumentMap(oc.Variables)
}

// defaultedArguments calls fn for every nullable argument with a default of a field of an
// object type, in type order.
func defaultedArguments(s *ast.Schema, fn func(typ string, f *ast.FieldDefinition, a *ast.ArgumentDefinition)) {
	for _, typ := range slices.Sorted(maps.Keys(s.Types)) {
		if s.Types[typ].Kind != ast.Object || strings.HasPrefix(typ, "__") {
			continue
		}
		for _, f := range s.Types[typ].Fields {
			for _, a := range f.Arguments {
				if a.DefaultValue != nil && !a.Type.NonNull {
					fn(typ, f, a)
				}
			}
		}
	}
}

// targetCall returns a call of f aliased target with its required arguments and arg: value.
func targetCall(s *ast.Schema, f *ast.FieldDefinition, arg, value string) string {
	args := []string{arg + ": " + value}
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil && a.Name != arg {
			args = append(args, a.Name+": "+literal(s, a.Type, "x"))
		}
	}
	out := "target: " + f.Name + "(" + strings.Join(args, ", ") + ")"
	if k := s.Types[f.Type.Name()].Kind; k == ast.Object || k == ast.Interface || k == ast.Union {
		out += " { __typename }"
	}
	return out
}

// TestEveryDefaultedArgumentTakesNull holds the rule for every nullable argument with a
// default in the schema: an explicit null, as a literal or as a variable (also one with a
// default of its own), reaches the resolver as the argument's default.
func TestEveryDefaultedArgumentTakesNull(t *testing.T) {
	s := schema(t)
	paths := selectionPaths(s)
	seen := map[string]bool{}
	defaultedArguments(s, func(typ string, f *ast.FieldDefinition, a *ast.ArgumentDefinition) {
		name := fieldKey(typ, f.Name) + "(" + a.Name + ")"
		seen[name] = true
		path, ok := paths[typ]
		if !ok {
			t.Errorf("%s: type %s is not reachable from Query or Mutation: extend selectionPaths", name, typ)
			return
		}
		want, err := a.DefaultValue.Value(nil)
		if err != nil {
			t.Fatalf("%s: default %s: %v", name, a.DefaultValue, err)
		}
		for _, form := range []struct{ name, vars, value string }{
			{"literal", "", "null"},
			{"variable", "($v: " + a.Type.String() + ")", "$v"},
			{"variable with a default", "($v: " + a.Type.String() + " = " + a.DefaultValue.String() + ")", "$v"},
		} {
			op := strings.Replace(path(targetCall(s, f, a.Name, form.value)), "VARS", form.vars, 1)
			var vars map[string]any
			if form.vars != "" {
				vars = map[string]any{"v": nil}
			}
			before, after := rewritten(t, s, op, vars)
			if v, ok := before[a.Name]; !ok || v != nil {
				t.Errorf("%s, %s: before the rewrite %s = %v (present %v), want an explicit null", name, form.name, a.Name, v, ok)
			}
			if got, ok := after[a.Name]; !ok || !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s: %s = %#v (present %v), want the default %#v\n%s", name, form.name, a.Name, got, ok, want, op)
			}
		}
	})
	for _, name := range []string{"capabilities(first)", "Capability.history(first)", "Capability.impact(direction)"} {
		if !seen[name] {
			t.Errorf("the schema walk did not meet %s", name)
		}
	}
}

// inputValue returns a literal of input type t with its required fields, where the fields
// named by path lead to an object that has leaf: value.
func inputValue(s *ast.Schema, t *ast.Type, path []string, leaf, value string) string {
	var fields []string
	for _, f := range s.Types[t.Name()].Fields {
		switch {
		case len(path) == 0 && f.Name == leaf:
			fields = append(fields, leaf+": "+value)
		case len(path) > 0 && f.Name == path[0]:
			fields = append(fields, f.Name+": "+inputValue(s, f.Type, path[1:], leaf, value))
		case f.Type.NonNull && f.DefaultValue == nil:
			fields = append(fields, f.Name+": "+literal(s, f.Type, "x"))
		}
	}
	out := "{" + strings.Join(fields, ", ") + "}"
	for e := t; e.Elem != nil; e = e.Elem {
		out = "[" + out + "]"
	}
	return out
}

// inputPath returns the input-object fields that lead from type t to input type want, and
// whether there are any: the shortest such path.
func inputPath(s *ast.Schema, t *ast.Type, want string) ([]string, bool) {
	type step struct {
		typ  string
		path []string
	}
	seen := map[string]bool{t.Name(): true}
	for queue := []step{{t.Name(), nil}}; len(queue) > 0; queue = queue[1:] {
		at := queue[0]
		if at.typ == want {
			return at.path, true
		}
		def := s.Types[at.typ]
		if def.Kind != ast.InputObject {
			continue
		}
		for _, f := range def.Fields {
			if n := f.Type.Name(); !seen[n] {
				seen[n] = true
				queue = append(queue, step{n, append(slices.Clone(at.path), f.Name)})
			}
		}
	}
	return nil, false
}

// descend follows path from an argument's value (taking the first element of lists) to the
// object that holds the field under test.
func descend(v any, path []string) (map[string]any, bool) {
	for {
		for {
			l, ok := v.([]any)
			if !ok || len(l) == 0 {
				break
			}
			v = l[0]
		}
		m, ok := v.(map[string]any)
		if !ok || len(path) == 0 {
			return m, ok
		}
		v, path = m[path[0]], path[1:]
	}
}

// TestEveryDefaultedInputFieldTakesNull holds the rule for every nullable input-object field
// with a default in the schema: an explicit null, as a literal, as a variable in a literal, or
// inside a variable's value (at its depth, through lists), is left out of the input, so the
// generated unmarshalling applies the default. Each input type is reached through the first
// argument (in type order) whose type leads to it.
func TestEveryDefaultedInputFieldTakesNull(t *testing.T) {
	s := schema(t)
	paths := selectionPaths(s)
	seen := map[string]bool{}
	for _, in := range slices.Sorted(maps.Keys(s.Types)) {
		def := s.Types[in]
		if def.Kind != ast.InputObject {
			continue
		}
		for _, g := range def.Fields {
			if g.DefaultValue == nil || g.Type.NonNull {
				continue
			}
			name := in + "." + g.Name
			seen[name] = true
			var (
				typ  string
				fd   *ast.FieldDefinition
				arg  *ast.ArgumentDefinition
				path []string
			)
			for _, ty := range slices.Sorted(maps.Keys(paths)) {
				for _, f := range s.Types[ty].Fields {
					for _, a := range f.Arguments {
						if p, ok := inputPath(s, a.Type, in); ok && arg == nil {
							typ, fd, arg, path = ty, f, a, p
						}
					}
				}
			}
			if arg == nil {
				t.Errorf("%s: no argument of a reachable field takes %s", name, in)
				continue
			}
			literalOp := strings.Replace(paths[typ](targetCall(s, fd, arg.Name, inputValue(s, arg.Type, path, g.Name, "null"))), "VARS", "", 1)
			before, after := rewritten(t, s, literalOp, nil)
			for _, form := range []struct {
				name string
				op   string
				vars map[string]any
			}{
				{"literal", literalOp, nil},
				{"variable in a literal", strings.Replace(paths[typ](targetCall(s, fd, arg.Name, inputValue(s, arg.Type, path, g.Name, "$w"))), "VARS", "($w: "+g.Type.String()+")", 1), map[string]any{"w": nil}},
				{"in a variable's value", strings.Replace(paths[typ](targetCall(s, fd, arg.Name, "$v")), "VARS", "($v: "+arg.Type.String()+")", 1), map[string]any{"v": before[arg.Name]}},
			} {
				if form.vars != nil {
					before, after = rewritten(t, s, form.op, form.vars)
				}
				if form.name != "in a variable's value" {
					if m, ok := descend(before[arg.Name], path); !ok || m[g.Name] != nil || !slices.Contains(slices.Collect(maps.Keys(m)), g.Name) {
						t.Errorf("%s, %s: before the rewrite the input holds %v, want an explicit null for %s", name, form.name, m, g.Name)
					}
				}
				m, ok := descend(after[arg.Name], path)
				if !ok {
					t.Errorf("%s, %s: the rewrite lost the input object: %v", name, form.name, after)
					continue
				}
				if v, present := m[g.Name]; present {
					t.Errorf("%s, %s: after the rewrite %s = %v is present, want it left out (the default %s applies)\n%s", name, form.name, g.Name, v, g.DefaultValue, form.op)
				}
			}
		}
	}
	for _, name := range []string{"RuleInput.status", "ComponentInput.status", "CreateCapabilityInput.status"} {
		if !seen[name] {
			t.Errorf("the schema walk did not meet %s", name)
		}
	}
}
