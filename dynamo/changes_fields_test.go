package dynamo

import (
	"reflect"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fieldsChangedByDecoding is fieldsChanged as it was before identical: every field of both
// versions decoded and compared.
func fieldsChangedByDecoding(b, a map[string]types.AttributeValue) []string {
	plain := func(v types.AttributeValue) any {
		var x any
		if v == nil || attributevalue.Unmarshal(v, &x) != nil {
			return nil
		}
		return x
	}
	var fields []string
	for k, v := range a {
		if !reflect.DeepEqual(plain(v), plain(b[k])) {
			fields = append(fields, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			fields = append(fields, k)
		}
	}
	sort.Strings(fields)
	return fields
}

// fieldsChanged skips decoding the fields written alike (identical); its answer must be the one
// of decoding every field: on every pair of the sample's items, and on values that are equal
// decoded though written differently (1 and 1.0, sets in another order), NaN, binaries, nulls
// and nesting.
func TestFieldsChangedIsDecodingEveryField(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	m := func(kv ...any) types.AttributeValue {
		out := map[string]types.AttributeValue{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return &types.AttributeValueMemberM{Value: out}
	}
	values := []types.AttributeValue{
		s("a"), s("b"), s(""), n("1"), n("1.0"), n("2"), n("NaN"), n("Inf"),
		&types.AttributeValueMemberBOOL{Value: true}, &types.AttributeValueMemberBOOL{Value: false},
		&types.AttributeValueMemberNULL{Value: true},
		&types.AttributeValueMemberB{Value: []byte("x")}, &types.AttributeValueMemberB{Value: []byte("y")},
		&types.AttributeValueMemberSS{Value: []string{"a", "b"}}, &types.AttributeValueMemberSS{Value: []string{"b", "a"}},
		&types.AttributeValueMemberNS{Value: []string{"1", "2"}}, &types.AttributeValueMemberNS{Value: []string{"1", "2.0"}},
		&types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), n("1")}},
		&types.AttributeValueMemberL{Value: []types.AttributeValue{s("a"), n("1.0")}},
		&types.AttributeValueMemberL{Value: []types.AttributeValue{}},
		m(), m("x", s("a")), m("x", s("a"), "y", n("1")), m("x", s("a"), "y", n("1.00")), m("x", m("z", s("a"))),
	}
	for i, x := range values {
		for j, y := range values {
			before := map[string]types.AttributeValue{"f": x, "same": s("k")}
			after := map[string]types.AttributeValue{"f": y, "same": s("k")}
			got := fieldsChanged(&item{Data: before}, &item{Data: after})
			if want := fieldsChangedByDecoding(before, after); !reflect.DeepEqual(got, want) {
				t.Errorf("values %d -> %d: fieldsChanged = %v, decoding every field gives %v", i, j, got, want)
			}
		}
		got := fieldsChanged(&item{Data: map[string]types.AttributeValue{"f": x}}, &item{Data: map[string]types.AttributeValue{}})
		if want := fieldsChangedByDecoding(map[string]types.AttributeValue{"f": x}, map[string]types.AttributeValue{}); !reflect.DeepEqual(got, want) {
			t.Errorf("value %d removed: fieldsChanged = %v, decoding every field gives %v", i, got, want)
		}
	}
	items := sampleItems(t)
	for i, a := range items {
		for _, b := range items[max(0, i-3):min(len(items), i+3)] {
			ad, err := a.data()
			if err != nil {
				t.Fatal(err)
			}
			bd, err := b.data()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fieldsChanged(b, a), fieldsChangedByDecoding(bd, ad); !reflect.DeepEqual(got, want) {
				t.Errorf("%s/%s -> %s/%s: fieldsChanged = %v, decoding every field gives %v", b.PK, b.SK, a.PK, a.SK, got, want)
			}
		}
	}
}
