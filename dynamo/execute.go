package dynamo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// MaxRulesPerExecution bounds the rules in force one executeRules call executes: each adds its
// metrics update and its change record to the call's transaction (2 × 30, with at most
// MaxDeliveriesPerExecution notifications and the partition's own items, stays under
// DynamoDB's 100). A capability with more narrows the call with ruleType.
const MaxRulesPerExecution = 30

// MaxDeliveriesPerExecution bounds the notifications one executeRules call queues; a notify
// action past it is reported FAILED.
const MaxDeliveriesPerExecution = 20

// ExecuteRules evaluates the capability's rules in force (of ruleType, when given) against
// input as EvaluateRules does, carries out the actions of each rule that matched
// (catalog.ExecuteRule) and counts one execution in the metrics of every rule executed, all in
// one transaction: the rules' metrics, a change record per rule and the outbox items of the
// notify actions (PENDING, delivered later by the deliverer: notify never waits on a
// receiver). Writers of the capability are serialised by its WriteSeq, so concurrent calls
// each count exactly once. With a token, a retry answers with the first call's executions and
// executes nothing again.
//
// The token records only what a replay needs (executionsResult): each execution with its rule's
// ID, order, revision, name and metrics after the execution, not the rule, so that 30 large rules
// fit DynamoDB's 400 KB item; a replay reads the rules at those revisions back (replayExecutions).
func (s *Store) ExecuteRules(ctx context.Context, capabilityID string, input map[string]any, ruleType *catalog.RuleType, idem Idempotency) ([]*catalog.RuleExecution, error) {
	// The executions of the plan that committed: the answer of a call that executed. A call
	// answered from its token gets the recorded result instead, and rebuilds them.
	var planned *item
	var fresh []*catalog.RuleExecution
	rec, err := s.mutate(ctx, capabilityID, SegRules, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		p := &plan{capability: capability}
		evs := catalog.EvaluateRules(st.Rules, input, ruleType, now)
		execs := []*catalog.RuleExecution{}
		deliveries := 0
		for _, ev := range evs {
			if !ev.InForce {
				continue
			}
			if len(execs) == MaxRulesPerExecution {
				return nil, catalog.Invalid("ruleType", "capability %s has more than %d rules in force: execute them a rule type at a time", capabilityID, MaxRulesPerExecution)
			}
			start := time.Now()
			ev := catalog.EvaluateRule(ev.Rule, input)
			x, planned := catalog.ExecuteRule(ev, time.Since(start), now)
			for _, pn := range planned {
				if deliveries == MaxDeliveriesPerExecution {
					pn.Action.Status = catalog.ActionFailed
					pn.Action.Message = strPtr(fmt.Sprintf("over %d notifications in one call: not sent", MaxDeliveriesPerExecution))
					x.Succeeded = false
					continue
				}
				deliveries++
				n := &catalog.Notification{DeliveryID: newDeliveryID(), CapabilityID: capabilityID, Kind: catalog.NotificationRule,
					Channel: pn.Channel, Status: catalog.NotificationPending, CreatedAt: catalog.NewTimestamp(now),
					RuleID: strPtr(pn.Rule.RuleID), RuleName: strPtr(pn.Rule.Name), Severity: pn.Severity, Score: &pn.Score,
					InputSummary: catalog.SummariseInput(input)}
				if pn.Template != "" {
					n.Template = strPtr(pn.Template)
				}
				ni, err := notificationItem(n, now)
				if err != nil {
					return nil, err
				}
				p.put(ni, notExists, nil)
				pn.Action.DeliveryIDs = append(pn.Action.DeliveryIDs, n.DeliveryID)
			}
			old := ev.Rule
			n, err := clone(old)
			if err != nil {
				return nil, err
			}
			n.Meta = old.Meta
			n.Metrics = catalog.CountExecution(old.Metrics, x)
			// An update of Data.metrics alone, under the rule's revision: the revision, updatedAt
			// and the writer of the rule's revision (its history's actor) stay, since metrics
			// are not an edit of the rule.
			mv, err := encodeData(n.Metrics)
			if err != nil {
				return nil, err
			}
			p.actions = append(p.actions, types.TransactWriteItem{Update: &types.Update{
				Key:                      keyOf(capabilityPK(capabilityID), ruleSK(old.Order, old.RuleID)),
				UpdateExpression:         aws.String("SET #d.#m = :m"),
				ConditionExpression:      aws.String("Revision = :rev"),
				ExpressionAttributeNames: map[string]string{"#d": attrData, "#m": "metrics"},
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":m": &types.AttributeValueMemberM{Value: mv}, ":rev": num(old.Revision),
				},
			}})
			p.record(catalog.ChangeRule, old.RuleID, catalog.ChangeUpdated, []string{"metrics"})
			x.Rule = n
			execs = append(execs, x)
		}
		res, err := executionsResult(idem.Token, execs, now)
		if err != nil {
			return nil, err
		}
		p.result, planned, fresh = res, res, execs
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("execute rules of %s: %w", capabilityID, err)
	}
	if rec == planned {
		return fresh, nil
	}
	return s.replayExecutions(ctx, capabilityID, rec)
}

// executionsResult is the item that carries the executions of a call, recorded with its token:
// each execution as it was answered, but its rule only by reference (recordedRule), so that the
// item stays small whatever the rules hold.
func executionsResult(token string, execs []*catalog.RuleExecution, now time.Time) (*item, error) {
	recs := make([]recordedExecution, len(execs))
	for i, x := range execs {
		recs[i] = recordedExecution{RuleExecution: x, Rule: recordedRule{ID: x.Rule.RuleID, Order: x.Rule.Order,
			Revision: x.Rule.Revision, Name: x.Rule.Name, Metrics: x.Rule.Metrics}}
	}
	b, err := json.Marshal(executionsJSON{Recorded: recs})
	if err != nil {
		return nil, fmt.Errorf("encode executions: %w", err)
	}
	return &item{PK: tokenPK(token), SK: resultSK, EntityType: entityResult, CreatedAt: now, UpdatedAt: now, Revision: 1,
		Data: map[string]types.AttributeValue{"executions": &types.AttributeValueMemberS{Value: string(b)}}}, nil
}

// executionsJSON is how executionsResult stores executions.
type executionsJSON struct {
	Recorded []recordedExecution `json:"recorded"`
	// Executions and Metas are the form tokens recorded before (the whole rules, their
	// envelope alongside): such a token, alive for a day after an upgrade, still replays.
	Executions []*catalog.RuleExecution `json:"executions,omitempty"`
	Metas      []ruleMeta               `json:"metas,omitempty"`
}

type ruleMeta struct {
	Revision  int               `json:"revision"`
	CreatedAt catalog.Timestamp `json:"createdAt"`
	UpdatedAt catalog.Timestamp `json:"updatedAt"`
}

// recordedExecution is an execution with its rule by reference (its "rule" hides the
// execution's own).
type recordedExecution struct {
	*catalog.RuleExecution
	Rule recordedRule `json:"rule"`
}

// recordedRule names the rule an execution executed: the revision it was at and its metrics
// after the execution; its name stands in for a rule whose revision is gone.
type recordedRule struct {
	ID       string               `json:"id"`
	Order    int                  `json:"order"`
	Revision int                  `json:"revision"`
	Name     string               `json:"name"`
	Metrics  *catalog.RuleMetrics `json:"metrics,omitempty"`
}

// replayExecutions rebuilds the answer recorded in it (a token's result): each rule read back at
// its recorded revision, the live rule when it is still at it, else its version in the rule's
// history, with the metrics the execution left. One BatchGetItem of both keys of every rule
// (nothing for a call that executed no rule). A rule neither holds any more (its history gone
// with its capability) is answered with what the record keeps: its ID, name, order, revision
// and metrics.
func (s *Store) replayExecutions(ctx context.Context, capabilityID string, it *item) ([]*catalog.RuleExecution, error) {
	var v executionsJSON
	if err := json.Unmarshal([]byte(str(it.Data["executions"])), &v); err != nil {
		return nil, fmt.Errorf("decode executions: %w", err)
	}
	if v.Recorded == nil && v.Executions != nil {
		for i, x := range v.Executions {
			if i < len(v.Metas) && x.Rule != nil {
				m := v.Metas[i]
				x.Rule.Meta = catalog.Meta{Revision: m.Revision, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
			}
		}
		return v.Executions, nil
	}
	out := make([]*catalog.RuleExecution, 0, len(v.Recorded))
	if len(v.Recorded) == 0 {
		return out, nil
	}
	pk := capabilityPK(capabilityID)
	keys := make([][2]string, 0, 2*len(v.Recorded))
	for _, r := range v.Recorded {
		keys = append(keys, [2]string{pk, ruleSK(r.Rule.Order, r.Rule.ID)}, [2]string{pk, ruleVersionSK(r.Rule.ID, r.Rule.Revision)})
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("replay executions of %s: %w", capabilityID, err)
	}
	for i, r := range v.Recorded {
		x := r.RuleExecution
		if x == nil {
			x = &catalog.RuleExecution{}
		}
		var rule *catalog.Rule
		for _, cand := range items[2*i : 2*i+2] {
			if cand != nil && cand.Revision == r.Rule.Revision {
				if rule, err = toRule(cand); err != nil {
					return nil, err
				}
				break
			}
		}
		if rule == nil {
			rule = &catalog.Rule{RuleID: r.Rule.ID, CapabilityID: capabilityID, Name: r.Rule.Name, Order: r.Rule.Order}
			rule.Meta = catalog.Meta{Revision: r.Rule.Revision}
		}
		rule.Metrics = r.Rule.Metrics
		x.Rule = rule
		if x.Actions == nil {
			x.Actions = []*catalog.ActionResult{}
		}
		out = append(out, x)
	}
	return out, nil
}

// newDeliveryID returns a new notification's delivery ID: "ntf-" and 32 random hex digits.
func newDeliveryID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "ntf-" + hex.EncodeToString(b[:])
}

func strPtr(s string) *string { return &s }

// notificationItem is the outbox item of n: in its capability's partition, and, while it is
// PENDING, in the GSI1 partition of pending deliveries by when it is due next.
func notificationItem(n *catalog.Notification, now time.Time) (*item, error) {
	sk := notifySK(n.CreatedAt.Time, n.DeliveryID)
	d, err := encodeData(n)
	if err != nil {
		return nil, fmt.Errorf("notification %s: %w", n.DeliveryID, err)
	}
	it := &item{PK: capabilityPK(n.CapabilityID), SK: sk, EntityType: entityNotify, CreatedAt: n.CreatedAt.Time, UpdatedAt: now,
		Revision: 1 + n.Attempts, Data: d}
	if n.Detached {
		it.PK, it.SK = detachedNotifyPK(n.DeliveryID), detachedSK
	}
	if n.Status == catalog.NotificationPending {
		due := n.CreatedAt.Time
		if n.NextAttemptAt != nil {
			due = n.NextAttemptAt.Time
		}
		it.GSI1PK, it.GSI1SK = outboxPK, outboxGSI1SK(due, n.CapabilityID, sk)
	}
	return it, nil
}

// detachedNotification is the item of a pending notification it (an item of a capability's
// partition) once its capability is deleted: the same item under detachedNotifyPK, with its GSI1
// entry (due time and order) unchanged.
func detachedNotification(it *item) (*item, error) {
	deliveryID, ok := notifyDeliveryID(it.SK)
	if !ok {
		return nil, fmt.Errorf("detach notification: %q is not a notification key", it.SK)
	}
	d := *it
	d.PK, d.SK = detachedNotifyPK(deliveryID), detachedSK
	return &d, nil
}

func toNotification(it *item) (*catalog.Notification, error) {
	n := &catalog.Notification{}
	var err error
	if it.raw != nil {
		err = decodeJSON(it.raw, n)
	} else {
		err = decodeData(it.Data, n)
	}
	if err != nil {
		return nil, fmt.Errorf("decode notification %s: %w", it.SK, err)
	}
	n.Detached = isDetachedNotifyPK(it.PK)
	return n, nil
}
