package deploy

import (
	"fmt"
	"go/ast"
	"go/types"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/capcat/catalogue"

// sdkTypes are the AWS SDK clients whose methods are requests: a call of one of their methods
// (or of dynamo.API's, which the store calls in place of *dynamodb.Client) is an operation.
var sdkTypes = map[string]string{
	module + "/dynamo.API":                                  "dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/dynamodb.Client":  "dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/s3.Client":        "s3",
	"github.com/aws/aws-sdk-go-v2/service/s3.PresignClient": "s3",
}

// sdkPackages are the SDK's service packages: their clients' methods, paginators and waiters
// issue requests.
var sdkPackages = map[string]string{
	"github.com/aws/aws-sdk-go-v2/service/dynamodb": "dynamodb",
	"github.com/aws/aws-sdk-go-v2/service/s3":       "s3",
}

// operatorCuts are the calls through which only an operator's run reaches the code: the
// subcommands (check, export, import, archive: their closures live in main.commands),
// -create-table (the table and the buckets) and -seed (the sample catalogue). An operation
// that the analysis reaches from the server's entry points only through one of these edges
// belongs to the operator policy. Each edge must exist: a rename fails the test.
var operatorCuts = []string{
	module + ".commandNamed -> " + module + ".commands",
	module + ".openBackends -> (*" + module + "/dynamo.Store).CreateTable",
	module + ".openBackends -> (*" + module + "/blob.Store).EnsureBuckets",
	module + ".openBackends -> (*" + module + "/dynamo.Store).BulkLoad",
	module + ".openBackends -> " + module + "/sample.LoadArtifacts",
}

// embeddedCuts are the calls that only the in-process backends take, which need no IAM: the
// embedded S3 creating its buckets, and everything package internal/datafile calls (the -data
// file goes with the embedded backend only).
var embeddedCuts = []string{
	module + "/blob.OpenEmbeddedWrapped -> (*" + module + "/blob.Store).EnsureBuckets",
}

// embeddedOnly are the packages whose calls are all embedded cuts.
var embeddedOnly = []string{module + "/internal/datafile"}

// callSite is one request the code issues: the SDK operation and the function it is in.
type callSite struct {
	service, op string // "dynamodb", "Query"
	fn          string // the enclosing function (closures belong to it)
	pos         string
}

// program is what the analysis derives from the packages the server binary links.
type program struct {
	sites []callSite
	// callers maps a function to the functions that call or reference it.
	callers map[string]map[string]bool
	// roots are where the binary's code is entered: main.main, the packages' initializers, and
	// the module's methods that implement an interface of a package the module imports (or
	// error): net/http, gqlgen, prometheus... call them through it.
	roots map[string]bool
	// transactFields are the fields of types.TransactWriteItem the code fills.
	transactFields map[string]bool
}

// loadProgram type-checks the module's packages that the server binary (package main at the
// module root) links, from source, their dependencies from export data. overlay, when set,
// adds or replaces files (absolute path to contents): the analysis's own test uses it.
func loadProgram(t *testing.T, overlay map[string][]byte) *program {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "..").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	var paths []string
	for _, p := range strings.Fields(string(out)) {
		if p == module || strings.HasPrefix(p, module+"/") {
			paths = append(paths, p)
		}
	}
	cfg := &packages.Config{Dir: "..", Overlay: overlay, Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		t.Fatalf("load packages: %v", err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the packages do not type-check")
	}
	p := &program{callers: map[string]map[string]bool{}, roots: map[string]bool{module + ".main": true}, transactFields: map[string]bool{}}
	// Named types of the module, for calls of interface methods (class hierarchy analysis).
	var named []*types.Named
	for _, pkg := range pkgs {
		for _, name := range pkg.Types.Scope().Names() {
			if tn, ok := pkg.Types.Scope().Lookup(name).(*types.TypeName); ok && !tn.IsAlias() {
				if n, ok := tn.Type().(*types.Named); ok && !types.IsInterface(n) {
					named = append(named, n)
				}
			}
		}
	}
	external := []*types.Interface{types.Universe.Lookup("error").Type().Underlying().(*types.Interface)}
	for _, pkg := range pkgs {
		for _, imp := range pkg.Types.Imports() {
			if imp.Path() == module || strings.HasPrefix(imp.Path(), module+"/") {
				continue
			}
			for _, name := range imp.Scope().Names() {
				if tn, ok := imp.Scope().Lookup(name).(*types.TypeName); ok && tn.Exported() {
					if it, ok := tn.Type().Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
						external = append(external, it)
					}
				}
			}
		}
	}
	for _, nt := range named {
		for _, it := range external {
			for _, t := range []types.Type{nt, types.NewPointer(nt)} {
				if types.Implements(t, it) {
					for m := range it.Methods() {
						obj, _, _ := types.LookupFieldOrMethod(t, true, nt.Obj().Pkg(), m.Name())
						if f, ok := obj.(*types.Func); ok && f.Pkg() != nil && strings.HasPrefix(f.Pkg().Path(), module) {
							p.roots[funcName(f)] = true
						}
					}
					break
				}
			}
		}
	}
	// The SDK clients, for calls through the module's own interfaces over them.
	type client struct {
		typ     types.Type
		service string
	}
	var clients []client
	for _, pkg := range pkgs {
		for _, imp := range pkg.Types.Imports() {
			if svc, ok := sdkPackages[imp.Path()]; ok {
				for _, name := range []string{"Client", "PresignClient"} {
					if tn, ok := imp.Scope().Lookup(name).(*types.TypeName); ok {
						t := types.NewPointer(tn.Type())
						if !slices.ContainsFunc(clients, func(c client) bool { return types.Identical(c.typ, t) }) {
							clients = append(clients, client{t, svc})
						}
					}
				}
			}
		}
	}
	edge := func(caller, callee string) {
		if p.callers[callee] == nil {
			p.callers[callee] = map[string]bool{}
		}
		p.callers[callee][caller] = true
	}
	for _, pkg := range pkgs {
		for _, file := range pkg.Syntax {
			for _, decl := range file.Decls {
				// A package-level initializer runs in every process: "init" of its package.
				fn := pkg.PkgPath + ".init"
				p.roots[fn] = true
				if fd, ok := decl.(*ast.FuncDecl); ok {
					fn = funcName(pkg.TypesInfo.Defs[fd.Name].(*types.Func))
				}
				ast.Inspect(decl, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CompositeLit:
						if tv, ok := pkg.TypesInfo.Types[n]; ok && typeName(tv.Type) == "github.com/aws/aws-sdk-go-v2/service/dynamodb/types.TransactWriteItem" {
							for _, e := range n.Elts {
								if kv, ok := e.(*ast.KeyValueExpr); ok {
									p.transactFields[kv.Key.(*ast.Ident).Name] = true
								}
							}
						}
					case *ast.SelectorExpr:
						if sel := pkg.TypesInfo.Selections[n]; sel != nil && sel.Kind() == types.FieldVal &&
							typeName(sel.Recv()) == "github.com/aws/aws-sdk-go-v2/service/dynamodb/types.TransactWriteItem" {
							p.transactFields[n.Sel.Name] = true
						}
					case *ast.Ident:
						f, ok := pkg.TypesInfo.Uses[n].(*types.Func)
						if !ok {
							return true
						}
						sig := f.Type().(*types.Signature)
						if sig.Recv() == nil {
							if svc, ok := sdkPackages[f.Pkg().Path()]; ok && (strings.HasSuffix(f.Name(), "Paginator") || strings.HasSuffix(f.Name(), "Waiter")) {
								// A paginator or waiter issues requests inside the SDK.
								op, _ := strings.CutSuffix(strings.TrimPrefix(f.Name(), "New"), "Paginator")
								p.sites = append(p.sites, callSite{service: svc, op: op, fn: fn, pos: pkg.Fset.Position(n.Pos()).String()})
								return true
							}
							edge(fn, funcName(f))
							return true
						}
						recv := typeName(sig.Recv().Type())
						if svc, ok := sdkTypes[recv]; ok {
							p.sites = append(p.sites, callSite{service: svc, op: f.Name(), fn: fn, pos: pkg.Fset.Position(n.Pos()).String()})
							return true
						}
						iface, ok := sig.Recv().Type().Underlying().(*types.Interface)
						if !ok {
							edge(fn, funcName(f))
							return true
						}
						// A call through an interface that an SDK client implements may be a
						// request.
						for _, c := range clients {
							if types.Implements(c.typ, iface) {
								p.sites = append(p.sites, callSite{service: c.service, op: f.Name(), fn: fn, pos: pkg.Fset.Position(n.Pos()).String()})
							}
						}
						// A call through an interface may reach the method of every module type
						// that implements it.
						for _, nt := range named {
							for _, t := range []types.Type{nt, types.NewPointer(nt)} {
								if types.Implements(t, iface) {
									obj, _, _ := types.LookupFieldOrMethod(t, true, nt.Obj().Pkg(), f.Name())
									if m, ok := obj.(*types.Func); ok {
										edge(fn, funcName(m))
									}
									break
								}
							}
						}
					}
					return true
				})
			}
		}
	}
	return p
}

// typeName is "pkgpath.Name" of a named type or a pointer to one, "" otherwise.
func typeName(t types.Type) string {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := types.Unalias(t).(*types.Named); ok && n.Obj().Pkg() != nil {
		return n.Obj().Pkg().Path() + "." + n.Obj().Name()
	}
	return ""
}

// funcName is the full name of a function or method, e.g. "(pkg.*Store).Query".
func funcName(f *types.Func) string { return f.Origin().FullName() }

// serverReaches reports whether fn is reached by a chain of callers that ends in a function
// nothing in the binary calls (main, init, a method that net/http or gqlgen call through
// their interfaces) without crossing one of cuts.
func (p *program) reaches(fn string, cuts map[[2]string]bool) bool {
	seen := map[string]bool{fn: true}
	queue := []string{fn}
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		for caller := range p.callers[f] {
			if cuts[[2]string{caller, f}] || embeddedCaller(caller) {
				continue
			}
			if !seen[caller] {
				seen[caller] = true
				queue = append(queue, caller)
			}
		}
		if p.roots[f] {
			return true
		}
	}
	return false
}

// embeddedCaller reports whether fn is in one of the embeddedOnly packages.
func embeddedCaller(fn string) bool {
	return slices.ContainsFunc(embeddedOnly, func(pkg string) bool { return strings.Contains(fn, pkg+".") })
}

// actions maps one SDK operation to the IAM actions that authorise it (AWS service
// authorization reference: DynamoDB and S3). TransactWriteItems has no action of its own:
// each item is authorised by the action of its kind.
func (p *program) actions(svc, op string) []string {
	switch svc + ":" + op {
	case "dynamodb:TransactWriteItems":
		kind := map[string]string{"Put": "dynamodb:PutItem", "Update": "dynamodb:UpdateItem",
			"Delete": "dynamodb:DeleteItem", "ConditionCheck": "dynamodb:ConditionCheckItem"}
		var out []string
		for f := range p.transactFields {
			out = append(out, kind[f])
		}
		return out
	case "s3:PresignGetObject", "s3:HeadObject":
		return []string{"s3:GetObject"}
	case "s3:PresignPutObject":
		return []string{"s3:PutObject"}
	case "s3:ListObjectsV2", "s3:HeadBucket":
		return []string{"s3:ListBucket"}
	case "s3:Options", "dynamodb:Options":
		return nil // the client's configuration, not a request
	}
	return []string{svc + ":" + op}
}

// actionSets derives the server's and the operator's IAM actions from the code.
func actionSets(t *testing.T, overlay map[string][]byte) (server, operator map[string][]string) {
	t.Helper()
	p := loadProgram(t, overlay)
	embedded, all := cutSet(t, p, embeddedCuts), cutSet(t, p, append(embeddedCuts, operatorCuts...))
	for f := range p.transactFields {
		if !slices.Contains([]string{"Put", "Update", "Delete", "ConditionCheck"}, f) {
			t.Fatalf("types.TransactWriteItem field %s: no IAM action mapped", f)
		}
	}
	server, operator = map[string][]string{}, map[string][]string{}
	for _, s := range p.sites {
		where := fmt.Sprintf("%s %s (%s)", s.op, s.fn, s.pos)
		var into map[string][]string
		switch {
		case p.reaches(s.fn, all):
			into = server
		case p.reaches(s.fn, embedded):
			into = operator
		default:
			t.Logf("never reached on AWS: %s", where)
			continue
		}
		for _, a := range p.actions(s.service, s.op) {
			into[a] = append(into[a], where)
		}
	}
	for a := range server {
		delete(operator, a)
	}
	return server, operator
}

// cutSet returns the edges of cuts, failing t when one is not a call in the code.
func cutSet(t *testing.T, p *program, cuts []string) map[[2]string]bool {
	t.Helper()
	set := map[[2]string]bool{}
	for _, c := range cuts {
		from, to, _ := strings.Cut(c, " -> ")
		if !p.callers[to][from] {
			t.Fatalf("cut %q: no such call in the code; update the cuts", c)
		}
		set[[2]string{from, to}] = true
	}
	return set
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// TestAnalysisFindsIndirectRequests adds a file to package main (an overlay: nothing is written;
// main, which nothing imports, is the one package it makes go list compile again) whose
// initializer issues S3 requests a plain match of client method calls would miss, through an
// interface of its own over the client and through a paginator; the analysis must find both,
// and keep the operator's CreateTable out of the server's actions.
func TestAnalysisFindsIndirectRequests(t *testing.T) {
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src := `package main

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

type objectDeleter interface {
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

func init() {
	var d objectDeleter
	if d != nil {
		_, _ = d.DeleteObject(context.Background(), nil)
		_ = s3.NewListObjectVersionsPaginator
	}
}
`
	server, operator := actionSets(t, map[string][]byte{filepath.Join(dir, "zz_overlay_test_only.go"): []byte(src)})
	for _, a := range []string{"s3:DeleteObject", "s3:ListObjectVersions"} {
		if len(server[a]) == 0 || !strings.Contains(server[a][0], "zz_overlay_test_only.go") {
			t.Errorf("server actions lack %s from the overlay: %v", a, server[a])
		}
	}
	if _, ok := operator["dynamodb:CreateTable"]; !ok {
		t.Errorf("operator actions lack dynamodb:CreateTable: %v", sortedKeys(operator))
	}
	if _, ok := server["dynamodb:CreateTable"]; ok {
		t.Error("the server's actions hold dynamodb:CreateTable, which only -create-table reaches")
	}
}
