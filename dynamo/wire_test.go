package dynamo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/sample"
)

// wireJSON writes v in DynamoDB's JSON wire format, as DynamoDB sends it. Map keys are written
// in reverse order, to show the decoder does not depend on any.
func wireJSON(b *bytes.Buffer, v types.AttributeValue) {
	str := func(s string) {
		q, _ := json.Marshal(s)
		b.Write(q)
	}
	list := func(n int, elem func(i int)) {
		b.WriteByte('[')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			elem(i)
		}
		b.WriteByte(']')
	}
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		b.WriteString(`{"S":`)
		str(x.Value)
	case *types.AttributeValueMemberN:
		b.WriteString(`{"N":`)
		str(x.Value)
	case *types.AttributeValueMemberB:
		b.WriteString(`{"B":`)
		str(base64.StdEncoding.EncodeToString(x.Value))
	case *types.AttributeValueMemberBOOL:
		fmt.Fprintf(b, `{"BOOL":%t`, x.Value)
	case *types.AttributeValueMemberNULL:
		fmt.Fprintf(b, `{"NULL":%t`, x.Value)
	case *types.AttributeValueMemberM:
		b.WriteString(`{"M":`)
		wireMap(b, x.Value)
	case *types.AttributeValueMemberL:
		b.WriteString(`{"L":`)
		list(len(x.Value), func(i int) { wireJSON(b, x.Value[i]) })
	case *types.AttributeValueMemberSS:
		b.WriteString(`{"SS":`)
		list(len(x.Value), func(i int) { str(x.Value[i]) })
	case *types.AttributeValueMemberNS:
		b.WriteString(`{"NS":`)
		list(len(x.Value), func(i int) { str(x.Value[i]) })
	case *types.AttributeValueMemberBS:
		b.WriteString(`{"BS":`)
		list(len(x.Value), func(i int) { str(base64.StdEncoding.EncodeToString(x.Value[i])) })
	default:
		panic(fmt.Sprintf("wireJSON: %T", v))
	}
	b.WriteByte('}')
}

func wireMap(b *bytes.Buffer, m map[string]types.AttributeValue) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		q, _ := json.Marshal(k)
		b.Write(q)
		b.WriteString(":")
		wireJSON(b, m[k])
	}
	b.WriteString("}")
}

// sampleItems is every item of the sample catalogue, as stored.
func sampleItems(tb testing.TB) []*item {
	tb.Helper()
	now := time.Date(2025, 11, 22, 14, 32, 0, 0, time.UTC)
	var items []*item
	for _, bundle := range sample.Catalogue(now) {
		for _, build := range bundleItemBuilders(bundle, now) {
			its, err := build()
			if err != nil {
				tb.Fatal(err)
			}
			items = append(items, its...)
		}
	}
	return items
}

func bundleItemBuilders(b *catalog.Bundle, now time.Time) []func() ([]*item, error) {
	one := func(it *item, err error) ([]*item, error) { return []*item{it}, err }
	builders := []func() ([]*item, error){func() ([]*item, error) { return capabilityItems(b.Capability, now) }}
	for _, c := range b.Components {
		builders = append(builders, func() ([]*item, error) { return one(componentItem(c, now)) })
	}
	for _, d := range b.Dependencies {
		builders = append(builders, func() ([]*item, error) { return one(dependencyItem(d, now)) })
	}
	for _, j := range b.Jobs {
		builders = append(builders, func() ([]*item, error) { return one(jobItem(j, now)) })
	}
	for _, m := range b.Metrics {
		builders = append(builders, func() ([]*item, error) { return one(metricItem(m, now)) })
	}
	for _, r := range b.Rules {
		builders = append(builders, func() ([]*item, error) { return one(ruleItem(r, now)) })
	}
	return builders
}

// queryBody is a Query response carrying items.
func queryBody(tb testing.TB, items []*item) []byte {
	tb.Helper()
	var b bytes.Buffer
	b.WriteString(`{"ConsumedCapacity":{"CapacityUnits":1.5,"TableName":"catalogue"},"Count":` + strconv.Itoa(len(items)) + `,"Items":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		av, err := it.av()
		if err != nil {
			tb.Fatal(err)
		}
		wireMap(&b, av)
	}
	b.WriteString(`],"LastEvaluatedKey":{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"RULE#001#r"}},"ScannedCount":` + strconv.Itoa(len(items)+3) + `}`)
	return b.Bytes()
}

// decodeBoth decodes it through the SDK's attribute values (readItem + attributevalue) and
// through the wire decoder's item, and returns both entities.
func decodeBoth(t *testing.T, sdk, wire *item) (any, any) {
	t.Helper()
	var to func(*item) (any, error)
	switch sdk.EntityType {
	case entityCapability, entityDomainIndex, entityHealthIndex:
		to = func(it *item) (any, error) { return toCapability(it) }
	case entityComponent:
		to = func(it *item) (any, error) { return toComponent(it) }
	case entityDependency:
		to = func(it *item) (any, error) { return toDependency(it) }
	case entityJob:
		to = func(it *item) (any, error) { return toJob(it) }
	case entityMetric:
		to = func(it *item) (any, error) { return toMetric(it) }
	case entityRule:
		to = func(it *item) (any, error) { return toRule(it) }
	default:
		t.Fatalf("unexpected entity %q", sdk.EntityType)
	}
	a, err := to(sdk)
	if err != nil {
		t.Fatalf("SDK path: %v", err)
	}
	b, err := to(wire)
	if err != nil {
		t.Fatalf("wire path %s/%s: %v", wire.PK, wire.SK, err)
	}
	return a, b
}

// TestWireDecoderMatchesSDK decodes every item of the sample catalogue (every entity, component
// type, job type, rule type and metric type) both ways: the wire decoder must give the same
// envelope, the same entity and, for the writers, the same attribute values.
func TestWireDecoderMatchesSDK(t *testing.T) {
	stored := sampleItems(t)
	body := queryBody(t, stored)
	items, rest, err := splitItems(body)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(stored) {
		t.Fatalf("%d items decoded, want %d", len(items), len(stored))
	}
	for i, it := range items {
		av, err := stored[i].av()
		if err != nil {
			t.Fatal(err)
		}
		sdk, err := readItem(av)
		if err != nil {
			t.Fatal(err)
		}
		if it.Data != nil || it.raw == nil || it.wire == nil {
			t.Fatalf("%s/%s: Data %v, raw %d bytes, wire %d bytes: want raw and wire only", it.PK, it.SK, it.Data != nil, len(it.raw), len(it.wire))
		}
		env := *it
		env.raw, env.wire, env.Data = nil, nil, sdk.Data
		if !reflect.DeepEqual(&env, sdk) {
			t.Fatalf("envelope of %s/%s:\n wire %+v\n sdk  %+v", it.PK, it.SK, env, *sdk)
		}
		a, b := decodeBoth(t, sdk, it)
		if !reflect.DeepEqual(a, b) {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			t.Fatalf("%s/%s decodes differently:\n sdk  %s\n wire %s", it.PK, it.SK, ja, jb)
		}
		data, err := it.data()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(data, sdk.Data) {
			t.Fatalf("%s/%s: data() differs from the SDK's attribute values", it.PK, it.SK)
		}
		if again, err := it.av(); err != nil || !reflect.DeepEqual(again, av) {
			t.Fatalf("%s/%s: av() of the wire item differs from the stored item (err %v)", it.PK, it.SK, err)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(rest, &got); err != nil {
		t.Fatalf("the rest of the body is not JSON: %v\n%s", err, rest)
	}
	want := map[string]any{
		"ConsumedCapacity": map[string]any{"CapacityUnits": 1.5, "TableName": "catalogue"},
		"Count":            float64(len(stored)),
		"ScannedCount":     float64(len(stored) + 3),
		"LastEvaluatedKey": map[string]any{"PK": map[string]any{"S": "CAPABILITY#X"}, "SK": map[string]any{"S": "RULE#001#r"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rest = %v, want %v", got, want)
	}
}

// TestWireDecoderValueKinds covers the attribute value kinds and strings the catalogue's own
// items do not: escapes, non-ASCII, sets, binary, NULL, numbers outside JSON's grammar.
func TestWireDecoderValueKinds(t *testing.T) {
	data := map[string]types.AttributeValue{
		"name":   &types.AttributeValueMemberS{Value: "Fraud \"Détection\" \\ ☃ \u2028 \t end"},
		"n":      &types.AttributeValueMemberN{Value: "-12.5E+3"},
		"zero":   &types.AttributeValueMemberN{Value: "0"},
		"big":    &types.AttributeValueMemberN{Value: "123456789012345678"},
		"flag":   &types.AttributeValueMemberBOOL{Value: false},
		"none":   &types.AttributeValueMemberNULL{Value: true},
		"bin":    &types.AttributeValueMemberB{Value: []byte{0, 1, 2, 250}},
		"tags":   &types.AttributeValueMemberSS{Value: []string{"a", "b\"c"}},
		"nums":   &types.AttributeValueMemberNS{Value: []string{"1", "2.5"}},
		"bins":   &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2, 3}}},
		"nested": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "1"}, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}}}},
	}
	it := &item{PK: "CAPABILITY#A\"B", SK: "COMPONENT#01#x", EntityType: entityComponent, Revision: 7, TTL: 99, WriteSeq: 3, Deleting: true,
		CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), UpdatedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Data: data}
	items, _, err := splitItems(queryBody(t, []*item{it}))
	if err != nil {
		t.Fatal(err)
	}
	got := items[0]
	if got.PK != it.PK || got.Revision != 7 || got.TTL != 99 || got.WriteSeq != 3 || !got.Deleting || !got.CreatedAt.Equal(it.CreatedAt) || !got.UpdatedAt.Equal(it.UpdatedAt) {
		t.Fatalf("envelope = %+v", got)
	}
	var plain map[string]any
	if err := json.Unmarshal(got.raw, &plain); err != nil {
		t.Fatalf("raw is not JSON: %v\n%s", err, got.raw)
	}
	want := map[string]any{
		"name": "Fraud \"Détection\" \\ ☃ \u2028 \t end", "n": -12500.0, "zero": 0.0, "big": 123456789012345678.0,
		"flag": false, "none": nil, "bin": base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 250}),
		"tags": []any{"a", "b\"c"}, "nums": []any{1.0, 2.5}, "bins": []any{"AQ==", "AgM="},
		"nested": map[string]any{"l": []any{1.0, map[string]any{}}},
	}
	if !reflect.DeepEqual(plain, want) {
		t.Fatalf("raw = %v\nwant  %v", plain, want)
	}
	back, err := got.data()
	if err != nil || !reflect.DeepEqual(back, data) {
		t.Fatalf("data() = %v, %v; want the attribute values written", back, err)
	}
}

func TestWireNumbers(t *testing.T) {
	for n, want := range map[string]string{
		"0": "0", "-0": "-0", "12": "12", "1.5": "1.5", "1E+2": "1E+2", "1e-7": "1e-7",
		".5": "0.5", "5.": "5", "+3": "3", "007": "7", "1e": "", "abc": "", "": "", "--1": "",
	} {
		s := &wireScanner{}
		got := string(s.number(nil, []byte(strconv.Quote(n))))
		if want == "" {
			if s.err == nil {
				t.Errorf("number(%q) = %q, want an error", n, got)
			}
			continue
		}
		if s.err != nil || got != want {
			t.Errorf("number(%q) = %q, %v; want %q", n, got, s.err, want)
		}
	}
}

// TestWireDecoderRejects: a body that is not a well-formed response is refused whole, so that
// the middleware leaves it to the SDK.
func TestWireDecoderRejects(t *testing.T) {
	good := string(queryBody(t, sampleItems(t)[:2]))
	for name, body := range map[string]string{
		"truncated":        good[:len(good)-1],
		"trailing":         good + "x",
		"not an object":    `[]`,
		"item not a map":   `{"Items":[1]}`,
		"no keys":          `{"Items":[{"Data":{"M":{}}}]}`,
		"PK not a string":  `{"Items":[{"PK":{"N":"1"},"SK":{"S":"x"}}]}`,
		"two types":        `{"Items":[{"PK":{"S":"a"},"SK":{"S":"b"},"Data":{"M":{"x":{"S":"a","N":"1"}}}}]}`,
		"unknown type":     `{"Items":[{"PK":{"S":"a"},"SK":{"S":"b"},"Data":{"M":{"x":{"Q":"a"}}}}]}`,
		"Data not a map":   `{"Items":[{"PK":{"S":"a"},"SK":{"S":"b"},"Data":{"S":"x"}}]}`,
		"bad bool":         `{"Items":[{"PK":{"S":"a"},"SK":{"S":"b"},"Data":{"M":{"x":{"BOOL":1}}}}]}`,
		"bad time":         `{"Items":[{"PK":{"S":"a"},"SK":{"S":"b"},"CreatedAt":{"S":"yesterday"}}]}`,
		"bad revision":     `{"Items":[{"PK":{"S":"a"},"SK":{"S":"b"},"Revision":{"N":"1.5"}}]}`,
		"control char":     "{\"Items\":[{\"PK\":{\"S\":\"a\nb\"},\"SK\":{\"S\":\"b\"}}]}",
		"unterminated str": `{"Items":[{"PK":{"S":"a`,
		"bad escape":       `{"Count":"\0","Items":[]}`,
		"bad literal":      `{"Count":a,"Items":[]}`,
		"bad number":       `{"Count":01,"Items":[]}`,
		"short \\u escape": `{"Items":[{"PK":{"S":"\u12"},"SK":{"S":"b"}}]}`,
	} {
		if _, _, err := splitItems([]byte(body)); err == nil {
			t.Errorf("%s: splitItems accepted %q", name, body)
		}
	}
	if items, rest, err := splitItems([]byte(`{"Responses":{"catalogue":[]},"UnprocessedKeys":{}}`)); err != nil || len(items) != 0 || string(rest) != `{"UnprocessedKeys":{}}` {
		t.Fatalf("empty BatchGetItem response = %d items, %s, %v", len(items), rest, err)
	}
}

// TestWireDecoderInClient runs the decoder inside a real SDK client against a server that sends
// DynamoDB's CRC32 checksum header: with the right checksum, the store's calls get the items
// from the decoder and the SDK's output keeps the counts and LastEvaluatedKey; with a wrong one
// the call fails, as the SDK's own check would make it; calls without the store's context see
// the SDK's output untouched.
func TestWireDecoderInClient(t *testing.T) {
	stored := sampleItems(t)[:5]
	body := queryBody(t, stored)
	var corrupt atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		sum := crc32.ChecksumIEEE(body)
		if corrupt.Load() {
			sum++
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(sum), 10))
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{},
		RetryMaxAttempts: 1, APIOptions: []func(*middleware.Stack) error{wireItemDecoder},
	})
	in := &dynamodb.QueryInput{TableName: aws.String("catalogue"), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "x"}}}

	out, err := client.Query(withWireItems(context.Background()), in)
	if err != nil {
		t.Fatal(err)
	}
	items, ok := wireItems(out.ResultMetadata)
	if !ok || len(items) != len(stored) || len(out.Items) != 0 {
		t.Fatalf("decoder: %d items (ran %v), SDK Items %d; want %d and 0", len(items), ok, len(out.Items), len(stored))
	}
	if out.Count != int32(len(stored)) || out.ScannedCount != int32(len(stored)+3) || len(out.LastEvaluatedKey) != 2 || out.ConsumedCapacity == nil {
		t.Fatalf("SDK output lost the rest of the body: %+v", out)
	}
	if n, ok := ResponseItems(out.ResultMetadata); !ok || n != len(stored) {
		t.Fatalf("ResponseItems = %d, %v", n, ok)
	}

	plain, err := client.Query(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := wireItems(plain.ResultMetadata); ok || len(plain.Items) != len(stored) {
		t.Fatalf("without the store's context: decoder ran %v, SDK Items %d; want false and %d", ok, len(plain.Items), len(stored))
	}

	corrupt.Store(true)
	if _, err := client.Query(withWireItems(context.Background()), in); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("a wrong X-Amz-Crc32 gave %v, want a checksum error", err)
	}
}

// FuzzSplitItems: no input makes the decoder panic, and whatever it accepts leaves valid JSON
// behind and items whose Data reads back as attribute values.
func FuzzSplitItems(f *testing.F) {
	f.Add(queryBody(f, sampleItems(f)[:3]))
	f.Add([]byte(`{"Responses":{"t":[{"PK":{"S":"a"},"SK":{"S":"b"},"Data":{"M":{"x":{"NS":["1"]}}}}]},"UnprocessedKeys":{}}`))
	f.Add([]byte(`{"Items":[{"PK":{"S":"a\u0041"},"SK":{"S":"b"},"Data":{"M":{"b":{"B":"AAEC"}}}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		items, rest, err := splitItems(body)
		if err != nil {
			return
		}
		if !json.Valid(rest) {
			t.Fatalf("rest is not JSON: %q", rest)
		}
		for _, it := range items {
			if it.raw != nil && !json.Valid(it.raw) {
				t.Fatalf("raw Data is not JSON: %q", it.raw)
			}
			_, _ = it.data()
		}
	})
}

func TestReadBody(t *testing.T) {
	body := "0123456789"
	for _, c := range []struct {
		length  int64
		want    string
		wantErr bool
	}{{10, body, false}, {0, body, false}, {-1, body, false}, {9, "", true}, {11, "", true}} {
		got, err := readBody(strings.NewReader(body), c.length)
		if (err != nil) != c.wantErr || (!c.wantErr && string(got) != c.want) {
			t.Errorf("readBody(length %d) = %q, %v", c.length, got, err)
		}
	}
}

// A Query whose response is cut mid-body (a connection closed by the network or a proxy) or
// fails its checksum is a read: the SDK's retryer sends it again and the caller gets the items;
// when every attempt is cut, the caller gets an error after the client's attempts.
func TestWireDecoderRetriesBadBodies(t *testing.T) {
	stored := sampleItems(t)[:5]
	body := queryBody(t, stored)
	var calls, bad atomic.Int32
	var fault atomic.Value // "cut" or "checksum"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		n := calls.Add(1)
		sum := crc32.ChecksumIEEE(body)
		faulty := n <= bad.Load()
		if faulty && fault.Load() == "checksum" {
			sum++
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(sum), 10))
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if faulty && fault.Load() == "cut" {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Crc32: %d\r\nContent-Length: %d\r\n\r\n", sum, len(body))
			_, _ = buf.Write(body[:len(body)/2])
			_ = buf.Flush()
			_ = conn.Close()
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{},
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
		APIOptions: []func(*middleware.Stack) error{wireItemDecoder},
	})
	in := &dynamodb.QueryInput{TableName: aws.String("catalogue"), KeyConditionExpression: aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "x"}}}
	for _, f := range []string{"cut", "checksum"} {
		fault.Store(f)
		calls.Store(0)
		bad.Store(2)
		out, err := client.Query(withWireItems(context.Background()), in)
		if err != nil {
			t.Fatalf("%s twice, then whole: %v", f, err)
		}
		if items, _ := wireItems(out.ResultMetadata); len(items) != len(stored) || calls.Load() != 3 {
			t.Fatalf("%s twice, then whole: %d items after %d calls, want %d after 3", f, len(items), calls.Load(), len(stored))
		}
		calls.Store(0)
		bad.Store(100)
		_, err = client.Query(withWireItems(context.Background()), in)
		want := "shorter than its Content-Length"
		if f == "checksum" {
			want = "checksum"
		}
		if err == nil || !strings.Contains(err.Error(), want) || calls.Load() != 3 {
			t.Fatalf("%s every time: %v after %d calls, want an error saying %q after 3", f, err, calls.Load(), want)
		}
	}
}
