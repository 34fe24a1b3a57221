package dynamo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/capcat/catalogue/catalog"
)

// A counter name is bounded whatever the owner: cut on a character boundary, kept apart from
// another long name with the same start by a hash, and looked up the same way (OwnerKey).
func TestCounterNameBounded(t *testing.T) {
	long := strings.Repeat("équipe ", 150)
	a, b := counterName(long+"a"), counterName(long+"b")
	if len(a) > maxCounterNameBytes || !utf8.ValidString(a) || a == b {
		t.Errorf("counterName = %q (%d bytes), %q", a, len(a), b)
	}
	if counterName("short") != "short" {
		t.Error("a short name is changed")
	}
	if OwnerKey("  ÉQUIPE "+long) != counterName(catalog.Fold("équipe "+long)) {
		t.Error("OwnerKey does not fold and cut as the counters do")
	}
	kind, v, ok := parseCounterKey(counterKey(counterOwnerCaps, "platform team"))
	if kind != counterOwnerCaps || v != "platform team" || !ok {
		t.Errorf("parseCounterKey = %q %q %v", kind, v, ok)
	}
	if _, _, ok := parseCounterKey(counterVersion); ok {
		t.Error("the version parses as a counter")
	}
}

// A capability counts once per owner: its owner and its components' teams, folded.
func TestContributionCountsAnOwnerOnce(t *testing.T) {
	c := &catalog.Capability{CapabilityID: "X", BusinessDomain: "d", Status: catalog.CapabilityActive, Priority: catalog.PriorityHigh, Owner: "Platform-Team",
		Aggregates: catalog.Aggregates{TotalComponents: 3, HealthStatus: catalog.HealthDegraded, HealthScore: 75.25,
			Components: &catalog.ComponentTally{Teams: map[string]int{"platform team": 2, "sre": 1}, Types: map[string]int{"db": 3}, Health: map[catalog.HealthStatus]int{catalog.HealthDegraded: 3}},
			ActiveJobs: map[catalog.JobType]int{catalog.JobDeployment: 2}}}
	got := contribution(c)
	want := map[string]int64{"cap": 1, "comp": 3, "d#d": 1, "s#active": 1, "p#high": 1, "h#degraded": 1, "hsum": 75250, "hn": 1,
		"ct#db": 3, "ch#degraded": 3, "ok#platform team": 2, "ok#sre": 1, "oc#platform team": 1, "oc#sre": 1, "aj#deployment": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("contribution = %v\nwant           %v", got, want)
	}
	if d := counterDelta(got, got); len(d) != 0 {
		t.Errorf("an unchanged capability moves %v", d)
	}
	if d := counterDelta(nil, got); fmt.Sprint(d) != fmt.Sprint(want) {
		t.Errorf("a create moves %v", d)
	}
}

// A large delta goes in one Update per maxCounterKeysPerUpdate keys, on distinct shards, each
// expression within DynamoDB's 4 KB; a capability that would count under more keys than one
// transaction moves is BAD_USER_INPUT naming its components.
func TestCounterUpdatesBounded(t *testing.T) {
	delta := map[string]int64{}
	for i := range 2*maxCounterKeysPerUpdate + 1 {
		delta[counterKey(counterComponentType, fmt.Sprintf("type-%03d", i))] = 1
	}
	actions, err := counterUpdates(delta, counterShards-1)
	if err != nil || len(actions) != 3 {
		t.Fatalf("counterUpdates = %d actions, %v; want 3", len(actions), err)
	}
	var shards []string
	for _, a := range actions {
		shards = append(shards, str(a.Update.Key[attrPK]))
		if n := len(aws.ToString(a.Update.UpdateExpression)); n > 4096 {
			t.Errorf("an update expression is %d bytes", n)
		}
	}
	if want := []string{counterPK(counterShards - 1), counterPK(0), counterPK(1)}; fmt.Sprint(shards) != fmt.Sprint(want) {
		t.Errorf("shards = %v, want %v", shards, want)
	}

	c := &catalog.Capability{CapabilityID: "X", BusinessDomain: "d", Aggregates: catalog.Aggregates{Components: &catalog.ComponentTally{Types: map[string]int{}}}}
	for i := range maxContributionKeys {
		c.Aggregates.Components.Types[fmt.Sprintf("t%d", i)] = 1
	}
	var ve *catalog.ValidationError
	if err := checkContribution(c); !errors.As(err, &ve) || ve.Field != "components" {
		t.Errorf("checkContribution(%d types) = %v, want BAD_USER_INPUT on components", maxContributionKeys, err)
	}
	if _, err := counterWrites(nil, c); !errors.As(err, &ve) {
		t.Errorf("counterWrites of an over-wide capability = %v", err)
	}
}
