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
