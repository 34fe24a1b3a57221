package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/internal/lru"
)

// Automatic persisted queries, Apollo's protocol: a client sends
// extensions.persistedQuery {version: 1, sha256Hash} and no query; when the server does not know
// the hash it answers PERSISTED_QUERY_NOT_FOUND (message "PersistedQueryNotFound") and the client
// sends the hash with the query, which the server checks against the hash and stores. gqlgen's
// extension.AutomaticPersistedQuery speaks the protocol; PersistedQueries is its store.
//
// What a client can do to the store is bounded:
//   - Entries are content-addressed (the hash of a query must be the SHA-256 of its text), so no
//     caller can put a query under another's hash.
//   - A query is stored only when its request passed everything that runs before execution: the
//     document limits, validation, the cost limit, and the rule that GET runs queries only. A
//     document the limits refuse is never stored, and one that is (by a server with looser
//     limits sharing the store) is checked again on every use: it runs like a query sent in full.
//   - The store is bounded by bytes (query text, hash and overhead) and LRU. Callers without a
//     key register into a quarter of it of their own, so that flooding it with new queries
//     evicts only what other callers without a key registered; callers with a key keep the
//     rest. A flushed entry costs its client one more round trip, never an error.

// Error codes of automatic persisted queries, as Apollo's clients expect them.
const (
	CodePersistedQueryNotFound     = "PERSISTED_QUERY_NOT_FOUND"
	CodePersistedQueryNotSupported = "PERSISTED_QUERY_NOT_SUPPORTED"
)

// apqEntryOverhead is what an entry counts for besides its query and hash: the list element,
// the map slot and the strings' headers.
const apqEntryOverhead = 128

// DefaultPersistedQueryBytes is the default bound of the persisted-query store.
const DefaultPersistedQueryBytes = 4 << 20

// PersistedQueries stores the queries of automatic persisted queries by their SHA-256, bounded
// by bytes. One store may serve several handlers; a nil *PersistedQueries stores nothing.
type PersistedQueries struct {
	keyed, anonymous *lru.LRU[string]
}

// NewPersistedQueries returns a store that holds at most maxBytes of queries: three quarters
// for callers with a key (or every caller, without authentication), a quarter for callers
// without one. It returns nil, no store, when maxBytes is not positive.
func NewPersistedQueries(maxBytes int) *PersistedQueries {
	if maxBytes <= 0 {
		return nil
	}
	anonymous := maxBytes / 4
	// Entries are at least apqEntryOverhead bytes: the count bound never binds first.
	entries := maxBytes/apqEntryOverhead + 1
	return &PersistedQueries{keyed: lru.New[string](entries, maxBytes-anonymous), anonymous: lru.New[string](entries, anonymous)}
}

// Len returns how many queries are stored and the bytes they count for.
func (p *PersistedQueries) Len() (entries, bytes int) {
	n1, b1 := p.keyed.Len()
	n2, b2 := p.anonymous.Len()
	return n1 + n2, b1 + b2
}

// lookup returns the query stored under hash, registered by any caller.
func (p *PersistedQueries) lookup(hash string) (string, bool) {
	if q, ok := p.keyed.Get(hash); ok {
		return q, true
	}
	return p.anonymous.Get(hash)
}

// store keeps query under hash in the part of the store of a caller with or without a key.
func (p *PersistedQueries) store(hash, query string, anonymous bool) {
	part := p.keyed
	if anonymous {
		part = p.anonymous
	}
	part.Add(hash, query, len(hash)+len(query)+apqEntryOverhead)
}

// apqCache is the graphql.Cache that gqlgen's extension reads and writes for one handler. Its
// Add does not store: it notes the query in the request (requestInfo), and the transport
// commits it once the request has passed every check before execution (commitPersisted).
type apqCache struct{ store *PersistedQueries }

var _ graphql.Cache[string] = apqCache{}

// Get returns the query stored under hash.
func (c apqCache) Get(_ context.Context, hash string) (string, bool) { return c.store.lookup(hash) }

// Add notes that the request registers query under hash (gqlgen has checked the hash). Outside
// a request served by serveGraphQL it stores at once.
func (c apqCache) Add(ctx context.Context, hash, query string) {
	info := requestInfoFrom(ctx)
	if info == nil {
		c.store.store(hash, query, CallerFrom(ctx).Name == anonymousCaller)
		return
	}
	info.mu.Lock()
	info.apqHash, info.apqQuery = hash, query
	info.mu.Unlock()
}

// commitPersisted stores the query that the request of ctx registered, if any: the transport
// calls it when the request is about to execute.
func (p *PersistedQueries) commitPersisted(ctx context.Context) {
	info := requestInfoFrom(ctx)
	if p == nil || info == nil {
		return
	}
	info.mu.Lock()
	hash, query := info.apqHash, info.apqQuery
	info.mu.Unlock()
	if hash != "" {
		p.store(hash, query, CallerFrom(ctx).Name == anonymousCaller)
	}
}

// persistedQueries is the handler extension of automatic persisted queries: gqlgen's, with
// extensions.code on each of its errors, or, with no store, an answer of
// PERSISTED_QUERY_NOT_SUPPORTED to a request that sends a hash and no query (so that a client
// sends the query). It must run before the limiter, which then checks the query it found.
type persistedQueries struct {
	apq     extension.AutomaticPersistedQuery
	enabled bool
}

var (
	_ graphql.HandlerExtension          = persistedQueries{}
	_ graphql.OperationParameterMutator = persistedQueries{}
)

func newPersistedQueries(store *PersistedQueries) persistedQueries {
	if store == nil {
		return persistedQueries{}
	}
	return persistedQueries{apq: extension.AutomaticPersistedQuery{Cache: apqCache{store}}, enabled: true}
}

func (persistedQueries) ExtensionName() string { return "AutomaticPersistedQuery" }

func (p persistedQueries) Validate(s graphql.ExecutableSchema) error {
	if !p.enabled {
		return nil
	}
	return p.apq.Validate(s)
}

// MutateOperationParameters replaces a hash by its query, or registers a query under its hash.
func (p persistedQueries) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if params.Extensions["persistedQuery"] == nil {
		return nil
	}
	if !p.enabled {
		if params.Query != "" {
			return nil // the query is there: run it
		}
		err := gqlerror.Errorf("PersistedQueryNotSupported")
		errcode.Set(err, CodePersistedQueryNotSupported)
		return err
	}
	if err := checkPersistedHash(params.Extensions["persistedQuery"]); err != nil {
		return err
	}
	err := p.apq.MutateOperationParameters(ctx, params)
	if err != nil && err.Extensions["code"] == nil {
		// An extension that is not {version: 1, sha256Hash}, or a hash that is not the query's.
		errcode.Set(err, CodeBadRequest)
	}
	return err
}

// checkPersistedHash refuses, with BAD_REQUEST, a persistedQuery extension whose sha256Hash is
// not 64 lowercase hexadecimal digits: no query can have such a hash, so gqlgen's extension
// would answer PERSISTED_QUERY_NOT_FOUND and a client would send the query under it in vain.
func checkPersistedHash(ext any) *gqlerror.Error {
	m, ok := ext.(map[string]any)
	if !ok {
		return nil // gqlgen's extension refuses it
	}
	hash, ok := m["sha256Hash"].(string)
	valid := ok && len(hash) == 64
	for i := 0; valid && i < len(hash); i++ {
		c := hash[i]
		valid = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
	}
	if valid {
		return nil
	}
	err := gqlerror.Errorf("persistedQuery.sha256Hash must be the SHA-256 of the query as 64 lowercase hexadecimal digits")
	errcode.Set(err, CodeBadRequest)
	return err
}
