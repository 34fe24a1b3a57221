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

// ID returns the capability's ID: the GraphQL id field.
func (c *Capability) ID() string { return c.CapabilityID }

// ID returns the component's ID: the GraphQL id field.
func (c *Component) ID() string { return c.ComponentID }

// ID returns the edge's ID, "source->target": the GraphQL id field.
func (d *Dependency) ID() string { return d.SourceComponentID + "->" + d.TargetComponentID }

// ID returns the job's ID: the GraphQL id field.
func (j *Job) ID() string { return j.JobID }

// ID returns the rule's ID: the GraphQL id field.
func (r *Rule) ID() string { return r.RuleID }

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
