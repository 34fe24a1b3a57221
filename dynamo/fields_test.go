package dynamo

import (
	"reflect"
	"strings"
	"testing"

	"github.com/capcat/catalogue/catalog"
)

// The keys every partition read fetches must be Data keys of their entity: a typo would make
// the filters and lookups that rely on them see zero values.
func TestRequiredKeysAreDataKeys(t *testing.T) {
	types := map[Segment]any{SegComponents: catalog.Component{}, SegDependencies: catalog.Dependency{}, SegRules: catalog.Rule{}}
	for _, r := range requiredKeys {
		tags := map[string]bool{}
		rt := reflect.TypeOf(types[r.seg])
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			tags[name] = true
		}
		for _, k := range r.keys {
			if !tags[k] {
				t.Errorf("%v: required key %q is not a JSON field of %s", r.seg, k, rt.Name())
			}
		}
	}
}

func TestFieldsProjection(t *testing.T) {
	if expr, names := (Fields{}).projection(SegComponents | SegDependencies); expr != "" || names != nil {
		t.Errorf("zero Fields = %q, %v; want whole items", expr, names)
	}
	if expr, _ := (Fields{Components: []string{"name"}}).projection(SegComponents | SegDependencies); expr != "" {
		t.Errorf("a range with a whole-item entity = %q, want whole items", expr)
	}
	expr, names := Fields{Components: []string{"name", "status", "name"}, Rules: nil}.projection(SegComponents)
	var paths []string
	for _, p := range strings.Split(expr, ", ") {
		var parts []string
		for _, e := range strings.Split(p, ".") {
			parts = append(parts, names[e])
		}
		paths = append(paths, strings.Join(parts, "."))
	}
	want := "PK SK EntityType CreatedAt UpdatedAt Revision Data.capabilityId Data.componentId Data.componentType Data.layer Data.name Data.order Data.status"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("projection paths = %s\nwant %s", got, want)
	}
}
