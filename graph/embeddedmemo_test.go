package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/sample"
)

// Two servers on the embedded default's memdyn, each with its partition cache: "here" as
// server.go builds it (its client calls memdyn in process, its store has the read memo), and
// "there" reaching the same memdyn through its port, as a second instance does. A warm view or
// list here costs no DynamoDB request, nor does one right after a write here; a write through
// either server is seen here at once; and views, lists and writes at once share the memo's and
// the cache's entities without a race.
func TestEmbeddedMemoAcrossInstances(t *testing.T) {
	ctx := context.Background()
	emb, err := dynamo.StartEmbedded(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	inProcess, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb}})
	if err != nil {
		t.Fatal(err)
	}
	port, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key}})
	if err != nil {
		t.Fatal(err)
	}
	// The cache here follows the store's own writes, as server.go wires it.
	cacheHere := graph.NewPartitionCache(graph.DefaultCacheBytes, nil)
	storeHere := dynamo.New(inProcess, dynamo.Options{CursorSecret: []byte("s"), Generation: emb.Generation, OnCommit: cacheHere.Retag})
	storeThere := dynamo.New(port, dynamo.Options{CursorSecret: []byte("s")})
	if err := storeHere.CreateTable(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := storeHere.BulkLoad(ctx, sample.Catalogue(testNow), 4); err != nil {
		t.Fatal(err)
	}
	opts := func(cache *graph.PartitionCache) graph.Options {
		return graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }, PartitionCache: cache}
	}
	here, there := graph.NewHandler(storeHere, opts(cacheHere)), graph.NewHandler(storeThere, opts(graph.NewPartitionCache(graph.DefaultCacheBytes, nil)))
	list := `{ capabilities(first: 20) { nodes { name description components { name dependsOn { name } } dependencies { source { name } } rules { name } } } }`
	view := `{ capability(id: "CAP-ALERT-MGT-001") { description revision components { componentId } dependencies { source { name } } rules { name } } }`

	serve(t, here, view, nil)
	serve(t, here, list, nil)
	for _, q := range []string{view, list} {
		if r := serve(t, here, q, nil); r.Extensions.DynamoDB.Requests != 0 {
			t.Errorf("warm %.40s…: %d DynamoDB requests, want 0", q, r.Extensions.DynamoDB.Requests)
		}
	}

	update := `mutation($rev: Int!, $d: String!) { updateCapability(id: "CAP-ALERT-MGT-001", expectedRevision: $rev, input: {description: $d}) { revision } }`
	var v struct {
		Capability struct {
			Description string
			Revision    int
		}
	}
	decode(t, serve(t, here, view, nil), &v)
	serve(t, there, update, map[string]any{"rev": v.Capability.Revision, "d": "written there"})
	r := serve(t, here, view, nil)
	decode(t, r, &v)
	if v.Capability.Description != "written there" || r.Extensions.DynamoDB.Requests != 3 {
		t.Errorf("view here after a write there: %q, %d requests; want the new description, 3 (metadata, then both ranges)", v.Capability.Description, r.Extensions.DynamoDB.Requests)
	}
	if r := serve(t, here, list, nil); !strings.Contains(r.Body, "written there") {
		t.Error("list here after a write there shows the old description")
	}

	// A write here: the list and the view here right after it cost no request (the memo's
	// pages and the cache's ranges follow the server's own write) and answer what there does.
	decode(t, serve(t, here, view, nil), &v)
	serve(t, here, update, map[string]any{"rev": v.Capability.Revision, "d": "written here"})
	for _, q := range []string{list, view} {
		r := serve(t, here, q, nil)
		if r.Extensions.DynamoDB.Requests != 0 || !strings.Contains(r.Body, "written here") {
			t.Errorf("%.40s… here after a write here: %d DynamoDB requests, new description %v; want 0, true",
				q, r.Extensions.DynamoDB.Requests, strings.Contains(r.Body, "written here"))
		}
		if want := serve(t, there, q, nil); string(want.Data) != string(r.Data) {
			t.Errorf("%.40s… here after a write here differs from there:\n%s\n%s", q, r.Data, want.Data)
		}
	}

	// Views and lists here while both servers add components.
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for range 5 {
				serve(t, here, view, nil)
				serve(t, here, list, nil)
			}
		})
		wg.Go(func() {
			h := here
			if w%2 == 1 {
				h = there
			}
			serve(t, h, addComp, map[string]any{"cap": "CAP-ALERT-MGT-001", "in": map[string]any{"componentId": fmt.Sprintf("memo-%d", w), "name": "n", "componentType": "cache", "order": 80 + w}})
		})
	}
	wg.Wait()
	got := componentIDs(t, serve(t, here, view, nil))
	for w := range 4 {
		if !slices.Contains(got, fmt.Sprintf("memo-%d", w)) {
			t.Errorf("view here after the writes = %v, want memo-%d in it", got, w)
		}
	}
}

// decode unmarshals a response's data into v.
func decode(t *testing.T, r *gqlResponse, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode %s: %v", r.Data, err)
	}
}
