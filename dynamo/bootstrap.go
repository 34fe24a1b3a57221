package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreateTable creates the table with GSI1 (projection ALL, PAY_PER_REQUEST) unless it exists,
// waits until the table and index are ACTIVE, and enables TTL on the TTL attribute where the
// backend supports it (it logs a notice and goes on where it does not). wait bounds the wait.
func (s *Store) CreateTable(ctx context.Context, wait time.Duration) error {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	_, err := s.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &s.table,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{str(attrPK), str(attrSK), str(attrGSI1PK), str(attrGSI1SK)},
		KeySchema:            key(attrPK, attrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String(gsi1Name),
			KeySchema:  key(attrGSI1PK, attrGSI1SK),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	})
	var inUse *types.ResourceInUseException
	switch {
	case err == nil:
		s.log.Info("created table", "table", s.table)
	case errors.As(err, &inUse):
		s.log.Info("table exists", "table", s.table)
	default:
		return classify("create table "+s.table, err)
	}
	if err := s.waitActive(ctx, wait); err != nil {
		return err
	}
	_, err = s.db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &s.table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attrTTL), Enabled: aws.Bool(true)},
	})
	if err != nil && !strings.Contains(err.Error(), "already enabled") {
		s.log.Info("TTL not enabled: this backend does not support UpdateTimeToLive; expired metrics are still hidden on read", "table", s.table)
	}
	return nil
}

// waitActive polls DescribeTable until the table and GSI1 are ACTIVE. Backends that leave the
// status empty (minidyn) count as active. The SDK's TableExists waiter is not used: it never
// succeeds on an empty status and its 20 s minimum delay is too slow for start-up.
func (s *Store) waitActive(ctx context.Context, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	delay := 50 * time.Millisecond
	for {
		ready, err := s.tableReady(ctx)
		if err == nil && ready {
			return nil
		}
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("wait for table %s to be active: %w", s.table, err)
		}
		delay = min(delay*2, time.Second)
	}
}

func (s *Store) tableReady(ctx context.Context) (bool, error) {
	out, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &s.table})
	if err != nil {
		return false, classify("describe table", err)
	}
	t := out.Table
	if t == nil {
		return false, nil
	}
	if t.TableStatus != "" && t.TableStatus != types.TableStatusActive {
		return false, nil
	}
	for _, g := range t.GlobalSecondaryIndexes {
		if g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive {
			return false, nil
		}
	}
	return true, nil
}

// Ping reports whether the table answers DescribeTable and is usable: the readiness check.
func (s *Store) Ping(ctx context.Context) error {
	ready, err := s.tableReady(ctx)
	if err != nil {
		return fmt.Errorf("ping table: %w", err)
	}
	if !ready {
		return fmt.Errorf("ping table: table %s is not active yet: %w", s.table, ErrUnavailable)
	}
	return nil
}
