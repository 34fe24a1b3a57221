package graph

import (
	"reflect"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Reading only the Data keys an operation can use.
//
// Partition reads are shared by every resolver of a request (the loaders cache them), so what
// one read fetches must serve all of them: partitionFields walks the whole operation once and
// collects, for components, dependencies and rules, the fields selected on them anywhere. It
// gives up — whole items — on anything it cannot vouch for: a mutation, a field it does not
// know on those types, the analysis fields that compute over whole entities (dependencyGraph,
// impact, evaluateRules, slaReport, slaBreaches), a fragment on another type. Options.FullItems
// turns it off.

// entityKeys maps, for the three partition entity types, each GraphQL field to the Data key it
// reads: the JSON names of the catalog struct (the seed's names, which are also the schema's),
// and "" for the fields that need no Data key beyond dynamo's required keys (IDs, the
// envelope's revision and times, and the resolvers that work from IDs).
var entityKeys = map[string]map[string]string{
	"Component":  jsonKeys(catalog.Component{}, "id", "revision", "createdAt", "updatedAt", "dependsOn", "dependents", "capability", "metrics"),
	"Dependency": jsonKeys(catalog.Dependency{}, "id", "revision", "createdAt", "updatedAt", "source", "target"),
	"Rule":       jsonKeys(catalog.Rule{}, "id", "revision", "createdAt", "updatedAt", "history"),
}

// borrowed are the fields of other types that resolve from a partition entity's Data: a
// sample's componentName is its component's name now.
var borrowed = map[string]map[string][2]string{
	"Metric": {"componentName": {"Component", "name"}},
}

// wholeEntities are the fields that compute over whole components, dependencies or rules.
var wholeEntities = map[string]map[string]bool{
	"Capability": {"dependencyGraph": true, "impact": true, "evaluateRules": true, "slaReport": true, "slaBreaches": true},
}

func jsonKeys(v any, idOnly ...string) map[string]string {
	keys := map[string]string{}
	t := reflect.TypeOf(v)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = name
		}
	}
	for _, f := range idOnly {
		keys[f] = ""
	}
	return keys
}

// partitionFields returns the Data keys this operation can read from partition items; the
// zero Fields (whole items) when it cannot tell.
func partitionFields(oc *graphql.OperationContext) dynamo.Fields {
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return dynamo.Fields{}
	}
	w := fieldWalk{doc: oc.Doc, keys: map[string][]string{"Component": {}, "Dependency": {}, "Rule": {}}}
	if !w.selections(oc.Operation.SelectionSet, "Query", 0) {
		return dynamo.Fields{}
	}
	return dynamo.Fields{Components: w.keys["Component"], Dependencies: w.keys["Dependency"], Rules: w.keys["Rule"]}
}

type fieldWalk struct {
	doc  *ast.QueryDocument
	keys map[string][]string
}

// selections walks a selection set on type typ; false means give up.
func (w *fieldWalk) selections(set ast.SelectionSet, typ string, depth int) bool {
	if depth > 100 {
		return false
	}
	for _, s := range set {
		ok := false
		switch s := s.(type) {
		case *ast.Field:
			ok = w.field(s, typ, depth)
		case *ast.InlineFragment:
			ok = (s.TypeCondition == "" || s.TypeCondition == typ) && w.selections(s.SelectionSet, typ, depth+1)
		case *ast.FragmentSpread:
			def := s.Definition
			if def == nil && w.doc != nil {
				def = w.doc.Fragments.ForName(s.Name)
			}
			ok = def != nil && def.TypeCondition == typ && w.selections(def.SelectionSet, typ, depth+1)
		}
		if !ok {
			return false
		}
	}
	return true
}

func (w *fieldWalk) field(f *ast.Field, typ string, depth int) bool {
	if strings.HasPrefix(f.Name, "__") {
		return true
	}
	if wholeEntities[typ][f.Name] {
		return false
	}
	if b, ok := borrowed[typ][f.Name]; ok {
		w.keys[b[0]] = append(w.keys[b[0]], b[1])
	}
	if keys, entity := entityKeys[typ]; entity {
		key, known := keys[f.Name]
		if !known {
			return false
		}
		if key != "" {
			w.keys[typ] = append(w.keys[typ], key)
		}
	}
	if len(f.SelectionSet) == 0 {
		return true
	}
	if f.Definition == nil || f.Definition.Type == nil {
		return false
	}
	return w.selections(f.SelectionSet, f.Definition.Type.Name(), depth+1)
}
