package main

import (
	"bytes"
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/dynamo/dynamotest"
	"github.com/capcat/catalogue/sample"
)

// `check` reports metric samples close to their TTL that no archive took (the archive deletes
// what it archived, so they are in no archive), and `check -repair` archives them before
// DynamoDB expires them unread.
func TestCheckFindsAndArchivesSamplesNearExpiry(t *testing.T) {
	ctx := context.Background()
	start := time.Now().UTC().Truncate(time.Minute)
	var offset atomic.Int64
	clock := func() time.Time { return start.Add(time.Duration(offset.Load())) }
	env := dynamotest.New(t, dynamotest.Options{Now: clock})
	env.RequireTransactions(t)
	if _, err := env.Store.BulkLoad(ctx, sample.Catalogue(start), 4); err != nil {
		t.Fatal(err)
	}
	objects, emb, err := blob.OpenEmbedded(ctx, blob.Options{Now: clock, MinArchiveAge: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	archiver := archive.New(env.Store, objects, archive.Options{})
	check := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := runCheck(ctx, args, &out, env.Store, archiver)
		return out.String(), err
	}
	if out, err := check(); err != nil {
		t.Fatalf("check of a fresh catalogue: %v\n%s", err, out)
	}
	offset.Store(int64(85 * 24 * time.Hour)) // the sample's samples now expire within 5 days
	out, err := check()
	if err == nil || !strings.Contains(out, "finding   unarchived-samples CAP-") {
		t.Fatalf("check 85 days on = %v\n%s", err, out)
	}
	out, err = check("-repair")
	if err != nil || !strings.Contains(out, "repaired  unarchived-samples") || !strings.Contains(out, "archived  ") {
		t.Fatalf("check -repair = %v\n%s", err, out)
	}
	if out, err := check(); err != nil {
		t.Errorf("check after the repair: %v\n%s", err, out)
	}
}
