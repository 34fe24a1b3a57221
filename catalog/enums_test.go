package catalog

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// Every vocabulary value marshals, from the table written once, as before (the JSON string of
// its upper-case name) and without allocating; a value outside the vocabularies is spelt out
// the same way.
func TestMarshalEnum(t *testing.T) {
	var all []string
	for _, vs := range [][]string{enumStrings(CapabilityStatuses), enumStrings(Priorities), enumStrings(Criticalities),
		enumStrings(HealthStatuses), enumStrings(ComponentStatuses), enumStrings(DependencyTypes), enumStrings(JobTypes),
		enumStrings(JobStatuses), enumStrings(MetricTypes), enumStrings(RuleTypes), enumStrings(RuleStatuses)} {
		all = append(all, vs...)
	}
	var buf bytes.Buffer
	for _, v := range append(all, "not_in_a_vocabulary", `odd "value"`) {
		buf.Reset()
		marshalEnum(&buf, v)
		if want := strconv.Quote(strings.ToUpper(v)); buf.String() != want {
			t.Errorf("marshalEnum(%q) = %s, want %s", v, buf.String(), want)
		}
	}
	buf.Grow(1 << 10)
	if n := testing.AllocsPerRun(100, func() { buf.Reset(); ComponentActive.MarshalGQL(&buf) }); n != 0 {
		t.Errorf("%v allocations per enum value, want 0", n)
	}
}
