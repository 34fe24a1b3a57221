package memdyn

import (
	"container/heap"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Time to live, as DynamoDB: once UpdateTimeToLive has named an attribute, an item whose value
// of it is a number of epoch seconds in the past is deleted, without a write of the caller's and
// without consuming capacity. DynamoDB deletes such items in the background, typically within a
// few days, and until then still returns them (which is why the catalogue store hides expired
// items itself); like DynamoDB it leaves alone a value more than five years in the past
// (a value in milliseconds, say) and a value that is not a number.
//
// memdyn deletes on access: every call first compares the earliest expiry (one atomic load)
// with the clock, and when an item is due it takes the write lock and deletes at most
// sweepBatch due items, earliest first. So an expired item disappears no later than the first
// call after its time (a few calls later when more than sweepBatch expire at once, which
// DynamoDB's days of delay allow), and a call pays for at most sweepBatch deletions.

// sweepBatch bounds the expired items one call deletes.
const sweepBatch = 256

// ttlHorizon is how far in the past a TTL may lie and still be honoured (five years).
const ttlHorizon = 5 * 365 * 24 * 60 * 60

// expiry is an item with a TTL in the heap of the items due to expire.
type expiry struct {
	at int64
	t  *table
	r  *rec
}

type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = expiry{}
	*h = old[:len(old)-1]
	return x
}

// SetClock sets the clock that decides which items have expired (time.Now when nil): tests
// that run the store at a fixed time give memdyn the same one.
func (s *Server) SetClock(now func() time.Time) {
	if now == nil {
		s.clock.Store(nil)
	} else {
		s.clock.Store(&now)
	}
	s.gen.Add(1) // which items have expired may change: see Generation
}

func (s *Server) now() time.Time {
	if f := s.clock.Load(); f != nil {
		return (*f)()
	}
	return time.Now()
}

// expire deletes items whose TTL has passed, at most sweepBatch of them.
func (s *Server) expire() {
	now := s.now().Unix()
	if s.nextExpiry.Load() >= now {
		return
	}
	s.lock()
	defer s.mu.Unlock()
	for n := 0; n < sweepBatch && len(s.expiring) > 0 && s.expiring[0].at < now; n++ {
		e := heap.Pop(&s.expiring).(expiry)
		if e.t.ttl == "" || e.at < now-ttlHorizon || s.tables[e.t.name] != e.t {
			continue // TTL turned off, too old to be a TTL, or the table is gone
		}
		if e.t.get(e.r.pk, e.r.sk) == e.r { // not replaced since
			e.t.del(e.r.pk, e.r.sk)
		}
	}
	s.resetNextExpiry()
}

// resetNextExpiry publishes the earliest expiry. The caller holds the write lock.
func (s *Server) resetNextExpiry() {
	next := int64(math.MaxInt64)
	if len(s.expiring) > 0 {
		next = s.expiring[0].at
	}
	s.nextExpiry.Store(next)
}

// watch puts a stored item with a TTL in the heap. The caller holds the write lock.
func (s *Server) watch(t *table, r *rec) {
	if r.expires == 0 || t.ttl == "" {
		return
	}
	heap.Push(&s.expiring, expiry{at: r.expires, t: t, r: r})
	if r.expires < s.nextExpiry.Load() {
		s.nextExpiry.Store(r.expires)
	}
}

// ttlOf reads a TTL attribute's value: epoch seconds, 0 when it is not a number.
func ttlOf(raw []byte) int64 {
	var v av
	if err := json.Unmarshal(raw, &v); err != nil || v.N == nil {
		return 0
	}
	if n, err := strconv.ParseInt(*v.N, 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(*v.N, 64)
	if err != nil || f < 1 || f > math.MaxInt64 {
		return 0
	}
	return int64(f)
}

func (s *Server) updateTTL(body []byte) (any, error) {
	var in struct {
		TableName               string
		TimeToLiveSpecification struct {
			AttributeName string
			Enabled       *bool
		}
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	spec := in.TimeToLiveSpecification
	if spec.AttributeName == "" || spec.Enabled == nil {
		return nil, validation("TimeToLiveSpecification needs AttributeName and Enabled")
	}
	s.lock()
	defer s.mu.Unlock()
	t, err := s.table(in.TableName)
	if err != nil {
		return nil, err
	}
	switch {
	case *spec.Enabled && t.ttl != "":
		return nil, validation("TimeToLive is already enabled")
	case !*spec.Enabled && t.ttl == "":
		return nil, validation("TimeToLive is already disabled")
	case !*spec.Enabled:
		t.ttl = ""
	default:
		t.ttl = spec.AttributeName
		// Items written before TTL was on expire too.
		for _, p := range t.base.parts {
			for _, e := range p.order {
				_, values, err := scanItem(e.rec.raw, []string{t.ttl})
				if err == nil && values[t.ttl] != nil {
					e.rec.expires = ttlOf(values[t.ttl])
					s.watch(t, e.rec)
				}
			}
		}
	}
	return map[string]any{"TimeToLiveSpecification": map[string]any{"AttributeName": spec.AttributeName, "Enabled": *spec.Enabled}}, nil
}
