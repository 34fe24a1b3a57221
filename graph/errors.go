package graph

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Error codes in extensions.code.
const (
	CodeBadUserInput = "BAD_USER_INPUT"
	CodeNotFound     = "NOT_FOUND"
	CodeConflict     = "CONFLICT"
	CodeForbidden    = "FORBIDDEN"
	CodeUnavailable  = "UNAVAILABLE"
	CodeTimeout      = "TIMEOUT"
	CodeInternal     = "INTERNAL_SERVER_ERROR"
	// CodeUnsupported answers an operation the DynamoDB implementation lacks.
	CodeUnsupported = "UNSUPPORTED_BY_BACKEND"
	// CodeIntrospectionDisabled answers __schema and __type when introspection is off.
	CodeIntrospectionDisabled = "INTROSPECTION_DISABLED"
)

// ErrForbidden means the caller's role may not do what it asked.
var ErrForbidden = errors.New("forbidden")

// errorPresenter maps the store's sentinels and the domain's validation errors to
// extensions.code. Anything else reaches the client as "internal error" and its cause is logged:
// no table name, request ID or AWS text ever leaves the server.
func errorPresenter(log *slog.Logger) graphql.ErrorPresenterFunc {
	present := presentError(log)
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := present(ctx, err)
		gerr.Message = boundMessage(gerr.Message)
		return gerr
	}
}

// maxMessageBytes bounds an error message: messages may quote what a client sent (an ID that
// is not one, a value of the wrong type), and a client must not get its megabyte back.
const maxMessageBytes = 512

// boundMessage cuts msg to maxMessageBytes on a character boundary, marking the cut.
func boundMessage(msg string) string {
	if len(msg) <= maxMessageBytes {
		return msg
	}
	cut := maxMessageBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "… (cut)"
}

func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		set := func(code, msg string) *gqlerror.Error {
			gerr.Message = msg
			if gerr.Extensions == nil {
				gerr.Extensions = map[string]any{}
			}
			gerr.Extensions["code"] = code
			return gerr
		}
		var (
			invalid   *catalog.ValidationError
			conflict  *dynamo.ConflictError
			forbidden *ForbiddenError
			own       *gqlerror.Error
		)
		switch {
		case errors.As(err, &invalid):
			set(CodeBadUserInput, invalid.Error())
			if invalid.Field != "" {
				gerr.Extensions["field"] = invalid.Field
			}
			return gerr
		case errors.As(err, &conflict):
			set(CodeConflict, conflict.Error())
			if conflict.CurrentRevision > 0 {
				gerr.Extensions["currentRevision"] = conflict.CurrentRevision
			}
			return gerr
		case errors.Is(err, dynamo.ErrConflict):
			return set(CodeConflict, "conflict: the item changed or already exists")
		case errors.Is(err, dynamo.ErrNotFound):
			return set(CodeNotFound, "not found")
		case errors.As(err, &forbidden):
			return set(CodeForbidden, forbidden.Error())
		case errors.Is(err, dynamo.ErrRequestBudget):
			return set(CodeRequestBudget, "this operation needs more backend requests than one request may make: ask for fewer or smaller connections")
		case errors.Is(err, context.DeadlineExceeded):
			return set(CodeTimeout, "the request deadline passed before this field resolved")
		case errors.Is(err, dynamo.ErrUnsupported):
			log.WarnContext(ctx, "backend lacks an operation", "err", err)
			return set(CodeUnsupported, "this DynamoDB implementation cannot do that (writes need TransactWriteItems: use AWS, DynamoDB Local or the embedded default)")
		case errors.Is(err, dynamo.ErrUnavailable):
			log.WarnContext(ctx, "database unavailable", "err", err)
			return set(CodeUnavailable, "the catalogue database is unavailable; retry later")
		case strings.HasSuffix(err.Error(), "introspection disabled"):
			return set(CodeIntrospectionDisabled, "introspection is disabled on this server")
		case errors.As(err, &own) && own.Err == nil:
			// gqlgen's own parse and validation errors: safe, and already coded.
			return gerr
		}
		log.ErrorContext(ctx, "internal error", "err", err, "path", gerr.Path.String())
		return set(CodeInternal, "internal error")
	}
}
