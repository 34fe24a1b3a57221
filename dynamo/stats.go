package dynamo

import (
	"context"
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/capcat/catalogue/internal/reqstats"
)

// Stats counts the DynamoDB requests and capacity of one unit of work (one GraphQL operation).
// Attach one to a context with WithStats; every call the Store makes with that context is
// counted, retries included, by middleware on the SDK client. Past its budget (Limit) a call
// fails with ErrRequestBudget, unsent.
type Stats = reqstats.Stats

// StatsSnapshot is a copy of a Stats at one moment, shaped for `extensions.dynamodb`.
type StatsSnapshot = reqstats.Snapshot

type statsKey struct{}

// WithStats returns a context carrying a new Stats.
func WithStats(ctx context.Context) (context.Context, *Stats) {
	return reqstats.With(ctx, statsKey{}, reqstats.Capacity)
}

// StatsFrom returns the Stats of ctx, or nil.
func StatsFrom(ctx context.Context) *Stats { return reqstats.From(ctx, statsKey{}) }

// Observer receives every DynamoDB attempt and completed call: the hook for metrics.
type Observer interface {
	// Attempt is called once per HTTP attempt with the operation name and its error.
	Attempt(op string, err error)
	// Call is called once per API call, after retries, with the attempts it took and its
	// consumed capacity.
	Call(op string, attempts int, rcu, wcu float64, err error)
}

// statsMiddleware counts each attempt (after the retry middleware, so retries are counted as
// the requests they are) and each call's consumed capacity into the context's Stats.
func statsMiddleware(obs Observer) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		attempt := middleware.DeserializeMiddlewareFunc("CatalogueAttemptCounter", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			op := middleware.GetOperationName(ctx)
			if s := StatsFrom(ctx); s != nil {
				s.Request(op, 0)
			}
			if obs != nil {
				obs.Attempt(op, err)
			}
			return out, md, err
		})
		if err := stack.Deserialize.Add(attempt, middleware.After); err != nil {
			return err
		}
		call := middleware.InitializeMiddlewareFunc("CatalogueCapacity", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if s := StatsFrom(ctx); s != nil && !s.Spend() {
				return middleware.InitializeOutput{}, middleware.Metadata{}, fmt.Errorf("%s: %w", middleware.GetOperationName(ctx), ErrRequestBudget)
			}
			out, md, err := next.HandleInitialize(ctx, in)
			var rcu, wcu float64
			if err == nil {
				rcu, wcu = consumed(in.Parameters, out.Result)
			}
			if s := StatsFrom(ctx); s != nil {
				s.Capacity(rcu, wcu)
			}
			if obs != nil {
				attempts := 1
				if res, ok := retry.GetAttemptResults(md); ok && len(res.Results) > 0 {
					attempts = len(res.Results)
				}
				obs.Call(middleware.GetOperationName(ctx), attempts, rcu, wcu, err)
			}
			return out, md, err
		})
		return stack.Initialize.Add(call, middleware.After)
	}
}

// sumCapacity adds up cc. A bare total (CapacityUnits without the read/write split, as
// dynalite and TOTAL responses give it) counts as writes for a write operation, else as reads.
func sumCapacity(cc []types.ConsumedCapacity, write bool) (rcu, wcu float64, ok bool) {
	for _, c := range cc {
		ok = true
		rcu += deref(c.ReadCapacityUnits)
		wcu += deref(c.WriteCapacityUnits)
		if c.ReadCapacityUnits == nil && c.WriteCapacityUnits == nil {
			// Some backends only give the total.
			if write {
				wcu += deref(c.CapacityUnits)
			} else {
				rcu += deref(c.CapacityUnits)
			}
		}
	}
	return rcu, wcu, ok
}

// deref returns *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

func one(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

// consumed returns the capacity a call consumed: DynamoDB's ConsumedCapacity where the backend
// reports it, otherwise an estimate from item sizes (4 KB read units, eventually consistent
// reads at half a unit, 1 KB write units, transactions at twice the cost).
func consumed(in, out any) (rcu, wcu float64) {
	switch o := out.(type) {
	case *dynamodb.GetItemOutput:
		if r, _, ok := sumCapacity(one(o.ConsumedCapacity), false); ok {
			return r, 0
		}
		return readUnits(itemSize(o.Item)), 0
	case *dynamodb.QueryOutput:
		if r, _, ok := sumCapacity(one(o.ConsumedCapacity), false); ok {
			return r, 0
		}
		total := 0
		for _, it := range o.Items {
			total += itemSize(it)
		}
		return readUnits(total), 0
	case *dynamodb.BatchGetItemOutput:
		if r, _, ok := sumCapacity(o.ConsumedCapacity, false); ok {
			return r, 0
		}
		for _, items := range o.Responses {
			for _, it := range items {
				rcu += readUnits(itemSize(it))
			}
		}
		return rcu, 0
	case *dynamodb.BatchWriteItemOutput:
		if _, w, ok := sumCapacity(o.ConsumedCapacity, true); ok {
			return 0, w
		}
		if i, ok := in.(*dynamodb.BatchWriteItemInput); ok {
			for _, reqs := range i.RequestItems {
				for _, r := range reqs {
					if r.PutRequest != nil {
						wcu += writeUnits(itemSize(r.PutRequest.Item))
					} else {
						wcu++
					}
				}
			}
		}
		return 0, wcu
	case *dynamodb.TransactWriteItemsOutput:
		if r, w, ok := sumCapacity(o.ConsumedCapacity, true); ok {
			return r, w
		}
		if i, ok := in.(*dynamodb.TransactWriteItemsInput); ok {
			for _, t := range i.TransactItems {
				switch {
				case t.Put != nil:
					wcu += 2 * writeUnits(itemSize(t.Put.Item))
				case t.ConditionCheck != nil:
					rcu += 2 * readUnits(0)
				default:
					wcu += 2
				}
			}
		}
		return rcu, wcu
	case *dynamodb.PutItemOutput:
		if _, w, ok := sumCapacity(one(o.ConsumedCapacity), true); ok {
			return 0, w
		}
		if i, ok := in.(*dynamodb.PutItemInput); ok {
			return 0, writeUnits(itemSize(i.Item))
		}
	case *dynamodb.UpdateItemOutput:
		if _, w, ok := sumCapacity(one(o.ConsumedCapacity), true); ok {
			return 0, w
		}
		return 0, 1
	case *dynamodb.DeleteItemOutput:
		if _, w, ok := sumCapacity(one(o.ConsumedCapacity), true); ok {
			return 0, w
		}
		return 0, 1
	}
	return 0, 0
}

// readUnits is the eventually consistent read cost of size bytes: half a unit per 4 KB.
func readUnits(size int) float64 {
	return 0.5 * math.Max(1, math.Ceil(float64(size)/4096))
}

// writeUnits is the write cost of size bytes: one unit per 1 KB.
func writeUnits(size int) float64 { return math.Max(1, math.Ceil(float64(size)/1024)) }

// itemSize approximates DynamoDB's item size: attribute names plus values.
func itemSize(m map[string]types.AttributeValue) int {
	n := 0
	for k, v := range m {
		n += len(k) + avSize(v)
	}
	return n
}

func avSize(v types.AttributeValue) int {
	switch a := v.(type) {
	case *types.AttributeValueMemberS:
		return len(a.Value)
	case *types.AttributeValueMemberN:
		return len(a.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(a.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberM:
		return 3 + itemSize(a.Value)
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range a.Value {
			n += 1 + avSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range a.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range a.Value {
			n += len(s)/2 + 1
		}
		return n
	}
	return 0
}
