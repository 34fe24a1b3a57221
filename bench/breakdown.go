package main

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
	gojson "github.com/goccy/go-json"
	"github.com/google/pprof/profile"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/memdyn"
)

// layer is a part of the process that a CPU sample is charged to.
type layer int

const (
	layerGraphQL layer = iota // gqlgen's executor, the code it generated, gqlparser
	layerDecode               // items off the wire: dynamo's wire scanner and goccy/go-json
	layerSDK                  // aws-sdk-go-v2 and smithy-go: middleware, signing, endpoint rules
	layerHTTP                 // the HTTP client to DynamoDB: net/http, net, the system calls
	layerOurs                 // the rest of the catalogue: loaders, store, resolvers, handler, auth, metrics, log
	layerGC                   // the collector's background work (assists are charged to the allocating layer)
	layerRuntime              // the scheduler and other runtime work outside any of the above
	layerDriver               // the benchmark's own code (and its backend, when in this process)
	nLayers
)

var layerNames = [nLayers]string{
	layerGraphQL: "GraphQL execution (gqlgen and its generated code, gqlparser)",
	layerDecode:  "item decoding (dynamo's wire scanner, goccy/go-json)",
	layerSDK:     "AWS SDK (middleware, signing, endpoint rules)",
	layerHTTP:    "HTTP client (net/http, sockets)",
	layerOurs:    "catalogue code (loaders, store, resolvers, handler, auth, metrics, log)",
	layerGC:      "garbage collector (background)",
	layerRuntime: "scheduler and other runtime",
	layerDriver:  "benchmark driver",
}

// layerPrefixes name each layer's functions; a sample is charged to the layer of its innermost
// function that has one (standard library and runtime frames charge their caller). The names of
// the catalogue's functions and of the modules are taken from the functions and types
// themselves, so a rename changes them here too (or fails to compile); only the standard
// library's and "main." (the linker's name for this program's package, which a test binary
// calls by its import path) are written out.
var layerPrefixes = []struct {
	l        layer
	prefixes []string
}{
	{layerDecode, append(symbolNames(dynamo.DecodeFuncs()...), modulePath(gojson.Decoder{}))},
	{layerGraphQL, append([]string{modulePath(graphql.Response{}) + "/", modulePath(ast.Schema{}) + "/"},
		symbolNames(graph.GeneratedTypes()...)...)},
	{layerSDK, []string{modulePath(aws.Config{}) + "/", modulePath(middleware.Metadata{})}},
	{layerHTTP, []string{"net/http.", "net.", "internal/poll.", "crypto/tls."}},
	{layerDriver, []string{"main.", packagePath(layer(0)) + ".", modulePath(dynamo.Store{}) + "/bench/", packagePath(memdyn.Server{}) + "."}},
	{layerOurs, []string{modulePath(dynamo.Store{}) + "/"}},
}

// symbolNames returns the names a profile gives each of vs: a function's own name, or for a nil
// pointer to a type, the prefix its methods share ("pkg.(*T)").
func symbolNames(vs ...any) []string {
	var names []string
	for _, v := range vs {
		t := reflect.TypeOf(v)
		switch t.Kind() {
		case reflect.Func:
			names = append(names, runtime.FuncForPC(reflect.ValueOf(v).Pointer()).Name())
		case reflect.Pointer:
			names = append(names, t.Elem().PkgPath()+".(*"+t.Elem().Name()+")")
		default:
			panic(fmt.Sprintf("symbolNames: %T is neither a function nor a pointer", v))
		}
	}
	return names
}

// packagePath returns the import path of the package that declares v's type.
func packagePath(v any) string { return reflect.TypeOf(v).PkgPath() }

// modulePath returns the path of the module that declares v's type, for the modules this program
// uses (all of them named github.com/OWNER/REPO).
func modulePath(v any) string {
	parts := strings.SplitN(packagePath(v), "/", 4)
	return strings.Join(parts[:min(3, len(parts))], "/")
}

// breakdown is where one operation's CPU went, from a CPU profile of its runs.
type breakdown struct {
	Runs    int
	Samples int
	Total   time.Duration // the profile's CPU time over all runs
	Layer   [nLayers]time.Duration
	Alloc   [nLayers]time.Duration // of Layer: under runtime.mallocgc (including GC assists)
	Stack   [nLayers]time.Duration // of Layer: growing goroutine stacks (runtime.newstack)
	Spawn   [nLayers]time.Duration // of Layer: starting goroutines (runtime.newproc)
}

// share returns the part of the profile charged to d.
func (b *breakdown) share(d time.Duration) float64 {
	if b == nil || b.Total <= 0 {
		return 0
	}
	return float64(d) / float64(b.Total)
}

// classify charges one sample, given its functions innermost first.
func classify(funcs []string) (l layer, alloc, stack, spawn bool) {
	l = layerRuntime
	found := false
	for _, f := range funcs {
		switch {
		case f == "runtime.mallocgc":
			alloc = true
		case f == "runtime.newstack":
			stack = true
		case f == "runtime.newproc":
			spawn = true
		case f == "runtime.gcBgMarkWorker" || f == "runtime.bgsweep" || f == "runtime.bgscavenge":
			return layerGC, false, false, false
		}
		if found {
			continue
		}
		for _, g := range layerPrefixes {
			for _, p := range g.prefixes {
				if strings.HasPrefix(f, p) {
					l, found = g.l, true
					break
				}
			}
			if found {
				break
			}
		}
	}
	return l, alloc, stack, spawn
}

// attribute sums a parsed CPU profile into b.
func (b *breakdown) attribute(p *profile.Profile) error {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return fmt.Errorf("the profile has no cpu/nanoseconds samples")
	}
	var funcs []string
	for _, s := range p.Sample {
		funcs = funcs[:0]
		for _, loc := range s.Location {
			for _, ln := range loc.Line { // innermost (inlined) first
				if ln.Function != nil {
					funcs = append(funcs, ln.Function.Name)
				}
			}
		}
		d := time.Duration(s.Value[idx])
		l, alloc, stack, spawn := classify(funcs)
		b.Samples++
		b.Total += d
		b.Layer[l] += d
		if alloc {
			b.Alloc[l] += d
		}
		if stack {
			b.Stack[l] += d
		}
		if spawn {
			b.Spawn[l] += d
		}
	}
	return nil
}

// breakdown profiles op for about d, served at concurrency 1 without the delay, and charges the
// samples to layers.
func (h *harness) breakdown(ctx context.Context, op *operation, d time.Duration) (*breakdown, error) {
	var buf bytes.Buffer
	runs, err := h.profileRuns(ctx, op, &buf, d)
	if err != nil {
		return nil, err
	}
	b := &breakdown{Runs: runs}
	p, err := profile.Parse(&buf)
	if err != nil {
		return nil, err
	}
	return b, b.attribute(p)
}

// profileAllocs samples allocations every rate bytes from now on; stop returns what was
// allocated since, as `go tool pprof -base` would show it (the runtime's profile counts from the
// start of the process: the bulk load included), and restores the sampling rate.
func profileAllocs(rate int) (stop func() (*profile.Profile, error), err error) {
	old := runtime.MemProfileRate
	// The runtime scales samples by the rate in effect when the profile is written: set it before
	// the base is taken, so that the earlier samples cancel out exactly.
	runtime.MemProfileRate = rate
	base, err := allocsSnapshot()
	if err != nil {
		runtime.MemProfileRate = old
		return nil, err
	}
	return func() (*profile.Profile, error) {
		defer func() { runtime.MemProfileRate = old }()
		now, err := allocsSnapshot()
		if err != nil {
			return nil, err
		}
		base.Scale(-1)
		d, err := profile.Merge([]*profile.Profile{now, base})
		if err != nil {
			return nil, err
		}
		d.Sample = slices.DeleteFunc(d.Sample, func(s *profile.Sample) bool {
			return !slices.ContainsFunc(s.Value, func(v int64) bool { return v != 0 })
		})
		return d.Compact(), nil
	}, nil
}

// allocsSnapshot returns the allocation profile as of now (the runtime publishes allocations at
// the end of a collection, so it runs one first).
func allocsSnapshot() (*profile.Profile, error) {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("allocs").WriteTo(&buf, 0); err != nil {
		return nil, err
	}
	return profile.Parse(&buf)
}
