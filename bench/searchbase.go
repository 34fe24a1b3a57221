package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// The baselines of the search section.
//
// Scan-and-filter: what a team without indexes would do. A DynamoDB Scan of the table with a
// FilterExpression (the entity type, and whatever an expression can say of the filter: domain,
// status, priority, health, a tag), the rest (search words, folded owners) matched in code,
// paging with ExclusiveStartKey until the page of matches is full or the table ends. It builds
// no key: it filters on the item envelope's EntityType and the entity's data (the seed's field
// names under Data), and pages with the LastEvaluatedKey the Scan returned.
//
// Per-field (AppSync style): Query.capabilities is one resolver that lists an existing index
// through the exported dynamo.Store reads (DOMAIN#, HEALTH# or CAPABILITIES, 100 a page, one
// page after another) and filters and sorts in code; an owner filter also reads each
// candidate's components (one Query each), as a components field resolver would.

// Entity types of the item envelope, as dynamo writes them (item.go): the filter of every Scan.
const (
	scanEntityCapability = "Capability"
	scanEntityComponent  = "SoftwareComponent"
	scanEntityJob        = "ImplementationJob"
)

// scanItem is what the Scan baseline decodes of an item: the envelope's entity type and the
// fields of the entity's data it filters on.
type scanItem struct {
	EntityType string
	Data       struct {
		CapabilityID   string                        `json:"capabilityId"`
		Name           string                        `json:"name"`
		BusinessDomain string                        `json:"businessDomain"`
		Status         string                        `json:"status"`
		Priority       catalog.Priority              `json:"priority"`
		Owner          string                        `json:"owner"`
		Tags           []string                      `json:"tags"`
		Aggregates     struct{ HealthStatus string } `json:"aggregates"`
		Ownership      *struct{ Team string }        `json:"ownership"`
		JobID          string                        `json:"jobId"`
	}
}

// capability returns the item as a capability bundle (without components) for capFilter.matches.
func (it *scanItem) capability() *catalog.Bundle {
	d := it.Data
	c := &catalog.Capability{CapabilityID: d.CapabilityID, Name: d.Name, BusinessDomain: d.BusinessDomain,
		Status: catalog.CapabilityStatus(d.Status), Priority: d.Priority, Owner: d.Owner, Tags: d.Tags}
	c.Aggregates.HealthStatus = catalog.HealthStatus(d.Aggregates.HealthStatus)
	return &catalog.Bundle{Capability: c}
}

// scanProjection are the fields of Data the Scan baseline reads (scanItem's; whole maps, as
// memdyn projects paths of two names at most).
var scanProjection = []string{"capabilityId", "name", "businessDomain", "status", "priority", "owner", "tags",
	"aggregates", "ownership", "jobId"}

// scanSpec is the Scan-and-filter baseline of one shape.
type scanSpec struct {
	Whole  bool // read the whole table (an ordered page, a count); else stop at Want matches
	Want   int
	Expr   string
	Names  map[string]string
	Values map[string]types.AttributeValue
	// Match returns the ID an item counts for and whether it matches; nil counts nothing.
	Match func(it *scanItem) (string, bool)
	// Truth is the brute-force set of matching IDs and Total its size.
	Truth map[string]bool
	Total int
}

// check compares what the Scan matched with the brute force: a full page of true matches, or
// every match when it read the whole table.
func (s scanSpec) check(matched []string) error {
	if s.Match == nil {
		return nil
	}
	want := s.Total
	if !s.Whole {
		want = min(s.Want, s.Total)
	}
	if len(matched) != want {
		return fmt.Errorf("matched %d, the brute force %d", len(matched), want)
	}
	for _, id := range matched {
		if !s.Truth[id] {
			return fmt.Errorf("matched %s, which the brute force does not", id)
		}
	}
	return nil
}

// scanFilter builds a Scan's FilterExpression for a capability filter: the entity type, then
// each filter an expression can state (domains, statuses, priorities, health statuses, tags;
// tags are stored lower case as the generator writes them). Search and owner are left to code.
func scanFilter(f capFilter) (string, map[string]string, map[string]types.AttributeValue) {
	names := map[string]string{"#E": "EntityType", "#D": "Data"}
	values := map[string]types.AttributeValue{":cap": &types.AttributeValueMemberS{Value: scanEntityCapability}}
	parts := []string{"#E = :cap"}
	in := func(path, prefix string, vals []string) {
		var ks []string
		for i, v := range vals {
			k := fmt.Sprintf(":%s%d", prefix, i)
			values[k] = &types.AttributeValueMemberS{Value: v}
			ks = append(ks, k)
		}
		parts = append(parts, path+" IN ("+strings.Join(ks, ", ")+")")
	}
	if len(f.Domains) > 0 {
		names["#dom"] = "businessDomain"
		in("#D.#dom", "d", f.Domains)
	}
	if len(f.Statuses) > 0 {
		names["#st"] = "status"
		in("#D.#st", "s", mapSlice(f.Statuses, func(s catalog.CapabilityStatus) string { return string(s) }))
	}
	if len(f.Priorities) > 0 {
		names["#pr"] = "priority"
		in("#D.#pr", "p", mapSlice(f.Priorities, func(s catalog.Priority) string { return string(s) }))
	}
	if len(f.HealthStatuses) > 0 {
		names["#ag"], names["#hs"] = "aggregates", "healthStatus"
		in("#D.#ag.#hs", "h", mapSlice(f.HealthStatuses, func(s catalog.HealthStatus) string { return string(s) }))
	}
	for i, t := range f.Tags {
		names["#tags"] = "tags"
		k := fmt.Sprintf(":t%d", i)
		values[k] = &types.AttributeValueMemberS{Value: strings.ToLower(t)}
		parts = append(parts, "contains(#D.#tags, "+k+")")
	}
	expr := strings.Join(parts, " AND ")
	if !strings.Contains(expr, "#D.") {
		delete(names, "#D") // DynamoDB refuses a name the expression does not use
	}
	if f.Owner != "" {
		// A component's team owns its capability too: components are read as well.
		values[":comp"] = &types.AttributeValueMemberS{Value: scanEntityComponent}
		expr = "(" + expr + ") OR #E = :comp"
	}
	return expr, names, values
}

// capScan is the Scan baseline of capabilities(filter: f): want matches (0: the whole table).
func capScan(bundles []*catalog.Bundle, f capFilter, want int) scanSpec {
	expr, names, values := scanFilter(f)
	truth := map[string]bool{}
	for _, b := range bundles {
		if f.matches(b) {
			truth[b.Capability.CapabilityID] = true
		}
	}
	owner := catalog.Fold(f.Owner)
	return scanSpec{
		Whole: want == 0, Want: want, Expr: expr, Names: names, Values: values, Truth: truth, Total: len(truth),
		Match: func(it *scanItem) (string, bool) {
			switch it.EntityType {
			case scanEntityCapability:
				b := it.capability()
				if f.Owner == "" {
					return b.Capability.CapabilityID, f.matches(b)
				}
				// The owner filter alone (the shapes never combine it): the capability's owner.
				return b.Capability.CapabilityID, catalog.Fold(b.Capability.Owner) == owner
			case scanEntityComponent:
				o := it.Data.Ownership
				return it.Data.CapabilityID, o != nil && catalog.Fold(o.Team) == owner
			}
			return "", false
		},
	}
}

// apply returns the IDs the spec matches among items read by a whole-table Scan, in order,
// after its FilterExpression's entity type (the whole-table specs filter on nothing else an
// expression states that Match does not check again).
func (s scanSpec) apply(items []*scanItem) []string {
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		if id, ok := s.Match(it); ok && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// wholeScan reads the whole table baseN times and keeps what the last run read of
// capabilities, components and jobs, for the shapes that need the whole table.
func (h *searchHarness) wholeScan(ctx context.Context) (*searchStats, error) {
	var items []*scanItem
	spec := scanSpec{Whole: true, Match: func(it *scanItem) (string, bool) {
		switch it.EntityType {
		case scanEntityCapability, scanEntityComponent, scanEntityJob:
			items = append(items, it)
		}
		return "", false
	}}
	var lats []time.Duration
	st := &searchStats{}
	for range max(h.cfg.search.baseN, 1) {
		items = items[:0]
		start := time.Now()
		reqs, n, rcu, _, err := h.scan(ctx, spec)
		if err != nil {
			return nil, fmt.Errorf("whole-table Scan: %w", err)
		}
		lats = append(lats, time.Since(start))
		st.Requests, st.Depth, st.Items, st.RCU = reqs, reqs, n, rcu
	}
	st.P50, st.Runs = percentile(lats, 0.5), len(lats)
	h.whole, h.wholeStats = items, st
	h.logf("search: the whole-table Scan: %s", statsLine(st))
	return st, nil
}

// scanPass runs the Scan baseline baseN times at concurrency 1 and returns its figures and what
// the last run matched, in the order found.
func (h *searchHarness) scanPass(ctx context.Context, spec scanSpec) (*searchStats, []string, error) {
	var lats []time.Duration
	var matched []string
	st := &searchStats{}
	for range max(h.cfg.search.baseN, 1) {
		start := time.Now()
		reqs, items, rcu, m, err := h.scan(ctx, spec)
		if err != nil {
			return nil, nil, err
		}
		lats = append(lats, time.Since(start))
		st.Requests, st.Depth, st.Items, st.RCU, matched = reqs, reqs, items, rcu, m
	}
	st.P50, st.Runs = percentile(lats, 0.5), len(lats)
	return st, matched, nil
}

// scan is one run: Scan pages one after another (each needs the last one's LastEvaluatedKey)
// until the matches are enough or the table ends.
func (h *searchHarness) scan(ctx context.Context, spec scanSpec) (requests, items int, rcu float64, matched []string, err error) {
	seen := map[string]bool{}
	in := &dynamodb.ScanInput{TableName: aws.String(h.store.Table()), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	names := map[string]string{}
	for k, v := range spec.Names {
		names[k] = v
	}
	if spec.Expr != "" {
		in.FilterExpression, in.ExpressionAttributeValues = aws.String(spec.Expr), spec.Values
	}
	if spec.Match != nil {
		// Only the attributes the match needs come back (a Scan's read capacity is that of the
		// items scanned all the same).
		names["#E"], names["#D"] = "EntityType", "Data"
		paths := []string{"#E"}
		for i, f := range scanProjection {
			k := fmt.Sprintf("#p%d", i)
			names[k] = f
			paths = append(paths, "#D."+k)
		}
		in.ProjectionExpression = aws.String(strings.Join(paths, ", "))
	}
	if len(names) > 0 {
		in.ExpressionAttributeNames = names
	}
	for {
		out, err := h.db.Scan(ctx, in)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		requests++
		items += int(out.ScannedCount)
		if c := out.ConsumedCapacity; c != nil {
			rcu += aws.ToFloat64(c.CapacityUnits)
		}
		if spec.Match != nil {
			for _, raw := range out.Items {
				var it scanItem
				if err := attributevalue.UnmarshalMapWithOptions(raw, &it, func(o *attributevalue.DecoderOptions) { o.TagKey = "json" }); err != nil {
					return 0, 0, 0, nil, fmt.Errorf("decode a scanned item: %w", err)
				}
				if id, ok := spec.Match(&it); ok && !seen[id] && (spec.Whole || len(matched) < spec.Want) {
					seen[id] = true
					matched = append(matched, id)
				}
			}
		}
		if len(out.LastEvaluatedKey) == 0 || (!spec.Whole && len(matched) >= spec.Want) {
			return requests, items, rcu, matched, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// perFieldRunner runs the per-field baseline within one context.
type perFieldRunner struct {
	ctx context.Context
	st  *dynamo.Store
}

// perFieldFanout bounds the component reads of an owner filter in flight at once.
const perFieldFanout = 100

// capabilities is the Query.capabilities resolver of a team with the seed's indexes only: it
// reads every capability of the narrowest index range (one domain, one health status, or the
// whole CAPABILITIES index), page after page, then filters (for an owner, reading the
// components of every candidate the capability's own owner does not match) and sorts in code.
func (p *perFieldRunner) capabilities(f capFilter, o capOrder, offset, n int) (capsAnswer, error) {
	list := func(after string) (*dynamo.Page[*catalog.Capability], error) {
		switch {
		case len(f.Domains) == 1:
			return p.st.CapabilitiesByDomain(p.ctx, f.Domains[0], dynamo.MaxPage, after)
		case len(f.HealthStatuses) == 1:
			return p.st.CapabilitiesByHealth(p.ctx, f.HealthStatuses[0], dynamo.MaxPage, after)
		}
		return p.st.Capabilities(p.ctx, "", dynamo.MaxPage, after)
	}
	var bundles []*catalog.Bundle
	after := ""
	for {
		page, err := list(after)
		if err != nil {
			return capsAnswer{}, err
		}
		for _, c := range page.Items {
			bundles = append(bundles, &catalog.Bundle{Capability: c})
		}
		if !page.HasNext {
			break
		}
		after = page.Cursors[len(page.Cursors)-1]
	}
	if f.Owner != "" {
		owner := catalog.Fold(f.Owner)
		var g errgroup.Group
		g.SetLimit(perFieldFanout)
		for _, b := range bundles {
			if catalog.Fold(b.Capability.Owner) == owner {
				continue
			}
			g.Go(func() error {
				part, err := p.st.ReadRange(p.ctx, b.Capability.CapabilityID, dynamo.SegComponents, dynamo.Fields{})
				if err == nil {
					b.Components = part.Components
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return capsAnswer{}, err
		}
	}
	return truthCapabilities(bundles, f, o, offset, n), nil
}
