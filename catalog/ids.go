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
