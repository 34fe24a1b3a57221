package graph

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/internal/reqstats"
)

// marshalResponse writes what json.Marshal writes, byte for byte, with and without errors and
// extensions, for data it copies and for data json.Marshal would escape.
func TestMarshalResponseIsJSONMarshal(t *testing.T) {
	yes := true
	errs := gqlerror.List{{Message: "a <b> & c", Path: ast.Path{ast.PathName("x")}, Extensions: map[string]any{"code": "NOT_FOUND"}}}
	ext := map[string]any{"dynamodb": map[string]any{"requests": 3, "operations": map[string]int{"Query": 2, "GetItem": 1}}, "cost": map[string]any{"limit": 50000}}
	// What every response carries (written by hand: appendExtensions), and odd keys and values.
	db := reqstats.New(reqstats.Capacity)
	db.Request("BatchGetItem", 0)
	db.Capacity(1.5, 0)
	snap := db.Snapshot()
	snap.Cache = &reqstats.CacheCounts{Hits: 2}
	served := map[string]any{"dynamodb": snap, "s3": reqstats.Empty(reqstats.Bytes), "cost": map[string]int{"requested": 0, "limit": 50000}}
	odd := map[string]any{"a<b>": map[string]int{"x&y": 1}, "nil": map[string]int(nil), "z": []string{"<"}, "dynamodb": reqstats.Snapshot{}}
	for _, data := range []string{
		`{"capability":{"id":"Q2FwYWJpbGl0eTpDQVAtMQ==","name":"Fraud detection","tags":["a","b"],"n":1.5,"x":null}}`,
		`{"s":"<script>"}`, `{"s":"a < b"}`, `{"s":"a & b"}`, `{"s":"a > b"}`, "{\"s\":\"line\u2028sep\"}", "{\"s\":\"é ü ∑\"}",
		`null`, ``,
	} {
		for _, resp := range []*graphql.Response{
			{Data: json.RawMessage(data)},
			{Data: json.RawMessage(data), Errors: errs},
			{Data: json.RawMessage(data), Extensions: ext},
			{Data: json.RawMessage(data), Errors: errs, Extensions: ext},
			{Data: json.RawMessage(data), Extensions: served},
			{Data: json.RawMessage(data), Errors: errs, Extensions: odd},
			{Data: json.RawMessage(data), HasNext: &yes, Label: "l"},
		} {
			got, err1 := marshalResponse(resp)
			want, err2 := json.Marshal(resp)
			if (err1 != nil) != (err2 != nil) {
				t.Fatalf("marshalResponse error %v, json.Marshal error %v", err1, err2)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("marshalResponse:\n got %s\nwant %s", got, want)
			}
		}
	}
}
