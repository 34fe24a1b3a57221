package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/tune"
)

// machine describes where the benchmark ran.
func machine() string {
	model := "unknown CPU"
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s %s/%s", model, runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func (r *report) rt(d time.Duration) string {
	if r.cfg.delay <= 0 {
		return fmt.Sprintf("%.2f ms", ms(d))
	}
	return fmt.Sprintf("%.2f ms · %.2f RT", ms(d), float64(d)/float64(r.cfg.delay))
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f×", b/a)
}

// result returns the row of the named operation, nil when it was not run.
func (r *report) result(name string) *opResult {
	for _, x := range r.results {
		if x.Op.Name == name {
			return x
		}
	}
	return nil
}

// write renders the report as Markdown.
func (r *report) write(w io.Writer, command string) {
	cfg := r.cfg
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	s := cfg.shape

	p("# Benchmarks")
	p("")
	p("Produced by `%s` on %s.", command, time.Now().UTC().Format("2006-01-02 15:04 MST"))
	p("")
	p("- Machine: %s.", machine())
	gogc := fmt.Sprintf("GOGC %d", r.gogc)
	if r.gogc < 0 {
		gogc = "GOGC off"
	}
	if os.Getenv("GOGC") == "" {
		gogc += ", the server's default (internal/tune; the GOGC variable overrides it)"
	} else {
		gogc += ", from the GOGC variable (the server's default is " + strconv.Itoa(tune.DefaultGCPercent) + ")"
	}
	p("- Runtime: %s.", gogc)
	if r.loadBefore != "" {
		p("  Load average (1, 5, 15 min) before the run: %s; after the measurements: %s. Other work on the machine shows here and in every timing.", r.loadBefore, r.loadAfter)
	}
	backend := cfg.backend + " (in-memory DynamoDB speaking the DynamoDB HTTP API; see internal/memdyn), in a child process"
	switch {
	case cfg.endpoint != "":
		backend = "external endpoint " + cfg.endpoint + " (no delay injected by the benchmark, requests not counted by it)"
	case !cfg.backendProcess:
		backend = cfg.backend + ", in this process"
	}
	if cfg.endpoint != "" {
		p("- Backend: %s; round trips below are latency ÷ -delay (%v), which should be the delay that endpoint injects.", backend, cfg.delay)
	} else {
		p("- Backend: %s, behind an `http.Handler` that counts every DynamoDB request and holds it %v before passing it on.", backend, cfg.delay)
	}
	if d := r.delays; d.delayed1 > 0 && d.delayedC > 0 {
		p("  Measured time actually held per request: %.3f ms at concurrency 1 (%d requests), %.3f ms at concurrency %d (%d requests): the timer overshoots, more under load. A round trip (RT) below is the nominal %v.",
			ms(d.slept1)/float64(d.delayed1), d.delayed1, ms(d.sleptC)/float64(d.delayedC), cfg.c, d.delayedC, cfg.delay)
	}
	p("- Catalogue: %d capabilities × (%d components, %d dependencies, %d jobs, %d metric samples: %v of %v samples for %d components, %d rules)",
		s.Capabilities, s.Components, s.Dependencies, s.Jobs, s.metricsPerCapability(), s.MetricWindow, s.MetricInterval, min(s.MetricComponents, s.Components), s.Rules)
	if s.Large {
		p("  plus one large capability (%s) with %d jobs and %d one-minute metric samples:", largeID, s.LargeJobs, s.LargeMetrics)
	}
	p("  %d items, bulk-loaded through `dynamo.Store.BulkWrite` in groups of 4 capabilities and one `RepairCounters` (%d Scan requests) in %v with no delay (CPU: %v in this process, %v in the backend).",
		r.items, r.loadOps["Scan"], r.loadTime.Round(100*time.Millisecond), r.loadCPU.Round(100*time.Millisecond), r.loadChildCPU.Round(100*time.Millisecond))
	p("- Runs per operation: %d warm-up, %d at concurrency 1 with the delay (critical path), %d at concurrency %d with the delay (percentiles, throughput), %d at concurrency 1 without the delay (CPU, allocations);",
		cfg.warm, cfg.n1, cfg.n, cfg.c, cfg.cpuN)
	p("  fewer where a pass would cost more than %d DynamoDB requests (the runs column says how many: C=1 / C=%d / CPU).", cfg.budget, cfg.c)
	p("- The server is the real `graph.GraphQLHandler` over `dynamo.Store`, configured as `server.go` runs it (an API key checked on every request, the 10 s request deadline, Prometheus metrics of every request and DynamoDB call, one JSON log line per request, formatted and discarded), called in-process (`ServeHTTP`), its SDK client on a pool of %d idle connections.", idleConns(cfg))
	p("")

	p("## DynamoDB requests and round trips per operation")
	p("")
	p("Requests are counted by the SDK middleware behind `extensions.dynamodb` and, independently, by the delaying handler in front of the backend; every run of an operation must agree.")
	p("Round trips are the critical path: the longest chain of DynamoDB calls each of which starts after the previous one ended (median at concurrency 1).")
	p("")
	p("| operation | minimum requests | ours | baseline | baseline ÷ ours | min RT | ours RT | baseline RT | items read: ours / baseline |")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.measured() {
		o := x.Ours
		ours := fmt.Sprint(o.Requests)
		if o.RequestsVary {
			ours += fmt.Sprintf(" (varies: %v)", o.Odd)
		}
		if o.Counted >= 0 && int(o.Counted*1000) != o.Requests*1000 {
			ours += fmt.Sprintf(" (counted %.2f)", o.Counted)
		}
		mark := ""
		if o.Requests == x.Op.MinRequests && !o.RequestsVary {
			mark = " ✓"
		}
		base, baseRatio, baseRT, baseItems := "–", "–", "–", "–"
		if b := x.Base; b != nil {
			base = fmt.Sprint(b.Requests)
			if b.RequestsVary {
				base += fmt.Sprintf(" (varies: %v)", b.Odd)
			}
			baseRatio = ratio(float64(o.Requests), float64(b.Requests))
			baseRT = fmt.Sprint(b.Depth)
			baseItems = fmt.Sprint(b.Items)
		}
		p("| %s | %d | %s%s | %s | %s | %d | %d | %s | %d / %s |", x.Op.Name, x.Op.MinRequests, ours, mark, base, baseRatio, x.Op.MinRoundTrips, o.Depth, baseRT, o.Items, baseItems)
	}
	p("")

	p("## Latency and throughput")
	p("")
	p("Latency of one operation in milliseconds and in injected round trips (latency ÷ %v); throughput at concurrency %d on this machine's %d cores (server, driver and backend share them).", cfg.delay, cfg.c, runtime.NumCPU())
	p("\"Held per request\" is the time the delaying handler actually held each request of the pass: above %v when the sleeping goroutines wait for a core.", cfg.delay)
	p("")
	p("| operation | ours p50, C=1 | ours p50 | ours p99 | baseline p50, C=1 | baseline p50 | baseline p99 | p50 baseline ÷ ours | ours ops/s | baseline ops/s | held per request, ours: C=1 · C=%d | runs: ours · baseline |", cfg.c)
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.measured() {
		o := x.Ours
		b1, b50, b99, br, bt, bruns := "–", "–", "–", "–", "–", "–"
		if b := x.Base; b != nil {
			b1, b50, b99 = r.rt(b.P50C1), r.rt(b.P50), r.rt(b.P99)
			br = ratio(float64(o.P50), float64(b.P50))
			bt = fmt.Sprintf("%.0f", b.Throughput)
			bruns = fmt.Sprintf("%d/%d/%d", b.Runs1, b.RunsC, b.RunsCPU)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %s | %.2f · %.2f ms | %d/%d/%d · %s |", x.Op.Name, r.rt(o.P50C1), r.rt(o.P50), r.rt(o.P99), b1, b50, b99, br, o.Throughput, bt, ms(o.Held1), ms(o.HeldC), o.Runs1, o.RunsC, o.RunsCPU, bruns)
	}
	p("")
	p("Where the time of one operation goes at concurrency 1 (medians of the C=1 runs): the server's work before its first DynamoDB call starts, then the calls (the injected delay, the backend, and the SDK's work on each call, which includes decoding the items), then the server's work after the last call ends (resolvers, GraphQL execution and the JSON response).")
	p("")
	p("| operation | p50, C=1 | before the first call | calls | after the last call |")
	p("|---|---:|---:|---:|---:|")
	for _, x := range r.measured() {
		o := x.Ours
		calls := o.P50C1 - o.Before1 - o.After1
		p("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms |", x.Op.Name, ms(o.P50C1), ms(o.Before1), ms(calls), ms(o.After1))
	}
	p("")

	p("## Server CPU and allocations per operation")
	p("")
	p("Delay 0, concurrency 1: process CPU time (getrusage, user + system) and Go heap allocations (runtime.MemStats) divided by the runs. The figures include %s. The baseline's figures are its Go client work only (no GraphQL execution).", r.cpuIncludes)
	p("")
	p("\"Backend CPU\" is the child backend's CPU time over the same runs (/proc, 10 ms resolution; – where the backend is not a child process): the work DynamoDB does for the operation, which on this machine shares the cores with the server.")
	p("")
	p("| operation | ours CPU µs | ours allocs | ours KB | backend CPU µs | baseline CPU µs | baseline allocs | baseline KB |")
	p("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, x := range r.measured() {
		o := x.Ours
		bc, ba, bb := "–", "–", "–"
		if b := x.Base; b != nil {
			bc, ba, bb = fmt.Sprintf("%.0f", us(b.CPU)), fmt.Sprintf("%.0f", b.Allocs), fmt.Sprintf("%.1f", b.Bytes/1024)
		}
		p("| %s | %.0f | %.0f | %.1f | %s | %s | %s | %s |", x.Op.Name, us(o.CPU), o.Allocs, o.Bytes/1024, r.backendCPU(o), bc, ba, bb)
	}
	p("")
	r.writeBreakdown(p)
	r.writeFloor(p)

	r.writeTargets(p)
	r.writeEmbedded(p)
	r.writeLarge(p)

	r.writePersisted(p)
	r.writeSubscriptions(p)
	r.search.write(p)
	r.pg.write(p)

	p("## What each operation asks and what the baseline sends")
	p("")
	p("The baseline (bench/baseline.go) resolves the same data needs the way AppSync-style per-field resolvers do: one DynamoDB call per nested field per parent, a level only after its parent level has resolved, the calls within a level in parallel (AppSync resolves an object's fields and a list's items in parallel). It builds no keys itself: each per-field call is the exported `dynamo.Store` read that sends that one request. Before measuring, each operation's baseline result is compared with the server's (counts of every nested list, names, first and last items) and the run stops if they differ.")
	p("")
	for _, x := range r.results {
		p("- **%s** — minimum: %s.", x.Op.Name, x.Op.Why)
		if x.Op.BaselineDoes != "" {
			p("  Baseline: %s.", x.Op.BaselineDoes)
		}
		p("  Data: `%s`.", x.Ours.Summary)
	}
	p("")
}

func (r *report) writeTargets(p func(string, ...any)) {
	cfg := r.cfg
	p("## Targets")
	p("")
	p("| target | measured | met |")
	p("|---|---|---|")
	var over []string
	n := 0
	for _, x := range r.measured() {
		n++
		if x.Ours.Requests != x.Op.MinRequests || x.Ours.RequestsVary {
			over = append(over, fmt.Sprintf("%s: %d (minimum %d)", x.Op.Name, x.Ours.Requests, x.Op.MinRequests))
		}
	}
	if len(over) == 0 {
		p("| requests = theoretical minimum for every operation | %d of %d operations at the minimum | yes |", n, n)
	} else {
		p("| requests = theoretical minimum for every operation | %s | no |", strings.Join(over, "; "))
	}
	var notes []string
	rtTarget := func(name string, limit float64) {
		x := r.result(name)
		if x == nil || cfg.delay <= 0 {
			return
		}
		at := float64(x.Ours.P50) / float64(cfg.delay)
		at1 := float64(x.Ours.P50C1) / float64(cfg.delay)
		met := "yes"
		switch {
		case at > limit && at1 > limit:
			met = "no"
		case at > limit:
			met = fmt.Sprintf("at C=1 only (%.2f RT at C=%d: requests queue for the %d cores)", at, cfg.c, runtime.NumCPU())
		}
		p("| %s p50 ≤ %.1f injected round trips | %.2f RT at C=1, %.2f RT at C=%d (critical path %d RT) | %s |", name, limit, at1, at, cfg.c, x.Ours.Depth, met)
		if at1 > limit {
			notes = append(notes, r.rtNote(x, limit))
		}
	}
	rtTarget("complete view", 1.5)
	rtTarget("list 50 with components, dependsOn, dependencies", 2.5)
	var ratios []string
	for _, x := range r.results {
		if x.Base != nil && !x.Op.Once {
			ratios = append(ratios, fmt.Sprintf("%s %s requests, %s p50", x.Op.Name,
				ratio(float64(x.Ours.Requests), float64(x.Base.Requests)), ratio(float64(x.Ours.P50), float64(x.Base.P50))))
		}
	}
	if len(ratios) > 0 {
		p("| the baseline's requests and latency beside ours, as a ratio (baseline ÷ ours) | %s | yes |", strings.Join(ratios, "; "))
	}
	if x := r.result("complete view"); x != nil {
		met := "yes"
		if x.Ours.CPU >= time.Millisecond || x.Ours.CPU == 0 {
			met = "no"
		}
		p("| server CPU per complete view < 1 ms at concurrency 1 | %.0f µs, %.0f allocations | %s |", us(x.Ours.CPU), x.Ours.Allocs, met)
		if b := x.Breakdown; met == "no" && b != nil {
			notes = append(notes, cpuNote(b, x.Ours.CPU))
		}
	}
	p("")
	if len(notes) > 0 {
		p("Why the targets not met are not met, from this run's figures:")
		p("")
		for _, n := range notes {
			p("- %s", n)
		}
		p("")
	}
}

// rtNote explains a latency target missed at concurrency 1: the least p50 the machine allows at
// the operation's CPU cost, with and without the backend's share of the cores, and the part of
// that cost that is GraphQL execution.
func (r *report) rtNote(x *opResult, limit float64) string {
	o := x.Ours
	serverRT, backendRT := r.cpuRT(o)
	cores := runtime.NumCPU()
	depth := float64(o.Depth)
	n := fmt.Sprintf("%s: %d RT on the critical path; its CPU per run is %.2f ms in the server", x.Op.Name, o.Depth, ms(o.CPU))
	if r.hasBackendCPU() {
		n += fmt.Sprintf(" and %.2f ms in the backend", ms(o.BackendCPU))
	}
	n += fmt.Sprintf(". A run cannot take less wall time than its CPU time ÷ %d cores, so the least p50 this machine allows is %.2f RT for the server's CPU alone", cores, max(depth, serverRT))
	if r.hasBackendCPU() {
		n += fmt.Sprintf(", %.2f RT with the backend's", max(depth, serverRT+backendRT))
	}
	n += fmt.Sprintf(" (measured %.2f RT): ", float64(o.P50C1)/float64(r.cfg.delay))
	switch {
	case max(depth, serverRT) > limit:
		n += fmt.Sprintf("%.1f RT is out of reach on this machine at this CPU cost, even with a backend that used none of its cores", limit)
	case r.hasBackendCPU() && max(depth, serverRT+backendRT) > limit:
		n += fmt.Sprintf("%.1f RT is out of reach while the stand-in backend shares these cores; with a remote DynamoDB the floor is within the target", limit)
	default:
		n += "the floor is within the target; the rest is CPU that did not overlap the round trips"
	}
	if b := x.Breakdown; b != nil {
		g := b.share(b.Layer[layerGraphQL]) * float64(o.CPU)
		n += fmt.Sprintf(". GraphQL execution alone is %.2f ms of the server's CPU (%.0f %%), %.2f RT of all %d cores", g/1e6, 100*b.share(b.Layer[layerGraphQL]), g/float64(cores)/float64(r.cfg.delay), cores)
	}
	return n + "."
}

func (r *report) writeLarge(p func(string, ...any)) {
	small, large := r.result("complete view"), r.result("large: complete view")
	if large == nil {
		return
	}
	s := r.cfg.shape
	p("## Large partition")
	p("")
	p("%s holds %d jobs and %d metric samples besides its %d components, %d dependencies and %d rules.", largeID, s.LargeJobs, s.LargeMetrics, s.Components, s.Dependencies, s.Rules)
	p("")
	p("| operation | requests | items read | critical path | p50, C=1 |")
	p("|---|---:|---:|---:|---:|")
	for _, x := range []*opResult{small, large, r.result("large: newest 20 jobs"), r.result("large: metrics(componentId, metricType, from, to), last hour"), r.result("large: metrics(from, to) without componentId")} {
		if x == nil {
			continue
		}
		p("| %s | %d | %d | %d RT | %s |", x.Op.Name, x.Ours.Requests, x.Ours.Items, x.Ours.Depth, r.rt(x.Ours.P50C1))
	}
	p("")
	if small != nil {
		same := "the same"
		if small.Ours.Requests != large.Ours.Requests || small.Ours.Depth != large.Ours.Depth || small.Ours.Items != large.Ours.Items {
			same = "NOT the same"
		}
		p("The large capability's complete view costs %s requests, items read and round trips as a small one's: the planner reads only METADATA, the COMPONENT#..DEPENDENCY# range and the RULE# range, never JOB# or METRIC#.", same)
	}
	if w := r.result("large: metrics(componentId, metricType, from, to), last hour"); w != nil {
		p("Its one-hour window of one component and type costs %d requests reading %d items: METADATA and the %d samples of the window (one key-range Query), nothing outside it.", w.Ours.Requests, w.Ours.Items, w.Ours.Items-1)
	}
	if f := r.result("large: metrics(from, to) without componentId"); f != nil {
		p("Without componentId and metricType the same window reads the components, then one key range per component and metric type, all at once: %d requests reading %d items for 100 samples, whatever the size of the history. It is measured once, outside the tables above.", f.Ours.Requests, f.Ours.Items)
	}
	p("")
}

// measured returns the results of the operations measured in every pass (not the Once ones).
func (r *report) measured() []*opResult {
	var out []*opResult
	for _, x := range r.results {
		if !x.Op.Once {
			out = append(out, x)
		}
	}
	return out
}

// idleConns is the connection pool the store's client was given.
func idleConns(cfg config) int {
	if cfg.idleConns > 0 {
		return cfg.idleConns
	}
	return dynamo.DefaultMaxIdleConns
}

// backendCPU formats the backend's CPU per operation, – where it is unknown.
func (r *report) backendCPU(o stats) string {
	if !r.hasBackendCPU() {
		return "–"
	}
	return fmt.Sprintf("%.0f", us(o.BackendCPU))
}

// writeBreakdown renders where the CPU of the profiled operations goes, layer by layer.
func (r *report) writeBreakdown(p func(string, ...any)) {
	first := true
	for _, x := range r.measured() {
		b := x.Breakdown
		if b == nil || b.Total <= 0 {
			continue
		}
		if first {
			p("## Where the CPU goes")
			p("")
			p("A CPU profile of each operation below, served at concurrency 1 without the delay for %v (`-breakdown`, `-breakdown-time`), charges every sample to the layer of its innermost function that belongs to one: standard library and runtime frames count for their caller, so allocation and stack growth count for the code that caused them. The shares are of the profile; the µs apply them to the CPU per operation measured above. \"Allocating\" is time under `runtime.mallocgc` (GC assists included), \"growing stacks\" under `runtime.newstack` (a goroutine outgrowing its stack is copied to one twice the size), \"starting goroutines\" under `runtime.newproc`.", r.cfg.breakdownTime)
			p("")
			first = false
		}
		p("**%s** — %d runs, %d samples, %.0f µs per operation.", x.Op.Name, b.Runs, b.Samples, us(x.Ours.CPU))
		p("")
		p("| layer | share | µs per operation | of it allocating | growing stacks | starting goroutines |")
		p("|---|---:|---:|---:|---:|---:|")
		for l := range nLayers {
			if b.Layer[l] == 0 {
				continue
			}
			pct := func(d time.Duration) string { return fmt.Sprintf("%.1f %%", 100*b.share(d)) }
			p("| %s | %s | %.0f | %s | %s | %s |", layerNames[l], pct(b.Layer[l]), b.share(b.Layer[l])*us(x.Ours.CPU), pct(b.Alloc[l]), pct(b.Stack[l]), pct(b.Spawn[l]))
		}
		p("")
	}
}

// hasBackendCPU tells whether the backend's CPU was measured (a child process of the run).
func (r *report) hasBackendCPU() bool { return r.cfg.backendProcess && r.cfg.endpoint == "" }

// cpuRT converts an operation's CPU per run, the server's and the backend's, to round trips of
// wall time on all of this machine's cores: the least time a run can take to do that work.
func (r *report) cpuRT(o stats) (server, backend float64) {
	per := float64(runtime.NumCPU()) * float64(r.cfg.delay)
	if r.hasBackendCPU() {
		backend = float64(o.BackendCPU) / per
	}
	return float64(o.CPU) / per, backend
}

// cpuNote explains a CPU target missed: the share of GraphQL execution, and what every other
// layer adds up to.
func cpuNote(b *breakdown, cpu time.Duration) string {
	var rest []string
	other := 0.0
	for l := range nLayers {
		if l != layerGraphQL && b.Layer[l] > 0 {
			v := b.share(b.Layer[l]) * us(cpu)
			other += v
			rest = append(rest, fmt.Sprintf("%s %.0f", strings.SplitN(layerNames[l], " (", 2)[0], v))
		}
	}
	g := b.share(b.Layer[layerGraphQL]) * us(cpu)
	n := fmt.Sprintf("complete view CPU: GraphQL execution alone takes %.0f µs of the %.0f µs (%.0f %%, see \"Where the CPU goes\"); the other layers add up to %.0f µs (%s)",
		g, us(cpu), 100*b.share(b.Layer[layerGraphQL]), other, strings.Join(rest, ", "))
	switch {
	case g >= 1000 && other >= 1000:
		n += ": each of the two alone exceeds 1 ms"
	case g >= 1000:
		n += ": GraphQL execution alone exceeds 1 ms"
	case other >= 1000:
		n += ": they alone exceed 1 ms, even if GraphQL execution cost nothing"
	}
	return n + "."
}
