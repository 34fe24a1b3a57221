package dynamo

import "context"

// MarkDeleting and FinishDelete split DeleteCapability in two for tests of deletes that run at
// once: the marking (step 1) and the rest (steps 2 and 3) of one delete.
func MarkDeleting(ctx context.Context, s *Store, id string) (any, error) {
	meta, err := s.readItem(ctx, capabilityPK(id), metadataSK, true)
	if err != nil {
		return nil, err
	}
	return s.markDeleting(ctx, id, meta, Idempotency{})
}

// FinishDelete runs steps 2 and 3 of the delete whose marking MarkDeleting returned.
func FinishDelete(ctx context.Context, s *Store, id string, marked any) error {
	return s.finishDelete(ctx, id, marked.(*item))
}

// SetBeforeCommit makes s run f in every mutation between planning and committing.
func SetBeforeCommit(s *Store, f func(capabilityID string)) { s.beforeCommit = f }
