package catalog

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
