package memdyn

import (
	"crypto/sha256"
	"encoding/json"
	"strings"
	"time"
)

// TransactWriteItems, as DynamoDB: up to maxTransact actions (Put, Update, Delete,
// ConditionCheck), at most one on an item, run all or none under the write lock. When a
// condition fails the transaction is cancelled with TransactionCanceledException, whose
// CancellationReasons hold one reason per action in order: ConditionalCheckFailed (with the
// item when the action asked for ReturnValuesOnConditionCheckFailure ALL_OLD) or None; an
// Update whose result would pass 400 KB is a ValidationError. A ClientRequestToken makes the
// call idempotent for tokenLifetime: the same call again succeeds without writing, a
// different call with the same token is IdempotentParameterMismatchException.

const (
	maxTransact     = 100
	maxTransactSize = 4 << 20
	tokenLifetime   = 10 * time.Minute
)

// requestToken is a committed transaction's client request token: when, and a hash of the call.
type requestToken struct {
	at   time.Time
	hash [32]byte
}

// tokenAt is a token as it was recorded, in Server.tokenOrder.
type tokenAt struct {
	token string
	at    time.Time
}

// dropExpiredTokens forgets the tokens recorded longer than tokenLifetime ago, oldest first:
// it stops at the first one still live, so a call pays for the tokens that expired since the
// last one, not for every token of the last ten minutes (the SDK puts one on every
// TransactWriteItems). A token recorded again is dropped only through its last record. With a
// clock set back (SetClock) a token may outlive its lifetime here; a lookup checks its age.
func (s *Server) dropExpiredTokens(now time.Time) {
	i := 0
	for ; i < len(s.tokenOrder) && now.Sub(s.tokenOrder[i].at) > tokenLifetime; i++ {
		t := s.tokenOrder[i]
		if tok, ok := s.tokens[t.token]; ok && tok.at.Equal(t.at) {
			delete(s.tokens, t.token)
		}
	}
	clear(s.tokenOrder[:i]) // the strings, for the collector
	s.tokenOrder = s.tokenOrder[i:]
}

type txOp struct {
	condInput
	Key              map[string]*av
	Item             json.RawMessage
	UpdateExpression string
}

type txAction struct {
	ConditionCheck, Put, Delete, Update *txOp
}

// txStep is an action ready to run: its table, key, condition, and what it writes.
type txStep struct {
	op     *txOp
	kind   string
	t      *table
	pk, sk string
	cond   *node
	put    *rec      // Put
	update *updateOp // Update
}

func (s *Server) transactWriteItems(body []byte) (any, error) {
	var in struct {
		TransactItems          []txAction
		ClientRequestToken     string
		ReturnConsumedCapacity string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	if n := len(in.TransactItems); n == 0 || n > maxTransact {
		return nil, validation("1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to %d and greater than or equal to 1", maxTransact)
	}
	if len(in.ClientRequestToken) > 36 {
		return nil, validation("1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: Member must have length less than or equal to 36")
	}
	// The call's parameters, canonical (members in any order, as clients send maps), for a
	// client request token's replay check: hashed only when there is a token.
	var hash [sha256.Size]byte
	if in.ClientRequestToken != "" {
		hash = canonicalHash(body)
	}

	gen := s.lockGen()
	defer s.mu.Unlock()
	now := s.now()
	if in.ClientRequestToken != "" {
		s.dropExpiredTokens(now)
		if tok, ok := s.tokens[in.ClientRequestToken]; ok && now.Sub(tok.at) <= tokenLifetime {
			if tok.hash != hash {
				return nil, &apiError{"IdempotentParameterMismatchException", "Request with the same client request token but different parameters"}
			}
			return []byte("{}"), nil // already committed: no second write
		}
	}

	steps := make([]txStep, len(in.TransactItems))
	seen := map[[3]string]bool{}
	size := 0
	for i, a := range in.TransactItems {
		st := &steps[i]
		n := 0
		for kind, op := range map[string]*txOp{"ConditionCheck": a.ConditionCheck, "Put": a.Put, "Delete": a.Delete, "Update": a.Update} {
			if op != nil {
				st.kind, st.op = kind, op
				n++
			}
		}
		if n != 1 {
			return nil, validation("TransactItems can only contain one of Check, Put, Update or Delete")
		}
		t, err := s.table(st.op.TableName)
		if err != nil {
			return nil, err
		}
		st.t = t
		used := map[string]bool{}
		switch st.kind {
		case "Put":
			if st.put, err = t.newRec(st.op.Item); err != nil {
				return nil, err
			}
			st.pk, st.sk = st.put.pk, st.put.sk
			size += st.put.size
		case "Update":
			if st.update, err = parseUpdateOp(t, st.op.Key, &st.op.condInput, st.op.UpdateExpression); err != nil {
				return nil, err
			}
			st.pk, st.sk, st.cond = st.update.pk, st.update.sk, st.update.cond
		default:
			if st.pk, st.sk, err = t.keyOf(st.op.Key); err != nil {
				return nil, err
			}
			if st.kind == "ConditionCheck" && st.op.ConditionExpression == "" {
				return nil, validation("The ConditionCheck must have a ConditionExpression")
			}
		}
		if st.kind != "Update" {
			if st.cond, err = st.op.parse(used); err != nil {
				return nil, err
			}
			if err := unused(st.op.ExpressionAttributeNames, st.op.ExpressionAttributeValues, used); err != nil {
				return nil, err
			}
		}
		k := [3]string{t.name, st.pk, st.sk}
		if seen[k] {
			return nil, validation("Transaction request cannot include multiple operations on one item")
		}
		seen[k] = true
	}

	// Every condition against the table as it is; then every write, or none.
	reasons := make([]map[string]any, len(steps))
	cancelled := false
	for i := range steps {
		st := &steps[i]
		current := st.t.get(st.pk, st.sk)
		reasons[i] = map[string]any{"Code": "None"}
		ok, err := holds(st.cond, current)
		if err != nil {
			return nil, err
		}
		if !ok {
			cancelled = true
			r := map[string]any{"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
			if st.op.ReturnValuesOnConditionCheckFailure == "ALL_OLD" && current != nil {
				r["Item"] = current.raw
			}
			reasons[i] = r
			continue
		}
		if st.kind == "Update" {
			if st.put, err = st.update.run(st.t, current); err != nil {
				if ae, ok := err.(*apiError); ok && strings.Contains(ae.msg, "maximum allowed size") {
					cancelled = true
					reasons[i] = map[string]any{"Code": "ValidationError", "Message": ae.msg}
					continue
				}
				return nil, err
			}
			size += st.put.size
		}
	}
	if size > maxTransactSize {
		return nil, validation("Transaction request size exceeds the maximum allowed size of 4 MB")
	}
	if cancelled {
		codes := make([]string, len(reasons))
		for i, r := range reasons {
			codes[i] = r["Code"].(string)
		}
		return nil, &detailedError{
			apiError: apiError{"TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]"},
			extra:    map[string]any{"CancellationReasons": reasons},
		}
	}
	units := map[string]float64{}
	var order []string
	for i := range steps {
		st := &steps[i]
		if _, ok := units[st.t.name]; !ok {
			order = append(order, st.t.name)
		}
		// A transactional write costs two writes per KB of the larger of the item before and
		// after; a condition check two per KB of the item it reads.
		n := 0
		if cur := st.t.get(st.pk, st.sk); cur != nil {
			n = cur.size
		}
		switch st.kind {
		case "Put", "Update":
			n = max(n, st.put.size)
			st.t.store(st.put)
		case "Delete":
			st.t.del(st.pk, st.sk)
		}
		units[st.t.name] += 2 * writeUnits(n)
	}
	if in.ClientRequestToken != "" {
		s.tokens[in.ClientRequestToken] = requestToken{at: now, hash: hash}
		s.tokenOrder = append(s.tokenOrder, tokenAt{in.ClientRequestToken, now})
	}
	var o obj
	caps := make([]capacity, 0, len(order))
	for _, name := range order {
		caps = append(caps, capacity{name, units[name]})
	}
	o.capacity(in.ReturnConsumedCapacity, caps)
	return committed{body: o.bytes(), generation: gen}, nil
}
