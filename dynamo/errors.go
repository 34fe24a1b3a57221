package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/budget"
)

// Sentinel errors of the store, each classified by a code of catalog's error vocabulary
// (errors.Is(err, catalog.Unavailable) holds for ErrUnavailable). AWS error types never leave
// this package: callers test these with errors.Is.
var (
	// ErrNotFound means the item asked for does not exist. Where the store knows the entity,
	// the error is a *catalog.NotFoundError (naming it) that wraps ErrNotFound.
	ErrNotFound = catalog.NewError(catalog.NotFound, "not found")
	// ErrConflict means a condition failed: the item exists already, or its revision moved.
	ErrConflict = catalog.NewError(catalog.Conflict, "conflict")
	// ErrUnavailable means DynamoDB could not be reached or kept refusing (throttling, 5xx,
	// network) after the retries.
	ErrUnavailable = catalog.NewError(catalog.Unavailable, "database unavailable")
	// ErrUnsupported means the DynamoDB implementation lacks an operation the store needs
	// (dynalite has no TransactWriteItems, so it cannot take writes).
	ErrUnsupported = catalog.NewError(catalog.Unsupported, "not supported by this DynamoDB implementation")
	// ErrRequestBudget means one unit of work (a GraphQL operation) asked for more backend
	// requests than its budget (Stats.Limit); the request was not sent. The S3 client refuses
	// with the same error.
	ErrRequestBudget = budget.ErrExceeded
)

// ConflictError is an ErrConflict that knows the item's current revision.
type ConflictError struct {
	Reason          string
	CurrentRevision int
}

func (e *ConflictError) Error() string {
	if e.CurrentRevision > 0 {
		return fmt.Sprintf("%s (current revision %d)", e.Reason, e.CurrentRevision)
	}
	return e.Reason
}

// Is makes errors.Is(err, ErrConflict) and errors.Is(err, catalog.Conflict) hold.
func (e *ConflictError) Is(target error) bool { return errors.Is(ErrConflict, target) }

// classify wraps an SDK error of operation op: transient failures become ErrUnavailable; the
// AWS text stays in the chain for logs but callers see only the sentinel.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("%s: %w", op, &ConflictError{Reason: "condition failed"})
	}
	if transient(err) {
		return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "UnknownOperationException" {
		return fmt.Errorf("%s: %w: %w", op, ErrUnsupported, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// transient reports whether err is worth retrying later: throttling, server errors, timeouts
// and network failures (including exhausted SDK retries of those).
func transient(err error) bool {
	return awsconf.Transient(err, "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded",
		"InternalServerError", "InternalFailure", "ServiceUnavailable", "TransactionInProgressException",
		"TransactionConflictException", "LimitExceededException")
}

// Outcome names the result of a DynamoDB attempt or call for metrics: ok, throttled,
// conditional_check_failed, transaction_conflict, client_error, server_error, canceled or
// network.
func Outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return "canceled"
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for _, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				return "conditional_check_failed"
			case "TransactionConflict":
				return "transaction_conflict"
			}
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded":
			return "throttled"
		case "ConditionalCheckFailedException":
			return "conditional_check_failed"
		case "TransactionConflictException":
			return "transaction_conflict"
		}
		if ae.ErrorFault() == smithy.FaultServer {
			return "server_error"
		}
		return "client_error"
	}
	return "network"
}
