package reqstats

import (
	"encoding/json"
	"testing"
)

// TestSnapshotJSON holds the wire shapes of extensions.dynamodb and extensions.s3.
func TestSnapshotJSON(t *testing.T) {
	tests := []struct {
		name    string
		measure Measure
		want    string
	}{
		{"capacity", Capacity, `{"requests":2,"readCapacityUnits":1.5,"writeCapacityUnits":0,"operations":{"GetObject":1,"Query":1}}`},
		{"bytes", Bytes, `{"requests":2,"bytes":140,"operations":{"GetObject":1,"Query":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(tt.measure)
			s.Request("Query", 40)
			s.Request("GetObject", 0)
			s.Received(100)
			s.Capacity(1.499, 0)
			got, err := json.Marshal(s.Snapshot())
			if err != nil || string(got) != tt.want {
				t.Errorf("json.Marshal(Snapshot()) = %s, %v, want %s", got, err, tt.want)
			}
		})
	}
	if got, _ := json.Marshal(Empty(Bytes)); string(got) != `{"requests":0,"bytes":0,"operations":{}}` {
		t.Errorf("json.Marshal(Empty(Bytes)) = %s", got)
	}
}

// AppendJSON writes byte for byte what encoding/json writes for the same fields by reflection:
// numbers of every size (floats in both notations), odd operation names, no operations, and
// the cache counts.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	reflected := func(s Snapshot) string {
		var b []byte
		if s.Measure == Bytes {
			b, _ = json.Marshal(struct {
				Requests   int            `json:"requests"`
				Bytes      int64          `json:"bytes"`
				Operations map[string]int `json:"operations"`
			}{s.Requests, s.Bytes, s.Operations})
		} else {
			b, _ = json.Marshal(struct {
				Requests           int            `json:"requests"`
				ReadCapacityUnits  float64        `json:"readCapacityUnits"`
				WriteCapacityUnits float64        `json:"writeCapacityUnits"`
				Operations         map[string]int `json:"operations"`
				Cache              *CacheCounts   `json:"cache,omitempty"`
			}{s.Requests, s.ReadCapacityUnits, s.WriteCapacityUnits, s.Operations, s.Cache})
		}
		return string(b)
	}
	for _, s := range []Snapshot{
		Empty(Capacity), Empty(Bytes), {Measure: Capacity},
		{Measure: Capacity, Requests: -3, ReadCapacityUnits: 1e-7, WriteCapacityUnits: 2.5e21, Operations: map[string]int{"Query": 1, "BatchGetItem": 12, "a<b&\"c\"\n": -1, "é": 2}},
		{Measure: Capacity, Requests: 1 << 40, ReadCapacityUnits: 123456.78, WriteCapacityUnits: 0.01, Operations: map[string]int{"GetItem": 1}, Cache: &CacheCounts{Hits: 14, Misses: 2}},
		{Measure: Bytes, Requests: 7, Bytes: 1 << 50, Operations: map[string]int{"PutObject": 3, "GetObject": 4}, Cache: &CacheCounts{Hits: 1}},
	} {
		want := reflected(s)
		if got := string(s.AppendJSON([]byte("x"))); got != "x"+want {
			t.Errorf("AppendJSON = %s, want x%s", got, want)
		}
		if got, err := json.Marshal(s); err != nil || string(got) != want {
			t.Errorf("json.Marshal = %s, %v, want %s", got, err, want)
		}
	}
	m := map[string]int{"requested": 50, "limit": 50000}
	if got, want := string(AppendIntMap(nil, m)), `{"limit":50000,"requested":50}`; got != want {
		t.Errorf("AppendIntMap = %s, want %s", got, want)
	}
}
