package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/lexer"

	"github.com/capcat/catalogue/graph"
)

// hostileDocument is a query document built to make the server spend CPU or memory before any
// limit refuses it: the classes an attacker without a key would try.
type hostileDocument struct {
	name  string
	query string
	// code is the extensions.code the server refuses it with; empty for a document that is
	// only large, which is served.
	code string
}

// repeat joins f(0)...f(n-1) with spaces.
func repeat(n int, f func(i int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = f(i)
	}
	return strings.Join(parts, " ")
}

// hostileDocuments returns the hostile documents with about tokens lexical tokens each (the
// parser's limit is 15,000: just under it is the most an attacker can send through it). Each
// repeated unit's token count divides the budget.
func hostileDocuments(tokens int) []hostileDocument {
	const capability = `capability(id: "CAP-ALERT-MGT-001")`
	n := func(unitTokens int) int { return max(1, (tokens-20)/unitTokens) }
	// deep nests n levels, but under the parser's own bound of 1,000 levels, so that the
	// document reaches the server's.
	deep := func(unitTokens int) int { return min(n(unitTokens), 900) }
	chain := 40 // a fragment chain doubling at each link: 2^40 fields once expanded
	bytes := tokens * 8
	return []hostileDocument{
		{"repeated fields", "{ " + capability + " { " + strings.Repeat("name ", n(1)) + "} }", "FIELD_LIMIT_EXCEEDED"},
		{"repeated nested fields", "{ " + capability + " { " + strings.Repeat("components { name } ", n(4)) + "} }", "FIELD_LIMIT_EXCEEDED"},
		{"many aliases", "{ " + capability + " { " + repeat(min(n(3), 999), func(i int) string { return fmt.Sprintf("a%d: name", i) }) + " } }", "ALIAS_LIMIT_EXCEEDED"},
		{"wide fragments", "{ " + capability + " { " + repeat(n(9), func(i int) string { return fmt.Sprintf("...f%d", i) }) + " } } " +
			repeat(n(9), func(i int) string { return fmt.Sprintf("fragment f%d on Capability { name }", i) }), "FRAGMENT_LIMIT_EXCEEDED"},
		{"unused fragments", "{ " + capability + " { name } } " + repeat(n(7), func(i int) string { return fmt.Sprintf("fragment f%d on Capability { name }", i) }), "FRAGMENT_LIMIT_EXCEEDED"},
		{"one fragment spread repeatedly", "{ " + capability + " { " + strings.Repeat("...f ", n(2)) + "} } fragment f on Capability { name status priority }", "FRAGMENT_LIMIT_EXCEEDED"},
		{"deep fragments", "{ " + capability + " { ...f0 } } " + repeat(chain, func(i int) string { return fmt.Sprintf("fragment f%d on Capability { ...f%d ...f%d }", i, i+1, i+1) }) +
			fmt.Sprintf(" fragment f%d on Capability { name }", chain), "FIELD_LIMIT_EXCEEDED"},
		{"fragment cycle", "{ " + capability + " { ...a } } fragment a on Capability { ...b name } fragment b on Capability { ...a status }", "GRAPHQL_VALIDATION_FAILED"},
		{"doubling fragment cycle", "{ " + capability + " { ...f0 } } " + repeat(chain, func(i int) string { return fmt.Sprintf("fragment f%d on Capability { ...f%d ...f%d }", i, i+1, i+1) }) +
			fmt.Sprintf(" fragment f%d on Capability { ...f0 }", chain), "GRAPHQL_VALIDATION_FAILED"},
		{"deep nesting", "{ " + capability + " { " + strings.Repeat("components { capability { ", deep(6)/2) + "name" + strings.Repeat(" } }", deep(6)/2) + " } }", "DEPTH_LIMIT_EXCEEDED"},
		{"deep inline fragments", "{ " + capability + " { " + strings.Repeat("... on Capability { ", deep(5)) + "name" + strings.Repeat(" }", deep(5)) + " } }", "DEPTH_LIMIT_EXCEEDED"},
		{"many variables", "query Q(" + repeat(n(4), func(i int) string { return fmt.Sprintf("$v%d: String", i) }) + ") { " + capability + " { name } }", "VARIABLE_LIMIT_EXCEEDED"},
		{"many directives", "{ " + capability + " { name " + strings.Repeat("@include(if: true) ", n(7)) + "} }", "DIRECTIVE_LIMIT_EXCEEDED"},
		{"many arguments", `{ capability(` + strings.Repeat(`id: "x" `, n(3)) + `) { name } }`, "ARGUMENT_LIMIT_EXCEEDED"},
		{"many operations", repeat(n(5), func(i int) string { return fmt.Sprintf("query q%d { __typename }", i) }), "OPERATION_LIMIT_EXCEEDED"},
		{"wide input object", `mutation { createCapability(input: {` + strings.Repeat(`name: "x", `, n(3)) + `}) { id } }`, "ARGUMENT_LIMIT_EXCEEDED"},
		{"deep list literal", `{ capability(id: ` + strings.Repeat("[", deep(2)) + `"x"` + strings.Repeat("]", deep(2)) + `) { name } }`, "DEPTH_LIMIT_EXCEEDED"},
		{"long string", `{ capability(id: "` + strings.Repeat("x", bytes) + `") { name } }`, "BAD_USER_INPUT"},
		{"long block string", `{ capability(id: """` + strings.Repeat("x\n", bytes/2) + `""") { name } }`, "BAD_USER_INPUT"},
		{"one field repeated", "{ " + capability + " { " + strings.Repeat("name ", 998) + "} }", "FIELD_LIMIT_EXCEEDED"},
		{"same-named fields merged", "{ " + capability + " { " + strings.Repeat("components { "+strings.Repeat("name ", 24)+"} ", 40) + "} }", "FIELD_LIMIT_EXCEEDED"},
		{"one field through fragments", "{ " + capability + " { " + repeat(99, func(i int) string { return fmt.Sprintf("...f%d", i) }) + " } } " +
			repeat(99, func(i int) string { return fmt.Sprintf("fragment f%d on Capability { name }", i) }), "FIELD_LIMIT_EXCEEDED"},
		{"unknown fragment spreads", "{ " + capability + " { " + repeat(n(2), func(i int) string { return fmt.Sprintf("...U%d", i) }) + " } }", "GRAPHQL_VALIDATION_FAILED"},
		{"spreads in an unused fragment", "{ " + capability + " { name } } fragment f on Capability { name } fragment g on Capability { " + strings.Repeat("...f ", n(2)) + "}", "FRAGMENT_LIMIT_EXCEEDED"},
		{"long alias", "{ " + capability + " { " + strings.Repeat("a", min(bytes, 200_000)) + ": name } }", "NAME_LIMIT_EXCEEDED"},
		{"long operation name", "query " + strings.Repeat("Q", min(bytes, 200_000)) + " { __typename }", "NAME_LIMIT_EXCEEDED"},
		{"repeated introspection", "{ " + repeat(30, func(i int) string {
			return fmt.Sprintf("s%d: __schema { types { name fields { name type { name ofType { name } } } } }", i)
		}) + " }", "INTROSPECTION_LIMIT_EXCEEDED"},
		{"introspection through fragments", "{ ...s ...t ...u } fragment s on Query { __schema { types { name } } } fragment t on Query { __schema { queryType { name } } } fragment u on Query { __type(name: \"Capability\") { name } }", "INTROSPECTION_LIMIT_EXCEEDED"},
		{"many unknown arguments", "{ " + repeat(30, func(i int) string {
			return fmt.Sprintf("a%d: capability(id: \"x\" %s) { name }", i, repeat(98, func(j int) string { return fmt.Sprintf("u%d: 1", j) }))
		}) + " }", "ARGUMENT_LIMIT_EXCEEDED"},
		{"huge float", `{ capability(id: "CAP-ALERT-MGT-001") { jobs(first: 1` + strings.Repeat("0", min(bytes, 900_000)) + `.5) { nodes { jobId } } } }`, "GRAPHQL_VALIDATION_FAILED"},
		// At the limits: served, and what validation costs at most.
		{"fields at the limit", "{ " + capability + " { " + repeat(20, func(i int) string { return strings.Repeat(fmt.Sprintf("a%d: name ", i), 49) }) + "} }", "ALIAS_LIMIT_EXCEEDED"},
		{"repeats at the limit", "{ " + capability + " { " + repeat(14, func(i int) string {
			return strings.Repeat(strings.Fields("id capabilityId name description businessDomain status priority owner createdBy version tags revision createdAt updatedAt")[i]+" ", 50)
		}) + "} }", ""},
		{"fragments at the limit", "{ " + capability + " { " + repeat(49, func(i int) string { return fmt.Sprintf("...f%d", i) }) + " } } " +
			repeat(49, func(i int) string {
				return fmt.Sprintf("fragment f%d on Capability { name status priority id businessDomain }", i)
			}), ""},
		{"long comment", "#" + strings.Repeat("x", bytes) + "\n{ " + capability + " { name } }", ""},
	}
}

// tokenCount returns how many lexical tokens query holds (the parser's limit counts these).
func tokenCount(tb testing.TB, query string) int {
	tb.Helper()
	lex := lexer.New(&ast.Source{Input: query})
	n := 0
	for {
		tok, err := lex.ReadToken()
		if err != nil {
			tb.Fatalf("lex: %v", err)
		}
		if tok.Kind == lexer.EOF {
			return n
		}
		n++
	}
}

// Every hostile document is refused before validation could cost much, with its code, without
// a DynamoDB request, and the response quotes none of it. The benchmark of the same documents
// shows the time each costs.
func TestHostileDocumentsRefused(t *testing.T) {
	h := newHarnessWith(t, func(o *graph.Options) { o.Introspection = false })
	for _, size := range hostileSizes {
		for _, doc := range hostileDocuments(size.tokens) {
			body, ok := hostileBody(doc.query)
			if !ok {
				continue
			}
			t.Run(doc.name+"/"+size.name, func(t *testing.T) {
				want := doc.code
				switch {
				case len(doc.query) > graph.DefaultLimits.MaxQueryBytes:
					want = "QUERY_TOO_LARGE"
				case tokenCount(t, doc.query) > graph.DefaultLimits.ParserTokens:
					want = "GRAPHQL_PARSE_FAILED"
				}
				h.env.Counter.Reset()
				w := post(h.handler, string(body), "application/json")
				var resp gqlResponse
				if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
					t.Fatalf("decode %q: %v", w.Body.String(), err)
				}
				if resp.code(0) != want {
					t.Fatalf("code = %q, want %q: %.300s", resp.code(0), want, w.Body.String())
				}
				if n := h.env.Counter.Total(); n != 0 && want != "" {
					t.Errorf("refused document made %d DynamoDB requests", n)
				}
				if w.Body.Len() > 4<<10 {
					t.Errorf("response is %d bytes: it quotes the request", w.Body.Len())
				}
			})
		}
	}
}
