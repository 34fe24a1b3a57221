package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
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
