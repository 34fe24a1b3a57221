package graph

import (
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The limits judged from the document alone, before gqlgen validates it. gqlparser's validation
// holds rules that are quadratic in the size of a selection set, a fragment list, an argument
// list or a directive list (OverlappingFieldsCanBeMerged compares every pair of fields and of
// fragments that meet in one selection set), so a document of 15,000 tokens could cost seconds
// of CPU. Everything here is one pass over the parsed document: fragments are expanded by
// memoised counts, never by walking them again, so a chain of fragments that doubles at each
// link costs one visit per fragment.

// Error codes of the document limits (the field, alias and depth codes are shared with the
// post-validation limits).
const (
	CodeFragmentLimit  = "FRAGMENT_LIMIT_EXCEEDED"
	CodeVariableLimit  = "VARIABLE_LIMIT_EXCEEDED"
	CodeDirectiveLimit = "DIRECTIVE_LIMIT_EXCEEDED"
	CodeArgumentLimit  = "ARGUMENT_LIMIT_EXCEEDED"
	CodeOperationLimit = "OPERATION_LIMIT_EXCEEDED"
	CodeNameLimit      = "NAME_LIMIT_EXCEEDED"
	CodeQueryTooLarge  = "QUERY_TOO_LARGE"
	// CodeIntrospectionLimit refuses a document that asks for the schema more than
	// maxIntrospection times: each answer is tens of kilobytes of work.
	CodeIntrospectionLimit = "INTROSPECTION_LIMIT_EXCEEDED"
)

// Bounds of a document that are not configurable.
const (
	// maxNameBytes bounds every name of a document (fields, aliases, arguments, variables,
	// fragments, operations, directives): an alias is repeated in every object of a list, so
	// its length multiplies the response.
	maxNameBytes = 100
	// maxIntrospection bounds the __schema and __type fields of an operation, fragments
	// expanded (GraphiQL asks for __schema once): each answers up to about 300 KB.
	maxIntrospection = 1
)

// span is what a selection set amounts to once its fragments are expanded: its fields,
// aliases and introspection fields, and how deep its fields nest.
type span struct{ fields, aliases, introspection, depth int }

func (s span) plus(o span) span {
	return span{saturatingAdd(s.fields, o.fields), saturatingAdd(s.aliases, o.aliases),
		saturatingAdd(s.introspection, o.introspection), max(s.depth, o.depth)}
}

// CodeValidationFailed is gqlgen's code for a document that fails validation; the checks use
// it for a fragment cycle, which they find first.
const CodeValidationFailed = "GRAPHQL_VALIDATION_FAILED"

// docCheck is one pass over a parsed document.
type docCheck struct {
	limits    Limits
	fragments map[string]*ast.FragmentDefinition
	spans     map[string]span // expanded fragments
	expanding map[string]bool // the fragments being expanded
	cycle     string          // a fragment found inside itself

	// Raw counts over the whole document, fragments not expanded.
	fields, spreads, arguments, directives, widest, nesting int
	// unknown is a fragment spread whose fragment the document does not define; long is a
	// name over maxNameBytes.
	unknown, long string
}

// checkDocument returns the first limit that doc breaks, or nil. It looks at every operation
// and fragment of the document, not only the one to run: validation walks them all.
func checkDocument(doc *ast.QueryDocument, l Limits) *gqlerror.Error {
	if n := len(doc.Operations); n > l.MaxOperations {
		return limitError(CodeOperationLimit, "the document holds %d operations; the limit is %d: send the operation you run", n, l.MaxOperations)
	}
	if n := len(doc.Fragments); n > l.MaxFragments {
		return limitError(CodeFragmentLimit, "the document defines %d fragments; the limit is %d", n, l.MaxFragments)
	}
	c := &docCheck{limits: l, fragments: make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		spans: map[string]span{}, expanding: map[string]bool{}}
	for _, f := range doc.Fragments {
		c.fragments[f.Name] = f
	}
	variables := 0
	for _, op := range doc.Operations {
		variables += len(op.VariableDefinitions)
		c.name(op.Name)
		c.directiveList(op.Directives)
		for _, v := range op.VariableDefinitions {
			c.name(v.Variable)
			c.directiveList(v.Directives)
			c.value(v.DefaultValue, 1)
		}
		c.raw(op.SelectionSet, 1)
	}
	for _, f := range doc.Fragments {
		c.name(f.Name)
		c.directiveList(f.Directives)
		c.raw(f.SelectionSet, 1)
	}
	switch {
	case c.long != "":
		return limitError(CodeNameLimit, "the document holds a name of %d bytes; the limit is %d", len(c.long), maxNameBytes)
	case c.unknown != "":
		return limitError(CodeValidationFailed, "unknown fragment %q", c.unknown)
	case c.spreads > l.MaxFields:
		return limitError(CodeFragmentLimit, "the document spreads fragments %d times; the limit is %d", c.spreads, l.MaxFields)

	case variables > l.MaxVariables:
		return limitError(CodeVariableLimit, "the document declares %d variables; the limit is %d", variables, l.MaxVariables)
	case c.directives > l.MaxDirectives:
		return limitError(CodeDirectiveLimit, "the document uses %d directives; the limit is %d", c.directives, l.MaxDirectives)
	case c.arguments > l.MaxFields:
		return limitError(CodeArgumentLimit, "the document passes %d arguments; the limit is %d", c.arguments, l.MaxFields)
	case c.widest > l.MaxArguments:
		return limitError(CodeArgumentLimit, "a field or input object of the document has %d arguments or fields; the limit is %d", c.widest, l.MaxArguments)
	case c.nesting > maxNesting:
		return limitError(CodeDepthLimit, "the document nests selections or values %d levels deep; the limit is %d", c.nesting, maxNesting)
	case c.fields > l.MaxFields:
		return limitError(CodeFieldLimit, "the document holds %d fields; the limit is %d", c.fields, l.MaxFields)
	}
	var total span
	for _, op := range doc.Operations {
		s := c.expand(op.SelectionSet)
		switch {
		case c.cycle != "":
			return limitError(CodeValidationFailed, "cannot spread fragment %q within itself", c.cycle)
		case s.depth > l.MaxDepth:
			return limitError(CodeDepthLimit, "the query nests %d levels deep; the limit is %d", s.depth, l.MaxDepth)
		case s.aliases > l.MaxAliases:
			return limitError(CodeAliasLimit, "the query uses %d aliases; the limit is %d", s.aliases, l.MaxAliases)
		case s.fields > l.MaxFields:
			return limitError(CodeFieldLimit, "the query selects %d fields; the limit is %d", s.fields, l.MaxFields)
		case s.introspection > maxIntrospection:
			return limitError(CodeIntrospectionLimit, "the query asks for the schema %d times; the limit is %d", s.introspection, maxIntrospection)
		}
		total = total.plus(s)
	}
	// Every fragment is validated, used or not: each must be within the field limit expanded.
	for _, f := range doc.Fragments {
		s := c.fragment(f.Name)
		if c.cycle != "" {
			return limitError(CodeValidationFailed, "cannot spread fragment %q within itself", c.cycle)
		}
		if s.fields > l.MaxFields || s.depth > l.MaxDepth {
			return limitError(CodeFieldLimit, "fragment %s selects %d fields %d levels deep; the limits are %d and %d", f.Name, s.fields, s.depth, l.MaxFields, l.MaxDepth)
		}
	}
	if total.fields > l.MaxFields {
		return limitError(CodeFieldLimit, "the document's %d operations select %d fields together; the limit is %d: send the operation you run",
			len(doc.Operations), total.fields, l.MaxFields)
	}
	// Fields are known to be few now, and fragments acyclic: walking them expanded is cheap.
	for _, op := range doc.Operations {
		if name, n := c.repeats([]ast.SelectionSet{op.SelectionSet}, map[string]bool{}); n > l.MaxRepeats {
			return limitError(CodeFieldLimit, "the query selects %q %d times in one selection set (fragments and same-named fields merged); the limit is %d", name, n, l.MaxRepeats)
		}
	}
	return nil
}

// repeats returns the response name that occurs most often in the selection sets sets merged
// into one, as validation merges them (inline fragments and fragment spreads flattened, the
// sub-selections of same-named fields merged), at any depth, with its count. Validation
// compares every pair of fields that share a response name, so the count bounds its cost.
func (c *docCheck) repeats(sets []ast.SelectionSet, path map[string]bool) (string, int) {
	groups := map[string][]*ast.Field{}
	var order []string
	var collect func(set ast.SelectionSet)
	collect = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch x := sel.(type) {
			case *ast.Field:
				name := x.Alias
				if name == "" {
					name = x.Name
				}
				if _, ok := groups[name]; !ok {
					order = append(order, name)
				}
				groups[name] = append(groups[name], x)
			case *ast.InlineFragment:
				collect(x.SelectionSet)
			case *ast.FragmentSpread:
				if def := c.fragments[x.Name]; def != nil && !path[x.Name] {
					path[x.Name] = true
					collect(def.SelectionSet)
					delete(path, x.Name)
				}
			}
		}
	}
	for _, set := range sets {
		collect(set)
	}
	worst, most := "", 0
	for _, name := range order {
		fields := groups[name]
		if len(fields) > most {
			worst, most = name, len(fields)
		}
		var subs []ast.SelectionSet
		for _, f := range fields {
			if len(f.SelectionSet) > 0 {
				subs = append(subs, f.SelectionSet)
			}
		}
		if len(subs) > 0 {
			if n, k := c.repeats(subs, path); k > most {
				worst, most = n, k
			}
		}
	}
	return worst, most
}

// maxNesting bounds how deep selection sets, inline fragments, lists and input objects may nest
// in a document, whatever the field depth: it keeps every recursive walk of the document
// shallow.
const maxNesting = 64

// raw counts the fields, directives and arguments of a selection set at a nesting level.
func (c *docCheck) raw(set ast.SelectionSet, level int) {
	c.nesting = max(c.nesting, level)
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			c.fields++
			c.name(s.Alias)
			c.name(s.Name)
			c.directiveList(s.Directives)
			c.argumentList(s.Arguments, level)
			c.raw(s.SelectionSet, level+1)
		case *ast.InlineFragment:
			c.directiveList(s.Directives)
			c.raw(s.SelectionSet, level+1)
		case *ast.FragmentSpread:
			c.spreads++
			c.name(s.Name)
			if c.fragments[s.Name] == nil && c.unknown == "" {
				c.unknown = s.Name
			}
			c.directiveList(s.Directives)
		}
	}
}

func (c *docCheck) directiveList(list ast.DirectiveList) {
	c.directives += len(list)
	for _, d := range list {
		c.name(d.Name)
		c.argumentList(d.Arguments, 1)
	}
}

func (c *docCheck) argumentList(args ast.ArgumentList, level int) {
	c.widest = max(c.widest, len(args))
	c.arguments += len(args)
	for _, a := range args {
		c.name(a.Name)
		c.value(a.Value, level)
	}
}

// name notes a name over maxNameBytes.
func (c *docCheck) name(n string) {
	if len(n) > maxNameBytes && c.long == "" {
		c.long = n
	}
}

// value measures a literal: its nesting and the width of its objects and lists' objects.
func (c *docCheck) value(v *ast.Value, level int) {
	if v == nil {
		return
	}
	c.nesting = max(c.nesting, level)
	if v.Kind == ast.ObjectValue {
		c.widest = max(c.widest, len(v.Children))
		c.arguments += len(v.Children)
	}
	for _, child := range v.Children {
		c.name(child.Name)
		c.value(child.Value, level+1)
	}
}

// expand returns the span of a selection set with its fragments expanded.
func (c *docCheck) expand(set ast.SelectionSet) span {
	var s span
	for _, sel := range set {
		switch x := sel.(type) {
		case *ast.Field:
			f := c.expand(x.SelectionSet)
			f.fields = saturatingAdd(f.fields, 1)
			if x.Alias != "" && x.Alias != x.Name {
				f.aliases = saturatingAdd(f.aliases, 1)
			}
			f.depth++
			if x.Name == "__schema" || x.Name == "__type" {
				f.introspection = saturatingAdd(f.introspection, 1)
			}
			s = s.plus(f)
		case *ast.InlineFragment:
			s = s.plus(c.expand(x.SelectionSet))
		case *ast.FragmentSpread:
			s = s.plus(c.fragment(x.Name))
		}
	}
	return s
}

// fragment returns the expanded span of the fragment named name, computed once.
func (c *docCheck) fragment(name string) span {
	if s, ok := c.spans[name]; ok {
		return s
	}
	def := c.fragments[name]
	if def == nil {
		return span{} // unknown: validation refuses the document
	}
	if c.expanding[name] {
		c.cycle = name
		return span{}
	}
	c.expanding[name] = true
	s := c.expand(def.SelectionSet)
	delete(c.expanding, name)
	c.spans[name] = s
	return s
}
