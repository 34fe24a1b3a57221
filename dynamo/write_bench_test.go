package dynamo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/sample"
)

// BenchmarkEmbeddedWrite is one description-only updateCapability (bench's touchMutation,
// without the GraphQL around it) on the embedded default as server.go builds it: a Store with
// the read memo and a commit subscriber over dynamo.StartEmbedded's client, the sample
// catalogue loaded. Every operation reads the partition's state, plans the write and commits
// it as one TransactWriteItems served by memdyn in process. Profile it with -cpuprofile.
func BenchmarkEmbeddedWrite(b *testing.B) {
	emb, err := dynamo.StartEmbedded(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	ctx := context.Background()
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb}})
	if err != nil {
		b.Fatal(err)
	}
	commits := 0
	store := dynamo.New(client, dynamo.Options{CursorSecret: []byte("s"), Generation: emb.Generation,
		OnCommit: func(dynamo.Commit) { commits++ }})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		b.Fatal(err)
	}
	if _, err := store.BulkLoad(ctx, sample.Catalogue(time.Now()), 4); err != nil {
		b.Fatal(err)
	}
	const id = "CAP-ALERT-MGT-001"
	caps, err := store.CapabilitiesByIDConsistent(ctx, []string{id})
	if err != nil || caps[0] == nil {
		b.Fatalf("read %s: %v, %v", id, caps, err)
	}
	rev := caps[0].Revision
	b.ReportAllocs()
	for b.Loop() {
		c, err := store.UpdateCapability(ctx, id, rev, func(c *catalog.Capability) error {
			c.Description = fmt.Sprintf("touched by the benchmark, revision %d", rev+1)
			return nil
		}, dynamo.Idempotency{})
		if err != nil {
			b.Fatal(err)
		}
		rev = c.Revision
	}
	if commits != b.N {
		b.Fatalf("%d commits reported for %d writes", commits, b.N)
	}
}
