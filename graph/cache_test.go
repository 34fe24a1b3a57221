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
