package memdyn

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"sort"
	"strconv"
)

// av is one DynamoDB attribute value in the JSON wire format ({"S": "x"}, {"M": {...}}, ...).
type av struct {
	S    *string        `json:"S,omitempty"`
	N    *string        `json:"N,omitempty"`
	B    *string        `json:"B,omitempty"`
	BOOL *bool          `json:"BOOL,omitempty"`
	NULL *bool          `json:"NULL,omitempty"`
	M    map[string]*av `json:"M,omitempty"`
	L    []*av          `json:"L,omitempty"`
	SS   []string       `json:"SS,omitempty"`
	NS   []string       `json:"NS,omitempty"`
	BS   []string       `json:"BS,omitempty"`
}

// size is DynamoDB's size of a value (the rules of "Item sizes and formats"): strings and
// binaries by length, numbers by about one byte per two digits plus one, one byte for BOOL and
// NULL, three bytes of overhead for a map or list plus one byte per element.
func (v *av) size() int {
	switch {
	case v == nil:
		return 0
	case v.S != nil:
		return len(*v.S)
	case v.N != nil:
		return len(*v.N)/2 + 1
	case v.B != nil:
		return base64.StdEncoding.DecodedLen(len(*v.B))
	case v.BOOL != nil, v.NULL != nil:
		return 1
	case v.M != nil:
		return 3 + itemSize(v.M)
	case v.L != nil:
		n := 3
		for _, e := range v.L {
			n += 1 + e.size()
		}
		return n
	case v.SS != nil:
		n := 0
		for _, s := range v.SS {
			n += len(s)
		}
		return n
	case v.NS != nil:
		n := 0
		for _, s := range v.NS {
			n += len(s)/2 + 1
		}
		return n
	case v.BS != nil:
		n := 0
		for _, s := range v.BS {
			n += base64.StdEncoding.DecodedLen(len(s))
		}
		return n
	}
	return 0
}

// itemSize is the size of an item: attribute names plus values.
func itemSize(m map[string]*av) int {
	n := 0
	for k, v := range m {
		n += len(k) + v.size()
	}
	return n
}

// typeName is the wire type tag of v ("S", "N", ...), "" for an empty value.
func (v *av) typeName() string {
	switch {
	case v == nil:
		return ""
	case v.S != nil:
		return "S"
	case v.N != nil:
		return "N"
	case v.B != nil:
		return "B"
	case v.BOOL != nil:
		return "BOOL"
	case v.NULL != nil:
		return "NULL"
	case v.M != nil:
		return "M"
	case v.L != nil:
		return "L"
	case v.SS != nil:
		return "SS"
	case v.NS != nil:
		return "NS"
	case v.BS != nil:
		return "BS"
	}
	return ""
}

// compare orders two scalar values of the same type (S, N or B). ok is false when they are not
// comparable: different types, or not scalars.
func compare(a, b *av) (c int, ok bool) {
	switch {
	case a == nil || b == nil:
		return 0, false
	case a.S != nil && b.S != nil:
		return cmpStrings(*a.S, *b.S), true
	case a.N != nil && b.N != nil:
		x, okx := new(big.Float).SetString(*a.N)
		y, oky := new(big.Float).SetString(*b.N)
		if !okx || !oky {
			return 0, false
		}
		return x.Cmp(y), true
	case a.B != nil && b.B != nil:
		x, errx := base64.StdEncoding.DecodeString(*a.B)
		y, erry := base64.StdEncoding.DecodeString(*b.B)
		if errx != nil || erry != nil {
			return 0, false
		}
		return bytes.Compare(x, y), true
	}
	return 0, false
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// equal reports whether two values are equal, sets compared as sets.
func equal(a, b *av) bool {
	if a == nil || b == nil || a.typeName() != b.typeName() {
		return false
	}
	switch a.typeName() {
	case "S", "N", "B":
		c, ok := compare(a, b)
		return ok && c == 0
	case "BOOL":
		return *a.BOOL == *b.BOOL
	case "NULL":
		return true
	case "M":
		if len(a.M) != len(b.M) {
			return false
		}
		for k, x := range a.M {
			if !equal(x, b.M[k]) {
				return false
			}
		}
		return true
	case "L":
		if len(a.L) != len(b.L) {
			return false
		}
		for i := range a.L {
			if !equal(a.L[i], b.L[i]) {
				return false
			}
		}
		return true
	case "SS":
		return sameSet(a.SS, b.SS)
	case "NS":
		return sameSet(a.NS, b.NS)
	case "BS":
		return sameSet(a.BS, b.BS)
	}
	return false
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// AttributeValue is one DynamoDB attribute value in the wire format, as fault hooks see items
// (see Faults).
type AttributeValue = av

// MarshalJSON writes v in the wire format. Unlike the struct tags alone it keeps an empty map
// or list ({"M":{}}, {"L":[]}), which DynamoDB stores and returns as such.
func (v av) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	v.encode(&b)
	return b.Bytes(), nil
}

func (v *av) encode(b *bytes.Buffer) {
	str := func(s string) {
		js, _ := json.Marshal(s)
		b.Write(js)
	}
	strs := func(tag string, ss []string) {
		b.WriteString(`{"` + tag + `":[`)
		for i, s := range ss {
			if i > 0 {
				b.WriteByte(',')
			}
			str(s)
		}
		b.WriteString("]}")
	}
	switch {
	case v.S != nil:
		b.WriteString(`{"S":`)
		str(*v.S)
		b.WriteByte('}')
	case v.N != nil:
		b.WriteString(`{"N":`)
		str(*v.N)
		b.WriteByte('}')
	case v.B != nil:
		b.WriteString(`{"B":`)
		str(*v.B)
		b.WriteByte('}')
	case v.BOOL != nil:
		b.WriteString(`{"BOOL":` + strconv.FormatBool(*v.BOOL) + `}`)
	case v.NULL != nil:
		b.WriteString(`{"NULL":true}`)
	case v.M != nil:
		b.WriteString(`{"M":`)
		encodeItem(b, v.M)
		b.WriteByte('}')
	case v.L != nil:
		b.WriteString(`{"L":[`)
		for i, e := range v.L {
			if i > 0 {
				b.WriteByte(',')
			}
			e.encode(b)
		}
		b.WriteString("]}")
	case v.SS != nil:
		strs("SS", v.SS)
	case v.NS != nil:
		strs("NS", v.NS)
	case v.BS != nil:
		strs("BS", v.BS)
	default:
		b.WriteString(`{"NULL":true}`)
	}
}

// encodeItem writes an item (or a map's members) in the wire format, names in sorted order.
func encodeItem(b *bytes.Buffer, m map[string]*av) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		js, _ := json.Marshal(k)
		b.Write(js)
		b.WriteByte(':')
		m[k].encode(b)
	}
	b.WriteByte('}')
}

// decodeItem parses an item in the wire format. An empty list or map decodes as such (L and M
// non-nil), not as an empty value.
func decodeItem(raw []byte) (map[string]*av, error) {
	var m map[string]*av
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}
