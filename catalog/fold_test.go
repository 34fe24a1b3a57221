package catalog

import (
	"reflect"
	"testing"
)

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Alert Management":       "alert management",
		"  Équipe  Plate-forme ": "equipe plate forme",
		"CAP-ALERT-MGT-001":      "cap alert mgt 001",
		"Ünïcödé_Ñame":           "unicode name",
		"platform-team":          "platform team",
		"":                       "",
		"---":                    "",
		"ﬁnance (Straße)":        "finance straße",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := Words("Alert alert-Management"), []string{"alert", "management"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
}

func TestTallyComponents(t *testing.T) {
	if TallyComponents(nil) != nil {
		t.Fatal("no components must tally to nil")
	}
	comps := []*Component{
		{ComponentType: "database", Ownership: &Ownership{Team: "Platform Team"}, Health: &ComponentHealth{Status: HealthHealthy}},
		{ComponentType: "database", Ownership: &Ownership{Team: "platform-team"}},
		{ComponentType: "mcp-server"},
	}
	got := TallyComponents(comps)
	want := &ComponentTally{
		Teams:  map[string]int{"platform team": 2},
		Types:  map[string]int{"database": 2, "mcp-server": 1},
		Health: map[HealthStatus]int{HealthHealthy: 1, HealthUnknown: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tally = %+v, want %+v", got, want)
	}
}
