package dynamo

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// Metric rollups (docs/data-model.md#metric-rollups): per component and metric type, one HOUR
// item per UTC hour holding every sample's values keyed by the sample's minute, and one DAY item
// per UTC day holding the aggregate of each of its hours, keyed by hour. recordMetrics keeps
// them with the samples: each TransactWriteItems puts samples, their hour items conditioned on
// the revision read and sets those hours' entries in the day items, so the day item's entry of
// an hour is always the aggregate of the hour item, and the hour item's entry of a minute the
// sample the table holds, in every interleaving of concurrent calls.
// A sample rewritten under the same key replaces its entry (never counted twice); the archive
// deletes samples only, never a rollup.

// RollupFields is how many values a rollup aggregates, in the order of the Field constants.
const RollupFields = 8

// The values a rollup aggregates, as indices of Rollup.Fields.
const (
	FieldAvailability = iota // values.availability.value
	FieldLatencyP50          // values.latency.p50
	FieldLatencyP95          // values.latency.p95
	FieldLatencyP99          // values.latency.p99
	FieldErrorRate           // values.errors.rate
	FieldThroughput          // values.throughput.requests per second of the sample's interval
	FieldCPU                 // values.saturation.cpu
	FieldMemory              // values.saturation.memory
)

// Retention and bounds of the rollup items.
const (
	// RollupHourRetention is how long an hour item stays after its hour ends (its TTL): the
	// samples' own retention, so an hour is kept as long as its newest sample could be.
	RollupHourRetention = MetricRetention
	// RollupDayRetention is how long a day item stays after its day ends (its TTL): two years
	// and 30 days.
	RollupDayRetention = (2*365 + 30) * 24 * time.Hour
	// maxRollupAttempts bounds the attempts of one rollup transaction that loses its condition
	// to concurrent writers of the same hours (each lost attempt means another call's
	// transaction committed).
	maxRollupAttempts = 24
)

// FieldStat aggregates one value over the samples of a bucket that carry it.
type FieldStat struct {
	N                   int // samples that carry the value
	Min, Max, Sum, Last float64
}

// Avg is the mean value (0 when N is 0).
func (f FieldStat) Avg() float64 {
	if f.N == 0 {
		return 0
	}
	return f.Sum / float64(f.N)
}

// Rollup is a component's samples of one type aggregated over [Start, End).
type Rollup struct {
	Start, End time.Time
	Count      int // samples in the bucket
	Fields     [RollupFields]FieldStat
}

// sampleEntry is one sample's values as a rollup keeps them: mask bit i set when the sample
// carries field i.
type sampleEntry struct {
	mask uint8
	vals [RollupFields]float64
}

// SampleValues returns the values m carries, by field, and a mask of those it carries.
func SampleValues(m *catalog.Metric) (vals [RollupFields]float64, mask uint8) {
	v := m.Values
	if v == nil {
		return vals, 0
	}
	set := func(i int, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		vals[i], mask = x, mask|1<<i
	}
	if v.Availability != nil {
		set(FieldAvailability, v.Availability.Value)
	}
	if v.Latency != nil {
		set(FieldLatencyP50, v.Latency.P50)
		set(FieldLatencyP95, v.Latency.P95)
		set(FieldLatencyP99, v.Latency.P99)
	}
	if v.Errors != nil {
		set(FieldErrorRate, v.Errors.Rate)
	}
	if v.Throughput != nil {
		if d, ok := catalog.MetricIntervals[m.Interval]; ok && d > 0 {
			set(FieldThroughput, float64(v.Throughput.Requests)/d.Seconds())
		}
	}
	if v.Saturation != nil {
		set(FieldCPU, v.Saturation.CPU)
		set(FieldMemory, v.Saturation.Memory)
	}
	return vals, mask
}

// add folds one sample in; samples come in time order, so Last is the newest's.
func (r *Rollup) add(e sampleEntry) {
	r.Count++
	for i := range RollupFields {
		if e.mask&(1<<i) == 0 {
			continue
		}
		x, f := e.vals[i], &r.Fields[i]
		if f.N == 0 || x < f.Min {
			f.Min = x
		}
		if f.N == 0 || x > f.Max {
			f.Max = x
		}
		f.N++
		f.Sum += x
		f.Last = x
	}
}

// merge folds in the aggregate of a later bucket.
func (r *Rollup) merge(o *Rollup) {
	r.Count += o.Count
	for i := range RollupFields {
		g, f := o.Fields[i], &r.Fields[i]
		if g.N == 0 {
			continue
		}
		if f.N == 0 || g.Min < f.Min {
			f.Min = g.Min
		}
		if f.N == 0 || g.Max > f.Max {
			f.Max = g.Max
		}
		f.N += g.N
		f.Sum += g.Sum
		f.Last = g.Last
	}
}

// AggregateMetrics aggregates samples (of one component and type) into buckets of width d
// aligned on UTC, oldest first; buckets without samples are left out. A sample repeated under
// the same timestamp counts once, the later in ms winning.
func AggregateMetrics(ms []*catalog.Metric, d time.Duration) []*Rollup {
	byTime := map[time.Time]*catalog.Metric{}
	for _, m := range ms {
		byTime[m.Timestamp.UTC()] = m
	}
	times := make([]time.Time, 0, len(byTime))
	for t := range byTime {
		times = append(times, t)
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	var out []*Rollup
	for _, t := range times {
		start := t.Truncate(d)
		if len(out) == 0 || !out[len(out)-1].Start.Equal(start) {
			out = append(out, &Rollup{Start: start, End: start.Add(d)})
		}
		vals, mask := SampleValues(byTime[t])
		out[len(out)-1].add(sampleEntry{mask: mask, vals: vals})
	}
	return out
}

// Encodings. An hour item's samples (Data.samples, binary): per sample in minute order, the
// minute (1 byte), the mask (1 byte) and the values it carries (float64, little-endian):
// at most 60 × (2 + 8 × 8) = 3,960 bytes. A day item's hour entry (Data.hNN, binary): the
// hour's sample count (1 byte), then per field N (1 byte) and, when N > 0, min, max, sum and
// last (4 × float64): at most 1 + 8 × 33 = 265 bytes, 24 of them at most 6.4 KB.

func encodeSamples(samples map[int]sampleEntry) []byte {
	minutes := make([]int, 0, len(samples))
	for m := range samples {
		minutes = append(minutes, m)
	}
	sort.Ints(minutes)
	var b []byte
	for _, m := range minutes {
		e := samples[m]
		b = append(b, byte(m), e.mask)
		for i := range RollupFields {
			if e.mask&(1<<i) != 0 {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.vals[i]))
			}
		}
	}
	return b
}

func decodeSamples(b []byte) (map[int]sampleEntry, error) {
	out := map[int]sampleEntry{}
	for len(b) > 0 {
		if len(b) < 2 || b[0] >= 60 {
			return nil, errors.New("bad rollup samples")
		}
		m, e := int(b[0]), sampleEntry{mask: b[1]}
		b = b[2:]
		for i := range RollupFields {
			if e.mask&(1<<i) == 0 {
				continue
			}
			if len(b) < 8 {
				return nil, errors.New("bad rollup samples")
			}
			e.vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
			b = b[8:]
		}
		out[m] = e
	}
	return out, nil
}

// hourAggregate aggregates an hour's samples, in minute order.
func hourAggregate(start time.Time, samples map[int]sampleEntry) *Rollup {
	r := &Rollup{Start: start, End: start.Add(time.Hour)}
	minutes := make([]int, 0, len(samples))
	for m := range samples {
		minutes = append(minutes, m)
	}
	sort.Ints(minutes)
	for _, m := range minutes {
		r.add(samples[m])
	}
	return r
}

func encodeAggregate(r *Rollup) []byte {
	b := []byte{byte(r.Count)}
	for _, f := range r.Fields {
		b = append(b, byte(f.N))
		if f.N > 0 {
			for _, x := range []float64{f.Min, f.Max, f.Sum, f.Last} {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			}
		}
	}
	return b
}

func decodeAggregate(b []byte, start time.Time) (*Rollup, error) {
	r := &Rollup{Start: start, End: start.Add(time.Hour)}
	if len(b) < 1 {
		return nil, errors.New("bad rollup aggregate")
	}
	r.Count, b = int(b[0]), b[1:]
	for i := range RollupFields {
		if len(b) < 1 {
			return nil, errors.New("bad rollup aggregate")
		}
		f := &r.Fields[i]
		f.N, b = int(b[0]), b[1:]
		if f.N == 0 {
			continue
		}
		if len(b) < 32 {
			return nil, errors.New("bad rollup aggregate")
		}
		x := func(j int) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:])) }
		f.Min, f.Max, f.Sum, f.Last = x(0), x(1), x(2), x(3)
		b = b[32:]
	}
	return r, nil
}

// Data keys of the rollup items.
const (
	rollupSamplesKey = "samples"
	rollupHourKey    = "h" // + two digits: a day item's entry of that hour
)

func hourEntryKey(hour int) string { return rollupHourKey + twoDigits(hour) }

func binaryOf(av types.AttributeValue) []byte {
	if b, ok := av.(*types.AttributeValueMemberB); ok {
		return b.Value
	}
	return nil
}

// rollupHourGroup is what one call records into one hour of one component's type.
type rollupHourGroup struct {
	capabilityID, componentID string
	metricType                catalog.MetricType
	hour                      time.Time
	samples                   map[int]sampleEntry // by minute
	items                     map[int]*item       // the sample items recordMetrics writes, by minute
}

func (g *rollupHourGroup) key() [2]string {
	return [2]string{capabilityPK(g.capabilityID), rollupSK(g.componentID, g.metricType, rollupHour, g.hour)}
}

func (g *rollupHourGroup) dayKey() [2]string {
	return [2]string{capabilityPK(g.capabilityID), rollupSK(g.componentID, g.metricType, rollupDay, g.hour.Truncate(24*time.Hour))}
}

// size is how many actions the group takes in a transaction: its hour item and its samples.
func (g *rollupHourGroup) size() int { return 1 + len(g.items) }

// rollupBatch is a set of hour groups that go in one transaction, with their day items.
type rollupBatch struct {
	hours []*rollupHourGroup
	days  [][2]string // distinct, in order
}

func (b *rollupBatch) size() int {
	n := len(b.days)
	for _, h := range b.hours {
		n += h.size()
	}
	return n
}

func (b *rollupBatch) keys() [][2]string {
	keys := make([][2]string, 0, len(b.hours)+len(b.days))
	for _, h := range b.hours {
		keys = append(keys, h.key())
	}
	return append(keys, b.days...)
}

// updateRollups writes the samples of a recordMetrics call (validated: timestamps truncated to
// their interval; items, their items) together with their rollups: one BatchGetItem
// (consistent) for the hour and day items concerned, then one TransactWriteItems per batch of
// up to 100 actions, each putting the samples of some hours, those hour items with the samples
// merged in (conditioned on the revision read) and their day items' entries of those hours (one
// transaction while the call's samples, hour and day items number 100 or fewer; an hour, at
// most 62 actions, is never split). A sample and its hour's entry of it are written in one
// transaction, and an hour item is rewritten only over the revision its writer read, so that
// whatever concurrent calls rewriting the same sample do, the hour item holds what the table
// holds. A transaction that loses to a concurrent writer of the same hour or day item is re-read
// and retried (maxRollupAttempts, then ErrUnavailable).
func (s *Store) updateRollups(ctx context.Context, ms []*catalog.Metric, items []*item, now time.Time) error {
	var hours []*rollupHourGroup
	byHour := map[[2]string]*rollupHourGroup{}
	for i, m := range ms {
		t := m.Timestamp.UTC()
		g := &rollupHourGroup{capabilityID: m.CapabilityID, componentID: m.ComponentID, metricType: m.MetricType, hour: t.Truncate(time.Hour)}
		if cur := byHour[g.key()]; cur != nil {
			g = cur
		} else {
			g.samples, g.items = map[int]sampleEntry{}, map[int]*item{}
			byHour[g.key()] = g
			hours = append(hours, g)
		}
		vals, mask := SampleValues(m)
		// A sample sent twice in a call: the later wins (one action per item in a transaction).
		g.samples[t.Minute()], g.items[t.Minute()] = sampleEntry{mask: mask, vals: vals}, items[i]
	}
	// Group by day item, then pack the hour groups into batches of at most maxTransact actions.
	var dayOrder [][2]string
	byDay := map[[2]string][]*rollupHourGroup{}
	for _, g := range hours {
		k := g.dayKey()
		if _, ok := byDay[k]; !ok {
			dayOrder = append(dayOrder, k)
		}
		byDay[k] = append(byDay[k], g)
	}
	var batches []*rollupBatch
	for _, k := range dayOrder {
		for _, g := range byDay[k] {
			var b *rollupBatch
			if len(batches) > 0 {
				b = batches[len(batches)-1]
			}
			if b == nil || b.size()+g.size()+1 > maxTransact {
				b = &rollupBatch{}
				batches = append(batches, b)
			}
			b.hours = append(b.hours, g)
			if !slices.Contains(b.days, k) {
				b.days = append(b.days, k)
			}
		}
	}
	keys := map[[2]string]bool{}
	var list [][2]string
	for _, b := range batches {
		for _, k := range b.keys() {
			if !keys[k] {
				keys[k] = true
				list = append(list, k)
			}
		}
	}
	got, err := s.batchGetWith(ctx, list, true)
	if err != nil {
		return fmt.Errorf("read rollups: %w", err)
	}
	read := make(map[[2]string]*item, len(list))
	for i, k := range list {
		read[k] = got[i]
	}
	for _, b := range batches {
		if err := s.writeRollupBatch(ctx, b, read, now); err != nil {
			return err
		}
		// A day split over batches exists for the next: its entries go by Update.
		for _, dk := range b.days {
			if read[dk] == nil {
				read[dk] = &item{PK: dk[0], SK: dk[1]}
			}
		}
	}
	return nil
}

// writeRollupBatch commits one batch, re-reading its items after each lost attempt.
func (s *Store) writeRollupBatch(ctx context.Context, b *rollupBatch, read map[[2]string]*item, now time.Time) error {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt >= maxRollupAttempts {
				return fmt.Errorf("update rollups: still contended after %d attempts: %w", attempt, ErrUnavailable)
			}
			if err := sleep(ctx, backoff(min(attempt, 4))); err != nil {
				return err
			}
			keys := b.keys()
			got, err := s.batchGetWith(ctx, keys, true)
			if err != nil {
				return fmt.Errorf("read rollups: %w", err)
			}
			for i, k := range keys {
				read[k] = got[i]
			}
		}
		if lost, err := s.commitRollups(ctx, b, read, now, "update rollups"); !lost {
			return err
		}
	}
}

// commitRollups writes a batch's transaction from the items read. lost reports that a
// concurrent writer of its rollup items got there first (read them again and retry); err is
// anything else.
func (s *Store) commitRollups(ctx context.Context, b *rollupBatch, read map[[2]string]*item, now time.Time, what string) (lost bool, err error) {
	actions, err := s.rollupActions(ctx, b, read, now)
	if err != nil {
		return false, err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err == nil {
		return false, nil
	}
	var tce *types.TransactionCanceledException
	var tc *types.TransactionConflictException
	if !errors.As(err, &tce) && !errors.As(err, &tc) {
		return false, classify(what, err)
	}
	if tce != nil {
		// Only the rollup items carry conditions (samples are put unconditionally): a failed
		// condition or a conflict is a concurrent writer of them.
		for _, r := range tce.CancellationReasons {
			if c := aws.ToString(r.Code); c != "" && c != "None" && c != "ConditionalCheckFailed" && c != "TransactionConflict" {
				return false, classify(what, err)
			}
		}
	}
	return true, nil
}

// rollupActions builds a batch's transaction from the items read: each hour item with the
// call's samples merged in, conditioned on the revision read (or on its absence), and each day
// item with those hours' entries set (a Put when the day item was absent, conditioned on its
// absence; else an Update of those entries only, so that writers of other hours of the day do
// not conflict on it).
func (s *Store) rollupActions(ctx context.Context, b *rollupBatch, read map[[2]string]*item, now time.Time) ([]types.TransactWriteItem, error) {
	var actions []types.TransactWriteItem
	entries := map[[2]string]map[string]types.AttributeValue{}
	for _, g := range b.hours {
		k := g.key()
		old := read[k]
		samples := map[int]sampleEntry{}
		created, rev := now, 0
		if old != nil {
			data, err := old.data()
			if err != nil {
				return nil, err
			}
			if samples, err = decodeSamples(binaryOf(data[rollupSamplesKey])); err != nil {
				return nil, fmt.Errorf("rollup %s: %w", k[1], err)
			}
			created, rev = old.CreatedAt, old.Revision
		}
		for m, e := range g.samples {
			samples[m] = e
		}
		it := &item{PK: k[0], SK: k[1], EntityType: entityRollup, CreatedAt: created, UpdatedAt: now, Revision: rev + 1,
			TTL: g.hour.Add(time.Hour).Add(RollupHourRetention).Unix(), Data: rollupData(g, g.hour)}
		it.Data[rollupSamplesKey] = &types.AttributeValueMemberB{Value: encodeSamples(samples)}
		av, err := it.av()
		if err != nil {
			return nil, err
		}
		stampWriter(ctx, av)
		put := &types.Put{TableName: &s.table, Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)")}
		if old != nil {
			put.ConditionExpression = aws.String("#r = :r")
			put.ExpressionAttributeNames = map[string]string{"#r": attrRevision}
			put.ExpressionAttributeValues = map[string]types.AttributeValue{":r": num(rev)}
		}
		actions = append(actions, types.TransactWriteItem{Put: put})
		minutes := make([]int, 0, len(g.items))
		for m := range g.items {
			minutes = append(minutes, m)
		}
		sort.Ints(minutes)
		for _, m := range minutes {
			av, err := g.items[m].av()
			if err != nil {
				return nil, err
			}
			actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: av}})
		}
		dk := g.dayKey()
		if entries[dk] == nil {
			entries[dk] = map[string]types.AttributeValue{}
		}
		entries[dk][hourEntryKey(g.hour.Hour())] = &types.AttributeValueMemberB{Value: encodeAggregate(hourAggregate(g.hour, samples))}
	}
	for _, dk := range b.days {
		var first *rollupHourGroup
		for _, g := range b.hours {
			if g.dayKey() == dk {
				first = g
				break
			}
		}
		day := first.hour.Truncate(24 * time.Hour)
		if read[dk] == nil {
			it := &item{PK: dk[0], SK: dk[1], EntityType: entityRollup, CreatedAt: now, UpdatedAt: now, Revision: 1,
				TTL: day.Add(24 * time.Hour).Add(RollupDayRetention).Unix(), Data: rollupData(first, day)}
			for h, v := range entries[dk] {
				it.Data[h] = v
			}
			av, err := it.av()
			if err != nil {
				return nil, err
			}
			stampWriter(ctx, av)
			actions = append(actions, types.TransactWriteItem{Put: &types.Put{TableName: &s.table, Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)")}})
			continue
		}
		names := map[string]string{"#d": attrData, "#u": attrUpdatedAt, "#r": attrRevision}
		values := map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: keyTime(now)}, ":one": num(1)}
		expr := "SET #u = :u, #r = #r + :one"
		hs := make([]string, 0, len(entries[dk]))
		for h := range entries[dk] {
			hs = append(hs, h)
		}
		sort.Strings(hs)
		for i, h := range hs {
			n, v := "#h"+strconv.Itoa(i), ":h"+strconv.Itoa(i)
			names[n], values[v] = h, entries[dk][h]
			expr += ", #d." + n + " = " + v
		}
		actions = append(actions, types.TransactWriteItem{Update: &types.Update{TableName: &s.table, Key: keyOf(dk[0], dk[1]),
			UpdateExpression: aws.String(expr), ConditionExpression: aws.String("attribute_exists(PK)"),
			ExpressionAttributeNames: names, ExpressionAttributeValues: values}})
	}
	return actions, nil
}

// rollupData is the Data a rollup item starts with: its capability, component, type and start.
func rollupData(g *rollupHourGroup, start time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"capabilityId": &types.AttributeValueMemberS{Value: g.capabilityID},
		"componentId":  &types.AttributeValueMemberS{Value: g.componentID},
		"metricType":   &types.AttributeValueMemberS{Value: string(g.metricType)},
		"start":        &types.AttributeValueMemberS{Value: keyTime(start)},
	}
}

// bundleRollupItems returns the hour and day rollup items of a bundle's samples, built from
// them alone (BulkLoad writes them with the samples, replacing the rollups of those hours and
// days: a load is authoritative for what it holds). A sample's minute keys it in its hour, as
// recordMetrics keys it.
func bundleRollupItems(ms []*catalog.Metric, now time.Time) ([]*item, error) {
	var hours []*rollupHourGroup
	byHour := map[[2]string]*rollupHourGroup{}
	for _, m := range ms {
		t := m.Timestamp.UTC()
		g := &rollupHourGroup{capabilityID: m.CapabilityID, componentID: m.ComponentID, metricType: m.MetricType, hour: t.Truncate(time.Hour)}
		if err := firstError(ValidateID("capabilityId", g.capabilityID), ValidateID("componentId", g.componentID)); err != nil {
			return nil, err
		}
		if !g.metricType.Valid() {
			return nil, catalog.Invalid("metricType", "%q is not a metric type", g.metricType)
		}
		if cur := byHour[g.key()]; cur != nil {
			g = cur
		} else {
			g.samples = map[int]sampleEntry{}
			byHour[g.key()] = g
			hours = append(hours, g)
		}
		vals, mask := SampleValues(m)
		g.samples[t.Minute()] = sampleEntry{mask: mask, vals: vals}
	}
	var items []*item
	days := map[[2]string]*item{}
	for _, g := range hours {
		k := g.key()
		it := &item{PK: k[0], SK: k[1], EntityType: entityRollup, CreatedAt: now, UpdatedAt: now, Revision: 1,
			TTL: g.hour.Add(time.Hour).Add(RollupHourRetention).Unix(), Data: rollupData(g, g.hour)}
		it.Data[rollupSamplesKey] = &types.AttributeValueMemberB{Value: encodeSamples(g.samples)}
		items = append(items, it)
		dk := g.dayKey()
		day := days[dk]
		if day == nil {
			start := g.hour.Truncate(24 * time.Hour)
			day = &item{PK: dk[0], SK: dk[1], EntityType: entityRollup, CreatedAt: now, UpdatedAt: now, Revision: 1,
				TTL: start.Add(24 * time.Hour).Add(RollupDayRetention).Unix(), Data: rollupData(g, start)}
			days[dk] = day
			items = append(items, day)
		}
		day.Data[hourEntryKey(g.hour.Hour())] = &types.AttributeValueMemberB{Value: encodeAggregate(hourAggregate(g.hour, g.samples))}
	}
	return items, nil
}

// MetricRollups returns a component's rollups of one type, hourly or daily, of the buckets from
// the one holding from to the one holding to, oldest first (buckets without samples left out).
// One Query: the items of one component, type and kind are contiguous, and a page of 1 MB holds
// 168 hour items (4.2 KB at most each: 7 days) or 90 day items (6.6 KB at most each); a longer
// range pages on.
func (s *Store) MetricRollups(ctx context.Context, capabilityID, componentID string, t catalog.MetricType, daily bool, from, to time.Time) ([]*Rollup, error) {
	if err := firstError(ValidateID("capabilityId", capabilityID), ValidateID("componentId", componentID)); err != nil {
		return nil, err
	}
	kind, width := rollupHour, time.Hour
	if daily {
		kind, width = rollupDay, 24*time.Hour
	}
	from, to = from.UTC().Truncate(width), to.UTC().Truncate(width)
	now := s.now()
	items, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), lo: rollupSK(componentID, t, kind, from), hi: rollupSK(componentID, t, kind, to), now: now})
	if err != nil {
		return nil, fmt.Errorf("read rollups of %s: %w", componentID, err)
	}
	out := make([]*Rollup, 0, len(items))
	for _, it := range items {
		if it.EntityType != entityRollup {
			continue
		}
		r, err := decodeRollupItem(it, daily)
		if err != nil {
			return nil, err
		}
		if r.Count > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

// decodeRollupItem returns the aggregate an hour or day item holds.
func decodeRollupItem(it *item, daily bool) (*Rollup, error) {
	_, _, _, start, err := parseRollupSK(it.SK)
	if err != nil {
		return nil, err
	}
	data, err := it.data()
	if err != nil {
		return nil, err
	}
	if !daily {
		samples, err := decodeSamples(binaryOf(data[rollupSamplesKey]))
		if err != nil {
			return nil, fmt.Errorf("rollup %s: %w", it.SK, err)
		}
		return hourAggregate(start, samples), nil
	}
	r := &Rollup{Start: start, End: start.Add(24 * time.Hour)}
	for h := range 24 {
		v, ok := data[hourEntryKey(h)]
		if !ok {
			continue
		}
		hr, err := decodeAggregate(binaryOf(v), start.Add(time.Duration(h)*time.Hour))
		if err != nil {
			return nil, fmt.Errorf("rollup %s: %w", it.SK, err)
		}
		r.merge(hr)
	}
	return r, nil
}

// rollupDiff is an hour whose rollups check found wrong.
type rollupDiff struct {
	componentID string
	metricType  catalog.MetricType
	hour        time.Time
	detail      string
}

func (d rollupDiff) String() string {
	return rollupSK(d.componentID, d.metricType, rollupHour, d.hour) + ": " + d.detail
}

// checkRollups compares, in a partition's items, each sample still in the table (unexpired at
// now) with its hour item's entry of its minute, and each hour item with its day item's entry
// of that hour: they must hold the same values, and the same aggregate. Samples archived to S3
// (or expired) are not compared: an hour item keeps their entries, which only the archive holds
// then. (An hour item expires long before its day item: a day entry without its hour item is
// not a finding.) It returns one diff per hour found wrong, in key order.
func checkRollups(items []*item, now time.Time) ([]rollupDiff, error) {
	days, hours := map[string]*item{}, map[string]*item{}
	var diffs []rollupDiff
	seen := map[string]bool{}
	add := func(comp string, t catalog.MetricType, hour time.Time, detail string) {
		d := rollupDiff{componentID: comp, metricType: t, hour: hour, detail: detail}
		if k := rollupSK(comp, t, rollupHour, hour); !seen[k] {
			seen[k] = true
			diffs = append(diffs, d)
		}
	}
	for _, it := range items {
		if it.EntityType != entityRollup {
			continue
		}
		if _, _, kind, _, err := parseRollupSK(it.SK); err != nil {
			return nil, err
		} else if kind == rollupDay {
			days[it.SK] = it
		} else {
			hours[it.SK] = it
		}
	}
	decoded := map[string]map[int]sampleEntry{}
	for _, sk := range slices.Sorted(maps.Keys(hours)) {
		it := hours[sk]
		comp, t, _, start, _ := parseRollupSK(sk)
		data, err := it.data()
		if err != nil {
			return nil, err
		}
		samples, err := decodeSamples(binaryOf(data[rollupSamplesKey]))
		if err != nil {
			add(comp, t, start, err.Error())
			continue
		}
		decoded[sk] = samples
		day := days[rollupSK(comp, t, rollupDay, start.Truncate(24*time.Hour))]
		if day == nil {
			add(comp, t, start, "no day rollup")
			continue
		}
		dd, err := day.data()
		if err != nil {
			return nil, err
		}
		if got, want := binaryOf(dd[hourEntryKey(start.Hour())]), encodeAggregate(hourAggregate(start, samples)); string(got) != string(want) {
			add(comp, t, start, "the day rollup's entry of the hour differs from the hour's samples")
		}
	}
	for _, it := range items {
		if it.EntityType != entityMetric || it.expired(now) {
			continue
		}
		comp, t, at, err := parseMetricSK(it.SK)
		if err != nil {
			return nil, err
		}
		at = at.UTC()
		hour := at.Truncate(time.Hour)
		sk := rollupSK(comp, t, rollupHour, hour)
		if hours[sk] == nil {
			add(comp, t, hour, "no hour rollup of the sample at "+keyTime(at))
			continue
		}
		samples, ok := decoded[sk]
		if !ok {
			continue // unreadable: reported above
		}
		m, err := toMetric(it)
		if err != nil {
			return nil, err
		}
		vals, mask := SampleValues(m)
		if e, ok := samples[at.Minute()]; !ok || e.mask != mask || !sameValues(e.vals, vals, mask) {
			add(comp, t, hour, "the hour rollup's entry of the sample at "+keyTime(at)+" differs from the sample")
		}
	}
	slices.SortFunc(diffs, func(a, b rollupDiff) int { return strings.Compare(a.String(), b.String()) })
	return diffs, nil
}

// sameValues compares the values mask selects, bit for bit.
func sameValues(a, b [RollupFields]float64, mask uint8) bool {
	for i := range RollupFields {
		if mask&(1<<i) != 0 && math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// repairRollups rebuilds the hours of a partition that check finds wrong: each hour item with
// the samples the table holds merged in (entries of samples no longer in the table, archived,
// kept) and its day item's entry of that hour, in one transaction conditioned on the hour item's
// revision read (or its absence) before the samples were read, so that a recordMetrics call
// committing in between makes it read again (up to maxRollupAttempts). It returns how many hours
// it rebuilt.
func (s *Store) repairRollups(ctx context.Context, capabilityID string) (int, error) {
	items, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), consistent: true})
	if err != nil {
		return 0, err
	}
	now := s.now()
	diffs, err := checkRollups(items, now)
	if err != nil {
		return 0, err
	}
	for _, d := range diffs {
		if err := s.rebuildHour(ctx, capabilityID, d, now); err != nil {
			return 0, fmt.Errorf("rebuild %s: %w", d, err)
		}
	}
	return len(diffs), nil
}

// rebuildHour rebuilds one hour's rollups from the samples in the table (repairRollups).
func (s *Store) rebuildHour(ctx context.Context, capabilityID string, d rollupDiff, now time.Time) error {
	g := &rollupHourGroup{capabilityID: capabilityID, componentID: d.componentID, metricType: d.metricType, hour: d.hour}
	b := &rollupBatch{hours: []*rollupHourGroup{g}, days: [][2]string{g.dayKey()}}
	for attempt := 0; attempt < maxRollupAttempts; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, backoff(min(attempt, 4))); err != nil {
				return err
			}
		}
		// The rollup items first, then the samples: a sample written after the read of the hour
		// item moved its revision, and the condition below fails.
		keys := b.keys()
		got, err := s.batchGetWith(ctx, keys, true)
		if err != nil {
			return err
		}
		read := map[[2]string]*item{keys[0]: got[0], keys[1]: got[1]}
		if old := got[0]; old != nil {
			data, err := old.data()
			if err != nil {
				return err
			}
			if _, err := decodeSamples(binaryOf(data[rollupSamplesKey])); err != nil {
				read[keys[0]] = &item{PK: old.PK, SK: old.SK, CreatedAt: old.CreatedAt, Revision: old.Revision,
					Data: map[string]types.AttributeValue{}} // unreadable: rebuilt from the samples alone
			}
		}
		samples, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), consistent: true,
			lo: metricSK(d.componentID, d.metricType, d.hour), hi: metricSK(d.componentID, d.metricType, d.hour.Add(time.Hour-time.Microsecond))})
		if err != nil {
			return err
		}
		g.samples = map[int]sampleEntry{}
		for _, it := range samples {
			if it.EntityType != entityMetric || it.expired(now) {
				continue
			}
			_, _, at, err := parseMetricSK(it.SK)
			if err != nil {
				return err
			}
			m, err := toMetric(it)
			if err != nil {
				return err
			}
			vals, mask := SampleValues(m)
			g.samples[at.UTC().Minute()] = sampleEntry{mask: mask, vals: vals}
		}
		if lost, err := s.commitRollups(ctx, b, read, now, "rebuild rollups"); !lost {
			return err
		}
	}
	return fmt.Errorf("rebuild rollups: still contended after %d attempts: %w", maxRollupAttempts, ErrUnavailable)
}
