package graph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// TestPresentAdapterErrors holds the edge's half of the error vocabulary: every adapter error,
// wrapped as the adapters wrap them (with AWS text behind it), reaches the client with its code
// and without that text.
func TestPresentAdapterErrors(t *testing.T) {
	const awsText = "operation error S3: ListObjectsV2, https response error StatusCode: 503, RequestID: XYZ, bucket capability-deployments"
	cause := errors.New(awsText)
	tests := []struct {
		name string
		err  error
		want catalog.ErrorCode
	}{
		{"dynamo not found", fmt.Errorf("get capability X: %w", dynamo.ErrNotFound), catalog.NotFound},
		{"dynamo not found, named", fmt.Errorf("update component x: %w", catalog.MissingIn("CAP-Y", catalog.EntityComponent, "x", dynamo.ErrNotFound)), catalog.NotFound},
		{"dynamo conflict", fmt.Errorf("put: %w: %w", dynamo.ErrConflict, cause), catalog.Conflict},
		{"dynamo conflict with revision", fmt.Errorf("put: %w", &dynamo.ConflictError{Reason: "stale revision", CurrentRevision: 3}), catalog.Conflict},
		{"dynamo unavailable", fmt.Errorf("query: %w: %w", dynamo.ErrUnavailable, cause), catalog.Unavailable},
		{"dynamo unsupported", fmt.Errorf("transact: %w: %w", dynamo.ErrUnsupported, cause), catalog.Unsupported},
		{"dynamo request budget", fmt.Errorf("Query: %w", dynamo.ErrRequestBudget), catalog.RequestBudget},
		{"s3 not found", fmt.Errorf("get object: %w: %w", blob.ErrNotFound, cause), catalog.NotFound},
		{"s3 unavailable", fmt.Errorf("list objects: %w: %w", blob.ErrUnavailable, cause), catalog.Unavailable},
		{"s3 corrupt", fmt.Errorf("read %s: %w: %w", "capabilities/X/components/Y/2026/01/01/metrics-00.json.gz", blob.ErrCorrupt, cause), catalog.Corrupt},
		{"no object store", errNoObjectStore, catalog.Unavailable},
		{"forbidden", &ForbiddenError{Action: "archiveMetrics", Need: RoleAdmin, Have: RoleViewer}, catalog.Forbidden},
		{"invalid", catalog.Invalid("input.name", "is empty"), catalog.BadUserInput},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), catalog.Timeout},
		{"anything else", cause, catalog.Internal},
	}
	present := errorPresenter(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gerr := present(context.Background(), tt.err)
			if got := gerr.Extensions["code"]; got != string(tt.want) {
				t.Errorf("present(%v) code = %v, want %s", tt.err, got, tt.want)
			}
			for _, leak := range []string{"operation error", "RequestID", "capability-deployments", "StatusCode", "metrics-00"} {
				if strings.Contains(gerr.Message, leak) {
					t.Errorf("present(%v) message = %q, tells the client %q", tt.err, gerr.Message, leak)
				}
			}
		})
	}
}

// TestCodeOfPriority holds that an error carrying two codes is answered with the more specific
// one, as the presenter always did: a validation error before a conflict, a conflict before an
// outage.
func TestCodeOfPriority(t *testing.T) {
	err := fmt.Errorf("%w: %w", dynamo.ErrUnavailable, &dynamo.ConflictError{Reason: "x"})
	if got := catalog.CodeOf(err); got != catalog.Conflict {
		t.Errorf("CodeOf(%v) = %s, want %s", err, got, catalog.Conflict)
	}
}
