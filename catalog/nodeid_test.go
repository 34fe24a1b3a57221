package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestNodeIDRoundTrip(t *testing.T) {
	long := strings.Repeat("a", 128)
	tests := []struct {
		name string
		id   NodeID
		want string
	}{
		{"capability", NodeID{Kind: KindCapability, CapabilityID: "CAP-ALERT-MGT-001"}, "CAP-ALERT-MGT-001"},
		{"component", NodeID{Kind: KindComponent, CapabilityID: "CAP-1", LocalID: "api-server-001"}, "CAP-1/components/api-server-001"},
		{"dependency", NodeID{Kind: KindDependency, CapabilityID: "CAP-1", LocalID: "ui", TargetID: "api"}, "CAP-1/dependencies/ui->api"},
		{"dependency source ending in a dash", NodeID{Kind: KindDependency, CapabilityID: "CAP-1", LocalID: "ui-", TargetID: "api"}, "CAP-1/dependencies/ui-->api"},
		{"job", NodeID{Kind: KindJob, CapabilityID: "CAP-1", LocalID: "JOB-DEPLOY-456"}, "CAP-1/jobs/JOB-DEPLOY-456"},
		{"rule", NodeID{Kind: KindRule, CapabilityID: "CAP-1", LocalID: "RULE-1"}, "CAP-1/rules/RULE-1"},
		{"capability version", NodeID{Kind: KindCapabilityVersion, CapabilityID: "CAP-1", Revision: 3}, "CAP-1@3"},
		{"rule version", NodeID{Kind: KindRuleVersion, CapabilityID: "CAP-1", LocalID: "RULE-1", Revision: 12}, "CAP-1/rules/RULE-1@12"},
		{"longest IDs", NodeID{Kind: KindDependency, CapabilityID: long, LocalID: long, TargetID: long}, long + "/dependencies/" + long + "->" + long},
		{"IDs with dots and colons", NodeID{Kind: KindRuleVersion, CapabilityID: "a.b:c", LocalID: "r_1.x", Revision: 999999999}, "a.b:c/rules/r_1.x@999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.id.String(); got != tt.want {
				t.Fatalf("%+v.String() = %q, want %q", tt.id, got, tt.want)
			}
			got, err := ParseNodeID("id", tt.want)
			if err != nil || got != tt.id {
				t.Fatalf("ParseNodeID(%q) = %+v, %v, want %+v", tt.want, got, err, tt.id)
			}
		})
	}
}

func TestParseNodeIDRefusesMalformed(t *testing.T) {
	tests := []struct{ name, id string }{
		{"empty", ""},
		{"only a slash", "/"},
		{"empty capability", "/components/x"},
		{"empty local ID", "CAP-1/components/"},
		{"missing local ID", "CAP-1/components"},
		{"trailing slash", "CAP-1/"},
		{"extra slash", "CAP-1/components/x/"},
		{"double slash", "CAP-1//components/x"},
		{"four parts", "CAP-1/components/x/y"},
		{"unknown collection", "CAP-1/metrics/x"},
		{"collection in the wrong case", "CAP-1/Components/x"},
		{"old rule version form", "CAP-1/RULE-1@2"},
		{"old dependency form", "ui->api"},
		{"dependency without arrow", "CAP-1/dependencies/ui-api"},
		{"dependency without target", "CAP-1/dependencies/ui->"},
		{"dependency without source", "CAP-1/dependencies/->api"},
		{"dependency with two arrows", "CAP-1/dependencies/a->b->c"},
		{"arrow outside a dependency", "CAP-1/components/a->b"},
		{"empty revision", "CAP-1@"},
		{"zero revision", "CAP-1@0"},
		{"leading zero", "CAP-1@01"},
		{"negative revision", "CAP-1@-1"},
		{"signed revision", "CAP-1@+1"},
		{"revision too long", "CAP-1@1234567890"},
		{"revision not a number", "CAP-1@x"},
		{"two @", "CAP-1@1@2"},
		{"@ first", "@1"},
		{"@ in the middle", "CAP-1@1/rules/r"},
		{"versioned component", "CAP-1/components/x@1"},
		{"versioned job", "CAP-1/jobs/x@1"},
		{"versioned dependency", "CAP-1/dependencies/a->b@1"},
		{"hash in a part", "CAP#1/components/x"},
		{"space", "CAP 1"},
		{"leading dash", "-CAP"},
		{"local ID over 128 bytes", "CAP-1/rules/" + strings.Repeat("r", 129)},
		{"10 KB", strings.Repeat("CAP-1/components/", 600)},
		{"10 KB of one ID", strings.Repeat("a", 10<<10)},
		{"invalid UTF-8", "CAP-\xff"},
		{"NUL", "CAP\x00/components/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodeID("id", tt.id)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "id" || !errors.Is(err, BadUserInput) {
				t.Fatalf("ParseNodeID(%q) = %+v, %v, want a *ValidationError of field id", tt.id, got, err)
			}
			if len(err.Error()) > 200 {
				t.Errorf("ParseNodeID(%q) error is %d bytes long, want it to quote a bounded prefix", tt.id[:20], len(err.Error()))
			}
		})
	}
}

// Every entity's ID is its NodeID, and no two entity types share an ID.
func TestEntityIDsAreGlobal(t *testing.T) {
	ids := []string{
		(&Capability{CapabilityID: "CAP-1"}).ID(),
		(&Component{CapabilityID: "CAP-1", ComponentID: "x"}).ID(),
		(&Dependency{CapabilityID: "CAP-1", SourceComponentID: "x", TargetComponentID: "y"}).ID(),
		(&Job{CapabilityID: "CAP-1", JobID: "x"}).ID(),
		(&Rule{CapabilityID: "CAP-1", RuleID: "x"}).ID(),
		(&CapabilityVersion{Capability: &Capability{CapabilityID: "CAP-1", Meta: Meta{Revision: 1}}}).ID(),
		(&RuleVersion{Rule: &Rule{CapabilityID: "CAP-1", RuleID: "x", Meta: Meta{Revision: 1}}}).ID(),
	}
	want := []NodeKind{KindCapability, KindComponent, KindDependency, KindJob, KindRule, KindCapabilityVersion, KindRuleVersion}
	seen := map[string]bool{}
	for i, id := range ids {
		n, err := ParseNodeID("id", id)
		if err != nil || n.Kind != want[i] {
			t.Errorf("ParseNodeID(%q) = %+v, %v, want kind %s", id, n, err, want[i])
		}
		if seen[id] {
			t.Errorf("ID %q is shared by two types", id)
		}
		seen[id] = true
	}
	if a, b := (&Rule{CapabilityID: "CAP-1", RuleID: "r"}).ID(), (&Rule{CapabilityID: "CAP-2", RuleID: "r"}).ID(); a == b {
		t.Errorf("rules of two capabilities with one ruleId share the id %q", a)
	}
}
