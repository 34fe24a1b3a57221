package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// touchedSegments classifies each action's key by the bounds the range reads query; an action
// of another partition touches nothing of this one, and an action whose key it cannot read
// touches every segment.
func TestTouchedSegments(t *testing.T) {
	put := func(pk, sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{Item: keyOf(pk, sk)}}
	}
	del := func(pk, sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Delete: &types.Delete{Key: keyOf(pk, sk)}}
	}
	check := func(pk, sk string) types.TransactWriteItem {
		return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: keyOf(pk, sk)}}
	}
	upd := func(pk, sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{Key: keyOf(pk, sk)}}
	}
	pk := capabilityPK("CAP-T")
	testTime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		actions []types.TransactWriteItem
		want    Segment
	}{
		{"metadata, index items, history, changes, jobs", []types.TransactWriteItem{put(pk, metadataSK), put(pk, domainIndexSK), put(pk, healthIndexSK),
			put(pk, capabilityVersionSK(3)), put(pk, changeSK(testTime, 4, 0)), put(pk, jobSK(testTime, "j")), put(pk, componentCardSK("c", "x"))}, 0},
		{"a component", []types.TransactWriteItem{put(pk, metadataSK), put(pk, componentSK(1, "c"))}, SegComponents},
		{"a dependency deleted", []types.TransactWriteItem{del(pk, dependencySK("a", "b"))}, SegDependencies},
		{"a rule updated", []types.TransactWriteItem{upd(pk, ruleSK(2, "r"))}, SegRules},
		{"a component checked", []types.TransactWriteItem{check(pk, componentSK(1, "c"))}, SegComponents},
		{"another capability's component, a claim", []types.TransactWriteItem{put(capabilityPK("CAP-U"), componentSK(1, "c")), put(claimPK("c"), claimSK)}, 0},
		{"an action without a key", []types.TransactWriteItem{put(pk, metadataSK), {}}, allSegments},
		{"a key that is not a string", []types.TransactWriteItem{{Put: &types.Put{Item: map[string]types.AttributeValue{
			attrPK: &types.AttributeValueMemberS{Value: pk}, attrSK: &types.AttributeValueMemberN{Value: "1"}}}}}, allSegments},
	} {
		if got := touchedSegments("CAP-T", tt.actions); got != tt.want {
			t.Errorf("%s: touched %v, want %v", tt.name, got, tt.want)
		}
	}
}

// listsKeep holds the lists only for a transaction that rewrites its own capability's entries
// in place: another capability's entry put, any entry updated or deleted, an unreadable key, or
// a moved entry (domain, priority, name or health) means the lists are read again.
func TestListsKeep(t *testing.T) {
	from := &catalog.Capability{CapabilityID: "CAP-T", Name: "Tee", BusinessDomain: "ops", Status: catalog.CapabilityActive, Priority: catalog.PriorityHigh,
		Aggregates: catalog.Aggregates{HealthStatus: catalog.HealthHealthy, HealthScore: 91}}
	entries := func(c *catalog.Capability) []types.TransactWriteItem {
		items, err := capabilityItems(c, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		var out []types.TransactWriteItem
		for _, it := range items {
			av, err := it.av()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, types.TransactWriteItem{Put: &types.Put{Item: av}})
		}
		return out
	}
	pk := capabilityPK("CAP-T")
	other := *from
	other.CapabilityID = "CAP-U"
	own := func(extra ...types.TransactWriteItem) []types.TransactWriteItem {
		to := *from
		to.Description = "changed"
		return append(entries(&to), extra...)
	}
	moved := func(change func(c *catalog.Capability)) *catalog.Capability {
		to := *from
		change(&to)
		return &to
	}
	for _, tt := range []struct {
		name    string
		to      *catalog.Capability
		actions []types.TransactWriteItem
		want    bool
	}{
		{"its own entries, history, a component, a counter", moved(func(c *catalog.Capability) { c.Description = "changed" }), own(
			types.TransactWriteItem{Put: &types.Put{Item: keyOf(pk, capabilityVersionSK(3))}},
			types.TransactWriteItem{Put: &types.Put{Item: keyOf(pk, componentSK(1, "c"))}},
			types.TransactWriteItem{Update: &types.Update{Key: keyOf(counterPK(0), counterSK)}},
			types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: keyOf(capabilityPK("CAP-U"), metadataSK)}}), true},
		{"another capability's entries", from, own(entries(&other)...), false},
		{"another capability's METADATA without its index keys", from, own(types.TransactWriteItem{Put: &types.Put{Item: keyOf(capabilityPK("CAP-U"), metadataSK)}}), false},
		{"its METADATA updated", from, own(types.TransactWriteItem{Update: &types.Update{Key: keyOf(pk, metadataSK)}}), false},
		{"another's index item deleted", from, own(types.TransactWriteItem{Delete: &types.Delete{Key: keyOf(capabilityPK("CAP-U"), healthIndexSK)}}), false},
		{"an action without a key", from, own(types.TransactWriteItem{}), false},
		{"another priority", moved(func(c *catalog.Capability) { c.Priority = catalog.PriorityLow }), own(), false},
		{"another name", moved(func(c *catalog.Capability) { c.Name = "Tea" }), own(), false},
		{"another domain", moved(func(c *catalog.Capability) { c.BusinessDomain = "finance" }), own(), false},
		{"another health score", moved(func(c *catalog.Capability) { c.Aggregates.HealthScore = 50 }), own(), false},
		{"another health status", moved(func(c *catalog.Capability) { c.Aggregates.HealthStatus = catalog.HealthDegraded }), own(), false},
	} {
		if got := listsKeep("CAP-T", from, tt.to, tt.actions); got != tt.want {
			t.Errorf("%s: listsKeep = %v, want %v", tt.name, got, tt.want)
		}
	}
}
