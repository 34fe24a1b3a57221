package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/capcat/catalogue/graph"
)

// apqBytes is what automatic persisted queries save on one operation's requests: the request
// body with the query, with its hash only, and the one that registers it (both).
type apqBytes struct {
	Full, Hashed, Register int
}

// persistedBodies returns the operation's request body with its query's hash and no query, and
// with both (the request that registers it).
func (op *operation) persistedBodies() (hashed, register []byte) {
	sum := sha256.Sum256([]byte(op.Query))
	ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
	hashed, _ = json.Marshal(map[string]any{"extensions": ext, "variables": op.Vars})
	register, _ = json.Marshal(map[string]any{"query": op.Query, "extensions": ext, "variables": op.Vars})
	return hashed, register
}

// persisted runs op through the handler as an automatic persisted query, as the explorer sends
// it: the hash alone, the hash with the query when the server answers PERSISTED_QUERY_NOT_FOUND,
// then the hash alone again, whose data must be the full query's (summary). It returns the
// sizes of the request bodies.
func (h *harness) persisted(ctx context.Context, op *operation, summary string) (*apqBytes, error) {
	hashed, register := op.persistedBodies()
	post := func(body []byte) ([]byte, error) {
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+h.apiKey)
		rec := httptest.NewRecorder()
		h.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("%s as a persisted query: status %d: %.600s", op.Name, rec.Code, rec.Body.Bytes())
		}
		return rec.Body.Bytes(), nil
	}
	out, err := post(hashed)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(out, []byte(graph.CodePersistedQueryNotFound)) {
		if _, err := post(register); err != nil {
			return nil, err
		}
		if out, err = post(hashed); err != nil {
			return nil, err
		}
	}
	var resp struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, err
	}
	if len(resp.Errors) > 0 {
		return nil, fmt.Errorf("%s by its hash: %.600s", op.Name, out)
	}
	got, err := op.Summarize(resp.Data)
	if err != nil {
		return nil, fmt.Errorf("%s by its hash: %w", op.Name, err)
	}
	if got != summary {
		return nil, fmt.Errorf("%s by its hash read other data than the full query:\n  full:   %s\n  hashed: %s", op.Name, summary, got)
	}
	return &apqBytes{Full: len(op.body()), Hashed: len(hashed), Register: len(register)}, nil
}

// writePersisted writes the request bytes that automatic persisted queries save.
func (r *report) writePersisted(p func(string, ...any)) {
	p("## Request bytes with automatic persisted queries")
	p("")
	p("The server keeps automatic persisted queries (Apollo's protocol, `-apq-cache-bytes`): a client that sent a query once with its SHA-256 sends the hash alone afterwards, as the explorer does. Each operation was run that way through the handler (the hash alone, the hash with the query on PERSISTED_QUERY_NOT_FOUND, the hash alone again) and its data compared with the full query's. Sizes are the JSON request bodies as the benchmark sends them (compact, no whitespace added); the response is the same either way. The first use of a document costs a hash-only request (answered PERSISTED_QUERY_NOT_FOUND) plus the registering one; every later use, by any client, the hash only.")
	p("")
	p("| operation | full request, bytes | hash only, bytes | saved per request | registering request (query + hash), bytes |")
	p("|---|---:|---:|---:|---:|")
	var full, hashed int
	for _, x := range r.results {
		a := x.APQ
		if a == nil {
			continue
		}
		full, hashed = full+a.Full, hashed+a.Hashed
		p("| %s | %d | %d | %d (%.0f%%) | %d |", x.Op.Name, a.Full, a.Hashed, a.Full-a.Hashed, 100*float64(a.Full-a.Hashed)/float64(a.Full), a.Register)
	}
	if full > 0 {
		p("| all of the above, once each | %d | %d | %d (%.0f%%) | |", full, hashed, full-hashed, 100*float64(full-hashed)/float64(full))
	}
	p("")
}
