package blob

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"

	"github.com/capcat/catalogue/internal/budget"
	"github.com/capcat/catalogue/internal/reqstats"
)

// Stats counts the S3 requests and bytes of one unit of work (one GraphQL operation, one
// archive run). Attach one to a context with WithStats; every request a client from NewClient
// sends with that context is counted, retries included, by the client's HTTP layer. Bytes are
// the request bodies sent plus the response bodies read. Presigning makes no request and counts
// nothing; what a client later does with a presigned URL is not seen here. Past its budget
// (Limit) a call fails with budget.ErrExceeded (catalog.RequestBudget), unsent.
type Stats = reqstats.Stats

// StatsSnapshot is a copy of a Stats at one moment, shaped for `extensions.s3`.
type StatsSnapshot = reqstats.Snapshot

// budgetMiddleware refuses a call once the context's Stats has spent its budget.
func budgetMiddleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(budgetID, func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if s := StatsFrom(ctx); s != nil && !s.Spend() {
			return middleware.InitializeOutput{}, middleware.Metadata{}, fmt.Errorf("%s: %w", middleware.GetOperationName(ctx), budget.ErrExceeded)
		}
		return next.HandleInitialize(ctx, in)
	}), middleware.After)
}

// budgetID names budgetMiddleware in the stack.
const budgetID = "CatalogueS3Budget"

// withoutBudget takes budgetMiddleware out of a stack (presigning's: see presignClient).
func withoutBudget(stack *middleware.Stack) error {
	if _, ok := stack.Initialize.Get(budgetID); !ok {
		return nil
	}
	_, err := stack.Initialize.Remove(budgetID)
	return err
}

type statsKey struct{}

// WithStats returns a context carrying a new Stats.
func WithStats(ctx context.Context) (context.Context, *Stats) {
	return reqstats.With(ctx, statsKey{}, reqstats.Bytes)
}

// StatsFrom returns the Stats of ctx, or nil.
func StatsFrom(ctx context.Context) *Stats { return reqstats.From(ctx, statsKey{}) }

// countingClient is the HTTP client of NewClient: it counts each attempt, and the bytes of its
// request and response bodies, into the request context's Stats.
type countingClient struct{ next aws.HTTPClient }

func (c countingClient) Do(req *http.Request) (*http.Response, error) {
	st := StatsFrom(req.Context())
	if st == nil {
		return c.next.Do(req)
	}
	op := middleware.GetOperationName(req.Context())
	if op == "" {
		op = req.Method
	}
	resp, err := c.next.Do(req)
	st.Request(op, max(req.ContentLength, 0))
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, st: st}
	}
	return resp, err
}

// countingBody counts the bytes read from a response body.
type countingBody struct {
	io.ReadCloser
	st *Stats
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.st.Received(n)
	}
	return n, err
}
