package main

import (
	"fmt"
	"runtime"
	"strings"
)

// passFail renders a target's outcome.
func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// writeFloor renders our CPU per operation ÷ the floor's (floor.go).
func (r *report) writeFloor(p func(string, ...any)) {
	first := true
	for _, x := range r.measured() {
		f := x.Floor
		if f == nil {
			continue
		}
		if first {
			p("## CPU against GraphQL's floor")
			p("")
			p("The floor (bench/floor.go) is the same schema, gqlgen's generated executor and its HTTP transport with a parsed-document cache, serving the same data from memory: the resolvers of the fields these operations touch return objects captured from the store before the measurement, with no loaders, no DynamoDB, no projection and no request accounting. Before it is measured, its `data` is compared with the server's, byte for byte, and the run stops if they differ (a test, `TestFloorAnswersLikeTheServer`, holds it too). CPU is measured the same way for both (getrusage of this process, concurrency 1, no delay; the server's backend runs in the child process). %s.", r.cacheState())
			p("")
			p("| operation | server | server CPU, µs | floor CPU, µs | server ÷ floor | target ≤ 1.5× cached | server allocations | floor allocations |")
			p("|---|---|---:|---:|---:|---|---:|---:|")
			first = false
		}
		ratio := float64(x.Ours.CPU) / float64(max(f.CPU, 1))
		p("| %s | uncached | %.0f | %.0f | %.2f× | %s | %.0f | %.0f |", x.Op.Name, us(x.Ours.CPU), us(f.CPU), ratio, "for reference (the target is the cached server's)", x.Ours.Allocs, f.Allocs)
		if c := x.Cached; c != nil {
			ratio := float64(c.CPU) / float64(max(f.CPU, 1))
			p("| %s | cached, warm | %.0f | %.0f | %.2f× | %s | %.0f | %.0f |", x.Op.Name, us(c.CPU), us(f.CPU), ratio, passFail(ratio <= 1.5), c.Allocs, f.Allocs)
		}
	}
	if first {
		return
	}
	p("")
	p("What the server spends beyond the floor on an uncached complete view, from a CPU profile of it (`go run ./bench -ops '^complete view$' -cpuprofile cpu.out`, concurrency 1, no delay; shares of that profile on 2026-12-01, \"Where the CPU goes\" above gives this run's by layer), and what became of each:")
	p("")
	p("- Writing the response: `encoding/json` marshalled gqlgen's `json.RawMessage` data again, validating and compacting it byte by byte (about 5 %%). Removed: `graph/transport.go` copies the data as it is when it holds no byte `json.Marshal` would escape, byte-identical to before (`TestMarshalResponseIsJSONMarshal`).")
	p("- The AWS SDK for Go v2 (about 12–17 %%): per call a stack of some thirty middlewares, SigV4 signing with a SHA-256 of the payload, endpoint rules, retry bookkeeping; three calls per view. Kept: replacing the SDK with a hand-written client is neither cheap nor safe, and it is the production path to DynamoDB; the partition cache (graph/partitioncache.go) takes two of the three calls off a repeated view, as the cached rows show.")
	p("- Item decoding (about 9 %%): the store's wire scanner decoding items off the response. Kept: it is already the scanner that replaced the SDK's `attributevalue` decoding, and the read path; decoded ranges are what the cache keeps.")
	p("- Goroutine stacks growing (about 11 %% under `runtime.newstack`): the SDK's deep middleware chain runs in a fresh goroutine per call, and gqlgen starts a goroutine per list element (`MarshalSliceConcurrently`), whose stacks are copied as they grow. Kept: the gqlgen part is in the floor too; the SDK part goes with the calls the cache saves.")
	p("- The catalogue's own handler extensions (cost limits, `extensions.dynamodb`, the operation recorder, roles, metrics, the request log): under 1 %% each in the profile. Kept.")
	p("- Allocation and the collector (about a fifth of the profile, spread over all of the above): what remains after the items above is GraphQL execution's own, which the floor pays too.")
	p("")
}

// cacheState says which servers the CPU figures are of.
func (r *report) cacheState() string {
	return "Two servers are measured: uncached (every read goes to the backend, as in the passes above) and cached, warm (the partition cache of `-cache-bytes`, the server's default, after a first run filled it: the metadata read alone; none when -cache-bytes is 0)"
}

// writeEmbedded renders goal 2: the embedded default against { __typename } on the same server.
func (r *report) writeEmbedded(p func(string, ...any)) {
	e := r.embedded
	if e == nil {
		return
	}
	triv := e.row("trivial", modeWarm)
	if triv == nil {
		return
	}
	p("%s", strings.TrimSuffix(embeddedHeading, "\n"))
	p("")
	if e.Command != "" {
		p("Measured by `%s` (%s UTC, %s); the other sections are from the full run.", e.Command, e.At.UTC().Format("2006-01-02 15:04"), machine())
		p("")
	}
	p("The server as `go run .` builds it (bench/embedded.go): memdyn in this process behind `dynamo.StartEmbedded`, the embedded S3, the sample catalogue (%d items) with its artifacts, its metrics older than 10 minutes archived to the embedded S3 as the default server's first scheduled archive does 10 minutes after start (`blob.EmbeddedMinArchiveAge`), `graph.NewHandler` with the server's options and a %v request deadline, served to the benchmark's client over loopback HTTP, its DynamoDB client calling memdyn in process as the server's does (`loopback.Server.Do`: the guard and its key check, no socket), its store given memdyn's write generation as the server's is (the read memo); the server, memdyn and the benchmark's client share this process and the machine's %d cores. Each operation is timed against `{ __typename }` on the same server in the same run, at concurrency 1 (%d runs) and 16 (%d runs), the trivial query interleaved with it in blocks (bench/embedded.go `measureOp`, `abba`): the operation's runs and as many of the trivial query's alternate, operation, trivial, trivial, operation, four times over at concurrency 1 and twice at 16; the ratios are of the two sides' p50s and of their throughputs (each side's runs over its blocks' time), shown in the columns `trivial beside it`. So both terms of a ratio are measured under the same conditions: on this shared machine the speed of both moves by up to a third from one minute to the next, and one trivial row measured at the start made each ratio a quotient of two moments. Blocks rather than single runs: a trivial query sent right after each list took half as long again as in a row of its own, which would flatter every ratio. The trivial row is the trivial query measured alone before the others. Warm: the same read repeated. Cold: each read comes right after a write to its capability through the same server (an `updateCapability` of the description, untimed, one write at a time; for the list, a write to one of its capabilities; half the runs), so cold throughput at C=16 is the writes' rate, not the reads'. After a write elsewhere: the same, the write sent through memdyn's port by another client (as a second instance or a command writes), which this server learns of only from the versions it reads: its read memo is emptied and its cache's ranges of that capability miss. Past deadline counts, at concurrency 16, answers with a TIMEOUT error or HTTP 503 and runs longer than the deadline. Load average when this section started: %s. %s.",
		e.Items, e.Deadline, numCPU(), triv.Runs1, triv.Runs16, e.Load, e.CacheNote)
	p("")
	p("| operation | mode | DynamoDB requests | p50, C=1 | trivial beside it | ÷ trivial | p50, C=16 | p99, C=16 | per second, C=16 | trivial beside it | trivial ÷ it | past deadline, C=16 |")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, x := range e.Rows {
		p("| %s | %s | %d | %.2f ms | %.2f ms | %.1f× | %.2f ms | %.2f ms | %.0f | %.0f | %.1f | %d |", x.Name, x.Mode, x.Requests, ms(x.P50C1),
			ms(x.trivP50(triv)), x.p50Ratio(triv), ms(x.P50C16), ms(x.P99C16), x.Throughput, x.trivThroughput(triv), x.throughputRatio(triv), x.PastDeadline)
	}
	p("")
	p("| target (issue #17, goal 2) | warm | cold | after a write elsewhere (reported) |")
	p("|---|---|---|---|")
	for _, name := range []string{"complete view", "list all"} {
		t := embTargets[name]
		cell := func(mode string, check func(x *embRow) (string, bool)) string {
			x := e.row(name, mode)
			if x == nil {
				return "–"
			}
			v, ok := check(x)
			return fmt.Sprintf("%s %s", passFail(ok), v)
		}
		p50 := func(x *embRow) (string, bool) {
			v := x.p50Ratio(triv)
			return fmt.Sprintf("%.1f×", v), v <= t.maxP50
		}
		thr := func(x *embRow) (string, bool) {
			v := x.throughputRatio(triv)
			return fmt.Sprintf("1/%.1f", v), v <= t.minThroughput
		}
		elsewhere := "–"
		if x := e.row(name, modeElsewhere); x != nil {
			elsewhere = fmt.Sprintf("%.1f×, %d requests", x.p50Ratio(triv), x.Requests)
		}
		p("| %s p50 at C=1 ≤ %.0f× the trivial query's | %s | %s | %s |", name, t.maxP50, cell(modeWarm, p50), cell(modeCold, p50), elsewhere)
		writesThr := func(mode string) string {
			if x := e.row(name, mode); x != nil {
				return fmt.Sprintf("not judged: 1/%.1f, bounded by the writes, which run one at a time", x.throughputRatio(triv))
			}
			return "–"
		}
		p("| %s throughput at C=16 ≥ 1/%.0f of the trivial query's | %s | %s | %s |", name, t.minThroughput, cell(modeWarm, thr), writesThr(modeCold), writesThr(modeElsewhere))
	}
	late := func(mode string) string {
		n := 0
		for _, x := range e.Rows {
			if x.Mode == mode {
				n += x.PastDeadline
			}
		}
		return fmt.Sprintf("%s %d", passFail(n == 0), n)
	}
	p("| no request past its deadline at C=16 (every operation above) | %s | %s | %s |", late(modeWarm), late(modeCold), late(modeElsewhere))
	pageCell := func(mode string) string {
		x := e.row("explorer capability page", mode)
		if x == nil {
			return "–"
		}
		return fmt.Sprintf("%s %.2f ms", passFail(x.P50C1 <= pageTarget), ms(x.P50C1))
	}
	p("| the explorer's capability page, all its requests on load (%s, by hash as it sends them), p50 at C=1 ≤ %v | %s | %s | %s |", strings.Join(e.PageOps, ", "), pageTarget, pageCell(modeWarm), pageCell(modeCold), pageCell(modeElsewhere))
	p("")
	p("The explorer's capability page is read from the web assets the binary serves (`views/capability.js` and the sections it imports): on load it sends %d request(s), %s, with the variables `render()` passes; the sections send theirs (impact, another metrics window, more jobs, rule evaluation) only when the user asks. The benchmark registers the documents first and then sends the hash alone, as the explorer does after its first visit; the page's requests run one after another, as `render()` sends them (the newest change first, so that the subscription it then opens misses nothing between the two reads).", len(e.PageOps), strings.Join(e.PageOps, ", "))
	p("")
}

func numCPU() int { return runtime.NumCPU() }
