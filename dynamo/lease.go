package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// A lease is an item that one holder at a time may own until it expires: how a job that must
// run on one instance of a fleet (the scheduled archive) is kept to one. Its expiry is a number
// of Unix milliseconds in the attribute "expires".

const attrExpires = "expires"

// AcquireLease takes the lease name for holder until now + ttl, if nobody else holds an
// unexpired one; it reports whether holder holds it now. Taking a lease one already holds
// extends it.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if err := ValidateID("lease", name); err != nil {
		return false, err
	}
	now := s.now()
	it := &item{PK: leasePK(name), SK: leaseSK, EntityType: entityLease, CreatedAt: now, UpdatedAt: now, Revision: 1,
		Data: map[string]types.AttributeValue{"holder": &types.AttributeValueMemberS{Value: holder}}}
	av, err := it.av()
	if err != nil {
		return false, err
	}
	av[attrExpires] = millis(now.Add(ttl))
	out, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                &s.table,
		Item:                     av,
		ConditionExpression:      aws.String("attribute_not_exists(PK) OR #exp < :now OR #d.#h = :holder"),
		ExpressionAttributeNames: map[string]string{"#exp": attrExpires, "#d": attrData, "#h": "holder"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":now": millis(now), ":holder": &types.AttributeValueMemberS{Value: holder},
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, classify("acquire lease "+name, err)
	}
	// A lease item is read by no read the memo keeps: the renewal every few seconds (the
	// notification sender's) does not empty it.
	s.memo.wroteAside(committedGeneration(out.ResultMetadata))
	return true, nil
}

// ReleaseLease gives the lease name up, if holder holds it.
func (s *Store) ReleaseLease(ctx context.Context, name, holder string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 &s.table,
		Key:                       keyOf(leasePK(name), leaseSK),
		ConditionExpression:       aws.String("#d.#h = :holder"),
		ExpressionAttributeNames:  map[string]string{"#d": attrData, "#h": "holder"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":holder": &types.AttributeValueMemberS{Value: holder}},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // someone else's now
	}
	if err != nil {
		return fmt.Errorf("release lease %s: %w", name, classify("release lease", err))
	}
	return nil
}

func millis(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}

// ArchiveState is what the last complete archive run left in the table.
type ArchiveState struct {
	// RanAt is when the run finished.
	RanAt time.Time
	// OldestUnarchived is the timestamp of the oldest sample the table still held after it
	// (zero when it held none).
	OldestUnarchived time.Time
}

// PutArchiveState records the state of an archive run that just finished.
func (s *Store) PutArchiveState(ctx context.Context, st ArchiveState) error {
	now := s.now()
	data := map[string]types.AttributeValue{"ranAt": &types.AttributeValueMemberS{Value: keyTime(st.RanAt)}}
	if !st.OldestUnarchived.IsZero() {
		data["oldestUnarchived"] = &types.AttributeValueMemberS{Value: keyTime(st.OldestUnarchived)}
	}
	it := &item{PK: statePK, SK: stateSK, EntityType: entityState, CreatedAt: now, UpdatedAt: now, Revision: 1, Data: data}
	av, err := it.av()
	if err != nil {
		return err
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av}); err != nil {
		return classify("put archive state", err)
	}
	return nil
}

// ArchiveState returns the state the last complete archive run recorded. It returns
// ErrNotFound when none has run.
func (s *Store) ArchiveState(ctx context.Context) (ArchiveState, error) {
	it, err := s.readItem(ctx, statePK, stateSK, false)
	if err != nil {
		return ArchiveState{}, err
	}
	var st ArchiveState
	if st.RanAt, err = time.Parse(catalog.TimeLayout, str(it.Data["ranAt"])); err != nil {
		return ArchiveState{}, fmt.Errorf("archive state: %w", err)
	}
	if v := str(it.Data["oldestUnarchived"]); v != "" {
		if st.OldestUnarchived, err = time.Parse(catalog.TimeLayout, v); err != nil {
			return ArchiveState{}, fmt.Errorf("archive state: %w", err)
		}
	}
	return st, nil
}

// Leaser takes and gives up leases (a *Store does).
type Leaser interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// EveryWithLease calls tick every `every` while ctx lives (never when every <= 0), handing it
// acquire, which takes or renews the lease name for holder (for max(3 × every, 1 min)): a tick
// works only when acquire reports the lease held, so one instance of a fleet at a time does.
// The lease is given up when ctx ends. The notify deliverer and the rollback sweeper run so.
func EveryWithLease(ctx context.Context, l Leaser, name, holder string, every time.Duration, tick func(ctx context.Context, acquire func(context.Context) (bool, error))) {
	if every <= 0 {
		return
	}
	ttl := max(3*every, time.Minute)
	defer func() { _ = l.ReleaseLease(context.WithoutCancel(ctx), name, holder) }()
	acquire := func(ctx context.Context) (bool, error) { return l.AcquireLease(ctx, name, holder, ttl) }
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tick(ctx, acquire)
	}
}
