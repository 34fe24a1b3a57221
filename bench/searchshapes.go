package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// The shapes of the search section, each with its brute-force answer.

const searchListQuery = `query Find($filter: CapabilityFilter, $orderBy: CapabilityOrder, $after: String) {
  capabilities(filter: $filter, orderBy: $orderBy, first: 50, after: $after) {
    nodes { capabilityId name businessDomain status priority owner tags aggregates { healthScore healthStatus } }
    pageInfo { hasNextPage endCursor }
  }
}`

const searchCountQuery = `query Count($filter: CapabilityFilter) {
  capabilities(filter: $filter) { totalCount }
}`

const searchSummaryQuery = `query Summary {
  catalogueSummary {
    capabilityCount componentCount activeJobs meanHealthScore
    byDomain { domain count } byStatus { status count } byPriority { priority count }
    byHealthStatus { status count } componentsByType { type count }
    componentsByHealthStatus { status count } activeJobsByType { jobType count }
  }
}`

const searchActiveJobsQuery = `query Active {
  activeJobs(first: 50) { nodes { jobId capabilityId jobType status startTime } pageInfo { hasNextPage } }
}`

const searchOwnerQuery = `query Owner($name: String!) {
  owner(name: $name) {
    name capabilityCount componentCount
    capabilities(first: 50) { nodes { capabilityId name } pageInfo { hasNextPage } }
  }
}`

// pageString is how a page of capabilities (or jobs) is compared: its IDs in order and
// hasNextPage.
func pageString(ids []string, hasNext bool) string {
	return fmt.Sprintf("%d nodes [%s] hasNextPage=%v", len(ids), strings.Join(ids, " "), hasNext)
}

func totalString(n int) string { return fmt.Sprintf("totalCount=%d", n) }

func capVars(f capFilter, o capOrder) map[string]any {
	v := map[string]any{}
	if fv := f.vars(); fv != nil {
		v["filter"] = fv
	}
	if ov := o.vars(); ov != nil {
		v["orderBy"] = ov
	}
	return v
}

// pageShape is a page of capabilities(filter: f, orderBy: o), the first (offset 0) or the
// second (offset 50, Page2).
func pageShape(bundles []*catalog.Bundle, name string, f capFilter, o capOrder, page2 bool, needs string) *searchShape {
	offset := 0
	if page2 {
		offset = 50
	}
	want := truthCapabilities(bundles, f, o, offset, 50)
	scan := capScan(bundles, f, offset+50)
	if o.Field != "" {
		scan = capScan(bundles, f, 0) // an order over the whole catalogue: nothing to stop at
	}
	return &searchShape{
		Name: name, Query: searchListQuery, Vars: capVars(f, o), Page2: page2, Matches: want.Total,
		Want: pageString(want.IDs, want.HasNext),
		Check: func(data json.RawMessage) (string, bool, error) {
			var d struct {
				Capabilities struct {
					Nodes    []struct{ CapabilityID string }
					PageInfo struct{ HasNextPage bool }
				}
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return "", false, err
			}
			ids := mapSlice(d.Capabilities.Nodes, func(n struct{ CapabilityID string }) string { return n.CapabilityID })
			got := pageString(ids, d.Capabilities.PageInfo.HasNextPage)
			return got, got == pageString(want.IDs, want.HasNext), nil
		},
		Scan: scan,
		PerField: func(p *perFieldRunner) (string, error) {
			a, err := p.capabilities(f, o, offset, 50)
			return pageString(a.IDs, a.HasNext), err
		},
		Needs: needs,
	}
}

// countShape is capabilities(filter: f) { totalCount }.
func countShape(bundles []*catalog.Bundle, name string, f capFilter, needs string) *searchShape {
	want := truthCapabilities(bundles, f, capOrder{}, 0, 0)
	return &searchShape{
		Name: name, Query: searchCountQuery, Vars: capVars(f, capOrder{}), Matches: want.Total,
		Want: totalString(want.Total),
		Check: func(data json.RawMessage) (string, bool, error) {
			var d struct{ Capabilities struct{ TotalCount int } }
			if err := json.Unmarshal(data, &d); err != nil {
				return "", false, err
			}
			return totalString(d.Capabilities.TotalCount), d.Capabilities.TotalCount == want.Total, nil
		},
		Scan: capScan(bundles, f, 0),
		PerField: func(p *perFieldRunner) (string, error) {
			a, err := p.capabilities(f, capOrder{}, 0, 0)
			return totalString(a.Total), err
		},
		Needs: needs,
	}
}

// summaryShape is catalogueSummary.
func summaryShape(bundles []*catalog.Bundle) *searchShape {
	want := truthSummary(bundles)
	truth := map[string]bool{}
	for _, b := range bundles {
		truth[b.Capability.CapabilityID] = true
	}
	return &searchShape{
		Name: "catalogueSummary", Query: searchSummaryQuery, Matches: want.CapabilityCount, Want: want.String(),
		Check: func(data json.RawMessage) (string, bool, error) {
			var d struct {
				CatalogueSummary struct {
					CapabilityCount, ComponentCount, ActiveJobs int
					MeanHealthScore                             *float64
					ByDomain                                    []struct {
						Domain string
						Count  int
					}
					ByStatus, ByHealthStatus, ComponentsByHealthStatus []struct {
						Status string
						Count  int
					}
					ByPriority []struct {
						Priority string
						Count    int
					}
					ComponentsByType []struct {
						Type  string
						Count int
					}
					ActiveJobsByType []struct {
						JobType string
						Count   int
					}
				}
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return "", false, err
			}
			s := d.CatalogueSummary
			got := summaryAnswer{CapabilityCount: s.CapabilityCount, ComponentCount: s.ComponentCount, ActiveJobs: s.ActiveJobs, MeanHealthScore: s.MeanHealthScore}
			for _, x := range s.ByDomain {
				got.ByDomain = append(got.ByDomain, kv(x.Domain, x.Count))
			}
			for _, x := range s.ByStatus {
				got.ByStatus = append(got.ByStatus, kv(x.Status, x.Count))
			}
			for _, x := range s.ByPriority {
				got.ByPriority = append(got.ByPriority, kv(x.Priority, x.Count))
			}
			for _, x := range s.ByHealthStatus {
				got.ByHealth = append(got.ByHealth, kv(x.Status, x.Count))
			}
			for _, x := range s.ComponentsByType {
				got.ComponentsByType = append(got.ComponentsByType, kv(x.Type, x.Count))
			}
			for _, x := range s.ComponentsByHealthStatus {
				got.ComponentsByHealth = append(got.ComponentsByHealth, kv(x.Status, x.Count))
			}
			for _, x := range s.ActiveJobsByType {
				got.ActiveJobsByType = append(got.ActiveJobsByType, kv(x.JobType, x.Count))
			}
			return got.String(), got.equal(want), nil
		},
		Scan: scanSpec{Whole: true, Truth: truth, Total: len(truth), Match: func(it *scanItem) (string, bool) {
			return it.Data.CapabilityID, it.EntityType == scanEntityCapability
		}},
		Needs: "Without counters: every capability, component and job (the whole table).",
	}
}

// activeJobsShape is activeJobs(first: 50).
func activeJobsShape(bundles []*catalog.Bundle) *searchShape {
	want := truthActiveJobs(bundles, 50)
	all := truthActiveJobs(bundles, len(bundles)+1)
	return &searchShape{
		Name: "activeJobs", Query: searchActiveJobsQuery, Matches: want.Total, Want: pageString(want.IDs, want.HasNext),
		Check: func(data json.RawMessage) (string, bool, error) {
			var d struct {
				ActiveJobs struct {
					Nodes    []struct{ JobID string }
					PageInfo struct{ HasNextPage bool }
				}
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return "", false, err
			}
			got := pageString(mapSlice(d.ActiveJobs.Nodes, func(n struct{ JobID string }) string { return n.JobID }), d.ActiveJobs.PageInfo.HasNextPage)
			return got, got == pageString(want.IDs, want.HasNext), nil
		},
		Scan: scanSpec{
			Whole: true, Truth: idSet(all.IDs), Total: all.Total,
			Expr:  "#E = :job AND #D.#st IN (:p, :r)",
			Names: map[string]string{"#E": "EntityType", "#D": "Data", "#st": "status"},
			Values: map[string]types.AttributeValue{":job": &types.AttributeValueMemberS{Value: scanEntityJob},
				":p": &types.AttributeValueMemberS{Value: string(catalog.JobPending)}, ":r": &types.AttributeValueMemberS{Value: string(catalog.JobRunning)}},
			Match: func(it *scanItem) (string, bool) {
				st := catalog.JobStatus(it.Data.Status)
				return it.Data.JobID, it.EntityType == scanEntityJob && (st == catalog.JobPending || st == catalog.JobRunning)
			},
		},
		Needs: "Without an index: every job (oldest first over the whole catalogue: the whole table).",
	}
}

// ownerShape is owner(name) with its first page of capabilities.
func ownerShape(bundles []*catalog.Bundle, name string) *searchShape {
	want := truthOwner(bundles, name, 50)
	f := capFilter{Owner: name}
	return &searchShape{
		Name: "owner(name)", Query: searchOwnerQuery, Vars: map[string]any{"name": name}, Matches: want.CapabilityCount, Want: want.String(),
		Check: func(data json.RawMessage) (string, bool, error) {
			var d struct {
				Owner *struct {
					Name                            string
					CapabilityCount, ComponentCount int
					Capabilities                    struct {
						Nodes    []struct{ CapabilityID string }
						PageInfo struct{ HasNextPage bool }
					}
				}
			}
			if err := json.Unmarshal(data, &d); err != nil {
				return "", false, err
			}
			if d.Owner == nil {
				return "owner=null", false, nil
			}
			o := d.Owner
			got := ownerAnswer{Name: o.Name, CapabilityCount: o.CapabilityCount, ComponentCount: o.ComponentCount,
				Capabilities:         mapSlice(o.Capabilities.Nodes, func(n struct{ CapabilityID string }) string { return n.CapabilityID }),
				CapabilitiesNextPage: o.Capabilities.PageInfo.HasNextPage}
			return got.String(), got.String() == want.String(), nil
		},
		Scan:  capScan(bundles, f, 0),
		Needs: "Without an owner index: every capability and component (its counts: the whole table).",
	}
}

// idSet returns the IDs as a set.
func idSet(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// searchShapes are the measured shapes, on the generated catalogue.
func searchShapes(bundles []*catalog.Bundle) []*searchShape {
	var (
		none    = capOrder{}
		orderBy = func(field string, desc bool) capOrder { return capOrder{Field: field, Desc: desc} }
	)
	filtered := "A filter without a matching index: every capability, filtered (a Scan can stop at 50 matches in table order; name order needs them all)."
	return []*searchShape{
		pageShape(bundles, "search \"alert man\"", capFilter{Search: "alert man"}, none, false,
			"Two words, each the prefix of a word of the name, ID, tags or owner; relevance order."),
		pageShape(bundles, "search \"s\"", capFilter{Search: "s"}, none, false,
			"One letter: thousands of matches; relevance order."),
		pageShape(bundles, "search \"s\", page 2", capFilter{Search: "s"}, none, true,
			"The page after the first (with `after`)."),
		pageShape(bundles, "domain", capFilter{Domains: []string{"security"}}, none, false, filtered),
		pageShape(bundles, "status", capFilter{Statuses: []catalog.CapabilityStatus{catalog.CapabilityDeprecated}}, none, false, filtered),
		pageShape(bundles, "tag", capFilter{Tags: []string{"core"}}, none, false, filtered),
		pageShape(bundles, "owner (folded: \"Équipe Blue Heron\")", capFilter{Owner: "Équipe Blue Heron"}, none, false,
			"The capability's owner or one of its components' team, case- and accent-insensitively."),
		pageShape(bundles, "domain + status", capFilter{Domains: []string{"payments"}, Statuses: []catalog.CapabilityStatus{catalog.CapabilityActive}}, none, false, filtered),
		pageShape(bundles, "tag + health", capFilter{Tags: []string{"pci"}, HealthStatuses: []catalog.HealthStatus{catalog.HealthDegraded}}, none, false, filtered),
		pageShape(bundles, "several domains", capFilter{Domains: []string{"security", "risk", "identity"}}, none, false,
			"Three domains: their ranges merged in name order (they were filtered from every name)."),
		pageShape(bundles, "status + priority", capFilter{Statuses: []catalog.CapabilityStatus{catalog.CapabilityActive}, Priorities: []catalog.Priority{catalog.PriorityCritical}}, none, false,
			"Two counted filters: the smaller counted range drives (the status's, by the fixed order before)."),
		pageShape(bundles, "domain, by HEALTH_SCORE desc", capFilter{Domains: []string{"risk"}}, orderBy("HEALTH_SCORE", true), false,
			"An order over the domain's capabilities."),
		pageShape(bundles, "everything, by NAME", capFilter{}, orderBy("NAME", false), false,
			"An order over the whole catalogue."),
		countShape(bundles, "totalCount, no filter", capFilter{}, "Every capability: the sharded counters answer it (one BatchGetItem)."),
		countShape(bundles, "totalCount, status + tag", capFilter{Statuses: []catalog.CapabilityStatus{catalog.CapabilityActive}, Tags: []string{"pci"}},
			"Two filters: no counter decides them; counted from the tag's cards (the status's range holds more), in 4 name segments read at once, with the page."),
		summaryShape(bundles),
		activeJobsShape(bundles),
		ownerShape(bundles, "BLUE LYNX"),
	}
}
