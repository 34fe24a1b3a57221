//go:build tools

// Package tools pins the code generator: `go run github.com/99designs/gqlgen generate`.
package tools

import (
	_ "github.com/99designs/gqlgen"
)
