// Package web serves the browser side of the catalogue: the explorer at / and GraphiQL at
// /graphiql, embedded in the binary.
package web

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql/playground"
)

// Options configure the web surface.
type Options struct {
	// Endpoint is the GraphQL endpoint path, normally /graphql.
	Endpoint string
	// APIKey, when set, is sent by the pages as a bearer token (the embedded default's key).
	APIKey string
}

// Handler returns the explorer at / and GraphiQL at /graphiql.
func Handler(opts Options) http.Handler {
	if opts.Endpoint == "" {
		opts.Endpoint = "/graphql"
	}
	mux := http.NewServeMux()
	mux.Handle("GET /graphiql", playground.Handler("Capability Catalogue", opts.Endpoint))
	mux.Handle("GET /{$}", playground.Handler("Capability Catalogue", opts.Endpoint))
	return mux
}
