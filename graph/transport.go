package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/catalog"
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
type httpTransport struct{}

var _ graphql.Transport = httpTransport{}

// Supports reports whether r is a GET, or a POST of JSON; no other transport is served (no
// multipart and no form posts, so no cross-site request can send an operation).
func (httpTransport) Supports(r *http.Request) bool {
	if r.Header.Get("Upgrade") != "" {
		return false
	}
	if r.Method == http.MethodGet {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mt == mediaJSON
}

// requestBody is the shape of a POST body.
type requestBody struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables"`
	Extensions    map[string]any `json:"extensions"`
}

// errBodyShape is what a POST body that is not a GraphQL request is told.
const errBodyShape = "the request body must be a JSON object with query (a string), and optionally operationName (a string), variables and extensions (objects)"

func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctype := responseType(r)
	w.Header().Set("Content-Type", ctype)
	params := &graphql.RawParams{Headers: r.Header}
	params.ReadTime.Start = graphql.Now()
	if r.Method == http.MethodGet {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			writeHTTPError(w, http.StatusBadRequest, "BAD_REQUEST", "the URL's query string could not be parsed")
			return
		}
		params.Query, params.OperationName = q.Get("query"), q.Get("operationName")
		for name, into := range map[string]*map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
			if v := q.Get(name); v != "" && decodeJSON(strings.NewReader(v), into) != nil {
				writeHTTPError(w, http.StatusBadRequest, "BAD_REQUEST", name+" must be a JSON object")
				return
			}
		}
	} else {
		var body requestBody
		if status, msg := decodeBody(r.Body, &body); status != 0 {
			code := "BAD_REQUEST"
			if status == http.StatusRequestEntityTooLarge {
				code = "REQUEST_TOO_LARGE"
			}
			writeHTTPError(w, status, code, msg)
			return
		}
		params.Query, params.OperationName, params.Variables, params.Extensions = body.Query, body.OperationName, body.Variables, body.Extensions
	}
	params.ReadTime.End = graphql.Now()

	ctx := r.Context()
	op, errs := exec.CreateOperationContext(ctx, params)
	if errs == nil && r.Method == http.MethodGet && op.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		writeHTTPError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "GET runs queries only: send a mutation with POST")
		return
	}
	if errs != nil {
		// A parse or validation failure is 400 under application/graphql-response+json; under
		// application/json every well-formed request is 200, as the GraphQL-over-HTTP spec
		// asks for legacy clients.
		status := http.StatusOK
		if ctype == mediaGraphQLResponse && errcode.GetErrorKind(errs) == errcode.KindProtocol {
			status = http.StatusBadRequest
		}
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, op), boundErrors(errs))
		writeResponse(w, status, resp, false)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, op)
	writeResponse(w, http.StatusOK, responses(ctx), true)
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

// decodeBody decodes a POST body into body. It returns 0 when it could, else the HTTP status
// and a message that never quotes the body.
func decodeBody(r io.Reader, body *requestBody) (int, string) {
	err := decodeJSON(r, body)
	var tooBig *http.MaxBytesError
	var syntax *json.SyntaxError
	switch {
	case err == nil:
		return 0, ""
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "the request body is over the limit"
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return http.StatusBadRequest, "the request body is not valid JSON"
	default:
		return http.StatusBadRequest, errBodyShape
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

// writeResponse writes a GraphQL response; withData says whether execution began, and so
// whether the response has a data entry.
func writeResponse(w http.ResponseWriter, status int, resp *graphql.Response, withData bool) {
	var b []byte
	var err error
	if withData {
		b, err = json.Marshal(resp)
	} else {
		b, err = json.Marshal(struct {
			Errors     gqlerror.List  `json:"errors"`
			Extensions map[string]any `json:"extensions,omitempty"`
		}{resp.Errors, resp.Extensions})
	}
	if err != nil {
		writeHTTPError(w, http.StatusInternalServerError, string(catalog.Internal), "internal error")
		return
	}
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(b))
}
