package memdyn

import "testing"

// holds decodes only the attributes a condition names; its answer must be the condition's on
// the whole decoded item, whatever the item holds: nested maps, names written with
// escapes, repeated names.
func TestHoldsDecodesWhatTheConditionNames(t *testing.T) {
	items := []string{
		`{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"METADATA"},"WriteSeq":{"N":"3"},"Data":{"M":{"name":{"S":"a \"b\""},"n":{"N":"2"},"m":{"M":{"x":{"S":"y"}}}}}}`,
		`{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"METADATA"},"Deleting":{"BOOL":true},"WriteSeq":{"N":"3"}}`,
		`{"PK":{"S":"P"},"\u0057riteSeq":{"N":"3"},"D\u0061ta":{"M":{"n":{"N":"2"}}}}`,
		`{"PK":{"S":"P"},"WriteSeq":{"N":"1"},"WriteSeq":{"N":"3"}}`,
		`{"PK":{"S":"P"},"TTL":{"N":"100"}}`,
	}
	conds := []struct {
		expr   string
		names  map[string]string
		values map[string]*av
	}{
		{"attribute_not_exists(Deleting) AND WriteSeq = :seq", nil, map[string]*av{":seq": {N: ptr("3")}}},
		{"attribute_not_exists(PK)", nil, nil},
		{"attribute_exists(WriteSeq)", nil, nil},
		{"#d.#n = :two OR #d.#m.#x = :y", map[string]string{"#d": "Data", "#n": "n", "#m": "m", "#x": "x"}, map[string]*av{":two": {N: ptr("2")}, ":y": {S: ptr("y")}}},
		{"attribute_not_exists(PK) OR #ttl < :now", map[string]string{"#ttl": "TTL"}, map[string]*av{":now": {N: ptr("200")}}},
		{"NOT (WriteSeq BETWEEN :a AND :b)", nil, map[string]*av{":a": {N: ptr("1")}, ":b": {N: ptr("2")}}},
		{"begins_with(PK, :p) AND contains(#d.#n, :two)", map[string]string{"#d": "Data", "#n": "name"}, map[string]*av{":p": {S: ptr("CAP")}, ":two": {S: ptr("b")}}},
	}
	for _, raw := range items {
		whole, err := decodeItem([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range conds {
			cond, err := parseExpr(c.expr, c.names, c.values, map[string]bool{})
			if err != nil {
				t.Fatalf("%s: %v", c.expr, err)
			}
			got, err := holds(cond, &rec{raw: []byte(raw)})
			if err != nil {
				t.Fatalf("holds(%s, %s): %v", c.expr, raw, err)
			}
			if want := cond.eval(whole); got != want {
				t.Errorf("holds(%s) on %s = %v; the condition on the whole item: %v", c.expr, raw, got, want)
			}
		}
	}
}

func ptr(s string) *string { return &s }
