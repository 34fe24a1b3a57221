package dynamo

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// Who writes. Every entity a mutation puts carries its actor and request ID (ActorName,
// ActorRole, RequestId), so that a version, which is a copy of the item it supersedes, names
// who wrote that revision. A context without an actor is the server's own work: "system".

type actorKey struct{}

type actorInfo struct {
	actor     catalog.Actor
	requestID string
}

// WithActor returns ctx carrying who makes its writes and the ID of their request.
func WithActor(ctx context.Context, a catalog.Actor, requestID string) context.Context {
	return context.WithValue(ctx, actorKey{}, actorInfo{actor: a, requestID: requestID})
}

// actorFrom returns the actor and request ID of ctx; the system without a request by default.
func actorFrom(ctx context.Context) (catalog.Actor, string) {
	if a, ok := ctx.Value(actorKey{}).(actorInfo); ok {
		return a.actor, a.requestID
	}
	return catalog.SystemActor, ""
}

// stamped reports whether a put of an item of this entity type records its writer: every entity
// the index copies of METADATA and change records; not versions (they keep their revision's writer), tokens,
// claims, leases or metric samples.
func stamped(entityType string) bool {
	switch entityType {
	case entityCapability, entityDomainIndex, entityHealthIndex, entityComponent, entityDependency, entityJob, entityRule, entityChange:
		return true
	}
	return false
}

// stampWriter sets the writer attributes of an item's attributes from ctx.
func stampWriter(ctx context.Context, av map[string]types.AttributeValue) {
	a, requestID := actorFrom(ctx)
	av[attrActorName] = &types.AttributeValueMemberS{Value: a.Name}
	av[attrActorRole] = &types.AttributeValueMemberS{Value: a.Role}
	if requestID != "" {
		av[attrRequestID] = &types.AttributeValueMemberS{Value: requestID}
	} else {
		delete(av, attrRequestID)
	}
}

// change returns what a version item records beside its entity.
func (it *item) change() catalog.Change {
	a := catalog.Actor{Name: it.ActorName, Role: it.ActorRole}
	if a.Name == "" {
		a = catalog.UnknownActor
	}
	c := catalog.Change{Actor: a, Deleted: it.Deleted}
	if it.RequestID != "" {
		c.RequestID = &it.RequestID
	}
	return c
}

// versionOf returns the version item that keeps it under sk: the same entity, revision, times
// and writer, without index keys or the partition's write counter.
func versionOf(it *item, sk string) *item {
	v := *it
	v.SK, v.EntityType, v.GSI1PK, v.GSI1SK = sk, entityVersion, "", ""
	v.WriteSeq, v.Deleting, v.TTL = 0, false, 0
	return &v
}

// errHistoryExists refuses creating an entity whose first revision has a version already: one
// deleted with the same ID left its history, which the new one continues (continueHistory).
var errHistoryExists = &ConflictError{Reason: "an entity with this ID was deleted while this one was created: retry"}

// continueHistory runs create with base 0 (a first revision 1), and again with the newest
// revision under prefix when create refused with errHistoryExists: a capability or rule created
// with the ID of a deleted one continues its history instead of colliding with it.
func (s *Store) continueHistory(ctx context.Context, capabilityID, prefix string, create func(base int) (*item, error)) (*item, error) {
	it, err := create(0)
	if !errors.Is(err, errHistoryExists) {
		return it, err
	}
	items, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), lo: prefix, hi: prefix + "~", reverse: true, want: 1, consistent: true})
	if err != nil {
		return nil, err
	}
	base := 0
	if len(items) > 0 {
		if base, err = parseVersionSK(items[0].SK); err != nil {
			return nil, err
		}
	}
	return create(base)
}

// entomb plans keeping the history of a deleted entity: its last revision becomes a version,
// and a tombstone one revision later (the same fields, marked deleted) names who deleted it and
// when. sk returns the key of a revision's version.
func (p *plan) entomb(ctx context.Context, last *item, sk func(rev int) string, now time.Time) {
	p.put(versionOf(last, sk(last.Revision)), "", nil)
	tomb := versionOf(last, sk(last.Revision+1))
	tomb.Revision, tomb.UpdatedAt, tomb.Deleted = last.Revision+1, now, true
	actor, requestID := actorFrom(ctx)
	tomb.ActorName, tomb.ActorRole, tomb.RequestID = actor.Name, actor.Role, requestID
	p.put(tomb, "", nil)
}
