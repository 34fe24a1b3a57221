package dynamo

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// WriteLargestRollups writes, straight to the table, the largest rollup items there can be for
// a component's performance metrics: hours hour items ending with the hour holding last, each
// with 60 samples carrying every value, and days day items ending with the day holding last,
// each with 24 hour entries carrying every value (values of full float64 precision).
func WriteLargestRollups(ctx context.Context, s *Store, capabilityID, componentID string, last time.Time, hours, days int) error {
	g := &rollupHourGroup{capabilityID: capabilityID, componentID: componentID, metricType: catalog.MetricPerformance}
	full := func(i int) sampleEntry {
		e := sampleEntry{mask: 0xff}
		for f := range RollupFields {
			e.vals[f] = math.Pi * float64(i*RollupFields+f+1)
		}
		return e
	}
	var items []*item
	for h := range hours {
		start := last.UTC().Truncate(time.Hour).Add(-time.Duration(h) * time.Hour)
		samples := map[int]sampleEntry{}
		for m := range 60 {
			samples[m] = full(m)
		}
		it := &item{PK: capabilityPK(capabilityID), SK: rollupSK(componentID, g.metricType, rollupHour, start), EntityType: entityRollup,
			CreatedAt: start, UpdatedAt: start, Revision: 1, TTL: start.Add(RollupHourRetention).Unix(), Data: rollupData(g, start)}
		it.Data[rollupSamplesKey] = &types.AttributeValueMemberB{Value: encodeSamples(samples)}
		items = append(items, it)
	}
	for d := range days {
		start := last.UTC().Truncate(24 * time.Hour).Add(-time.Duration(d) * 24 * time.Hour)
		it := &item{PK: capabilityPK(capabilityID), SK: rollupSK(componentID, g.metricType, rollupDay, start), EntityType: entityRollup,
			CreatedAt: start, UpdatedAt: start, Revision: 1, TTL: start.Add(RollupDayRetention).Unix(), Data: rollupData(g, start)}
		for h := range 24 {
			samples := map[int]sampleEntry{}
			for m := range 60 {
				samples[m] = full(m + h)
			}
			it.Data[hourEntryKey(h)] = &types.AttributeValueMemberB{Value: encodeAggregate(hourAggregate(start.Add(time.Duration(h)*time.Hour), samples))}
		}
		items = append(items, it)
	}
	reqs, err := putRequests(items)
	if err != nil {
		return err
	}
	return s.batchWrite(ctx, reqs, 4)
}

// DamageRollupDay sets the entry of hour's hour in its day item to the aggregate of no sample,
// behind the store's back.
func DamageRollupDay(ctx context.Context, s *Store, capabilityID, componentID string, hour time.Time) error {
	hour = hour.UTC().Truncate(time.Hour)
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       keyOf(capabilityPK(capabilityID), rollupSK(componentID, catalog.MetricPerformance, rollupDay, hour.Truncate(24*time.Hour))),
		UpdateExpression:          aws.String("SET #d.#h = :v"),
		ExpressionAttributeNames:  map[string]string{"#d": attrData, "#h": hourEntryKey(hour.Hour())},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberB{Value: encodeAggregate(&Rollup{})}},
	})
	return err
}

// DamageRollupHour overwrites an hour item's samples with those given (availability only, by
// minute), leaving its day item as it is.
func DamageRollupHour(ctx context.Context, s *Store, capabilityID, componentID string, hour time.Time, availability map[int]float64) error {
	hour = hour.UTC().Truncate(time.Hour)
	samples := map[int]sampleEntry{}
	for m, v := range availability {
		e := sampleEntry{mask: 1 << FieldAvailability}
		e.vals[FieldAvailability] = v
		samples[m] = e
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       keyOf(capabilityPK(capabilityID), rollupSK(componentID, catalog.MetricPerformance, rollupHour, hour)),
		UpdateExpression:          aws.String("SET #d.#s = :v"),
		ExpressionAttributeNames:  map[string]string{"#d": attrData, "#s": rollupSamplesKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberB{Value: encodeSamples(samples)}},
	})
	return err
}

// DamageSample sets a PERFORMANCE sample's availability in the table, behind the rollups' back.
func DamageSample(ctx context.Context, s *Store, capabilityID, componentID string, at time.Time, availability float64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       keyOf(capabilityPK(capabilityID), metricSK(componentID, catalog.MetricPerformance, at)),
		UpdateExpression:          aws.String("SET #d.#v.#a.#x = :v"),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames:  map[string]string{"#d": attrData, "#v": "values", "#a": "availability", "#x": "value"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatFloat(availability, 'g', -1, 64)}},
	})
	return err
}
