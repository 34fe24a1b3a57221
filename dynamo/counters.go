package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// The catalogue's counters (catalogueSummary, owners, owner(name), totalCount fast paths).
//
// Every capability contributes a fixed set of counts to the catalogue (contribution): 1 to the
// capabilities, to its domain, status, priority and health status, its health score to the
// sum of scores, its components per type, health and team, 1 to each of its owners, its active
// jobs per type. A write that turns a capability from old into new adds contribution(new) -
// contribution(old) to ONE counter shard, picked at random, in the write's own
// TransactWriteItems: the counters move exactly when the write commits, and a lost or refused
// transaction moves none. The counters are split over counterShards items, each in its own
// partition, so that no item (and no partition) takes every write of the catalogue: a shard
// takes 1/counterShards of them. Reading sums the shards: one BatchGetItem of counterShards
// keys.
//
// Attribute names are user text (domains, owners, teams, component types): every update names
// them through ExpressionAttributeNames. A shard holds one number per distinct key it ever
// took (a count that went back to 0 stays as 0 until `check -repair` removes it), so its size
// grows with the number of distinct domains, owners, teams and types in the catalogue: about
// the name plus 3 to 21 bytes each, a name at most maxCounterNameBytes + 3 bytes, so at worst
// about 1,900 keys of the longest names, and some 10,000 of 30-byte names, fit DynamoDB's
// 400 KB item limit. `check` warns when a shard is over counterShardWarnBytes; a write whose
// ADD would take a shard over 400 KB is refused by DynamoDB (the transaction is cancelled and
// the mutation fails, writing nothing) - see docs/data-model.md.

const (
	// counterShards is how many counter items the counters are split over.
	counterShards = 16
	// maxCounterKeysPerUpdate bounds the counters one Update action adds to (DynamoDB's
	// expressions are at most 4 KB: ", #k99 = if_not_exists(#k99, :z) + :k99" is 40 bytes a
	// key): a larger delta takes further shards, one action each.
	maxCounterKeysPerUpdate = 80
	// counterShardWarnBytes is the shard size check reports as close to the 400 KB limit.
	counterShardWarnBytes = 300 * 1024
	// healthScale turns health scores into exact integers: thousandths of a point.
	healthScale = 1000
)

// Counts are the catalogue's counters, summed over the shards. Maps hold no zeros.
type Counts struct {
	Capabilities int
	Components   int
	ByDomain     map[string]int
	ByStatus     map[catalog.CapabilityStatus]int
	ByPriority   map[catalog.Priority]int
	ByHealth     map[catalog.HealthStatus]int
	// HealthScoreSum is the sum of the reported health scores in thousandths of a point, over
	// the HealthReported capabilities that report one.
	HealthScoreSum     int64
	HealthReported     int
	ComponentsByType   map[string]int
	ComponentsByHealth map[catalog.HealthStatus]int
	// OwnerCapabilities counts, per folded owner, the capabilities it owns (its own or through
	// a component's team: once each); OwnerComponents the components per folded team.
	OwnerCapabilities map[string]int
	OwnerComponents   map[string]int
	ActiveJobs        map[catalog.JobType]int
}

// MeanHealthScore is the mean of the reported health scores, nil when none reports one.
func (c *Counts) MeanHealthScore() *float64 {
	if c.HealthReported <= 0 {
		return nil
	}
	m := float64(c.HealthScoreSum) / healthScale / float64(c.HealthReported)
	return &m
}

// ActiveJobTotal is how many jobs are PENDING or RUNNING.
func (c *Counts) ActiveJobTotal() int {
	n := 0
	for _, v := range c.ActiveJobs {
		n += v
	}
	return n
}

// Owners returns every owner that owns a capability or a component, in name order.
func (c *Counts) Owners() []string {
	set := map[string]bool{}
	for k := range c.OwnerCapabilities {
		set[k] = true
	}
	for k := range c.OwnerComponents {
		set[k] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// OwnerKey is how a name is looked up among the owners: folded (catalog.Fold), and cut as a
// counter name is when it is very long.
func OwnerKey(name string) string { return counterName(catalog.Fold(name)) }

// countsOf turns summed counter attributes into Counts.
func countsOf(raw map[string]int64) *Counts {
	c := &Counts{ByDomain: map[string]int{}, ByStatus: map[catalog.CapabilityStatus]int{}, ByPriority: map[catalog.Priority]int{},
		ByHealth: map[catalog.HealthStatus]int{}, ComponentsByType: map[string]int{}, ComponentsByHealth: map[catalog.HealthStatus]int{},
		OwnerCapabilities: map[string]int{}, OwnerComponents: map[string]int{}, ActiveJobs: map[catalog.JobType]int{}}
	for name, n := range raw {
		kind, v, ok := parseCounterKey(name)
		if !ok || n == 0 {
			continue
		}
		switch kind {
		case counterCapabilities:
			c.Capabilities = int(n)
		case counterComponents:
			c.Components = int(n)
		case counterHealthSum:
			c.HealthScoreSum = n
		case counterHealthN:
			c.HealthReported = int(n)
		case counterDomain:
			c.ByDomain[v] = int(n)
		case counterStatus:
			c.ByStatus[catalog.CapabilityStatus(v)] = int(n)
		case counterPriority:
			c.ByPriority[catalog.Priority(v)] = int(n)
		case counterHealth:
			c.ByHealth[catalog.HealthStatus(v)] = int(n)
		case counterComponentType:
			c.ComponentsByType[v] = int(n)
		case counterComponentHealth:
			c.ComponentsByHealth[catalog.HealthStatus(v)] = int(n)
		case counterOwnerCaps:
			c.OwnerCapabilities[v] = int(n)
		case counterOwnerComps:
			c.OwnerComponents[v] = int(n)
		case counterActiveJobs:
			c.ActiveJobs[catalog.JobType(v)] = int(n)
		}
	}
	return c
}

// contribution is what one capability adds to the counters (nil adds nothing), by attribute
// name.
func contribution(c *catalog.Capability) map[string]int64 {
	if c == nil {
		return nil
	}
	a := c.Aggregates
	m := map[string]int64{}
	add := func(k string, n int64) {
		if n != 0 {
			m[k] += n
		}
	}
	add(counterCapabilities, 1)
	add(counterKey(counterDomain, c.BusinessDomain), 1)
	add(counterKey(counterStatus, string(c.Status)), 1)
	add(counterKey(counterPriority, string(c.Priority)), 1)
	health := a.HealthStatus
	if health == "" {
		health = catalog.HealthUnknown
	}
	add(counterKey(counterHealth, string(health)), 1)
	if score := a.ReportedHealthScore(); score != nil {
		add(counterHealthSum, int64(math.Round(*score*healthScale)))
		add(counterHealthN, 1)
	}
	add(counterComponents, int64(a.TotalComponents))
	owners := map[string]bool{}
	if o := catalog.Fold(c.Owner); o != "" {
		owners[o] = true
	}
	if t := a.Components; t != nil {
		for k, n := range t.Types {
			add(counterKey(counterComponentType, k), int64(n))
		}
		for k, n := range t.Health {
			add(counterKey(counterComponentHealth, string(k)), int64(n))
		}
		for team, n := range t.Teams {
			add(counterKey(counterOwnerComps, team), int64(n))
			owners[team] = true
		}
	}
	for o := range owners {
		add(counterKey(counterOwnerCaps, o), 1)
	}
	for t, n := range a.ActiveJobs {
		add(counterKey(counterActiveJobs, string(t)), int64(n))
	}
	return m
}

// counterDelta is to - from, without zeros.
func counterDelta(from, to map[string]int64) map[string]int64 {
	d := map[string]int64{}
	for k, n := range to {
		d[k] += n
	}
	for k, n := range from {
		d[k] -= n
	}
	for k, n := range d {
		if n == 0 {
			delete(d, k)
		}
	}
	return d
}

// counterWrites returns the Update actions that move the counters of a write turning old into
// new (nil for a capability created or deleted): none when nothing counted changed, else one
// per maxCounterKeysPerUpdate keys, on distinct shards from a random one. A delta that would
// need more than every shard is BAD_USER_INPUT (naming the components, the only part of a
// capability that can make it so large), and nothing is written.
func counterWrites(old, new *catalog.Capability) ([]types.TransactWriteItem, error) {
	if err := checkContribution(new); err != nil {
		return nil, err
	}
	return counterUpdates(counterDelta(contribution(old), contribution(new)), rand.IntN(counterShards))
}

// maxContributionKeys bounds how many counters one capability contributes to: what one
// transaction can move (counterShards updates of maxCounterKeysPerUpdate keys). Every write
// keeps a capability within it, so that its delete, which takes all of them away at once,
// always fits; only components (their types and teams) can grow it.
const maxContributionKeys = counterShards * maxCounterKeysPerUpdate

// checkContribution refuses a capability that would contribute to more counters than
// maxContributionKeys: BAD_USER_INPUT naming the components.
func checkContribution(c *catalog.Capability) error {
	if n := len(contribution(c)); n > maxContributionKeys {
		return catalog.Invalid("components", "the capability's components would have %d distinct types and teams between them and its other counters, over the %d one capability may count under: use fewer distinct types or teams",
			n, maxContributionKeys)
	}
	return nil
}

func counterUpdates(delta map[string]int64, first int) ([]types.TransactWriteItem, error) {
	if len(delta) == 0 {
		return nil, nil
	}
	keys := slices.Sorted(maps.Keys(delta))
	if len(keys) > counterShards*maxCounterKeysPerUpdate {
		return nil, catalog.Invalid("components", "this change moves %d distinct counters (component types and teams), over the %d one write may move",
			len(keys), counterShards*maxCounterKeysPerUpdate)
	}
	var out []types.TransactWriteItem
	for i := 0; len(keys) > 0; i++ {
		chunk := keys[:min(maxCounterKeysPerUpdate, len(keys))]
		keys = keys[len(chunk):]
		out = append(out, types.TransactWriteItem{Update: counterUpdate((first+i)%counterShards, chunk, delta)})
	}
	return out, nil
}

// counterUpdate is the Update that ADDs delta's keys to shard n (and 1 to its version).
func counterUpdate(n int, keys []string, delta map[string]int64) *types.Update {
	names := map[string]string{"#et": attrEntityType, "#v": counterVersion}
	values := map[string]types.AttributeValue{":et": &types.AttributeValueMemberS{Value: entityCounter}, ":one": num(1), ":z": num(0)}
	// SET x = if_not_exists(x, 0) + d is ADD, in the subset of update expressions every
	// backend of the project implements (memdyn has no ADD).
	expr := "SET #et = :et, #v = if_not_exists(#v, :z) + :one"
	for i, k := range keys {
		nk, vk := "#k"+strconv.Itoa(i), ":k"+strconv.Itoa(i)
		names[nk] = k
		values[vk] = &types.AttributeValueMemberN{Value: strconv.FormatInt(delta[k], 10)}
		expr += ", " + nk + " = if_not_exists(" + nk + ", :z) + " + vk
	}
	return &types.Update{Key: keyOf(counterPK(n), counterSK), UpdateExpression: aws.String(expr),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values}
}

// counterShard is one shard as read: its counters, version and size.
type counterShard struct {
	counts  map[string]int64
	version int64
	size    int
}

// readShards reads every counter shard, strongly consistent, with one BatchGetItem.
func (s *Store) readShards(ctx context.Context) ([]counterShard, error) {
	keys := make([][2]string, counterShards)
	for i := range keys {
		keys[i] = [2]string{counterPK(i), counterSK}
	}
	shards := make([]counterShard, counterShards)
	index := map[string]int{}
	for i := range keys {
		index[keys[i][0]] = i
	}
	err := s.batchGetEach(ctx, keys, true, func(out *dynamodb.BatchGetItemOutput) error {
		for _, m := range out.Responses[s.table] {
			i, ok := index[str(m[attrPK])]
			if !ok {
				continue
			}
			sh := counterShard{counts: map[string]int64{}, size: itemSize(m)}
			for name, av := range m {
				n, isNum := av.(*types.AttributeValueMemberN)
				if !isNum {
					continue
				}
				v, err := strconv.ParseInt(n.Value, 10, 64)
				if err != nil {
					return fmt.Errorf("counter shard %d: %s: %w", i, name, err)
				}
				if name == counterVersion {
					sh.version = v
				} else if _, _, ok := parseCounterKey(name); ok {
					sh.counts[name] = v
				}
			}
			shards[i] = sh
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read counters: %w", err)
	}
	return shards, nil
}

// sumShards adds up the shards' counters.
func sumShards(shards []counterShard) map[string]int64 {
	sum := map[string]int64{}
	for _, sh := range shards {
		for k, n := range sh.counts {
			sum[k] += n
		}
	}
	return sum
}

// Counts returns the catalogue's counters, summed over the shards (one BatchGetItem), and
// keeps them as the search planner's statistics. Within a context of WithCountsOnce the
// counters are read once: every later or concurrent call shares that read.
func (s *Store) Counts(ctx context.Context) (*Counts, error) {
	if reads, ok := ctx.Value(countsOnceKey{}).(*countsOnce); ok {
		r := reads.of(s)
		r.once.Do(func() { r.counts, r.err = s.readCounts(ctx) })
		return r.counts, r.err
	}
	return s.readCounts(ctx)
}

// countsOnce holds the counters read by each store within one WithCountsOnce context.
type countsOnce struct {
	mu    sync.Mutex
	reads map[*Store]*countsRead
}

type countsRead struct {
	once   sync.Once
	counts *Counts
	err    error
}

type countsOnceKey struct{}

// WithCountsOnce returns ctx in which a store reads the catalogue's counters at most once
// (Counts): one GraphQL query whose fields each need them (catalogueSummary, owners,
// owner(name), a totalCount the counters decide) then costs one BatchGetItem, and every field
// answers from the same snapshot. Meant for one read-only operation: a write made within ctx
// is not seen by a later Counts.
func WithCountsOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, countsOnceKey{}, &countsOnce{reads: map[*Store]*countsRead{}})
}

func (o *countsOnce) of(s *Store) *countsRead {
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.reads[s]
	if r == nil {
		r = &countsRead{}
		o.reads[s] = r
	}
	return r
}

// readCounts reads and sums the counter shards (through the read memo when there is one).
func (s *Store) readCounts(ctx context.Context) (*Counts, error) {
	at := s.now()
	c, err := memoized(s, pageKey{scope: "counters"}, func() (*Counts, error) {
		shards, err := s.readShards(ctx)
		if err != nil {
			return nil, err
		}
		return countsOf(sumShards(shards)), nil
	})
	if err == nil {
		s.stats.offer(c, at)
	}
	return c, err
}

// recountCounters is the counters recounted from every capability's METADATA (a consistent,
// paginated Scan of the table: admin tools only).
func (s *Store) recountCounters(ctx context.Context) (map[string]int64, error) {
	in := &dynamodb.ScanInput{TableName: &s.table, ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("#sk = :meta AND #et = :cap"),
		ExpressionAttributeNames:  map[string]string{"#sk": attrSK, "#et": attrEntityType},
		ExpressionAttributeValues: map[string]types.AttributeValue{":meta": &types.AttributeValueMemberS{Value: metadataSK}, ":cap": &types.AttributeValueMemberS{Value: entityCapability}}}
	var metas []map[string]types.AttributeValue
	for {
		out, err := s.db.Scan(ctx, in)
		if err != nil {
			return nil, classify("recount counters", err)
		}
		metas = append(metas, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return recountMetadata(metas)
}

// recountMetadata sums the contributions of the live capabilities among raw items.
func recountMetadata(raw []map[string]types.AttributeValue) (map[string]int64, error) {
	sum := map[string]int64{}
	for _, m := range raw {
		if str(m[attrSK]) != metadataSK || str(m[attrEntityType]) != entityCapability {
			continue
		}
		it, err := readItem(m)
		if err != nil {
			return nil, err
		}
		if _, err := parseCapabilityPK(it.PK); err != nil || it.Deleting {
			continue
		}
		c, err := toCapability(it)
		if err != nil {
			return nil, err
		}
		for k, n := range contribution(c) {
			sum[k] += n
		}
	}
	return sum, nil
}

// counterCorrection measures what the counters lack: the recount minus the shards' sum, taken
// so that no counted write committed while the recount ran (every shard's version is the same
// before and after it). Such a difference stays the same under every later counted write (each
// moves the recount and the sum alike), so it may be added at any later moment - once: base
// is shard 0's version it was measured at, which the correction is conditioned on.
func (s *Store) counterCorrection(ctx context.Context) (delta map[string]int64, base int64, err error) {
	for attempt := 0; ; attempt++ {
		before, err := s.readShards(ctx)
		if err != nil {
			return nil, 0, err
		}
		recount, err := s.recountCounters(ctx)
		if err != nil {
			return nil, 0, err
		}
		after, err := s.readShards(ctx)
		if err != nil {
			return nil, 0, err
		}
		same := true
		for i := range before {
			same = same && before[i].version == after[i].version
		}
		if same {
			return counterDelta(sumShards(before), recount), before[0].version, nil
		}
		if attempt+1 >= maxWriteAttempts {
			return nil, 0, fmt.Errorf("recount counters: the catalogue kept changing during %d recounts: %w", attempt+1, ErrUnavailable)
		}
		if err := sleep(ctx, backoff(min(attempt+1, 4))); err != nil {
			return nil, 0, err
		}
	}
}

// RepairCounters makes the counters equal a recount of the catalogue (on a table that has
// none yet, it creates them) and returns the correction it added (nil when none was due). The
// correction is measured by counterCorrection and added to shard 0 on the condition that
// shard 0's version is still the one measured: every repair writes shard 0, so of two repairs
// at once only one adds its correction, and the other measures again. A correction of more
// keys than one expression holds goes in several updates, each conditioned on the version the
// previous one left; stopped part way by a writer of shard 0, what went in stays, and the next
// measurement accounts for it. It is safe while the catalogue is being written.
func (s *Store) RepairCounters(ctx context.Context) (map[string]int64, error) {
	for attempt := 0; ; attempt++ {
		delta, base, err := s.counterCorrection(ctx)
		if err != nil || len(delta) == 0 {
			return nil, err
		}
		raced, err := s.addCorrection(ctx, delta, base)
		switch {
		case err != nil:
			return nil, err
		case !raced:
			return delta, nil
		case attempt+1 >= maxWriteAttempts:
			return nil, fmt.Errorf("repair counters: %w", ErrUnavailable)
		}
	}
}

// addCorrection ADDs delta to shard 0 whose version was base; raced reports a version that
// moved meanwhile (not all of delta went in).
func (s *Store) addCorrection(ctx context.Context, delta map[string]int64, base int64) (raced bool, err error) {
	keys := slices.Sorted(maps.Keys(delta))
	for v := base; len(keys) > 0; v++ {
		chunk := keys[:min(maxCounterKeysPerUpdate, len(keys))]
		keys = keys[len(chunk):]
		up := counterUpdate(0, chunk, delta)
		cond := "attribute_not_exists(#v)"
		if v > 0 {
			cond = "#v = :base"
			up.ExpressionAttributeValues[":base"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
		}
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table, Key: up.Key, UpdateExpression: up.UpdateExpression,
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: up.ExpressionAttributeNames, ExpressionAttributeValues: up.ExpressionAttributeValues})
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return true, nil
		}
		if err != nil {
			return false, classify("repair counters", err)
		}
	}
	return false, nil
}

// checkCounters compares the counter shards with a recount of the METADATA items among raw
// (the check's scan) and reports a difference as one repairable finding, and each shard over
// counterShardWarnBytes. A write that committed during the scan may show as a difference: the
// repair measures again (counterCorrection) and adds only what is really missing.
func (s *Store) checkCounters(ctx context.Context, raw []map[string]types.AttributeValue) ([]Finding, error) {
	recount, err := recountMetadata(raw)
	if err != nil {
		return nil, err
	}
	shards, err := s.readShards(ctx)
	if err != nil {
		return nil, err
	}
	var out []Finding
	if d := counterDelta(sumShards(shards), recount); len(d) > 0 {
		keys := slices.Sorted(maps.Keys(d))
		detail := ""
		sum := sumShards(shards)
		for i, k := range keys {
			if i == 10 {
				detail += fmt.Sprintf(" and %d more", len(keys)-i)
				break
			}
			detail += fmt.Sprintf(" %s=%d (recount %d);", k, sum[k], recount[k])
		}
		out = append(out, Finding{Kind: FindingCounters, Subject: "counters", Repairable: true,
			Detail: fmt.Sprintf("%d counters differ from a recount:%s", len(keys), detail)})
	}
	for i, sh := range shards {
		if sh.size > counterShardWarnBytes {
			out = append(out, Finding{Kind: FindingCounterSize, Subject: counterPK(i), Repairable: true,
				Detail: fmt.Sprintf("%d bytes, %d counters: near DynamoDB's 400 KB item limit (check -repair drops zero counters)", sh.size, len(sh.counts))})
		}
	}
	return out, nil
}

// compactCounters removes from every shard the counters that are 0 (a domain, owner or type
// no longer in the catalogue), each removal conditioned on the counter still being 0, so a
// writer that moved it meanwhile keeps it. It returns how many it removed.
func (s *Store) compactCounters(ctx context.Context) (int, error) {
	shards, err := s.readShards(ctx)
	if err != nil {
		return 0, err
	}
	removed := 0
	for i, sh := range shards {
		var zeros []string
		for k, n := range sh.counts {
			if n == 0 {
				zeros = append(zeros, k)
			}
		}
		slices.Sort(zeros)
		for len(zeros) > 0 {
			chunk := zeros[:min(maxCounterKeysPerUpdate/2, len(zeros))]
			zeros = zeros[len(chunk):]
			names := map[string]string{}
			expr, cond := "REMOVE ", ""
			for j, k := range chunk {
				nk := "#k" + strconv.Itoa(j)
				names[nk] = k
				if j > 0 {
					expr, cond = expr+", ", cond+" AND "
				}
				expr += nk
				cond += nk + " = :zero"
			}
			_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.table, Key: keyOf(counterPK(i), counterSK),
				UpdateExpression: aws.String(expr), ConditionExpression: aws.String(cond), ExpressionAttributeNames: names,
				ExpressionAttributeValues: map[string]types.AttributeValue{":zero": num(0)}})
			var ccf *types.ConditionalCheckFailedException
			if errors.As(err, &ccf) {
				continue // one moved meanwhile: the next compaction takes the rest
			}
			if err != nil {
				return removed, classify("compact counters", err)
			}
			removed += len(chunk)
		}
	}
	return removed, nil
}

// OwnerCounts is an owner with its counts: the capabilities it owns (its own or through a
// component's team, once each) and the components of its team.
type OwnerCounts struct {
	Name         string
	Capabilities int
	Components   int
}

// owner returns name's counts in c, nil when it owns nothing.
func (c *Counts) owner(name string) *OwnerCounts {
	o := &OwnerCounts{Name: name, Capabilities: c.OwnerCapabilities[name], Components: c.OwnerComponents[name]}
	if o.Capabilities == 0 && o.Components == 0 {
		return nil
	}
	return o
}

// ownersScope is the cursor scope of the owners listing.
const ownersScope = "owners"

// Owners returns a page of the owners in name order (folded names, as catalog.Fold makes
// them), from the counters: one BatchGetItem whatever the page, and the number of owners.
func (s *Store) Owners(ctx context.Context, first int, after string) (*Page[*OwnerCounts], int, error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, 0, err
	}
	from := ""
	if after != "" {
		body, ok := s.cursors.Decode(ownersScope, after)
		if !ok {
			return nil, 0, catalog.Invalid("after", "cursor is not valid for this query")
		}
		from = string(body)
	}
	c, err := s.Counts(ctx)
	if err != nil {
		return nil, 0, err
	}
	names := c.Owners()
	i := 0
	if after != "" {
		i, _ = slices.BinarySearch(names, from)
		if i < len(names) && names[i] == from {
			i++
		}
	}
	p := &Page[*OwnerCounts]{Items: []*OwnerCounts{}, Cursors: []string{}}
	for ; i < len(names) && len(p.Items) < first; i++ {
		p.Items = append(p.Items, c.owner(names[i]))
		p.Cursors = append(p.Cursors, s.cursors.Encode(ownersScope, []byte(names[i])))
	}
	p.HasNext = i < len(names)
	return p, len(names), nil
}

// Owner returns the counts of the owner name (folded: "Platform-Team" is "platform team"),
// nil when it owns nothing: one BatchGetItem.
func (s *Store) Owner(ctx context.Context, name string) (*OwnerCounts, error) {
	key := OwnerKey(name)
	if key == "" {
		return nil, nil
	}
	c, err := s.Counts(ctx)
	if err != nil {
		return nil, err
	}
	return c.owner(key), nil
}

// CheckCounters compares the counters with a recount of the whole catalogue (a Scan: an audit
// tool for a quiet table) and returns an error naming every counter that differs.
func (s *Store) CheckCounters(ctx context.Context) error {
	shards, err := s.readShards(ctx)
	if err != nil {
		return err
	}
	recount, err := s.recountCounters(ctx)
	if err != nil {
		return err
	}
	sum := sumShards(shards)
	d := counterDelta(sum, recount)
	if len(d) == 0 {
		return nil
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(d)) {
		diffs = append(diffs, fmt.Sprintf("%s = %d, recount %d", k, sum[k], recount[k]))
	}
	return fmt.Errorf("counters differ from a recount: %v", diffs)
}

// The totalCounts the counters decide alone, one BatchGetItem whatever the catalogue's size (none
// on the embedded engine while nothing was written): no filter, or a filter of one counted kind.
// Every other filter is counted from its index ranges.

// countedByCounters reports whether the counters decide the count of pl: no search, no tags,
// and at most one kind of filter.
func (pl *searchPlan) countedByCounters() bool {
	kinds := 0
	for _, set := range []bool{pl.domains != nil, pl.statuses != nil, pl.prios != nil, pl.health != nil, pl.owner != ""} {
		if set {
			kinds++
		}
	}
	return len(pl.words) == 0 && len(pl.tags) == 0 && kinds <= 1
}

// capabilityCount is the number of capabilities matching pl, when the counters decide it
// (countedByCounters).
func (c *Counts) capabilityCount(pl *searchPlan) (int, bool) {
	switch {
	case !pl.countedByCounters():
		return 0, false
	case pl.domains != nil:
		return sumOf(c.ByDomain, pl.domains), true
	case pl.statuses != nil:
		return sumOf(c.ByStatus, pl.statuses), true
	case pl.prios != nil:
		return sumOf(c.ByPriority, pl.prios), true
	case pl.health != nil:
		return sumOf(c.ByHealth, pl.health), true
	case pl.owner != "":
		if o := c.owner(OwnerKey(pl.owner)); o != nil {
			return o.Capabilities, true
		}
		return 0, true
	default:
		return c.Capabilities, true
	}
}

// countedByCounters reports whether the counters decide the count of f: no filter, or types,
// health statuses or team alone.
func (f ComponentFilter) countedByCounters() bool {
	kinds := 0
	for _, set := range []bool{f.Search != "", f.Types != nil, f.Statuses != nil, f.HealthStatuses != nil, f.Team != ""} {
		if set {
			kinds++
		}
	}
	return kinds == 0 || (kinds == 1 && f.Search == "" && f.Statuses == nil)
}

// componentCount is the number of components matching f, when the counters decide it
// (countedByCounters).
func (c *Counts) componentCount(f ComponentFilter) (int, bool) {
	switch {
	case !f.countedByCounters():
		return 0, false
	case f.Types == nil && f.HealthStatuses == nil && f.Team == "":
		return c.Components, true
	case f.Types != nil:
		return sumOf(c.ComponentsByType, setOf(f.Types)), true
	case f.HealthStatuses != nil:
		return sumOf(c.ComponentsByHealth, setOf(f.HealthStatuses)), true
	default:
		if o := c.owner(OwnerKey(f.Team)); o != nil {
			return o.Components, true
		}
		return 0, true
	}
}

// activeJobCount is the number of active jobs of the given types (all without any).
func (c *Counts) activeJobCount(jobTypes []catalog.JobType) int {
	if len(jobTypes) == 0 {
		return c.ActiveJobTotal()
	}
	return sumOf(c.ActiveJobs, setOf(jobTypes))
}

func setOf[K comparable](keys []K) map[K]bool {
	set := make(map[K]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set
}

func sumOf[K comparable](counts map[K]int, keys map[K]bool) int {
	n := 0
	for k := range keys {
		n += counts[k]
	}
	return n
}

// lenIfGiven is the length of a list filter, -1 when it is not given (nil).
func lenIfGiven[T any](xs []T) int {
	if xs == nil {
		return -1
	}
	return len(xs)
}

// noEmptyList refuses a list filter given with no value: whether it would match nothing or
// everything is a guess a client should not have to make (leave it out to match everything).
func noEmptyList(parent string, lens map[string]int) error {
	for _, name := range slices.Sorted(maps.Keys(lens)) {
		if lens[name] == 0 {
			return catalog.Invalid(parent+"."+name, "give at least one value, or leave the filter out to match every value")
		}
	}
	return nil
}
