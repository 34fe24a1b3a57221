//go:build tools

// Package tools pins the code generators: `go run github.com/99designs/gqlgen generate` for the
// server and `go run github.com/Khan/genqlient` for the Go client in clients/go.
package tools

import (
	_ "github.com/99designs/gqlgen"
	_ "github.com/Khan/genqlient"
)
