package memdyn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"
)

// oldCanonical is the canonical form canonicalHash replaced: the value decoded into an `any`
// and encoded again.
func oldCanonical(b []byte) string {
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

// canonBodies are JSON values of the shapes a TransactWriteItems call has, and the corner cases
// of the encoding: escapes, non-ASCII, repeated names, numbers written differently, nesting.
var canonBodies = []string{
	`{"TransactItems":[{"Put":{"TableName":"T","Item":{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"METADATA"},"WriteSeq":{"N":"3"},"Data":{"M":{"name":{"S":"Alert \"Mgmt\" \u00e9\u4e2d\ud83d\ude00"},"tags":{"L":[{"S":"a"},{"S":"bc"}]},"ok":{"BOOL":true},"none":{"NULL":true},"empty":{"M":{}},"list":{"L":[]}}}},"ConditionExpression":"WriteSeq = :seq","ExpressionAttributeValues":{":seq":{"N":"2"}}}},{"Update":{"TableName":"T","Key":{"PK":{"S":"COUNTERS"},"SK":{"S":"ALL"}},"UpdateExpression":"SET #n = #n + :d","ExpressionAttributeNames":{"#n":"n"},"ExpressionAttributeValues":{":d":{"N":"1"}}}}],"ClientRequestToken":"tok","ReturnConsumedCapacity":"TOTAL"}`,
	`{"a":1,"b":[1,2,{"c":null,"d":true,"e":false}],"f":"x"}`,
	`{"a":1.0,"b":[1,2,{"c":null,"d":true,"e":false}],"f":"\u0078"}`,
	`{"a":1,"a":2}`,
	`{"a":2}`,
	`{"a":-0}`,
	`{"a":0}`,
	`{"a":1e2,"b":"\/<>&"}`,
	`{"a":100,"b":"/<>&"}`,
	`{"ab":"","a":"b"}`,
	`{"a":"b","ab":""}`,
	`{"a":"bab"}`,
	`[]`, `{}`, `[{}]`, `[[]]`, `""`, `"\u0000"`, `null`, `[null]`, `[1,[2]]`, `[[1],2]`,
	" { \"x\" : [ 1 , 2 ] , \"y\" : { } } ",
	`{"x":[1,2],"y":{}}`,
	"\"\xff\"", "\"\xfe\"", `"\ufffd"`,
}

// reorder re-encodes a JSON value with every object's members in a random order, strings with
// random escapes and random whitespace: the same value as a client may send it.
func reorder(r *rand.Rand, v any, b *bytes.Buffer) {
	ws := func() {
		if r.IntN(4) == 0 {
			b.WriteString(" \n\t"[:1+r.IntN(3)])
		}
	}
	ws()
	switch x := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(x))
		for k := range x {
			names = append(names, k)
		}
		sort.Strings(names)
		r.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		b.WriteByte('{')
		for i, k := range names {
			if i > 0 {
				b.WriteByte(',')
			}
			reorder(r, k, b)
			b.WriteByte(':')
			reorder(r, x[k], b)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			reorder(r, e, b)
		}
		b.WriteByte(']')
	case string:
		b.WriteByte('"')
		for _, c := range x {
			if c < 0x80 && c >= 0x20 && c != '"' && c != '\\' && r.IntN(3) > 0 {
				b.WriteRune(c)
			} else if c > 0xffff {
				js, _ := json.Marshal(string(c))
				b.Write(js[1 : len(js)-1])
			} else {
				fmt.Fprintf(b, `\u%04x`, c)
			}
		}
		b.WriteByte('"')
	case float64:
		if r.IntN(2) == 0 {
			b.WriteString(strconv.FormatFloat(x, 'e', -1, 64))
		} else {
			js, _ := json.Marshal(x)
			b.Write(js)
		}
	default:
		js, _ := json.Marshal(x)
		b.Write(js)
	}
	ws()
}

// Two JSON values hash alike exactly when decoding and re-encoding them (the canonical form
// before canonicalHash) gave the same bytes: for every pair of the bodies above, and for each
// body against random re-encodings of it (members reordered, strings escaped, numbers
// rewritten, whitespace added).
func TestCanonicalHashIsTheOldCanonicalForm(t *testing.T) {
	for _, a := range canonBodies {
		if !json.Valid([]byte(a)) {
			t.Fatalf("not JSON: %s", a)
		}
		for _, b := range canonBodies {
			same := oldCanonical([]byte(a)) == oldCanonical([]byte(b))
			if got := canonicalHash([]byte(a)) == canonicalHash([]byte(b)); got != same {
				t.Errorf("canonicalHash(%s) == canonicalHash(%s) is %v; the old canonical forms equal: %v", a, b, got, same)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, a := range canonBodies {
		var v any
		if err := json.Unmarshal([]byte(a), &v); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			var b bytes.Buffer
			reorder(r, v, &b)
			if oldCanonical(b.Bytes()) != oldCanonical([]byte(a)) {
				t.Fatalf("re-encoding changed the value: %s -> %s", a, b.Bytes())
			}
			if canonicalHash(b.Bytes()) != canonicalHash([]byte(a)) {
				t.Errorf("canonicalHash differs for a re-encoding of the same value:\n%s\n%s", a, b.Bytes())
			}
		}
	}
}

// FuzzCanonicalHash holds canonicalHash to the old canonical form on any two JSON values.
func FuzzCanonicalHash(f *testing.F) {
	for i, a := range canonBodies {
		f.Add([]byte(a), []byte(canonBodies[(i+1)%len(canonBodies)]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if !json.Valid(a) || !json.Valid(b) {
			return
		}
		same := oldCanonical(a) == oldCanonical(b)
		if got := canonicalHash(a) == canonicalHash(b); got != same {
			t.Errorf("canonicalHash(%q) == canonicalHash(%q) is %v; the old canonical forms equal: %v", a, b, got, same)
		}
	})
}

func BenchmarkCanonicalHash(b *testing.B) {
	body := []byte(canonBodies[0])
	b.ReportAllocs()
	b.Run("canonicalHash", func(b *testing.B) {
		for b.Loop() {
			canonicalHash(body)
		}
	})
	b.Run("decode and re-encode", func(b *testing.B) {
		for b.Loop() {
			oldCanonical(body)
		}
	})
}
