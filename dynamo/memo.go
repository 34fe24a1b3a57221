package dynamo

import (
	"sync"

	"github.com/capcat/catalogue/catalog"
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
	// counts are totalCounts by query scope (memoCount, in search.go).
	counts map[string]int
	// values are the other reads it keeps (component and active-job pages and counts:
	// memoized in componentindex.go), all read at generation valuesGen.
	values    map[pageKey]any
	valuesGen uint64
}

// pageKey is a capability list page: its scope (index and key), size and cursor.
type pageKey struct {
	scope string
	first int
	after string
}

// memoLimit bounds each of the memo's maps (IDs and pages asked for by clients, which may be
// anything): past it, nothing more is kept until the next write empties it.
const memoLimit = 4096

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
		m.counts = map[string]int{}
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
