package catalog

// Actor is who made a change: an API key's name and role, "anonymous" with the anonymous role,
// or "system" (role "system") for the server's own work (the scheduled archive, a resumed
// delete). Versions written before actors were recorded name "unknown".
type Actor struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

// The actors the store names itself.
var (
	SystemActor  = Actor{Name: "system", Role: "system"}
	UnknownActor = Actor{Name: "unknown", Role: "unknown"}
)

// Change is what a version records beside the entity: who wrote it, in which request, and
// whether it is a tombstone.
type Change struct {
	Actor Actor
	// RequestID is the X-Request-ID of the request that wrote it: nil for the server's own
	// work and for versions written before requests were recorded.
	RequestID *string
	// Deleted marks the tombstone of a deleted capability: its fields as they were when it
	// was deleted, one revision after its last one.
	Deleted bool
}

// CapabilityVersion is one revision of a capability as it was written. Its identity is the
// capability's and the revision's, never the live capability's.
type CapabilityVersion struct {
	*Capability
	Change
}

// ID returns "{capabilityId}@{revision}": no live entity's id has an '@'.
func (v *CapabilityVersion) ID() string {
	return NodeID{Kind: KindCapabilityVersion, CapabilityID: v.CapabilityID, Revision: v.Revision}.String()
}

// At returns when this version was written (for a tombstone: when the capability was deleted).
func (v *CapabilityVersion) At() Timestamp { return v.UpdatedAt }

// RuleVersion is one revision of a rule as it was written.
type RuleVersion struct {
	*Rule
	Change
}

// ID returns "{capabilityId}/rules/{ruleId}@{revision}": a rule ID is unique within its
// capability only, and neither '/' nor '@' can be part of an ID.
func (v *RuleVersion) ID() string {
	return NodeID{Kind: KindRuleVersion, CapabilityID: v.CapabilityID, LocalID: v.RuleID, Revision: v.Revision}.String()
}

// At returns when this version was written.
func (v *RuleVersion) At() Timestamp { return v.UpdatedAt }
