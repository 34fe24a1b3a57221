package graph_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/graph"
)

// schema returns the schema the server executes.
func schema(tb testing.TB) *ast.Schema {
	tb.Helper()
	s := graph.NewExecutableSchema(graph.Config{}).Schema()
	if s == nil {
		tb.Fatal("NewExecutableSchema(...).Schema() = nil")
	}
	return s
}

// fieldKey names a field the way the documentation does: a root field by its name
// (capabilityHistory), any other as Type.field.
func fieldKey(typ, field string) string {
	if typ == "Query" || typ == "Mutation" {
		return field
	}
	return typ + "." + field
}

// directiveArgs calls fn with the value of argument arg of every use of directive name on a
// field of s, in type order; a use without the argument is an error.
func directiveArgs(tb testing.TB, s *ast.Schema, name, arg string, fn func(typ, field string, v *ast.Value)) {
	tb.Helper()
	for _, typ := range slices.Sorted(maps.Keys(s.Types)) {
		for _, f := range s.Types[typ].Fields {
			if d := f.Directives.ForName(name); d != nil {
				if a := d.Arguments.ForName(arg); a != nil && a.Value != nil {
					fn(typ, f.Name, a.Value)
				} else {
					tb.Errorf("%s.%s: @%s without %s", typ, f.Name, name, arg)
				}
			}
		}
	}
}

// declaredRoles returns, for every field that carries @hasRole, the role it names (lower case,
// as the documentation and the error messages spell it).
func declaredRoles(tb testing.TB, s *ast.Schema) map[string]string {
	tb.Helper()
	roles := map[string]string{}
	directiveArgs(tb, s, "hasRole", "role", func(typ, field string, v *ast.Value) {
		roles[fieldKey(typ, field)] = strings.ToLower(v.Raw)
	})
	return roles
}

// documentedRoles returns the roles table of the documentation, field by field: the one
// Markdown table, in README.md or a file of docs/, whose first column is headed "role" and
// whose rows start with a role; every `name` in a row's other cells needs that row's role.
func documentedRoles(tb testing.TB) map[string]string {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	files = append([]string{filepath.Join("..", "README.md")}, files...)
	cell := func(c string) string { return strings.ToLower(strings.Trim(strings.TrimSpace(c), "*`")) }
	names := regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")
	var found []string
	var roles map[string]string
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			tb.Fatalf("read %s: %v", file, err)
		}
		lines := strings.Split(string(b), "\n")
		for i := 0; i+1 < len(lines); i++ {
			header := strings.Split(strings.Trim(strings.TrimSpace(lines[i]), "|"), "|")
			if !strings.HasPrefix(lines[i], "|") || len(header) < 2 || cell(header[0]) != "role" || !strings.HasPrefix(lines[i+1], "|-") && !strings.HasPrefix(lines[i+1], "| -") {
				continue
			}
			found = append(found, fmt.Sprintf("%s:%d", file, i+1))
			roles = map[string]string{}
			for _, row := range lines[i+2:] {
				if !strings.HasPrefix(row, "|") {
					break
				}
				cells := strings.Split(strings.Trim(strings.TrimSpace(row), "|"), "|")
				role := cell(cells[0])
				if _, err := graph.ParseRole(role); err != nil {
					tb.Errorf("%s: roles table row %q: %v", file, row, err)
				}
				for _, m := range names.FindAllStringSubmatch(strings.Join(cells[1:], "|"), -1) {
					roles[m[1]] = role
				}
			}
		}
	}
	if len(found) != 1 {
		tb.Fatalf("want one roles table (a Markdown table headed | role | ... |) in README.md or docs/*.md, found %d: %v", len(found), found)
	}
	return roles
}

// TestRolesDeclaredInSchema holds the schema's @hasRole declarations to the documented roles
// table: every mutation declares a role, and the fields that declare one and their roles are
// exactly the ones the table names.
func TestRolesDeclaredInSchema(t *testing.T) {
	s := schema(t)
	declared := declaredRoles(t, s)
	for _, f := range s.Mutation.Fields {
		if _, ok := declared[f.Name]; !ok {
			t.Errorf("Mutation.%s has no @hasRole: every mutation declares the role it needs", f.Name)
		}
	}
	documented := documentedRoles(t)
	for name, role := range documented {
		if declared[name] != role {
			t.Errorf("the roles table says %s needs %s; the schema declares %q", name, role, declared[name])
		}
	}
	for name, role := range declared {
		if _, ok := documented[name]; !ok {
			t.Errorf("%s declares @hasRole(role: %s) but the roles table does not name it", name, strings.ToUpper(role))
		}
	}
}

// TestForbiddenRunsNothing calls every field that declares a role as each caller below it: the
// answer is FORBIDDEN naming the field (not its alias), and no DynamoDB request was made, so
// the resolver never ran.
func TestForbiddenRunsNothing(t *testing.T) {
	keys := []string{"devops " + graph.HashKey("devops-key") + " pipeline", "viewer " + graph.HashKey("viewer-key") + " ui"}
	h := newHarnessWith(t, func(o *graph.Options) {
		o.Auth = &graph.Auth{Keys: keyFile(t, keys...), Anonymous: graph.RoleViewer}
	})
	s := schema(t)
	callers := []struct {
		key  string
		role graph.Role
	}{{"", graph.RoleViewer}, {"viewer-key", graph.RoleViewer}, {"devops-key", graph.RoleDevops}}
	declared := declaredRoles(t, s)
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		need, err := graph.ParseRole(declared[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		root, typ := s.Query, "query"
		if s.Mutation.Fields.ForName(name) != nil {
			root, typ = s.Mutation, "mutation"
		}
		f := root.Fields.ForName(name)
		if f == nil {
			t.Errorf("%s: @hasRole on a field below the root: extend this test", name)
			continue
		}
		op := typ + " { probe: " + call(s, f, "role-probe") + " }"
		for _, c := range callers {
			if c.role >= need {
				continue
			}
			t.Run(name+"/"+c.role.String()+"/"+c.key, func(t *testing.T) {
				resp := h.doAs(t, c.key, op, nil)
				want := fmt.Sprintf("%s needs the %s role; you are %s", name, need, c.role)
				if len(resp.Errors) != 1 || resp.code(0) != "FORBIDDEN" || resp.Errors[0].Message != want {
					t.Fatalf("%s as %s: %s, want one FORBIDDEN error %q", op, c.role, resp.Body, want)
				}
				if n := resp.Extensions.DynamoDB.Requests; n != 0 {
					t.Errorf("%s as %s: %d DynamoDB requests, want 0 (the resolver ran)", op, c.role, n)
				}
			})
		}
	}
}

// call returns a call of field f with a valid value for every required argument (id for IDs
// and strings) and, for an object result, a selection of __typename.
func call(s *ast.Schema, f *ast.FieldDefinition, id string) string {
	var args []string
	for _, a := range f.Arguments {
		if a.Type.NonNull && a.DefaultValue == nil {
			args = append(args, a.Name+": "+literal(s, a.Type, id))
		}
	}
	out := f.Name
	if len(args) > 0 {
		out += "(" + strings.Join(args, ", ") + ")"
	}
	if k := s.Types[f.Type.Name()].Kind; k == ast.Object || k == ast.Interface || k == ast.Union {
		out += " { __typename }"
	}
	return out
}

// literal returns a GraphQL literal of type t: the required fields of input objects, the first
// value of enums, one element of lists, id for IDs and strings.
func literal(s *ast.Schema, t *ast.Type, id string) string {
	if t.Elem != nil {
		return "[" + literal(s, t.Elem, id) + "]"
	}
	def := s.Types[t.NamedType]
	switch def.Kind {
	case ast.Enum:
		return def.EnumValues[0].Name
	case ast.InputObject:
		var fields []string
		for _, f := range def.Fields {
			if f.Type.NonNull && f.DefaultValue == nil {
				fields = append(fields, f.Name+": "+literal(s, f.Type, id))
			}
		}
		return "{" + strings.Join(fields, ", ") + "}"
	}
	switch t.NamedType {
	case "Int":
		return "1"
	case "Float":
		return "1.5"
	case "Boolean":
		return "true"
	case "DateTime":
		// An hour before the tests' clock: inside every bounded window (metricRollups'
		// FIVE_MINUTES covers at most 7 days up to now), whenever the tests run.
		return strconv.Quote(testNow.Add(-time.Hour).Format(time.RFC3339))
	case "JSON":
		return "{}"
	}
	return strconv.Quote(id)
}
