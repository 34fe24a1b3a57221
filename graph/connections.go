package graph

import (
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph/model"
)

func pageInfo[T any](p *dynamo.Page[T]) *model.PageInfo {
	info := &model.PageInfo{HasNextPage: p.HasNext}
	if n := len(p.Cursors); n > 0 {
		info.EndCursor = &p.Cursors[n-1]
	}
	return info
}

// edges builds the edges of a page with mk, one per item with its cursor.
func edges[T, E any](p *dynamo.Page[T], mk func(cursor string, node T) E) []E {
	out := make([]E, len(p.Items))
	for i, it := range p.Items {
		out[i] = mk(p.Cursors[i], it)
	}
	return out
}

func capabilityConnection(p *dynamo.Page[*catalog.Capability]) *model.CapabilityConnection {
	return &model.CapabilityConnection{
		Nodes:    p.Items,
		PageInfo: pageInfo(p),
		Edges: edges(p, func(c string, n *catalog.Capability) *model.CapabilityEdge {
			return &model.CapabilityEdge{Cursor: c, Node: n}
		}),
	}
}

func componentConnection(p *dynamo.Page[*catalog.Component]) *model.ComponentConnection {
	return &model.ComponentConnection{
		Nodes:    p.Items,
		PageInfo: pageInfo(p),
		Edges: edges(p, func(c string, n *catalog.Component) *model.ComponentEdge {
			return &model.ComponentEdge{Cursor: c, Node: n}
		}),
	}
}

func jobConnection(p *dynamo.Page[*catalog.Job]) *model.JobConnection {
	return &model.JobConnection{
		Nodes:    p.Items,
		PageInfo: pageInfo(p),
		Edges: edges(p, func(c string, n *catalog.Job) *model.JobEdge {
			return &model.JobEdge{Cursor: c, Node: n}
		}),
	}
}

func metricConnection(p *dynamo.Page[*catalog.Metric]) *model.MetricConnection {
	return &model.MetricConnection{
		Nodes:    p.Items,
		PageInfo: pageInfo(p),
		Edges: edges(p, func(c string, n *catalog.Metric) *model.MetricEdge {
			return &model.MetricEdge{Cursor: c, Node: n}
		}),
	}
}

func capabilityVersionConnection(p *dynamo.Page[*catalog.CapabilityVersion]) *model.CapabilityVersionConnection {
	return &model.CapabilityVersionConnection{
		Nodes:    p.Items,
		PageInfo: pageInfo(p),
		Edges: edges(p, func(c string, n *catalog.CapabilityVersion) *model.CapabilityVersionEdge {
			return &model.CapabilityVersionEdge{Cursor: c, Node: n}
		}),
	}
}

func ruleVersionConnection(p *dynamo.Page[*catalog.RuleVersion]) *model.RuleVersionConnection {
	return &model.RuleVersionConnection{
		Nodes:    p.Items,
		PageInfo: pageInfo(p),
		Edges: edges(p, func(c string, n *catalog.RuleVersion) *model.RuleVersionEdge {
			return &model.RuleVersionEdge{Cursor: c, Node: n}
		}),
	}
}
