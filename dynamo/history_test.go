package dynamo_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// A deleted capability keeps its versions and tombstone: the delete, the check and its repair
// of items left behind all spare them, and a capability created again with the ID continues
// the history. Writes without an actor are the system's.
func TestDeletedCapabilityKeepsHistory(t *testing.T) {
	env := newEnv(t)
	env.RequireTransactions(t)
	ctx := context.Background()
	loadSample(t, env)
	admin := dynamo.WithActor(ctx, catalog.Actor{Name: "alice", Role: "admin"}, "req-1")
	c, err := env.Store.Capability(ctx, alertID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.UpdateCapability(admin, alertID, c.Revision, func(c *catalog.Capability) error { c.Owner = "team-b"; return nil }, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.DeleteCapability(ctx, alertID, c.Revision+1, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	history := func() []*catalog.CapabilityVersion {
		t.Helper()
		p, err := env.Store.CapabilityHistory(ctx, alertID, 50, "")
		if err != nil {
			t.Fatal(err)
		}
		return p.Items
	}
	h := history()
	if len(h) != 3 || !h[0].Deleted || h[0].Actor != catalog.SystemActor || h[0].RequestID != nil ||
		h[1].Owner != "team-b" || h[1].Actor.Name != "alice" || *h[1].RequestID != "req-1" || h[2].Deleted {
		t.Fatalf("history after the delete = %+v", h)
	}
	if h[2].Actor != catalog.UnknownActor {
		t.Errorf("the sample's first revision, written before actors, names %+v", h[2].Actor)
	}
	report, err := env.Store.Check(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) != 0 {
		t.Errorf("check after the delete: %v", findings(report.Findings))
	}
	// An item left in the deleted partition is an orphan; the repair removes it, not the history.
	_, err = env.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(env.Table), Item: map[string]types.AttributeValue{
		"PK": s("CAPABILITY#" + alertID), "SK": s("RULE#001#r1"), "EntityType": s("ConfigurationRule"), "Data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if report, err = env.Store.Check(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := findings(report.Repaired); len(got) != 1 || got[0] != "orphan-items "+alertID {
		t.Errorf("repaired %v, want the orphan rule", got)
	}
	if len(history()) != 3 {
		t.Errorf("the repair removed history: %+v", history())
	}
	n, err := env.Store.CreateCapability(admin, &catalog.Capability{CapabilityID: alertID, Name: "Alert Management", BusinessDomain: "operations", Status: catalog.CapabilityPlanning, Priority: catalog.PriorityHigh}, dynamo.Idempotency{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Revision != h[0].Revision+1 {
		t.Errorf("re-created at revision %d, want %d", n.Revision, h[0].Revision+1)
	}
	if _, err := env.Store.UpdateCapability(admin, alertID, n.Revision, func(c *catalog.Capability) error { c.Owner = "team-c"; return nil }, dynamo.Idempotency{}); err != nil {
		t.Fatalf("update after re-creating: %v", err)
	}
	if h := history(); len(h) != 4 || h[0].Revision != n.Revision || h[1].Revision != n.Revision-1 || !h[1].Deleted {
		t.Errorf("history after re-creating = %+v", h)
	}
}
