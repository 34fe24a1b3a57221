package catalog

import "io"

// ChangeEntity is what kind of entity a change record is about.
type ChangeEntity string

// The entities a change can be about.
const (
	ChangeCapability ChangeEntity = "capability"
	ChangeComponent  ChangeEntity = "component"
	ChangeDependency ChangeEntity = "dependency"
	ChangeJob        ChangeEntity = "job"
	ChangeMetric     ChangeEntity = "metric"
	ChangeRule       ChangeEntity = "rule"
	ChangeArtifact   ChangeEntity = "artifact"
	// ChangeNotification: the deliverer wrote a notification back (delivered, failed, or an
	// attempt that will be retried); entityId is its delivery ID.
	ChangeNotification ChangeEntity = "notification"
)

// ChangeEntities lists every ChangeEntity.
var ChangeEntities = []ChangeEntity{ChangeCapability, ChangeComponent, ChangeDependency, ChangeJob, ChangeMetric, ChangeRule, ChangeArtifact, ChangeNotification}

// Valid reports whether e is a known entity.
func (e ChangeEntity) Valid() bool { return contains(ChangeEntities, e) }

// MarshalGQL implements graphql.Marshaler.
func (e ChangeEntity) MarshalGQL(w io.Writer) { marshalEnum(w, string(e)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (e *ChangeEntity) UnmarshalGQL(v any) (err error) {
	*e, err = unmarshalEnum(v, ChangeEntities, "ChangeEntity")
	return err
}

// ChangeAction is what a change did to its entity.
type ChangeAction string

// The actions of a change.
const (
	ChangeCreated      ChangeAction = "created"
	ChangeUpdated      ChangeAction = "updated"
	ChangeDeleted      ChangeAction = "deleted"
	ChangeTransitioned ChangeAction = "transitioned"
	ChangeRecorded     ChangeAction = "recorded"
	ChangeArchived     ChangeAction = "archived"
)

// ChangeActions lists every ChangeAction.
var ChangeActions = []ChangeAction{ChangeCreated, ChangeUpdated, ChangeDeleted, ChangeTransitioned, ChangeRecorded, ChangeArchived}

// Valid reports whether a is a known action.
func (a ChangeAction) Valid() bool { return contains(ChangeActions, a) }

// MarshalGQL implements graphql.Marshaler.
func (a ChangeAction) MarshalGQL(w io.Writer) { marshalEnum(w, string(a)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (a *ChangeAction) UnmarshalGQL(v any) (err error) {
	*a, err = unmarshalEnum(v, ChangeActions, "ChangeAction")
	return err
}

// ChangeRecord is one entry of the change feed: a write that committed, who made it and what
// it touched. Its ID is an opaque, signed cursor (the store's), ordered within its capability.
type ChangeRecord struct {
	ID           string
	At           Timestamp
	CapabilityID string
	Entity       ChangeEntity
	EntityID     string
	Action       ChangeAction
	// Revision is the capability's revision after the change (nil when none is known).
	Revision  *int
	Actor     Actor
	RequestID *string
	// Fields are the top-level fields of the entity that the change set (empty for a created
	// or deleted entity).
	Fields []string
	// Detail says more where the entity and action do not: the step of a delete, what an
	// archive moved.
	Detail *string
}
