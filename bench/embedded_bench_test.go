package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// BenchmarkEmbedded serves the embedded default's reads (embedded.go) one at a time over its
// loopback HTTP, as measureEmbedded does at concurrency 1: for CPU profiles of the whole path
// (go test ./bench -run '^$' -bench Embedded -cpuprofile cpu.out), with the CPU per operation of
// the whole process (cpu-ns/op).
//
// The cold cases write to the capability (touch, the same mutation as measureEmbedded's cold
// runs) before each read, so that the read goes to memdyn again. Their cpu-ns/op is the
// process's CPU counted around the read alone (getrusage before and after it; the write runs
// between two readings, outside them, with the timer stopped), and "touch" measures the write
// alone so that a cold read can be set against its write. A CPU profile of a cold case
// (-bench 'Embedded/complete_view_cold') holds the writes too: touch's own profile tells them
// apart.
func BenchmarkEmbedded(b *testing.B) {
	ctx := context.Background()
	e, _, bundles, err := startEmbedded(ctx, config{cacheBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer e.close()
	id := bundles[0].Capability.CapabilityID
	body := func(q string, vars map[string]any) []byte {
		out, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		return out
	}
	if err := e.touch(ctx, id); err != nil { // learns the revision
		b.Fatal(err)
	}
	page, err := explorerPage(id, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range page.register {
		if _, err := e.post(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		bodies [][]byte
		touch  bool // write before each read (cold), outside the measured CPU
	}{
		{"trivial", [][]byte{body(trivialQuery, nil)}, false},
		{"complete view", [][]byte{body(completeViewQuery, map[string]any{"id": id})}, false},
		{"list all", [][]byte{body(listAllQuery, nil)}, false},
		{"explorer page", page.hashed, false},
		{"complete view cold", [][]byte{body(completeViewQuery, map[string]any{"id": id})}, true},
		{"list all cold", [][]byte{body(listAllQuery, nil)}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				if c.touch {
					b.StopTimer()
					if err := e.touch(ctx, id); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				start := processCPU()
				for _, body := range c.bodies {
					a, err := e.post(ctx, body)
					if err != nil || a.status != http.StatusOK || bytes.Contains(a.body, []byte(`"errors":[`)) {
						b.Fatalf("status %d, %v: %.300s", a.status, err, a.body)
					}
				}
				cpu += processCPU() - start
			}
			// The process's CPU (server, backend and client): steadier than the wall time on a
			// shared machine.
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
	b.Run("touch", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			if err := e.touch(ctx, id); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
}
