// Package clients holds the tests of the client setups of docs/clients.md: the Apollo Client
// test (clients/apollo) run against the real server, and the checks that keep the typePolicies
// and the guide in step with schema.graphqls.
package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/clients/clienttest"
)

// TestApolloClient runs `node --conditions=development --test clients/apollo/` against the real
// handler on the embedded backend. Without node or clients/apollo/node_modules it skips, unless
// REQUIRE_CLIENT_TESTS=1 makes that a failure (clients/apollo/install.sh installs them).
func TestApolloClient(t *testing.T) {
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	if _, err := os.Stat(filepath.Join("apollo", "node_modules", "@apollo", "client", "package.json")); err != nil {
		missing = append(missing, "clients/apollo/node_modules")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("Apollo Client tests did not run (missing %s; clients/apollo/install.sh installs them)", strings.Join(missing, ", "))
		if os.Getenv("REQUIRE_CLIENT_TESTS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	srv := clienttest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--conditions=development", "--test", "--test-reporter=spec", "apollo/")
	cmd.Env = append(os.Environ(), "CATALOGUE_URL="+srv.URL, "CATALOGUE_ADMIN_KEY="+srv.AdminKey, "NO_COLOR=1", "FORCE_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test clients/apollo/: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// jsonBlock returns the JSON between `// BEGIN name` and `// END name` of src, without the
// `const name =` before it.
func jsonBlock(t *testing.T, src, name string, v any) {
	t.Helper()
	m := regexp.MustCompile(`(?s)// BEGIN ` + name + `\n\s*const ` + name + ` = (.*?)\n// END ` + name).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("typePolicies.mjs has no block %s", name)
	}
	if err := json.Unmarshal([]byte(m[1]), v); err != nil {
		t.Fatalf("block %s: %v", name, err)
	}
}

func loadSchema(t *testing.T) *ast.Schema {
	t.Helper()
	b, err := os.ReadFile("../schema.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	s, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphqls", Input: string(b)})
	if gerr != nil {
		t.Fatal(gerr)
	}
	return s
}

// TestTypePoliciesCoverSchema walks schema.graphqls: every object type without an `id` that is
// a field's type needs `merge: true` in typePolicies.mjs (or is a connection, which its field
// policy owns), every field of a connection type needs cursorPagination, and every list of
// id-less objects (or of scalars) on such an object or an entity is replaced (`merge: false`).
func TestTypePoliciesCoverSchema(t *testing.T) {
	schema := loadSchema(t)
	src, err := os.ReadFile("apollo/typePolicies.mjs")
	if err != nil {
		t.Fatal(err)
	}
	var merge []string
	var lists, paginated map[string][]string
	jsonBlock(t, string(src), "mergeTypes", &merge)
	jsonBlock(t, string(src), "replacedLists", &lists)
	jsonBlock(t, string(src), "paginatedFields", &paginated)

	idless := func(d *ast.Definition) bool {
		return d != nil && d.Kind == ast.Object && d.Fields.ForName("id") == nil && d.Name != "Query" && d.Name != "Mutation"
	}
	connection := func(name string) bool {
		return strings.HasSuffix(name, "Connection") || strings.HasSuffix(name, "Edge")
	}
	for _, d := range schema.Types {
		if d.Kind != ast.Object || strings.HasPrefix(d.Name, "__") || d.Name == "Mutation" {
			continue
		}
		for _, f := range d.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			child := schema.Types[f.Type.Name()]
			switch {
			case strings.HasSuffix(f.Type.Name(), "Connection"):
				if !slices.Contains(paginated[d.Name], f.Name) {
					t.Errorf("%s.%s is a connection without cursorPagination in paginatedFields", d.Name, f.Name)
				}
			case idless(child) && !connection(child.Name):
				if !slices.Contains(merge, child.Name) {
					t.Errorf("%s (the type of %s.%s) has no id and is not in mergeTypes: views that select different fields of it warn", child.Name, d.Name, f.Name)
				}
				if f.Type.Elem != nil && !idless(d) && !slices.Contains(lists[d.Name], f.Name) && !connection(d.Name) {
					t.Errorf("%s.%s is a list of id-less %s without merge: false in replacedLists", d.Name, f.Name, child.Name)
				}
			}
		}
	}
	for _, name := range merge {
		if d := schema.Types[name]; !idless(d) {
			t.Errorf("mergeTypes names %s, which is not an object type without an id", name)
		}
	}
	for parent, fields := range paginated {
		for _, f := range fields {
			if fd := schema.Types[parent].Fields.ForName(f); fd == nil || !strings.HasSuffix(fd.Type.Name(), "Connection") {
				t.Errorf("paginatedFields names %s.%s, which is not a connection", parent, f)
			}
		}
	}
}

// TestClientsDocShowsTheFiles holds docs/clients.md to the shipped files: the genqlient.yaml it
// shows is clients/go/genqlient.yaml, and it names every type of typePolicies.mjs's mergeTypes
// that it lists as an example.
func TestClientsDocShowsTheFiles(t *testing.T) {
	doc, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile("go/genqlient.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(yaml)+"```") {
		t.Error("docs/clients.md does not show clients/go/genqlient.yaml as it is")
	}
	src, err := os.ReadFile("apollo/typePolicies.mjs")
	if err != nil {
		t.Fatal(err)
	}
	var merge []string
	jsonBlock(t, string(src), "mergeTypes", &merge)
	for _, name := range []string{"Aggregates", "ComponentHealth", "Configuration", "Technology", "Actor", "PageInfo"} {
		if !slices.Contains(merge, name) {
			t.Errorf("docs/clients.md names %s as merged, typePolicies.mjs does not merge it", name)
		}
	}
}
