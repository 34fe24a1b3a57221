package blob

import "sync"

// listMemo keeps, for an S3 in this process that counts its writes (Options.Generation: the
// embedded default's), the listings a Store read (a job's artifacts, a component's archived
// hours), all tagged with the one generation read before they were: while the generation is
// still that one, nothing was written since, and the same listing is answered from the memo
// without a request (and without spending the request's budget). Any write (through this
// server, a presigned upload, an archive run) moves the generation and empties the memo at the
// next listing, so an answer is never older than the same listing sent at that moment. What it
// holds is shared by its readers and never changed.
type listMemo struct {
	generation func() uint64

	mu      sync.Mutex
	gen     uint64
	entries map[string]any
}

// listMemoLimit bounds the listings kept per generation (their keys come from clients).
const listMemoLimit = 4096

func newListMemo(generation func() uint64) *listMemo {
	if generation == nil {
		return nil
	}
	return &listMemo{generation: generation}
}

// listed returns the listing k, from the memo while nothing was written since it was read,
// else from read, and keeps what read returns. A nil memo always reads.
func listed[T any](m *listMemo, k string, read func() (T, error)) (T, error) {
	if m == nil {
		return read()
	}
	g := m.generation()
	m.mu.Lock()
	v, ok := m.entries[k]
	ok = ok && m.gen == g
	m.mu.Unlock()
	if ok {
		return v.(T), nil
	}
	out, err := read()
	if err != nil {
		return out, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if g < m.gen {
		return out, nil
	}
	if g > m.gen || m.entries == nil {
		m.gen, m.entries = g, map[string]any{}
	}
	if len(m.entries) < listMemoLimit {
		m.entries[k] = out
	}
	return out, nil
}
