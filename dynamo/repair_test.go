package dynamo_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/dynamo"
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// findings renders a report's findings as "kind subject", sorted.
func findings(fs []dynamo.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.Subject)
	}
	slices.Sort(out)
	return out
}

// Check finds what was damaged behind the store's back, across the whole table, and Check with
// repair fixes all of it but a component ID held by two capabilities, which a person must
// resolve; a second repair changes nothing.
func TestCheckAndRepair(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	loadSample(t, env)
	clean, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(clean.Findings) != 0 || clean.Items == 0 {
		t.Fatalf("Check of the sample = %d items, findings %v", clean.Items, findings(clean.Findings))
	}
	raw := func(op string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	table := aws.String(env.Table)
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk)}
	}
	// Aggregates that lie.
	_, err = env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("CAPABILITY#"+alertID, "METADATA"),
		UpdateExpression: aws.String("SET #d.#a.#t = :n"), ExpressionAttributeNames: map[string]string{"#d": "Data", "#a": "aggregates", "#t": "totalComponents"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "99"}}})
	raw("lie about aggregates", err)
	// A component whose claim is gone, and a claim whose component never was.
	_, err = env.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: table, Key: key("COMPONENTID#api-server-fraud-001", "CLAIM")})
	raw("delete a claim", err)
	_, err = env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: map[string]types.AttributeValue{
		"PK": s("COMPONENTID#ghost-1"), "SK": s("CLAIM"), "EntityType": s("ComponentClaim"), "CreatedAt": s("2026-01-01T00:00:00.000000Z"),
		"UpdatedAt": s("2026-01-01T00:00:00.000000Z"), "Revision": &types.AttributeValueMemberN{Value: "1"},
		"Data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"capabilityId": s(alertID), "componentId": s("ghost-1")}}}})
	raw("put an orphan claim", err)
	// One component ID in two capabilities.
	comp, err := env.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key("CAPABILITY#CAP-FRAUD-DET-001", "COMPONENT#03#worker-fraud-001")})
	raw("get a component", err)
	if comp.Item == nil {
		t.Fatal("no worker-fraud-001 at order 03")
	}
	dup := comp.Item
	dup["PK"] = s("CAPABILITY#CAP-PAY-PROC-001")
	dup["GSI1SK"] = s("CAP-PAY-PROC-001#worker-fraud-001")
	dup["Data"].(*types.AttributeValueMemberM).Value["capabilityId"] = s("CAP-PAY-PROC-001")
	_, err = env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: dup})
	raw("put a duplicate component", err)
	// A delete that stopped after its first step, and items of a capability that is gone.
	_, err = env.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: table, Key: key("CAPABILITY#CAP-ID-VERIFY-001", "METADATA"),
		UpdateExpression: aws.String("SET Deleting = :t"), ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}}})
	raw("mark a capability deleting", err)
	_, err = env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: table, Item: map[string]types.AttributeValue{
		"PK": s("CAPABILITY#CAP-GONE-001"), "SK": s("RULE#001#r1"), "EntityType": s("ConfigurationRule"), "Data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}})
	raw("put an orphan item", err)

	want := []string{
		"aggregates " + alertID,
		"aggregates CAP-PAY-PROC-001",
		"component-index CAP-PAY-PROC-001", // the duplicate has no index cards
		"counters counters",                // the METADATA items changed behind the counters' back
		"duplicate-component-id worker-fraud-001",
		"missing-claim api-server-fraud-001",
		"orphan-claim ghost-1",
		"orphan-items CAP-GONE-001",
		"unfinished-delete CAP-ID-VERIFY-001",
	}
	found, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(found.Findings); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Check = %v\nwant    %v", strings.Join(got, "; "), strings.Join(want, "; "))
	}
	repaired, err := env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := findings(repaired.Findings); fmt.Sprint(got) != "[duplicate-component-id worker-fraud-001]" {
		t.Errorf("after repair: %v (repaired %v)", got, findings(repaired.Repaired))
	}
	if len(repaired.Repaired) != len(want)-1 {
		t.Errorf("repaired %v", findings(repaired.Repaired))
	}
	again, err := env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Repaired) != 0 || len(again.Findings) != 1 {
		t.Errorf("a second repair: repaired %v, left %v", findings(again.Repaired), findings(again.Findings))
	}
	if _, err := env.Store.Capability(ctx, "CAP-ID-VERIFY-001"); !dynamo.IsNotFound(err) {
		t.Errorf("the unfinished delete was not finished: %v", err)
	}
}
