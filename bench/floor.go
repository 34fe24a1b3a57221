package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/graph/model"
)

// The floor: GraphQL's own cost of an operation. The same schema (gqlgen's executor generated
// from schema.graphqls) serves the same responses from memory: every resolver the measured
// operations touch returns an object captured from the store before the measurement, so a run is
// parsing (cached, as the server caches it), validation, execution of the generated code and
// JSON, and nothing else: no loaders, no DynamoDB, no projection, no request accounting. Our
// server's CPU per operation ÷ the floor's is what our own layers add to GraphQL's.
//
// The resolvers of every other type and field are the generated interfaces, embedded with a nil
// value: an operation that reaches one fails loudly instead of measuring something else.

// floorData is what the floor serves: capabilities by ID with their partitions, and the first
// page of the capability list.
type floorData struct {
	caps  map[string]*catalog.Capability
	parts map[string]*floorPartition
	list  *model.Connection[*catalog.Capability]
}

// floorPartition is one capability's ranges, with the lookups the resolvers need ready.
type floorPartition struct {
	components   []*catalog.Component
	dependencies []*catalog.Dependency
	rules        []*catalog.Rule
	byID         map[string]*catalog.Component
	out          map[string][]*catalog.Component // a component's dependsOn
}

// captureFloor reads, through the store and before any measurement, what the floor serves for
// the capability ids and the first listN capabilities: whole items (no projection), in the order
// the store returns them, as the server's resolvers return them.
func captureFloor(ctx context.Context, st *dynamo.Store, ids []string, listN int) (*floorData, error) {
	d := &floorData{caps: map[string]*catalog.Capability{}, parts: map[string]*floorPartition{}}
	page, err := st.Capabilities(ctx, "", listN, "")
	if err != nil {
		return nil, err
	}
	d.list = &model.Connection[*catalog.Capability]{Nodes: page.Items, Edges: make([]*model.Edge[*catalog.Capability], len(page.Items)), PageInfo: &model.PageInfo{HasNextPage: page.HasNext}}
	for i, c := range page.Items {
		d.list.Edges[i] = &model.Edge[*catalog.Capability]{Cursor: page.Cursors[i], Node: c}
	}
	if n := len(page.Cursors); n > 0 {
		d.list.PageInfo.EndCursor = &page.Cursors[n-1]
	}
	all := append([]string(nil), ids...)
	for _, c := range page.Items {
		all = append(all, c.CapabilityID)
	}
	caps, err := st.CapabilitiesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, c := range append(caps, page.Items...) {
		if c != nil {
			d.caps[c.CapabilityID] = c
		}
	}
	for _, id := range all {
		if d.parts[id] != nil {
			continue
		}
		p, err := st.ReadRange(ctx, id, dynamo.SegComponents|dynamo.SegDependencies, dynamo.Fields{})
		if err != nil {
			return nil, err
		}
		rules, err := st.ReadRange(ctx, id, dynamo.SegRules, dynamo.Fields{})
		if err != nil {
			return nil, err
		}
		fp := &floorPartition{components: nonNil(p.Components), dependencies: nonNil(p.Dependencies), rules: nonNil(rules.Rules),
			byID: map[string]*catalog.Component{}, out: map[string][]*catalog.Component{}}
		for _, c := range fp.components {
			fp.byID[c.ComponentID] = c
		}
		for _, e := range fp.dependencies {
			if dst := fp.byID[e.TargetComponentID]; dst != nil {
				fp.out[e.SourceComponentID] = append(fp.out[e.SourceComponentID], dst)
			}
		}
		// Capability.dependencies comes most critical first, like the server's (dependsOn, built
		// above, keeps key order like the server's).
		catalog.SortByCriticality(fp.dependencies)
		d.parts[id] = fp
	}
	return d, nil
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// floorHandler serves the floor's schema over POST /graphql with gqlgen's own transport and a
// parsed-document cache (the server caches documents too).
func floorHandler(d *floorData) http.Handler {
	schema := graph.NewExecutableSchema(graph.Config{
		Resolvers: &floorRoot{d: d},
		Directives: graph.DirectiveRoot{HasRole: func(ctx context.Context, _ any, next graphql.Resolver, _ graph.Role) (any, error) {
			return next(ctx)
		}},
	})
	srv := handler.New(schema)
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](100))
	return srv
}

// floorRoot is the floor's graph.ResolverRoot.
type floorRoot struct{ d *floorData }

func (r *floorRoot) ArtifactUpload() graph.ArtifactUploadResolver { return nil }
func (r *floorRoot) Caller() graph.CallerResolver                 { return nil }
func (r *floorRoot) Capability() graph.CapabilityResolver         { return floorCapability{d: r.d} }
func (r *floorRoot) Change() graph.ChangeResolver                 { return nil }
func (r *floorRoot) Component() graph.ComponentResolver           { return floorComponent{d: r.d} }
func (r *floorRoot) Dependency() graph.DependencyResolver         { return floorDependency{d: r.d} }
func (r *floorRoot) Job() graph.JobResolver                       { return nil }
func (r *floorRoot) Metric() graph.MetricResolver                 { return nil }
func (r *floorRoot) Mutation() graph.MutationResolver             { return nil }
func (r *floorRoot) Notification() graph.NotificationResolver     { return nil }
func (r *floorRoot) Owner() graph.OwnerResolver                   { return nil }
func (r *floorRoot) Query() graph.QueryResolver                   { return floorQuery{d: r.d} }
func (r *floorRoot) Rule() graph.RuleResolver                     { return nil }
func (r *floorRoot) Subscription() graph.SubscriptionResolver     { return nil }
func (r *floorRoot) TargetComponent() graph.TargetComponentResolver {
	return nil
}

type floorQuery struct {
	graph.QueryResolver // nil: the floor serves only what the measured operations read
	d                   *floorData
}

func (q floorQuery) Capability(_ context.Context, id string) (*catalog.Capability, error) {
	return q.d.caps[id], nil
}

func (q floorQuery) Capabilities(_ context.Context, _ *model.CapabilityFilter, _ *model.CapabilityOrder, _ *string, _ *int, _ *string) (*model.Connection[*catalog.Capability], error) {
	return q.d.list, nil
}

type floorCapability struct {
	graph.CapabilityResolver
	d *floorData
}

func (r floorCapability) part(c *catalog.Capability) (*floorPartition, error) {
	if p := r.d.parts[c.CapabilityID]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("floor: %s was not captured", c.CapabilityID)
}

func (r floorCapability) Components(_ context.Context, c *catalog.Capability, _ *string, _ *string, _ *catalog.ComponentStatus) ([]*catalog.Component, error) {
	p, err := r.part(c)
	if err != nil {
		return nil, err
	}
	return p.components, nil
}

func (r floorCapability) Dependencies(_ context.Context, c *catalog.Capability, _ *catalog.Criticality) ([]*catalog.Dependency, error) {
	p, err := r.part(c)
	if err != nil {
		return nil, err
	}
	return p.dependencies, nil
}

func (r floorCapability) Rules(_ context.Context, c *catalog.Capability, _ *catalog.RuleType, _ *catalog.RuleStatus) ([]*catalog.Rule, error) {
	p, err := r.part(c)
	if err != nil {
		return nil, err
	}
	return p.rules, nil
}

type floorComponent struct {
	graph.ComponentResolver
	d *floorData
}

func (r floorComponent) DependsOn(_ context.Context, c *catalog.Component) ([]*catalog.Component, error) {
	if n := r.d.parts[c.CapabilityID].out[c.ComponentID]; n != nil {
		return n, nil
	}
	return []*catalog.Component{}, nil
}

type floorDependency struct {
	graph.DependencyResolver
	d *floorData
}

func (r floorDependency) Source(_ context.Context, e *catalog.Dependency) (*catalog.Component, error) {
	return r.d.parts[e.CapabilityID].byID[e.SourceComponentID], nil
}

func (r floorDependency) Target(_ context.Context, e *catalog.Dependency) (*catalog.Component, error) {
	return r.d.parts[e.CapabilityID].byID[e.TargetComponentID], nil
}

// runFloor sends the operation to the floor and returns its data.
func runFloor(ctx context.Context, h http.Handler, body []byte) (json.RawMessage, error) {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var resp struct {
		Data   json.RawMessage
		Errors []json.RawMessage
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("floor: %w: %.300s", err, rec.Body.Bytes())
	}
	if rec.Code != http.StatusOK || len(resp.Errors) > 0 {
		return nil, fmt.Errorf("floor: status %d: %.600s", rec.Code, rec.Body.Bytes())
	}
	return resp.Data, nil
}

// ourData runs the operation through the server and returns its data, bytes as sent.
func (h *harness) ourData(ctx context.Context, op *operation) (json.RawMessage, error) {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", bytes.NewReader(op.body()))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+h.apiKey)
	rec := httptest.NewRecorder()
	h.handler.ServeHTTP(rec, req)
	var resp struct{ Data json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		return nil, err
	}
	return resp.Data, nil
}

// floorFor captures the floor of the operations -floor names and checks that it answers the
// same data as the server, byte for byte. It returns nil when no operation is named.
func (h *harness) floorFor(ctx context.Context, results []*opResult) (http.Handler, []*opResult, error) {
	if h.cfg.floorOps == "" {
		return nil, nil, nil
	}
	re, err := regexp.Compile(h.cfg.floorOps)
	if err != nil {
		return nil, nil, fmt.Errorf("-floor: %w", err)
	}
	var ids []string
	var picked []*opResult
	for _, r := range results {
		if r.Op.Once || !re.MatchString(r.Op.Name) {
			continue
		}
		picked = append(picked, r)
		if id, ok := r.Op.Vars["id"].(string); ok {
			ids = append(ids, id)
		}
	}
	if len(picked) == 0 {
		return nil, nil, nil
	}
	d, err := captureFloor(ctx, h.store, ids, 50)
	if err != nil {
		return nil, nil, fmt.Errorf("floor: %w", err)
	}
	fh := floorHandler(d)
	for _, r := range picked {
		ours, err := h.ourData(ctx, r.Op)
		if err != nil {
			return nil, nil, err
		}
		floor, err := runFloor(ctx, fh, r.Op.body())
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", r.Op.Name, err)
		}
		if !bytes.Equal(ours, floor) {
			return nil, nil, fmt.Errorf("%s: the floor's data differs from the server's:\n  server: %.400s\n  floor:  %.400s", r.Op.Name, ours, floor)
		}
	}
	return fh, picked, nil
}

// measureFloor measures the floor's CPU and allocations per operation as cpuPass measures the
// server's, for the operations -floor names.
func (h *harness) measureFloor(ctx context.Context, rep *report) error {
	fh, picked, err := h.floorFor(ctx, rep.results)
	if err != nil || fh == nil {
		return err
	}
	for _, r := range picked {
		body := r.Op.body()
		r.Floor = &stats{Requests: 0}
		if err := h.cpuPass(ctx, r.Floor, func(ctx context.Context) (sample, error) {
			_, err := runFloor(ctx, fh, body)
			return sample{}, err
		}); err != nil {
			return err
		}
		h.logf("%-62s cpu floor %7.0f µs %7.0f allocs: ours ÷ floor %.2f", r.Op.Name, us(r.Floor.CPU), r.Floor.Allocs, float64(r.Ours.CPU)/float64(max(r.Floor.CPU, 1)))
		if h.cfg.cacheBytes > 0 {
			op := r.Op
			r.Cached = &stats{Requests: 1}
			if err := h.cpuPass(ctx, r.Cached, func(ctx context.Context) (sample, error) { return h.runOn(ctx, h.cachedHandler, op, body, false) }); err != nil {
				return err
			}
			h.logf("%-62s cpu cached %7.0f µs %7.0f allocs: cached ÷ floor %.2f", r.Op.Name, us(r.Cached.CPU), r.Cached.Allocs, float64(r.Cached.CPU)/float64(max(r.Floor.CPU, 1)))
		}
	}
	return nil
}
