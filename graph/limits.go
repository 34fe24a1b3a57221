package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Limits bound what one request may ask for (GitHub's GraphQL API and the OWASP GraphQL cheat
// sheet are the anchors). Zero fields take the defaults of DefaultLimits.
type Limits struct {
	// MaxCost is the most nodes an operation may request, counted before execution from the
	// connection sizes (GitHub's formula: each connection's `first` times the `first` of every
	// connection above it, summed).
	MaxCost int
	// MaxDepth is the deepest field nesting allowed.
	MaxDepth int
	// MaxFields is the most fields an operation may select, fragments expanded.
	MaxFields int
	// MaxAliases is the most aliased fields an operation may hold.
	MaxAliases int
	// MaxRepeats is the most times one response name may occur in a selection set once
	// fragments are expanded and same-named fields merged (validation compares each pair).
	MaxRepeats int
	// MaxFragments is the most fragment definitions a document may hold.
	MaxFragments int
	// MaxVariables is the most variables a document may declare.
	MaxVariables int
	// MaxDirectives is the most directives a document may use.
	MaxDirectives int
	// MaxArguments is the most arguments of one field or directive, and the most fields of one
	// input object literal.
	MaxArguments int
	// MaxOperations is the most operations a document may hold.
	MaxOperations int
	// ParserTokens bounds the tokens of a query document.
	ParserTokens int
	// MaxQueryBytes bounds the text of a query document (variables carry data).
	MaxQueryBytes int
	// MaxDynamoDBRequests and MaxS3Requests bound the backend requests of one query,
	// retries included: past them a field fails with REQUEST_BUDGET_EXCEEDED, its request
	// unsent. The cost limit bounds what a query may return; these bound what it may cost.
	MaxDynamoDBRequests int
	MaxS3Requests       int
	// MaxBody is the largest request body in bytes (larger is HTTP 413).
	MaxBody int64
}

// DefaultLimits are the limits when none are configured.
var DefaultLimits = Limits{
	MaxCost: 50_000, MaxDepth: 15, MaxFields: 1_000, MaxAliases: 30,
	MaxRepeats: 50, MaxFragments: 100, MaxVariables: 100, MaxDirectives: 100, MaxArguments: 100, MaxOperations: 100,
	ParserTokens: 15_000, MaxQueryBytes: 256 << 10, MaxBody: 1 << 20,
	MaxDynamoDBRequests: 300, MaxS3Requests: 400,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ set, def *int }{
		{&l.MaxCost, &d.MaxCost}, {&l.MaxDepth, &d.MaxDepth}, {&l.MaxFields, &d.MaxFields}, {&l.MaxAliases, &d.MaxAliases},
		{&l.MaxRepeats, &d.MaxRepeats}, {&l.MaxFragments, &d.MaxFragments}, {&l.MaxVariables, &d.MaxVariables}, {&l.MaxDirectives, &d.MaxDirectives},
		{&l.MaxArguments, &d.MaxArguments}, {&l.MaxOperations, &d.MaxOperations}, {&l.ParserTokens, &d.ParserTokens}, {&l.MaxQueryBytes, &d.MaxQueryBytes},
		{&l.MaxDynamoDBRequests, &d.MaxDynamoDBRequests}, {&l.MaxS3Requests, &d.MaxS3Requests},
	} {
		if *f.set > 0 {
			*f.def = *f.set
		}
	}
	if l.MaxBody > 0 {
		d.MaxBody = l.MaxBody
	}
	return d
}

// Error codes of the limits.
const (
	CodeCostLimit  = "COST_LIMIT_EXCEEDED"
	CodeDepthLimit = "DEPTH_LIMIT_EXCEEDED"
	CodeFieldLimit = "FIELD_LIMIT_EXCEEDED"
	CodeAliasLimit = "ALIAS_LIMIT_EXCEEDED"
)

// unpaginatedFanout is what an unpaginated list field (components, dependencies, rules...)
// multiplies the connections below it by: a capability holds at most 99 components.
const unpaginatedFanout = 100

// limiter is the gqlgen extension that enforces Limits: those the document alone can judge
// before gqlgen validates it (checkDocument), the cost and `first` arguments after, all before
// execution, so a refused request costs no DynamoDB request. It reports extensions.cost on
// every response, and refuses to start what the request deadline has overtaken.
type limiter struct {
	limits Limits
	// cache is gqlgen's cache of parsed and validated documents: a document found there passed
	// these checks already.
	cache graphql.Cache[*ast.QueryDocument]
}

var (
	_ graphql.HandlerExtension          = limiter{}
	_ graphql.OperationParameterMutator = limiter{}
	_ graphql.OperationContextMutator   = limiter{}
	_ graphql.ResponseInterceptor       = limiter{}
)

// MutateOperationParameters parses a document that gqlgen has not validated yet and refuses it
// when it breaks a document limit, before validation, whose cost grows with the square of a
// document's width. A parse error is answered here, as gqlgen would, without a second parse.
func (l limiter) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if err := ctx.Err(); err != nil {
		return timeoutError()
	}
	if n := len(params.Query); n > l.limits.MaxQueryBytes {
		return limitError(CodeQueryTooLarge, "the query document is %d bytes; the limit is %d: pass data in variables", n, l.limits.MaxQueryBytes)
	}
	if l.cache != nil {
		if _, ok := l.cache.Get(ctx, params.Query); ok {
			return nil
		}
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, l.limits.ParserTokens)
	var parseErr *gqlerror.Error
	switch {
	case errors.As(err, &parseErr):
		errcode.Set(parseErr, errcode.ParseFailed)
		return parseErr
	case err != nil:
		return nil // gqlgen parses again and reports it
	}
	return checkDocument(doc, l.limits)
}

// timeoutError says that the request deadline passed before the operation could start.
func timeoutError() *gqlerror.Error {
	return limitError(string(catalog.Timeout), "the request deadline passed before the operation started")
}

func (limiter) ExtensionName() string                   { return "Limits" }
func (limiter) Validate(graphql.ExecutableSchema) error { return nil }

// walk is the state of one pass over an operation.
type walk struct {
	op        *graphql.OperationContext
	cost      int
	badFirst  *gqlerror.Error
	fragments map[string]bool
}

func (l limiter) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return timeoutError()
	}
	// Queries, which anyone may send, have a budget of backend requests; mutations are the
	// work of a role that may write (archiveMetrics reads and writes thousands of items).
	// Callers without a key get a quarter of the DynamoDB budget, and the whole S3 budget: the
	// explorer's capability page, once its metrics window has been archived, reads an archived
	// hour per component and hour of the window (and lists each job's artifacts), which for a
	// capability of about 50 components fills 400; on the embedded S3 a GET costs about a
	// tenth of a millisecond, and a repeated one none (the archive keeps the hours it read).
	if op.Operation.Operation == ast.Query {
		share := 1
		if CallerFrom(ctx).Name == anonymousCaller {
			share = 4
		}
		if s := dynamo.StatsFrom(ctx); s != nil {
			s.Limit(max(1, l.limits.MaxDynamoDBRequests/share))
		}
		if s := blob.StatsFrom(ctx); s != nil {
			s.Limit(l.limits.MaxS3Requests)
		}
	}
	w := &walk{op: op, fragments: map[string]bool{}}
	w.selections(op.Operation.SelectionSet, 1)
	if info := requestInfoFrom(ctx); info != nil {
		info.setCost(w.cost)
	}
	// Depth, fields and aliases were judged before validation (checkDocument); what needs the
	// schema is judged here.
	switch {
	case w.badFirst != nil:
		return w.badFirst
	case w.cost > l.limits.MaxCost:
		return limitError(CodeCostLimit, "the query may request %d nodes; the limit is %d: ask for smaller pages", w.cost, l.limits.MaxCost)
	}
	return nil
}

func limitError(code, format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": code}}
}

// selections walks a selection set under connections whose sizes multiply to fanout.
func (w *walk) selections(set ast.SelectionSet, fanout int) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			w.field(s, fanout)
		case *ast.InlineFragment:
			w.selections(s.SelectionSet, fanout)
		case *ast.FragmentSpread:
			if s.Definition != nil && !w.fragments[s.Name] {
				w.fragments[s.Name] = true // a fragment spread inside itself is a validation error anyway
				w.selections(s.Definition.SelectionSet, fanout)
				delete(w.fragments, s.Name)
			}
		}
	}
}

func (w *walk) field(f *ast.Field, fanout int) {
	if f.Definition == nil || f.Definition.Type == nil || strings.HasPrefix(f.Name, "__") {
		w.selections(f.SelectionSet, fanout)
		return
	}
	named := f.Definition.Type.Name()
	switch {
	case strings.HasSuffix(named, "Connection"):
		first := w.first(f, named)
		fanout = saturatingMul(fanout, first)
		w.cost = saturatingAdd(w.cost, fanout)
	case f.Definition.Type.Elem != nil && len(f.SelectionSet) > 0 && !pageOf(f):
		if root(f) {
			// A root field that returns a list of objects (executeRules, nodes) requests its
			// nodes as a connection of its bound does; below the root a list only multiplies.
			bound := w.listBound(f)
			w.cost = saturatingAdd(w.cost, bound)
			fanout = saturatingMul(fanout, bound)
			break
		}
		fanout = saturatingMul(fanout, unpaginatedFanout)
	}
	w.selections(f.SelectionSet, fanout)
}

// first returns a connection's page size, recording a BAD_USER_INPUT error for one out of range.
func (w *walk) first(f *ast.Field, connection string) int {
	limit := dynamo.MaxPage
	if connection == "MetricConnection" {
		limit = dynamo.MaxMetricsPage
	}
	args := f.ArgumentMap(w.op.Variables)
	size, name := args["first"], "first"
	if connection == "ChangeConnection" && args["last"] != nil && !givenArgument(f, "first", w.op.Variables) {
		// The change feed pages either way: last, when given without first, is the page
		// size (first's default is then not the request's).
		size, name = args["last"], "last"
	}
	var n int
	switch v := size.(type) {
	case int:
		n = v
	case int64:
		n = int(v)
	case float64:
		n = int(v)
	default:
		n = -1
	}
	if (n < 1 || n > limit) && w.badFirst == nil {
		w.badFirst = &gqlerror.Error{
			Message:    fmt.Sprintf("%s: %s must be between 1 and %d", f.Name, name, limit),
			Extensions: map[string]any{"code": string(catalog.BadUserInput), "field": name},
		}
	}
	return max(min(n, limit), 1)
}

// root reports whether f is a field of the operation's root type (Query, Mutation).
func root(f *ast.Field) bool {
	return f.ObjectDefinition != nil && (f.ObjectDefinition.Name == "Query" || f.ObjectDefinition.Name == "Mutation")
}

// listBound is the most nodes a root list field may return: executeRules executes at most
// dynamo.MaxRulesPerExecution rules, nodes(ids:) answers one node an ID (at most maxNodes),
// any other counts unpaginatedFanout.
func (w *walk) listBound(f *ast.Field) int {
	switch f.Name {
	case "executeRules":
		return dynamo.MaxRulesPerExecution
	case "nodes":
		if ids, ok := f.ArgumentMap(w.op.Variables)["ids"].([]any); ok {
			return max(1, min(len(ids), maxNodes))
		}
		return maxNodes
	}
	return unpaginatedFanout
}

// pageOf reports whether f lists the items of a page (a connection's nodes or edges), which its
// connection's first has already counted.
func pageOf(f *ast.Field) bool {
	return f.ObjectDefinition != nil && strings.HasSuffix(f.ObjectDefinition.Name, "Connection")
}

func saturatingMul(a, b int) int {
	if a > 0 && b > (1<<40)/a {
		return 1 << 40
	}
	return a * b
}

func saturatingAdd(a, b int) int { return min(a+b, 1<<40) }

// InterceptResponse adds extensions.cost to every response.
func (l limiter) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	if resp.Extensions == nil {
		resp.Extensions = map[string]any{}
	}
	cost := 0
	if info := requestInfoFrom(ctx); info != nil {
		cost = info.getCost()
	}
	resp.Extensions["cost"] = map[string]int{"requested": cost, "limit": l.limits.MaxCost}
	return resp
}
