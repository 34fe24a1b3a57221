package dynamo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Reading items straight off the wire.
//
// The SDK turns every item of a Query or BatchGetItem response into a tree of AttributeValue
// interfaces, which attributevalue would walk again by reflection into catalog structs: on a
// complete capability view that is a large share of the server's CPU time and of its garbage.
// The item decoder below sits between the SDK's deserializer and the transport: it reads the
// response body once, converts each item's Data map from DynamoDB JSON to plain JSON (which
// decodeJSON, a drop-in for encoding/json, decodes into the catalog types: they all carry the
// seed's JSON names),
// parses the envelope attributes directly, and hands the SDK the rest of the body (counts,
// LastEvaluatedKey, UnprocessedKeys, ConsumedCapacity) to deserialize as usual. The items reach
// the store through the output's ResultMetadata. The store asks for this per call, through the
// context (withWireItems): other users of the same client see the SDK's output as usual, and a
// client without the decoder (any *dynamodb.Client a caller builds) still works through Items.
//
// The wire format is DynamoDB's own, so this runs unchanged against AWS: the response checksum
// (X-Amz-Crc32) is still verified, when the reader closes the body.

// wireItemsKey marks a context whose calls want the decoder, and keys the decoded items in the
// SDK's result metadata.
type wireItemsKey struct{}

// wireItemDecoder installs the decoder on the stacks of Query and BatchGetItem.
func wireItemDecoder(stack *middleware.Stack) error {
	switch stack.ID() {
	case "Query", "BatchGetItem":
	default:
		return nil
	}
	return stack.Deserialize.Insert(middleware.DeserializeMiddlewareFunc("CatalogueItemDecoder", decodeResponseItems),
		"OperationDeserializer", middleware.After)
}

func decodeResponseItems(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil || ctx.Value(wireItemsKey{}) == nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, md, nil // errors are the SDK's to read
	}
	body, err := readBody(resp.Body, resp.ContentLength)
	cerr := resp.Body.Close() // the checksum is verified on Close
	if err != nil || cerr != nil {
		resp.Body = http.NoBody // read and closed: nothing left for the SDK to drain
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), err == nil && cerr != nil:
		// The body came short (a connection cut mid-body, by the network or a proxy) or failed
		// its checksum. The call is a read: the SDK's retryer may send it again.
		return out, md, &smithy.DeserializationError{Err: &badReadBody{cmp.Or(err, cerr)}}
	case err != nil:
		return out, md, &smithy.DeserializationError{Err: fmt.Errorf("read response: %w", err)}
	}
	items, rest, err := splitItems(body)
	if err != nil {
		// Not what DynamoDB sends: give the SDK the body as it came, to report.
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return out, md, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(rest))
	md.Set(wireItemsKey{}, items)
	return out, md, nil
}

// badReadBody is the body of a read that arrived short or failed its checksum. Reads are
// idempotent, so it tells the SDK's retryer (aws/retry.RetryableError) to send the call again,
// within the client's attempts; the SDK's own decoder would fail such a call for good.
type badReadBody struct{ err error }

func (e *badReadBody) Error() string        { return "read response: " + e.err.Error() }
func (e *badReadBody) Unwrap() error        { return e.err }
func (e *badReadBody) RetryableError() bool { return true }

// readBody reads a response body in one allocation when its length is known.
func readBody(r io.Reader, length int64) ([]byte, error) {
	if length <= 0 || length > 64<<20 {
		return io.ReadAll(r)
	}
	b := make([]byte, length+1) // one more, to see the end of the body
	n, err := io.ReadFull(r, b)
	switch {
	case err == nil:
		return nil, fmt.Errorf("body longer than its Content-Length %d", length)
	case err != io.ErrUnexpectedEOF && err != io.EOF:
		return nil, err
	case int64(n) != length:
		return nil, fmt.Errorf("body of %d bytes, shorter than its Content-Length %d: %w", n, length, io.ErrUnexpectedEOF)
	}
	return b[:n], nil
}

// withWireItems asks the decoder to take the items of the responses to calls made with the
// returned context; the caller reads them with responseItems. Other callers of the same client
// get the SDK's output untouched.
func withWireItems(ctx context.Context) context.Context {
	return context.WithValue(ctx, wireItemsKey{}, true)
}

// wireItems returns the items the decoder took out of a response, if it ran.
func wireItems(md middleware.Metadata) ([]*item, bool) {
	items, ok := md.Get(wireItemsKey{}).([]*item)
	return items, ok
}

// ResponseItems is the number of items a Query or BatchGetItem response carried when the
// store's client decoded them itself (its output's Items and Responses are then empty); ok is
// false for a response the SDK decoded.
func ResponseItems(md middleware.Metadata) (n int, ok bool) {
	items, ok := wireItems(md)
	return len(items), ok
}

var errWire = errors.New("unexpected DynamoDB JSON")

// splitItems parses a Query ("Items") or BatchGetItem ("Responses") response body: it returns
// the items and the body without them.
func splitItems(body []byte) (items []*item, rest []byte, err error) {
	s := &wireScanner{b: body}
	rest = make([]byte, 0, 256)
	rest = append(rest, '{')
	// All the items' Data share one buffer, sized on the body: DynamoDB JSON is longer than the
	// plain JSON it becomes.
	data := make([]byte, 0, len(body))
	s.object(func(key []byte) {
		switch string(key) {
		case `"Items"`:
			s.array(func() { items, data = s.item(items, data) })
		case `"Responses"`:
			s.object(func([]byte) {
				s.array(func() { items, data = s.item(items, data) })
			})
		default:
			if len(rest) > 1 {
				rest = append(rest, ',')
			}
			rest = append(rest, key...)
			rest = append(rest, ':')
			rest = append(rest, s.skip()...)
		}
	})
	s.ws()
	if s.err == nil && s.i != len(s.b) {
		s.fail()
	}
	if s.err != nil {
		return nil, nil, s.err
	}
	return items, append(rest, '}'), nil
}

// wireScanner reads DynamoDB JSON. The first error sticks; every method is a no-op after it.
type wireScanner struct {
	b   []byte
	i   int
	err error
}

func (s *wireScanner) fail() {
	if s.err == nil {
		s.err = fmt.Errorf("%w at byte %d", errWire, s.i)
	}
	s.i = len(s.b)
}

func (s *wireScanner) ws() {
	i := s.i
	for i < len(s.b) && (s.b[i] == ' ' || s.b[i] == '\n' || s.b[i] == '\t' || s.b[i] == '\r') {
		i++
	}
	s.i = i
}

// next skips white space and returns the next byte without consuming it (0 at the end).
func (s *wireScanner) next() byte {
	if s.i < len(s.b) && s.b[s.i] > ' ' { // DynamoDB sends compact JSON
		return s.b[s.i]
	}
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *wireScanner) expect(c byte) {
	if s.next() != c {
		s.fail()
		return
	}
	s.i++
}

// object reads {"key": value, ...}, calling member with each raw key (quotes included) with
// the scanner at its value, which member must consume.
func (s *wireScanner) object(member func(key []byte)) {
	s.expect('{')
	if s.next() == '}' {
		s.i++
		return
	}
	for s.err == nil {
		key := s.str()
		s.expect(':')
		member(key)
		switch s.next() {
		case ',':
			s.i++
		case '}':
			s.i++
			return
		default:
			s.fail()
		}
	}
}

// array reads [value, ...], calling elem with the scanner at each value.
func (s *wireScanner) array(elem func()) {
	s.expect('[')
	if s.next() == ']' {
		s.i++
		return
	}
	for s.err == nil {
		elem()
		switch s.next() {
		case ',':
			s.i++
		case ']':
			s.i++
			return
		default:
			s.fail()
		}
	}
}

// str reads a string and returns it raw: quotes and escapes as they are on the wire.
func (s *wireScanner) str() []byte {
	if s.next() != '"' {
		s.fail()
		return nil
	}
	b, start := s.b, s.i
	i := start + 1
	// Eight bytes at a time while none of them is a quote, a backslash or a control character.
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if hasZeroByte(x^quotes)|hasZeroByte(x^backslashes)|hasByteBelow(x, ' ') != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		c := b[i]
		if plainByte[c] {
			continue
		}
		switch {
		case c == '\\':
			if n := escapeLen(b[i+1:]); n > 0 {
				i += n
				continue
			}
			s.i = i
			s.fail()
			return nil
		case c == '"':
			s.i = i + 1
			return b[start:s.i]
		default: // a control character
			s.i = i
			s.fail()
			return nil
		}
	}
	s.fail()
	return nil
}

const (
	ones        = 0x0101010101010101
	highs       = 0x8080808080808080
	quotes      = '"' * ones
	backslashes = '\\' * ones
)

// hasZeroByte is non-zero when one of x's bytes is 0.
func hasZeroByte(x uint64) uint64 { return (x - ones) &^ x & highs }

// hasByteBelow is non-zero when one of x's bytes is below n (n <= 128).
func hasByteBelow(x uint64, n byte) uint64 { return (x - uint64(n)*ones) &^ x & highs }

// escapeLen returns the length of the JSON escape that b starts with (after the backslash),
// 0 when it is not one.
func escapeLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 1
	case 'u':
		if len(b) < 5 {
			return 0
		}
		for _, c := range b[1:5] {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return 0
			}
		}
		return 5
	}
	return 0
}

// plainByte marks the bytes a JSON string holds as they are: not a quote, a backslash or a
// control character.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skip reads any value and returns it raw.
func (s *wireScanner) skip() []byte {
	start := s.i
	switch c := s.next(); {
	case c == '{':
		s.object(func([]byte) { s.skip() })
	case c == '[':
		s.array(func() { s.skip() })
	case c == '"':
		s.str()
	default:
		switch lit := s.literal(); string(lit) {
		case "true", "false", "null":
		default:
			if !isJSONNumber(lit) {
				s.fail()
			}
		}
	}
	return s.b[start:s.i]
}

// literal reads a number, true, false or null, raw.
func (s *wireScanner) literal() []byte {
	s.ws()
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E' {
			s.i++
			continue
		}
		break
	}
	if s.i == start {
		s.fail()
	}
	return s.b[start:s.i]
}

// item reads one item: the envelope into an item, the Data map as plain JSON appended to data.
func (s *wireScanner) item(items []*item, data []byte) ([]*item, []byte) {
	it := &item{}
	var created, updated []byte
	s.object(func(key []byte) {
		switch string(key) {
		case `"` + attrPK + `"`:
			it.PK = s.scalarString("S")
		case `"` + attrSK + `"`:
			it.SK = s.scalarString("S")
		case `"` + attrEntityType + `"`:
			it.EntityType = s.scalarString("S")
		case `"` + attrGSI1PK + `"`:
			it.GSI1PK = s.scalarString("S")
		case `"` + attrGSI1SK + `"`:
			it.GSI1SK = s.scalarString("S")
		case `"` + attrCreatedAt + `"`:
			created = s.scalar("S")
		case `"` + attrUpdatedAt + `"`:
			updated = s.scalar("S")
		case `"` + attrRevision + `"`:
			it.Revision = int(s.scalarInt())
		case `"` + attrTTL + `"`:
			it.TTL = s.scalarInt()
		case `"` + attrWriteSeq + `"`:
			it.WriteSeq = int(s.scalarInt())
		case `"` + attrDeleting + `"`:
			it.Deleting = string(s.scalar("BOOL")) == "true"
		case `"` + attrDeleted + `"`:
			it.Deleted = string(s.scalar("BOOL")) == "true"
		case `"` + attrActorName + `"`:
			it.ActorName = s.scalarString("S")
		case `"` + attrActorRole + `"`:
			it.ActorRole = s.scalarString("S")
		case `"` + attrRequestID + `"`:
			it.RequestID = s.scalarString("S")
		case `"` + attrData + `"`:
			start, at := len(data), s.i
			data = s.value(data)
			it.wire = s.b[at:s.i]
			if s.err == nil && (len(data) == start || data[start] != '{') {
				s.fail() // Data is always a map
			}
			it.raw = data[start:len(data):len(data)]
		default:
			s.skip()
		}
	})
	if s.err != nil {
		return items, data
	}
	if it.PK == "" || it.SK == "" {
		s.err = errors.New("read item: missing PK or SK")
		return items, data
	}
	for _, t := range []struct {
		raw []byte
		to  *time.Time
	}{{created, &it.CreatedAt}, {updated, &it.UpdatedAt}} {
		if t.raw == nil {
			continue
		}
		v, err := time.Parse(time.RFC3339Nano, unquote(t.raw))
		if err != nil {
			s.err = fmt.Errorf("read item %s/%s: %w", it.PK, it.SK, err)
			return items, data
		}
		*t.to = v
	}
	return append(items, it), data
}

// scalar reads a one-member attribute value {"<tag>": v} and returns v raw.
func (s *wireScanner) scalar(tag string) []byte {
	var v []byte
	s.object(func(key []byte) {
		if v != nil || len(key) != len(tag)+2 || string(key[1:len(key)-1]) != tag {
			s.fail()
			return
		}
		if tag == "S" || tag == "N" {
			v = s.str()
		} else {
			v = s.literal()
		}
	})
	if v == nil {
		s.fail()
	}
	return v
}

func (s *wireScanner) scalarString(tag string) string {
	raw := s.scalar(tag)
	if s.err != nil {
		return ""
	}
	return unquote(raw)
}

func (s *wireScanner) scalarInt() int64 {
	raw := s.scalar("N")
	if s.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(unquote(raw), 10, 64)
	if err != nil {
		s.fail()
	}
	return n
}

// value converts one attribute value to plain JSON, appended to dst: S and B (base64) stay
// strings, N becomes a number, BOOL and NULL literals, M an object, L an array, SS/BS arrays of
// strings and NS an array of numbers — what attributevalue.Unmarshal makes of them.
func (s *wireScanner) value(dst []byte) []byte {
	seen := false
	s.object(func(key []byte) {
		if seen {
			s.fail()
			return
		}
		seen = true
		switch string(key) {
		case `"S"`, `"B"`:
			dst = append(dst, s.str()...)
		case `"N"`:
			dst = s.number(dst, s.str())
		case `"BOOL"`:
			switch lit := s.literal(); string(lit) {
			case "true", "false":
				dst = append(dst, lit...)
			default:
				s.fail()
			}
		case `"NULL"`:
			if lit := s.literal(); string(lit) != "true" && string(lit) != "false" {
				s.fail()
			}
			dst = append(dst, "null"...)
		case `"M"`:
			dst = append(dst, '{')
			n := 0
			s.object(func(k []byte) {
				if n > 0 {
					dst = append(dst, ',')
				}
				n++
				dst = append(dst, k...)
				dst = append(dst, ':')
				dst = s.value(dst)
			})
			dst = append(dst, '}')
		case `"L"`:
			dst = s.list(dst, s.value)
		case `"SS"`, `"BS"`:
			dst = s.list(dst, func(d []byte) []byte { return append(d, s.str()...) })
		case `"NS"`:
			dst = s.list(dst, func(d []byte) []byte { return s.number(d, s.str()) })
		default:
			s.fail()
		}
	})
	if !seen {
		s.fail()
	}
	return dst
}

func (s *wireScanner) list(dst []byte, elem func([]byte) []byte) []byte {
	dst = append(dst, '[')
	n := 0
	s.array(func() {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = elem(dst)
	})
	return append(dst, ']')
}

// number appends the DynamoDB number in the raw string quoted as a JSON number. DynamoDB sends
// numbers in JSON's grammar; anything else is parsed and rewritten.
func (s *wireScanner) number(dst, quoted []byte) []byte {
	if s.err != nil || len(quoted) < 2 {
		s.fail()
		return dst
	}
	n := quoted[1 : len(quoted)-1]
	if isJSONNumber(n) {
		return append(dst, n...)
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		s.fail()
		return dst
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// isJSONNumber reports whether b is a number in JSON's grammar.
func isJSONNumber(b []byte) bool {
	i := 0
	digits := func() int {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch d := digits(); {
	case d == 0:
		return false
	case d > 1 && b[i-d] == '0':
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// unquote returns the string a raw JSON string holds.
func unquote(raw []byte) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var v string
	_ = json.Unmarshal(raw, &v)
	return v
}

// responseItems returns the items of a response: those the wire decoder read, or else the
// SDK's.
func responseItems(md middleware.Metadata, sdk []map[string]types.AttributeValue) ([]*item, error) {
	if items, ok := wireItems(md); ok {
		return items, nil
	}
	items := make([]*item, 0, len(sdk))
	for _, raw := range sdk {
		it, err := readItem(raw)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// data returns the item's Data as attribute values: Data itself, or for an item the wire
// decoder read, the values parsed from the bytes it came in (exactly as the SDK would have
// read them), for the writers that copy a read item (version history, the deletion mark).
func (it *item) data() (map[string]types.AttributeValue, error) {
	if it.Data != nil || it.wire == nil {
		return it.Data, nil
	}
	s := &wireScanner{b: it.wire}
	v := s.attributeValue()
	s.ws()
	if s.err == nil && s.i != len(s.b) {
		s.fail()
	}
	m, ok := v.(*types.AttributeValueMemberM)
	if s.err != nil || !ok {
		return nil, fmt.Errorf("item %s/%s: Data: %w", it.PK, it.SK, errors.Join(s.err, errWire))
	}
	it.Data = m.Value
	return it.Data, nil
}

// attributeValue reads one DynamoDB JSON attribute value into the SDK's type.
func (s *wireScanner) attributeValue() types.AttributeValue {
	var v types.AttributeValue
	strs := func() []string {
		var out []string
		s.array(func() { out = append(out, unquote(s.str())) })
		return out
	}
	bin := func(raw []byte) []byte {
		b, err := base64.StdEncoding.DecodeString(unquote(raw))
		if err != nil {
			s.fail()
		}
		return b
	}
	s.object(func(key []byte) {
		if v != nil {
			s.fail()
			return
		}
		switch string(key) {
		case `"S"`:
			v = &types.AttributeValueMemberS{Value: unquote(s.str())}
		case `"N"`:
			v = &types.AttributeValueMemberN{Value: unquote(s.str())}
		case `"B"`:
			v = &types.AttributeValueMemberB{Value: bin(s.str())}
		case `"BOOL"`:
			v = &types.AttributeValueMemberBOOL{Value: string(s.literal()) == "true"}
		case `"NULL"`:
			v = &types.AttributeValueMemberNULL{Value: string(s.literal()) == "true"}
		case `"M"`:
			m := map[string]types.AttributeValue{}
			s.object(func(k []byte) { m[unquote(k)] = s.attributeValue() })
			v = &types.AttributeValueMemberM{Value: m}
		case `"L"`:
			l := []types.AttributeValue{}
			s.array(func() { l = append(l, s.attributeValue()) })
			v = &types.AttributeValueMemberL{Value: l}
		case `"SS"`:
			v = &types.AttributeValueMemberSS{Value: strs()}
		case `"NS"`:
			v = &types.AttributeValueMemberNS{Value: strs()}
		case `"BS"`:
			var bs [][]byte
			s.array(func() { bs = append(bs, bin(s.str())) })
			v = &types.AttributeValueMemberBS{Value: bs}
		default:
			s.fail()
		}
	})
	if v == nil {
		s.fail()
	}
	return v
}
