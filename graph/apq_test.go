package graph_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/capcat/catalogue/graph"
)

// sha256Hex is what Apollo's clients send as sha256Hash: the lower-case hex SHA-256 of the query.
func sha256Hex(query string) string {
	sum := sha256.Sum256([]byte(query))
	return hex.EncodeToString(sum[:])
}

// persisted is the extensions entry of an automatic persisted query.
func persisted(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

// apqRequest is one request of the protocol: a hash, with the query or without ("").
type apqRequest struct {
	method, key, query, hash string
	vars                     map[string]any
}

// send serves r on h's handler and decodes the answer.
func (h *harness) send(tb testing.TB, r apqRequest) *gqlResponse {
	tb.Helper()
	h.env.Counter.Reset()
	var req *http.Request
	if r.method == http.MethodGet {
		v := url.Values{}
		if r.query != "" {
			v.Set("query", r.query)
		}
		ext, _ := json.Marshal(persisted(r.hash))
		v.Set("extensions", string(ext))
		if r.vars != nil {
			vars, _ := json.Marshal(r.vars)
			v.Set("variables", string(vars))
		}
		req = httptest.NewRequest(http.MethodGet, "/graphql?"+v.Encode(), nil)
	} else {
		body := map[string]any{"extensions": persisted(r.hash), "variables": r.vars}
		if r.query != "" {
			body["query"] = r.query
		}
		b, _ := json.Marshal(body)
		req = httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
	}
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	w := httptest.NewRecorder()
	h.handler.ServeHTTP(w, req)
	resp := &gqlResponse{Status: w.Code, Body: w.Body.String(), Header: w.Header()}
	if err := json.Unmarshal(w.Body.Bytes(), resp); err != nil {
		tb.Fatalf("decode response %q: %v", w.Body.String(), err)
	}
	if resp.Extensions.DynamoDB.Operations["TransactWriteItems"] > 0 {
		h.wrote = true
	}
	return resp
}

const apqView = `query View($id: ID!) { capability(id: $id) { id name components { componentId name } } }`

// The protocol through the real handler: a hash the server does not know is
// PERSISTED_QUERY_NOT_FOUND and costs no DynamoDB request; the hash with its query runs and
// registers it; the hash alone then answers what the full query answers, for the same DynamoDB
// requests, over POST and GET.
func TestPersistedQueryProtocol(t *testing.T) {
	store := graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes)
	h := newHarnessWith(t, func(o *graph.Options) { o.PersistedQueries = store })
	hash := sha256Hex(apqView)
	vars := map[string]any{"id": "CAP-ALERT-MGT-001"}

	miss := h.send(t, apqRequest{hash: hash, vars: vars})
	if miss.code(0) != graph.CodePersistedQueryNotFound || miss.Errors[0].Message != "PersistedQueryNotFound" {
		t.Fatalf("unknown hash: %s, want PERSISTED_QUERY_NOT_FOUND with message PersistedQueryNotFound", miss.Body)
	}
	if miss.Extensions.DynamoDB.Requests != 0 || miss.Data != nil {
		t.Errorf("unknown hash cost %d DynamoDB requests, data %s; want 0 and no data", miss.Extensions.DynamoDB.Requests, miss.Data)
	}

	full := h.ok(t, apqView, vars, nil)
	register := h.send(t, apqRequest{query: apqView, hash: hash, vars: vars})
	if len(register.Errors) > 0 || string(register.Data) != string(full.Data) {
		t.Fatalf("hash with query = %s, want %s", register.Body, full.Data)
	}
	if n, _ := store.Len(); n != 1 {
		t.Fatalf("after registering, the store holds %d queries, want 1", n)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		hit := h.send(t, apqRequest{method: method, hash: hash, vars: vars})
		if len(hit.Errors) > 0 || string(hit.Data) != string(full.Data) {
			t.Errorf("%s hash alone = %s, want %s", method, hit.Body, full.Data)
		}
		if hit.Extensions.DynamoDB.Requests != full.Extensions.DynamoDB.Requests {
			t.Errorf("%s hash alone cost %d DynamoDB requests, the full query %d", method, hit.Extensions.DynamoDB.Requests, full.Extensions.DynamoDB.Requests)
		}
	}

	// A query registered over GET is stored too.
	other := `{ capabilities(first: 1) { edges { node { id } } } }`
	if r := h.send(t, apqRequest{method: http.MethodGet, query: other, hash: sha256Hex(other)}); len(r.Errors) > 0 {
		t.Fatalf("GET registration: %s", r.Body)
	}
	if r := h.send(t, apqRequest{method: http.MethodGet, hash: sha256Hex(other)}); len(r.Errors) > 0 {
		t.Errorf("GET hash registered over GET: %s", r.Body)
	}
}

// A hash that is not the query's, or an extension that is not {version: 1, sha256Hash}, is
// refused with a code, runs nothing and stores nothing.
func TestPersistedQueryRefusals(t *testing.T) {
	store := graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes)
	h := newHarnessWith(t, func(o *graph.Options) { o.PersistedQueries = store })
	wrong := h.send(t, apqRequest{query: `{ __typename }`, hash: sha256Hex(`{ capabilities { edges { node { id } } } }`)})
	if wrong.code(0) != graph.CodeBadRequest || wrong.Data != nil {
		t.Errorf("wrong hash: %s, want BAD_REQUEST and no data", wrong.Body)
	}
	if n, _ := store.Len(); n != 0 {
		t.Errorf("a query under a wrong hash was stored (%d entries)", n)
	}
	for name, ext := range map[string]any{
		"version 2":               map[string]any{"version": 2, "sha256Hash": sha256Hex(`{ __typename }`)},
		"not object":              "abc",
		"hash a number":           map[string]any{"version": 1, "sha256Hash": 12345},
		"hash not hex":            map[string]any{"version": 1, "sha256Hash": strings.Repeat("z", 64)},
		"hash too short":          map[string]any{"version": 1, "sha256Hash": "abc"},
		"no version":              map[string]any{"sha256Hash": sha256Hex(`{ __typename }`)},
		"version a string":        map[string]any{"version": "1", "sha256Hash": sha256Hex(`{ __typename }`)},
		"hash a number, no query": map[string]any{"version": 1, "sha256Hash": 12345, "noQuery": true},
		"hash not hex, no query":  map[string]any{"version": 1, "sha256Hash": strings.Repeat("z", 64), "noQuery": true},
		"no version, no query":    map[string]any{"sha256Hash": sha256Hex(`{ __typename }`), "noQuery": true},
	} {
		body := map[string]any{"query": `{ __typename }`, "extensions": map[string]any{"persistedQuery": ext}}
		if m, ok := ext.(map[string]any); ok && m["noQuery"] == true {
			delete(m, "noQuery")
			delete(body, "query")
		}
		b, _ := json.Marshal(body)
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, req)
		var resp gqlResponse
		_ = json.Unmarshal(w.Body.Bytes(), &resp)
		if resp.code(0) != graph.CodeBadRequest {
			t.Errorf("%s: %s, want BAD_REQUEST", name, w.Body.String())
		}
	}

	// Without a store, a hash alone is PERSISTED_QUERY_NOT_SUPPORTED (Apollo's clients then
	// send the query), and a hash with its query runs the query.
	off := newHarness(t)
	if r := off.send(t, apqRequest{hash: sha256Hex(`{ __typename }`)}); r.code(0) != graph.CodePersistedQueryNotSupported {
		t.Errorf("hash alone without a store: %s, want PERSISTED_QUERY_NOT_SUPPORTED", r.Body)
	}
	if r := off.send(t, apqRequest{query: `{ __typename }`, hash: sha256Hex(`{ __typename }`)}); len(r.Errors) > 0 {
		t.Errorf("hash with query without a store: %s", r.Body)
	}
}

// Mutations: a GET never runs one, by hash or not, and never registers one; over POST a
// registered mutation runs by its hash, as Apollo's clients send it.
func TestPersistedQueryMutations(t *testing.T) {
	store := graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes)
	h := newHarnessWith(t, func(o *graph.Options) { o.PersistedQueries = store })
	hash := sha256Hex(createCap)
	in := func(id string) map[string]any {
		return map[string]any{"in": map[string]any{"capabilityId": id, "name": "Test " + id, "businessDomain": "testing", "priority": "HIGH"}}
	}
	get := h.send(t, apqRequest{method: http.MethodGet, query: createCap, hash: hash, vars: in("CAP-APQ-001")})
	if get.Status != http.StatusMethodNotAllowed || get.code(0) != graph.CodeMethodNotAllowed {
		t.Fatalf("GET mutation with hash: HTTP %d %s, want 405 METHOD_NOT_ALLOWED", get.Status, get.Body)
	}
	if n, _ := store.Len(); n != 0 {
		t.Fatalf("a mutation sent with GET was registered (%d entries)", n)
	}
	if r := h.send(t, apqRequest{query: createCap, hash: hash, vars: in("CAP-APQ-001")}); len(r.Errors) > 0 {
		t.Fatalf("POST mutation with hash: %s", r.Body)
	}
	byHash := h.send(t, apqRequest{hash: hash, vars: in("CAP-APQ-002")})
	if len(byHash.Errors) > 0 || !strings.Contains(string(byHash.Data), `"CAP-APQ-002"`) {
		t.Fatalf("POST mutation by hash: %s", byHash.Body)
	}
	if n := byHash.Extensions.DynamoDB.Operations["TransactWriteItems"]; n != 1 {
		t.Errorf("mutation by hash made %d TransactWriteItems, want 1", n)
	}
	if r := h.send(t, apqRequest{method: http.MethodGet, hash: hash, vars: in("CAP-APQ-003")}); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET of a registered mutation's hash: HTTP %d %s, want 405", r.Status, r.Body)
	}
}

// A document the limits refuse is checked when it comes from the store as when it comes in
// full: registered by a server with looser limits sharing the store, it is refused by hash,
// before any DynamoDB request; and a server does not store what its own limits refuse.
func TestPersistedQueryLimits(t *testing.T) {
	store := graph.NewPersistedQueries(graph.DefaultPersistedQueryBytes)
	var aliases strings.Builder
	aliases.WriteString("{ ")
	for i := range graph.DefaultLimits.MaxAliases + 5 {
		fmt.Fprintf(&aliases, "a%d: capability(id: \"CAP-ALERT-MGT-001\") { id } ", i)
	}
	aliases.WriteString("}")
	hostile := aliases.String()
	hash := sha256Hex(hostile)

	strict := newHarnessWith(t, func(o *graph.Options) { o.PersistedQueries = store })
	if r := strict.send(t, apqRequest{query: hostile, hash: hash}); r.code(0) != graph.CodeAliasLimit {
		t.Fatalf("hostile document with hash: %s, want %s", r.Body, graph.CodeAliasLimit)
	}
	if r := strict.send(t, apqRequest{hash: hash}); r.code(0) != graph.CodePersistedQueryNotFound {
		t.Fatalf("a document refused by the limits was stored: %s", r.Body)
	}

	loose := newHarnessWith(t, func(o *graph.Options) {
		o.PersistedQueries = store
		o.Limits.MaxAliases = 1000
	})
	if r := loose.send(t, apqRequest{query: hostile, hash: hash}); len(r.Errors) > 0 {
		t.Fatalf("registering under looser limits: %s", r.Body)
	}
	byHash := strict.send(t, apqRequest{hash: hash})
	if byHash.code(0) != graph.CodeAliasLimit || byHash.Extensions.DynamoDB.Requests != 0 {
		t.Errorf("hostile document by hash: %s (%d DynamoDB requests), want %s and none", byHash.Body, byHash.Extensions.DynamoDB.Requests, graph.CodeAliasLimit)
	}
}

// The store holds at most its bytes, least recently used out first, and callers without a key
// register into a part of their own: flooding it evicts none of what callers with a key
// registered.
func TestPersistedQueryBounds(t *testing.T) {
	const bound = 64 << 10 // 16 KiB for callers without a key
	store := graph.NewPersistedQueries(bound)
	h := newHarnessWith(t, func(o *graph.Options) {
		o.PersistedQueries = store
		o.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("ui-key")+" ui"), Anonymous: graph.RoleViewer}
	})
	// Each query is about 4 KiB of text: a comment pads it.
	query := func(i int) string { return fmt.Sprintf("# %s\n{ q%d: __typename }", strings.Repeat("x", 4<<10), i) }

	keyed := `{ capabilities(first: 2) { edges { node { id } } } }`
	if r := h.send(t, apqRequest{key: "ui-key", query: keyed, hash: sha256Hex(keyed)}); len(r.Errors) > 0 {
		t.Fatalf("keyed registration: %s", r.Body)
	}
	for i := range 40 {
		if r := h.send(t, apqRequest{query: query(i), hash: sha256Hex(query(i))}); len(r.Errors) > 0 {
			t.Fatalf("anonymous registration %d: %s", i, r.Body)
		}
		if _, b := store.Len(); b > bound {
			t.Fatalf("after %d registrations the store holds %d bytes; the bound is %d", i+1, b, bound)
		}
	}
	if r := h.send(t, apqRequest{hash: sha256Hex(query(0))}); r.code(0) != graph.CodePersistedQueryNotFound {
		t.Errorf("the least recently used query was not evicted: %s", r.Body)
	}
	if r := h.send(t, apqRequest{hash: sha256Hex(query(39))}); len(r.Errors) > 0 {
		t.Errorf("the last query registered was evicted: %s", r.Body)
	}
	if r := h.send(t, apqRequest{hash: sha256Hex(keyed)}); len(r.Errors) > 0 {
		t.Errorf("anonymous registrations evicted a keyed caller's query: %s", r.Body)
	}
	// A keyed caller's registrations use the rest of the store, bounded the same way.
	for i := range 40 {
		h.send(t, apqRequest{key: "ui-key", query: query(100 + i), hash: sha256Hex(query(100 + i))})
	}
	if _, b := store.Len(); b > bound {
		t.Errorf("the store holds %d bytes; the bound is %d", b, bound)
	}
	if r := h.send(t, apqRequest{hash: sha256Hex(query(39))}); len(r.Errors) > 0 {
		t.Errorf("keyed registrations evicted an anonymous caller's query: %s", r.Body)
	}
}
