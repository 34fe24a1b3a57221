package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
)

// batchWrite puts items with BatchWriteItem, maxBatchWrite a call, up to parallel calls at once,
// retrying UnprocessedItems with backoff. It never drops an item: leftovers that outlast the
// retries are an error.
func (s *Store) batchWrite(ctx context.Context, reqs []types.WriteRequest, parallel int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for start := 0; start < len(reqs); start += maxBatchWrite {
		chunk := reqs[start:min(start+maxBatchWrite, len(reqs))]
		g.Go(func() error { return s.writeChunk(gctx, chunk) })
	}
	return g.Wait()
}

func (s *Store) writeChunk(ctx context.Context, chunk []types.WriteRequest) error {
	pending := chunk
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 0 {
			if attempt >= maxLeftover {
				return fmt.Errorf("batch write: %d items still unprocessed after %d attempts: %w", len(pending), attempt, ErrUnavailable)
			}
			if err := sleep(ctx, backoff(attempt)); err != nil {
				return err
			}
		}
		out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems:           map[string][]types.WriteRequest{s.table: pending},
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		})
		if err != nil {
			return classify("batch write", err)
		}
		pending = out.UnprocessedItems[s.table]
	}
	return nil
}

func putRequests(items []*item) ([]types.WriteRequest, error) {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		av, err := it.av()
		if err != nil {
			return nil, err
		}
		if n := itemSize(av); n > maxItemSize {
			return nil, fmt.Errorf("item %s/%s is %d bytes, over DynamoDB's 400 KB", it.PK, it.SK, n)
		}
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return reqs, nil
}

// bundleItems returns every item of a bundle: the capability with its index items, then its
// components, dependencies, jobs, metrics and rules.
func bundleItems(b *catalog.Bundle, now time.Time) ([]*item, error) {
	c := b.Capability
	if err := ValidateID("capabilityId", c.CapabilityID); err != nil {
		return nil, err
	}
	items, err := capabilityItems(c, now)
	if err != nil {
		return nil, err
	}
	seq := newIncarnation()
	for _, it := range items {
		it.WriteSeq = seq
	}
	cards, err := cardItems(c, now)
	if err != nil {
		return nil, err
	}
	items = append(items, cards...)
	add := func(it *item, err error) error {
		if err != nil {
			return err
		}
		items = append(items, it)
		return nil
	}
	for _, x := range b.Components {
		if err := add(componentItem(x, now)); err != nil {
			return nil, err
		}
		items = append(items, claimItem(x, now))
		cards, err := componentIndexItems(x, now)
		if err != nil {
			return nil, err
		}
		items = append(items, cards...)
	}
	for _, x := range b.Dependencies {
		if err := add(dependencyItem(x, now)); err != nil {
			return nil, err
		}
	}
	for _, x := range b.Jobs {
		if err := add(jobItem(x, now)); err != nil {
			return nil, err
		}
		if a, err := activeJobItem(x, now); err != nil || a != nil {
			if err := add(a, err); err != nil {
				return nil, err
			}
		}
	}
	for _, x := range b.Metrics {
		if err := add(metricItem(x, now)); err != nil {
			return nil, err
		}
	}
	for _, x := range b.Rules {
		if err := add(ruleItem(x, now)); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// BulkLoad writes bundles with BatchWriteItem (25 items a call, parallel calls at once,
// UnprocessedItems retried), after recounting each bundle's aggregates so that they equal what
// its partition holds, with the claim of every component's ID. It trusts its input: a component
// ID in two bundles is claimed by the last one written (mutations never allow it). It
// overwrites items with the same keys, and returns how many it wrote. The metrics' hour and day
// rollups are built from the bundle's samples and written with them (bundleRollupItems: they
// replace those of the same hours and days).
// It is for loading catalogues (the sample, benchmarks), not for changes made while serving.
// It ends by recounting the catalogue's counters (RepairCounters: one Scan of the table).
func (s *Store) BulkLoad(ctx context.Context, bundles []*catalog.Bundle, parallel int) (int, error) {
	n, err := s.BulkWrite(ctx, bundles, parallel)
	if err != nil {
		return n, err
	}
	// Batch writes have no transaction to move the counters in, and a load overwrites what its
	// keys held: the counters are recounted instead (RepairCounters: a correction measured
	// against a recount, exact on a rerun and safe beside writers).
	if _, err := s.RepairCounters(ctx); err != nil {
		return n, fmt.Errorf("bulk load: %w", err)
	}
	return n, nil
}

// BulkWrite is BulkLoad without its recount of the counters, for a loader that writes a big
// catalogue as many groups (each BulkLoad's recount is a Scan of the whole table, so a load in
// n groups would read the table n times): call RepairCounters once after the last group. Until
// then the counters (catalogueSummary, owners, totalCount of capabilities) do not count what it
// wrote.
func (s *Store) BulkWrite(ctx context.Context, bundles []*catalog.Bundle, parallel int) (int, error) {
	now := s.now()
	var children, capabilities []*item
	for _, b := range bundles {
		b.Recount()
		if err := checkContribution(b.Capability); err != nil {
			return 0, fmt.Errorf("bulk load %s: %w", b.Capability.CapabilityID, err)
		}
		its, err := bundleItems(b, now)
		if err != nil {
			return 0, fmt.Errorf("bulk load %s: %w", b.Capability.CapabilityID, err)
		}
		capabilities = append(capabilities, its[:3]...) // METADATA and its index items
		children = append(children, its[3:]...)
		rollups, err := bundleRollupItems(b.Metrics, now)
		if err != nil {
			return 0, fmt.Errorf("bulk load %s: %w", b.Capability.CapabilityID, err)
		}
		children = append(children, rollups...)
	}
	// The capabilities last, each with a new WriteSeq (bundleItems): a server that reads a
	// capability's new METADATA reads its partition after every child was written, so its
	// partition cache cannot keep a half-loaded partition under the new WriteSeq.
	n := 0
	for _, items := range [][]*item{children, capabilities} {
		reqs, err := putRequests(items)
		if err != nil {
			return 0, fmt.Errorf("bulk load: %w", err)
		}
		if err := s.batchWrite(ctx, reqs, parallel); err != nil {
			return 0, fmt.Errorf("bulk load: %w", err)
		}
		n += len(reqs)
	}
	return n, nil
}
