package graph_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/sample"
)

// capabilitiesQuery selects what the search tests compare.
const capabilitiesQuery = `query($f: CapabilityFilter, $o: CapabilityOrder, $d: String, $first: Int, $after: String) {
  capabilities(filter: $f, orderBy: $o, domain: $d, first: $first, after: $after) {
    totalCount nodes { capabilityId name } pageInfo { hasNextPage endCursor } } }`

type capabilitiesPage struct {
	Capabilities struct {
		TotalCount int
		Nodes      []struct{ CapabilityID, Name string }
		PageInfo   struct {
			HasNextPage bool
			EndCursor   string
		}
	}
}

// Query.capabilities with a search finds "Alert Management" from "alert man", counts, and pages
// with a cursor bound to the query; no operation issues a Scan.
func TestCapabilitiesSearchEndToEnd(t *testing.T) {
	h := newHarness(t)
	var got capabilitiesPage
	resp := h.ok(t, capabilitiesQuery, map[string]any{"f": map[string]any{"search": "ALERT man"}}, &got)
	c := got.Capabilities
	if len(c.Nodes) == 0 || c.Nodes[0].Name != "Alert Management" || c.TotalCount != len(c.Nodes) || c.PageInfo.HasNextPage {
		t.Fatalf("search alert man = %+v", c)
	}
	if resp.Extensions.DynamoDB.Operations["Scan"] != 0 {
		t.Errorf("search issued a Scan: %v", resp.Extensions.DynamoDB.Operations)
	}

	// Every capability in name order, two a page, hasNextPage exact, totalCount on each page.
	var names []string
	after := any(nil)
	for range 10 {
		var p capabilitiesPage
		h.ok(t, capabilitiesQuery, map[string]any{"o": map[string]any{"field": "NAME"}, "first": 2, "after": after}, &p)
		for _, n := range p.Capabilities.Nodes {
			names = append(names, strings.ToLower(n.Name))
		}
		if p.Capabilities.TotalCount != 7 {
			t.Errorf("totalCount = %d, want 7", p.Capabilities.TotalCount)
		}
		if !p.Capabilities.PageInfo.HasNextPage {
			break
		}
		after = p.Capabilities.PageInfo.EndCursor
	}
	if len(names) != 7 || !sortedStrings(names) {
		t.Errorf("name order = %v", names)
	}

	// A cursor of another query is refused, with no write.
	resp = h.do(t, capabilitiesQuery, map[string]any{"f": map[string]any{"search": "fraud"}, "after": after})
	if resp.code(0) != "BAD_USER_INPUT" || h.wrote {
		t.Errorf("cursor of another query: %s", resp.Body)
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

// Bad input is BAD_USER_INPUT naming the argument, and nothing is read or written past it.
func TestCapabilitiesSearchBadInput(t *testing.T) {
	h := newHarness(t)
	for _, tt := range []struct {
		name string
		vars map[string]any
	}{
		{"empty search", map[string]any{"f": map[string]any{"search": " -- "}}},
		{"search too long", map[string]any{"f": map[string]any{"search": strings.Repeat("a", 201)}}},
		{"too many words", map[string]any{"f": map[string]any{"search": "a b c d e f g h i j k"}}},
		{"bad domain", map[string]any{"f": map[string]any{"domains": []string{"no#pe"}}}},
		{"empty owner", map[string]any{"f": map[string]any{"owner": "!!"}}},
		{"first out of range", map[string]any{"f": map[string]any{"search": "alert"}, "first": 101}},
		{"first zero", map[string]any{"o": map[string]any{"field": "NAME"}, "first": 0}},
		{"forged cursor", map[string]any{"f": map[string]any{"search": "alert"}, "after": "bm9wZQ"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(t, capabilitiesQuery, tt.vars)
			if resp.code(0) != "BAD_USER_INPUT" {
				t.Errorf("%s: %s", tt.name, resp.Body)
			}
			if h.wrote {
				t.Errorf("%s wrote", tt.name)
			}
		})
	}
	// An unknown enum value is refused by validation (as every enum of the schema), before any
	// resolver and any request.
	resp := h.do(t, capabilitiesQuery, map[string]any{"f": map[string]any{"statuses": []string{"SLEEPING"}}})
	if resp.code(0) != "GRAPHQL_VALIDATION_FAILED" || resp.Extensions.DynamoDB.Requests != 0 {
		t.Errorf("unknown status: %s", resp.Body)
	}
}

// Every shape of Query.capabilities and Owner-style filters reads by key ranges: Query and
// BatchGetItem, never a Scan, totalCount included.
func TestCapabilitiesShapesNeverScan(t *testing.T) {
	h := newHarness(t)
	for _, vars := range []map[string]any{
		{"f": map[string]any{"search": "alert"}},
		{"f": map[string]any{"search": "fr", "healthStatuses": []string{"HEALTHY"}}, "o": map[string]any{"field": "PRIORITY"}},
		{"f": map[string]any{"tags": []string{"alerting", "monitoring"}, "owner": "operations team"}},
		{"f": map[string]any{"domains": []string{"operations", "finance"}, "statuses": []string{"ACTIVE"}}, "o": map[string]any{"field": "NAME", "direction": "DESC"}},
		{"f": map[string]any{"priorities": []string{"CRITICAL"}}, "o": map[string]any{"field": "HEALTH_SCORE", "direction": "DESC"}},
		{"o": map[string]any{"field": "UPDATED_AT"}, "d": "operations"},
		{"d": "operations"},
	} {
		resp := h.ok(t, capabilitiesQuery, vars, nil)
		for op := range resp.Extensions.DynamoDB.Operations {
			if op != "Query" && op != "BatchGetItem" {
				t.Errorf("%v: %s issued (%v)", vars, op, resp.Extensions.DynamoDB.Operations)
			}
		}
	}
}

// On the embedded default, a search page asked again while nothing was written is answered
// from the read memo with no request; a write is seen at once.
func TestEmbeddedMemoServesSearchPages(t *testing.T) {
	ctx := context.Background()
	emb, err := dynamo.StartEmbedded(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emb.Close() })
	client, err := dynamo.NewClient(ctx, dynamo.ClientConfig{Options: awsconf.Options{Endpoint: emb.URL, AccessKeyID: emb.Key, HTTPClient: emb}})
	if err != nil {
		t.Fatal(err)
	}
	store := dynamo.New(client, dynamo.Options{CursorSecret: []byte("s"), Generation: emb.Generation})
	if err := store.CreateTable(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := store.BulkLoad(ctx, sample.Catalogue(testNow), 4); err != nil {
		t.Fatal(err)
	}
	handler := graph.NewHandler(store, graph.Options{Logger: testLogger(), Now: func() time.Time { return testNow }})
	vars := map[string]any{"f": map[string]any{"search": "fraud"}}
	first := serve(t, handler, capabilitiesQuery, vars)
	if first.Extensions.DynamoDB.Requests == 0 {
		t.Fatal("cold search page read nothing")
	}
	if again := serve(t, handler, capabilitiesQuery, vars); again.Extensions.DynamoDB.Requests != 0 {
		t.Errorf("warm search page: %d requests, want 0", again.Extensions.DynamoDB.Requests)
	}
	if _, err := store.UpdateCapability(ctx, "CAP-FRAUD-DET-001", 1, func(c *catalog.Capability) error {
		c.Name = "Fraud Shield"
		return nil
	}, dynamo.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var got capabilitiesPage
	after := serve(t, handler, capabilitiesQuery, vars)
	if err := json.Unmarshal(after.Data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Capabilities.Nodes) != 1 || got.Capabilities.Nodes[0].Name != "Fraud Shield" {
		t.Errorf("after a rename: %s", after.Body)
	}
}

// Shapes whose independent reads go out together: requests and round trips (each request
// held 40 ms at the counter; see dynamotest.RoundTrips). Before, each was one round trip more:
// the owner's counters, then its page; a page, then its count.
func TestSearchRoundTrips(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		name          string
		query         string
		requests, rts int
	}{
		{"owner(name) with counts and its first capabilities: counters || cards, then METADATA",
			`{ owner(name: "Data Platform Team") { name capabilityCount componentCount capabilities(first: 5) { nodes { name } } } }`, 3, 2},
		{"owner(name) with the page's totalCount too (the same counters read: one a query)",
			`{ owner(name: "data platform team") { capabilityCount capabilities { totalCount nodes { name } } } }`, 3, 2},
		{"a page of two filters with totalCount: the count's Query with the page's",
			`{ capabilities(filter: {tags: ["monitoring"], statuses: [ACTIVE]}) { nodes { name } totalCount } }`, 3, 2},
		{"a page of one domain with totalCount: the counters with the page's Query",
			`{ capabilities(filter: {domains: ["operations"]}) { nodes { name } totalCount } }`, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop := h.env.RoundTrips(40 * time.Millisecond)
			resp := h.do(t, tt.query, nil)
			req, rt := stop()
			if len(resp.Errors) > 0 {
				t.Fatalf("errors: %s", resp.Body)
			}
			if req != tt.requests || rt > tt.rts {
				t.Errorf("%d requests (%v), %d round trips; want %d, at most %d", req, h.env.Counter.Ops(), rt, tt.requests, tt.rts)
			}
			if !strings.Contains(resp.Body, `"name"`) {
				t.Errorf("no capabilities: %s", resp.Body)
			}
		})
	}
}
