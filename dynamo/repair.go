package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
)

// Kinds of Finding.
const (
	FindingIndex           = "index"                  // a GSI1 listing differs from the table
	FindingAggregates      = "aggregates"             // a capability's aggregates or index items differ from a recount
	FindingUnfinished      = "unfinished-delete"      // a capability marked deleting whose delete did not finish
	FindingOrphanItems     = "orphan-items"           // items of a partition without METADATA
	FindingMissingClaim    = "missing-claim"          // a component whose ID has no claim
	FindingOrphanClaim     = "orphan-claim"           // a claim whose capability does not hold the component
	FindingDuplicateID     = "duplicate-component-id" // one component ID in two capabilities
	FindingUnreadableItems = "unreadable-item"        // an item the store cannot parse
	FindingUnarchived      = "unarchived-samples"     // samples near or past their retention that no archive took
	FindingCounters        = "counters"               // the catalogue's counters differ from a recount
	FindingCounterSize     = "counter-size"           // a counter shard is close to DynamoDB's 400 KB item limit
	FindingRollups         = "rollups"                // metric rollups that differ from the samples in the table, or an hour from its day entry
)

// ArchiveAtRisk is how close to its TTL a metric sample still in the table is reported by Check:
// the archive deletes what it archived, so a sample this old is in no archive yet, and DynamoDB
// expires it within this time (past its TTL, it may be gone at any moment).
const ArchiveAtRisk = 7 * 24 * time.Hour

// Finding is one thing Check found wrong. Repairable findings are fixed by Check with repair.
type Finding struct {
	Kind       string `json:"kind"`
	Subject    string `json:"subject"`
	Detail     string `json:"detail"`
	Repairable bool   `json:"repairable"`
	// owner is the capability that holds the component of a missing claim.
	owner string
}

func (f Finding) String() string { return f.Kind + " " + f.Subject + ": " + f.Detail }

// CheckReport is what Check found, and with repair what it fixed.
type CheckReport struct {
	// Items is how many items the scan read.
	Items int
	// Findings are what is wrong after Check ran (after the repairs, with repair).
	Findings []Finding
	// Repaired are the findings that the repair fixed.
	Repaired []Finding
}

// Check walks the whole table (a parallel, paginated Scan) and reports what is inconsistent:
// index listings that differ from the table, partitions whose aggregates or index items differ
// from a recount, deletes that did not finish, items left without their capability, component
// IDs without a claim, claims without their component, IDs in two capabilities, notifications
// whose outbox entry is not what their state asks (checkOutbox), and the catalogue's counters where they differ from a recount (or a shard grows near 400 KB). With
// repair it fixes what can be fixed (resumes deletes, recounts, deletes orphans, puts and
// deletes claims, corrects the counters last: every repair is conditional or idempotent, so a
// rerun is safe), then checks
// again. It reads every item: an audit, not a hot path.
func (s *Store) Check(ctx context.Context, repair bool) (*CheckReport, error) {
	report, err := s.check(ctx)
	if err != nil || !repair {
		return report, err
	}
	var fixed []Finding
	for _, f := range report.Findings {
		if !f.Repairable {
			continue
		}
		if err := s.repair(ctx, f); err != nil {
			return nil, fmt.Errorf("repair %s: %w", f, err)
		}
		fixed = append(fixed, f)
	}
	after, err := s.check(ctx)
	if err != nil {
		return nil, err
	}
	after.Repaired = fixed
	return after, nil
}

// scan returns every item of the table, or every entry of GSI1, read by a parallel, paginated
// Scan, with the attributes of projection ("" for all). A backend that ignores segments, as
// minidyn does, returns each item once per segment: each is kept once.
func (s *Store) scan(ctx context.Context, index bool, projection string) ([]map[string]types.AttributeValue, error) {
	var mu sync.Mutex
	seen := map[[2]string]map[string]types.AttributeValue{}
	g, gctx := errgroup.WithContext(ctx)
	for seg := range scanSegments {
		g.Go(func() error {
			in := &dynamodb.ScanInput{TableName: &s.table, Segment: aws.Int32(int32(seg)), TotalSegments: aws.Int32(scanSegments)}
			if projection != "" {
				in.ProjectionExpression = aws.String(projection)
			}
			if index {
				in.IndexName = aws.String(gsi1Name)
			} else {
				in.ConsistentRead = aws.Bool(true)
			}
			for {
				out, err := s.db.Scan(gctx, in)
				if err != nil {
					return classify("scan", err)
				}
				mu.Lock()
				for _, m := range out.Items {
					seen[[2]string{str(m[attrPK]), str(m[attrSK])}] = m
				}
				mu.Unlock()
				if len(out.LastEvaluatedKey) == 0 {
					return nil
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return slices.Collect(maps.Values(seen)), nil
}

// atRisk counts a capability's samples that Check reports as unarchived.
type atRisk struct {
	count, expired int
	oldest         int64 // the earliest TTL, Unix seconds
}

// partitionScan is what the scan found of one capability's partition.
type partitionScan struct {
	meta       *item
	items      []*item
	components []string
}

func (s *Store) check(ctx context.Context) (*CheckReport, error) {
	raw, err := s.scan(ctx, false, "")
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	report := &CheckReport{Items: len(raw)}
	add := func(kind, subject string, repairable bool, format string, args ...any) {
		report.Findings = append(report.Findings, Finding{Kind: kind, Subject: subject, Detail: fmt.Sprintf(format, args...), Repairable: repairable})
	}
	parts := map[string]*partitionScan{}
	claims := map[string]string{} // component ID -> capability its claim names
	now := s.now()
	risk := map[string]*atRisk{} // capability -> its samples near or past their TTL
	var outbox []*item           // notifications and outbox entries
	for _, m := range raw {
		it, err := readItem(m)
		if err != nil {
			add(FindingUnreadableItems, str(m[attrPK])+" "+str(m[attrSK]), false, "%v", err)
			continue
		}
		if it.EntityType == entityNotify || it.GSI1PK == outboxPK {
			outbox = append(outbox, it)
		}
		if it.EntityType == entityMetric && it.TTL > 0 && it.TTL <= now.Add(ArchiveAtRisk).Unix() {
			id, _ := parseCapabilityPK(it.PK)
			r := risk[id]
			if r == nil {
				r = &atRisk{oldest: it.TTL}
				risk[id] = r
			}
			r.count++
			r.oldest = min(r.oldest, it.TTL)
			if it.TTL <= now.Unix() {
				r.expired++
			}
		}
		if id, ok := cutPrefix(it.PK, claimPrefix); ok {
			claims[id] = str(it.Data["capabilityId"])
			continue
		}
		id, err := parseCapabilityPK(it.PK)
		if err != nil {
			continue // tokens and anything else outside the capability partitions
		}
		if isCapabilityVersion(it.SK) || isChangeSK(it.SK) {
			continue // history and change records, which outlive the capability
		}
		p := parts[id]
		if p == nil {
			p = &partitionScan{}
			parts[id] = p
		}
		p.items = append(p.items, it)
		switch it.EntityType {
		case entityCapability:
			if it.SK == metadataSK {
				p.meta = it
			}
		case entityComponent:
			if _, componentID, err := parseComponentSK(it.SK); err == nil {
				p.components = append(p.components, componentID)
			}
		}
	}
	owners := map[string][]string{} // component ID -> capabilities holding it
	for _, id := range slices.Sorted(maps.Keys(parts)) {
		p := parts[id]
		switch {
		case p.meta == nil:
			add(FindingOrphanItems, id, true, "%d items and no METADATA", len(p.items))
			continue
		case p.meta.Deleting:
			add(FindingUnfinished, id, true, "marked deleting, %d items left", len(p.items))
			continue
		}
		for _, c := range p.components {
			owners[c] = append(owners[c], id)
		}
		// The scan read the partition already: recount from its items.
		if err := checkPartitionItems(id, p.items); err != nil {
			add(FindingAggregates, id, true, "%v", err)
		}
		if diffs, err := checkRollups(p.items, now); err != nil {
			return nil, err
		} else if len(diffs) > 0 {
			add(FindingRollups, id, true, "%d hours: %v", len(diffs), firstN(diffStrings(diffs), 5))
		}
		if diff, err := checkComponentIndex(p.items, now); err != nil {
			return nil, err
		} else if diff != "" {
			add(FindingComponentIndex, id, true, "%s", diff)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(owners)) {
		caps := owners[c]
		if len(caps) > 1 {
			add(FindingDuplicateID, c, false, "held by %v: rename or remove all but one", caps)
		}
		if claim, ok := claims[c]; !ok {
			add(FindingMissingClaim, c, len(caps) == 1, "held by %s, unclaimed", caps[0])
			report.Findings[len(report.Findings)-1].owner = caps[0]
		} else if !slices.Contains(caps, claim) {
			add(FindingOrphanClaim, c, true, "claimed for %s, which does not hold it (held by %v)", claim, caps)
		}
	}
	for _, c := range slices.Sorted(maps.Keys(claims)) {
		if _, held := owners[c]; !held {
			if p := parts[claims[c]]; p != nil && p.meta != nil && p.meta.Deleting {
				continue // the unfinished delete releases it
			}
			add(FindingOrphanClaim, c, true, "claimed for %s, which does not hold it", claims[c])
		}
	}
	for _, id := range slices.Sorted(maps.Keys(risk)) {
		r := risk[id]
		when := "expire within 7 days, the first at " + time.Unix(r.oldest, 0).UTC().Format(time.RFC3339)
		if r.expired > 0 {
			when = fmt.Sprintf("expire within 7 days; %d are past their TTL and may be deleted by DynamoDB at any moment", r.expired)
		}
		add(FindingUnarchived, id, false, "%d metric samples in no archive %s: run archive-metrics (check -repair does)", r.count, when)
	}
	report.Findings = append(report.Findings, checkOutbox(outbox)...)
	counters, err := s.checkCounters(ctx, raw)
	if err != nil {
		return nil, err
	}
	report.Findings = append(report.Findings, counters...)
	index, err := s.CheckIndexes(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range index {
		add(FindingIndex, "GSI1", false, "%s", f)
	}
	sort.SliceStable(report.Findings, func(i, j int) bool {
		return repairOrder(report.Findings[i].Kind) < repairOrder(report.Findings[j].Kind)
	})
	return report, nil
}

func diffStrings(diffs []rollupDiff) []string {
	out := make([]string, len(diffs))
	for i, d := range diffs {
		out[i] = d.String()
	}
	return out
}

// repairOrder puts deletes first: an orphan claim goes before the claim that replaces it.
func repairOrder(kind string) int {
	switch kind {
	case FindingUnfinished, FindingOrphanItems:
		return 0
	case FindingOrphanClaim:
		return 1
	case FindingMissingClaim:
		return 2
	case FindingCounters:
		return 4 // after the recounts of aggregates, which move the counters
	}
	return 3
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

// repair fixes one finding. Each repair is conditional or idempotent.
func (s *Store) repair(ctx context.Context, f Finding) error {
	switch f.Kind {
	case FindingUnfinished:
		meta, err := s.readItem(ctx, capabilityPK(f.Subject), metadataSK, true)
		if err != nil {
			return err
		}
		return s.DeleteCapability(ctx, f.Subject, meta.Revision, Idempotency{})
	case FindingOrphanItems:
		return s.deleteOrphans(ctx, f.Subject)
	case FindingAggregates:
		return s.recount(ctx, f.Subject)
	case FindingMissingClaim:
		return s.claimFor(ctx, f.owner, f.Subject)
	case FindingOrphanClaim:
		return s.releaseOrphanClaim(ctx, f.Subject)
	case FindingCounters:
		if _, err := s.RepairCounters(ctx); err != nil {
			return err
		}
		_, err := s.compactCounters(ctx)
		return err
	case FindingCounterSize:
		_, err := s.compactCounters(ctx)
		return err
	case FindingComponentIndex:
		return s.repairComponentIndex(ctx, f.Subject)
	case FindingOutbox:
		return s.repairOutbox(ctx, f.Subject)
	case FindingRollups:
		_, err := s.repairRollups(ctx, f.Subject)
		return err
	}
	return fmt.Errorf("no repair for %s", f.Kind)
}

// deleteOrphans deletes the items of a partition that has no METADATA.
func (s *Store) deleteOrphans(ctx context.Context, id string) error {
	if _, err := s.readItem(ctx, capabilityPK(id), metadataSK, true); err == nil {
		return nil // the capability exists (again): nothing is orphaned
	}
	return s.deleteChildren(ctx, id, nil, nil) // the history, tombstone and changes stay
}

// recount rewrites a capability's aggregates and index items from a recount of its partition,
// as one conditioned write (a concurrent writer wins and the recount is planned again).
func (s *Store) recount(ctx context.Context, id string) error {
	_, err := s.mutate(ctx, id, 0, Idempotency{}, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(id)
		if err != nil {
			return nil, err
		}
		items, _, err := s.run(ctx, query{pk: capabilityPK(id), consistent: true})
		if err != nil {
			return nil, err
		}
		count, err := recountItems(items)
		if err != nil {
			return nil, err
		}
		count.aggregate(&capability.Aggregates)
		// The search cards are rewritten against what the partition holds.
		st.cards = map[string]*item{}
		for _, it := range items {
			if isCardSK(it.SK) {
				st.cards[it.SK] = it
			}
		}
		return &plan{capability: capability}, nil
	})
	return err
}

// claimFor puts the claim of a component ID for owner, the capability the check found holding
// it, if it still does and no claim exists.
func (s *Store) claimFor(ctx context.Context, owner, componentID string) error {
	st, err := s.loadState(ctx, owner, SegComponents)
	if err != nil {
		return err
	}
	if st.capability == nil || indexOf(st.Components, componentID) < 0 {
		return nil // removed meanwhile: nothing to claim
	}
	p := &plan{}
	p.put(claimItem(&catalog.Component{CapabilityID: owner, ComponentID: componentID}, s.now()), notExists, nil)
	if p.err != nil {
		return p.err
	}
	err = s.commitActions(ctx, owner, 0, p.actions, Idempotency{}, nil, s.now())
	var lost *lostRace
	if errors.As(err, &lost) {
		return nil // claimed meanwhile
	}
	return err
}

// releaseOrphanClaim deletes a claim whose capability does not hold the component, on the
// condition that it still names that capability.
func (s *Store) releaseOrphanClaim(ctx context.Context, componentID string) error {
	claim, err := s.readItem(ctx, claimPK(componentID), claimSK, true)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	owner := str(claim.Data["capabilityId"])
	if owner != "" {
		st, err := s.loadState(ctx, owner, SegComponents)
		if err != nil {
			return err
		}
		if st.meta != nil && !st.meta.Deleting && indexOf(st.Components, componentID) >= 0 {
			return nil // it holds it after all
		}
	}
	p := &plan{}
	p.release(owner, componentID, nil)
	err = s.commitActions(ctx, owner, 0, p.actions, Idempotency{}, nil, s.now())
	var lost *lostRace
	if errors.As(err, &lost) {
		return nil // changed meanwhile: the next check says
	}
	return err
}
