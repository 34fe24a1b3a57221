package dynamo

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// Page is one page of a paginated read: the items, one opaque cursor per item (pass an item's
// cursor as `after` to continue after it), and whether more items follow.
type Page[T any] struct {
	Items   []T
	Cursors []string
	HasNext bool
	// End, when set, is where the page ends although it has no item to name it (a page of the
	// change feed that walked its buckets and found nothing): pass it as `after` to continue.
	End string
	// HasPrevious reports, for a page read backwards (last/before), whether items precede it.
	HasPrevious bool
	// Start, when set, is where a backward page begins although it has no item to name it (a
	// page of the change feed that stopped at its bound of buckets): pass it as `before`.
	Start string
}

// cursorPayload is the position a cursor points at: the key attributes of an item.
type cursorPayload struct {
	PK     string `json:"p"`
	SK     string `json:"s"`
	GSI1PK string `json:"gp,omitempty"`
	GSI1SK string `json:"gs,omitempty"`
}

// encodeCursor returns the cursor of it within the query identified by scope. The cursor is
// signed with the store's secret over the scope, so it is only accepted by the same query.
func (s *Store) encodeCursor(scope string, index bool, it *item) string {
	p := cursorPayload{PK: it.PK, SK: it.SK}
	if index {
		p.GSI1PK, p.GSI1SK = it.GSI1PK, it.GSI1SK
	}
	body, _ := json.Marshal(p)
	return s.cursors.Encode(scope, body)
}

// decodeCursor returns the ExclusiveStartKey of a cursor issued by encodeCursor for the same
// scope and partition. An empty cursor means the start. Anything else, tampered with or taken
// from another query, is a *catalog.ValidationError on field "after".
func (s *Store) decodeCursor(scope string, q query, cursor string) (map[string]types.AttributeValue, error) {
	if cursor == "" {
		return nil, nil
	}
	p, err := s.cursorPayload(scope, cursor)
	if err != nil {
		return nil, err
	}
	if (q.index && p.GSI1PK != q.pk) || (!q.index && p.PK != q.pk) {
		return nil, errBadCursor()
	}
	key := keyOf(p.PK, p.SK)
	if q.index {
		key[attrGSI1PK] = &types.AttributeValueMemberS{Value: p.GSI1PK}
		key[attrGSI1SK] = &types.AttributeValueMemberS{Value: p.GSI1SK}
	}
	return key, nil
}

// errBadCursor returns the error of a cursor that is not valid for the query it is given to.
func errBadCursor() error { return catalog.Invalid("after", "cursor is not valid for this query") }

// cursorPayload returns the position a signed cursor of scope carries; errBadCursor when it was
// tampered with, issued for another scope or does not decode.
func (s *Store) cursorPayload(scope, cursor string) (*cursorPayload, error) {
	body, ok := s.cursors.Decode(scope, cursor)
	if !ok {
		return nil, errBadCursor()
	}
	var p cursorPayload
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, errBadCursor()
	}
	return &p, nil
}

// page runs q from cursor `after` for `first` items and decodes them with conv.
func page[T any](s *Store, ctx context.Context, scope string, q query, first int, after string, conv func(*item) (T, error)) (*Page[T], error) {
	start, err := s.decodeCursor(scope, q, after)
	if err != nil {
		return nil, err
	}
	q.start, q.want = start, first
	items, more, err := s.run(ctx, q)
	if err != nil {
		return nil, err
	}
	p := &Page[T]{Items: make([]T, 0, len(items)), Cursors: make([]string, 0, len(items)), HasNext: more}
	for _, it := range items {
		v, err := conv(it)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, v)
		p.Cursors = append(p.Cursors, s.encodeCursor(scope, q.index, it))
	}
	return p, nil
}
