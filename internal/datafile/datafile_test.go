package datafile_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/datafile"
	"github.com/capcat/catalogue/sample"
)

var sampleNow = time.Date(2025, 11, 22, 14, 32, 0, 0, time.UTC)

// stores is an embedded DynamoDB and S3 watched by a data file.
type stores struct {
	file   *datafile.File
	table  *dynamo.Store
	client *dynamodb.Client
	s3     *blob.Embedded
	blobs  *blob.Store
}

// open starts the embedded pair watched by the data file at path, loading it when it exists.
func open(tb testing.TB, path string) *stores {
	tb.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f, err := datafile.Open(path, datafile.Options{Logger: quiet, Delay: 10 * time.Millisecond})
	if err != nil {
		tb.Fatalf("Open(%s) = %v", path, err)
	}
	emb, err := dynamo.StartEmbedded(f.WatchDynamoDB)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = emb.Close() })
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key}})
	if err != nil {
		tb.Fatal(err)
	}
	table := dynamo.New(client, dynamo.Options{Now: func() time.Time { return sampleNow }, Logger: quiet})
	if err := table.CreateTable(ctx, time.Minute); err != nil {
		tb.Fatal(err)
	}
	objects, s3, err := blob.OpenEmbeddedWrapped(ctx, blob.Options{Logger: quiet}, f.WatchS3)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s3.Close() })
	f.Bind(table, s3)
	if f.Exists() {
		if _, err := f.Load(ctx); err != nil {
			tb.Fatalf("Load = %v", err)
		}
	}
	tb.Cleanup(func() { _ = f.Close() })
	return &stores{file: f, table: table, client: client, s3: s3, blobs: objects}
}

// seed loads the sample catalogue and its artifacts.
func (s *stores) seed(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	bundles := sample.Catalogue(sampleNow)
	if _, err := s.table.BulkLoad(ctx, bundles, 4); err != nil {
		tb.Fatal(err)
	}
	if _, err := sample.LoadArtifacts(ctx, s.blobs, bundles); err != nil {
		tb.Fatal(err)
	}
}

func dump(tb testing.TB, s *stores) map[dynamo.ItemKey][]byte {
	tb.Helper()
	m, err := s.table.DumpTable(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func objects(tb testing.TB, s *stores) []blob.SnapshotObject {
	tb.Helper()
	objs, err := s.s3.Objects()
	if err != nil {
		tb.Fatal(err)
	}
	return objs
}

// A saved file loads back into fresh stores as they were: every table item byte for byte, and
// every object with its body, metadata and modification time.
func TestDataSaveAndLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cat.jsonl")
	first := open(t, path)
	first.seed(t)
	if err := first.file.Save(context.Background()); err != nil {
		t.Fatalf("Save = %v", err)
	}
	wantItems, wantObjects := dump(t, first), objects(t, first)
	if len(wantItems) == 0 || len(wantObjects) == 0 {
		t.Fatalf("the sample gave %d items and %d objects", len(wantItems), len(wantObjects))
	}
	if err := first.file.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("data file = %v, %v; want mode 0600", st, err)
	}

	second := open(t, path)
	if got := dump(t, second); !maps.EqualFunc(got, wantItems, bytes.Equal) {
		t.Errorf("after Load the table holds %d items, want the %d saved, byte for byte", len(got), len(wantItems))
	}
	got := objects(t, second)
	if len(got) != len(wantObjects) {
		t.Fatalf("after Load %d objects, want %d", len(got), len(wantObjects))
	}
	for i, o := range got {
		w := wantObjects[i]
		if o.Bucket != w.Bucket || o.Key != w.Key || o.ETag != w.ETag || !o.LastModified.Equal(w.LastModified) || !maps.Equal(o.Metadata, w.Metadata) {
			t.Errorf("object %d = %+v, want %+v", i, o, w)
		}
	}
	body, err := second.s3.ObjectBody(got[0].Bucket, got[0].Key)
	if want, _ := first.s3.ObjectBody(got[0].Bucket, got[0].Key); err != nil || !bytes.Equal(body, want) {
		t.Errorf("body of %s = %d bytes, %v; want %d bytes", got[0].Key, len(body), err, len(want))
	}
}

// Every kind of write the store makes is saved by the saver, which reads only the items the
// writes named: what it saves equals a read of the whole table.
func TestDataSavesEveryWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cat.jsonl")
	s := open(t, path)
	s.seed(t)
	if err := s.file.Save(ctx); err != nil {
		t.Fatal(err)
	}
	s.file.Start()
	table := aws.String(dynamo.DefaultTable)
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": str(pk), "SK": str(sk)}
	}
	item := func(pk, sk, v string) map[string]types.AttributeValue {
		m := key(pk, sk)
		m["V"] = str(v)
		return m
	}
	writes := []func() error{
		func() error {
			_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item("T#1", "A", "put")})
			return err
		},
		func() error {
			_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("T#1", "A"),
				UpdateExpression: aws.String("SET V = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": str("updated")}})
			return err
		},
		func() error {
			_, err := s.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{*table: {
				{PutRequest: &types.PutRequest{Item: item("T#2", "B", "batch")}},
				{DeleteRequest: &types.DeleteRequest{Key: key("COMPONENTID#api-server-alert-001", "CLAIM")}},
			}}})
			return err
		},
		func() error {
			_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: table, Item: item("T#3", "C", "transact")}},
				{Delete: &types.Delete{TableName: table, Key: key("T#2", "B")}},
				{Update: &types.Update{TableName: table, Key: key("T#1", "A"), UpdateExpression: aws.String("SET W = :w"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":w": str("w")}}},
			}})
			return err
		},
		func() error {
			_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: key("T#3", "C")})
			return err
		},
		func() error {
			return s.blobs.PutArtifact(ctx, "CAP-ALERT-MGT-001", "JOB-DEPLOY-456", "logs/smoke.log", "text/plain", []byte("smoke ok"))
		},
	}
	for i, w := range writes {
		if err := w(); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		items, objs := dump(t, s), len(objects(t, s))
		waitFor(t, path, func(content []byte) bool { return holds(content, items, objs) })
	}
}

// holds reports whether the content of a data file holds exactly items and n objects.
func holds(content []byte, items map[dynamo.ItemKey][]byte, n int) bool {
	want := map[string]bool{}
	for _, v := range items {
		want[`{"item":`+string(v)+`}`] = true
	}
	got, objs := 0, 0
	for _, l := range strings.Split(string(content), "\n") {
		switch {
		case strings.HasPrefix(l, `{"item":`):
			if !want[l] {
				return false
			}
			got++
		case strings.HasPrefix(l, `{"object":`):
			objs++
		}
	}
	return got == len(want) && objs == n
}

// waitFor polls the file at path until ok holds of its content, for at most a generous while.
func waitFor(tb testing.TB, path string, ok func([]byte) bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		content, err := os.ReadFile(path)
		if err == nil && ok(content) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the data file never showed the write (last read: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A file that is not a data file, is damaged or cut short, or names a body that is missing is
// refused with the file and line named, and nothing is loaded.
func TestDataLoadRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	s := open(t, good)
	s.seed(t)
	if err := s.file.Save(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.file.Close(); err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(content, []byte("\n"))
	lines = lines[:len(lines)-1]
	var firstObject []byte
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte(`{"object":`)) {
			firstObject = l
			break
		}
	}
	blobOf := func(l []byte) string {
		i := bytes.Index(l, []byte(`"blob":"`)) + len(`"blob":"`)
		return string(l[i : i+64])
	}
	tests := []struct {
		name    string
		content [][]byte
		blobs   bool // copy the bodies
		want    string
	}{
		{"an export", [][]byte{[]byte(`{"entityType":"Capability","revision":1,"data":{}}` + "\n")}, false, "line 1: not a data file"},
		{"a damaged item", append(append(append([][]byte{}, lines[:3]...), []byte(`{"item":{"PK":{"S":"x"}`+"\n")), lines[4:]...), true, "line 4:"},
		{"cut short", lines[:len(lines)-1], true, "cut short"},
		{"a missing body", lines, false, "is missing"},
		{"empty", nil, false, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cat.jsonl")
			bad := bytes.Join(tt.content, nil)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(path+".objects", 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.blobs {
				if _, err := os.Stat(filepath.Join(good+".objects", blobOf(firstObject))); err != nil {
					t.Fatal(err)
				}
				for _, l := range lines {
					if bytes.HasPrefix(l, []byte(`{"object":`)) {
						b, err := os.ReadFile(filepath.Join(good+".objects", blobOf(l)))
						if err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(filepath.Join(path+".objects", blobOf(l)), b, 0o600); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			f, err := datafile.Open(path, datafile.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			emb, err := dynamo.StartEmbedded(f.WatchDynamoDB)
			if err != nil {
				t.Fatal(err)
			}
			defer emb.Close()
			client, _ := dynamo.NewClient(context.Background(), dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key}})
			table := dynamo.New(client, dynamo.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err := table.CreateTable(context.Background(), time.Minute); err != nil {
				t.Fatal(err)
			}
			f.Bind(table, nil)
			_, err = f.Load(context.Background())
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load = %v, want an error naming %s and saying %q", err, path, tt.want)
			}
			if n, _ := table.DumpTable(context.Background()); len(n) != 0 {
				t.Errorf("Load refused the file but put %d items", len(n))
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, bad) {
				t.Error("the refused file was changed")
			}
		})
	}
}

// One data file is used by one process at a time.
func TestDataFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cat.jsonl")
	f, err := datafile.Open(path, datafile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := datafile.Open(path, datafile.Options{}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("a second Open = %v, want an error saying the file is in use", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := datafile.Open(path, datafile.Options{})
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	g.Close()
}
