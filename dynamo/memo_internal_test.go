package dynamo

import (
	"strings"
	"testing"

	"github.com/capcat/catalogue/catalog"
)

// The memo's metric ranges and job and notification pages count by their estimated bytes, not
// by their samples: a sample may carry 16 KB of dimensions, and a count of samples let the
// probe pin about 370 MB with 12 anonymous queries. Past memoBytes nothing more is kept until
// the generation moves.
func TestReadMemoBoundsKeptBytes(t *testing.T) {
	big := &catalog.Metric{CapabilityID: "CAP-A", ComponentID: "c", MetricType: catalog.MetricResource,
		Dimensions: map[string]any{"blob": strings.Repeat("x", 16<<10)}}
	ms := make([]*catalog.Metric, 100)
	for i := range ms {
		ms[i] = big
	}
	w := weight(ms)
	if w < 100*16<<10 {
		t.Fatalf("weight of 100 samples of 16 KB = %d, want at least their bytes", w)
	}
	m := newReadMemo(func() uint64 { return 1 })
	kept := 0
	for i := range 100 {
		k := pageKey{scope: "metricrange|" + strings.Repeat("k", i)}
		m.keepWeighted(1, k, &metricRange{metrics: ms}, w)
		if _, ok := m.value(1, k); ok {
			kept++
		}
	}
	if kept == 0 || kept*w > memoBytes || m.bytes > memoBytes {
		t.Errorf("kept %d ranges of %d bytes (%d in all); want some, at most %d bytes", kept, w, m.bytes, memoBytes)
	}
	// A small value still fits under the bound; a new generation starts empty.
	m.keepWeighted(1, pageKey{scope: "small"}, 1, memoBytes-m.bytes)
	if _, ok := m.value(1, pageKey{scope: "small"}); !ok {
		t.Errorf("a value that fits the rest of the bound was not kept")
	}
	m.keepWeighted(2, pageKey{scope: "next"}, &metricRange{metrics: ms}, w)
	if _, ok := m.value(2, pageKey{scope: "next"}); !ok || m.bytes != w {
		t.Errorf("after the generation moved: kept %v, %d bytes; want the one range, %d", ok, m.bytes, w)
	}
}
