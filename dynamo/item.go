package dynamo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// Attribute names of the item envelope.
const (
	attrPK         = "PK"
	attrSK         = "SK"
	attrEntityType = "EntityType"
	attrGSI1PK     = "GSI1PK"
	attrGSI1SK     = "GSI1SK"
	attrCreatedAt  = "CreatedAt"
	attrUpdatedAt  = "UpdatedAt"
	attrRevision   = "Revision"
	attrTTL        = "TTL"
	attrData       = "Data"
	attrWriteSeq   = "WriteSeq"
	attrDeleting   = "Deleting"
	attrActorName  = "ActorName"
	attrActorRole  = "ActorRole"
	attrRequestID  = "RequestId"
	attrDeleted    = "Deleted"

	gsi1Name = "GSI1"
)

// item is the common envelope of every row. Data holds the entity's JSON with the seed's field
// names, stored as a DynamoDB map so that nested paths can be filtered, projected and updated.
type item struct {
	PK, SK, EntityType string
	GSI1PK, GSI1SK     string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Revision           int
	TTL                int64
	Data               map[string]types.AttributeValue
	// For items read by the wire decoder (wire.go), Data is nil until data() is called: raw
	// is it as plain JSON, wire as DynamoDB JSON.
	raw, wire []byte
	// WriteSeq (METADATA only) counts every write to the partition: each mutation is
	// conditioned on the value it read, which serialises the writers of one capability.
	WriteSeq int
	// Deleting (METADATA only) marks a capability whose partition is being removed.
	Deleting bool
	// ActorName, ActorRole and RequestID name who wrote the item and in which request: every
	// write stamps them (commitActions), and a version keeps those of the revision it copies.
	ActorName, ActorRole, RequestID string
	// Deleted (versions only) marks a capability's tombstone: the version its delete wrote.
	Deleted bool
}

// av returns the item as DynamoDB attributes, or a *catalog.ValidationError if one of its keys is
// over DynamoDB's limits.
func (it *item) av() (map[string]types.AttributeValue, error) {
	if err := checkKeySizes(it.PK, it.SK, it.GSI1PK, it.GSI1SK); err != nil {
		return nil, err
	}
	data, err := it.data()
	if err != nil {
		return nil, err
	}
	m := map[string]types.AttributeValue{
		attrPK:         &types.AttributeValueMemberS{Value: it.PK},
		attrSK:         &types.AttributeValueMemberS{Value: it.SK},
		attrEntityType: &types.AttributeValueMemberS{Value: it.EntityType},
		attrCreatedAt:  &types.AttributeValueMemberS{Value: keyTime(it.CreatedAt)},
		attrUpdatedAt:  &types.AttributeValueMemberS{Value: keyTime(it.UpdatedAt)},
		attrRevision:   &types.AttributeValueMemberN{Value: strconv.Itoa(it.Revision)},
		attrData:       &types.AttributeValueMemberM{Value: data},
	}
	if it.GSI1PK != "" {
		m[attrGSI1PK] = &types.AttributeValueMemberS{Value: it.GSI1PK}
		m[attrGSI1SK] = &types.AttributeValueMemberS{Value: it.GSI1SK}
	}
	if it.TTL > 0 {
		m[attrTTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(it.TTL, 10)}
	}
	if it.WriteSeq > 0 {
		m[attrWriteSeq] = &types.AttributeValueMemberN{Value: strconv.Itoa(it.WriteSeq)}
	}
	if it.Deleting {
		m[attrDeleting] = &types.AttributeValueMemberBOOL{Value: true}
	}
	if it.Deleted {
		m[attrDeleted] = &types.AttributeValueMemberBOOL{Value: true}
	}
	for k, v := range map[string]string{attrActorName: it.ActorName, attrActorRole: it.ActorRole, attrRequestID: it.RequestID} {
		if v != "" {
			m[k] = &types.AttributeValueMemberS{Value: v}
		}
	}
	return m, nil
}

// readItem parses the envelope of a stored row.
func readItem(m map[string]types.AttributeValue) (*item, error) {
	it := &item{
		PK:         str(m[attrPK]),
		SK:         str(m[attrSK]),
		EntityType: str(m[attrEntityType]),
		GSI1PK:     str(m[attrGSI1PK]),
		GSI1SK:     str(m[attrGSI1SK]),
	}
	if it.PK == "" || it.SK == "" {
		return nil, fmt.Errorf("read item: missing PK or SK")
	}
	var err error
	if s := str(m[attrCreatedAt]); s != "" {
		if it.CreatedAt, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, fmt.Errorf("read item %s/%s: CreatedAt: %w", it.PK, it.SK, err)
		}
	}
	if s := str(m[attrUpdatedAt]); s != "" {
		if it.UpdatedAt, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return nil, fmt.Errorf("read item %s/%s: UpdatedAt: %w", it.PK, it.SK, err)
		}
	}
	if n, ok := m[attrRevision].(*types.AttributeValueMemberN); ok {
		it.Revision, _ = strconv.Atoi(n.Value)
	}
	if n, ok := m[attrTTL].(*types.AttributeValueMemberN); ok {
		it.TTL, _ = strconv.ParseInt(n.Value, 10, 64)
	}
	if n, ok := m[attrWriteSeq].(*types.AttributeValueMemberN); ok {
		it.WriteSeq, _ = strconv.Atoi(n.Value)
	}
	if b, ok := m[attrDeleting].(*types.AttributeValueMemberBOOL); ok {
		it.Deleting = b.Value
	}
	if b, ok := m[attrDeleted].(*types.AttributeValueMemberBOOL); ok {
		it.Deleted = b.Value
	}
	it.ActorName, it.ActorRole, it.RequestID = str(m[attrActorName]), str(m[attrActorRole]), str(m[attrRequestID])
	if d, ok := m[attrData].(*types.AttributeValueMemberM); ok {
		it.Data = d.Value
	}
	return it, nil
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func (it *item) meta() catalog.Meta {
	return catalog.Meta{Revision: it.Revision, CreatedAt: catalog.NewTimestamp(it.CreatedAt), UpdatedAt: catalog.NewTimestamp(it.UpdatedAt)}
}

// expired reports whether the item's TTL has passed at now: DynamoDB deletes such items
// lazily, so reads must not show them.
func (it *item) expired(now time.Time) bool { return it.TTL > 0 && it.TTL <= now.Unix() }

func encodeData(v any) (map[string]types.AttributeValue, error) {
	av, err := attributevalue.MarshalWithOptions(v, func(o *attributevalue.EncoderOptions) {
		o.TagKey = "json"
		o.UseEncodingMarshalers = true
	})
	if err != nil {
		return nil, fmt.Errorf("encode data: %w", err)
	}
	m, ok := av.(*types.AttributeValueMemberM)
	if !ok {
		return nil, fmt.Errorf("encode data: %T is not a map", av)
	}
	dropEmpty(m.Value)
	return m.Value, nil
}

// dropEmpty removes empty lists and maps from m, recursively. DynamoDB stores them, but the
// embedded backend (minidyn v0.8.2) loses their type when it rolls a failed transaction back,
// which breaks every later read of the item; an absent attribute reads back the same (nil).
func dropEmpty(m map[string]types.AttributeValue) {
	for k, v := range m {
		if pruneEmpty(v) {
			delete(m, k)
		}
	}
}

// pruneEmpty prunes v in place and reports whether it is an empty list or map.
func pruneEmpty(v types.AttributeValue) bool {
	switch x := v.(type) {
	case *types.AttributeValueMemberM:
		dropEmpty(x.Value)
		return len(x.Value) == 0
	case *types.AttributeValueMemberL:
		kept := x.Value[:0]
		for _, e := range x.Value {
			if !pruneEmpty(e) {
				kept = append(kept, e)
			}
		}
		x.Value = kept
		return len(x.Value) == 0
	}
	return false
}

func decodeData(data map[string]types.AttributeValue, v any) error {
	return attributevalue.UnmarshalMapWithOptions(data, v, func(o *attributevalue.DecoderOptions) {
		o.TagKey = "json"
		o.UseEncodingUnmarshalers = true
	})
}

// stamp returns the envelope times of an entity written at now: a new entity (zero CreatedAt)
// is created now.
func stamp(m catalog.Meta, now time.Time) (created, updated time.Time) {
	created = m.CreatedAt.Time
	if created.IsZero() {
		created = now
	}
	updated = m.UpdatedAt.Time
	if updated.IsZero() {
		updated = now
	}
	return created, updated
}

func newItem(pk, sk, entity string, m catalog.Meta, now time.Time, data any) (*item, error) {
	d, err := encodeData(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", entity, sk, err)
	}
	created, updated := stamp(m, now)
	rev := m.Revision
	if rev < 1 {
		rev = 1
	}
	return &item{PK: pk, SK: sk, EntityType: entity, CreatedAt: created, UpdatedAt: updated, Revision: rev, Data: d}, nil
}

// newIncarnation returns the WriteSeq of a METADATA item written where none was (a created,
// imported or bulk-loaded capability): a random number, not 1, so that no state of an earlier
// capability with the same ID (deleted since, or overwritten by a bulk load) can carry the same
// WriteSeq, CreatedAt, UpdatedAt and Revision, which is what the partition cache of every server
// validates with. Below 2^53, so that it stays exact wherever a number is a float64.
func newIncarnation() int { return 1 + rand.IntN(1<<53-2) }

// capabilityItems returns the METADATA item of c and its two index items, which carry a copy of
// the same Data so that the DOMAIN# and HEALTH# GSI1 queries answer without a second read.
func capabilityItems(c *catalog.Capability, now time.Time) ([]*item, error) {
	meta, err := newItem(capabilityPK(c.CapabilityID), metadataSK, entityCapability, c.Meta, now, c)
	if err != nil {
		return nil, err
	}
	keys := capabilityListKeys(c)
	meta.GSI1PK, meta.GSI1SK = keys[0][0], keys[0][1]
	domain := *meta
	domain.SK, domain.EntityType = domainIndexSK, entityDomainIndex
	domain.GSI1PK, domain.GSI1SK = keys[1][0], keys[1][1]
	health := *meta
	health.SK, health.EntityType = healthIndexSK, entityHealthIndex
	health.GSI1PK, health.GSI1SK = keys[2][0], keys[2][1]
	return []*item{meta, &domain, &health}, nil
}

func componentItem(c *catalog.Component, now time.Time) (*item, error) {
	it, err := newItem(capabilityPK(c.CapabilityID), componentSK(c.Order, c.ComponentID), entityComponent, c.Meta, now, c)
	if err != nil {
		return nil, err
	}
	it.GSI1PK, it.GSI1SK = componentTypePK(c.ComponentType), componentGSI1SK(c.CapabilityID, c.ComponentID)
	return it, nil
}

// claimItem is the claim of a component's ID for its capability.
func claimItem(c *catalog.Component, now time.Time) *item {
	return &item{PK: claimPK(c.ComponentID), SK: claimSK, EntityType: entityClaim, CreatedAt: now, UpdatedAt: now, Revision: 1,
		Data: map[string]types.AttributeValue{
			"capabilityId": &types.AttributeValueMemberS{Value: c.CapabilityID},
			"componentId":  &types.AttributeValueMemberS{Value: c.ComponentID},
		}}
}

func dependencyItem(d *catalog.Dependency, now time.Time) (*item, error) {
	it, err := newItem(capabilityPK(d.CapabilityID), dependencySK(d.SourceComponentID, d.TargetComponentID), entityDependency, d.Meta, now, d)
	if err != nil {
		return nil, err
	}
	it.GSI1PK = dependenciesPK(d.CapabilityID)
	it.GSI1SK = dependencyGSI1SK(d.Criticality, d.SourceComponentID, d.TargetComponentID)
	return it, nil
}

func jobItem(j *catalog.Job, now time.Time) (*item, error) {
	it, err := newItem(capabilityPK(j.CapabilityID), jobSK(j.StartTime.Time, j.JobID), entityJob, j.Meta, now, j)
	if err != nil {
		return nil, err
	}
	it.GSI1PK, it.GSI1SK = jobPK(j.JobID), keyTime(j.StartTime.Time)
	return it, nil
}

// MetricRetention is how long a metric stays in the table: its TTL is timestamp + 90 days.
const MetricRetention = catalog.MetricRetention

func metricItem(m *catalog.Metric, now time.Time) (*item, error) {
	if m.Meta.CreatedAt.IsZero() {
		m.Meta.CreatedAt = m.Timestamp
	}
	it, err := newItem(capabilityPK(m.CapabilityID), metricSK(m.ComponentID, m.MetricType, m.Timestamp.Time), entityMetric, m.Meta, now, m)
	if err != nil {
		return nil, err
	}
	it.GSI1PK, it.GSI1SK = metricsPK(m.ComponentID), keyTime(m.Timestamp.Time)
	it.TTL = m.Timestamp.Add(MetricRetention).Unix()
	return it, nil
}

func ruleItem(r *catalog.Rule, now time.Time) (*item, error) {
	it, err := newItem(capabilityPK(r.CapabilityID), ruleSK(r.Order, r.RuleID), entityRule, r.Meta, now, r)
	if err != nil {
		return nil, err
	}
	it.GSI1PK, it.GSI1SK = rulesPK(r.CapabilityID), ruleGSI1SK(r.RuleType, r.Order, r.RuleID)
	return it, nil
}

// decodeEntity decodes the Data of it into a new T and sets its Meta from the envelope.
func decodeEntity[T any, P catalog.Entity[T]](it *item) (P, error) {
	v := P(new(T))
	var err error
	if it.raw != nil {
		err = decodeJSON(it.raw, v)
	} else {
		err = decodeData(it.Data, v)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s %s/%s: %w", it.EntityType, it.PK, it.SK, err)
	}
	v.SetMeta(it.meta())
	return v, nil
}

// toCapability decodes a METADATA or index item. A capability being deleted is ErrNotFound.
func toCapability(it *item) (*catalog.Capability, error) {
	if it.Deleting {
		id, _ := parseCapabilityPK(it.PK)
		return nil, fmt.Errorf("capability being deleted: %w", catalog.Missing(catalog.EntityCapability, id, ErrNotFound))
	}
	c, err := decodeEntity[catalog.Capability](it)
	if err != nil {
		return nil, err
	}
	c.WriteSeq = it.WriteSeq
	return c, nil
}

func toComponent(it *item) (*catalog.Component, error) { return decodeEntity[catalog.Component](it) }

func toDependency(it *item) (*catalog.Dependency, error) { return decodeEntity[catalog.Dependency](it) }

func toJob(it *item) (*catalog.Job, error) {
	j, err := decodeEntity[catalog.Job](it)
	if err != nil {
		return nil, err
	}
	for i := range j.TargetComponents {
		j.TargetComponents[i].CapabilityID = j.CapabilityID
	}
	return j, nil
}

func toMetric(it *item) (*catalog.Metric, error) { return decodeEntity[catalog.Metric](it) }

func toRule(it *item) (*catalog.Rule, error) { return decodeEntity[catalog.Rule](it) }
