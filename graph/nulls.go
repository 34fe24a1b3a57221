package graph

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// nullDefaults is the handler extension that gives an explicit null in a defaulted position
// its default: a nullable argument or input-object field declared with a default value takes
// that default when a request sends null for it, as if the request had left it out. Generated
// clients (genqlient's pointer mode, GraphQL Code Generator's optional fields) send null for
// everything unset; the GraphQL specification would otherwise pass the null on, and a null
// status or page size is refused. Positions without a default keep null as null (in
// UpdateComponentInput, status: null still means "no change"); a non-null argument with a
// default still refuses null at validation.
//
// It runs after validation, before execution and before the other extensions that read
// arguments (the limiter's page sizes):
//
//   - Variable values are rewritten in place (they are this request's own): in every input
//     object, at any depth, a null field with a default is removed, so that the generated
//     unmarshalling applies the default. A null variable is removed from the variables when
//     every use of it is an argument with a default (gqlparser's ArgumentMap then applies the
//     argument's default), which changes nothing else.
//   - A null literal in a defaulted position (first: null, input: {status: null}), and a null
//     variable in a defaulted position that cannot be removed (an input-object field, or a
//     variable also used where null stays null), is dropped from a copy of the document. The
//     parsed document is cached and shared between requests: it is never changed, and copied
//     only when it holds such a null.
type nullDefaults struct{ schema *ast.Schema }

var (
	_ graphql.HandlerExtension        = nullDefaults{}
	_ graphql.OperationContextMutator = nullDefaults{}
)

func (nullDefaults) ExtensionName() string                   { return "NullDefaults" }
func (nullDefaults) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext applies the defaults of explicit nulls to the operation's variables
// and, when the document holds a null in a defaulted position, to a copy of the document.
func (n nullDefaults) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Doc == nil {
		return nil
	}
	var nullVars map[string]bool // variables present with the value null
	for _, vd := range oc.Operation.VariableDefinitions {
		v, ok := oc.Variables[vd.Variable]
		switch {
		case !ok:
		case v == nil:
			if nullVars == nil {
				nullVars = map[string]bool{}
			}
			nullVars[vd.Variable] = true
		default:
			n.dropNullFields(vd.Type, v)
		}
	}
	// Without a null variable, only a null literal can need the default, and the text of a
	// document that holds one says "null": the usual operation costs this one search.
	if nullVars == nil && oc.RawQuery != "" && !strings.Contains(oc.RawQuery, "null") {
		return nil
	}
	s := nullScan{schema: n.schema, nullVars: nullVars}
	s.selections(oc.Operation.SelectionSet)
	for _, f := range oc.Doc.Fragments {
		s.selections(f.SelectionSet)
	}
	// A null variable used only as defaulted arguments is removed; its uses need no copy.
	for name := range nullVars {
		if !s.elsewhere[name] {
			delete(oc.Variables, name)
		}
	}
	var drop map[*ast.Value]bool
	for _, p := range s.found {
		if p.Kind == ast.Variable && !s.elsewhere[p.Raw] {
			continue
		}
		if drop == nil {
			drop = map[*ast.Value]bool{}
		}
		drop[p] = true
	}
	if drop != nil {
		oc.Doc, oc.Operation = rewriteDocument(oc.Doc, oc.Operation, drop)
	}
	return nil
}

// dropNullFields removes, in a variable's value v of type t, every null input-object field
// that has a default, at any depth.
func (n nullDefaults) dropNullFields(t *ast.Type, v any) {
	def := n.schema.Types[t.Name()]
	if def == nil || def.Kind != ast.InputObject {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n.dropNullFields(t, e)
		}
	case map[string]any:
		for _, f := range def.Fields {
			fv, ok := x[f.Name]
			switch {
			case !ok:
			case fv == nil:
				if defaulted(f.Type, f.DefaultValue) {
					delete(x, f.Name)
				}
			default:
				n.dropNullFields(f.Type, fv)
			}
		}
	}
}

// defaulted reports whether a position of type t with default value d takes its default for
// an explicit null: it is nullable and has a default.
func defaulted(t *ast.Type, d *ast.Value) bool { return d != nil && t != nil && !t.NonNull }

// nullScan finds the nulls in defaulted positions of a document.
type nullScan struct {
	schema   *ast.Schema
	nullVars map[string]bool
	// found are the values in defaulted positions that are null: null literals, and the
	// variables of nullVars.
	found []*ast.Value
	// elsewhere holds the variables of nullVars used other than as a defaulted argument.
	elsewhere map[string]bool
}

func (s *nullScan) selections(set ast.SelectionSet) {
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			if x.Definition != nil {
				s.arguments(x.Arguments, x.Definition.Arguments)
			}
			s.directives(x.Directives)
			s.selections(x.SelectionSet)
		case *ast.InlineFragment:
			s.directives(x.Directives)
			s.selections(x.SelectionSet)
		case *ast.FragmentSpread:
			s.directives(x.Directives)
		}
	}
}

func (s *nullScan) directives(ds ast.DirectiveList) {
	for _, d := range ds {
		if d.Definition != nil {
			s.arguments(d.Arguments, d.Definition.Arguments)
		}
	}
}

func (s *nullScan) arguments(args ast.ArgumentList, defs ast.ArgumentDefinitionList) {
	for _, a := range args {
		def := defs.ForName(a.Name)
		if def == nil || a.Value == nil {
			continue
		}
		if defaulted(def.Type, def.DefaultValue) && s.null(a.Value) {
			s.found = append(s.found, a.Value)
			continue
		}
		s.value(a.Value, def.Type)
	}
}

// null reports whether v is null: a null literal or a variable of nullVars.
func (s *nullScan) null(v *ast.Value) bool {
	return v.Kind == ast.NullValue || v.Kind == ast.Variable && s.nullVars[v.Raw]
}

// value scans a value of type t. A variable of nullVars met here is used other than as a
// defaulted argument: removed from the variables, it would read as absent (or as its own
// default) where it stands, not as null.
func (s *nullScan) value(v *ast.Value, t *ast.Type) {
	switch v.Kind {
	case ast.Variable:
		if s.nullVars[v.Raw] {
			if s.elsewhere == nil {
				s.elsewhere = map[string]bool{}
			}
			s.elsewhere[v.Raw] = true
		}
	case ast.ListValue:
		elem := t
		if t != nil && t.Elem != nil {
			elem = t.Elem
		}
		for _, c := range v.Children {
			s.value(c.Value, elem)
		}
	case ast.ObjectValue:
		if t == nil {
			return
		}
		def := s.schema.Types[t.Name()]
		if def == nil || def.Kind != ast.InputObject {
			return
		}
		for _, c := range v.Children {
			f := def.Fields.ForName(c.Name)
			if f == nil || c.Value == nil {
				continue
			}
			if defaulted(f.Type, f.DefaultValue) && s.null(c.Value) {
				s.found = append(s.found, c.Value)
				if c.Value.Kind == ast.Variable {
					s.value(c.Value, f.Type) // a variable here cannot be removed
				}
				continue
			}
			s.value(c.Value, f.Type)
		}
	}
}

// rewriteDocument returns a copy of doc and of its operation op in which the arguments and
// input-object fields whose values are in drop are left out. Selection sets, fields, fragment
// spreads and fragments are copied; values only along the paths to what is dropped; doc is
// not changed.
func rewriteDocument(doc *ast.QueryDocument, op *ast.OperationDefinition, drop map[*ast.Value]bool) (*ast.QueryDocument, *ast.OperationDefinition) {
	r := rewriter{drop: drop, fragments: make(map[*ast.FragmentDefinition]*ast.FragmentDefinition, len(doc.Fragments))}
	out := *doc
	out.Fragments = make(ast.FragmentDefinitionList, len(doc.Fragments))
	for i, f := range doc.Fragments {
		c := *f
		out.Fragments[i] = &c
		r.fragments[f] = &c
	}
	for _, f := range out.Fragments {
		f.Directives = r.directives(f.Directives)
		f.SelectionSet = r.selections(f.SelectionSet)
	}
	newOp := *op
	newOp.Directives = r.directives(op.Directives)
	newOp.SelectionSet = r.selections(op.SelectionSet)
	out.Operations = make(ast.OperationList, len(doc.Operations))
	for i, o := range doc.Operations {
		if o == op {
			o = &newOp
		}
		out.Operations[i] = o
	}
	return &out, &newOp
}

type rewriter struct {
	drop      map[*ast.Value]bool
	fragments map[*ast.FragmentDefinition]*ast.FragmentDefinition
}

func (r *rewriter) selections(set ast.SelectionSet) ast.SelectionSet {
	if set == nil {
		return nil
	}
	out := make(ast.SelectionSet, len(set))
	for i, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			c := *x
			c.Arguments, _ = r.arguments(x.Arguments)
			c.Directives = r.directives(x.Directives)
			c.SelectionSet = r.selections(x.SelectionSet)
			out[i] = &c
		case *ast.InlineFragment:
			c := *x
			c.Directives = r.directives(x.Directives)
			c.SelectionSet = r.selections(x.SelectionSet)
			out[i] = &c
		case *ast.FragmentSpread:
			c := *x
			c.Directives = r.directives(x.Directives)
			if d, ok := r.fragments[x.Definition]; ok {
				c.Definition = d
			}
			out[i] = &c
		default:
			out[i] = sel
		}
	}
	return out
}

func (r *rewriter) directives(ds ast.DirectiveList) ast.DirectiveList {
	var out ast.DirectiveList
	for i, d := range ds {
		args, changed := r.arguments(d.Arguments)
		if out == nil && !changed {
			continue
		}
		if out == nil {
			out = append(ast.DirectiveList{}, ds[:i]...)
		}
		c := *d
		c.Arguments = args
		out = append(out, &c)
	}
	if out == nil {
		return ds
	}
	return out
}

// arguments returns list without the arguments whose values are dropped and with the values
// below rewritten, and whether that changed anything (if not, it returns list itself).
func (r *rewriter) arguments(list ast.ArgumentList) (ast.ArgumentList, bool) {
	var out ast.ArgumentList
	changed := false
	for i, a := range list {
		var keep *ast.Argument
		if !r.drop[a.Value] {
			keep = a
			if v := r.value(a.Value); v != a.Value {
				c := *a
				c.Value = v
				keep = &c
			}
		}
		if keep != a && !changed {
			changed = true
			out = append(ast.ArgumentList{}, list[:i]...)
		}
		if changed && keep != nil {
			out = append(out, keep)
		}
	}
	if !changed {
		return list, false
	}
	return out, true
}

// value returns v with the dropped object fields below it left out; v itself when nothing
// changes.
func (r *rewriter) value(v *ast.Value) *ast.Value {
	if v == nil || v.Kind != ast.ListValue && v.Kind != ast.ObjectValue {
		return v
	}
	var children ast.ChildValueList
	changed := false
	for i, c := range v.Children {
		var keep *ast.ChildValue
		if v.Kind == ast.ListValue || !r.drop[c.Value] {
			keep = c
			if nv := r.value(c.Value); nv != c.Value {
				cc := *c
				cc.Value = nv
				keep = &cc
			}
		}
		if keep != c && !changed {
			changed = true
			children = append(ast.ChildValueList{}, v.Children[:i]...)
		}
		if changed && keep != nil {
			children = append(children, keep)
		}
	}
	if !changed {
		return v
	}
	c := *v
	c.Children = children
	return &c
}
