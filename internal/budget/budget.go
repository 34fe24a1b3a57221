// Package budget bounds the backend calls of one unit of work (a GraphQL query): the DynamoDB
// and the S3 clients each count their calls against one.
package budget

import (
	"sync"

	"github.com/capcat/catalogue/catalog"
)

// ErrExceeded means a unit of work asked for more backend calls than its budget; the call was
// not sent. It is a catalog.RequestBudget.
var ErrExceeded = catalog.NewError(catalog.RequestBudget, "request budget exceeded")

// Budget is a number of calls that may be spent. The zero Budget is unbounded. It is safe for
// concurrent use.
type Budget struct {
	mu           sync.Mutex
	limit, calls int
}

// Limit bounds the calls to n; zero or less means no bound.
func (b *Budget) Limit(n int) {
	b.mu.Lock()
	b.limit = n
	b.mu.Unlock()
}

// Spend takes one call, and reports false when none was left.
func (b *Budget) Spend() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	return b.limit <= 0 || b.calls <= b.limit
}
