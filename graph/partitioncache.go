package graph

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/internal/lru"
)

// DefaultCacheBytes is the default bound of a server's partition cache: 64 MiB.
const DefaultCacheBytes = 64 << 20

// PartitionCache keeps, for one server process, the decoded ranges of capability partitions
// (the components and dependencies range, the rules range: what the loaders read) recently read,
// each tagged with the version of its capability it belongs to: the METADATA's WriteSeq,
// Revision, CreatedAt and UpdatedAt. A request uses a cached range only when the capability it
// read in the same request carries the same version; it fills the cache only with a range read
// (strongly consistent) after a strongly consistent read of that version completed. Every write
// to a partition changes its WriteSeq in the same transaction, so an entry is never served
// once its capability changed, through this server or any other (docs/performance.md). After
// a write through this server, Retag moves the ranges the write did not touch to the new
// version.
//
// Entries are shared between concurrent requests and never changed after they are filled: the
// loaders copy the slices they hand out, and nothing mutates the entities.
//
// It is bounded by the estimated bytes of its entries (cacheWeight), the least recently used
// evicted first. A nil *PartitionCache caches nothing.
type PartitionCache struct {
	lru                      *lru.LRU[*cachedRange]
	hits, misses, evictions  prometheus.Counter
	entriesGauge, bytesGauge prometheus.GaugeFunc
}

// cachedRange is one cached range: the version of the capability it was read at and what it holds.
type cachedRange struct {
	version capVersion
	part    *dynamo.Partition
}

// capVersion names one state of a capability's partition. WriteSeq changes with every write;
// Revision, CreatedAt and UpdatedAt are compared too, as a second guard (a capability created,
// imported or bulk-loaded again gets a new random WriteSeq as well).
type capVersion struct {
	seq, revision    int
	created, updated int64
}

func versionOf(c *catalog.Capability) capVersion {
	return capVersion{seq: c.WriteSeq, revision: c.Revision, created: c.CreatedAt.UnixNano(), updated: c.UpdatedAt.UnixNano()}
}

// NewPartitionCache returns a cache bounded by maxBytes, its counters registered with reg
// (catalogue_partition_cache_*; reg may be nil). maxBytes <= 0 returns nil: no caching.
func NewPartitionCache(maxBytes int, reg prometheus.Registerer) *PartitionCache {
	if maxBytes <= 0 {
		return nil
	}
	c := &PartitionCache{
		lru: lru.New[*cachedRange](math.MaxInt, maxBytes),
		hits: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_partition_cache_hits_total",
			Help: "Partition ranges answered from the partition cache."}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_partition_cache_misses_total",
			Help: "Partition ranges read from DynamoDB with the partition cache on."}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_partition_cache_evictions_total",
			Help: "Partition cache entries evicted to stay within -cache-bytes."}),
	}
	c.entriesGauge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "catalogue_partition_cache_entries",
		Help: "Ranges held by the partition cache."}, func() float64 { n, _ := c.lru.Len(); return float64(n) })
	c.bytesGauge = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "catalogue_partition_cache_bytes",
		Help: "Estimated bytes held by the partition cache (bounded by -cache-bytes)."}, func() float64 { _, b := c.lru.Len(); return float64(b) })
	if reg != nil {
		reg.MustRegister(c.hits, c.misses, c.evictions, c.entriesGauge, c.bytesGauge)
	}
	return c
}

// Len returns how many ranges are cached and their estimated bytes.
func (c *PartitionCache) Len() (entries, bytes int) {
	if c == nil {
		return 0, 0
	}
	return c.lru.Len()
}

func cacheKey(table string, k rangeKey) string {
	return table + "\x00" + k.CapabilityID + "\x00" + strconv.Itoa(int(k.Range))
}

// get returns the range k of table at version v, if cached at exactly that version.
func (c *PartitionCache) get(table string, k rangeKey, v capVersion) (*dynamo.Partition, bool) {
	e, ok := c.lru.Get(cacheKey(table, k))
	if !ok || e.version != v {
		return nil, false
	}
	return e.part, true
}

// put caches p as the range k of table at version v, replacing what the key held.
func (c *PartitionCache) put(table string, k rangeKey, v capVersion, p *dynamo.Partition) {
	if n := c.lru.Set(cacheKey(table, k), &cachedRange{version: v, part: p}, cacheWeight(table, k, p)); n > 0 {
		c.evictions.Add(float64(n))
	}
}

// cacheableRanges are the ranges the loaders can cache (dynamo.PlanRanges of any wanted set).
var cacheableRanges = [...]dynamo.Segment{dynamo.SegComponents, dynamo.SegDependencies,
	dynamo.SegComponents | dynamo.SegDependencies, dynamo.SegRules}

// Retag follows a write this server committed (dynamo.Options.OnCommit): the METADATA moved
// atomically from version e.From to e.To, and every writer of a cached range changes the
// version in the same transaction, so a range the transaction did not touch holds at e.To
// exactly what it held at e.From. An entry of such a range tagged exactly e.From is tagged e.To
// instead (compare-and-swap: an entry filled at any other version is left as it is); an entry
// of a touched range is left at its version, which no read returns again. It creates no entry.
// The first read after this server's own write then needs only the capability's version.
func (c *PartitionCache) Retag(e dynamo.Commit) {
	if c == nil || e.From == nil || e.To == nil {
		return
	}
	from, to := versionOf(e.From), versionOf(e.To)
	if from == to {
		return
	}
	for _, r := range cacheableRanges {
		if e.Touched&r != 0 {
			continue
		}
		c.lru.Swap(cacheKey(e.Table, rangeKey{CapabilityID: e.CapabilityID, Range: r}), func(old *cachedRange) (*cachedRange, bool) {
			if old.version != from {
				return nil, false
			}
			return &cachedRange{version: to, part: old.part}, true
		})
	}
}

// Per-entity and per-entry overheads of cacheWeight: the struct, its Meta and slice headers,
// the pointers; the key, the LRU element and the map slot.
const (
	entityOverhead = 256
	entryOverhead  = 512
)

// cacheWeight estimates the bytes an entry holds: twice the JSON size of its entities (a decoded
// struct's strings, slices and pointers take about that; the JSON is close to the item bytes
// read), plus entityOverhead per entity and entryOverhead for the entry. It is computed once, when
// the entry is filled (a miss, which has just read and decoded the same bytes).
func cacheWeight(table string, k rangeKey, p *dynamo.Partition) int {
	n := entryOverhead + len(table) + len(k.CapabilityID)
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			n += 4096 // not expected; count it as a large entity
			return
		}
		n += 2*len(b) + entityOverhead
	}
	for _, x := range p.Components {
		add(x)
	}
	for _, x := range p.Dependencies {
		add(x)
	}
	for _, x := range p.Rules {
		add(x)
	}
	return n
}
