package memdyn

import (
	"bytes"
	"encoding/base64"
	"errors"
	"unicode/utf8"
)

// rawItemSize returns DynamoDB's size of an item given in the JSON wire format, by scanning the
// bytes without building the item: the same rules as av.size, at a fraction of the cost of
// decoding (a bulk load sends hundreds of thousands of items, each read once here).
func rawItemSize(b []byte) (int, error) {
	s := &scanner{b: b}
	n, err := s.object(func() (int, error) { return s.value() })
	if err != nil {
		return 0, err
	}
	s.space()
	if s.i != len(s.b) {
		return 0, errSyntax
	}
	return n, nil
}

// scanItem returns the size of an item in the JSON wire format and the raw JSON of the values
// of the attributes named in keys, in one pass over the bytes. Names are compared as written:
// a name written with an escape matches none (scanItemNames tells).
func scanItem(b []byte, keys []string) (size int, values map[string][]byte, err error) {
	size, values, _, err = scanItemNames(b, keys)
	return size, values, err
}

// scanItemNames is scanItem, also telling whether an attribute name of the item is written with
// an escape (and so may be one of keys without matching).
func scanItemNames(b []byte, keys []string) (size int, values map[string][]byte, escapedName bool, err error) {
	s := &scanner{b: b}
	values = map[string][]byte{}
	if err := s.expect('{'); err != nil {
		return 0, nil, false, err
	}
	if s.peek() == '}' {
		s.i++
		return 0, values, false, nil
	}
	for {
		start := s.i
		n, _, err := s.str()
		if err != nil {
			return 0, nil, false, err
		}
		name := b[start:s.i]
		if bytes.IndexByte(name, '\\') >= 0 {
			escapedName = true
		}
		if err := s.expect(':'); err != nil {
			return 0, nil, false, err
		}
		s.space()
		vstart := s.i
		m, err := s.value()
		if err != nil {
			return 0, nil, false, err
		}
		size += n + m
		for _, k := range keys {
			if len(name) == len(k)+2 && string(name[1:len(name)-1]) == k {
				values[k] = b[vstart:s.i]
			}
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.space()
			if s.i != len(s.b) {
				return 0, nil, false, errSyntax
			}
			return size, values, escapedName, nil
		default:
			return 0, nil, false, errSyntax
		}
	}
}

var errSyntax = errors.New("memdyn: malformed attribute value JSON")

type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\n' || s.b[s.i] == '\t' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) expect(c byte) error {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != c {
		return errSyntax
	}
	s.i++
	return nil
}

func (s *scanner) peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// str scans a JSON string and returns its decoded length in bytes and, when keep is set, its
// decoded text (for type tags, which are short and unescaped).
func (s *scanner) str() (n int, tag string, err error) {
	if err := s.expect('"'); err != nil {
		return 0, "", err
	}
	start := s.i
	simple := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			if simple {
				tag = string(s.b[start:s.i])
			}
			s.i++
			return n, tag, nil
		case c == '\\':
			simple = false
			if s.i+1 >= len(s.b) {
				return 0, "", errSyntax
			}
			if s.b[s.i+1] != 'u' {
				n++
				s.i += 2
				continue
			}
			if s.i+6 > len(s.b) {
				return 0, "", errSyntax
			}
			r := hex4(s.b[s.i+2 : s.i+6])
			s.i += 6
			if r >= 0xD800 && r < 0xDC00 && s.i+6 <= len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
				s.i += 6 // the low surrogate: one 4-byte rune in all
				n += 4
				continue
			}
			if r < 0 {
				return 0, "", errSyntax
			}
			if l := utf8.RuneLen(rune(r)); l > 0 {
				n += l
			} else {
				n += 3 // a lone surrogate decodes to U+FFFD
			}
		default:
			n++
			s.i++
		}
	}
	return 0, "", errSyntax
}

func hex4(b []byte) int {
	v := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}

// object scans {"name": member, ...}, adding each name's length and what member returns.
func (s *scanner) object(member func() (int, error)) (int, error) {
	if err := s.expect('{'); err != nil {
		return 0, err
	}
	total := 0
	if s.peek() == '}' {
		s.i++
		return 0, nil
	}
	for {
		n, _, err := s.str()
		if err != nil {
			return 0, err
		}
		if err := s.expect(':'); err != nil {
			return 0, err
		}
		m, err := member()
		if err != nil {
			return 0, err
		}
		total += n + m
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return total, nil
		default:
			return 0, errSyntax
		}
	}
}

// value scans one attribute value {"T": payload} and returns its size.
func (s *scanner) value() (int, error) {
	if err := s.expect('{'); err != nil {
		return 0, err
	}
	_, tag, err := s.str()
	if err != nil {
		return 0, err
	}
	if err := s.expect(':'); err != nil {
		return 0, err
	}
	var n int
	switch tag {
	case "S":
		n, _, err = s.str()
	case "N":
		n, _, err = s.str()
		n = n/2 + 1
	case "B":
		n, _, err = s.str()
		n = base64.StdEncoding.DecodedLen(n)
	case "BOOL", "NULL":
		err = s.literal()
		n = 1
	case "M":
		n, err = s.object(func() (int, error) { return s.value() })
		n += 3
	case "L":
		n, err = s.list(func() (int, error) {
			m, err := s.value()
			return 1 + m, err
		})
		n += 3
	case "SS":
		n, err = s.list(func() (int, error) { m, _, err := s.str(); return m, err })
	case "NS":
		n, err = s.list(func() (int, error) { m, _, err := s.str(); return m/2 + 1, err })
	case "BS":
		n, err = s.list(func() (int, error) {
			m, _, err := s.str()
			return base64.StdEncoding.DecodedLen(m), err
		})
	default:
		return 0, errSyntax
	}
	if err != nil {
		return 0, err
	}
	return n, s.expect('}')
}

func (s *scanner) list(elem func() (int, error)) (int, error) {
	if err := s.expect('['); err != nil {
		return 0, err
	}
	total := 0
	if s.peek() == ']' {
		s.i++
		return 0, nil
	}
	for {
		m, err := elem()
		if err != nil {
			return 0, err
		}
		total += m
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return total, nil
		default:
			return 0, errSyntax
		}
	}
}

// literal scans true, false or null.
func (s *scanner) literal() error {
	s.space()
	for _, w := range []string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
			s.i += len(w)
			return nil
		}
	}
	return errSyntax
}
