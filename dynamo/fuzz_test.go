package dynamo

import (
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// FuzzParseKeys checks that no sort key, however malformed, makes a parser panic, and that every
// key a builder makes from valid IDs parses back to those IDs.
func FuzzParseKeys(f *testing.F) {
	f.Add("COMPONENT#01#ui-dashboard-alert-001", "api-server-alert-001", 4)
	f.Add("DEPENDENCY#api-server-alert-001#database-alert-001", "x", 1)
	f.Add("JOB#2025-11-22T10:00:00.000000Z#JOB-DEPLOY-456", "JOB-1", 99)
	f.Add("METRIC#api-server-alert-001#performance#2025-11-22T14:30:00.000000Z", "c", 0)
	f.Add("RULE#001#rule-alert-severity-mapping", "r", 999)
	f.Add("VERSION#RULE#r#v000003", "##", -1)
	f.Fuzz(func(t *testing.T, sk, id string, n int) {
		_, _, _ = parseComponentSK(sk)
		_, _, _ = parseDependencySK(sk)
		_, _, _ = parseJobSK(sk)
		_, _, _, _ = parseMetricSK(sk)
		_, _, _ = parseRuleSK(sk)
		_, _ = parseVersionSK(sk)
		_, _ = parseCapabilityPK(sk)
		if ValidateID("id", id) != nil {
			return
		}
		if strings.Contains(id, "#") {
			t.Fatalf("ValidateID(%q) accepted a '#'", id)
		}
		order := (n%99+99)%99 + 1
		if o, got, err := parseComponentSK(componentSK(order, id)); err != nil || o != order || got != id {
			t.Fatalf("parseComponentSK(componentSK(%d, %q)) = %d, %q, %v", order, id, o, got, err)
		}
		target := id[:min(len(id), 127)] + "x" // another valid ID, even beside a 128-character one
		if s, d, err := parseDependencySK(dependencySK(id, target)); err != nil || s != id || d != target {
			t.Fatalf("parseDependencySK round trip of %q = %q, %q, %v", id, s, d, err)
		}
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Microsecond)
		if st, j, err := parseJobSK(jobSK(at, id)); err != nil || j != id || !st.Equal(at) {
			t.Fatalf("parseJobSK round trip of %q = %v, %q, %v", id, st, j, err)
		}
		if c, mt, ts, err := parseMetricSK(metricSK(id, catalog.MetricResource, at)); err != nil || c != id || mt != catalog.MetricResource || !ts.Equal(at) {
			t.Fatalf("parseMetricSK round trip of %q = %q, %q, %v, %v", id, c, mt, ts, err)
		}
		ro := (n%999+999)%999 + 1
		if o, r, err := parseRuleSK(ruleSK(ro, id)); err != nil || o != ro || r != id {
			t.Fatalf("parseRuleSK round trip of %q = %d, %q, %v", id, o, r, err)
		}
	})
}

// FuzzDecodeCursor checks that no cursor string makes decoding panic, that only cursors the
// store signed are accepted, and that a signed cursor is accepted only by its own query.
func FuzzDecodeCursor(f *testing.F) {
	s := New(nil, Options{CursorSecret: []byte("fuzz")})
	good := s.encodeCursor("capabilities|", true, &item{PK: "CAPABILITY#A", SK: "METADATA", GSI1PK: capabilitiesPK, GSI1SK: "ops#01#a"})
	f.Add(good)
	f.Add("")
	f.Add("not a cursor")
	f.Add(good[:len(good)-2])
	f.Fuzz(func(t *testing.T, cursor string) {
		q := query{index: true, pk: capabilitiesPK}
		key, err := s.decodeCursor("capabilities|", q, cursor)
		if err == nil && cursor != "" && cursor != good {
			// Another encoding of the same bytes (base64 without padding is unique) must not
			// exist; anything accepted must decode to a key of the query's partition.
			if str(key[attrGSI1PK]) != capabilitiesPK {
				t.Fatalf("decodeCursor(%q) accepted a key outside the query: %v", cursor, key)
			}
		}
		if _, err := s.decodeCursor("domain|ops", query{index: true, pk: domainPK("ops")}, cursor); err == nil && cursor != "" {
			t.Fatalf("decodeCursor(%q) accepted a cursor of another query", cursor)
		}
	})
}
