package memdyn

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// canonicalHash returns a hash of the JSON value b (which must be valid JSON, as a successful
// json.Unmarshal has shown) that two encodings of one value share: object members in any order
// (of a name given twice the last counts, as decoding keeps it), strings however escaped
// (invalid UTF-8 read as U+FFFD), numbers however written (compared as float64). It is what
// decoding b into an `any` and encoding it again with json.Marshal gave before, equal for equal
// values and different for different ones, in one pass over the bytes: a transaction's client
// request token hashes its call with it (transact.go), and that decoding and re-encoding took a
// quarter of an embedded write's CPU.
//
// The hashed form is a tagged, length-prefixed encoding, not JSON: an object is 'o', its member
// count, then each member's name and value in sorted order of names; an array 'a', its length
// and its elements; a string 's', its length and its bytes; a number 'n' and its float64 bits;
// true, false and null 't', 'f' and 'z'.
func canonicalHash(b []byte) [sha256.Size]byte {
	c := canons.Get().(*canon)
	c.b, c.i, c.out, c.tmp, c.members = b, 0, c.out[:0], c.tmp[:0], c.members[:0]
	c.value()
	sum := sha256.Sum256(c.out)
	c.b = nil
	canons.Put(c)
	return sum
}

// canons are the buffers of canonicalHash, reused from call to call.
var canons = sync.Pool{New: func() any { return new(canon) }}

type canon struct {
	b   []byte
	i   int
	out []byte
	// members is scratch for sorting one object's members (each object uses its own tail).
	members []member
	tmp     []byte
}

// member is one object member as written to out: the span of its encoding, which starts with
// its name (a 4-byte length, then the name's bytes).
type member struct{ start, end int }

func (c *canon) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *canon) value() {
	c.space()
	if c.i >= len(c.b) {
		return
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		c.object()
	case ch == '[':
		c.i++
		c.out = append(c.out, 'a')
		at := len(c.out)
		c.out = append(c.out, 0, 0, 0, 0) // the length, written at the end
		n := 0
		for {
			c.space()
			if c.i < len(c.b) && c.b[c.i] == ']' {
				c.i++
				break
			}
			if n > 0 && c.b[c.i] == ',' {
				c.i++
			}
			c.value()
			n++
		}
		binary.BigEndian.PutUint32(c.out[at:], uint32(n))
	case ch == '"':
		c.out = append(c.out, 's')
		c.appendString(c.str())
	case ch == 't':
		c.i += len("true")
		c.out = append(c.out, 't')
	case ch == 'f':
		c.i += len("false")
		c.out = append(c.out, 'f')
	case ch == 'n':
		c.i += len("null")
		c.out = append(c.out, 'z')
	default:
		start := c.i
		for c.i < len(c.b) && strings.IndexByte("+-0123456789.eE", c.b[c.i]) >= 0 {
			c.i++
		}
		lit := c.b[start:c.i]
		c.out = append(c.out, 'n')
		if f, err := strconv.ParseFloat(string(lit), 64); err == nil {
			c.out = binary.BigEndian.AppendUint64(c.out, math.Float64bits(f)) // -0 too, as json.Marshal writes "-0"
		} else {
			c.out = append(c.out, 'x') // out of float64's range: kept as written
			c.appendString(lit)
		}
	}
}

func (c *canon) appendString(s []byte) {
	c.out = binary.BigEndian.AppendUint32(c.out, uint32(len(s)))
	c.out = append(c.out, s...)
}

// str reads a string token and returns its decoded bytes: the raw bytes when they hold no
// escape and are valid UTF-8 (the usual case), else what json.Unmarshal decodes.
func (c *canon) str() []byte {
	start := c.i
	c.i++ // the opening quote
	simple := true
	for c.i < len(c.b) {
		ch := c.b[c.i]
		if ch == '\\' {
			simple = false
			c.i += 2
			continue
		}
		if ch == '"' {
			break
		}
		if ch >= utf8.RuneSelf {
			simple = false
		}
		c.i++
	}
	c.i++ // the closing quote
	raw := c.b[start:c.i]
	if simple || (bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw)) {
		return raw[1 : len(raw)-1]
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return []byte(s)
}

func (c *canon) object() {
	c.i++ // {
	base := len(c.members)
	start := len(c.out)
	c.out = append(c.out, 'o', 0, 0, 0, 0) // the member count, written at the end
	for {
		c.space()
		if c.i >= len(c.b) {
			break
		}
		if c.b[c.i] == '}' {
			c.i++
			break
		}
		if c.b[c.i] == ',' {
			c.i++
			c.space()
		}
		name := c.str()
		c.space()
		c.i++ // :
		ms := len(c.out)
		c.appendString(name)
		c.value()
		c.members = append(c.members, member{start: ms, end: len(c.out)})
	}
	ms := c.members[base:]
	defer func() { c.members = c.members[:base] }()
	inOrder := true // strictly: sorted, no name twice
	for i := 1; i < len(ms) && inOrder; i++ {
		inOrder = bytes.Compare(c.name(ms[i-1]), c.name(ms[i])) < 0
	}
	if inOrder { // a single member ({"S": ...}), or sent sorted: written as it is
		binary.BigEndian.PutUint32(c.out[start+1:], uint32(len(ms)))
		return
	}
	// Sorted by name, a repeated name's last occurrence last among its equals; then only that
	// one is kept.
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(c.name(a), c.name(b)) })
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(c.name(ms[i+1]), c.name(m)) {
			continue
		}
		kept = append(kept, m)
	}
	from := start + 5
	c.tmp = append(c.tmp[:0], c.out[from:]...)
	c.out = c.out[:from]
	for _, m := range kept {
		c.out = append(c.out, c.tmp[m.start-from:m.end-from]...)
	}
	binary.BigEndian.PutUint32(c.out[start+1:], uint32(len(kept)))
}

// name is a member's name as written to out.
func (c *canon) name(m member) []byte {
	n := int(binary.BigEndian.Uint32(c.out[m.start:]))
	return c.out[m.start+4 : m.start+4+n]
}
