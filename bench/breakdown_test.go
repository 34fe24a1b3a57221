package main

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		name         string
		funcs        []string // innermost first
		want         layer
		alloc, stack bool
	}{
		{"gqlgen allocating", []string{"runtime.nextFreeFast", "runtime.mallocgc", "runtime.newobject",
			"github.com/99designs/gqlgen/graphql.ResolveField[...]", "github.com/capcat/catalogue/graph.(*executionContext)._Component",
			"github.com/capcat/catalogue/graph.(*Loaders).read"}, layerGraphQL, true, false},
		{"generated code growing its stack", []string{"runtime.copystack", "runtime.newstack", "runtime.morestack",
			"github.com/capcat/catalogue/graph.(*executionContext).marshalNComponent2ᚖ"}, layerGraphQL, false, true},
		{"the wire scanner inside the SDK's deserialize step", []string{"encoding/binary.littleEndian.Uint64", "github.com/capcat/catalogue/dynamo.(*wireScanner).str",
			"github.com/capcat/catalogue/dynamo.decodeResponseItems", "github.com/aws/smithy-go/middleware.decoratedDeserializeHandler.HandleDeserialize"}, layerDecode, false, false},
		{"goccy", []string{"github.com/goccy/go-json/internal/decoder.(*structDecoder).Decode", "github.com/capcat/catalogue/dynamo.decodeJSON"}, layerDecode, false, false},
		{"reading the body is HTTP", []string{"internal/poll.(*FD).Read", "net.(*conn).Read", "net/http.(*persistConn).Read", "io.ReadAll",
			"github.com/capcat/catalogue/dynamo.readBody", "github.com/aws/smithy-go/transport/http.ClientHandler.Handle"}, layerHTTP, false, false},
		{"signing", []string{"crypto/sha256.block", "github.com/aws/aws-sdk-go-v2/aws/signer/v4.(*httpSigner).Build",
			"github.com/capcat/catalogue/dynamo.(*Store).run"}, layerSDK, false, false},
		{"a resolver", []string{"runtime.mapaccess1", "github.com/capcat/catalogue/graph.neighbours", "github.com/capcat/catalogue/graph.(*executionContext)._Component_dependsOn"}, layerOurs, false, false},
		{"background marking", []string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, layerGC, false, false},
		{"the scheduler", []string{"runtime.futex", "runtime.findRunnable", "runtime.schedule", "runtime.mcall"}, layerRuntime, false, false},
		{"the backend in this process", []string{"github.com/capcat/catalogue/internal/memdyn.(*Server).query", "main.(*delayCounter).ServeHTTP", "net/http.(*conn).serve"}, layerDriver, false, false},
	} {
		l, alloc, stack, _ := classify(c.funcs)
		if l != c.want || alloc != c.alloc || stack != c.stack {
			t.Errorf("%s: layer %q alloc %v stack %v, want %q %v %v", c.name, layerNames[l], alloc, stack, layerNames[c.want], c.alloc, c.stack)
		}
	}
}

// A real profile of the complete view charges its samples to the layers it runs through, all of
// them to some layer, and the report shows them.
func TestBreakdownOfCompleteView(t *testing.T) {
	cfg := tinyConfig("memdyn", time.Now())
	cfg.only = "^complete view$"
	cfg.noBase = true
	cfg.breakdownOps, cfg.breakdownTime = "^complete view$", time.Second
	rep, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.results) != 1 || rep.results[0].Breakdown == nil {
		t.Fatalf("no breakdown of the complete view: %+v", rep.results)
	}
	b := rep.results[0].Breakdown
	if b.Runs == 0 || b.Samples < 20 {
		t.Fatalf("%d runs, %d samples", b.Runs, b.Samples)
	}
	var sum time.Duration
	for l := range nLayers {
		sum += b.Layer[l]
		if b.Alloc[l] > b.Layer[l] || b.Stack[l] > b.Layer[l] || b.Spawn[l] > b.Layer[l] {
			t.Errorf("%s: parts exceed the whole: %v alloc %v stack %v spawn %v", layerNames[l], b.Layer[l], b.Alloc[l], b.Stack[l], b.Spawn[l])
		}
	}
	if sum != b.Total {
		t.Errorf("layers sum to %v, profile total %v", sum, b.Total)
	}
	for _, l := range []layer{layerGraphQL, layerSDK} {
		if b.Layer[l] == 0 {
			t.Errorf("no sample charged to %s in %d samples", layerNames[l], b.Samples)
		}
	}
	var buf bytes.Buffer
	rep.write(&buf, "go run ./bench")
	out := buf.String()
	for _, want := range []string{"## Where the CPU goes", "**complete view** — ", "| " + layerNames[layerGraphQL] + " | "} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The notes under the targets: a latency floor above the target says it is out of reach, one
// below does not; the CPU note names what exceeds 1 ms.
func TestTargetNotes(t *testing.T) {
	cores := time.Duration(runtime.NumCPU())
	r := &report{cfg: config{delay: 4 * time.Millisecond, backendProcess: true}}
	op := &operation{Name: "list"}
	// CPU per run worth 3 RT of every core in the server, 1 more in the backend.
	heavy := &opResult{Op: op, Ours: stats{Depth: 2, CPU: cores * 12 * time.Millisecond, BackendCPU: cores * 4 * time.Millisecond, P50C1: 30 * time.Millisecond}}
	if server, backend := r.cpuRT(heavy.Ours); server != 3 || backend != 1 {
		t.Errorf("CPU %v RT in the server, %v in the backend; want 3, 1", server, backend)
	}
	for _, c := range []struct {
		name string
		o    stats
		want []string
		not  string
	}{
		{"server alone over", heavy.Ours, []string{"3.00 RT for the server's CPU alone, 4.00 RT with the backend's (measured 7.50 RT)", "out of reach on this machine at this CPU cost, even with"}, "within"},
		{"over with the backend", stats{Depth: 2, CPU: cores * 8 * time.Millisecond, BackendCPU: cores * 4 * time.Millisecond, P50C1: 20 * time.Millisecond},
			[]string{"2.00 RT for the server's CPU alone, 3.00 RT with the backend's", "out of reach while the stand-in backend shares these cores"}, "even with"},
		{"within", stats{Depth: 2, CPU: cores * time.Millisecond, P50C1: 12 * time.Millisecond}, []string{"the floor is within the target"}, "out of reach"},
	} {
		n := r.rtNote(&opResult{Op: op, Ours: c.o}, 2.5)
		for _, w := range c.want {
			if !strings.Contains(n, w) {
				t.Errorf("%s: %s\nwant %q", c.name, n, w)
			}
		}
		if strings.Contains(n, c.not) {
			t.Errorf("%s: %s\nsays %q", c.name, n, c.not)
		}
	}
	b := &breakdown{Total: 100}
	b.Layer[layerGraphQL], b.Layer[layerSDK], b.Layer[layerHTTP] = 40, 35, 25
	for cpu, want := range map[time.Duration]string{
		2 * time.Millisecond:    "GraphQL execution alone takes 800 µs of the 2000 µs (40 %",
		3 * time.Millisecond:    "each of the two alone exceeds 1 ms",
		1800 * time.Microsecond: "they alone exceed 1 ms, even if GraphQL execution cost nothing",
	} {
		if n := cpuNote(b, cpu); !strings.Contains(n, want) {
			t.Errorf("cpuNote at %v: %s; want %q", cpu, n, want)
		}
	}
	if n := cpuNote(b, 1500*time.Microsecond); strings.Contains(n, "exceed") {
		t.Errorf("cpuNote at 1.5 ms claims a layer exceeds 1 ms: %s", n)
	}
}

var sink [][]byte

//go:noinline
func allocBefore() { sink = append(sink, make([]byte, 1<<20)) }

//go:noinline
func allocAfter() { sink = append(sink, make([]byte, 1<<20)) }

// profileAllocs leaves out what was allocated before it started, at another sampling rate, and
// keeps what came after.
func TestProfileAllocs(t *testing.T) {
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	runtime.MemProfileRate = 512 * 1024
	for range 8 {
		allocBefore()
	}
	stop, err := profileAllocs(4096)
	if err != nil {
		t.Fatal(err)
	}
	for range 8 {
		allocAfter()
	}
	d, err := stop()
	sink = nil
	if err != nil {
		t.Fatal(err)
	}
	if runtime.MemProfileRate != 512*1024 {
		t.Errorf("sampling rate left at %d", runtime.MemProfileRate)
	}
	idx := -1
	for i, st := range d.SampleType {
		if st.Type == "alloc_space" {
			idx = i
		}
	}
	bytesIn := func(fn string) (n int64) {
		for _, s := range d.Sample {
			if s.Value[idx] < 0 {
				t.Errorf("negative sample %v", s.Value)
			}
			for _, loc := range s.Location {
				for _, ln := range loc.Line {
					if ln.Function != nil && strings.HasSuffix(ln.Function.Name, "."+fn) {
						n += s.Value[idx]
					}
				}
			}
		}
		return n
	}
	if n := bytesIn("allocBefore"); n != 0 {
		t.Errorf("%d bytes allocated before the start are in the profile", n)
	}
	if n := bytesIn("allocAfter"); n < 4<<20 || n > 16<<20 {
		t.Errorf("%d bytes of allocAfter in the profile, want about 8 MiB", n)
	}
}

// Every layer's names come from real functions and types: each is a package-qualified name that
// no other layer's names already cover, and the catalogue's own are in the packages they name.
func TestLayerPrefixesAreDerived(t *testing.T) {
	want := map[layer][]string{
		layerDecode:  {"github.com/capcat/catalogue/dynamo.", "github.com/goccy/go-json"},
		layerGraphQL: {"github.com/99designs/gqlgen/", "github.com/vektah/gqlparser/", "github.com/capcat/catalogue/graph.(*"},
		layerSDK:     {"github.com/aws/aws-sdk-go-v2/", "github.com/aws/smithy-go"},
		layerDriver:  {"main.", "github.com/capcat/catalogue/bench", "github.com/capcat/catalogue/internal/memdyn."},
		layerOurs:    {"github.com/capcat/catalogue/"},
	}
	for _, g := range layerPrefixes {
		for _, p := range g.prefixes {
			if p == "" || strings.HasPrefix(p, ".") || strings.Contains(p, "..") {
				t.Errorf("%s: malformed name %q", layerNames[g.l], p)
			}
			if w, ok := want[g.l]; ok && !slices.ContainsFunc(w, func(w string) bool { return strings.HasPrefix(p, w) }) {
				t.Errorf("%s: name %q is in none of %q", layerNames[g.l], p, w)
			}
		}
	}
	if n := len(symbolNames(dynamo.DecodeFuncs()...)); n < 4 {
		t.Errorf("symbolNames(dynamo.DecodeFuncs()...) has %d names, want 4", n)
	}
}
