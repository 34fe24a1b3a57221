package memdyn_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/memdyn"
)

// memdyn's own answers where the conformance test has no reference that answers like DynamoDB
// (see the cases' differs), its TTL expiry and its fault hooks.

func newMemdyn(t *testing.T) (*memdyn.Server, env) {
	t.Helper()
	srv := memdyn.New()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	db, err := dynamo.NewClient(context.Background(), dynamo.ClientConfig{Options: awsconf.Options{Endpoint: hs.URL, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, env{tb: t, ctx: context.Background(), db: db, table: newTable(t, db)}
}

func (e env) get(pk, sk string) item {
	out, err := e.db.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: &e.table, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		e.tb.Fatalf("GetItem(%s, %s): %v", pk, sk, err)
	}
	return out.Item
}

func TestTransactionReportsEveryFailure(t *testing.T) {
	_, e := newMemdyn(t)
	_, err := e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{TableName: &e.table, Key: key("CAP#2", "COMPONENT#x"), ConditionExpression: aws.String("attribute_not_exists(Deleting)")}},
		{Put: &types.Put{TableName: &e.table, Item: key("CAP#1", "COMPONENT#e")}},
		{Delete: &types.Delete{TableName: &e.table, Key: key("CAP#1", "RULE#r1"), ConditionExpression: aws.String("attribute_not_exists(PK)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("TransactWriteItems with two failing conditions = %v, want TransactionCanceledException", err)
	}
	if want := "Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None, ConditionalCheckFailed]"; tce.ErrorMessage() != want {
		t.Errorf("message = %q, want %q", tce.ErrorMessage(), want)
	}
	if got := errCode(err); got != `TransactionCanceledException ConditionalCheckFailed,None,ConditionalCheckFailed {"Data":{"name":"rule 1"},"PK":"CAP#1","SK":"RULE#r1"}` {
		t.Errorf("reasons = %s", got)
	}
	if e.get("CAP#1", "COMPONENT#e") != nil || e.get("CAP#1", "RULE#r1") == nil {
		t.Errorf("a cancelled transaction wrote")
	}
}

func TestTransactionLimits(t *testing.T) {
	_, e := newMemdyn(t)
	var actions []types.TransactWriteItem
	for i := range 101 {
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &e.table, Item: key("CAP#5", fmt.Sprintf("C#%03d", i))}})
	}
	_, err := e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	if errCode(err) != "ValidationException" || e.get("CAP#5", "C#000") != nil {
		t.Errorf("101 actions = %v, want ValidationException and nothing written", err)
	}
	big := strings.Repeat("x", 300*1024)
	actions = nil
	for i := range 14 { // 14 × 300 KB > 4 MB
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &e.table, Item: withAttrs(key("CAP#5", fmt.Sprintf("C#%03d", i)), item{"B": s(big)})}})
	}
	_, err = e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	if errCode(err) != "ValidationException" || e.get("CAP#5", "C#000") != nil {
		t.Errorf("4.2 MB of items = %v, want ValidationException and nothing written", err)
	}
	_, err = e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &e.table, Item: withAttrs(key("CAP#5", "C#big"), item{"B": s(strings.Repeat("x", 401*1024))})}}}})
	if errCode(err) != "ValidationException" {
		t.Errorf("a 401 KB item = %v, want ValidationException", err)
	}
}

func TestTransactionClientRequestToken(t *testing.T) {
	srv, e := newMemdyn(t)
	in := func(rev string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("tok-1"), TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &e.table, Item: withAttrs(key("CAP#6", "META"), item{"Revision": n(rev)}), ConditionExpression: aws.String("attribute_not_exists(PK)")}}}}
	}
	first, err := e.db.TransactWriteItems(e.ctx, in("1"))
	if err != nil {
		t.Fatalf("first call: %v", err)
	}
	// A committed transaction names the generation it committed at: the engine's, while
	// nothing else is written.
	if got, want := generationHeader(first.ResultMetadata), fmt.Sprint(srv.Generation()); got != want {
		t.Errorf("%s of a commit = %q, want %q (Generation)", memdyn.GenerationHeader, got, want)
	}
	// The same call again (an SDK retry after a lost answer) succeeds without writing again,
	// though its condition would now fail; it wrote nothing, so it names no generation (the
	// items it would have written may have changed since the first call).
	again, err := e.db.TransactWriteItems(e.ctx, in("1"))
	if err != nil {
		t.Errorf("the same call with the same token = %v, want success", err)
	} else if got := generationHeader(again.ResultMetadata); got != "" {
		t.Errorf("%s of a replay = %q, want none", memdyn.GenerationHeader, got)
	}
	if _, err := e.db.TransactWriteItems(e.ctx, in("2")); errCode(err) != "IdempotentParameterMismatchException" {
		t.Errorf("another call with the same token = %v, want IdempotentParameterMismatchException", err)
	}
}

// A PutItem that committed names the generation it committed at; one that failed its
// condition names none and, having written nothing, leaves the generation where it was (a lost
// lease attempt every few seconds moved it, and with it every memo kept by it), as do an
// UpdateItem and a DeleteItem that failed theirs.
func TestPutItemGeneration(t *testing.T) {
	srv, e := newMemdyn(t)
	put := func() (*dynamodb.PutItemOutput, error) {
		return e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: key("LEASE#x", "META"), ConditionExpression: aws.String("attribute_not_exists(PK)")})
	}
	out, err := put()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := generationHeader(out.ResultMetadata), fmt.Sprint(srv.Generation()); got != want {
		t.Errorf("%s of a PutItem = %q, want %q (Generation)", memdyn.GenerationHeader, got, want)
	}
	before := srv.Generation()
	if _, err := put(); errCode(err) != "ConditionalCheckFailedException" {
		t.Fatalf("second PutItem = %v, want ConditionalCheckFailedException", err)
	}
	if g := srv.Generation(); g != before {
		t.Errorf("a PutItem that failed its condition moved the generation from %d to %d", before, g)
	}
	absent := aws.String("attribute_not_exists(PK)")
	if _, err := e.db.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: &e.table, Key: key("LEASE#x", "META"), UpdateExpression: aws.String("SET x = :x"),
		ConditionExpression: absent, ExpressionAttributeValues: map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "1"}}}); errCode(err) != "ConditionalCheckFailedException" {
		t.Fatalf("UpdateItem = %v, want ConditionalCheckFailedException", err)
	}
	if _, err := e.db.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: &e.table, Key: key("LEASE#x", "META"), ConditionExpression: absent}); errCode(err) != "ConditionalCheckFailedException" {
		t.Fatalf("DeleteItem = %v, want ConditionalCheckFailedException", err)
	}
	if g := srv.Generation(); g != before {
		t.Errorf("an UpdateItem and a DeleteItem that failed their condition moved the generation from %d to %d", before, g)
	}
}

// generationHeader is memdyn.GenerationHeader of a call's raw response.
func generationHeader(md middleware.Metadata) string {
	raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	if !ok {
		return "no raw response"
	}
	return raw.Header.Get(memdyn.GenerationHeader)
}

func TestUpdateItemRemoveAfterSet(t *testing.T) {
	_, e := newMemdyn(t)
	_, err := e.db.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: &e.table, Key: key("CAP#1", "COMPONENT#a"),
		UpdateExpression: aws.String("SET #d.#a = :m REMOVE Revision"), ExpressionAttributeNames: names("#d", "Data", "#a", "aggregates"),
		ExpressionAttributeValues: values(":m", &types.AttributeValueMemberM{Value: item{"list": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}}})})
	if err != nil {
		t.Fatal(err)
	}
	got := plainItem(e.get("CAP#1", "COMPONENT#a"))
	if fmt.Sprint(got) != "map[Data:map[aggregates:map[list:[]] name:comp a status:up] PK:CAP#1 SK:COMPONENT#a]" {
		t.Errorf("item after SET and REMOVE = %v", got)
	}
	// Unused placeholders are refused, as DynamoDB does.
	_, err = e.db.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: &e.table, Key: key("CAP#1", "COMPONENT#a"),
		UpdateExpression: aws.String("SET Revision = :r"), ExpressionAttributeValues: values(":r", n("1"), ":x", n("2"))})
	if errCode(err) != "ValidationException" {
		t.Errorf("UpdateItem with an unused value = %v, want ValidationException", err)
	}
}

func TestIndexFollowsItems(t *testing.T) {
	_, e := newMemdyn(t)
	count := func() int {
		r := e.pages(partition(true, "METRICS#a", "", ""))
		return len(r.Items[0])
	}
	if _, err := e.db.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: &e.table, Key: key("CAP#1", "METRIC#a#2026-01-02"), UpdateExpression: aws.String("REMOVE GSI1PK")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: key("CAP#1", "METRIC#a#2026-01-03")}); err != nil {
		t.Fatal(err)
	}
	if got := count(); got != 3 {
		t.Errorf("GSI1 METRICS#a after removing two items' index keys = %d items, want 3", got)
	}
}

// An item whose TTL has passed is gone at the next call once TTL is on (the store's
// CreateTable turns it on); an item with a TTL more than five years old, or not a number, stays,
// as in DynamoDB; a replaced item expires by its new TTL.
func TestTTLExpiry(t *testing.T) {
	srv, e := newMemdyn(t)
	now := time.Unix(1_800_000_000, 0)
	srv.SetClock(func() time.Time { return now })
	ttlItem := func(sk string, ttl types.AttributeValue) {
		if _, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: withAttrs(key("CAP#8", sk), item{"TTL": ttl, "GSI1PK": s("EXP"), "GSI1SK": s(sk)})}); err != nil {
			t.Fatal(err)
		}
	}
	ttlItem("soon", n("1800000010"))
	ttlItem("later", n("1800000100"))
	ttlItem("ancient", n("1000")) // seconds of 1970: DynamoDB ignores TTLs over five years old
	ttlItem("text", s("1800000010"))
	ttlItem("replaced", n("1800000010"))
	ttlItem("replaced", n("1800000200"))
	present := func() string {
		r := e.pages(partition(false, "CAP#8", "", ""))
		var sks []string
		for _, it := range r.Items[0] {
			sks = append(sks, it["SK"].(string))
		}
		ix := e.pages(partition(true, "EXP", "", ""))
		return strings.Join(sks, ",") + fmt.Sprintf(" (index %d)", len(ix.Items[0]))
	}
	if got, want := present(), "ancient,later,replaced,soon,text (index 5)"; got != want {
		t.Fatalf("before expiry: %s, want %s", got, want)
	}
	now = now.Add(50 * time.Second)
	if got, want := present(), "ancient,later,replaced,text (index 4)"; got != want {
		t.Errorf("after soon's TTL: %s, want %s", got, want)
	}
	now = now.Add(1000 * time.Second)
	if got, want := present(), "ancient,text (index 2)"; got != want {
		t.Errorf("after every TTL: %s, want %s", got, want)
	}
}

func TestTTLOff(t *testing.T) {
	srv := memdyn.New()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	db, err := dynamo.NewClient(context.Background(), dynamo.ClientConfig{Options: awsconf.Options{Endpoint: hs.URL, MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("t"), BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}, {AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS}}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	srv.SetClock(func() time.Time { return now })
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: withAttrs(key("A", "1"), item{"TTL": n("1799999999")})}); err != nil {
		t.Fatal(err)
	}
	get := func() bool {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key("A", "1")})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item != nil
	}
	if !get() {
		t.Errorf("an item expired while TTL was off")
	}
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("t"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("TTL"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	if get() {
		t.Errorf("an item written before TTL was turned on did not expire")
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("t"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("TTL"), Enabled: aws.Bool(true)}})
	if err == nil || !strings.Contains(err.Error(), "already enabled") {
		t.Errorf("enabling TTL twice = %v, want a ValidationException saying it is already enabled", err)
	}
}

// The fault hooks fail calls and leave batch requests unprocessed, as minidyn's Emulate*
// functions do.
func TestFaults(t *testing.T) {
	srv, e := newMemdyn(t)
	srv.SetFaults(&memdyn.Faults{Fail: func(op, table, index string) string {
		if index == "GSI1" {
			return "InternalServerError"
		}
		return ""
	}})
	if r := e.pages(partition(true, "METRICS#a", "", "")); r.Err != "InternalServerError" {
		t.Errorf("Query GSI1 with the index failing = %+v", r)
	}
	if r := e.pages(partition(false, "CAP#1", "", "")); r.Err != "" {
		t.Errorf("Query of the table with the index failing = %s", r.Err)
	}
	var seen atomic.Int32
	srv.SetFaults(&memdyn.Faults{Unprocessed: func(table string, n int, it map[string]*memdyn.AttributeValue) bool {
		seen.Add(1)
		return n == 1 && *it["PK"].S == "CAP#1"
	}})
	out, err := e.db.BatchGetItem(e.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{e.table: {
		Keys: []item{key("CAP#1", "COMPONENT#a"), key("CAP#1", "COMPONENT#b"), key("CAP#2", "META")}}}})
	if err != nil || len(out.Responses[e.table]) != 2 || len(out.UnprocessedKeys[e.table].Keys) != 1 {
		t.Errorf("BatchGetItem with one key left = %v, %d items, unprocessed %v", err, len(out.Responses[e.table]), out.UnprocessedKeys)
	}
	wout, err := e.db.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: {
		{DeleteRequest: &types.DeleteRequest{Key: key("CAP#1", "COMPONENT#a")}},
		{PutRequest: &types.PutRequest{Item: withAttrs(key("CAP#1", "COMPONENT#z"), item{"L": &types.AttributeValueMemberL{Value: []types.AttributeValue{}}})}},
	}}})
	if err != nil || len(wout.UnprocessedItems[e.table]) != 1 || e.get("CAP#1", "COMPONENT#a") != nil || e.get("CAP#1", "COMPONENT#z") != nil {
		t.Fatalf("BatchWriteItem with one request left = %v, unprocessed %v", err, wout.UnprocessedItems)
	}
	// The request left out comes back as sent (its empty list included), ready to resend.
	srv.SetFaults(nil)
	if _, err := e.db.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: wout.UnprocessedItems}); err != nil {
		t.Errorf("resending the unprocessed request = %v", err)
	}
	if got := fmt.Sprint(plainItem(e.get("CAP#1", "COMPONENT#z"))); got != "map[L:[] PK:CAP#1 SK:COMPONENT#z]" {
		t.Errorf("resent item = %s", got)
	}
}

func TestKeyLimits(t *testing.T) {
	_, e := newMemdyn(t)
	for _, k := range []item{key(strings.Repeat("p", 2049), "A"), key("P", strings.Repeat("s", 1025))} {
		if _, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: k}); errCode(err) != "ValidationException" {
			t.Errorf("PutItem with a key over DynamoDB's limits = %v, want ValidationException", err)
		}
	}
	if _, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: key(strings.Repeat("p", 2048), strings.Repeat("s", 1024))}); err != nil {
		t.Errorf("PutItem with keys at DynamoDB's limits = %v", err)
	}
}

// Reads run side by side: two BatchGetItem calls are inside the read lock at once (each waits,
// in the Unprocessed hook that runs under it, for the other to arrive; under an exclusive lock
// the second could never arrive).
func TestReadsShareTheLock(t *testing.T) {
	srv, e := newMemdyn(t)
	arrived := make(chan struct{}, 2)
	both := make(chan struct{})
	var n atomic.Int32
	srv.SetFaults(&memdyn.Faults{Unprocessed: func(string, int, map[string]*memdyn.AttributeValue) bool {
		arrived <- struct{}{}
		if n.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-time.After(10 * time.Second): // a deadlock guard, not a timing assertion
			t.Error("the second read never entered while the first held the lock")
		}
		return false
	}})
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := e.db.BatchGetItem(e.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{e.table: {Keys: []item{key("CAP#2", "META")}}}})
			done <- err
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("BatchGetItem: %v", err)
		}
	}
	if len(arrived) != 2 {
		t.Errorf("%d reads entered the hook, want 2", len(arrived))
	}
}

// Generation moves on with every kind of write (and with SetClock and SetFaults, which change
// what reads return) and stays put across reads: the embedded default's read memo
// (dynamo.Options.Generation) relies on it to never serve an answer older than a read.
func TestGenerationMovesWithEveryWrite(t *testing.T) {
	srv, e := newMemdyn(t)
	kv := func(pk, sk string) map[string]types.AttributeValue { return key(pk, sk) }
	writes := []struct {
		name string
		do   func() error
	}{
		{"PutItem", func() error {
			_, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: kv("G#1", "A")})
			return err
		}},
		{"UpdateItem", func() error {
			_, err := e.db.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: &e.table, Key: kv("G#1", "A"), UpdateExpression: aws.String("SET x = :x"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "1"}}})
			return err
		}},
		{"DeleteItem", func() error {
			_, err := e.db.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: &e.table, Key: kv("G#1", "A")})
			return err
		}},
		{"BatchWriteItem", func() error {
			_, err := e.db.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{e.table: {{PutRequest: &types.PutRequest{Item: kv("G#2", "B")}}}}})
			return err
		}},
		{"TransactWriteItems", func() error {
			_, err := e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: &e.table, Item: kv("G#3", "C")}}}})
			return err
		}},
		// A PutItem, UpdateItem or DeleteItem that failed its condition does not move it
		// (TestPutItemGeneration).
		{"a TransactWriteItems that failed its condition", func() error {
			_, err := e.db.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: &e.table,
				Item: kv("G#3", "C"), ConditionExpression: aws.String("attribute_not_exists(PK)")}}}})
			if err == nil {
				return errors.New("the condition held")
			}
			return nil
		}},
		{"SetClock", func() error { srv.SetClock(time.Now); return nil }},
		{"SetFaults", func() error { srv.SetFaults(nil); return nil }},
	}
	for _, w := range writes {
		before := srv.Generation()
		e.get("G#1", "A")
		if _, err := e.db.Query(e.ctx, &dynamodb.QueryInput{TableName: &e.table, KeyConditionExpression: aws.String("PK = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "G#2"}}}); err != nil {
			t.Fatal(err)
		}
		if g := srv.Generation(); g != before {
			t.Fatalf("before %s: reads moved the generation from %d to %d", w.name, before, g)
		}
		if err := w.do(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if g := srv.Generation(); g <= before {
			t.Errorf("%s left the generation at %d", w.name, g)
		}
	}
}

// Query with Select COUNT answers Count (after the filter) and no Items, page by page as
// without it.
func TestQuerySelectCount(t *testing.T) {
	_, e := newMemdyn(t)
	for i := range 5 {
		it := key("CAP#C", fmt.Sprintf("ROW#%d", i))
		it["Kind"] = &types.AttributeValueMemberS{Value: []string{"odd", "even"}[i%2]}
		if _, err := e.db.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: &e.table, Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	in := &dynamodb.QueryInput{TableName: &e.table, KeyConditionExpression: aws.String("PK = :pk"), Select: types.SelectCount,
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "CAP#C"}, ":k": &types.AttributeValueMemberS{Value: "even"}},
		FilterExpression:          aws.String("Kind = :k"), Limit: aws.Int32(3)}
	out, err := e.db.Query(e.ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Count != 1 || out.ScannedCount != 3 || len(out.Items) != 0 || out.LastEvaluatedKey == nil {
		t.Fatalf("first page: Count %d, ScannedCount %d, %d items, last key %v", out.Count, out.ScannedCount, len(out.Items), out.LastEvaluatedKey)
	}
	in.ExclusiveStartKey = out.LastEvaluatedKey
	if out, err = e.db.Query(e.ctx, in); err != nil || out.Count != 1 || out.LastEvaluatedKey != nil {
		t.Fatalf("second page: %+v, %v", out, err)
	}
}
