// Package dynamo is the single-table store of the catalogue: the keys of every row, the item
// envelope and its conversions, the table bootstrap, the reads (partition segments, GSI1
// patterns, batched gets), the writes and bulk loading, and the embedded backend. It is the only
// package that sees attribute values or builds key strings.
package dynamo

import (
	"context"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/internal/signed"
)

// DynamoDB API limits.
const (
	maxBatchGet   = 100 // keys per BatchGetItem
	maxBatchWrite = 25  // requests per BatchWriteItem
	maxTransact   = 100 // actions per TransactWriteItems
	maxItemSize   = 400 * 1024
	maxLeftover   = 10 // attempts at UnprocessedKeys/UnprocessedItems before giving up with an error
)

// DefaultTable is the table name of the design.
const DefaultTable = "BusinessCapabilitySystem"

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// Options configure a Store.
type Options struct {
	// Table is the table name; empty means DefaultTable.
	Table string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives notices; nil means slog.Default().
	Logger *slog.Logger
	// CursorSecret signs pagination cursors. Empty means a random secret for this process:
	// set it when several instances serve the same clients.
	CursorSecret []byte
	// ChangeRetention is how long change records are kept (their TTL); zero means
	// DefaultChangeRetention.
	ChangeRetention time.Duration
	// Generation, for an engine in this process that counts its writes (Embedded.Generation),
	// lets the reads of capabilities by ID and of capability list pages answer from the last
	// such read while nothing has been written to the engine since (see readMemo): no call at
	// all. Nil (any other DynamoDB) sends every read.
	Generation func() uint64
	// StatsTTL is how long the search planner trusts the counters it read as planning
	// statistics before a search that needs them refreshes them in the background (one
	// BatchGetItem no operation waits for); zero means DefaultStatsTTL. Negative: never in the
	// background, only from the counters operations read for their answers (tests that count
	// every request use it).
	StatsTTL time.Duration
	// HealthChannels are the notification channels that get a health alert when recordMetrics
	// moves a component's or the capability's health status (NOTIFY_HEALTH_CHANNELS); each
	// takes one item of recordMetrics' transaction, so at most MaxHealthChannels.
	HealthChannels []string
	// OnCommit, when set, is called after each mutation's transaction committed through this
	// Store over a capability that existed before it (see Commit): not for a creation, a lost
	// race, an idempotent replay, nor for the writes that do not go through a mutation's
	// transaction (recordMetrics, deleteCapability, check -repair, bulk load, import). It runs
	// while the capability's writers in this process wait: it must be quick. The partition
	// cache re-tags the ranges the write did not touch with it (docs/performance.md).
	OnCommit func(Commit)
}

// MaxHealthChannels bounds Options.HealthChannels.
const MaxHealthChannels = 10

// Store reads and writes the catalogue in one DynamoDB table.
type Store struct {
	db      API
	table   string
	now     func() time.Time
	log     *slog.Logger
	cursors signed.Codec
	// changeRetention is how long change records are kept.
	changeRetention time.Duration
	// healthChannels get health alerts (Options.HealthChannels).
	healthChannels []string
	// writers serialises this process's writers of one capability (striped by ID), so they
	// queue instead of racing; the WriteSeq condition still guards writers in other processes.
	writers [64]sync.Mutex
	// memo answers repeated reads while the engine is unchanged (Options.Generation); nil
	// without it.
	memo *readMemo
	// sortLimit is how many cards a search page reads whole to sort itself (maxSorted; tests
	// lower it to take the other path).
	sortLimit int
	// stats are the search planner's statistics (planstats.go).
	stats planStats
	// onCommit is Options.OnCommit.
	onCommit func(Commit)
	// instance tells this Store's transactions from another's in the DynamoDB client request
	// tokens it derives (commitActionsAt): random per Store.
	instance string
	// beforeCommit, when set (tests only), runs in mutate between planning and committing.
	beforeCommit func(capabilityID string)
}

// writerLock returns the lock of a capability's writers in this process.
func (s *Store) writerLock(capabilityID string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(capabilityID))
	return &s.writers[h.Sum32()%uint32(len(s.writers))]
}

// New returns a Store over db.
func New(db API, opts Options) *Store {
	s := &Store{db: db, table: opts.Table, now: opts.Now, log: opts.Logger, memo: newReadMemo(opts.Generation), onCommit: opts.OnCommit,
		instance: rand.Text()}
	if s.table == "" {
		s.table = DefaultTable
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	secret := opts.CursorSecret
	if len(secret) == 0 {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
	}
	s.cursors = signed.New(secret)
	s.stats.ttl = opts.StatsTTL
	if s.stats.ttl == 0 {
		s.stats.ttl = DefaultStatsTTL
	}
	s.changeRetention = opts.ChangeRetention
	s.healthChannels = opts.HealthChannels[:min(len(opts.HealthChannels), MaxHealthChannels)]
	if s.changeRetention <= 0 {
		s.changeRetention = DefaultChangeRetention
	}
	return s
}

// Table returns the table name.
func (s *Store) Table() string { return s.table }

func keyOf(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrPK: &types.AttributeValueMemberS{Value: pk},
		attrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// getItem reads one item; it returns ErrNotFound when there is none.
func (s *Store) getItem(ctx context.Context, pk, sk string) (*item, error) {
	return s.readItem(ctx, pk, sk, false)
}

// readItem reads one item, strongly consistent when consistent is set (the writers' reads).
func (s *Store) readItem(ctx context.Context, pk, sk string, consistent bool) (*item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:              &s.table,
		Key:                    keyOf(pk, sk),
		ConsistentRead:         aws.Bool(consistent),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	})
	if err != nil {
		return nil, classify("get item", err)
	}
	if len(out.Item) == 0 {
		return nil, ErrNotFound
	}
	return readItem(out.Item)
}

// batchGet reads the items of keys (PK, SK pairs). The result has one entry per key, in key
// order, nil for a miss.
func (s *Store) batchGet(ctx context.Context, keys [][2]string) ([]*item, error) {
	return s.batchGetWith(ctx, keys, false)
}

// batchGetWith is batchGet, strongly consistent when consistent is set.
func (s *Store) batchGetWith(ctx context.Context, keys [][2]string, consistent bool) ([]*item, error) {
	found := make(map[[2]string]*item, len(keys))
	err := s.batchGetEach(withWireItems(ctx), keys, consistent, func(out *dynamodb.BatchGetItemOutput) error {
		got, err := responseItems(out.ResultMetadata, out.Responses[s.table])
		for _, it := range got {
			found[[2]string{it.PK, it.SK}] = it
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	items := make([]*item, len(keys))
	for i, k := range keys {
		items[i] = found[k]
	}
	return items, nil
}

// batchGetEach reads the distinct keys with BatchGetItem, at most maxBatchGet a call, retrying
// UnprocessedKeys with backoff, and hands each call's output to got.
func (s *Store) batchGetEach(ctx context.Context, keys [][2]string, consistent bool, got func(*dynamodb.BatchGetItemOutput) error) error {
	// Deduplicate before chunking, so that a key repeated past the 100th costs no extra call:
	// one BatchGetItem per 100 distinct keys.
	seen := make(map[[2]string]bool, len(keys))
	distinct := make([][2]string, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			distinct = append(distinct, k)
		}
	}
	// The chunks go out at once (at most batchGetParallel in flight): keys past the 100th cost a
	// request each, not a round trip each. got is called by one chunk at a time.
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(batchGetParallel)
	for start := 0; start < len(distinct); start += maxBatchGet {
		chunk := distinct[start:min(start+maxBatchGet, len(distinct))]
		g.Go(func() error {
			req := make([]map[string]types.AttributeValue, 0, len(chunk))
			for _, k := range chunk {
				req = append(req, keyOf(k[0], k[1]))
			}
			for attempt := 0; len(req) > 0; attempt++ {
				if attempt > 0 {
					if attempt >= maxLeftover {
						return fmt.Errorf("batch get: %d keys still unprocessed after %d attempts: %w", len(req), attempt, ErrUnavailable)
					}
					if err := sleep(ctx, backoff(attempt)); err != nil {
						return err
					}
				}
				ka := types.KeysAndAttributes{Keys: req}
				if consistent {
					ka.ConsistentRead = aws.Bool(true)
				}
				out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
					RequestItems:           map[string]types.KeysAndAttributes{s.table: ka},
					ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
				})
				if err != nil {
					return classify("batch get", err)
				}
				mu.Lock()
				err = got(out)
				mu.Unlock()
				if err != nil {
					return err
				}
				req = out.UnprocessedKeys[s.table].Keys
			}
			return nil
		})
	}
	return g.Wait()
}

// batchGetParallel is how many BatchGetItem calls of one read are in flight at once.
const batchGetParallel = 8

// backoff is the wait before retry attempt n of leftovers: 10 ms doubling, capped at 1 s, with
// jitter.
func backoff(n int) time.Duration {
	d := time.Duration(math.Min(float64(10*time.Millisecond)*math.Pow(2, float64(n-1)), float64(time.Second)))
	var b [1]byte
	_, _ = rand.Read(b[:])
	return d/2 + time.Duration(int64(d/2)*int64(b[0])/255)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// query describes one DynamoDB Query: a key condition on the base table or GSI1, an optional
// filter, a direction and how many matching items to return (0 means all).
type query struct {
	index   bool
	pk      string
	lo, hi  string // SK (or GSI1SK) BETWEEN lo AND hi; both empty means the whole partition
	reverse bool
	filter  string
	names   map[string]string
	values  map[string]types.AttributeValue
	want    int
	start   map[string]types.AttributeValue
	now     time.Time // when set, items whose TTL passed are dropped
	// projection, when set, is the ProjectionExpression (its names in names).
	projection string
	// consistent asks for a strongly consistent read (base table only).
	consistent bool
	// withDeleting keeps items marked deleting, which every other read skips.
	withDeleting bool
}

// run executes q, following LastEvaluatedKey until want items matched or the range is done.
// more reports whether items remain past the last one returned.
func (s *Store) run(ctx context.Context, q query) (items []*item, more bool, err error) {
	pkName, skName := attrPK, attrSK
	if q.index {
		pkName, skName = attrGSI1PK, attrGSI1SK
	}
	names := map[string]string{"#pk": pkName}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: q.pk}}
	cond := "#pk = :pk"
	if q.lo != "" || q.hi != "" {
		names["#sk"] = skName
		values[":lo"] = &types.AttributeValueMemberS{Value: q.lo}
		values[":hi"] = &types.AttributeValueMemberS{Value: q.hi}
		cond += " AND #sk BETWEEN :lo AND :hi"
	}
	for k, v := range q.names {
		names[k] = v
	}
	for k, v := range q.values {
		values[k] = v
	}
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    &cond,
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ScanIndexForward:          aws.Bool(!q.reverse),
		ExclusiveStartKey:         q.start,
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	}
	if q.index {
		in.IndexName = aws.String(gsi1Name)
	} else if q.consistent {
		in.ConsistentRead = aws.Bool(true)
	}
	if q.filter != "" {
		in.FilterExpression = &q.filter
	}
	if q.projection != "" {
		in.ProjectionExpression = &q.projection
	}
	wctx := withWireItems(ctx)
	for {
		if q.want > 0 {
			// One more than asked, to learn whether another page exists; a filtered query
			// reads ahead, since the limit counts items before the filter.
			limit := q.want - len(items) + 1
			if q.filter != "" || !q.now.IsZero() {
				limit = max(limit, 100)
			}
			in.Limit = aws.Int32(int32(limit))
		}
		out, err := s.db.Query(wctx, in)
		if err != nil {
			return nil, false, classify("query", err)
		}
		got, err := responseItems(out.ResultMetadata, out.Items)
		if err != nil {
			return nil, false, err
		}
		for _, it := range got {
			if (it.Deleting && !q.withDeleting) || (!q.now.IsZero() && it.expired(q.now)) {
				continue // a capability being deleted is gone from every read
			}
			items = append(items, it)
		}
		if q.want > 0 && len(items) > q.want {
			return items[:q.want], true, nil
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, false, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
