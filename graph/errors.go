package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// ErrForbidden means the caller's role may not do what it asked.
var ErrForbidden = catalog.NewError(catalog.Forbidden, "forbidden")

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

// presentError answers err with the code catalog.CodeOf finds in it (the one place where the
// error vocabulary meets GraphQL) and a message that says what the client can do; the adapter's
// own text, which may name a table, a bucket or an AWS request, stays in the log.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gerr := graphql.DefaultErrorPresenter(ctx, err)
		set := func(code catalog.ErrorCode, msg string) *gqlerror.Error {
			gerr.Message = msg
			if gerr.Extensions == nil {
				gerr.Extensions = map[string]any{}
			}
			gerr.Extensions["code"] = string(code)
			return gerr
		}
		if introspectionRefused(ctx, err) {
			err = fmt.Errorf("%w: %w", catalog.IntrospectionDisabled, err)
		}
		var (
			invalid   *catalog.ValidationError
			conflict  *dynamo.ConflictError
			missing   *catalog.NotFoundError
			forbidden *ForbiddenError
			own       *gqlerror.Error
		)
		switch code := catalog.CodeOf(err); code {
		case catalog.BadUserInput:
			if errors.As(err, &invalid) {
				set(code, invalid.Error())
				if invalid.Field != "" {
					gerr.Extensions["field"] = invalid.Field
				}
				return gerr
			}
			return set(code, "the input is not valid")
		case catalog.Conflict:
			if errors.As(err, &conflict) {
				set(code, conflict.Error())
				if conflict.CurrentRevision > 0 {
					gerr.Extensions["currentRevision"] = conflict.CurrentRevision
				}
				return gerr
			}
			return set(code, "conflict: the item changed or already exists")
		case catalog.NotFound:
			if errors.As(err, &missing) {
				set(code, missing.Error())
				gerr.Extensions["entity"] = missing.Entity
				gerr.Extensions["id"] = missing.ID
				if missing.CapabilityID != "" {
					gerr.Extensions["capabilityId"] = missing.CapabilityID
				}
				return gerr
			}
			return set(code, "not found")
		case catalog.Forbidden:
			if errors.As(err, &forbidden) {
				return set(code, forbidden.Error())
			}
			return set(code, "forbidden")
		case catalog.RequestBudget:
			return set(code, "this operation needs more backend requests than one request may make: ask for fewer or smaller connections")
		case catalog.Timeout:
			return set(code, "the request deadline passed before this field resolved")
		case catalog.Unsupported:
			log.WarnContext(ctx, "backend lacks an operation", "err", err)
			return set(code, "this DynamoDB implementation cannot do that (writes need TransactWriteItems: use AWS, DynamoDB Local or the embedded default)")
		case catalog.Unavailable:
			log.WarnContext(ctx, "backend unavailable", "err", err)
			if errors.Is(err, blob.ErrUnavailable) || errors.Is(err, errNoObjectStore) {
				return set(code, "the object store is unavailable; retry later")
			}
			return set(code, "the catalogue database is unavailable; retry later")
		case catalog.Corrupt:
			log.ErrorContext(ctx, "corrupt data", "err", err, "path", gerr.Path.String())
			return set(code, "stored data needed here is damaged; it is logged for an operator")
		case catalog.IntrospectionDisabled:
			return set(code, "introspection is disabled on this server")
		}
		if errors.As(err, &own) && own.Err == nil {
			// gqlgen's own parse and validation errors: safe, and already coded.
			return gerr
		}
		log.ErrorContext(ctx, "internal error", "err", err, "path", gerr.Path.String())
		return set(catalog.Internal, "internal error")
	}
}

// introspectionRefused reports whether err is gqlgen's refusal of __schema or __type on an
// operation that may not introspect: the field and the operation say so, not the error's text.
func introspectionRefused(ctx context.Context, err error) bool {
	if err == nil || !graphql.HasOperationContext(ctx) || !graphql.GetOperationContext(ctx).DisableIntrospection {
		return false
	}
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Field.Field != nil && (fc.Field.Name == "__schema" || fc.Field.Name == "__type")
}
