package catalog

import (
	"regexp"
	"strings"
)

// idPattern is what every ID and slug must match to be part of a key, in the table or in a
// bucket: a '#' would forge DynamoDB keys, a '/' S3 ones.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// ValidID reports whether id may be part of a key.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// ValidateID returns a *ValidationError naming field unless id may be part of a key.
func ValidateID(field, id string) error {
	if !ValidID(id) {
		shown := id
		if len(shown) > 64 {
			shown = strings.ToValidUTF8(shown[:64], "") + "…"
		}
		return Invalid(field, "%q is not a valid identifier: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit", shown)
	}
	return nil
}

// ID returns the capability's global ID, its capabilityId: the GraphQL id field.
func (c *Capability) ID() string {
	return NodeID{Kind: KindCapability, CapabilityID: c.CapabilityID}.String()
}

// ID returns the component's global ID, "{capabilityId}/components/{componentId}".
func (c *Component) ID() string {
	return NodeID{Kind: KindComponent, CapabilityID: c.CapabilityID, LocalID: c.ComponentID}.String()
}

// LocalID returns the component's ID within the catalogue's keys: its componentId.
func (c *Component) LocalID() string { return c.ComponentID }

// ID returns the edge's global ID, "{capabilityId}/dependencies/{source}->{target}".
func (d *Dependency) ID() string {
	return NodeID{Kind: KindDependency, CapabilityID: d.CapabilityID, LocalID: d.SourceComponentID, TargetID: d.TargetComponentID}.String()
}

// ID returns the job's global ID, "{capabilityId}/jobs/{jobId}".
func (j *Job) ID() string {
	return NodeID{Kind: KindJob, CapabilityID: j.CapabilityID, LocalID: j.JobID}.String()
}

// ID returns the rule's global ID, "{capabilityId}/rules/{ruleId}": a ruleId is unique within
// its capability only.
func (r *Rule) ID() string {
	return NodeID{Kind: KindRule, CapabilityID: r.CapabilityID, LocalID: r.RuleID}.String()
}

// LocalID returns the rule's ID within its capability: its ruleId.
func (r *Rule) LocalID() string { return r.RuleID }

// Node is an object with a global ID: every GraphQL type that implements Node.
type Node interface {
	ID() string
}

// GetMeta returns the envelope facts of an entity (every entity embeds Meta).
func (m *Meta) GetMeta() Meta { return *m }

// SetMeta replaces the envelope facts of an entity.
func (m *Meta) SetMeta(v Meta) { *m = v }

// Entity is a pointer to one of the six entity types, all of which embed Meta.
type Entity[T any] interface {
	*T
	GetMeta() Meta
	SetMeta(Meta)
}
