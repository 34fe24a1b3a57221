package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/internal/memdyn"
)

// How writes work. Every mutation of a capability's partition is one TransactWriteItems that
// holds the entity's items, the METADATA item with its recomputed aggregates, the two index
// items that copy it, and (with a client token) the idempotency token. The METADATA put is
// conditioned on the WriteSeq the mutation read, so writers of one capability are serialised:
// a writer that lost the race re-reads and tries again (maxWriteAttempts), and aggregates are
// always computed from the partition as it was when the transaction committed. The token is an
// item of its own outside every partition (PK TOKEN#{token}) holding the capability, a hash of
// the request and its result: a token names one request across the whole catalogue.

const (
	maxWriteAttempts = 40
	// TokenLifetime is how long an idempotency token answers retries.
	TokenLifetime = 24 * time.Hour
)

// Idempotency identifies a mutation request for idempotent retries: the client's token and a
// hash of the mutation and its input. The zero value means no token.
type Idempotency struct {
	Token string
	Hash  string
}

// NewIdempotency returns the Idempotency of a request: the hash covers the mutation name and
// its arguments, so the same token with other input is detected.
func NewIdempotency(token, mutation string, args ...any) (Idempotency, error) {
	if token == "" {
		return Idempotency{}, nil
	}
	if err := ValidateID("clientRequestToken", token); err != nil {
		return Idempotency{}, err
	}
	h := sha256.New()
	h.Write([]byte(mutation))
	for _, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			return Idempotency{}, fmt.Errorf("hash request: %w", err)
		}
		h.Write([]byte{0})
		h.Write(b)
	}
	return Idempotency{Token: token, Hash: hex.EncodeToString(h.Sum(nil))}, nil
}

// ErrTokenReused means a clientRequestToken came back with a different request, or for another
// capability.
var ErrTokenReused = catalog.Invalid("clientRequestToken", "this token was already used for a different request")

// partitionState is what a mutation reads before it writes: the METADATA item and the
// segments it needs, all strongly consistent.
type partitionState struct {
	meta       *item // nil when the capability does not exist
	capability *catalog.Capability
	Partition
	items map[string]*item // the segment items by SK
	// cards, when set, are the search cards the partition holds, as read (check -repair):
	// commit rewrites the cards against them rather than against the old capability's.
	cards map[string]*item
}

// loadState reads what a mutation needs: METADATA first, then the segments' ranges (in
// parallel with each other). The order is what makes the WriteSeq condition of the commit
// enough: a write that commits after METADATA was read changes its WriteSeq, so the commit
// fails and the mutation reads again; a write that committed before it is in the segments read
// after. Read at once, a write committed between the ranges' Query and METADATA's GetItem gave
// a state with the new WriteSeq and the old segments, and the commit held (a lost update:
// TestMutationReadsMetadataBeforeSegments). A Query is no snapshot on DynamoDB either (its
// isolation is read-committed, item by item), so reading METADATA within the ranges' Query
// would not do.
func (s *Store) loadState(ctx context.Context, capabilityID string, want Segment) (*partitionState, error) {
	st := &partitionState{items: map[string]*item{}}
	meta, err := s.readItem(ctx, capabilityPK(capabilityID), metadataSK, true)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("read capability %s: %w", capabilityID, err)
	default:
		st.meta = meta
	}
	g, gctx := errgroup.WithContext(ctx)
	ranges := PlanRanges(want)
	results := make([][]*item, len(ranges))
	for i, r := range ranges {
		g.Go(func() error {
			lo, hi, err := r.bounds()
			if err != nil {
				return err
			}
			results[i], _, err = s.run(gctx, query{pk: capabilityPK(capabilityID), lo: lo, hi: hi, consistent: true})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("read capability %s: %w", capabilityID, err)
	}
	if st.meta != nil && !st.meta.Deleting {
		c, err := toCapability(st.meta)
		if err != nil {
			return nil, err
		}
		st.capability = c
	}
	for _, items := range results {
		for _, it := range items {
			st.items[it.SK] = it
			if err := st.add(it); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// plan is what a mutation decided to write.
type plan struct {
	actions []types.TransactWriteItem
	// capability is the capability as it must be stored after the mutation (its aggregates
	// recomputed); its Revision is already the new one.
	capability *catalog.Capability
	// create means the METADATA item must not exist yet.
	create bool
	// result is the item returned to the caller and recorded with the token.
	result *item
	// err is the first item put could not encode: the plan is not committed.
	err error
	// refusals maps the index of an action whose condition guards something outside the
	// partition (a component ID's claim) to the error its failure means, which no re-read of
	// the partition can resolve.
	refusals map[int]error
	// changes are the change records of the write, in order (commit keys them with the
	// WriteSeq it writes).
	changes []changeSpec
}

// claim plans putting it only if no item has its key, and refuses the mutation with refusal
// when one has.
func (p *plan) claim(it *item, refusal error) {
	if p.refusals == nil {
		p.refusals = map[int]error{}
	}
	p.refusals[len(p.actions)] = refusal
	p.put(it, notExists, nil)
}

// release plans deleting the claim of a component ID held by capabilityID; a claim another
// capability holds refuses the mutation with refusal.
func (p *plan) release(capabilityID, componentID string, refusal error) {
	if p.refusals == nil {
		p.refusals = map[int]error{}
	}
	p.refusals[len(p.actions)] = refusal
	p.del(claimPK(componentID), claimSK, "attribute_not_exists(PK) OR #d.#cap = :cap",
		map[string]types.AttributeValue{":cap": &types.AttributeValueMemberS{Value: capabilityID}})
	d := p.actions[len(p.actions)-1].Delete
	d.ExpressionAttributeNames = map[string]string{"#d": attrData, "#cap": "capabilityId"}
}

// require plans a condition on an item the plan does not write, and refuses the mutation with
// refusal when it fails.
func (p *plan) require(pk, sk, cond string, refusal error) {
	if p.refusals == nil {
		p.refusals = map[int]error{}
	}
	p.refusals[len(p.actions)] = refusal
	p.actions = append(p.actions, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{Key: keyOf(pk, sk), ConditionExpression: aws.String(cond)}})
}

func (p *plan) put(it *item, cond string, values map[string]types.AttributeValue) {
	av, err := it.av()
	if err != nil {
		p.err = errors.Join(p.err, err)
		return
	}
	put := &types.Put{Item: av}
	if cond != "" {
		put.ConditionExpression = aws.String(cond)
		put.ExpressionAttributeValues = values
	}
	p.actions = append(p.actions, types.TransactWriteItem{Put: put})
}

func (p *plan) del(pk, sk, cond string, values map[string]types.AttributeValue) {
	d := &types.Delete{Key: keyOf(pk, sk)}
	if cond != "" {
		d.ConditionExpression = aws.String(cond)
		d.ExpressionAttributeValues = values
	}
	p.actions = append(p.actions, types.TransactWriteItem{Delete: d})
}

func num(n int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(n)} }

// revisionIs is the condition that an item's Revision is still rev.
func revisionIs(rev int) (string, map[string]types.AttributeValue) {
	return "Revision = :rev", map[string]types.AttributeValue{":rev": num(rev)}
}

const notExists = "attribute_not_exists(PK)"

// mutate runs build against the partition state of a capability and commits its plan, with
// the aggregates, index items and token, as one transaction, retrying when another writer
// committed in between. It returns the plan's result item.
func (s *Store) mutate(ctx context.Context, capabilityID string, want Segment, idem Idempotency, build func(*partitionState, time.Time) (*plan, error)) (*item, error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	lock := s.writerLock(capabilityID)
	lock.Lock()
	defer lock.Unlock()
	for attempt := 0; ; attempt++ {
		if recorded, err := s.recorded(ctx, capabilityID, idem); recorded != nil || err != nil {
			return recorded, err
		}
		st, err := s.loadState(ctx, capabilityID, want)
		if err != nil {
			return nil, err
		}
		now := s.now()
		p, err := build(st, now)
		if err != nil {
			return nil, err
		}
		if s.beforeCommit != nil {
			s.beforeCommit(capabilityID)
		}
		err = s.commit(ctx, capabilityID, st, p, idem, now)
		var refused *refusal
		if errors.As(err, &refused) && idem.Token != "" {
			// A backend may report only the first failed condition: a request retried with
			// its token after it committed finds its claim taken, by itself.
			if recorded, rerr := s.recorded(ctx, capabilityID, idem); recorded != nil || rerr != nil {
				return recorded, rerr
			}
		}
		var lost *lostRace
		if !errors.As(err, &lost) {
			if err != nil {
				return nil, err
			}
			return p.result, nil
		}
		if lost.token {
			continue // recorded() answers on the next pass
		}
		if attempt+1 >= maxWriteAttempts {
			return nil, fmt.Errorf("write capability %s: gave up after %d concurrent writers won: %w", capabilityID, attempt+1, ErrUnavailable)
		}
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return nil, err
		}
	}
}

// lostRace means a condition of the transaction failed because something changed since the
// state was read; token tells whether it was the idempotency token, failed lists the indexes
// of the actions whose condition failed.
type lostRace struct {
	token  bool
	failed []int
}

func (e *lostRace) Error() string { return "lost a race with another writer" }

// refusal is a plan's refusal error: a condition that guards something outside the partition
// failed.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// recorded returns the result recorded for an idempotency token already used with the same
// request on capabilityID, ErrTokenReused for another request or another capability, and nil,
// nil when the token is new (or expired).
func (s *Store) recorded(ctx context.Context, capabilityID string, idem Idempotency) (*item, error) {
	if idem.Token == "" {
		return nil, nil
	}
	tok, err := s.readItem(ctx, tokenPK(idem.Token), tokenSK, true)
	if errors.Is(err, ErrNotFound) || (err == nil && tok.expired(s.now())) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if str(tok.Data["hash"]) != idem.Hash || str(tok.Data["capabilityId"]) != capabilityID {
		return nil, ErrTokenReused
	}
	res, ok := tok.Data["result"].(*types.AttributeValueMemberM)
	if !ok {
		return &item{}, nil // a mutation without an entity result (a delete)
	}
	return readItem(res.Value)
}

// commit writes a plan with the METADATA item (WriteSeq + 1, conditioned on the one read), the
// index items and the token, as one TransactWriteItems.
func (s *Store) commit(ctx context.Context, capabilityID string, st *partitionState, p *plan, idem Idempotency, now time.Time) error {
	seq := 0
	if st.meta != nil {
		seq = st.meta.WriteSeq
	}
	capItems, err := capabilityItems(p.capability, now)
	if err != nil {
		return err
	}
	meta := capItems[0]
	next := seq + 1
	if p.create {
		next = newIncarnation()
	}
	// The index items carry the METADATA's WriteSeq: list pages read from them validate the
	// partition cache with it (docs/performance.md).
	for _, it := range capItems {
		it.WriteSeq = next
	}
	cond := "attribute_not_exists(Deleting) AND "
	values := map[string]types.AttributeValue{}
	switch {
	case p.create:
		cond = notExists
	case seq == 0:
		cond += "attribute_not_exists(WriteSeq) AND attribute_exists(PK)"
	default:
		cond += "WriteSeq = :seq"
		values[":seq"] = num(seq)
	}
	if len(values) == 0 {
		values = nil
	}
	tail := &plan{}
	tail.put(meta, cond, values)
	tail.put(capItems[1], "", nil)
	tail.put(capItems[2], "", nil)
	if err := searchWrites(tail, st, p.capability, now); err != nil {
		return err
	}
	if err := componentIndex(st, p, tail, now); err != nil {
		return err
	}
	for i, c := range p.changes {
		tail.put(s.changeItem(capabilityID, p.capability.CreatedAt.Time, next, i, p.capability.Revision, c, now), "", nil)
	}
	if err := errors.Join(p.err, tail.err); err != nil {
		return err
	}
	// The catalogue's counters move by what the write changes of the capability's
	// contribution (dynamo/counters.go), in the same transaction.
	counters, err := counterWrites(st.capability, p.capability)
	if err != nil {
		return err
	}
	tail.actions = append(tail.actions, counters...)
	actions := append(append([]types.TransactWriteItem{}, p.actions...), tail.actions...)
	gen, err := s.commitActionsAt(ctx, capabilityID, seq, actions, idem, p.result, now)
	if err == nil && (s.memo != nil || s.onCommit != nil) {
		s.committed(capabilityID, st, p, tail.actions[0].Put.Item, actions, gen)
	}
	var lost *lostRace
	if errors.As(err, &lost) && !lost.token {
		for _, i := range lost.failed {
			if err := p.refusals[i]; err != nil {
				return &refusal{err}
			}
		}
	}
	return err
}

// committed tells what a mutation's transaction wrote, once it committed, to those who keep
// reads: the read memo (the embedded engine's generation gen, when it sent one, is the one the
// transaction committed at: the METADATA it wrote is what a read returns while the engine is
// still at gen) and Options.OnCommit.
func (s *Store) committed(capabilityID string, st *partitionState, p *plan, meta map[string]types.AttributeValue, actions []types.TransactWriteItem, gen uint64) {
	to, err := writtenCapability(meta)
	if err != nil {
		return // committed; only the notice is lost (a later read misses, as without it)
	}
	// The METADATA put is conditioned on the WriteSeq read: it moved from the version read
	// (decoded again from the item: a plan may have changed st.capability in place) to the
	// one it wrote, atomically with every action of the transaction.
	var from *catalog.Capability
	if !p.create && st.meta != nil {
		if from, err = toCapability(st.meta); err != nil {
			from = nil
		}
	}
	if s.memo != nil && gen != 0 {
		s.memo.wrote(gen, capabilityID, from, to, from != nil && listsKeep(capabilityID, from, to, actions))
	}
	if s.onCommit == nil || from == nil {
		return
	}
	s.onCommit(Commit{Table: s.table, CapabilityID: capabilityID, From: from, To: to, Touched: touchedSegments(capabilityID, actions)})
}

// listsKeep reports whether a transaction that wrote capabilityID from `from` to `to` (actions)
// left every capability list (the GSI1 partitions capabilityPage reads) as it was but for that
// capability's entry, which now holds `to` at the same place: the capability's three index keys
// are those it had, and no other action puts, updates or deletes an entry of those lists (an
// action whose key it cannot read counts as one).
func listsKeep(capabilityID string, from, to *catalog.Capability, actions []types.TransactWriteItem) bool {
	if capabilityListKeys(from) != capabilityListKeys(to) {
		return false
	}
	own := capabilityPK(capabilityID)
	for _, a := range actions {
		if a.ConditionCheck != nil {
			continue // writes nothing
		}
		pk, sk, ok := actionKey(a)
		if !ok {
			return false
		}
		if a.Put == nil {
			// An update or a delete of a capability's entry: what it leaves is not known here.
			if capabilityEntrySK(sk) {
				return false
			}
			continue
		}
		gpk, _ := a.Put.Item[attrGSI1PK].(*types.AttributeValueMemberS)
		listed := gpk != nil && capabilityListPartition(gpk.Value)
		if (listed || capabilityEntrySK(sk)) && !(pk == own && capabilityEntrySK(sk)) {
			return false
		}
	}
	return true
}

// actionKey returns the PK and SK of the item a transaction's action writes or checks; ok is
// false when it names none that can be read.
func actionKey(a types.TransactWriteItem) (pk, sk string, ok bool) {
	var key map[string]types.AttributeValue
	switch {
	case a.Put != nil:
		key = a.Put.Item
	case a.Update != nil:
		key = a.Update.Key
	case a.Delete != nil:
		key = a.Delete.Key
	case a.ConditionCheck != nil:
		key = a.ConditionCheck.Key
	}
	p, ok1 := key[attrPK].(*types.AttributeValueMemberS)
	s, ok2 := key[attrSK].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return "", "", false
	}
	return p.Value, s.Value, true
}

// committedGeneration reads memdyn.GenerationHeader off a committed TransactWriteItems' raw
// response: 0 when there is none.
func committedGeneration(md middleware.Metadata) uint64 {
	raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	if !ok || raw == nil {
		return 0
	}
	g, err := strconv.ParseUint(raw.Header.Get(memdyn.GenerationHeader), 10, 64)
	if err != nil {
		return 0
	}
	return g
}

// Commit is a mutation's transaction that committed through a Store (Options.OnCommit): the
// capability's METADATA moved, atomically with the rest of the transaction, from From (as the
// mutation read it) to To (as a later read decodes what the transaction wrote: WriteSeq,
// Revision, CreatedAt and UpdatedAt included). Touched are the segments of the capability's
// partition holding the sort key of an action of the transaction (a Put, Update, Delete or
// ConditionCheck), by the bounds the range reads query; every segment when an action's key
// could not be classified. A segment not touched holds at To exactly what it held at From.
type Commit struct {
	Table, CapabilityID string
	From, To            *catalog.Capability
	Touched             Segment
}

// allSegments are every segment a range read can hold.
const allSegments = SegComponents | SegDependencies | SegRules

// touchedSegments returns the segments of capabilityID's partition that actions write or check
// an item of; an action whose key it cannot read counts as touching every segment.
func touchedSegments(capabilityID string, actions []types.TransactWriteItem) Segment {
	own := capabilityPK(capabilityID)
	var touched Segment
	for _, a := range actions {
		pk, sk, ok := actionKey(a)
		if !ok {
			return allSegments
		}
		if pk == own {
			touched |= segmentsHolding(sk)
		}
	}
	return touched
}

// writtenCapability decodes a METADATA item as written, as a read of it decodes it.
func writtenCapability(av map[string]types.AttributeValue) (*catalog.Capability, error) {
	it, err := readItem(av)
	if err != nil {
		return nil, err
	}
	return toCapability(it)
}

// commitActions adds the idempotency token to actions and runs them as one TransactWriteItems.
// The token item is put only if no live one exists, so that of two requests racing with one
// token, on one capability or two, only one commits. A failed condition is a *lostRace; other
// errors are classified.
func (s *Store) commitActions(ctx context.Context, capabilityID string, seq int, actions []types.TransactWriteItem, idem Idempotency, result *item, now time.Time) error {
	_, err := s.commitActionsAt(ctx, capabilityID, seq, actions, idem, result, now)
	return err
}

// commitActionsAt is commitActions, also returning the embedded engine's generation the
// transaction committed at (memdyn.GenerationHeader; 0 from any other DynamoDB, or when it sent
// none).
func (s *Store) commitActionsAt(ctx context.Context, capabilityID string, seq int, actions []types.TransactWriteItem, idem Idempotency, result *item, now time.Time) (uint64, error) {
	tokenAt := -1
	if idem.Token != "" {
		tok := &item{PK: tokenPK(idem.Token), SK: tokenSK, EntityType: entityToken, CreatedAt: now, UpdatedAt: now, Revision: 1,
			TTL: now.Add(TokenLifetime).Unix(), Data: map[string]types.AttributeValue{
				"hash":         &types.AttributeValueMemberS{Value: idem.Hash},
				"capabilityId": &types.AttributeValueMemberS{Value: capabilityID},
			}}
		if result != nil {
			rav, err := result.av()
			if err != nil {
				return 0, err
			}
			tok.Data["result"] = &types.AttributeValueMemberM{Value: rav}
		}
		tav, err := tok.av()
		if err != nil {
			return 0, err
		}
		tokenAt = len(actions)
		actions = append(actions, types.TransactWriteItem{Put: &types.Put{
			Item:                      tav,
			ConditionExpression:       aws.String("attribute_not_exists(PK) OR #ttl < :now"),
			ExpressionAttributeNames:  map[string]string{"#ttl": attrTTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)}},
		}})
	}
	if len(actions) > maxTransact {
		return 0, catalog.Invalid("", "this change needs %d writes, over DynamoDB's limit of %d in one transaction", len(actions), maxTransact)
	}
	for i := range actions {
		a := &actions[i]
		switch {
		case a.Put != nil:
			a.Put.TableName = &s.table
			if stamped(str(a.Put.Item[attrEntityType])) {
				stampWriter(ctx, a.Put.Item)
			}
			if n := itemSize(a.Put.Item); n > maxItemSize {
				return 0, catalog.Invalid("input", "the item would be %d bytes, over DynamoDB's 400 KB limit", n)
			}
		case a.Delete != nil:
			a.Delete.TableName = &s.table
		case a.ConditionCheck != nil:
			a.ConditionCheck.TableName = &s.table
		case a.Update != nil:
			a.Update.TableName = &s.table
		}
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: actions, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	if idem.Token != "" {
		// DynamoDB's own token lasts 10 minutes and is bound to identical parameters: derive
		// it from the client's token, the capability, the state this attempt read, this Store
		// and the attempt's time, so the SDK's retries of this attempt share it and anything
		// else gets a fresh one: a re-planned attempt, and the same request sent to another
		// server instance at once, which read the same state but plans other parameters (its
		// timestamps) and would otherwise be refused with IdempotentParameterMismatch; with its
		// own token it loses the race on the idempotency item and answers as the first did.
		sum := sha256.Sum256([]byte(idem.Token + "|" + idem.Hash + "|" + capabilityID + "|" + strconv.Itoa(seq) +
			"|" + s.instance + "|" + strconv.FormatInt(now.UnixNano(), 10)))
		in.ClientRequestToken = aws.String(hex.EncodeToString(sum[:])[:36])
	}
	out, err := s.db.TransactWriteItems(ctx, in)
	if err == nil {
		return committedGeneration(out.ResultMetadata), nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		for i, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" && i == tokenAt {
				return 0, &lostRace{token: true}
			}
		}
		lost := &lostRace{}
		for i, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case "ConditionalCheckFailed":
				lost.failed = append(lost.failed, i)
			case "TransactionConflict":
				lost.failed = append(lost.failed, -1)
			}
		}
		if len(lost.failed) > 0 {
			return 0, lost
		}
		if len(tce.CancellationReasons) == 0 {
			return 0, &lostRace{} // a backend that gives no reasons: re-read and decide
		}
	}
	var tc *types.TransactionConflictException
	var mismatch *types.IdempotentParameterMismatchException
	if errors.As(err, &tc) || errors.As(err, &mismatch) {
		// A mismatch: another transaction used this attempt's token (derived above, so only
		// a writer that read the same state at the same instant): re-read and decide.
		return 0, &lostRace{}
	}
	return 0, classify("write capability "+capabilityID, err)
}
