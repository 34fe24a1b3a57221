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

// The per-item cache of projected items answers a projection with its own output only: other
// placeholders for the same paths share it, other paths do not.
func TestProjectionCache(t *testing.T) {
	r := &rec{raw: json.RawMessage(`{"PK":{"S":"P"},"Data":{"M":{"name":{"S":"n"},"status":{"S":"ok"}}}}`)}
	parse := func(expr string, names map[string]string) *projection {
		p, err := parseProjection(expr, names, map[string]bool{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	name := parse("#d.#n", map[string]string{"#d": "Data", "#n": "name"})
	status := parse("#d.#s", map[string]string{"#d": "Data", "#s": "status"})
	nameAgain := parse("#a.#b", map[string]string{"#a": "Data", "#b": "name"})
	for i, c := range []struct {
		p    *projection
		want string
	}{
		{name, `{"Data":{"M":{"name":{"S":"n"}}}}`},
		{status, `{"Data":{"M":{"status":{"S":"ok"}}}}`},
		{nameAgain, `{"Data":{"M":{"name":{"S":"n"}}}}`},
		{nameAgain, `{"Data":{"M":{"name":{"S":"n"}}}}`},
	} {
		out, err := c.p.apply(r)
		if err != nil || string(out) != c.want {
			t.Errorf("read %d: %s, %v; want %s", i, out, err, c.want)
		}
	}
	if name.key != nameAgain.key || name.key == status.key {
		t.Errorf("keys: %q %q %q", name.key, nameAgain.key, status.key)
	}
}
