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

// The notification outbox. executeRules (and recordMetrics, for health alerts) write a
// Notification item per delivery into the capability's partition, SK NOTIFY#{queued at}#{id},
// in the transaction that decides it. While PENDING the item is also in the sparse GSI1
// partition OUTBOX#PENDING, sorted by when it is due; the deliverer (package notify) reads the
// due ones from there, posts them and writes each back with its attempt counted (DELIVERED and
// FAILED items leave the index). Each write-back is conditioned on the item's Revision (1 +
// attempts), so two deliverers never both record one attempt.

// CapabilityNotifications lists a capability's notifications, newest first.
func (s *Store) CapabilityNotifications(ctx context.Context, capabilityID string, first int, after string) (*Page[*catalog.Notification], error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	lo, hi := notifyRange()
	q := query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, reverse: true}
	scope := "notifications|" + capabilityID
	return memoizedBytes(s, pageKey{scope: scope, first: first, after: after}, func() (*Page[*catalog.Notification], error) {
		return page(s, ctx, scope, q, first, after, toNotification)
	})
}

// DueNotifications returns up to limit PENDING notifications due at now, the earliest first
// (one Query of the GSI1 partition OUTBOX#PENDING; the index is eventually consistent, so a
// notification just written back may still show: SaveNotification's condition settles it).
func (s *Store) DueNotifications(ctx context.Context, now time.Time, limit int) ([]*catalog.Notification, error) {
	items, _, err := s.run(ctx, query{index: true, pk: outboxPK, lo: "0", hi: outboxDue(now), want: limit})
	if err != nil {
		return nil, fmt.Errorf("due notifications: %w", err)
	}
	out := make([]*catalog.Notification, 0, len(items))
	for _, it := range items {
		n, err := toNotification(it)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// ErrNotificationMoved means a notification was not written back: another deliverer (or an
// earlier attempt) recorded this attempt first.
var ErrNotificationMoved = errors.New("notification was written back by another deliverer")

// SaveNotification writes n back after an attempt, conditioned on the item still being PENDING
// with prevAttempts attempts (its Revision is 1 + attempts); it returns ErrNotificationMoved
// when that no longer holds.
//
// The write-back of a notification of a live capability records a change (NOTIFICATION,
// entityId the delivery ID: TRANSITIONED when it was delivered or given up, UPDATED after an
// attempt that will be retried) in the same transaction, so subscribers and the explorer see the
// delivery state move: a consistent GetItem of METADATA, then one TransactWriteItems (the
// notification, METADATA's WriteSeq and its index items moved on, the change), again when
// another writer moved the WriteSeq in between. A capability gone or being deleted records no
// change: the notification alone, one conditioned PutItem. A detached notification (its
// capability was deleted while it was pending: DeleteCapability moved it out of the partition)
// is deleted once settled, and put back while it is retried: nothing is left behind.
func (s *Store) SaveNotification(ctx context.Context, n *catalog.Notification, prevAttempts int) error {
	it, err := notificationItem(n, s.now())
	if err != nil {
		return err
	}
	av, err := it.av()
	if err != nil {
		return err
	}
	cond := aws.String("Revision = :rev AND #d.#st = :pending")
	names := map[string]string{"#d": attrData, "#st": "status"}
	values := map[string]types.AttributeValue{
		":rev":     &types.AttributeValueMemberN{Value: strconv.Itoa(1 + prevAttempts)},
		":pending": &types.AttributeValueMemberS{Value: string(catalog.NotificationPending)},
	}
	moved := func(err error) error {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return ErrNotificationMoved
		}
		if err != nil {
			return classify("save notification "+n.DeliveryID, err)
		}
		return nil
	}
	if n.Detached {
		if n.Status == catalog.NotificationPending {
			_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av,
				ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
			return moved(err)
		}
		_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: keyOf(it.PK, it.SK),
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
		return moved(err)
	}
	spec := notificationChange(n, prevAttempts)
	for attempt := 0; ; attempt++ {
		meta, err := s.readItem(ctx, capabilityPK(n.CapabilityID), metadataSK, true)
		if err != nil && !IsNotFound(err) {
			return fmt.Errorf("save notification %s: %w", n.DeliveryID, err)
		}
		if err != nil || meta.Deleting {
			_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av,
				ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
			return moved(err)
		}
		change, err := s.changeAlone(ctx, meta, spec)
		if err != nil {
			return err
		}
		put := types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: av,
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values}}
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems: append([]types.TransactWriteItem{put}, change...), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err == nil {
			return nil
		}
		var tce *types.TransactionCanceledException
		var tc *types.TransactionConflictException
		if errors.As(err, &tce) && len(tce.CancellationReasons) > 0 && aws.ToString(tce.CancellationReasons[0].Code) == "ConditionalCheckFailed" {
			return ErrNotificationMoved
		}
		if (tce == nil && !errors.As(err, &tc)) || attempt+1 >= maxWriteAttempts {
			return classify("save notification "+n.DeliveryID, err)
		}
		// The partition's WriteSeq moved (or the capability is being deleted): read it again.
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return err
		}
	}
}

// notificationChange is the change a write-back of n (after prevAttempts attempts) records.
func notificationChange(n *catalog.Notification, prevAttempts int) changeSpec {
	c := changeSpec{entity: catalog.ChangeNotification, entityID: n.DeliveryID}
	switch n.Status {
	case catalog.NotificationDelivered:
		c.action, c.fields = catalog.ChangeTransitioned, []string{"attempts", "deliveredAt", "status"}
		c.detail = fmt.Sprintf("delivered to %s (attempt %d)", n.Channel, n.Attempts)
	case catalog.NotificationFailed:
		c.action, c.fields = catalog.ChangeTransitioned, []string{"lastError", "status"}
		if n.Attempts != prevAttempts {
			c.fields = append([]string{"attempts"}, c.fields...)
		}
		c.detail = fmt.Sprintf("given up on %s after %d attempts: %s", n.Channel, n.Attempts, deref(n.LastError))
	default:
		c.action, c.fields = catalog.ChangeUpdated, []string{"attempts", "lastError", "nextAttemptAt"}
		c.detail = fmt.Sprintf("attempt %d to %s failed: %s; retried later", n.Attempts, n.Channel, deref(n.LastError))
	}
	return c
}
