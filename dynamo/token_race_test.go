package dynamo_test

import (
	"context"
	"testing"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// The same request with one clientRequestToken sent to two server instances at once: both read
// the same state, one commits, and the other answers as the first did (the token's replay),
// not with an internal error. Before, both derived DynamoDB's own client request token from the
// client's token and the state read alone, so the second transaction, with other timestamps,
// was refused with IdempotentParameterMismatch, which reached the client as
// INTERNAL_SERVER_ERROR (found by the probe: 11 in 15 pairs).
func TestSameTokenThroughTwoInstancesAtOnce(t *testing.T) {
	e := newMemoEnv(t)
	ctx := context.Background()
	const id = "CAP-ALERT-MGT-001"
	cur, _ := e.readOne(t, id)
	idem := dynamo.Idempotency{Token: "same-token", Hash: "same-request"}
	update := func(s *dynamo.Store) (*catalog.Capability, error) {
		return s.UpdateCapability(ctx, id, cur.Revision, func(c *catalog.Capability) error {
			c.Description = "once"
			return nil
		}, idem)
	}
	// The port's store plans first; before it commits, the other instance runs the same
	// request to the end.
	var first *catalog.Capability
	done := false
	dynamo.SetBeforeCommit(e.other, func(string) {
		if done {
			return
		}
		done = true
		var err error
		if first, err = update(e.store); err != nil {
			t.Errorf("the first instance: %v", err)
		}
	})
	second, err := update(e.other)
	if err != nil {
		t.Fatalf("the second instance, same token at once: %v (want the first's answer)", err)
	}
	if first == nil || second.Revision != first.Revision || second.Description != "once" {
		t.Errorf("second answer = revision %d %q, first = %+v; want the same answer", second.Revision, second.Description, first)
	}
	if got, _ := e.readOne(t, id); got.Revision != cur.Revision+1 {
		t.Errorf("revision after both = %d, want %d: written once", got.Revision, cur.Revision+1)
	}
}
