package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// hostileSizes are the document sizes of the hostile benchmark and test: just under the
// parser's token limit (the most an attacker gets through it), and about 1 MiB, the largest body.
var hostileSizes = []struct {
	name   string
	tokens int
}{{"15k-tokens", 14_990}, {"1MiB", 120_000}}

// hostileBody returns the JSON body of a document, and false when it is over the body limit.
func hostileBody(query string) ([]byte, bool) {
	body, _ := json.Marshal(map[string]any{"query": query})
	return body, len(body) <= 1<<20
}

// BenchmarkHostileDocuments reports what the server spends on each hostile document until it
// refuses it; each should cost a small fraction of what validating it would. Run with -benchtime=10x.
func BenchmarkHostileDocuments(b *testing.B) {
	h := newHarness(b)
	for _, size := range hostileSizes {
		for _, doc := range hostileDocuments(size.tokens) {
			body, ok := hostileBody(doc.query)
			if !ok {
				continue
			}
			// Each iteration's document differs by a leading comment, so that none is served
			// from the cache of validated documents: an attacker varies the document too.
			prefix := len(`{"query":"`)
			b.Run(fmt.Sprintf("%s/%s/%dKB", doc.name, size.name, len(body)>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				i := 0
				for b.Loop() {
					i++
					unique := fmt.Appendf(append([]byte(nil), body[:prefix]...), `#%d\n`, i)
					unique = append(unique, body[prefix:]...)
					req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(unique))
					req.Header.Set("Content-Type", "application/json")
					h.handler.ServeHTTP(httptest.NewRecorder(), req)
				}
			})
		}
	}
}
