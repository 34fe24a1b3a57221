package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// MetricsResult is what RecordMetrics wrote: the samples (timestamps truncated to their
// interval) and the components whose health they updated.
type MetricsResult struct {
	Metrics    []*catalog.Metric
	Components []*catalog.Component
}

// MaxMetricsPerCall bounds recordMetrics.
const MaxMetricsPerCall = 100

// MaxComponentsPerCapability bounds the components of one capability that one recordMetrics
// call reports: the capability's health transaction holds, per component, its health, its
// change record and its HEALTH index card (rewritten when its health status moves), plus
// METADATA, the two index items, the search card of the health-score order (INDEX#C#SCORE, whose
// key moves with the score), the counter update (the health moves the catalogue's counters: one
// shard, a handful of keys) and the token (3 × 31 + 6 = 99 of DynamoDB's 100). It is checked
// with the other validations, before any sample is written.
const MaxComponentsPerCapability = (maxTransact - 6) / 3

// maxComponentsPerCapability is MaxComponentsPerCapability less what the health alerts take:
// one item per health channel (31 with up to one channel, 30 with 2 to 4, ...).
func (s *Store) maxComponentsPerCapability() int {
	return (maxTransact - 6 - len(s.healthChannels)) / 3
}

// RecordMetrics validates every sample first (IDs, type, interval, timestamp at most 5 minutes
// ahead, the component belongs to the capability) and writes nothing if one is bad. Samples are
// written with the rollups of their hours and days (rollup.go: one BatchGetItem, then one
// TransactWriteItems per 100 samples and rollup items; idempotent: a sample's key is its
// component, type and time), then each capability's reporting components take
// their health from their newest performance sample, with the capability's health score, in one
// transaction per capability. Interrupted in between, a rerun rewrites the same samples, the same
// rollup entries, and applies the health.
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
	for _, id := range order {
		components := map[string]bool{}
		for _, m := range byCapability[id] {
			components[m.ComponentID] = true
		}
		if limit := s.maxComponentsPerCapability(); len(components) > limit {
			return nil, catalog.Invalid("inputs", "a call reports at most %d components of one capability, got %d of %s: split it", limit, len(components), id)
		}
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
	if _, err := putRequests(items); err != nil { // an item over DynamoDB's size, before any write
		return nil, catalog.Invalid("inputs", "%v", err)
	}
	// The samples with their rollups, in transactions (rollup.go), before the health and the
	// call's token: a retry (with or without the token, which is recorded last) rewrites the
	// same samples and the same rollup entries.
	var written []*catalog.Metric
	for _, id := range order {
		written = append(written, byCapability[id]...)
	}
	if err := s.updateRollups(ctx, written, items, now); err != nil {
		return nil, fmt.Errorf("record metrics: %w", err)
	}
	res := &MetricsResult{Metrics: metrics}
	for _, id := range order {
		comps, deploying, err := s.applyHealth(ctx, id, byCapability[id], idem.part(id))
		if err != nil {
			return nil, fmt.Errorf("record metrics: %w", err)
		}
		res.Components = append(res.Components, comps...)
		if deploying && slices.ContainsFunc(byCapability[id], func(m *catalog.Metric) bool { return m.MetricType == catalog.MetricPerformance }) {
			// A running deployment may roll back on these samples (rollback.go).
			if _, err := s.rollbackOnBreach(ctx, id, byCapability[id]); err != nil {
				return nil, fmt.Errorf("record metrics: %w", err)
			}
		}
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
// performance sample, and the capability's score, in one transaction. deploying is false only
// when the state it read had no PENDING or RUNNING deployment job (true when an earlier attempt
// applied the health: not known).
func (s *Store) applyHealth(ctx context.Context, capabilityID string, ms []*catalog.Metric, idem Idempotency) (updated []*catalog.Component, deploying bool, err error) {
	newest := map[string]*catalog.Metric{}
	var reported []string // the components with samples, in the call's order
	seen := map[string]bool{}
	for _, m := range ms {
		if !seen[m.ComponentID] {
			seen[m.ComponentID] = true
			reported = append(reported, m.ComponentID)
		}
		if m.MetricType != catalog.MetricPerformance {
			continue
		}
		if cur := newest[m.ComponentID]; cur == nil || m.Timestamp.After(cur.Timestamp.Time) {
			newest[m.ComponentID] = m
		}
	}
	deploying = true
	var mine *item // this attempt's result, when it records one
	rec, err := s.mutate(ctx, capabilityID, SegComponents, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		updated = updated[:0]
		deploying = capability.Aggregates.ActiveJobs[catalog.JobDeployment] > 0
		var transitions []any // health status moves, for the health alert
		comps := append([]*catalog.Component{}, st.Components...)
		p := &plan{capability: capability}
		ids := make([]string, 0, len(newest))
		for id := range newest {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		fields := map[string][]string{}
		for _, id := range ids {
			i := indexOf(comps, id)
			if i < 0 {
				continue
			}
			h := catalog.HealthFromMetric(comps[i], newest[id])
			if h == nil {
				continue
			}
			if comps[i].Health != nil && healthMoved(comps[i].Health.Status, h.Status) {
				transitions = append(transitions, map[string]any{"entity": "component", "id": id,
					"from": string(comps[i].Health.Status), "to": string(h.Status)})
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
			fields[id] = fieldsChanged(st.items[ci.SK], ci)
			comps[i] = n
			updated = append(updated, n)
		}
		withComponents(capability, comps)
		if from, to := st.capability.Aggregates.HealthStatus, capability.Aggregates.HealthStatus; healthMoved(from, to) {
			transitions = append(transitions, map[string]any{"entity": "capability", "id": capabilityID,
				"from": string(from), "to": string(to)})
		}
		if err := s.healthAlerts(p, capabilityID, transitions, now); err != nil {
			return nil, err
		}
		// One change per component the call reported on, in the transaction that applies
		// their health.
		for _, id := range reported {
			p.record(catalog.ChangeMetric, id, catalog.ChangeRecorded, fields[id])
		}
		if idem.Token != "" {
			if p.result, err = componentsResult(idem.Token, updated, now); err != nil {
				return nil, err
			}
			mine = p.result
		}
		return p, nil
	})
	if err != nil || idem.Token == "" {
		return updated, deploying, err
	}
	if rec == mine {
		return updated, deploying, nil // this attempt applied the health
	}
	updated, err = s.resultComponents(ctx, rec) // an earlier attempt did: answer with what it updated
	return updated, true, err
}

// healthMoved reports whether a health status moved between healthy, degraded and unhealthy
// (from or to unknown is not a transition).
func healthMoved(from, to catalog.HealthStatus) bool {
	known := func(h catalog.HealthStatus) bool {
		return h == catalog.HealthHealthy || h == catalog.HealthDegraded || h == catalog.HealthUnhealthy
	}
	return from != to && known(from) && known(to)
}

// healthAlerts plans one health notification per health channel listing the transitions of
// this write, in its transaction: each transition is alerted once, with the write that makes
// it. The severity is the worst status moved to.
func (s *Store) healthAlerts(p *plan, capabilityID string, transitions []any, now time.Time) error {
	if len(transitions) == 0 || len(s.healthChannels) == 0 {
		return nil
	}
	severity := string(catalog.HealthHealthy)
	for _, t := range transitions {
		switch to := t.(map[string]any)["to"]; {
		case to == string(catalog.HealthUnhealthy):
			severity = string(catalog.HealthUnhealthy)
		case to == string(catalog.HealthDegraded) && severity == string(catalog.HealthHealthy):
			severity = string(catalog.HealthDegraded)
		}
	}
	for _, ch := range s.healthChannels {
		n := &catalog.Notification{DeliveryID: newDeliveryID(), CapabilityID: capabilityID, Kind: catalog.NotificationHealth,
			Channel: ch, Status: catalog.NotificationPending, CreatedAt: catalog.NewTimestamp(now), Severity: strPtr(severity),
			InputSummary: map[string]any{"transitions": transitions}}
		it, err := notificationItem(n, now)
		if err != nil {
			return err
		}
		p.put(it, notExists, nil)
	}
	return nil
}
