// Package reqstats counts the backend requests of one unit of work (one GraphQL operation, one
// archive run): the one request-stats type of the DynamoDB and the S3 clients, each of which
// attaches its own to a context and counts into it from its SDK client.
package reqstats

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/capcat/catalogue/internal/budget"
)

// Measure says what a Stats measures besides requests and operations.
type Measure int

const (
	// Capacity is DynamoDB's: read and write capacity units.
	Capacity Measure = iota
	// Bytes is S3's: the bytes of request bodies sent plus response bodies read.
	Bytes
)

// Stats counts requests, per operation, and what its Measure says. It is safe for concurrent
// use.
type Stats struct {
	measure    Measure
	mu         sync.Mutex
	requests   int
	operations map[string]int
	bytes      int64
	rcu, wcu   float64
	// Budget bounds the calls (Limit): past it a client refuses to send one.
	budget.Budget
}

// New returns an empty Stats of measure m.
func New(m Measure) *Stats { return &Stats{measure: m, operations: map[string]int{}} }

// With returns a context carrying a new Stats of measure m under key, each store's own
// (an unexported type of its package, so that the two stores' Stats stay apart).
func With[K comparable](ctx context.Context, key K, m Measure) (context.Context, *Stats) {
	s := New(m)
	return context.WithValue(ctx, key, s), s
}

// From returns the Stats that ctx carries under key, or nil.
func From[K comparable](ctx context.Context, key K) *Stats {
	s, _ := ctx.Value(key).(*Stats)
	return s
}

// Request counts one request (an attempt: retries count) of operation op that sent sent bytes.
func (s *Stats) Request(op string, sent int64) {
	s.mu.Lock()
	s.requests++
	s.operations[op]++
	s.bytes += sent
	s.mu.Unlock()
}

// Received counts n bytes of a response body.
func (s *Stats) Received(n int) {
	s.mu.Lock()
	s.bytes += int64(n)
	s.mu.Unlock()
}

// Capacity adds the capacity units one call consumed.
func (s *Stats) Capacity(rcu, wcu float64) {
	s.mu.Lock()
	s.rcu += rcu
	s.wcu += wcu
	s.mu.Unlock()
}

// Snapshot returns the counts so far.
func (s *Stats) Snapshot() Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Snapshot{Measure: s.measure, Requests: s.requests, Bytes: s.bytes, ReadCapacityUnits: round2(s.rcu), WriteCapacityUnits: round2(s.wcu),
		Operations: maps.Clone(s.operations)}
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Snapshot is a copy of a Stats at one moment. Its JSON is the shape of its Measure:
// {requests, readCapacityUnits, writeCapacityUnits, operations} for Capacity (a response's
// extensions.dynamodb), {requests, bytes, operations} for Bytes (extensions.s3).
type Snapshot struct {
	Measure            Measure        `json:"-"`
	Requests           int            `json:"requests"`
	ReadCapacityUnits  float64        `json:"readCapacityUnits"`
	WriteCapacityUnits float64        `json:"writeCapacityUnits"`
	Bytes              int64          `json:"bytes"`
	Operations         map[string]int `json:"operations"`
	// Cache, for Capacity and when the server caches partition ranges, counts the ranges this
	// unit of work found in the cache (hits, no request) and those it read (misses).
	Cache *CacheCounts `json:"cache,omitempty"`
}

// CacheCounts are the hits and misses of a cache in one unit of work.
type CacheCounts struct {
	Hits   int `json:"hits"`
	Misses int `json:"misses"`
}

// Empty returns the Snapshot of measure m of a unit of work that made no request.
func Empty(m Measure) Snapshot { return Snapshot{Measure: m, Operations: map[string]int{}} }

// OperationNames returns the operations counted, sorted.
func (s Snapshot) OperationNames() []string { return slices.Sorted(maps.Keys(s.Operations)) }

// MarshalJSON writes the fields of s's Measure (AppendJSON).
func (s Snapshot) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends s's JSON to b, byte for byte what encoding/json writes for the fields of
// s's Measure: {requests, bytes, operations} for Bytes, {requests, readCapacityUnits,
// writeCapacityUnits, operations[, cache]} for Capacity, operations sorted by name. Every
// response carries one or two: written by hand, they cost a fraction of the reflection and
// re-compaction of json.Marshal.
func (s Snapshot) AppendJSON(b []byte) []byte {
	b = strconv.AppendInt(append(b, `{"requests":`...), int64(s.Requests), 10)
	if s.Measure == Bytes {
		b = strconv.AppendInt(append(b, `,"bytes":`...), s.Bytes, 10)
	} else {
		b = appendFloat(append(b, `,"readCapacityUnits":`...), s.ReadCapacityUnits)
		b = appendFloat(append(b, `,"writeCapacityUnits":`...), s.WriteCapacityUnits)
	}
	b = append(b, `,"operations":`...)
	if s.Operations == nil {
		b = append(b, "null"...)
	} else {
		b = AppendIntMap(b, s.Operations)
	}
	if s.Measure != Bytes && s.Cache != nil {
		b = strconv.AppendInt(append(b, `,"cache":{"hits":`...), int64(s.Cache.Hits), 10)
		b = strconv.AppendInt(append(b, `,"misses":`...), int64(s.Cache.Misses), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// AppendIntMap appends m's JSON to b as encoding/json writes it: keys sorted.
func AppendIntMap(b []byte, m map[string]int) []byte {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(AppendString(b, k), ':'), int64(m[k]), 10)
	}
	return append(b, '}')
}

// AppendString appends s as a JSON string, as encoding/json writes it (HTML characters
// escaped).
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// appendFloat appends f as encoding/json writes a float64 (f is finite).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
