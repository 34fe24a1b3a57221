package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// BenchmarkEmbedded serves the embedded default's warm reads (embedded.go) one at a time over
// its loopback HTTP, as measureEmbedded does at concurrency 1: for CPU profiles of the whole
// path (go test ./bench -run '^$' -bench Embedded -cpuprofile cpu.out), with the CPU per
// operation of the whole process (cpu-ns/op).
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
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"trivial", body(trivialQuery, nil)},
		{"complete view", body(completeViewQuery, map[string]any{"id": id})},
		{"list all", body(listAllQuery, nil)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				a, err := e.post(ctx, c.body)
				if err != nil || a.status != http.StatusOK {
					b.Fatalf("status %d, %v: %.300s", a.status, err, a.body)
				}
			}
			// The process's CPU (server, backend and client): steadier than the wall time on a
			// shared machine.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
