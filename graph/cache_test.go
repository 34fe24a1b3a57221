package graph

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// The document cache holds at most its bytes and entries, least recently used out first, and
// never a document too large to be worth keeping: a client sending new 1 MiB documents once
// pinned a thousand of them (gigabytes).
func TestDocCacheBounded(t *testing.T) {
	ctx := context.Background()
	c := newDocCache(10, 64<<10)
	doc := &ast.QueryDocument{}
	big := strings.Repeat("x", 2<<10) // over 64 KiB / 64
	c.Add(ctx, big, doc)
	if _, ok := c.Get(ctx, big); ok {
		t.Error("a document over the per-entry bound was cached")
	}
	// A short text whose syntax tree is large weighs what its tree weighs.
	heavy := &ast.QueryDocument{Operations: ast.OperationList{{SelectionSet: ast.SelectionSet{&ast.Field{Name: "f",
		Arguments: ast.ArgumentList{{Name: "a", Value: &ast.Value{Kind: ast.ListValue, Children: make(ast.ChildValueList, 100)}}}}}}}}
	for i := range heavy.Operations[0].SelectionSet[0].(*ast.Field).Arguments[0].Value.Children {
		heavy.Operations[0].SelectionSet[0].(*ast.Field).Arguments[0].Value.Children[i] = &ast.ChildValue{Value: &ast.Value{Kind: ast.IntValue, Raw: "1"}}
	}
	c.Add(ctx, "{ f(a: [1 1 1 ...]) }", heavy)
	if _, ok := c.Get(ctx, "{ f(a: [1 1 1 ...]) }"); ok {
		t.Error("a document whose tree is over the per-entry bound was cached")
	}
	q := func(i int) string { return fmt.Sprintf("%0900d", i) }
	for i := range 100 {
		c.Add(ctx, q(i), doc)
		if n, b := c.Len(); n > 10 || b > 64<<10 {
			t.Fatalf("after %d adds: %d entries, %d bytes", i+1, n, b)
		}
	}
	if _, ok := c.Get(ctx, q(0)); ok {
		t.Error("the least recently used entry survived")
	}
	if _, ok := c.Get(ctx, q(99)); !ok {
		t.Error("the newest entry is gone")
	}
	// A read makes an entry recent: it outlives newer ones that were not read.
	c.Get(ctx, q(90))
	for i := 100; i < 109; i++ {
		c.Add(ctx, q(i), doc)
	}
	if _, ok := c.Get(ctx, q(90)); !ok {
		t.Error("an entry read recently was evicted")
	}
	if _, ok := c.Get(ctx, q(91)); ok {
		t.Error("an entry not read since was kept over newer ones")
	}
}
