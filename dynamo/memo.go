package dynamo

import (
	"slices"
	"sync"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/internal/lru"
)

// readMemo keeps, for an engine in this process that counts its writes (Options.Generation:
// the embedded default's memdyn), the last capabilities read by ID and the last capability list
// pages, all tagged with the one generation read before they were: while the engine's
// generation is still that one, nothing has been written since, and a read answers from the
// memo without a call to the engine. Any write anywhere in the engine (through this process,
// its port, a command) moves the generation on and empties the memo at the next read, so an
// answer is never older than the same read sent to the engine at that moment.
//
// What it holds is shared by the requests that read it and never changed (as the partition
// cache's entries are): the readers treat decoded entities as read-only.
type readMemo struct {
	generation func() uint64

	mu    sync.Mutex
	gen   uint64
	caps  map[string]*catalog.Capability // nil: missing (or being deleted)
	pages map[pageKey]*Page[*catalog.Capability]
	// values are the other reads it keeps (counts, component and active-job pages, the
	// counters: memoized), all read at generation valuesGen.
	values    map[pageKey]any
	valuesGen uint64
	// bytes is what keepWeighted has kept at valuesGen (estimated bytes), at most memoBytes.
	bytes int
}

// pageKey is a capability list page: its scope (index and key), size and cursor. index marks
// a page of a list index read in key order (capabilityPage), the only pages a write can carry
// (wrote): a search page (filters, orders) is chosen by what a write may change.
type pageKey struct {
	scope string
	first int
	after string
	index bool
}

// memoLimit bounds each of the memo's maps (IDs and pages asked for by clients, which may be
// anything): past it, nothing more is kept until the next write empties it.
const memoLimit = 4096

// memoBytes bounds the estimated bytes of the values kept by keepWeighted per generation
// (metric ranges, job and notification pages: what their items may make large).
const memoBytes = 16 << 20

// weight estimates the bytes a kept value holds (lru.JSONWeight) and its entry's.
func weight(v any) int { return lru.JSONWeight(v) + 256 }

func newReadMemo(generation func() uint64) *readMemo {
	if generation == nil {
		return nil
	}
	return &readMemo{generation: generation}
}

// now returns the engine's generation, to tag what is read after it.
func (m *readMemo) now() uint64 { return m.generation() }

// capabilities returns the memo's capabilities of ids at generation g: found[i] says whether
// the memo answered ids[i] (caps[i] nil then means missing).
func (m *readMemo) capabilities(g uint64, ids []string) (caps []*catalog.Capability, found []bool, all bool) {
	caps, found, all = make([]*catalog.Capability, len(ids)), make([]bool, len(ids)), true
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != g {
		return caps, found, false
	}
	for i, id := range ids {
		caps[i], found[i] = m.caps[id]
		all = all && found[i]
	}
	return caps, found, all
}

// at prepares the memo to keep what was read at generation g: false when g is older than
// what it holds (a write came in between; the newer entries stay).
func (m *readMemo) at(g uint64) bool {
	if g < m.gen {
		return false
	}
	if g > m.gen || m.caps == nil {
		m.gen, m.caps, m.pages = g, map[string]*catalog.Capability{}, map[pageKey]*Page[*catalog.Capability]{}
	}
	return true
}

// keepCapabilities records capabilities read after the generation was g.
func (m *readMemo) keepCapabilities(g uint64, ids []string, caps []*catalog.Capability) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.at(g) {
		return
	}
	for i, id := range ids {
		if len(m.caps) >= memoLimit {
			return
		}
		m.caps[id] = caps[i]
	}
}

// wrote records a write through this store that committed at the engine's generation gen and
// left capability id as `to` (from is what the write read, nil for a create). The memo then
// holds `to` at gen. When what the memo holds was read at gen-1, the write was the only one in
// between (each write advances the generation by one), and keepLists says the write changed no
// list but by replacing id's entry in place (listsKeep), what was read at gen-1 is carried to
// gen: the capabilities by ID as they were, the list index pages with id's entry replaced by
// `to`. A page whose entry for id is not `from` (read after this write, or after a later one,
// though tagged gen-1) is dropped rather than mixed, and so is every search page: its filters
// and order read fields (status, tags, owner, the update time, the exact health score) that
// listsKeep does not hold.
func (m *readMemo) wrote(gen uint64, id string, from, to *catalog.Capability, keepLists bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if keepLists && m.caps != nil && m.gen == gen-1 {
		m.gen = gen
		for k, p := range m.pages {
			if q := replaced(p, id, from, to); q != nil && k.index {
				m.pages[k] = q
			} else {
				delete(m.pages, k)
			}
		}
	} else if !m.at(gen) {
		return
	}
	if _, ok := m.caps[id]; ok || len(m.caps) < memoLimit {
		m.caps[id] = to
	}
}

// wroteAside records a write through this store, committed at the engine's generation gen, of
// items that no read the memo keeps can return (a lease: its own partition, in no index). When
// what the memo holds was read at gen-1, that write was the only one in between, so all of it
// is carried to gen as it is. Otherwise nothing changes: the next read finds the generation
// moved and empties the memo.
func (m *readMemo) wroteAside(gen uint64) {
	if m == nil || gen == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.caps != nil && m.gen == gen-1 {
		m.gen = gen
	}
	if m.values != nil && m.valuesGen == gen-1 {
		m.valuesGen = gen
	}
}

// replaced returns p with capability id's entry, when it holds `from`, replaced by `to`: p itself
// when it has no entry for id, nil when its entry is another version. p is shared by its
// readers and stays as it is.
func replaced(p *Page[*catalog.Capability], id string, from, to *catalog.Capability) *Page[*catalog.Capability] {
	for i, c := range p.Items {
		if c == nil || c.CapabilityID != id {
			continue
		}
		if c.WriteSeq != from.WriteSeq || c.Revision != from.Revision || !c.UpdatedAt.Equal(from.UpdatedAt.Time) {
			return nil
		}
		q := *p
		q.Items = slices.Clone(p.Items)
		q.Items[i] = to
		return &q
	}
	return p
}

// page returns the memo's page k at generation g.
func (m *readMemo) page(g uint64, k pageKey) *Page[*catalog.Capability] {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen != g {
		return nil
	}
	return m.pages[k]
}

// keepPage records page k read after the generation was g.
func (m *readMemo) keepPage(g uint64, k pageKey, p *Page[*catalog.Capability]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at(g) && len(m.pages) < memoLimit {
		m.pages[k] = p
	}
}

// memoized answers the read named k from the read memo while the engine is unchanged (as
// capabilityPage does), and otherwise reads it and keeps it.
func memoized[T any](s *Store, k pageKey, read func() (T, error)) (T, error) {
	return keptRead(s, k, read, nil)
}

// memoizedBytes is memoized for a value whose items may be large (jobs, notifications): it
// counts against memoBytes by its estimated bytes.
func memoizedBytes[T any](s *Store, k pageKey, read func() (T, error)) (T, error) {
	return keptRead(s, k, read, func(v T) int { return weight(v) })
}

func keptRead[T any](s *Store, k pageKey, read func() (T, error), weigh func(T) int) (T, error) {
	if s.memo == nil {
		return read()
	}
	g := s.memo.now()
	if v, ok := s.memo.value(g, k); ok {
		return v.(T), nil
	}
	v, err := read()
	if err == nil {
		w := 0
		if weigh != nil {
			w = weigh(v)
		}
		s.memo.keepWeighted(g, k, v, w)
	}
	return v, err
}

// value returns the memo's value k at generation g.
func (m *readMemo) value(g uint64, k pageKey) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.valuesGen != g || m.values == nil {
		return nil, false
	}
	v, ok := m.values[k]
	return v, ok
}

// keepWeighted records value k read after the generation was g, of weight estimated bytes
// (0 for the values whose size is bounded otherwise): past memoBytes in all, nothing more of
// weight is kept until the generation moves.
func (m *readMemo) keepWeighted(g uint64, k pageKey, v any, weight int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g < m.valuesGen {
		return
	}
	if g > m.valuesGen || m.values == nil {
		m.valuesGen, m.values, m.bytes = g, map[pageKey]any{}, 0
	}
	if len(m.values) < memoLimit && m.bytes+weight <= memoBytes {
		m.values[k] = v
		m.bytes += weight
	}
}
