package memdyn

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestProjection(t *testing.T) {
	r := &rec{raw: json.RawMessage(`{"PK":{"S":"P"},"SK":{"S":"S"},"TTL":{"N":"5"},"Data":{"M":{"name":{"S":"n"},"health":{"M":{"status":{"S":"ok"}}},"tags":{"L":[{"S":"a"}]},"secret":{"S":"x"}}},"Other":{"S":"o"}}`)}
	names := map[string]string{"#pk": "PK", "#t": "TTL", "#d": "Data", "#n": "name", "#h": "health", "#g": "tags", "#m": "missing"}
	used := map[string]bool{}
	p, err := parseProjection("#pk, #t ,#d.#n, #d.#h, #d.#g, #d.#m, Other", names, used)
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 7 {
		t.Errorf("names used = %v, want all 7", used)
	}
	out, err := p.apply(r)
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("projected item is not JSON: %v\n%s", err, out)
	}
	_ = json.Unmarshal([]byte(`{"PK":{"S":"P"},"TTL":{"N":"5"},"Other":{"S":"o"},"Data":{"M":{"name":{"S":"n"},"health":{"M":{"status":{"S":"ok"}}},"tags":{"L":[{"S":"a"}]}}}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("projection = %s", out)
	}
	for _, bad := range []string{"#nope", "a.b.c", "a[0]", "#d.#x"} {
		if _, err := parseProjection(bad, names, map[string]bool{}); err == nil {
			t.Errorf("parseProjection(%q) accepted", bad)
		}
	}
}
