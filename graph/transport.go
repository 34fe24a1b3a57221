package graph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/internal/reqstats"
)

// Media types of GraphQL over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// httpTransport is GraphQL over HTTP as the GraphQL-over-HTTP spec has it: POST with a JSON
// body, and GET for queries. It stands in for gqlgen's GET and POST transports, which quote a
// body they cannot decode in full in their error and answer request errors with "data": null:
// here the body is decoded once, strictly, never echoed, and a request that fails before
// execution (parse, validation, limits) answers without a data entry, as the GraphQL spec asks.
// It answers every request to the endpoint, the ones it refuses too (other methods, other media
// types, batches), so that every refusal is a JSON error labelled with the media type the
// client accepts.
type httpTransport struct {
	// parserTokens bounds the parse of a GET document that failed, to tell whether it asked
	// for a mutation.
	parserTokens int
	// persisted stores the persisted query a request registers once it may execute.
	persisted *PersistedQueries
}

var _ graphql.Transport = httpTransport{}

// allowedMethods are the methods the endpoint serves, for the Allow header.
const allowedMethods = "GET, POST, OPTIONS"

// Supports reports whether the transport answers r: always. What it does not serve (other
// methods, multipart and form posts, so no cross-site request can send an operation) it refuses
// with an error of its own.
func (httpTransport) Supports(*http.Request) bool { return true }

// requestBody is the shape of a POST body.
type requestBody struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// errBodyShape is what a POST body that is not a GraphQL request is told.
const errBodyShape = "the request body must be a JSON object with query (a string), and optionally operationName (a string), variables and extensions (objects)"

// refusal is a request the transport answers with an HTTP error before GraphQL runs. Its
// message never quotes the request.
type refusal struct {
	status    int
	code, msg string
}

// Do answers r: OPTIONS with the methods served, a GET or POST that is a GraphQL request by
// running it, anything else with a refusal.
func (t httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	switch r.Method {
	case http.MethodOptions:
		w.Header().Set("Allow", allowedMethods)
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet, http.MethodPost:
	default:
		w.Header().Set("Allow", allowedMethods)
		writeHTTPError(w, r, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "the GraphQL endpoint answers GET (queries) and POST")
		return
	}
	params := &graphql.RawParams{Headers: r.Header}
	params.ReadTime.Start = graphql.Now()
	if ref := readParams(r, params); ref != nil {
		writeHTTPError(w, r, ref.status, ref.code, ref.msg)
		return
	}
	params.ReadTime.End = graphql.Now()

	ctx := r.Context()
	op, errs := exec.CreateOperationContext(ctx, params)
	if r.Method == http.MethodGet && t.selectsMutation(op, params) {
		w.Header().Set("Allow", http.MethodPost)
		writeHTTPError(w, r, http.StatusMethodNotAllowed, CodeMethodNotAllowed, "GET runs queries only: send a mutation with POST")
		return
	}
	if errs != nil {
		// A parse or validation failure is 400 under application/graphql-response+json; under
		// application/json every well-formed request is 200, as the GraphQL-over-HTTP spec
		// asks for legacy clients.
		status := http.StatusOK
		if responseType(r) == mediaGraphQLResponse && errcode.GetErrorKind(errs) == errcode.KindProtocol {
			status = http.StatusBadRequest
		}
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, op), boundErrors(errs))
		writeResponse(w, r, status, resp, false)
		return
	}
	t.persisted.commitPersisted(ctx)
	responses, ctx := exec.DispatchOperation(ctx, op)
	writeResponse(w, r, http.StatusOK, responses(ctx), true)
}

// readParams reads the GraphQL request of a GET (its URL's query string) or a POST (its JSON
// body) into params. It returns nil when it could, else why not.
func readParams(r *http.Request, params *graphql.RawParams) *refusal {
	if r.Method == http.MethodGet {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return &refusal{http.StatusBadRequest, CodeBadRequest, "the URL's query string could not be parsed"}
		}
		params.Query, params.OperationName = q.Get("query"), q.Get("operationName")
		for name, into := range map[string]*map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
			if v := q.Get(name); v != "" && decodeJSON(strings.NewReader(v), into) != nil {
				return &refusal{http.StatusBadRequest, CodeBadRequest, name + " must be a JSON object"}
			}
		}
		return nil
	}
	if ref := checkMediaType(r.Header.Get("Content-Type")); ref != nil {
		return ref
	}
	var body requestBody
	if ref := decodeBody(r.Body, &body); ref != nil {
		return ref
	}
	params.Query, params.OperationName, params.Variables, params.Extensions = body.Query, body.OperationName, body.Variables, body.Extensions
	return nil
}

// checkMediaType returns nil when a POST body labelled contentType is one the transport reads
// (application/json, in UTF-8), else a 415: no form posts, no multipart, no application/graphql.
func checkMediaType(contentType string) *refusal {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != mediaJSON {
		return &refusal{http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "a POST body must be application/json"}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &refusal{http.StatusUnsupportedMediaType, CodeUnsupportedMediaType, "a POST body must be application/json in UTF-8"}
	}
	return nil
}

// selectsMutation reports whether the document and operationName of params select an operation
// other than a query: a GET may not run one (the answer is 405), whether or not it would have
// passed validation. A document that failed before its operation was found is parsed again,
// within the token limit, to tell.
func (t httpTransport) selectsMutation(op *graphql.OperationContext, params *graphql.RawParams) bool {
	if op != nil && op.Operation != nil {
		return op.Operation.Operation != ast.Query
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, t.parserTokens)
	if err != nil {
		return false
	}
	o := doc.Operations.ForName(params.OperationName)
	return o != nil && o.Operation != ast.Query
}

// maxRequestErrors bounds the errors of a request refused before execution: validation reports
// one error per bad argument or field, and a small document could otherwise bring back a large
// answer.
const maxRequestErrors = 20

// boundErrors keeps the first maxRequestErrors of errs and says how many more there were.
func boundErrors(errs gqlerror.List) gqlerror.List {
	if len(errs) <= maxRequestErrors {
		return errs
	}
	more := len(errs) - maxRequestErrors
	kept := append(gqlerror.List{}, errs[:maxRequestErrors]...)
	last := gqlerror.Errorf("%d more errors not shown", more)
	errcode.Set(last, errcode.ValidationFailed)
	return append(kept, last)
}

// decodeBody decodes a POST body into body. It returns nil when it could, else why not: a
// batch (a JSON array, as Apollo's BatchHttpLink sends) is refused as such, in one message.
func decodeBody(r io.Reader, body *requestBody) *refusal {
	br := bufio.NewReader(r)
	if firstToken(br) == '[' {
		return &refusal{http.StatusBadRequest, CodeBatchingNotSupported, "batched requests are not supported: send one operation per request, as a JSON object"}
	}
	err := decodeJSON(br, body)
	var tooBig *http.MaxBytesError
	var syntax *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tooBig):
		return &refusal{http.StatusRequestEntityTooLarge, CodeRequestTooLarge, "the request body is over the limit"}
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &refusal{http.StatusBadRequest, CodeBadRequest, "the request body is not valid JSON"}
	default:
		return &refusal{http.StatusBadRequest, CodeBadRequest, errBodyShape}
	}
}

// firstToken returns the first byte of br after JSON whitespace, left unread, or 0 when there
// is none (the error is met again by the decoder).
func firstToken(br *bufio.Reader) byte {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return 0
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		_ = br.UnreadByte()
		return b
	}
}

// decodeJSON decodes one JSON value from r into v, numbers kept as json.Number (gqlgen's
// coercion wants them), and refuses anything after it.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = &json.SyntaxError{}
		}
		return err
	}
	return nil
}

// responseType is the media type of the answer to r: application/graphql-response+json when
// the client asks for it first, else application/json (what legacy clients, sending no
// Accept or */*, understand).
func responseType(r *http.Request) string {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case mediaGraphQLResponse:
			return mediaGraphQLResponse
		case mediaJSON, "*/*", "application/*":
			return mediaJSON
		}
	}
	return mediaJSON
}

// writeResponse writes a GraphQL response to r, labelled with the media type r accepts;
// withData says whether execution began, and so whether the response has a data entry.
func writeResponse(w http.ResponseWriter, r *http.Request, status int, resp *graphql.Response, withData bool) {
	var b []byte
	var err error
	if withData {
		b, err = marshalResponse(resp)
	} else {
		b, err = json.Marshal(struct {
			Errors     gqlerror.List  `json:"errors"`
			Extensions map[string]any `json:"extensions,omitempty"`
		}{resp.Errors, resp.Extensions})
	}
	if err != nil {
		writeHTTPError(w, r, http.StatusInternalServerError, string(catalog.Internal), "internal error")
		return
	}
	w.Header().Set("Content-Type", responseType(r))
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(b))
}

// marshalResponse returns json.Marshal(resp), byte for byte, without running the encoder over
// the data: json.Marshal validates and compacts a json.RawMessage byte by byte (and escapes <, >,
// & and U+2028/U+2029 in it), which on a complete view was about a twentieth of the server's CPU.
// gqlgen writes the data compact and valid, so the encoder would copy it as it is but for those
// characters, which can only stand inside its strings: json.HTMLEscape escapes them as the
// encoder does (a name with an & in the sample catalogue sent every list through the encoder).
// Incremental responses are json.Marshal.
func marshalResponse(resp *graphql.Response) ([]byte, error) {
	d := resp.Data
	if resp.Label != "" || resp.Path != nil || resp.HasNext != nil || len(d) == 0 {
		return json.Marshal(resp)
	}
	if bytes.IndexByte(d, '<') >= 0 || bytes.IndexByte(d, '>') >= 0 || bytes.IndexByte(d, '&') >= 0 || bytes.IndexByte(d, 0xE2) >= 0 {
		var esc bytes.Buffer
		esc.Grow(len(d) + 64)
		json.HTMLEscape(&esc, d)
		d = esc.Bytes()
	}
	b := make([]byte, 0, len(d)+256)
	b = append(b, '{')
	if len(resp.Errors) > 0 {
		e, err := json.Marshal(resp.Errors)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, `"errors":`...), e...), ',')
	}
	b = append(append(b, `"data":`...), d...)
	if len(resp.Extensions) > 0 {
		var err error
		if b, err = appendExtensions(append(b, `,"extensions":`...), resp.Extensions); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendExtensions appends json.Marshal(ext) to b. Every response's extensions are the cost
// (map[string]int) and the request counts (reqstats.Snapshot), which it writes by hand (keys
// sorted, as encoding/json sorts a map's): reflection over them and the re-compaction of the
// snapshots' MarshalJSON cost about a twentieth of a warm complete view. Other values go through
// json.Marshal.
func appendExtensions(b []byte, ext map[string]any) ([]byte, error) {
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(ext)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(reqstats.AppendString(b, k), ':')
		switch v := ext[k].(type) {
		case reqstats.Snapshot:
			b = v.AppendJSON(b)
		case map[string]int:
			if v == nil {
				b = append(b, "null"...)
			} else {
				b = reqstats.AppendIntMap(b, v)
			}
		default:
			e, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			b = append(b, e...)
		}
	}
	return append(b, '}'), nil
}
