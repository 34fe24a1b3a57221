// Package clienttest starts the real GraphQL handler on the embedded DynamoDB stand-in behind a
// loopback HTTP server, for the tests of the client setups in clients/ (docs/clients.md).
package clienttest

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/graph"
)

// Server is a running catalogue with an empty table: URL is the GraphQL endpoint.
type Server struct {
	// URL is the address of POST /graphql, e.g. http://127.0.0.1:40123/graphql.
	URL string
	// AdminKey and DevopsKey are API keys of those roles; a request without a key is a viewer.
	AdminKey, DevopsKey string
	// Env is the DynamoDB stand-in with its request counter.
	Env *dynamotest.Env
}

// Start serves graph.NewHandler over an empty table on a loopback httptest server, with an
// admin key and a devops key; both close when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	env := dynamotest.New(tb, dynamotest.Options{})
	s := &Server{AdminKey: graph.NewAPIKey(), DevopsKey: graph.NewAPIKey(), Env: env}
	keys := &graph.KeyRing{}
	keys.Add(s.AdminKey, graph.RoleAdmin, "client-test-admin")
	keys.Add(s.DevopsKey, graph.RoleDevops, "client-test-devops")
	h := graph.NewHandler(env.Store, graph.Options{
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth:     &graph.Auth{Keys: keys, Anonymous: graph.RoleViewer},
		Deadline: time.Minute,
	})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	s.URL = srv.URL + "/graphql"
	return s
}
