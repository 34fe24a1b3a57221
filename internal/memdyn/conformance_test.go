package memdyn_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	miniserver "github.com/truora/minidyn/server"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/memdyn"
)

// The conformance test sends every operation and expression shape that the dynamo package sends
// (and the benchmark's backend therefore sees) to memdyn and to minidyn, the reference, and
// to dynalite when DYNAMODB_TEST_ENDPOINT is set, each case on a fresh table seeded alike, and
// compares the answers: items (order included where DynamoDB defines it), pages, error codes
// and a transaction's CancellationReasons, and for writes the table afterwards. A backend that
// does not implement an operation must refuse it with an error, never answer approximately;
// each such gap is named in the case (and in README.md).

// backend is one DynamoDB implementation under test.
type backend struct {
	name string
	db   *dynamodb.Client
}

func backends(tb testing.TB) []backend {
	tb.Helper()
	ctx := context.Background()
	client := func(h http.Handler, endpoint string) *dynamodb.Client {
		if h != nil {
			srv := httptest.NewServer(h)
			tb.Cleanup(srv.Close)
			endpoint = srv.URL
		}
		db, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: endpoint, MaxAttempts: 1}})
		if err != nil {
			tb.Fatalf("NewClient(%s): %v", endpoint, err)
		}
		return db
	}
	bs := []backend{
		{"minidyn", client(miniserver.NewServer(), "")},
		{"memdyn", client(memdyn.New(), "")},
	}
	if ep := os.Getenv("DYNAMODB_TEST_ENDPOINT"); ep != "" {
		bs = append(bs, backend{"dynalite", client(nil, ep)})
	}
	return bs
}

// newTable creates a table of the store's design (base table and GSI1) and writes the seed.
func newTable(tb testing.TB, db *dynamodb.Client) string {
	tb.Helper()
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	table := "conformance-" + hex.EncodeToString(b)
	store := dynamo.New(db, dynamo.Options{Table: table, CursorSecret: []byte("x"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		tb.Fatalf("CreateTable: %v", err)
	}
	var reqs []types.WriteRequest
	for _, it := range seed() {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	for c := range slices.Chunk(reqs, 25) {
		out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: c}})
		if err != nil || len(out.UnprocessedItems) > 0 {
			tb.Fatalf("seed: %v (unprocessed %d)", err, len(out.UnprocessedItems))
		}
	}
	return table
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

type item = map[string]types.AttributeValue

func key(pk, sk string) item { return item{"PK": s(pk), "SK": s(sk)} }

// seed is a partition shaped like the store's (components, dependencies, jobs, metrics with a
// GSI1 entry and a TTL, a lease), a second partition, and an item marked deleting.
func seed() []item {
	data := func(kv ...string) types.AttributeValue {
		m := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = s(kv[i+1])
		}
		return &types.AttributeValueMemberM{Value: m}
	}
	withKey := func(it item, extra item) item {
		for k, v := range extra {
			it[k] = v
		}
		return it
	}
	var out []item
	for _, c := range []string{"a", "b", "c", "d"} {
		out = append(out, withKey(key("CAP#1", "COMPONENT#"+c), item{"Revision": n("1"), "Data": data("name", "comp "+c, "status", map[bool]string{true: "up", false: "down"}[c < "c"])}))
	}
	out = append(out,
		withKey(key("CAP#1", "DEPENDENCY#a#b"), item{"Data": data("source", "a", "target", "b")}),
		withKey(key("CAP#1", "JOB#0001"), item{"Data": data("status", "done", "jobType", "scan")}),
		withKey(key("CAP#1", "JOB#0002"), item{"Data": data("status", "running", "jobType", "scan")}),
		withKey(key("CAP#1", "JOB#0003"), item{"Data": data("status", "done", "jobType", "sync")}),
		withKey(key("CAP#1", "RULE#r1"), item{"Data": data("name", "rule 1")}),
		withKey(key("CAP#2", "COMPONENT#x"), item{"Revision": n("3"), "Deleting": n("1"), "Data": data("name", "comp x")}),
		withKey(key("CAP#2", "META"), item{"Revision": n("3")}),
		withKey(key("LEASE", "archive"), item{"Expires": n("100"), "Data": data("holder", "h1")}),
	)
	for i, ts := range []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"} {
		mt := []string{"latency", "errors"}[i%2]
		out = append(out, withKey(key("CAP#1", "METRIC#a#"+ts), item{
			"GSI1PK": s("METRICS#a"), "GSI1SK": s(ts + "#" + mt), "TTL": n(fmt.Sprint(1000 + i)),
			"Data": data("metricType", mt, "timestamp", ts, "value", fmt.Sprint(i)),
		}))
	}
	return out
}

// result is a backend's answer in a form to compare: JSON of items decoded to plain values.
type result struct {
	Items [][]map[string]any `json:",omitempty"` // one slice a page (a GetItem: one page of 0 or 1)
	More  []bool             `json:",omitempty"` // per page: LastEvaluatedKey present
	Err   string             `json:",omitempty"` // the error code, with a transaction's reasons
	Table []map[string]any   `json:",omitempty"` // after a write: every item, sorted by key
	// Repeated counts the items a parallel Scan returned from more than one segment.
	Repeated int `json:",omitempty"`
}

func plain(tb testing.TB, items []item) []map[string]any {
	tb.Helper()
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			tb.Fatalf("UnmarshalMap: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// sortByKey orders items by PK then SK, for answers whose order DynamoDB leaves open.
func sortByKey(items []item) []item {
	str := func(v types.AttributeValue) string {
		if x, ok := v.(*types.AttributeValueMemberS); ok {
			return x.Value
		}
		return ""
	}
	slices.SortFunc(items, func(a, b item) int {
		return strings.Compare(str(a["PK"])+"\x00"+str(a["SK"]), str(b["PK"])+"\x00"+str(b["SK"]))
	})
	return items
}

// plainItem decodes an item to plain values (for comparing in errCode).
func plainItem(it item) map[string]any {
	var m map[string]any
	_ = attributevalue.UnmarshalMap(it, &m)
	return m
}

func errCode(err error) string {
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		var reasons []string
		for _, r := range tc.CancellationReasons {
			code := aws.ToString(r.Code)
			if r.Item != nil {
				js, _ := json.Marshal(plainItem(r.Item))
				code += " " + string(js)
			}
			reasons = append(reasons, code)
		}
		return "TransactionCanceledException " + strings.Join(reasons, ",")
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return err.Error()
}

// env is what a case runs against.
type env struct {
	tb    testing.TB
	ctx   context.Context
	db    *dynamodb.Client
	table string
}

// pages runs a Query to its end, a page at a time.
func (e env) pages(in *dynamodb.QueryInput) result {
	in.TableName = &e.table
	var r result
	for {
		out, err := e.db.Query(e.ctx, in)
		if err != nil {
			return result{Err: errCode(err)}
		}
		r.Items = append(r.Items, plain(e.tb, out.Items))
		r.More = append(r.More, len(out.LastEvaluatedKey) > 0)
		if len(out.LastEvaluatedKey) == 0 || len(r.Items) > 50 {
			return r
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// scan runs a Scan to its end, all pages together, sorted by key.
func (e env) scan(in dynamodb.ScanInput) ([]item, error) {
	in.TableName = &e.table
	var all []item
	for {
		out, err := e.db.Scan(e.ctx, &in)
		if err != nil {
			return nil, err
		}
		all = append(all, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return sortByKey(all), nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// write runs a write and returns its error code and the table afterwards.
func (e env) write(err error) result {
	r := result{}
	if err != nil {
		r.Err = errCode(err)
	}
	all, serr := e.scan(dynamodb.ScanInput{ConsistentRead: aws.Bool(true)})
	if serr != nil {
		e.tb.Fatalf("scan after write: %v", serr)
	}
	r.Table = plain(e.tb, all)
	return r
}

func names(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func values(kv ...any) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(types.AttributeValue)
	}
	return m
}

// partition is the store's key condition: #pk = :pk, with BETWEEN on the sort key when lo or hi
// is set (see dynamo's query.run).
func partition(index bool, pk, lo, hi string) *dynamodb.QueryInput {
	pkName, skName := "PK", "SK"
	in := &dynamodb.QueryInput{}
	if index {
		pkName, skName = "GSI1PK", "GSI1SK"
		in.IndexName = aws.String("GSI1")
	}
	in.KeyConditionExpression = aws.String("#pk = :pk")
	in.ExpressionAttributeNames = names("#pk", pkName)
	in.ExpressionAttributeValues = values(":pk", s(pk))
	if lo != "" || hi != "" {
		*in.KeyConditionExpression += " AND #sk BETWEEN :lo AND :hi"
		in.ExpressionAttributeNames["#sk"] = skName
		in.ExpressionAttributeValues[":lo"] = s(lo)
		in.ExpressionAttributeValues[":hi"] = s(hi)
	}
	return in
}

// with applies changes to a query input.
func with(in *dynamodb.QueryInput, f func(*dynamodb.QueryInput)) *dynamodb.QueryInput {
	f(in)
	return in
}

type conformanceCase struct {
	name string
	run  func(e env) result
	// unsupported names the backends that do not implement the case, with why: they must
	// answer with an error.
	unsupported map[string]string
	// loose names the backends that differ from DynamoDB in how they divide an answer (pages,
	// scan segments) in this case, with why: against them the distinct items of all pages and
	// segments are compared together.
	loose map[string]string
	// differs names the backends that answer this case unlike DynamoDB, with how: their answer
	// is logged, not compared (memdyn_test.go checks memdyn's answer to such cases itself).
	differs map[string]string
}

// minidynFilteredPages is a minidyn quirk: with a FilterExpression and a Limit, it counts the
// Limit over the whole table rather than the key condition's range, so it answers with many
// more (mostly empty) pages than DynamoDB; the items of all its pages are still the right ones.
const minidynFilteredPages = "minidyn counts a filtered Query's Limit over the whole table"

// minidynSegments is a minidyn quirk: it ignores Segment and TotalSegments, so each segment of
// a parallel Scan returns the whole table (dynamo's check keeps one copy of each item).
const minidynSegments = "minidyn answers every Scan segment with the whole table"

// minidynFirstFailure is a minidyn quirk: it stops a transaction at the first failing
// condition and reports None for the actions after it, where DynamoDB evaluates every
// condition and reports each failure (dynamo retries only what failed, so it matters).
const minidynFirstFailure = "minidyn reports only the first failing condition of a transaction"

// minidynStaleIndex is a minidyn bug: an item whose GSI key attribute is removed stays in the
// index under its old key (see graph/integrity_test.go).
const minidynStaleIndex = "minidyn leaves an item in a GSI after its index key is removed"

// flat returns r with its pages joined into one, without page ends or repeated items.
func (r result) flat() result {
	if len(r.Items) < 2 && r.Repeated == 0 {
		return r
	}
	seen := map[string]bool{}
	var items []map[string]any
	for _, it := range slices.Concat(r.Items...) {
		js, _ := json.Marshal(it)
		if !seen[string(js)] {
			seen[string(js)] = true
			items = append(items, it)
		}
	}
	r.Items, r.More, r.Repeated = [][]map[string]any{items}, nil, 0
	return r
}

const dynaliteNoTransactions = "dynalite has no TransactWriteItems"

func conformanceCases() []conformanceCase {
	put := func(e env, it item, cond string, n map[string]string, v map[string]types.AttributeValue) error {
		in := &dynamodb.PutItemInput{TableName: &e.table, Item: it}
		if cond != "" {
			in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = &cond, n, v
		}
		_, err := e.db.PutItem(e.ctx, in)
		return err
	}
	lease := func(holder, now string) func(e env) result {
		return func(e env) result {
			// dynamo's lease: taken when absent, expired or already held by the caller.
			return e.write(put(e, withAttrs(key("LEASE", "archive"), item{"Expires": n("200"), "Data": &types.AttributeValueMemberM{Value: item{"holder": s(holder)}}}),
				"attribute_not_exists(PK) OR #exp < :now OR #d.#h = :holder",
				names("#exp", "Expires", "#d", "Data", "#h", "holder"), values(":now", n(now), ":holder", s(holder))))
		}
	}
	transact := func(actions ...types.TransactWriteItem) func(e env) result {
		return func(e env) result {
			for i := range actions {
				switch a := actions[i]; {
				case a.Put != nil:
					a.Put.TableName = &e.table
				case a.Delete != nil:
					a.Delete.TableName = &e.table
				case a.ConditionCheck != nil:
					a.ConditionCheck.TableName = &e.table
				case a.Update != nil:
					a.Update.TableName = &e.table
				}
			}
			_, err := e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
			return e.write(err)
		}
	}
	noTx := map[string]string{"dynalite": dynaliteNoTransactions}
	deleting := "attribute_not_exists(Deleting) AND attribute_exists(PK)"
	// update runs an UpdateItem and returns its error, the attributes it returned and the table.
	update := func(in dynamodb.UpdateItemInput) func(e env) result {
		return func(e env) result {
			in.TableName = &e.table
			out, err := e.db.UpdateItem(e.ctx, &in)
			r := e.write(err)
			if err == nil && out.Attributes != nil {
				r.Items = [][]map[string]any{plain(e.tb, []item{out.Attributes})}
			}
			return r
		}
	}
	// then runs a case, then a query, and returns both answers.
	then := func(run func(e env) result, q func() *dynamodb.QueryInput) func(e env) result {
		return func(e env) result {
			r := run(e)
			after := e.pages(q())
			r.Items = append(r.Items, after.Items...)
			r.More = append(r.More, after.More...)
			if after.Err != "" {
				r.Err += " then " + after.Err
			}
			return r
		}
	}
	tokenPut := func(now string) types.TransactWriteItem {
		// dynamo's idempotency record: written when absent or expired.
		return types.TransactWriteItem{Put: &types.Put{Item: withAttrs(key("CAP#1", "TOKEN#t1"), item{"TTL": n("2000")}),
			ConditionExpression: aws.String("attribute_not_exists(PK) OR #ttl < :now"), ExpressionAttributeNames: names("#ttl", "TTL"),
			ExpressionAttributeValues: values(":now", n(now))}}
	}
	failing := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#2", "COMPONENT#x"), ConditionExpression: aws.String(deleting)}}
	putE := types.TransactWriteItem{Put: &types.Put{Item: withAttrs(key("CAP#1", "COMPONENT#e"), item{"Revision": n("1")}), ConditionExpression: aws.String("attribute_not_exists(PK)")}}
	delRule := types.TransactWriteItem{Delete: &types.Delete{Key: key("CAP#1", "RULE#r1")}}

	return []conformanceCase{
		// GetItem: dynamo's Store.get (strongly consistent) and a miss.
		{name: "GetItem", run: func(e env) result {
			out, err := e.db.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: &e.table, Key: key("CAP#1", "COMPONENT#b"), ConsistentRead: aws.Bool(true)})
			if err != nil {
				return result{Err: errCode(err)}
			}
			return result{Items: [][]map[string]any{plain(e.tb, []item{out.Item})}}
		}},
		{name: "GetItem miss", run: func(e env) result {
			out, err := e.db.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: &e.table, Key: key("CAP#1", "COMPONENT#zz")})
			if err != nil {
				return result{Err: errCode(err)}
			}
			return result{More: []bool{out.Item != nil}}
		}},

		// Query: the store's key conditions, order, limits, filters and projections.
		{name: "Query partition", run: func(e env) result { return e.pages(partition(false, "CAP#1", "", "")) }},
		{name: "Query BETWEEN", run: func(e env) result { return e.pages(partition(false, "CAP#1", "COMPONENT#", "DEPENDENCY$")) }},
		{name: "Query begins_with", run: func(e env) result {
			return e.pages(&dynamodb.QueryInput{KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :p)"), ExpressionAttributeValues: values(":pk", s("CAP#1"), ":p", s("JOB#"))})
		}},
		{name: "Query reverse", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "JOB#", "JOB$"), func(in *dynamodb.QueryInput) { in.ScanIndexForward = aws.Bool(false) }))
		}},
		{name: "Query Limit pages", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "COMPONENT#", "COMPONENT$"), func(in *dynamodb.QueryInput) { in.Limit = aws.Int32(3) }))
		}},
		{name: "Query Limit reverse pages consistent", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "", ""), func(in *dynamodb.QueryInput) {
				in.Limit, in.ScanIndexForward, in.ConsistentRead = aws.Int32(4), aws.Bool(false), aws.Bool(true)
			}))
		}},
		{name: "Query filter attribute_exists", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#2", "", ""), func(in *dynamodb.QueryInput) {
				in.FilterExpression = aws.String("attribute_exists(#del)")
				in.ExpressionAttributeNames["#del"] = "Deleting"
			}))
		}},
		{name: "Query filter nested AND, Limit before the filter", loose: map[string]string{"minidyn": minidynFilteredPages}, run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "JOB#", "JOB$"), func(in *dynamodb.QueryInput) {
				in.FilterExpression = aws.String("#d.#st = :st AND #d.#jt = :jt")
				in.ScanIndexForward, in.Limit = aws.Bool(false), aws.Int32(2)
				for k, v := range names("#d", "Data", "#st", "status", "#jt", "jobType") {
					in.ExpressionAttributeNames[k] = v
				}
				in.ExpressionAttributeValues[":st"], in.ExpressionAttributeValues[":jt"] = s("done"), s("scan")
			}))
		}},
		{name: "Query filter, Limit before the filter", loose: map[string]string{"minidyn": minidynFilteredPages}, run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "JOB#", "JOB$"), func(in *dynamodb.QueryInput) {
				in.FilterExpression = aws.String("#d.#st = :st")
				in.Limit = aws.Int32(2)
				in.ExpressionAttributeNames["#d"], in.ExpressionAttributeNames["#st"] = "Data", "status"
				in.ExpressionAttributeValues[":st"] = s("running")
			}))
		}},
		{name: "Query reverse Limit", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "JOB#", "JOB$"), func(in *dynamodb.QueryInput) {
				in.ScanIndexForward, in.Limit = aws.Bool(false), aws.Int32(2)
			}))
		}},
		{name: "Query filter nested range", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "METRIC#a#", "METRIC#a$"), func(in *dynamodb.QueryInput) {
				in.FilterExpression = aws.String("#d.#mt = :mt AND #d.#ts >= :from AND #d.#ts <= :to")
				for k, v := range names("#d", "Data", "#mt", "metricType", "#ts", "timestamp") {
					in.ExpressionAttributeNames[k] = v
				}
				for k, v := range values(":mt", s("latency"), ":from", s("2026-01-02"), ":to", s("2026-01-05")) {
					in.ExpressionAttributeValues[k] = v
				}
			}))
		}},
		{name: "Query projection", run: func(e env) result {
			return e.pages(with(partition(false, "CAP#1", "COMPONENT#", "COMPONENT$"), func(in *dynamodb.QueryInput) {
				in.ProjectionExpression = aws.String("#pk, SK, #d.#n, Revision")
				in.ExpressionAttributeNames["#d"], in.ExpressionAttributeNames["#n"] = "Data", "name"
			}))
		}},
		{name: "Query GSI1", run: func(e env) result { return e.pages(partition(true, "METRICS#a", "", "")) }},
		{name: "Query GSI1 BETWEEN reverse Limit filter", run: func(e env) result {
			return e.pages(with(partition(true, "METRICS#a", "2026-01-02", "2026-01-05~"), func(in *dynamodb.QueryInput) {
				in.ScanIndexForward, in.Limit = aws.Bool(false), aws.Int32(2)
				in.FilterExpression = aws.String("#d.#mt = :mt")
				in.ExpressionAttributeNames["#d"], in.ExpressionAttributeNames["#mt"] = "Data", "metricType"
				in.ExpressionAttributeValues[":mt"] = s("errors")
			}))
		}},
		{name: "Query missing partition", run: func(e env) result { return e.pages(partition(false, "CAP#9", "", "")) }},

		// BatchGetItem: dynamo's Store.batchGet (responses in no defined order).
		{name: "BatchGetItem", run: func(e env) result {
			out, err := e.db.BatchGetItem(e.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{e.table: {
				Keys: []item{key("CAP#1", "COMPONENT#a"), key("CAP#2", "META"), key("CAP#3", "META")}, ConsistentRead: aws.Bool(true),
			}}})
			if err != nil {
				return result{Err: errCode(err)}
			}
			return result{Items: [][]map[string]any{plain(e.tb, sortByKey(out.Responses[e.table]))}, More: []bool{len(out.UnprocessedKeys) > 0}}
		}},

		// Scan: dynamo's check and repair (parallel segments, the base table consistent or the
		// index with a projection).
		{name: "Scan segments", loose: map[string]string{"minidyn": minidynSegments}, run: func(e env) result {
			var all []item
			for seg := range 4 {
				items, err := e.scan(dynamodb.ScanInput{Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(4), ConsistentRead: aws.Bool(true)})
				if err != nil {
					return result{Err: errCode(err)}
				}
				all = append(all, items...)
			}
			return segments(e.tb, all)
		}},
		{name: "Scan GSI1 segments with projection", loose: map[string]string{"minidyn": minidynSegments}, run: func(e env) result {
			var all []item
			for seg := range 2 {
				items, err := e.scan(dynamodb.ScanInput{IndexName: aws.String("GSI1"), Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(2),
					ProjectionExpression: aws.String("PK, SK, GSI1PK, GSI1SK")})
				if err != nil {
					return result{Err: errCode(err)}
				}
				all = append(all, items...)
			}
			return segments(e.tb, all)
		}},

		// BatchWriteItem: dynamo's bulk load, puts and deletes together.
		{name: "BatchWriteItem", run: func(e env) result {
			_, err := e.db.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: {
				{PutRequest: &types.PutRequest{Item: withAttrs(key("CAP#3", "META"), item{"Revision": n("1")})}},
				{PutRequest: &types.PutRequest{Item: withAttrs(key("CAP#1", "COMPONENT#a"), item{"Revision": n("2")})}},
				{DeleteRequest: &types.DeleteRequest{Key: key("CAP#1", "RULE#r1")}},
				{DeleteRequest: &types.DeleteRequest{Key: key("CAP#1", "RULE#none")}},
			}}})
			return e.write(err)
		}},

		// PutItem and DeleteItem with conditions: dynamo's lease, idempotency records, delete.
		{name: "PutItem lease free", run: lease("h2", "150")},
		{name: "PutItem lease held by the caller", run: lease("h1", "50")},
		{name: "PutItem lease held by another", run: lease("h2", "50")},
		{name: "PutItem attribute_not_exists fails", run: func(e env) result {
			return e.write(put(e, key("CAP#2", "META"), "attribute_not_exists(PK)", nil, nil))
		}},
		{name: "PutItem sort key over 1024 bytes", run: func(e env) result {
			return e.write(put(e, key("CAP#1", strings.Repeat("k", 1025)), "", nil, nil))
		}, differs: map[string]string{"minidyn": "minidyn stores keys of any length; DynamoDB refuses a sort key over 1024 bytes"}},
		{name: "DeleteItem condition", run: func(e env) result {
			out, err := e.db.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: &e.table, Key: key("LEASE", "archive"),
				ConditionExpression: aws.String("#d.#h = :holder"), ExpressionAttributeNames: names("#d", "Data", "#h", "holder"),
				ExpressionAttributeValues: values(":holder", s("h1")), ReturnValues: types.ReturnValueAllOld})
			r := e.write(err)
			if err == nil {
				r.Items = [][]map[string]any{plain(e.tb, []item{out.Attributes})}
			}
			return r
		}},
		{name: "DeleteItem condition fails", run: func(e env) result {
			_, err := e.db.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: &e.table, Key: key("CAP#2", "COMPONENT#x"),
				ConditionExpression: aws.String("Revision = :rev AND attribute_not_exists(Deleting)"), ExpressionAttributeValues: values(":rev", n("3"))})
			return e.write(err)
		}},

		// TransactWriteItems: dynamo's mutate and archive (Put, Delete, ConditionCheck, each
		// conditional), committed and cancelled.
		{name: "TransactWriteItems", run: transact(
			types.TransactWriteItem{Put: &types.Put{Item: withAttrs(key("CAP#1", "COMPONENT#e"), item{"Revision": n("1")}), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			types.TransactWriteItem{Delete: &types.Delete{Key: key("CAP#1", "DEPENDENCY#a#b"), ConditionExpression: aws.String("attribute_exists(PK)")}},
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#1", "COMPONENT#a"), ConditionExpression: aws.String(deleting)}},
		), unsupported: noTx},
		{name: "TransactWriteItems cancelled", run: transact(
			types.TransactWriteItem{Put: &types.Put{Item: withAttrs(key("CAP#1", "COMPONENT#e"), item{"Revision": n("1")}), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#2", "COMPONENT#x"), ConditionExpression: aws.String(deleting)}},
			types.TransactWriteItem{Delete: &types.Delete{Key: key("CAP#1", "RULE#r1")}},
		), unsupported: noTx},
		{name: "TransactWriteItems cancelled at the first action", run: transact(failing, putE, delRule), unsupported: noTx},
		{name: "TransactWriteItems cancelled at the last action", run: transact(putE, delRule, failing), unsupported: noTx},
		{name: "TransactWriteItems cancelled at two actions", run: transact(failing, putE,
			types.TransactWriteItem{Delete: &types.Delete{Key: key("CAP#1", "RULE#r1"), ConditionExpression: aws.String("attribute_not_exists(PK)")}}),
			unsupported: noTx, differs: map[string]string{"minidyn": minidynFirstFailure}},
		{name: "TransactWriteItems ConditionCheck on an absent item", run: transact(
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#9", "META"), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			putE,
		), unsupported: noTx},
		{name: "TransactWriteItems ConditionCheck on an absent item fails", run: transact(
			putE,
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#9", "META"), ConditionExpression: aws.String(deleting)}},
		), unsupported: noTx},
		{name: "TransactWriteItems two actions on one item", run: transact(
			putE,
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#1", "COMPONENT#e"), ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		), unsupported: noTx},
		{name: "TransactWriteItems ReturnValuesOnConditionCheckFailure", run: transact(
			putE,
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: key("CAP#2", "COMPONENT#x"), ConditionExpression: aws.String(deleting),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		), unsupported: noTx},
		{name: "TransactWriteItems token record absent, then expired, then live", run: func(e env) result {
			r := transact(tokenPut("1500"), putE)(e)
			r2 := transact(tokenPut("2500"))(e) // expired: written again
			r3 := transact(tokenPut("1500"))(e) // live: the condition fails
			r.Err += " | " + r2.Err + " | " + r3.Err
			r.Table = append(r.Table, r3.Table...)
			return r
		}, unsupported: noTx},
		{name: "TransactWriteItems Update", run: transact(
			types.TransactWriteItem{Update: &types.Update{Key: key("CAP#2", "META"), UpdateExpression: aws.String("SET Revision = :r, #d = :d"),
				ConditionExpression: aws.String("Revision = :old"), ExpressionAttributeNames: names("#d", "Data"),
				ExpressionAttributeValues: values(":r", n("4"), ":old", n("3"), ":d", &types.AttributeValueMemberM{Value: item{"name": s("two")}})}},
			delRule,
		), unsupported: noTx},
		{name: "TransactWriteItems Update cancelled", run: transact(
			delRule,
			types.TransactWriteItem{Update: &types.Update{Key: key("CAP#2", "META"), UpdateExpression: aws.String("SET Revision = :r"),
				ConditionExpression: aws.String("Revision = :old"), ExpressionAttributeValues: values(":r", n("4"), ":old", n("2"))}},
		), unsupported: noTx},
		{name: "TransactWriteItems over 100 actions", run: func(e env) result {
			var actions []types.TransactWriteItem
			for i := range 101 {
				actions = append(actions, types.TransactWriteItem{Put: &types.Put{Item: key("CAP#5", fmt.Sprintf("COMPONENT#%03d", i))}})
			}
			return transact(actions...)(e)
		}, unsupported: noTx, differs: map[string]string{"minidyn": "minidyn has no limit on a transaction's actions; DynamoDB refuses more than 100 with ValidationException"}},
		{name: "TransactWriteItems 100 actions", run: func(e env) result {
			var actions []types.TransactWriteItem
			for i := range 100 {
				actions = append(actions, types.TransactWriteItem{Put: &types.Put{Item: key("CAP#5", fmt.Sprintf("COMPONENT#%03d", i))}})
			}
			return transact(actions...)(e)
		}, unsupported: noTx},

		// UpdateItem: the store sends none, but tests corrupt items with it (SET of nested
		// paths, REMOVE), so the embedded default and the tests' backend implement it.
		{name: "UpdateItem", run: update(dynamodb.UpdateItemInput{Key: key("CAP#2", "META"),
			UpdateExpression: aws.String("SET Revision = :r"), ConditionExpression: aws.String("attribute_exists(PK)"), ExpressionAttributeValues: values(":r", n("4"))})},
		{name: "UpdateItem nested path ALL_NEW", run: update(dynamodb.UpdateItemInput{Key: key("CAP#1", "COMPONENT#a"),
			UpdateExpression: aws.String("SET #d.#n = :n, Revision = Revision + :one"), ExpressionAttributeNames: names("#d", "Data", "#n", "name"),
			ExpressionAttributeValues: values(":n", s("renamed"), ":one", n("1")), ReturnValues: types.ReturnValueAllNew})},
		{name: "UpdateItem nested map path ALL_OLD", run: update(dynamodb.UpdateItemInput{Key: key("CAP#1", "COMPONENT#a"),
			UpdateExpression: aws.String("SET #d.#a = :m, Extra = if_not_exists(Extra, :z) REMOVE Revision"), ExpressionAttributeNames: names("#d", "Data", "#a", "aggregates"),
			ExpressionAttributeValues: values(":m", &types.AttributeValueMemberM{Value: item{"total": n("7"), "list": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}}}, ":z", n("0")),
			ReturnValues:              types.ReturnValueAllOld}), differs: map[string]string{"minidyn": "minidyn stores an empty list as NULL and ignores a REMOVE clause that follows SET"}},
		{name: "UpdateItem path under an absent map", run: update(dynamodb.UpdateItemInput{Key: key("CAP#1", "COMPONENT#a"),
			UpdateExpression: aws.String("SET #d.#a.#t = :n"), ExpressionAttributeNames: names("#d", "Data", "#a", "aggregates", "#t", "total"),
			ExpressionAttributeValues: values(":n", n("1"))})},
		{name: "UpdateItem REMOVE nested", run: update(dynamodb.UpdateItemInput{Key: key("CAP#1", "COMPONENT#b"),
			UpdateExpression: aws.String("REMOVE #d.#st, Nothing"), ExpressionAttributeNames: names("#d", "Data", "#st", "status")})},
		{name: "UpdateItem condition fails", run: update(dynamodb.UpdateItemInput{Key: key("CAP#2", "COMPONENT#x"),
			UpdateExpression: aws.String("SET Revision = :r"), ConditionExpression: aws.String("attribute_not_exists(Deleting)"), ExpressionAttributeValues: values(":r", n("9"))})},
		{name: "UpdateItem absent item", run: update(dynamodb.UpdateItemInput{Key: key("CAP#7", "META"),
			UpdateExpression: aws.String("SET Revision = :r"), ExpressionAttributeValues: values(":r", n("1")), ReturnValues: types.ReturnValueAllNew})},
		{name: "UpdateItem absent item condition fails", run: update(dynamodb.UpdateItemInput{Key: key("CAP#7", "META"),
			UpdateExpression: aws.String("SET Revision = :r"), ConditionExpression: aws.String("attribute_exists(PK)"), ExpressionAttributeValues: values(":r", n("1"))})},
		{name: "UpdateItem key attribute", run: update(dynamodb.UpdateItemInput{Key: key("CAP#2", "META"),
			UpdateExpression: aws.String("SET SK = :k"), ExpressionAttributeValues: values(":k", s("OTHER"))})},
		{name: "UpdateItem GSI key moves the index entry", run: then(update(dynamodb.UpdateItemInput{Key: key("CAP#1", "METRIC#a#2026-01-01"),
			UpdateExpression: aws.String("SET GSI1SK = :k"), ExpressionAttributeValues: values(":k", s("2026-01-09#latency"))}),
			func() *dynamodb.QueryInput { return partition(true, "METRICS#a", "", "") })},
		{name: "UpdateItem REMOVE GSI key leaves the index", run: then(update(dynamodb.UpdateItemInput{Key: key("CAP#1", "METRIC#a#2026-01-02"),
			UpdateExpression: aws.String("REMOVE GSI1PK")}),
			func() *dynamodb.QueryInput { return partition(true, "METRICS#a", "", "") }), differs: map[string]string{"minidyn": minidynStaleIndex}},
		{name: "PutItem without the GSI key leaves the index", run: then(func(e env) result {
			return e.write(put(e, withAttrs(key("CAP#1", "METRIC#a#2026-01-04"), item{"Data": &types.AttributeValueMemberM{Value: item{"value": s("x")}}}), "", nil, nil))
		}, func() *dynamodb.QueryInput { return partition(true, "METRICS#a", "", "") }), differs: map[string]string{"minidyn": minidynStaleIndex}},
		{name: "TransactWriteItems Delete leaves the index", run: then(transact(
			types.TransactWriteItem{Delete: &types.Delete{Key: key("CAP#1", "METRIC#a#2026-01-03"), ConditionExpression: aws.String("attribute_exists(PK)")}}),
			func() *dynamodb.QueryInput { return partition(true, "METRICS#a", "", "") }), unsupported: noTx},
	}
}

// segments returns the items of all of a parallel Scan's segments, sorted by key, each once,
// with how many came from more than one segment.
func segments(tb testing.TB, all []item) result {
	var r result
	items := plain(tb, sortByKey(all))
	seen := map[string]bool{}
	var distinct []map[string]any
	for _, it := range items {
		k := fmt.Sprint(it["PK"], "\x00", it["SK"])
		if seen[k] {
			r.Repeated++
			continue
		}
		seen[k] = true
		distinct = append(distinct, it)
	}
	r.Items = [][]map[string]any{distinct}
	return r
}

func asJSON(tb testing.TB, r result) string {
	tb.Helper()
	js, err := json.Marshal(r)
	if err != nil {
		tb.Fatal(err)
	}
	return string(js)
}

func withAttrs(it item, extra item) item {
	for k, v := range extra {
		it[k] = v
	}
	return it
}

func TestConformance(t *testing.T) {
	bs := backends(t)
	ctx := context.Background()
	for _, c := range conformanceCases() {
		t.Run(c.name, func(t *testing.T) {
			// The reference is the first backend that implements the case exactly (minidyn
			// where it can); a backend that divides its answer differently is compared loosely.
			type answer struct {
				backend string
				result
			}
			var exact, loose []answer
			for _, b := range bs {
				got := c.run(env{tb: t, ctx: ctx, db: b.db, table: newTable(t, b.db)})
				if why, ok := c.unsupported[b.name]; ok {
					if got.Err == "" {
						t.Errorf("%s: %s, yet it answered without an error: %+v", b.name, why, got)
					} else {
						t.Logf("%s refuses it (%s): %s", b.name, why, got.Err)
					}
					continue
				}
				if why, ok := c.differs[b.name]; ok {
					t.Logf("%s differs from DynamoDB here (%s): it answered %s", b.name, why, asJSON(t, got))
					continue
				}
				if why, ok := c.loose[b.name]; ok {
					t.Logf("%s is compared across pages and segments: %s", b.name, why)
					loose = append(loose, answer{b.name, got})
					continue
				}
				if got.Repeated > 0 {
					t.Errorf("%s returned %d items from more than one Scan segment", b.name, got.Repeated)
				}
				exact = append(exact, answer{b.name, got})
			}
			if len(exact) == 0 && len(loose) > 0 {
				t.Logf("no backend here answers exactly (dynalite does, when DYNAMODB_TEST_ENDPOINT is set): %s is the reference", loose[0].backend)
				exact, loose = loose[:1], loose[1:]
			}
			if len(exact) == 0 {
				return // every backend refused it, as the case says it must
			}
			ref := exact[0]
			for _, a := range exact[1:] {
				if g, w := asJSON(t, a.result), asJSON(t, ref.result); g != w {
					t.Errorf("%s answered\n%s\n%s (the reference) answered\n%s", a.backend, g, ref.backend, w)
				}
			}
			for _, a := range loose {
				if g, w := asJSON(t, a.flat()), asJSON(t, ref.flat()); g != w {
					t.Errorf("%s answered (pages and segments joined)\n%s\n%s (the reference) answered\n%s", a.backend, g, ref.backend, w)
				}
			}
		})
	}
}
