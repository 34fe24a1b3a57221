package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
)

// BenchmarkEmbeddedCold serves the embedded default's cold reads (embedded.go's "cold" mode: a
// write of the capability's description, untimed, then the read) with the partition cache
// following the server's own writes (retag) and without (no-retag: every range read again
// after a write, as before PartitionCache.Retag), reporting the DynamoDB requests of the read:
//
//	go test ./bench -run '^$' -bench EmbeddedCold -benchtime 200x
func BenchmarkEmbeddedCold(b *testing.B) {
	ctx := context.Background()
	for _, retag := range []bool{true, false} {
		name := "retag"
		if !retag {
			name = "no-retag"
		}
		e, _, bundles, err := startEmbedded(ctx, config{cacheBytes: 64 << 20, noRetag: !retag})
		if err != nil {
			b.Fatal(err)
		}
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
			b.Run(c.name+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				requests := 0
				for b.Loop() {
					b.StopTimer()
					if err := e.touch(ctx, id); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					a, err := e.post(ctx, c.body)
					if err != nil || a.status != http.StatusOK {
						b.Fatalf("status %d, %v: %.300s", a.status, err, a.body)
					}
					requests += a.requests
				}
				b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			})
		}
		e.close()
	}
}
