package dynamo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/dynamo/dynamotest"
)

const goneID = "CAP-GONE-001"

// exportOf exports env's table.
func exportOf(tb testing.TB, env *dynamotest.Env) []byte {
	tb.Helper()
	var b bytes.Buffer
	n, err := env.Store.Export(context.Background(), &b)
	if err != nil {
		tb.Fatalf("Export = %v", err)
	}
	if got := bytes.Count(b.Bytes(), []byte("\n")); got != n {
		tb.Fatalf("Export = %d lines, wrote %d", n, got)
	}
	return b.Bytes()
}

// itemsIn counts the items of env's table.
func itemsIn(tb testing.TB, env *dynamotest.Env) int {
	tb.Helper()
	n := 0
	in := &dynamodb.ScanInput{TableName: aws.String(env.Table), Select: types.SelectCount}
	for {
		out, err := env.Client.Scan(context.Background(), in)
		if err != nil {
			tb.Fatalf("Scan: %v", err)
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// withHistory gives the sample catalogue in env what no bulk load writes: a capability at its
// second revision with its first kept as a version, a rule's version, writers on both, the
// history of a deleted capability ending in its tombstone, and what an export leaves out (an
// idempotency token, items of a partition without its capability). It writes items directly,
// as the store's writers leave them, so that it runs on every backend.
func withHistory(tb testing.TB, env *dynamotest.Env) {
	tb.Helper()
	ctx := context.Background()
	table := aws.String(env.Table)
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}
	}
	get := func(pk, sk string) map[string]types.AttributeValue {
		out, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
		if err != nil || out.Item == nil {
			tb.Fatalf("GetItem %s %s = %v, %v", pk, sk, out, err)
		}
		return out.Item
	}
	put := func(item map[string]types.AttributeValue) {
		if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: item}); err != nil {
			tb.Fatalf("PutItem %v %v: %v", item["PK"], item["SK"], err)
		}
	}
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	version := func(item map[string]types.AttributeValue, sk, rev string) map[string]types.AttributeValue {
		v := map[string]types.AttributeValue{}
		for k, a := range item {
			switch k {
			case "GSI1PK", "GSI1SK", "WriteSeq", "TTL":
			default:
				v[k] = a
			}
		}
		v["SK"], v["EntityType"], v["Revision"] = s(sk), s("Version"), n(rev)
		return v
	}
	data := func(item map[string]types.AttributeValue) map[string]types.AttributeValue {
		return item["Data"].(*types.AttributeValueMemberM).Value
	}

	// Alert Management at revision 2, its first revision (another name) a version.
	alertPK := "CAPABILITY#" + alertID
	meta := get(alertPK, "METADATA")
	first := version(meta, "VERSION#CAPABILITY#v000001", "1")
	first["Data"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}
	for k, v := range data(meta) {
		data(first)[k] = v
	}
	data(first)["name"] = s("Alerting (first name)")
	first["ActorName"], first["ActorRole"] = s("ops-pipeline"), s("devops")
	put(first)
	for _, sk := range []string{"METADATA", "INDEX#DOMAIN", "INDEX#HEALTH"} {
		_, err := env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key(alertPK, sk),
			UpdateExpression:          aws.String("SET Revision = :r, ActorName = :n, ActorRole = :role, RequestId = :q"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":r": n("2"), ":n": s("ana <admin> & co"), ":role": s("admin"), ":q": s("req-0001")}})
		if err != nil {
			tb.Fatalf("UpdateItem %s: %v", sk, err)
		}
	}
	// A rule's first revision.
	rules, err := env.Client.Query(ctx, &dynamodb.QueryInput{TableName: table, KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :r)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(alertPK), ":r": s("RULE#")}})
	if err != nil || len(rules.Items) == 0 {
		tb.Fatalf("no rule in %s: %v", alertID, err)
	}
	rule := rules.Items[0]
	ruleID := data(rule)["ruleId"].(*types.AttributeValueMemberS).Value
	put(version(rule, "VERSION#RULE#"+ruleID+"#v000001", "1"))

	// A deleted capability: two revisions, the second its tombstone.
	gone := version(meta, "VERSION#CAPABILITY#v000001", "1")
	gone["PK"] = s("CAPABILITY#" + goneID)
	gone["Data"] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"capabilityId": s(goneID), "name": s("Gone \"quoted\"\nname"), "businessDomain": s("operations"),
		"status": s("deprecated"), "priority": s("low"), "tags": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), s("b")}},
		"aggregates": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"healthScore": n("87.25"), "totalComponents": n("0")}},
	}}
	put(gone)
	tomb := version(gone, "VERSION#CAPABILITY#v000002", "2")
	tomb["Deleted"] = &types.AttributeValueMemberBOOL{Value: true}
	tomb["ActorName"], tomb["ActorRole"], tomb["RequestId"] = s("ana"), s("admin"), s("req-0002")
	put(tomb)

	// Left out of an export: a token, and a rule whose capability is gone.
	put(map[string]types.AttributeValue{"PK": s("TOKEN#tok-1"), "SK": s("TOKEN"), "EntityType": s("IdempotencyToken"),
		"Data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"x": s("y")}}})
	orphan := version(rule, "RULE#001#orphan-rule", "1")
	orphan["PK"], orphan["EntityType"] = s("CAPABILITY#CAP-ORPHAN-001"), s("ConfigurationRule")
	put(orphan)
}

// An export holds every entity with its history, in the seed's field names, and nothing that
// is derived or not the catalogue; importing it into an empty table and exporting again gives
// the same bytes, the table checks clean, and importing it again writes nothing new.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	loadSample(t, src)
	withHistory(t, src)
	first := exportOf(t, src)
	text := string(first)
	for _, want := range []string{
		`{"entityType":"Capability","revision":2,"createdAt":"`,
		`"actor":{"name":"ana <admin> & co","role":"admin"},"requestId":"req-0001","data":{"aggregates":{`,
		`{"entityType":"Version","versionOf":"Capability","revision":1,`,
		`"name":"Alerting (first name)"`,
		`{"entityType":"Version","versionOf":"ConfigurationRule","revision":1,`,
		`"actor":{"name":"ana","role":"admin"},"requestId":"req-0002","deleted":true,"data":{"aggregates":{"healthScore":87.25,"totalComponents":0},"businessDomain":"operations","capabilityId":"CAP-GONE-001","name":"Gone \"quoted\"\nname",`,
		`"entityType":"SoftwareComponent"`, `"entityType":"ComponentDependency"`, `"entityType":"ImplementationJob"`,
		`"entityType":"PerformanceMetric"`, `"entityType":"ConfigurationRule"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("export lacks %s", want)
		}
	}
	for _, unwanted := range []string{"CapabilityDomainIndex", "CapabilityHealthIndex", "ComponentClaim", "IdempotencyToken", "orphan-rule", `"PK"`, "GSI1"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("export holds %s", unwanted)
		}
	}

	dst := newEnv(t)
	report, err := dst.Store.Import(ctx, bytes.NewReader(first), 4)
	if err != nil {
		t.Fatalf("Import = %v", err)
	}
	if report.Capabilities != 7 || report.Deleted != 1 || len(report.Skipped) != 0 || len(report.Problems) != 0 || report.Lines != bytes.Count(first, []byte("\n")) {
		t.Errorf("Import = %+v, want 7 capabilities, 1 deleted, no problem", report)
	}
	if second := exportOf(t, dst); !bytes.Equal(first, second) {
		t.Errorf("export -> import -> export differs:\n%s", firstDiff(first, second))
	}
	check, err := dst.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Findings) != 0 {
		t.Errorf("Check after import = %v", findings(check.Findings))
	}
	c, err := dst.Store.Capability(ctx, alertID)
	if err != nil || c.Revision != 2 {
		t.Errorf("Capability(%s) = %+v, %v; want revision 2", alertID, c, err)
	}

	items := itemsIn(t, dst)
	again, err := dst.Store.Import(ctx, bytes.NewReader(first), 4)
	if err != nil {
		t.Fatalf("Import again = %v", err)
	}
	if len(again.Skipped) != 7 || again.Capabilities != 0 {
		t.Errorf("Import again = %+v, want the 7 capabilities skipped", again)
	}
	if got := itemsIn(t, dst); got != items {
		t.Errorf("Import again: %d items, want %d", got, items)
	}
}

// The same round trip over history written by the store's own writers: updates keep versions,
// a delete leaves the capability's history ending in its tombstone.
func TestExportImportRoundTripAfterMutations(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	src.RequireTransactions(t)
	loadSample(t, src)
	for _, name := range []string{"Alerting", "Alerting & Paging"} {
		c, err := src.Store.Capability(ctx, alertID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Store.UpdateCapability(ctx, alertID, c.Revision, func(c *catalog.Capability) error { c.Name = name; return nil }, dynamo.Idempotency{}); err != nil {
			t.Fatalf("UpdateCapability: %v", err)
		}
	}
	// Executed rules: their metrics are exported with them; the outbox items they queued are not.
	if _, err := src.Store.ExecuteRules(ctx, alertID, map[string]any{"source": "production"}, nil, dynamo.Idempotency{}); err != nil {
		t.Fatalf("ExecuteRules: %v", err)
	}
	const deleted = "CAP-RPT-ANL-001"
	c, err := src.Store.Capability(ctx, deleted)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Store.DeleteCapability(ctx, deleted, c.Revision, dynamo.Idempotency{}); err != nil {
		t.Fatalf("DeleteCapability: %v", err)
	}
	first := exportOf(t, src)
	if !bytes.Contains(first, []byte(`"name":"Alerting"`)) || !bytes.Contains(first, []byte(`"deleted":true`)) {
		t.Errorf("export lacks the history or the tombstone:\n%s", grep(first, "Version"))
	}
	if bytes.Contains(first, []byte("NOTIFY#")) || !bytes.Contains(first, []byte(`"executionCount":45231`)) {
		t.Errorf("export holds outbox items, or lacks the executed rule's metrics:\n%s", grep(first, "rule-alert-severity-mapping"))
	}
	dst := newEnv(t)
	report, err := dst.Store.Import(ctx, bytes.NewReader(first), 4)
	if err != nil {
		t.Fatalf("Import = %v", err)
	}
	if report.Capabilities != 6 || report.Deleted != 1 || len(report.Problems) != 0 {
		t.Errorf("Import = %+v, want 6 capabilities, 1 deleted, no problem", report)
	}
	if second := exportOf(t, dst); !bytes.Equal(first, second) {
		t.Errorf("export -> import -> export differs:\n%s", firstDiff(first, second))
	}
	// The import recounted the counters: they equal the source's, the deleted one left out.
	want, err := src.Store.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts(t, dst.Store, "after the import")
	if got, err := dst.Store.Counts(ctx); err != nil || !reflect.DeepEqual(got, want) || got.Capabilities != 6 {
		t.Errorf("counters after the import = %+v, %v\nsource's %+v", got, err, want)
	}
}

// A bad line anywhere refuses the whole file: nothing is written, and the error names the line
// and the field.
func TestImportRefusesBadLines(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	loadSample(t, src)
	withHistory(t, src)
	good := bytes.SplitAfter(exportOf(t, src), []byte("\n"))
	good = good[:len(good)-1] // the empty tail after the last newline
	find := func(substr string) int {
		for i, l := range good {
			if bytes.Contains(l, []byte(substr)) {
				return i
			}
		}
		t.Fatalf("no line holds %s", substr)
		return -1
	}
	// edit returns the file with line i (from 0) changed by f on its JSON.
	edit := func(i int, f func(m map[string]any)) [][]byte {
		var m map[string]any
		if err := json.Unmarshal(good[i], &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out := append([][]byte{}, good...)
		out[i] = append(b, '\n')
		return out
	}
	data := func(m map[string]any) map[string]any { return m["data"].(map[string]any) }
	component := find(`"componentId":"api-server-alert-001"`)
	fraudComponent := -1
	for i, l := range good {
		if bytes.Contains(l, []byte(`"SoftwareComponent"`)) && bytes.Contains(l, []byte(`"capabilityId":"CAP-FRAUD-DET-001"`)) {
			fraudComponent = i
			break
		}
	}
	if fraudComponent < 0 {
		t.Fatal("no component of CAP-FRAUD-DET-001")
	}
	alertMeta := find(`"entityType":"Capability","revision":2`)
	long := append([][]byte{}, good...)
	long[3] = append(bytes.Repeat([]byte(" "), 1<<20+1), '\n')
	tests := []struct {
		name  string
		file  [][]byte
		line  int // from 1
		field string
	}{
		{"not JSON", func() [][]byte { f := append([][]byte{}, good...); f[2] = []byte("{nope\n"); return f }(), 3, ""},
		{"unknown entity type", edit(4, func(m map[string]any) { m["entityType"] = "Widget" }), 5, "entityType"},
		{"unknown field", edit(4, func(m map[string]any) { m["PK"] = "CAPABILITY#X" }), 5, ""},
		{"bad ID", edit(component, func(m map[string]any) { data(m)["componentId"] = "api#server" }), component + 1, "data.componentId"},
		{"invalid entity", edit(component, func(m map[string]any) { data(m)["order"] = 0 }), component + 1, "data.order"},
		{"bad time", edit(component, func(m map[string]any) { m["updatedAt"] = "yesterday" }), component + 1, "updatedAt"},
		{"revision 0", edit(component, func(m map[string]any) { m["revision"] = 0 }), component + 1, "revision"},
		{"dependency on a missing component", edit(find(`"entityType":"ComponentDependency"`), func(m map[string]any) { data(m)["targetComponentId"] = "nowhere-1" }),
			find(`"entityType":"ComponentDependency"`) + 1, "data.targetComponentId"},
		{"component ID in two capabilities", edit(fraudComponent, func(m map[string]any) { data(m)["componentId"] = "api-server-alert-001" }),
			max(fraudComponent, component) + 1, "data.componentId"},
		{"items without their capability", append(append([][]byte{}, good[:alertMeta]...), good[alertMeta+1:]...), 1, "data.capabilityId"},
		{"the same item twice", append(append([][]byte{}, good...), good[component]), len(good) + 1, ""},
		{"a line over 1 MiB", long, 4, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := newEnv(t)
			_, err := dst.Store.Import(ctx, bytes.NewReader(bytes.Join(tt.file, nil)), 4)
			var ie *dynamo.ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("Import = %v, want an *ImportError", err)
			}
			if ie.Line != tt.line || ie.Field != tt.field {
				t.Errorf("Import = %v, want line %d field %q", err, tt.line, tt.field)
			}
			if n := itemsIn(t, dst); n != 0 {
				t.Errorf("Import refused the file but wrote %d items", n)
			}
		})
	}
}

// An import never overwrites: a capability live in the table, or a component ID claimed there
// by another capability, refuses the whole file.
func TestImportRefusesWhatTheTableHolds(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	loadSample(t, src)
	file := exportOf(t, src)

	live := newEnv(t)
	loadSample(t, live)
	c, err := live.Store.Capability(ctx, alertID)
	if err != nil {
		t.Fatal(err)
	}
	// The same capability, changed since the export.
	_, err = live.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(live.Table),
		Key:              map[string]types.AttributeValue{"PK": s("CAPABILITY#" + alertID), "SK": s("METADATA")},
		UpdateExpression: aws.String("SET Revision = :r"), ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberN{Value: fmt.Sprint(c.Revision + 1)}}})
	if err != nil {
		t.Fatal(err)
	}
	before := itemsIn(t, live)
	_, err = live.Store.Import(ctx, bytes.NewReader(file), 4)
	if !errors.Is(err, dynamo.ErrConflict) || !strings.Contains(err.Error(), alertID+" exists in the table") {
		t.Errorf("Import over a live capability = %v, want ErrConflict naming %s", err, alertID)
	}
	if after := itemsIn(t, live); after != before {
		t.Errorf("Import refused but the table went from %d to %d items", before, after)
	}

	claimed := newEnv(t)
	_, err = claimed.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(claimed.Table), Item: map[string]types.AttributeValue{
		"PK": s("COMPONENTID#api-server-alert-001"), "SK": s("CLAIM"), "EntityType": s("ComponentClaim"), "Revision": &types.AttributeValueMemberN{Value: "1"},
		"Data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"capabilityId": s("CAP-OTHER-001"), "componentId": s("api-server-alert-001")}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = claimed.Store.Import(ctx, bytes.NewReader(file), 4)
	if !errors.Is(err, dynamo.ErrConflict) || !strings.Contains(err.Error(), "claimed in the table by capability CAP-OTHER-001") {
		t.Errorf("Import over a claimed component ID = %v, want ErrConflict naming the claim", err)
	}
	if n := itemsIn(t, claimed); n != 1 {
		t.Errorf("Import refused but the table holds %d items, want 1", n)
	}
}

// failingWrites fails every BatchWriteItem after the first left: an import stopped midway.
type failingWrites struct {
	dynamo.API
	mu    sync.Mutex
	left  int
	calls int
}

func (f *failingWrites) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	f.mu.Lock()
	f.calls++
	fail := f.left == 0
	if !fail {
		f.left--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("injected: the connection dropped")
	}
	return f.API.BatchWriteItem(ctx, in, opts...)
}

// An import stopped at any point, among the entities, the index items and claims, or the
// METADATA, is finished by running it again: the table ends as a whole import leaves it.
func TestImportInterruptedRerun(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	loadSample(t, src)
	withHistory(t, src)
	file := exportOf(t, src)

	// How many calls a whole import makes, one at a time.
	counted := newEnv(t)
	counter := &failingWrites{API: counted.Client, left: -1}
	if _, err := dynamo.New(counter, dynamo.Options{Table: counted.Table, Now: func() time.Time { return sampleNow }}).Import(ctx, bytes.NewReader(file), 1); err != nil {
		t.Fatalf("Import = %v", err)
	}
	total := counter.calls
	if total < 4 {
		t.Fatalf("a whole import made %d BatchWriteItem calls; the test needs more", total)
	}
	for _, after := range []int{1, total / 2, total - 2, total - 1} {
		t.Run(fmt.Sprintf("after %d of %d calls", after, total), func(t *testing.T) {
			dst := newEnv(t)
			stopped := dynamo.New(&failingWrites{API: dst.Client, left: after}, dynamo.Options{Table: dst.Table, Now: func() time.Time { return sampleNow }})
			if _, err := stopped.Import(ctx, bytes.NewReader(file), 1); err == nil || !strings.Contains(err.Error(), "run the same import again") {
				t.Fatalf("interrupted Import = %v, want an error saying to run it again", err)
			}
			if n := itemsIn(t, dst); n == 0 {
				t.Fatal("the interrupted import wrote nothing: the test stops it too early")
			}
			report, err := dst.Store.Import(ctx, bytes.NewReader(file), 4)
			if err != nil {
				t.Fatalf("rerun = %v", err)
			}
			if len(report.Problems) != 0 {
				t.Errorf("rerun problems: %v", report.Problems)
			}
			if got := exportOf(t, dst); !bytes.Equal(got, file) {
				t.Errorf("after the rerun the export differs:\n%s", firstDiff(file, got))
			}
		})
	}
}

// firstDiff shows the first line where two exports differ.
func firstDiff(a, b []byte) string {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines against %d", len(la), len(lb))
}

// grep returns the lines of b that hold substr.
func grep(b []byte, substr string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A dump of the table restores into another table exactly, every kind of attribute value
// included: what the embedded default's data file relies on.
func TestDataDumpRestoreTable(t *testing.T) {
	ctx := context.Background()
	src := newEnv(t)
	loadSample(t, src)
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	_, err := src.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(src.Table), Item: map[string]types.AttributeValue{
		"PK": s("TOKEN#every-kind"), "SK": s("TOKEN"), "TTL": n("1764000000"),
		"Kinds": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"s": s("quote \" backslash \\ newline \n tab \t bell \a é"), "n": n("-12.5"), "b": &types.AttributeValueMemberB{Value: []byte{0, 1, 254}},
			"bool": &types.AttributeValueMemberBOOL{Value: true}, "null": &types.AttributeValueMemberNULL{Value: true},
			"l":  &types.AttributeValueMemberL{Value: []types.AttributeValue{s("x"), n("1")}},
			"ss": &types.AttributeValueMemberSS{Value: []string{"a", "b"}}, "ns": &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
			"bs": &types.AttributeValueMemberBS{Value: [][]byte{{1}, {2}}},
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	dumped, err := src.Store.DumpTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dumped) != itemsIn(t, src) {
		t.Fatalf("DumpTable = %d items, the table holds %d", len(dumped), itemsIn(t, src))
	}
	var items []dynamo.TableItem
	for k, line := range dumped {
		it, err := dynamo.ParseTableItem(line)
		if err != nil {
			t.Fatalf("ParseTableItem(%s) = %v", line, err)
		}
		if it.Key() != k {
			t.Errorf("ParseTableItem(%s).Key() = %v, want %v", line, it.Key(), k)
		}
		items = append(items, it)
	}
	dst := newEnv(t)
	if _, err := dst.Store.RestoreTable(ctx, items, 4); err != nil {
		t.Fatal(err)
	}
	restored, err := dst.Store.DumpTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, line := range dumped {
		if !bytes.Equal(restored[k], line) {
			t.Errorf("restored %v = %s\nwant %s", k, restored[k], line)
		}
	}
	if len(restored) != len(dumped) {
		t.Errorf("restored %d items, want %d", len(restored), len(dumped))
	}
	for _, bad := range []string{`{"PK":{"S":"x"}}`, `{"PK":{"S":"x"},"SK":{"Q":"y"}}`, `not json`, `{"PK":{"S":"x"},"SK":{"S":"y"}} trailing`} {
		if _, err := dynamo.ParseTableItem([]byte(bad)); err == nil {
			t.Errorf("ParseTableItem(%s) accepted", bad)
		}
	}
}
