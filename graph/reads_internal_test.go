package graph

import (
	"testing"
)

// A field that reads the partition but returns something other than its entities computes
// over them (a graph analysis, a rule evaluation) or borrows one of their keys: the projection
// cannot see which Data keys it uses in the operation's selection, so it must name the field
// (wholeEntities or borrowed in projection.go), or its answers would be computed from partial
// items.
func TestProjectionKnowsFieldsOverEntities(t *testing.T) {
	s := NewExecutableSchema(Config{}).Schema()
	segments, err := declaredSegments(s)
	if err != nil {
		t.Fatalf("declaredSegments: %v", err)
	}
	for typ, fields := range segments {
		for name := range fields {
			ret := s.Types[typ].Fields.ForName(name).Type.Name()
			if _, entity := entityKeys[ret]; entity {
				continue
			}
			if _, ok := borrowed[typ][name]; !ok && !wholeEntities[typ][name] {
				t.Errorf("%s.%s reads the partition and returns %s, not its entities: name it in wholeEntities or borrowed (graph/projection.go)", typ, name, ret)
			}
		}
	}
}
