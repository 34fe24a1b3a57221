package graph

import (
	"context"
	"maps"
	"slices"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

// catalogueSummary is the CatalogueSummary of the catalogue's counters: the closed vocabularies
// in their enum's order with zeros, the open ones (domains, component types) in name order
// without.
func catalogueSummary(c *dynamo.Counts) *model.CatalogueSummary {
	out := &model.CatalogueSummary{
		CapabilityCount:  c.Capabilities,
		ComponentCount:   c.Components,
		MeanHealthScore:  c.MeanHealthScore(),
		ActiveJobs:       c.ActiveJobTotal(),
		ByDomain:         []*model.DomainCount{},
		ComponentsByType: []*model.ComponentTypeCount{},
	}
	for _, d := range slices.Sorted(maps.Keys(c.ByDomain)) {
		out.ByDomain = append(out.ByDomain, &model.DomainCount{Domain: d, Count: c.ByDomain[d]})
	}
	for _, s := range catalog.CapabilityStatuses {
		out.ByStatus = append(out.ByStatus, &model.CapabilityStatusCount{Status: s, Count: c.ByStatus[s]})
	}
	for _, p := range catalog.Priorities {
		out.ByPriority = append(out.ByPriority, &model.PriorityCount{Priority: p, Count: c.ByPriority[p]})
	}
	for _, h := range catalog.HealthStatuses {
		out.ByHealthStatus = append(out.ByHealthStatus, &model.HealthStatusCount{Status: h, Count: c.ByHealth[h]})
		out.ComponentsByHealthStatus = append(out.ComponentsByHealthStatus, &model.HealthStatusCount{Status: h, Count: c.ComponentsByHealth[h]})
	}
	for _, t := range slices.Sorted(maps.Keys(c.ComponentsByType)) {
		out.ComponentsByType = append(out.ComponentsByType, &model.ComponentTypeCount{Type: t, Count: c.ComponentsByType[t]})
	}
	for _, t := range catalog.JobTypes {
		out.ActiveJobsByType = append(out.ActiveJobsByType, &model.JobTypeCount{JobType: t, Count: c.ActiveJobs[t]})
	}
	return out
}

func ownerModel(o *dynamo.OwnerCounts) *model.Owner {
	return &model.Owner{Name: o.Name, CapabilityCount: o.Capabilities, ComponentCount: o.Components}
}

// ownerConnection is a page of owners; totalCount is the number of owners, known from the
// same read.
func ownerConnection(p *dynamo.Page[*dynamo.OwnerCounts], total int) *model.Connection[*model.Owner] {
	owners := &dynamo.Page[*model.Owner]{Cursors: p.Cursors, HasNext: p.HasNext, Items: make([]*model.Owner, len(p.Items))}
	for i, o := range p.Items {
		owners.Items[i] = ownerModel(o)
	}
	c := connection(owners)
	c.Count = func(context.Context) (int, error) { return total, nil }
	return c
}
