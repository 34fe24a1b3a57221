package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrorCode classifies a failure by what its caller can do about it. It is the one error
// vocabulary of the catalogue: each adapter (DynamoDB, S3, authorisation) classifies its
// failures into these codes, and the API edge maps each code to its answer once (in GraphQL,
// extensions.code carries the code's string). A code is an error itself, so that
// errors.Is(err, catalog.Unavailable) tells the class of any error that wraps one.
type ErrorCode string

// The codes. Their meaning does not depend on HTTP or GraphQL.
const (
	// BadUserInput means the input breaks a rule of the catalogue: the same request fails
	// again until the caller changes it.
	BadUserInput ErrorCode = "BAD_USER_INPUT"
	// NotFound means the thing asked for does not exist.
	NotFound ErrorCode = "NOT_FOUND"
	// Conflict means the thing changed since the caller read it, or exists already: read it
	// again and decide.
	Conflict ErrorCode = "CONFLICT"
	// Forbidden means the caller may not do this, whatever it sends.
	Forbidden ErrorCode = "FORBIDDEN"
	// Unavailable means a store could not be reached or kept failing after the retries: the
	// same request may succeed later.
	Unavailable ErrorCode = "UNAVAILABLE"
	// Timeout means the request's deadline passed before the work was done.
	Timeout ErrorCode = "TIMEOUT"
	// RequestBudget means one unit of work asked for more store requests than it may make;
	// the request was not sent. Ask for less.
	RequestBudget ErrorCode = "REQUEST_BUDGET_EXCEEDED"
	// Unsupported means the store implementation lacks an operation the catalogue needs (a
	// DynamoDB without TransactWriteItems cannot take writes).
	Unsupported ErrorCode = "UNSUPPORTED_BY_BACKEND"
	// Corrupt means stored data does not hold what it should (an archived object that does not
	// decode, or holds samples of another hour): retrying does not help until it is repaired.
	Corrupt ErrorCode = "DATA_CORRUPT"
	// IntrospectionDisabled means the server does not describe its schema.
	IntrospectionDisabled ErrorCode = "INTROSPECTION_DISABLED"
	// Internal means anything else: a fault of the server, whose cause is logged and not told.
	Internal ErrorCode = "INTERNAL_SERVER_ERROR"
)

// Error returns the code's string, so that a code can be wrapped and tested with errors.Is.
func (c ErrorCode) Error() string { return string(c) }

// codes are the codes CodeOf looks for, in order: where an error matches more than one, the
// first wins.
var codes = []ErrorCode{BadUserInput, Conflict, NotFound, Forbidden, RequestBudget, Timeout, Unsupported, Unavailable, Corrupt, IntrospectionDisabled}

// CodeOf returns the code of err: the first of the codes that errors.Is finds in its chain
// (BadUserInput before Conflict, NotFound, Forbidden, RequestBudget, Timeout, Unsupported,
// Unavailable, Corrupt and IntrospectionDisabled). A passed context deadline is Timeout;
// anything unclassified is Internal.
func CodeOf(err error) ErrorCode {
	for _, c := range codes {
		if errors.Is(err, c) || (c == Timeout && errors.Is(err, context.DeadlineExceeded)) {
			return c
		}
	}
	return Internal
}

// NewError returns a sentinel error with the text msg that is also code: an adapter names its
// failures with these (dynamo.ErrNotFound, blob.ErrUnavailable), and errors.Is holds for both
// the sentinel and its code.
func NewError(code ErrorCode, msg string) error { return &codedError{code: code, msg: msg} }

type codedError struct {
	code ErrorCode
	msg  string
}

func (e *codedError) Error() string { return e.msg }

// Is makes errors.Is(e, e.code) hold.
func (e *codedError) Is(target error) bool { return target == e.code }

// ValidationError reports input that breaks a rule of the catalogue. Field names the argument
// or input path at fault (for example "input.conditions[1].operator"). It is a BadUserInput.
type ValidationError struct {
	Field   string
	Message string
}

// Invalid returns a *ValidationError for field with a formatted message.
func Invalid(field, format string, args ...any) *ValidationError {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is makes errors.Is(err, BadUserInput) hold.
func (e *ValidationError) Is(target error) bool { return target == BadUserInput }

// The entities a NotFoundError names: the GraphQL type names.
const (
	EntityCapability = "Capability"
	EntityComponent  = "Component"
	EntityDependency = "Dependency"
	EntityJob        = "Job"
	EntityRule       = "Rule"
)

// NotFoundError reports that an entity asked for does not exist. Entity is its GraphQL type
// name (EntityCapability, EntityComponent, ...), ID the ID the caller gave (a dependency's is
// "source->target"), and CapabilityID, when set, the capability it was looked for in. Err is
// the store's sentinel, if any, so that errors.Is finds it too. It is a NotFound.
type NotFoundError struct {
	Entity       string
	ID           string
	CapabilityID string
	Err          error
}

// Missing returns a *NotFoundError for the entity with the given ID, wrapping err (which may be
// nil).
func Missing(entity, id string, err error) *NotFoundError {
	return &NotFoundError{Entity: entity, ID: id, Err: err}
}

// MissingIn returns a *NotFoundError for the entity with the given ID in capability
// capabilityID, wrapping err (which may be nil).
func MissingIn(capabilityID, entity, id string, err error) *NotFoundError {
	return &NotFoundError{Entity: entity, ID: id, CapabilityID: capabilityID, Err: err}
}

// Error names the entity and its ID, and the capability when it has one:
// `component "x" not found in capability "CAP-Y"`.
func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s %q not found", lowerFirst(e.Entity), e.ID)
	if e.CapabilityID != "" {
		msg += fmt.Sprintf(" in capability %q", e.CapabilityID)
	}
	return msg
}

// Is makes errors.Is(err, NotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == NotFound }

// Unwrap returns the store's sentinel the error wraps, or nil.
func (e *NotFoundError) Unwrap() error { return e.Err }

func lowerFirst(s string) string {
	if s == "" {
		return "entity"
	}
	return strings.ToLower(s[:1]) + s[1:]
}
