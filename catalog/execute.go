package catalog

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Rule execution (executeRules): each rule in force is evaluated as EvaluateRules does, the
// actions of a rule that matched are carried out, and the rule's metrics count the execution.

// ActionNotify is the action type that sends a notification to channels.
const ActionNotify = "notify"

// ActionStatus is what became of one action of an executed rule.
type ActionStatus string

// The action statuses.
const (
	// ActionApplied: the action was carried out (set_severity: the severity is the result).
	ActionApplied ActionStatus = "APPLIED"
	// ActionQueued: the action's notifications were written to the outbox, to be delivered.
	ActionQueued ActionStatus = "QUEUED"
	// ActionUnknown: the action's type is not one the server carries out.
	ActionUnknown ActionStatus = "UNKNOWN_ACTION"
	// ActionFailed: the action could not be carried out (see its message).
	ActionFailed ActionStatus = "FAILED"
)

// ActionStatuses lists every ActionStatus.
var ActionStatuses = []ActionStatus{ActionApplied, ActionQueued, ActionUnknown, ActionFailed}

// Valid reports whether s is one of the vocabulary's values.
func (s ActionStatus) Valid() bool { return contains(ActionStatuses, s) }

// MarshalGQL implements graphql.Marshaler.
func (s ActionStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (s *ActionStatus) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(v, ActionStatuses, "ActionStatus")
	return err
}

// ActionResult is what became of one action of an executed rule.
type ActionResult struct {
	Type   string       `json:"type"`
	Status ActionStatus `json:"status"`
	// Message says why an action failed or was not known, nil otherwise.
	Message *string `json:"message,omitempty"`
	// Severity is the severity a set_severity action computed.
	Severity *string `json:"severity,omitempty"`
	// Channels are the channels a notify action named.
	Channels []string `json:"channels"`
	// Template is a notify action's template name.
	Template *string `json:"template,omitempty"`
	// DeliveryIDs are the notifications a notify action queued, one per channel.
	DeliveryIDs []string `json:"deliveryIds"`
}

// RuleExecution is the outcome of executing one rule in force.
type RuleExecution struct {
	Rule       *Rule           `json:"rule"`
	Matched    bool            `json:"matched"`
	Score      int             `json:"score"`
	Severity   *string         `json:"severity,omitempty"`
	Actions    []*ActionResult `json:"actions"`
	Succeeded  bool            `json:"succeeded"`
	Error      *string         `json:"error,omitempty"`
	DurationMs float64         `json:"durationMs"`
	ExecutedAt Timestamp       `json:"executedAt"`
}

// PlannedNotification is a notification an execution decided to send: the store gives it its
// delivery ID and writes it to the outbox.
type PlannedNotification struct {
	Action   *ActionResult
	Rule     *Rule
	Channel  string
	Template string
	Severity *string
	Score    int
}

// ExecuteRule carries out the actions of ev (an evaluation of a rule in force) and returns the
// execution, with the notifications its notify actions plan. A rule that did not match or is
// malformed runs no action. set_severity is APPLIED with the evaluation's severity; notify is
// QUEUED with one notification per distinct channel of parameters.channels (a string or a
// list of strings; FAILED without one); any other type is UNKNOWN_ACTION. The execution
// succeeded when the rule is well-formed and no action is UNKNOWN_ACTION or FAILED.
func ExecuteRule(ev *RuleEvaluation, took time.Duration, now time.Time) (*RuleExecution, []*PlannedNotification) {
	x := &RuleExecution{Rule: ev.Rule, Matched: ev.Matched, Score: ev.Score, Severity: ev.Severity,
		Actions: []*ActionResult{}, Error: ev.Error, Succeeded: ev.Error == nil,
		DurationMs: float64(took.Microseconds()) / 1000, ExecutedAt: NewTimestamp(now)}
	if !ev.Matched || ev.Error != nil {
		return x, nil
	}
	var planned []*PlannedNotification
	for _, a := range ev.Rule.Actions {
		res := &ActionResult{Type: a.Type, Channels: []string{}, DeliveryIDs: []string{}}
		switch strings.ToLower(strings.TrimSpace(a.Type)) {
		case ActionSetSeverity:
			res.Status, res.Severity = ActionApplied, ev.Severity
		case ActionNotify:
			res.Channels = channelsOf(a.Parameters["channels"])
			if t, ok := a.Parameters["template"].(string); ok && t != "" {
				res.Template = &t
			}
			if len(res.Channels) == 0 {
				res.Status, res.Message = ActionFailed, ptr("notify needs parameters.channels, a channel name or a list of them")
				break
			}
			res.Status = ActionQueued
			for _, ch := range res.Channels {
				planned = append(planned, &PlannedNotification{Action: res, Rule: ev.Rule, Channel: ch,
					Template: derefOr(res.Template), Severity: ev.Severity, Score: ev.Score})
			}
		default:
			res.Status, res.Message = ActionUnknown, ptr(fmt.Sprintf("action type %q is not one the server carries out (set_severity, notify)", a.Type))
		}
		if res.Status == ActionUnknown || res.Status == ActionFailed {
			x.Succeeded = false
		}
		x.Actions = append(x.Actions, res)
	}
	return x, planned
}

// channelsOf reads a notify action's channels: a string or a list of strings, trimmed,
// de-duplicated, sorted.
func channelsOf(v any) []string {
	seen := map[string]bool{}
	add := func(x any) {
		if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
			seen[strings.TrimSpace(s)] = true
		}
	}
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			add(x)
		}
	case []string:
		for _, x := range t {
			add(x)
		}
	default:
		add(v)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// CountExecution returns m (nil for none yet) with one more execution: executionCount + 1, the
// average time and the success rate (percent of executions that succeeded) moved by x.
func CountExecution(m *RuleMetrics, x *RuleExecution) *RuleMetrics {
	n := &RuleMetrics{}
	if m != nil {
		*n = *m
	}
	count := float64(n.ExecutionCount)
	ok := 0.0
	if x.Succeeded {
		ok = 100
	}
	n.AverageExecutionTime = (n.AverageExecutionTime*count + x.DurationMs) / (count + 1)
	n.SuccessRate = (n.SuccessRate*count + ok) / (count + 1)
	n.ExecutionCount++
	at := x.ExecutedAt
	n.LastExecuted = &at
	return n
}

func ptr[T any](v T) *T { return &v }

func derefOr[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// NotificationStatus is the delivery state of a notification.
type NotificationStatus string

// The notification statuses.
const (
	// NotificationPending: not delivered yet; the deliverer tries it (again) at NextAttemptAt.
	NotificationPending NotificationStatus = "PENDING"
	// NotificationDelivered: the receiver answered 2xx.
	NotificationDelivered NotificationStatus = "DELIVERED"
	// NotificationFailed: given up (channel not configured, or every attempt failed).
	NotificationFailed NotificationStatus = "FAILED"
)

// NotificationStatuses lists every NotificationStatus.
var NotificationStatuses = []NotificationStatus{NotificationPending, NotificationDelivered, NotificationFailed}

// Valid reports whether s is one of the vocabulary's values.
func (s NotificationStatus) Valid() bool { return contains(NotificationStatuses, s) }

// MarshalGQL implements graphql.Marshaler.
func (s NotificationStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (s *NotificationStatus) UnmarshalGQL(v any) (err error) {
	*s, err = unmarshalEnum(v, NotificationStatuses, "NotificationStatus")
	return err
}

// The kinds of notification.
const (
	NotificationRule   = "rule"
	NotificationHealth = "health"
)

// Notification is one delivery of the outbox: a message to one channel.
type Notification struct {
	DeliveryID    string             `json:"deliveryId"`
	CapabilityID  string             `json:"capabilityId"`
	Kind          string             `json:"kind"`
	Channel       string             `json:"channel"`
	Status        NotificationStatus `json:"status"`
	Attempts      int                `json:"attempts"`
	LastError     *string            `json:"lastError,omitempty"`
	CreatedAt     Timestamp          `json:"createdAt"`
	DeliveredAt   *Timestamp         `json:"deliveredAt,omitempty"`
	NextAttemptAt *Timestamp         `json:"nextAttemptAt,omitempty"`
	RuleID        *string            `json:"ruleId,omitempty"`
	RuleName      *string            `json:"ruleName,omitempty"`
	Severity      *string            `json:"severity,omitempty"`
	Score         *int               `json:"score,omitempty"`
	Template      *string            `json:"template,omitempty"`
	// InputSummary is the input's top-level scalar fields (at most 20, strings cut at 200
	// characters), or, for a health alert, the transition.
	InputSummary map[string]any `json:"inputSummary,omitempty"`
	// Detached marks a notification whose capability was deleted while it was pending: the
	// store keeps it outside the partition until the deliverer settled it (not stored: the
	// store knows it from the item's key).
	Detached bool `json:"-"`
}

// SummariseInput returns the top-level scalar fields of input: at most 20, in key order,
// strings cut to 200 characters; nested objects and lists are left out.
func SummariseInput(input map[string]any) map[string]any {
	keys := make([]string, 0, len(input))
	for k := range input {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]any{}
	for _, k := range keys {
		if len(out) == 20 {
			break
		}
		switch v := input[k].(type) {
		case string:
			if r := []rune(v); len(r) > 200 {
				v = string(r[:200])
			}
			out[k] = v
		case bool, float64, float32, int, int64, nil:
			out[k] = v
		case json.Number:
			out[k] = v.String()
		}
	}
	return out
}
