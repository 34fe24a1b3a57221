// Command bench measures the GraphQL server against a DynamoDB with injected latency, side by
// side with a per-field (AppSync-style) baseline, and writes BENCHMARKS.md.
//
//	go run ./bench                       # the default run: 200 capabilities + a large one
//	go run ./bench -caps 20 -n 50 -out - # a quick run, report on stdout
//	go run ./bench -search-only          # only the search section (10,000 capabilities)
//	go run ./bench -postgraphile-only    # only the comparison with PostGraphile over PostgreSQL
//	go run ./bench -embedded-only        # only the embedded default's section
//
// It generates a synthetic catalogue, bulk-loads it through dynamo.Store.BulkLoad into an
// in-memory DynamoDB (internal/memdyn, in a child process so that its CPU is not counted as the
// server's), then runs each operation through the real graph.GraphQLHandler and through the
// baseline with a fixed delay before every DynamoDB request, and reports requests, round trips,
// latency, throughput, CPU time and allocations. It also measures the server's CPU against a
// floor (floor.go: the same schema and data from ready objects) and the embedded default against
// { __typename } on the same server (embedded.go), printing PASS or FAIL per target of issue #17.
// See docs/performance.md.
//
// Diagnostics: BENCH_DEBUG=1 logs every failed DynamoDB attempt with its connection trace;
// BENCH_BACKEND_CPUPROFILE=file profiles the child backend process; -load-cpuprofile profiles
// the bulk load; -cpuprofile with -profile-op profiles one operation (-memprofile its allocations).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	if err := mainErr(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

func mainErr(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{shape: defaultShape()}
	s := &cfg.shape
	fs.IntVar(&s.Capabilities, "caps", s.Capabilities, "regular capabilities in the synthetic catalogue")
	fs.IntVar(&s.Components, "components", s.Components, "components per capability")
	fs.IntVar(&s.Dependencies, "deps", s.Dependencies, "dependencies per capability")
	fs.IntVar(&s.Jobs, "jobs", s.Jobs, "jobs per capability")
	fs.IntVar(&s.MetricComponents, "metric-components", s.MetricComponents, "components with metrics, per capability")
	fs.DurationVar(&s.MetricWindow, "metric-window", s.MetricWindow, "metric history per component (5-minute samples)")
	fs.IntVar(&s.Rules, "rules", s.Rules, "rules per capability")
	fs.BoolVar(&s.Large, "large", s.Large, "add the large-partition capability")
	fs.IntVar(&s.LargeJobs, "large-jobs", s.LargeJobs, "jobs of the large capability")
	fs.IntVar(&s.LargeMetrics, "large-metrics", s.LargeMetrics, "one-minute metric samples of the large capability")
	fs.DurationVar(&cfg.delay, "delay", 4*time.Millisecond, "delay injected before every DynamoDB request in the measured passes")
	fs.IntVar(&cfg.n, "n", 200, "runs per operation at concurrency -c")
	fs.IntVar(&cfg.c, "c", 8, "concurrency of the throughput pass")
	fs.IntVar(&cfg.n1, "n1", 30, "runs per operation at concurrency 1 with the delay (critical path)")
	fs.IntVar(&cfg.cpuN, "cpu-n", 200, "runs per operation at concurrency 1 without the delay (CPU, allocations)")
	fs.IntVar(&cfg.warm, "warm", 16, "warm-up runs per operation")
	fs.IntVar(&cfg.budget, "budget", 20_000, "DynamoDB requests one pass of one implementation may cost: fewer runs for operations that send many (the baseline's list); 0 means no limit")
	fs.BoolVar(&cfg.noBase, "no-baseline", false, "skip the per-field baseline")
	fs.StringVar(&cfg.backend, "backend", "memdyn", "DynamoDB implementation: memdyn, or minidyn (slow past a few thousand items: it scans the table on every Query)")
	fs.BoolVar(&cfg.backendProcess, "backend-process", true, "run the backend in a child process, so that its CPU time is not counted as the server's")
	fs.StringVar(&cfg.endpoint, "endpoint", "", "use this DynamoDB endpoint (e.g. your own delaying proxy) instead of starting a backend; the benchmark then injects no delay and -delay only converts latency to round trips")
	fs.IntVar(&cfg.idleConns, "idle-conns", 1024, "idle HTTP connections the SDK client keeps to DynamoDB (0: the store's default, 256)")
	fs.IntVar(&cfg.loaders, "loaders", 2, "concurrent BulkLoad calls while loading")
	fs.IntVar(&cfg.writers, "writers", 8, "BatchWriteItem calls in flight per BulkLoad")
	fs.StringVar(&cfg.only, "ops", "", "measure only the operations whose name matches this regular expression")
	out := fs.String("out", "BENCHMARKS.md", "write the report here (- for standard output only)")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of one operation (-profile-op), served at concurrency 1 without delay, to this file")
	fs.StringVar(&cfg.memprofile, "memprofile", "", "with -cpuprofile, also write the allocations of the profiled runs (go tool pprof -sample_index=alloc_space) to this file")
	fs.DurationVar(&cfg.profileTime, "profile-time", 5*time.Second, "how long -cpuprofile profiles")
	fs.StringVar(&cfg.loadProfile, "load-cpuprofile", "", "write a CPU profile of the bulk load (this process only) to this file")
	fs.StringVar(&cfg.profileOp, "profile-op", "^complete view$", "the operation -cpuprofile profiles (a regular expression; the first match)")
	fs.StringVar(&cfg.breakdownOps, "breakdown", "^(complete view|list 50 .*)$", "break down the CPU of these operations by layer (GraphQL execution, SDK, HTTP, decoding, ...) from a CPU profile of their runs (a regular expression; empty: none)")
	fs.DurationVar(&cfg.breakdownTime, "breakdown-time", 4*time.Second, "how long each -breakdown operation is profiled")
	fs.Int64Var(&cfg.cacheBytes, "cache-bytes", 64<<20, "the server's partition cache, in bytes (0: off), for every server the benchmark builds (cacheOptions in embedded.go); the server's default")
	fs.StringVar(&cfg.floorOps, "floor", "^(complete view|list 50 .*)$", "measure these operations' CPU against the floor: the same schema and data served by resolvers that return ready objects (a regular expression; empty: none)")
	fs.BoolVar(&cfg.embedded, "embedded", true, "measure the embedded default (memdyn in process, the sample catalogue) against { __typename } on the same server")
	embOnly := fs.Bool("embedded-only", false, "measure the embedded-default section only and replace its section of -out (the rest of the file stays as it is)")
	fs.IntVar(&cfg.embN1, "emb-n1", 200, "runs per embedded-default operation at concurrency 1 (half for cold reads)")
	fs.IntVar(&cfg.embN16, "emb-n16", 800, "runs per embedded-default operation at concurrency 16 (half for cold reads)")
	registerSubFlags(fs, &cfg.subs)
	registerSearchFlags(fs, &cfg.search)
	registerPGFlags(fs, &cfg.pg)
	serveSubs := fs.String("serve-subscriptions", "", "serve one server instance on -endpoint's table on this address, its memory at /_bench/mem, and do nothing else (the child process of the subscriptions section)")
	serve := fs.String("serve-backend", "", "serve the delaying, counting backend on this address and do nothing else (the child process mode; also usable behind an outside proxy)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *serve != "" {
		return serveBackend(*serve, cfg.backend, cfg.delay)
	}
	if *serveSubs != "" {
		return serveSubscriptions(*serveSubs, cfg.endpoint, cfg.subs.idleSubs)
	}
	if s.Capabilities < 1 || s.Components < 2 || cfg.n < 1 || cfg.c < 1 || cfg.n1 < 1 || cfg.cpuN < 1 {
		return errors.New("-caps, -n, -c, -n1 and -cpu-n must be at least 1, -components at least 2")
	}
	if cfg.endpoint != "" {
		cfg.backend = "external"
	}
	cfg.log = stderr
	command := "go run ./bench"
	if len(args) > 0 {
		command += " " + strings.Join(args, " ")
	}
	if cfg.subs.only {
		return subscriptionsOnly(cfg, command, *out, stdout, stderr)
	}
	if *embOnly {
		return embeddedOnly(cfg, command, *out, stdout, stderr)
	}
	if cfg.search.only {
		return searchOnly(cfg, command, *out, stdout, stderr)
	}
	if cfg.pg.only {
		return postgraphileOnly(cfg, command, *out, stdout, stderr)
	}
	fmt.Fprintf(stderr, "bench: %d capabilities (+%v large), %d items; delay %v, n %d, c %d\n", s.Capabilities, s.Large, s.items(), cfg.delay, cfg.n, cfg.c)
	start := time.Now()
	rep, err := run(context.Background(), cfg)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	rep.write(&buf, command)
	fmt.Fprintf(stderr, "bench: done in %v\n", time.Since(start).Round(time.Second))
	if *out == "-" || *out == "" {
		if _, err := stdout.Write(buf.Bytes()); err != nil {
			return err
		}
		return errors.Join(rep.subs.lost(), rep.search.failed())
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return errors.Join(rep.subs.lost(), rep.search.failed())
}

// defaultShape is the default catalogue of the benchmark: 200 capabilities, each with 8 components, 12
// dependencies, 50 jobs, 24 hours of 5-minute metrics for 8 components and 10 rules, plus one
// capability with 100,000 metric samples and 5,000 jobs.
func defaultShape() shape {
	return shape{
		Capabilities: 200, Components: 8, Dependencies: 12, Jobs: 50,
		MetricComponents: 8, MetricWindow: 24 * time.Hour, MetricInterval: 5 * time.Minute, Rules: 10,
		Large: true, LargeJobs: 5000, LargeMetrics: 100_000,
	}
}
