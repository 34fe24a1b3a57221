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
	return page(s, ctx, "notifications|"+capabilityID, q, first, after, toNotification)
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

// SaveNotification writes n back after an attempt: one PutItem conditioned on the item still
// being PENDING with prevAttempts attempts (its Revision is 1 + attempts). It returns
// ErrNotificationMoved when that no longer holds.
func (s *Store) SaveNotification(ctx context.Context, n *catalog.Notification, prevAttempts int) error {
	it, err := notificationItem(n, s.now())
	if err != nil {
		return err
	}
	av, err := it.av()
	if err != nil {
		return err
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                &s.table,
		Item:                     av,
		ConditionExpression:      aws.String("Revision = :rev AND #d.#st = :pending"),
		ExpressionAttributeNames: map[string]string{"#d": attrData, "#st": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":rev":     &types.AttributeValueMemberN{Value: strconv.Itoa(1 + prevAttempts)},
			":pending": &types.AttributeValueMemberS{Value: string(catalog.NotificationPending)},
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ErrNotificationMoved
	}
	if err != nil {
		return classify("save notification "+n.DeliveryID, err)
	}
	return nil
}
