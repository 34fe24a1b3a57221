// Package tune holds the Go runtime settings the server runs with, shared with the benchmark so
// that it measures the server as deployed.
package tune

import (
	"runtime/debug"
	"strconv"
)

// DefaultGCPercent is the server's GOGC when the environment does not set one. A GraphQL request
// allocates several hundred kilobytes (gqlgen's field contexts, the SDK's middleware, the
// response) over a live heap of a few megabytes: at Go's default of 100 the collector runs every
// few requests and takes a large share of the server's CPU (BENCHMARKS.md reports it). At 400
// the heap may grow to five times the live data between collections instead of twice, which for
// this server is tens of megabytes; set GOMEMLIMIT where memory is tight, GOGC to choose
// otherwise.
const DefaultGCPercent = 400

// GC applies DefaultGCPercent unless GOGC is set, and returns the GOGC in effect (-1: off).
func GC(getenv func(string) string) int {
	if v := getenv("GOGC"); v != "" {
		if v == "off" {
			return -1
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 100 // the runtime ignores a GOGC it cannot read
		}
		return n
	}
	debug.SetGCPercent(DefaultGCPercent)
	return DefaultGCPercent
}
