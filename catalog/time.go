package catalog

import (
	"io"
	"strconv"
	"time"
)

// TimeLayout is the fixed-width UTC form, with microseconds, in which every timestamp is
// stored and shown, so that string order is time order.
const TimeLayout = "2006-01-02T15:04:05.000000Z"

// Timestamp is an instant stored as TimeLayout text (the GraphQL DateTime scalar). Input in any
// RFC 3339 form is accepted and normalised to UTC microseconds.
type Timestamp struct{ time.Time }

// NewTimestamp returns t truncated to microseconds, in UTC.
func NewTimestamp(t time.Time) Timestamp { return Timestamp{t.UTC().Truncate(time.Microsecond)} }

// ParseTimestamp parses an RFC 3339 timestamp whose UTC form lies in the years 0000 to 9999,
// the fixed width of TimeLayout that keys and stored text rely on. It returns a
// *ValidationError naming the text otherwise.
func ParseTimestamp(s string) (Timestamp, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Timestamp{}, Invalid("", "%q is not an RFC 3339 date-time", s)
	}
	ts := NewTimestamp(t)
	if y := ts.Year(); y < 0 || y > 9999 {
		return Timestamp{}, Invalid("", "%q is outside the years 0000 to 9999 in UTC", s)
	}
	return ts, nil
}

// TimePtr returns a pointer to the Timestamp of t.
func TimePtr(t time.Time) *Timestamp { ts := NewTimestamp(t); return &ts }

// String returns the TimeLayout form.
func (t Timestamp) String() string { return t.UTC().Format(TimeLayout) }

// MarshalText implements encoding.TextMarshaler.
func (t Timestamp) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Timestamp) UnmarshalText(b []byte) error {
	v, err := ParseTimestamp(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// MarshalGQL implements graphql.Marshaler.
func (t Timestamp) MarshalGQL(w io.Writer) { _, _ = io.WriteString(w, strconv.Quote(t.String())) }

// UnmarshalGQL implements graphql.Unmarshaler.
func (t *Timestamp) UnmarshalGQL(v any) error {
	s, ok := v.(string)
	if !ok {
		return Invalid("", "DateTime must be an RFC 3339 string")
	}
	return t.UnmarshalText([]byte(s))
}
