package memdyn

import (
	"encoding/json"
	"testing"
)

// rawItemSize must agree with the size of the decoded item.
func TestRawItemSize(t *testing.T) {
	items := []string{
		`{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"METADATA"},"Revision":{"N":"12"},"Data":{"M":{"name":{"S":"Alert \"Management\" \u00e9\u4e2d\ud83d\ude00"},"tags":{"L":[{"S":"a"},{"S":"bc"}]},"ok":{"BOOL":true},"none":{"NULL":true},"score":{"N":"97.25"},"empty":{"M":{}},"nums":{"NS":["1","22"]},"strs":{"SS":["x","yz"]},"bin":{"B":"aGVsbG8="}}}}`,
		`{}`,
		`{ "A" : { "S" : "" } , "B":{"L":[]}}`,
	}
	for _, raw := range items {
		var m map[string]*av
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		got, err := rawItemSize([]byte(raw))
		if err != nil {
			t.Fatalf("rawItemSize(%s): %v", raw, err)
		}
		if want := itemSize(m); got != want {
			t.Errorf("rawItemSize(%s) = %d, want %d", raw, got, want)
		}
	}
	for _, bad := range []string{`{"A":{"X":"1"}}`, `{"A":{"S":1}}`, `{"A":{"S":"1"}`, `{"A":{"BOOL":yes}}`} {
		if _, err := rawItemSize([]byte(bad)); err == nil {
			t.Errorf("rawItemSize(%s) accepted", bad)
		}
	}
}

func TestScanItem(t *testing.T) {
	raw := `{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"COMPONENT#01#a\"b"},"GSI1PK":{"S":"COMPONENT#api"},"Data":{"M":{"PK":{"S":"inner"}}}}`
	size, values, err := scanItem([]byte(raw), []string{"PK", "SK", "GSI1PK", "GSI1SK"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := rawItemSize([]byte(raw))
	if size != want {
		t.Errorf("size = %d, want %d", size, want)
	}
	if string(values["PK"]) != `{"S":"CAPABILITY#X"}` || string(values["SK"]) != `{"S":"COMPONENT#01#a\"b"}` || values["GSI1SK"] != nil {
		t.Errorf("values = %q", values)
	}
}
