package dynamo_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/sample"
)

// check verifies the outbox index: a PENDING notification without its OUTBOX#PENDING entry or
// listed at another due time, a settled one still listed, a settled detached one left behind
// and an entry that is no notification are each a finding naming the item; -repair fixes all
// but the last (which is not a notification it knows how to fix).
func TestCheckVerifiesTheOutbox(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	if _, err := env.Store.BulkLoad(ctx, sample.Catalogue(sampleNow), 4); err != nil {
		t.Fatal(err)
	}
	typ := catalog.RuleBusiness
	if _, err := env.Store.ExecuteRules(ctx, "CAP-ALERT-MGT-001", map[string]any{"source": "production", "error_count": 150}, &typ, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	report, err := env.Store.Check(ctx, false)
	if err != nil || len(report.Findings) != 0 {
		t.Fatalf("Check before = %v, %v; want nothing", report.Findings, err)
	}
	var notes []map[string]types.AttributeValue
	for _, m := range scanAll(t, env) {
		if attrS(m, "EntityType") == "Notification" {
			notes = append(notes, m)
		}
	}
	if len(notes) != 2 {
		t.Fatalf("%d notifications queued, want 2", len(notes))
	}
	subject := func(m map[string]types.AttributeValue) string { return attrS(m, "PK") + " " + attrS(m, "SK") }
	put := func(m map[string]types.AttributeValue) {
		t.Helper()
		if _, err := env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: m}); err != nil {
			t.Fatal(err)
		}
	}
	clone := func(m map[string]types.AttributeValue) map[string]types.AttributeValue {
		out := map[string]types.AttributeValue{}
		for k, v := range m {
			out[k] = v
		}
		data := map[string]types.AttributeValue{}
		for k, v := range m["Data"].(*types.AttributeValueMemberM).Value {
			data[k] = v
		}
		out["Data"] = &types.AttributeValueMemberM{Value: data}
		return out
	}
	setStatus := func(m map[string]types.AttributeValue, st string) {
		m["Data"].(*types.AttributeValueMemberM).Value["status"] = &types.AttributeValueMemberS{Value: st}
	}
	// 1. A PENDING notification loses its entry.
	lost := clone(notes[0])
	delete(lost, "GSI1PK")
	delete(lost, "GSI1SK")
	put(lost)
	// 2. Another is listed at a wrong due time.
	late := clone(notes[1])
	late["GSI1SK"] = &types.AttributeValueMemberS{Value: "2099-01-01T00:00:00.000000000Z#" + strings.SplitN(attrS(late, "GSI1SK"), "#", 2)[1]}
	put(late)
	// 3. A DELIVERED notification still listed.
	done := clone(notes[1])
	id := attrS(done, "SK")[strings.LastIndex(attrS(done, "SK"), "#")+1:]
	done["SK"] = &types.AttributeValueMemberS{Value: strings.Replace(attrS(done, "SK"), id, "ntf-delivered", 1)}
	done["Data"].(*types.AttributeValueMemberM).Value["deliveryId"] = &types.AttributeValueMemberS{Value: "ntf-delivered"}
	setStatus(done, "DELIVERED")
	put(done)
	// 4. A detached notification, FAILED, left behind.
	left := clone(notes[0])
	left["PK"], left["SK"] = &types.AttributeValueMemberS{Value: "OUTBOX#DETACHED#ntf-left-behind"}, &types.AttributeValueMemberS{Value: "NOTIFICATION"}
	delete(left, "GSI1PK")
	delete(left, "GSI1SK")
	setStatus(left, "FAILED")
	put(left)
	// 5. An entry that is no notification.
	junk := clone(notes[0])
	junk["PK"], junk["SK"], junk["EntityType"] = &types.AttributeValueMemberS{Value: "JUNK#x"}, &types.AttributeValueMemberS{Value: "X"}, &types.AttributeValueMemberS{Value: "Job"}
	put(junk)

	report, err = env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		subject(lost): "has no OUTBOX#PENDING entry",
		subject(late): "want",
		subject(done): "DELIVERED notification",
		subject(left): "left behind",
		subject(junk): "not a notification",
	}
	for subj, detail := range want {
		i := slices.IndexFunc(report.Findings, func(f dynamo.Finding) bool { return f.Kind == dynamo.FindingOutbox && f.Subject == subj })
		if i < 0 {
			t.Errorf("no outbox finding for %s (%s): %v", subj, detail, report.Findings)
			continue
		}
		if !strings.Contains(report.Findings[i].Detail, detail) {
			t.Errorf("finding for %s = %q, want it to say %q", subj, report.Findings[i].Detail, detail)
		}
	}
	report, err = env.Store.Check(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range report.Findings {
		if f.Subject != subject(junk) {
			t.Errorf("after repair: %s", f)
		}
	}
	if len(report.Repaired) != 4 {
		t.Errorf("repaired %v, want the 4 notifications", report.Repaired)
	}
	// Repaired, both pending notifications are due again, and only they.
	due, err := env.Store.DueNotifications(ctx, sampleNow, 100)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, n := range due {
		ids[n.DeliveryID] = true
	}
	if len(ids) != 2 || ids["ntf-delivered"] {
		t.Errorf("due after repair = %v, want the 2 pending notifications", ids)
	}
}

func attrS(m map[string]types.AttributeValue, k string) string {
	if v, ok := m[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}
