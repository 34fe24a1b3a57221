package dynamo

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// deletePage is how many keys one pass of DeleteCapability reads and deletes.
const deletePage = 500

// DeleteTimeout bounds the steps of DeleteCapability after its first transaction, which run
// detached from the caller's context.
const DeleteTimeout = 10 * time.Minute

// ResumeDeletes finishes every delete that stopped after its first step (a crash, a deadline):
// it lists the capabilities marked deleting from the CAPABILITIES index and deletes the rest of
// each. It returns how many it finished. The server runs it at start.
func (s *Store) ResumeDeletes(ctx context.Context) (int, error) {
	items, _, err := s.run(ctx, query{index: true, pk: capabilitiesPK, withDeleting: true,
		filter: "attribute_exists(#del)", names: map[string]string{"#del": attrDeleting}})
	if err != nil {
		return 0, fmt.Errorf("resume deletes: %w", err)
	}
	done := 0
	for _, it := range items {
		if !it.Deleting {
			continue
		}
		id, err := parseCapabilityPK(it.PK)
		if err != nil {
			continue
		}
		if err := s.DeleteCapability(ctx, id, it.Revision, Idempotency{}); err != nil && !errors.Is(err, ErrNotFound) {
			return done, fmt.Errorf("resume delete of %s: %w", id, err)
		}
		done++
	}
	return done, nil
}

// DeleteCapability removes a capability's whole partition. It runs in three steps that a rerun
// resumes after any interruption: (1) one transaction checks expectedRevision, marks METADATA as
// deleting (every read skips it from then on, the CAPABILITIES listing included) and deletes
// the two index items; (2) batches of
// BatchWriteItem delete every other item of the partition, each page's component ID claims
// first; (3) METADATA goes last. Idempotency
// tokens live outside the partition and stay until their TTL, so a retried delete still answers.
// A capability already marked deleting skips the revision check: the delete was authorised when
// it began.
func (s *Store) DeleteCapability(ctx context.Context, id string, expectedRevision int, idem Idempotency) error {
	if err := ValidateID("id", id); err != nil {
		return err
	}
	if rec, err := s.recorded(ctx, id, idem); rec != nil || err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		meta, err := s.readItem(ctx, capabilityPK(id), metadataSK, true)
		if err != nil {
			return fmt.Errorf("delete capability %s: %w", id, err)
		}
		if meta.Deleting {
			break
		}
		if meta.Revision != expectedRevision {
			return fmt.Errorf("delete capability %s: %w", id, stale("capability "+id, meta.Revision))
		}
		err = s.markDeleting(ctx, id, meta, idem)
		var lost *lostRace
		if err == nil {
			break
		}
		if !errors.As(err, &lost) {
			return fmt.Errorf("delete capability %s: %w", id, err)
		}
		if lost.token {
			_, err := s.recorded(ctx, id, idem)
			return err
		}
		if attempt+1 >= maxWriteAttempts {
			return fmt.Errorf("delete capability %s: %w", id, ErrUnavailable)
		}
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return err
		}
	}
	// From here the capability is gone from every read: the rest runs detached from the
	// caller (a client that hangs up does not stop it), under a deadline of its own. Stopped
	// anyway (a crash), it is resumed at the next start (ResumeDeletes) and by `check -repair`.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DeleteTimeout)
	defer cancel()
	if err := s.deleteChildren(ctx, id); err != nil {
		return fmt.Errorf("delete capability %s: %w", id, err)
	}
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:              &s.table,
		Key:                    keyOf(capabilityPK(id), metadataSK),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		return fmt.Errorf("delete capability %s: %w", id, classify("delete metadata", err))
	}
	return nil
}

func (s *Store) markDeleting(ctx context.Context, id string, meta *item, idem Idempotency) error {
	now := s.now()
	// The marked METADATA keeps its GSI1 keys: a put never drops index attributes from an
	// existing item (minidyn v0.8.2 then kept a stale entry in its sorted index keys that hid
	// every later entry of GSI1). Every read skips an item marked deleting instead.
	marked := *meta
	marked.Deleting, marked.WriteSeq, marked.UpdatedAt = true, meta.WriteSeq+1, now
	cond := "Revision = :rev AND attribute_not_exists(Deleting)"
	values := map[string]types.AttributeValue{":rev": num(meta.Revision)}
	if meta.WriteSeq > 0 {
		cond += " AND WriteSeq = :seq"
		values[":seq"] = num(meta.WriteSeq)
	} else {
		cond += " AND attribute_not_exists(WriteSeq)"
	}
	p := &plan{}
	p.put(&marked, cond, values)
	// The history outlives the capability: its last revision becomes a version, and a
	// tombstone one revision later (the same fields, marked deleted) names who deleted it.
	p.entomb(ctx, meta, capabilityVersionSK, now)
	p.del(capabilityPK(id), domainIndexSK, "", nil)
	p.del(capabilityPK(id), healthIndexSK, "", nil)
	if p.err != nil {
		return p.err
	}
	return s.commitActions(ctx, id, meta.WriteSeq, p.actions, idem, nil, now)
}

// deleteChildren deletes every item of the partition but METADATA and the capability's versions
// (its history and tombstone), a page at a time, until none is left. (A partition may still
// hold TOKEN# items written before tokens moved to their own partition: they go too, no read
// looks for them.)
func (s *Store) deleteChildren(ctx context.Context, id string) error {
	for _, r := range rangesBesideHistory() {
		if err := s.deleteRange(ctx, id, r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) deleteRange(ctx context.Context, id, lo, hi string) error {
	for {
		items, _, err := s.run(ctx, query{pk: capabilityPK(id), lo: lo, hi: hi, want: deletePage, consistent: true})
		if err != nil {
			return err
		}
		var reqs, claims []types.WriteRequest
		for _, it := range items {
			if it.SK == metadataSK {
				continue
			}
			if it.EntityType == entityComponent {
				if _, componentID, err := parseComponentSK(it.SK); err == nil {
					claims = append(claims, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(claimPK(componentID), claimSK)}})
				}
			}
			reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(it.PK, it.SK)}})
		}
		if len(reqs) == 0 {
			return nil
		}
		// The claims go before their components: interrupted in between, a rerun finds the
		// components and deletes the rest, and no claim outlives its component.
		if err := s.batchWrite(ctx, claims, 4); err != nil {
			return err
		}
		if err := s.batchWrite(ctx, reqs, 4); err != nil {
			return err
		}
	}
}

// MetricsResult is what RecordMetrics wrote: the samples (timestamps truncated to their
// interval) and the components whose health they updated.
type MetricsResult struct {
	Metrics    []*catalog.Metric
	Components []*catalog.Component
}

// MaxMetricsPerCall bounds recordMetrics.
const MaxMetricsPerCall = 100

// RecordMetrics validates every sample first (IDs, type, interval, timestamp at most 5 minutes
// ahead, the component belongs to the capability) and writes nothing if one is bad. Samples are
// written with BatchWriteItem (idempotent: a sample's key is its component, type and time), then
// each capability's reporting components take their health from their newest performance sample,
// with the capability's health score, in one transaction per capability. Interrupted between the
// two, a rerun rewrites the same samples and applies the health.
func (s *Store) RecordMetrics(ctx context.Context, metrics []*catalog.Metric, idem Idempotency) (*MetricsResult, error) {
	if len(metrics) == 0 || len(metrics) > MaxMetricsPerCall {
		return nil, catalog.Invalid("inputs", "give 1 to %d metrics, got %d", MaxMetricsPerCall, len(metrics))
	}
	now := s.now()
	byCapability := map[string][]*catalog.Metric{}
	var order []string
	for i, m := range metrics {
		field := fmt.Sprintf("inputs[%d]", i)
		if err := ValidateID(field+".capabilityId", m.CapabilityID); err != nil {
			return nil, err
		}
		if err := ValidateID(field+".componentId", m.ComponentID); err != nil {
			return nil, err
		}
		if err := catalog.ValidateMetric(m, now); err != nil {
			var v *catalog.ValidationError
			if errors.As(err, &v) {
				v.Field = field + "." + v.Field
			}
			return nil, err
		}
		if _, ok := byCapability[m.CapabilityID]; !ok {
			order = append(order, m.CapabilityID)
		}
		byCapability[m.CapabilityID] = append(byCapability[m.CapabilityID], m)
	}
	// With a token: the whole call's result is recorded last, under the token; each
	// capability's health under a token of its own (the call's token and the capability). A
	// retry returns the recorded result, or, after an attempt that stopped between
	// capabilities, completes the rest: the samples are rewritten (the same keys), a capability
	// whose health was applied answers from its own token, the others are applied.
	if rec, err := s.recorded(ctx, order[0], idem); err != nil {
		return nil, err
	} else if rec != nil {
		comps, err := s.resultComponents(ctx, rec)
		return &MetricsResult{Metrics: metrics, Components: comps}, err
	}
	if err := s.checkPartTokens(ctx, order, idem); err != nil {
		return nil, err
	}
	var items []*item
	for _, id := range order {
		st, err := s.loadState(ctx, id, SegComponents)
		if err != nil {
			return nil, err
		}
		if st.capability == nil {
			return nil, catalog.Invalid("inputs", "capability %s does not exist", id)
		}
		for _, m := range byCapability[id] {
			i := indexOf(st.Components, m.ComponentID)
			if i < 0 {
				return nil, catalog.Invalid("inputs", "component %s is not part of capability %s", m.ComponentID, id)
			}
			if m.ComponentName == "" {
				m.ComponentName = st.Components[i].Name
			}
			it, err := metricItem(m, now)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
	}
	reqs, err := putRequests(items)
	if err != nil {
		return nil, catalog.Invalid("inputs", "%v", err)
	}
	if err := s.batchWrite(ctx, reqs, 4); err != nil {
		return nil, fmt.Errorf("record metrics: %w", err)
	}
	res := &MetricsResult{Metrics: metrics}
	for _, id := range order {
		comps, err := s.applyHealth(ctx, id, byCapability[id], idem.part(id))
		if err != nil {
			return nil, fmt.Errorf("record metrics: %w", err)
		}
		res.Components = append(res.Components, comps...)
	}
	if idem.Token == "" {
		return res, nil
	}
	result, err := componentsResult(idem.Token, res.Components, now)
	if err != nil {
		return nil, err
	}
	err = s.commitActions(ctx, order[0], 0, nil, idem, result, now)
	var lost *lostRace
	if errors.As(err, &lost) {
		// A concurrent retry recorded it first: answer as it did.
		rec, err := s.recorded(ctx, order[0], idem)
		if err != nil || rec == nil {
			return nil, err
		}
		comps, err := s.resultComponents(ctx, rec)
		return &MetricsResult{Metrics: metrics, Components: comps}, err
	}
	if err != nil {
		return nil, fmt.Errorf("record metrics: %w", err)
	}
	return res, nil
}

// part returns the token of one capability's part of a call that spans several: the call's
// token and the capability's ID, with the call's hash. The zero Idempotency stays zero.
func (idem Idempotency) part(capabilityID string) Idempotency {
	if idem.Token == "" {
		return idem
	}
	return Idempotency{Token: tokenPart(idem.Token, capabilityID), Hash: idem.Hash}
}

// checkPartTokens refuses, before anything is written, a token whose parts an earlier call
// with other input recorded (one BatchGetItem).
func (s *Store) checkPartTokens(ctx context.Context, capabilities []string, idem Idempotency) error {
	if idem.Token == "" {
		return nil
	}
	keys := make([][2]string, len(capabilities))
	for i, id := range capabilities {
		keys[i] = [2]string{tokenPK(tokenPart(idem.Token, id)), tokenSK}
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return err
	}
	now := s.now()
	for i, it := range items {
		if it == nil || it.expired(now) {
			continue
		}
		data, err := it.data()
		if err != nil {
			return err
		}
		if str(data["hash"]) != idem.Hash || str(data["capabilityId"]) != capabilities[i] {
			return ErrTokenReused
		}
	}
	return nil
}

// componentsResult is the item a token records for a call whose result is a list of
// components (recordMetrics, and each capability's part of it): their capability and ID only,
// so that it stays small; a retry reads the components as they are then.
func componentsResult(token string, comps []*catalog.Component, now time.Time) (*item, error) {
	list := make([]types.AttributeValue, 0, len(comps))
	for _, c := range comps {
		list = append(list, &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"capabilityId": &types.AttributeValueMemberS{Value: c.CapabilityID},
			"componentId":  &types.AttributeValueMemberS{Value: c.ComponentID},
		}})
	}
	return &item{PK: tokenPK(token), SK: resultSK, EntityType: entityResult, CreatedAt: now, UpdatedAt: now, Revision: 1,
		Data: map[string]types.AttributeValue{"components": &types.AttributeValueMemberL{Value: list}}}, nil
}

// resultComponents reads the components a token recorded, as they are now (none for a token
// recorded before results were kept, or components since removed).
func (s *Store) resultComponents(ctx context.Context, rec *item) ([]*catalog.Component, error) {
	list, _ := rec.Data["components"].(*types.AttributeValueMemberL)
	comps := []*catalog.Component{}
	if list == nil {
		return comps, nil
	}
	states := map[string]*partitionState{}
	for _, v := range list.Value {
		m, ok := v.(*types.AttributeValueMemberM)
		if !ok {
			continue
		}
		capID, compID := str(m.Value["capabilityId"]), str(m.Value["componentId"])
		st := states[capID]
		if st == nil {
			var err error
			if st, err = s.loadState(ctx, capID, SegComponents); err != nil {
				return nil, err
			}
			states[capID] = st
		}
		if i := indexOf(st.Components, compID); i >= 0 {
			comps = append(comps, st.Components[i])
		}
	}
	return comps, nil
}

// applyHealth updates the health of the components that ms report on from their newest
// performance sample, and the capability's score, in one transaction.
func (s *Store) applyHealth(ctx context.Context, capabilityID string, ms []*catalog.Metric, idem Idempotency) ([]*catalog.Component, error) {
	newest := map[string]*catalog.Metric{}
	for _, m := range ms {
		if m.MetricType != catalog.MetricPerformance {
			continue
		}
		if cur := newest[m.ComponentID]; cur == nil || m.Timestamp.After(cur.Timestamp.Time) {
			newest[m.ComponentID] = m
		}
	}
	var updated []*catalog.Component
	var mine *item // this attempt's result, when it records one
	rec, err := s.mutate(ctx, capabilityID, SegComponents, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		updated = updated[:0]
		comps := append([]*catalog.Component{}, st.Components...)
		p := &plan{capability: capability}
		ids := make([]string, 0, len(newest))
		for id := range newest {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			i := indexOf(comps, id)
			if i < 0 {
				continue
			}
			h := catalog.HealthFromMetric(comps[i], newest[id])
			if h == nil {
				continue
			}
			n, err := clone(comps[i])
			if err != nil {
				return nil, err
			}
			n.Meta = comps[i].Meta
			n.Health = h
			n.Revision, n.UpdatedAt = comps[i].Revision+1, catalog.NewTimestamp(now)
			ci, err := componentItem(n, now)
			if err != nil {
				return nil, err
			}
			cond, vals := revisionIs(comps[i].Revision)
			p.put(ci, cond, vals)
			comps[i] = n
			updated = append(updated, n)
		}
		withComponents(capability, comps)
		if idem.Token != "" {
			if p.result, err = componentsResult(idem.Token, updated, now); err != nil {
				return nil, err
			}
			mine = p.result
		}
		return p, nil
	})
	if err != nil || idem.Token == "" {
		return updated, err
	}
	if rec == mine {
		return updated, nil // this attempt applied the health
	}
	return s.resultComponents(ctx, rec) // an earlier attempt did: answer with what it updated
}

// CapabilityHistory lists the versions of a capability, newest first: every revision before
// the current one, and for a deleted capability its tombstone (first) and last revision. It
// reads the history of a deleted capability as well as a live one's.
func (s *Store) CapabilityHistory(ctx context.Context, id string, first int, after string) (*Page[*catalog.CapabilityVersion], error) {
	if err := ValidateID("id", id); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	p := capabilityVersionPrefix()
	q := query{pk: capabilityPK(id), lo: p, hi: p + "~", reverse: true}
	return page(s, ctx, "capabilityHistory|"+id, q, first, after, decodeVersion(toCapabilityVersion))
}

// RuleHistory lists the previous versions of a rule, newest first (with those of a deleted rule
// that had its ID, each ending in its tombstone).
func (s *Store) RuleHistory(ctx context.Context, capabilityID, ruleID string, first int, after string) (*Page[*catalog.RuleVersion], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	p := ruleVersionPrefix(ruleID)
	q := query{pk: capabilityPK(capabilityID), lo: p, hi: p + "~", reverse: true}
	return page(s, ctx, "ruleHistory|"+capabilityID+"|"+ruleID, q, first, after, decodeVersion(toRuleVersion))
}

func toCapabilityVersion(it *item) (*catalog.CapabilityVersion, error) {
	c, err := decodeEntity[catalog.Capability](it)
	if err != nil {
		return nil, err
	}
	return &catalog.CapabilityVersion{Capability: c, Change: it.change()}, nil
}

func toRuleVersion(it *item) (*catalog.RuleVersion, error) {
	r, err := toRule(it)
	if err != nil {
		return nil, err
	}
	return &catalog.RuleVersion{Rule: r, Change: it.change()}, nil
}

func decodeVersion[T any](conv func(*item) (T, error)) func(*item) (T, error) {
	return func(it *item) (T, error) {
		if _, err := parseVersionSK(it.SK); err != nil {
			var zero T
			return zero, err
		}
		return conv(it)
	}
}
