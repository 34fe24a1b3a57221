package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
)

// Segment is a set of the partition's entity segments that a caller needs. Segments that are
// adjacent in sort order are read with one Query; a segment nobody asked for is never read.
type Segment uint8

// The segments a partition read can fetch. Jobs, metrics and versions are read through their
// own paginated windows, never as a whole segment: they can be huge.
const (
	SegComponents Segment = 1 << iota
	SegDependencies
	SegRules
)

// Has reports whether s includes t.
func (s Segment) Has(t Segment) bool { return s&t != 0 }

func (s Segment) String() string {
	var parts []string
	for _, x := range []struct {
		seg  Segment
		name string
	}{{SegComponents, "components"}, {SegDependencies, "dependencies"}, {SegRules, "rules"}} {
		if s.Has(x.seg) {
			parts = append(parts, x.name)
		}
	}
	return strings.Join(parts, "+")
}

// PlanRanges splits the segments wanted into the contiguous sort-key ranges to query, merging
// neighbours: COMPONENT# and DEPENDENCY# are adjacent and read as one BETWEEN range; RULE#
// sits past JOB#, METADATA and METRIC# and is read on its own.
func PlanRanges(want Segment) []Segment {
	var ranges []Segment
	if cd := want & (SegComponents | SegDependencies); cd != 0 {
		ranges = append(ranges, cd)
	}
	if want.Has(SegRules) {
		ranges = append(ranges, SegRules)
	}
	return ranges
}

// Partition is what a partition read returned, by segment, in sort-key order.
type Partition struct {
	Components   []*catalog.Component
	Dependencies []*catalog.Dependency
	Rules        []*catalog.Rule
}

// Fields names the Data keys a partition read needs, by entity; a nil list reads whole items.
// The keys the store and the GraphQL filters rely on (requiredKeys) are read in any case.
// Reading fewer keys costs the same capacity (DynamoDB charges by stored item size) but sends
// and decodes fewer bytes: a list that shows each component's name and status reads a tenth
// of each item.
type Fields struct {
	Components, Dependencies, Rules []string
}

// requiredKeys are read whatever Fields asks: IDs, the order and what filters compare.
var requiredKeys = []struct {
	seg  Segment
	keys []string
}{
	{SegComponents, []string{"componentId", "capabilityId", "order", "componentType", "layer", "status"}},
	{SegDependencies, []string{"capabilityId", "sourceComponentId", "targetComponentId", "criticality"}},
	{SegRules, []string{"ruleId", "capabilityId", "order", "ruleType", "status"}},
}

// projection returns the ProjectionExpression and its names for a range; "" reads whole items.
func (f Fields) projection(rng Segment) (string, map[string]string) {
	asked := map[Segment][]string{SegComponents: f.Components, SegDependencies: f.Dependencies, SegRules: f.Rules}
	var keys []string
	for _, r := range requiredKeys {
		if !rng.Has(r.seg) {
			continue
		}
		if asked[r.seg] == nil {
			return "", nil
		}
		keys = append(append(keys, r.keys...), asked[r.seg]...)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	names := map[string]string{"#d": attrData}
	parts := make([]string, 0, 6+len(keys))
	for i, a := range []string{attrPK, attrSK, attrEntityType, attrCreatedAt, attrUpdatedAt, attrRevision} {
		n := "#e" + strconv.Itoa(i)
		names[n] = a
		parts = append(parts, n)
	}
	for i, k := range keys {
		n := "#k" + strconv.Itoa(i)
		names[n] = k
		parts = append(parts, "#d."+n)
	}
	return strings.Join(parts, ", "), names
}

// ReadRange reads one contiguous range (a group returned by PlanRanges) of a capability's
// partition with one Query (more only when DynamoDB pages past 1 MB): the Data keys f names,
// or whole items for the zero Fields.
func (s *Store) ReadRange(ctx context.Context, capabilityID string, rng Segment, f Fields) (*Partition, error) {
	return s.readRange(ctx, capabilityID, rng, f, false)
}

// ReadRangeConsistent reads one contiguous range of a capability's partition, whole items, with
// a strongly consistent Query: it sees every write that completed before it started (the
// partition cache fills from it; see docs/performance.md).
func (s *Store) ReadRangeConsistent(ctx context.Context, capabilityID string, rng Segment) (*Partition, error) {
	return s.readRange(ctx, capabilityID, rng, Fields{}, true)
}

func (s *Store) readRange(ctx context.Context, capabilityID string, rng Segment, f Fields, consistent bool) (*Partition, error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	lo, hi, err := rng.bounds()
	if err != nil {
		return nil, err
	}
	q := query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, consistent: consistent}
	q.projection, q.names = f.projection(rng)
	items, _, err := s.run(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read %s of %s: %w", rng, capabilityID, err)
	}
	p := &Partition{}
	for _, it := range items {
		if err := p.add(it); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// add decodes it into p when it is a component, dependency or rule, and skips any other item.
func (p *Partition) add(it *item) error {
	switch it.EntityType {
	case entityComponent:
		c, err := toComponent(it)
		if err != nil {
			return err
		}
		p.Components = append(p.Components, c)
	case entityDependency:
		d, err := toDependency(it)
		if err != nil {
			return err
		}
		p.Dependencies = append(p.Dependencies, d)
	case entityRule:
		r, err := toRule(it)
		if err != nil {
			return err
		}
		p.Rules = append(p.Rules, r)
	}
	return nil
}

// ReadPartition reads the wanted segments of a capability's partition, one Query per planned
// range, concurrently.
func (s *Store) ReadPartition(ctx context.Context, capabilityID string, want Segment) (*Partition, error) {
	ranges := PlanRanges(want)
	parts := make([]*Partition, len(ranges))
	g, gctx := errgroup.WithContext(ctx)
	for i, r := range ranges {
		g.Go(func() (err error) {
			parts[i], err = s.ReadRange(gctx, capabilityID, r, Fields{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	p := &Partition{}
	for _, x := range parts {
		p.Components = append(p.Components, x.Components...)
		p.Dependencies = append(p.Dependencies, x.Dependencies...)
		p.Rules = append(p.Rules, x.Rules...)
	}
	return p, nil
}

// Capability returns the capability with the given ID. It returns ErrNotFound if none exists.
func (s *Store) Capability(ctx context.Context, id string) (*catalog.Capability, error) {
	if err := ValidateID("id", id); err != nil {
		return nil, err
	}
	it, err := s.getItem(ctx, capabilityPK(id), metadataSK)
	if IsNotFound(err) {
		return nil, catalog.Missing(catalog.EntityCapability, id, err)
	}
	if err != nil {
		return nil, fmt.Errorf("get capability %s: %w", id, err)
	}
	return toCapability(it)
}

// CapabilitiesByID returns the capabilities with the given IDs, in the order of ids, nil for
// each ID that does not exist, with one BatchGetItem per 100 distinct IDs.
func (s *Store) CapabilitiesByID(ctx context.Context, ids []string) ([]*catalog.Capability, error) {
	return s.capabilitiesByID(ctx, ids, false)
}

// CapabilitiesByIDConsistent is CapabilitiesByID with strongly consistent reads: each
// capability as the last write that completed before the read left it, WriteSeq included.
func (s *Store) CapabilitiesByIDConsistent(ctx context.Context, ids []string) ([]*catalog.Capability, error) {
	return s.capabilitiesByID(ctx, ids, true)
}

func (s *Store) capabilitiesByID(ctx context.Context, ids []string, consistent bool) ([]*catalog.Capability, error) {
	keys := make([][2]string, len(ids))
	for i, id := range ids {
		if err := ValidateID("id", id); err != nil {
			return nil, err
		}
		keys[i] = [2]string{capabilityPK(id), metadataSK}
	}
	if s.memo == nil {
		return s.readCapabilities(ctx, keys, consistent)
	}
	// Every read of the engine is strongly consistent: the memo serves both kinds.
	g := s.memo.now()
	caps, found, all := s.memo.capabilities(g, ids)
	if all {
		return caps, nil
	}
	var missIDs []string
	var missKeys [][2]string
	for i := range ids {
		if !found[i] {
			missIDs, missKeys = append(missIDs, ids[i]), append(missKeys, keys[i])
		}
	}
	read, err := s.readCapabilities(ctx, missKeys, consistent)
	if err != nil {
		return nil, err
	}
	s.memo.keepCapabilities(g, missIDs, read)
	j := 0
	for i := range ids {
		if !found[i] {
			caps[i] = read[j]
			j++
		}
	}
	return caps, nil
}

// readCapabilities reads the METADATA items of keys: a missing capability, or one being
// deleted, is nil.
func (s *Store) readCapabilities(ctx context.Context, keys [][2]string, consistent bool) ([]*catalog.Capability, error) {
	items, err := s.batchGetWith(ctx, keys, consistent)
	if err != nil {
		return nil, fmt.Errorf("get capabilities: %w", err)
	}
	caps := make([]*catalog.Capability, len(items))
	for i, it := range items {
		if it == nil || it.Deleting {
			continue
		}
		if caps[i], err = toCapability(it); err != nil {
			return nil, err
		}
	}
	return caps, nil
}

// capabilityPage is a page of capabilities from index items (page), answered from the memo
// while the engine is unchanged.
func (s *Store) capabilityPage(ctx context.Context, scope string, q query, first int, after string) (*Page[*catalog.Capability], error) {
	if s.memo == nil {
		return page(s, ctx, scope, q, first, after, toCapability)
	}
	g, k := s.memo.now(), pageKey{scope: scope, first: first, after: after, index: true}
	if p := s.memo.page(g, k); p != nil {
		return p, nil
	}
	p, err := page(s, ctx, scope, q, first, after, toCapability)
	if err == nil {
		s.memo.keepPage(g, k, p)
	}
	return p, err
}

func checkFirst(first, limit int) error {
	if first < 1 || first > limit {
		return catalog.Invalid("first", "must be between 1 and %d, got %d", limit, first)
	}
	return nil
}

// MaxPage is the largest page of a connection; MaxMetricsPage that of a metrics connection.
const (
	MaxPage        = 100
	MaxMetricsPage = 1000
)

// Capabilities lists capabilities from the CAPABILITIES index, ordered by domain, priority and
// name, optionally only those of one business domain.
func (s *Store) Capabilities(ctx context.Context, domain string, first int, after string) (*Page[*catalog.Capability], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	q := query{index: true, pk: capabilitiesPK}
	if domain != "" {
		if err := ValidateID("domain", domain); err != nil {
			return nil, err
		}
		q.lo, q.hi = domain+"#", domain+rangeEnd
	}
	return s.capabilityPage(ctx, "capabilities|"+domain, q, first, after)
}

// CapabilitiesByDomain lists a business domain's capabilities from its DOMAIN# index items,
// ordered by priority and name.
func (s *Store) CapabilitiesByDomain(ctx context.Context, domain string, first int, after string) (*Page[*catalog.Capability], error) {
	if err := ValidateID("domain", domain); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	return s.capabilityPage(ctx, "domain|"+domain, query{index: true, pk: domainPK(domain)}, first, after)
}

// CapabilitiesByHealth lists the capabilities in one health status from their HEALTH# index
// items, lowest score first.
func (s *Store) CapabilitiesByHealth(ctx context.Context, status catalog.HealthStatus, first int, after string) (*Page[*catalog.Capability], error) {
	if !status.Valid() {
		return nil, catalog.Invalid("status", "%q is not a health status", status)
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	return s.capabilityPage(ctx, "health|"+string(status), query{index: true, pk: healthPK(status)}, first, after)
}

// ComponentsByType lists the components of one type across all capabilities, ordered by
// capability and component ID.
func (s *Store) ComponentsByType(ctx context.Context, componentType string, first int, after string) (*Page[*catalog.Component], error) {
	if err := ValidateID("type", componentType); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	return page(s, ctx, "type|"+componentType, query{index: true, pk: componentTypePK(componentType)}, first, after, toComponent)
}

// JobByID returns the job with the given ID from its JOB# index entry. It returns ErrNotFound if
// none exists.
func (s *Store) JobByID(ctx context.Context, jobID string) (*catalog.Job, error) {
	if err := ValidateID("id", jobID); err != nil {
		return nil, err
	}
	items, _, err := s.run(ctx, query{index: true, pk: jobPK(jobID), want: 1})
	if err != nil {
		return nil, fmt.Errorf("get job %s: %w", jobID, err)
	}
	if len(items) == 0 {
		return nil, catalog.Missing(catalog.EntityJob, jobID, ErrNotFound)
	}
	return toJob(items[0])
}

// JobFilter narrows a capability's job history.
type JobFilter struct {
	Status  catalog.JobStatus
	JobType catalog.JobType
}

// Jobs returns a capability's jobs, newest first, reading only the JOB# segment window asked for.
func (s *Store) Jobs(ctx context.Context, capabilityID string, f JobFilter, first int, after string) (*Page[*catalog.Job], error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	q := query{pk: capabilityPK(capabilityID), lo: jobPrefix, hi: prefixEnd(jobPrefix), reverse: true}
	var conds []string
	if f.Status != "" {
		conds = append(conds, "#d.#st = :st")
		q.addName("#st", "status").addValue(":st", string(f.Status))
	}
	if f.JobType != "" {
		conds = append(conds, "#d.#jt = :jt")
		q.addName("#jt", "jobType").addValue(":jt", string(f.JobType))
	}
	if len(conds) > 0 {
		q.addName("#d", attrData)
		q.filter = strings.Join(conds, " AND ")
	}
	scope := fmt.Sprintf("jobs|%s|%s|%s", capabilityID, f.Status, f.JobType)
	return memoizedBytes(s, pageKey{scope: scope, first: first, after: after}, func() (*Page[*catalog.Job], error) {
		return page(s, ctx, scope, q, first, after, toJob)
	})
}

func (q *query) addName(k, v string) *query {
	if q.names == nil {
		q.names = map[string]string{}
	}
	q.names[k] = v
	return q
}

func (q *query) addValue(k, v string) *query {
	if q.values == nil {
		q.values = map[string]types.AttributeValue{}
	}
	q.values[k] = &types.AttributeValueMemberS{Value: v}
	return q
}

// MetricFilter narrows a metrics window. From and To are inclusive; nil is open.
type MetricFilter struct {
	ComponentID string
	MetricType  catalog.MetricType
	From, To    *time.Time
}

func (f MetricFilter) bounds() (lo, hi string) {
	lo, hi = "0", "9"
	if f.From != nil {
		lo = keyTime(*f.From)
	}
	if f.To != nil {
		hi = keyTime(*f.To)
	}
	return lo, hi
}

func (f MetricFilter) validate() error {
	if f.ComponentID != "" {
		if err := ValidateID("componentId", f.ComponentID); err != nil {
			return err
		}
	}
	if f.MetricType != "" && !f.MetricType.Valid() {
		return catalog.Invalid("metricType", "%q is not a metric type", f.MetricType)
	}
	if f.From != nil && f.To != nil && f.To.Before(*f.From) {
		return catalog.Invalid("to", "must not be before from")
	}
	return nil
}

// Metrics returns a window of a capability's metrics in sort-key order (component, type, time),
// skipping expired items. With a component and a metric type the window is a key range and reads
// nothing outside it; otherwise the time bounds are applied as a filter within the component's
// (or the capability's) METRIC# range.
func (s *Store) Metrics(ctx context.Context, capabilityID string, f MetricFilter, first int, after string) (*Page[*catalog.Metric], error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxMetricsPage); err != nil {
		return nil, err
	}
	lo, hi := f.bounds()
	scope := fmt.Sprintf("metrics|%s|%s|%s|%s|%s", capabilityID, f.ComponentID, f.MetricType, lo, hi)
	if f.ComponentID == "" && (f.From != nil || f.To != nil) {
		return s.metricsByComponent(ctx, capabilityID, f, first, after, scope)
	}
	q := query{pk: capabilityPK(capabilityID), now: s.now()}
	switch {
	case f.ComponentID != "" && f.MetricType != "":
		p := metricTypePrefix(f.ComponentID, f.MetricType)
		q.lo, q.hi = p+lo, p+hi
	default:
		p := metricPrefix
		if f.ComponentID != "" {
			p = metricComponentPrefix(f.ComponentID)
		}
		q.lo, q.hi = p, prefixEnd(p)
		var conds []string
		if f.MetricType != "" {
			conds = append(conds, "#d.#mt = :mt")
			q.addName("#mt", "metricType").addValue(":mt", string(f.MetricType))
		}
		if f.From != nil || f.To != nil {
			// Two comparisons rather than BETWEEN: minidyn only parses BETWEEN on a top-level
			// attribute, and this path is nested.
			conds = append(conds, "#d.#ts >= :from AND #d.#ts <= :to")
			q.addName("#ts", "timestamp").addValue(":from", lo).addValue(":to", hi)
		}
		if len(conds) > 0 {
			q.addName("#d", attrData)
			q.filter = strings.Join(conds, " AND ")
		}
	}
	return page(s, ctx, scope, q, first, after, toMetric)
}

// metricsByComponent answers a capability-wide time window without filtering the metric
// history: it reads the capability's components (one Query), then the window of each
// (component, metric type) pair at once, each a key range, and merges them in sort-key order.
// That is 2 round trips and at most first+1 items read per pair, whatever the size of the
// history; without a metric type every type is a pair.
func (s *Store) metricsByComponent(ctx context.Context, capabilityID string, f MetricFilter, first int, after, scope string) (*Page[*catalog.Metric], error) {
	pk := capabilityPK(capabilityID)
	start, err := s.decodeCursor(scope, query{pk: pk}, after)
	if err != nil {
		return nil, err
	}
	var resume [2]string // the cursor's component and metric type
	if start != nil {
		c, mt, _, err := parseMetricSK(str(start[attrSK]))
		if err != nil {
			return nil, catalog.Invalid("after", "cursor is not valid for this query")
		}
		resume = [2]string{c, string(mt)}
	}
	part, err := s.ReadRange(ctx, capabilityID, SegComponents, Fields{Components: []string{}}) // the IDs only
	if err != nil {
		return nil, err
	}
	types := []string{string(f.MetricType)}
	if f.MetricType == "" {
		types = types[:0]
		for _, t := range catalog.MetricTypes {
			types = append(types, string(t))
		}
	}
	var pairs [][2]string
	seen := map[[2]string]bool{}
	for _, c := range part.Components {
		for _, t := range types {
			pairs = append(pairs, [2]string{c.ComponentID, t})
			seen[[2]string{c.ComponentID, t}] = true
		}
	}
	if start != nil && !seen[resume] {
		pairs = append(pairs, resume) // a component removed since: finish its window
	}
	// Sort-key order, and nothing before the cursor.
	slices.SortFunc(pairs, func(a, b [2]string) int {
		return strings.Compare(metricTypePrefix(a[0], catalog.MetricType(a[1])), metricTypePrefix(b[0], catalog.MetricType(b[1])))
	})
	if start != nil {
		from := metricTypePrefix(resume[0], catalog.MetricType(resume[1]))
		pairs = slices.DeleteFunc(pairs, func(p [2]string) bool { return metricTypePrefix(p[0], catalog.MetricType(p[1])) < from })
	}
	lo, hi := f.bounds()
	results := make([][]*item, len(pairs))
	more := make([]bool, len(pairs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(maxConcurrentReads)
	for i, pr := range pairs {
		p := metricTypePrefix(pr[0], catalog.MetricType(pr[1]))
		q := query{pk: pk, lo: p + lo, hi: p + hi, now: s.now(), want: first}
		if pr == resume {
			q.start = start
		}
		g.Go(func() (err error) {
			results[i], more[i], err = s.run(gctx, q)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("read metrics of %s: %w", capabilityID, err)
	}
	var all []*item
	hasNext := false
	for i := range pairs {
		all = append(all, results[i]...)
		hasNext = hasNext || more[i]
	}
	if len(all) > first {
		all, hasNext = all[:first], true
	}
	p := &Page[*catalog.Metric]{Items: make([]*catalog.Metric, 0, len(all)), Cursors: make([]string, 0, len(all)), HasNext: hasNext}
	for _, it := range all {
		m, err := toMetric(it)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, m)
		p.Cursors = append(p.Cursors, s.encodeCursor(scope, false, it))
	}
	return p, nil
}

// maxConcurrentReads bounds the queries one read runs at once (a capability's components times
// the five metric types fit in one wave).
const maxConcurrentReads = 64

// ComponentMetrics returns one component's metrics of every type in time order from its METRICS#
// index partition, the time window being a key range, skipping expired items.
func (s *Store) ComponentMetrics(ctx context.Context, f MetricFilter, first int, after string) (*Page[*catalog.Metric], error) {
	if f.ComponentID == "" {
		return nil, catalog.Invalid("componentId", "is required")
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxMetricsPage); err != nil {
		return nil, err
	}
	lo, hi := f.bounds()
	q := query{index: true, pk: metricsPK(f.ComponentID), lo: lo, hi: hi, now: s.now()}
	if f.MetricType != "" {
		q.addName("#d", attrData).addName("#mt", "metricType").addValue(":mt", string(f.MetricType))
		q.filter = "#d.#mt = :mt"
	}
	scope := fmt.Sprintf("componentMetrics|%s|%s|%s|%s", f.ComponentID, f.MetricType, lo, hi)
	return page(s, ctx, scope, q, first, after, toMetric)
}

// ComponentOwner returns the ID of the capability whose component has componentID, read from
// the ID's claim with one GetItem. It returns ErrNotFound when no capability holds the ID.
func (s *Store) ComponentOwner(ctx context.Context, componentID string) (string, error) {
	if err := ValidateID("componentId", componentID); err != nil {
		return "", err
	}
	it, err := s.readItem(ctx, claimPK(componentID), claimSK, false)
	if IsNotFound(err) {
		return "", catalog.Missing(catalog.EntityComponent, componentID, err)
	}
	if err != nil {
		return "", fmt.Errorf("owner of component %s: %w", componentID, err)
	}
	return str(it.Data["capabilityId"]), nil
}

// IsNotFound reports whether err means a missing item.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }
