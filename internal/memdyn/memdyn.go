// Package memdyn is an in-memory DynamoDB that speaks the DynamoDB JSON wire protocol over HTTP:
// the server's embedded default (dynamo.StartEmbedded), the default backend of the tests
// (dynamo/dynamotest) and the benchmark's (bench). It replaced minidyn there, which answers
// every Query by scanning the whole table under one lock.
//
// memdyn keeps each partition (of the table and of every global secondary index) sorted by sort
// key, so a Query costs a binary search plus the items it returns, and it stores items as the
// JSON the client sent, so reads re-emit bytes without re-encoding. It implements what the
// catalogue store and its tests send (reads, conditional writes, batches, transactions,
// UpdateItem, TTL expiry); anything else is an error, never a silent approximation. README.md lists what it implements and what it does not, and
// conformance_test.go checks it against minidyn and dynalite.
package memdyn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	pageLimit    = 1 << 20 // bytes a Query reads before it stops (DynamoDB's 1 MB)
	maxItemSize  = 400 * 1024
	maxBatchGet  = 100
	maxBatchPut  = 25
	targetPrefix = "DynamoDB_20120810."
)

// Server is an in-memory DynamoDB. It is an http.Handler; the zero value is not usable: call New.
//
// Reads (GetItem, BatchGetItem, Query, Scan, DescribeTable) share a read lock and run side by
// side; writes take the write lock, so a write, a batch or a transaction is atomic to every
// reader.
type Server struct {
	mu     sync.RWMutex
	tables map[string]*table
	// expiring orders the items with a TTL (see ttl.go); nextExpiry is its earliest TTL.
	expiring   expiryHeap
	nextExpiry atomic.Int64
	tokens     map[string]requestToken // TransactWriteItems client request tokens (see transact.go)
	tokenOrder []tokenAt               // the tokens in the order they were recorded (dropExpiredTokens)
	clock      atomic.Pointer[func() time.Time]
	faults     atomic.Pointer[Faults]
	// gen counts the write lock's acquisitions (lock): see Generation.
	gen atomic.Uint64
}

// lock takes the write lock for a change and advances the generation, before anything is
// changed: every write path takes the lock through it but PutItem, UpdateItem and DeleteItem,
// which advance it once their condition held.
func (s *Server) lock() { s.lockGen() }

// lockGen is lock, returning the generation it advanced to: while Generation still returns it,
// nothing has been written since this writer's change.
func (s *Server) lockGen() uint64 {
	s.mu.Lock()
	return s.gen.Add(1)
}

// GenerationHeader is the response header of a TransactWriteItems or PutItem call that
// committed: the generation (see Generation) its write lock advanced to. While Generation still
// returns that value, the items the call wrote are what every read returns, so a client in
// this process may keep them as read at that generation (the embedded store's read memo does),
// and what it read at the generation before, of items the call did not write, stays as it was.
// A token replay, which writes nothing, has none; nor has a write that failed its condition.
// A PutItem, UpdateItem or DeleteItem that failed its condition leaves the generation where it
// was.
const GenerationHeader = "X-Memdyn-Generation"

// committed is a write's answer (as the call's handler returns it) with the generation it
// committed at (GenerationHeader).
type committed struct {
	body       any
	generation uint64
}

// Generation returns a number that grows whenever anything may have been written (an item,
// a table, a TTL expiry; also a TransactWriteItems that failed its condition or replayed a
// token, though not a PutItem, UpdateItem or DeleteItem that failed theirs), before the change
// is made:
// while it returns the same value, every read returns what it returned before. A caller that
// reads Generation, then reads items, and keeps them tagged with that generation may serve
// them again for as long as Generation still returns it: they are then at least as new as
// a read at that moment would return (a write that began after the Generation call made the
// later reads see another value). SetClock and SetFaults, which change what reads return,
// advance it too.
//
// It first deletes what has expired by now, as every call does (see ttl.go), so that time
// passing is a write like any other.
func (s *Server) Generation() uint64 {
	s.expire()
	return s.gen.Load()
}

// New returns an empty server.
func New() *Server {
	s := &Server{tables: map[string]*table{}, tokens: map[string]requestToken{}}
	s.nextExpiry.Store(math.MaxInt64)
	return s
}

type table struct {
	srv       *Server
	name      string
	hash, rng string
	create    json.RawMessage // the CreateTable input, echoed by DescribeTable
	base      *index
	gsis      map[string]*index
	items     int
	bytes     int64
	// ttl is the attribute UpdateTimeToLive named ("" while TTL is off).
	ttl string
}

// index is the table itself or one of its GSIs: partitions by hash-key value.
type index struct {
	name      string // "" for the table
	hash, rng string
	parts     map[string]*part
}

// part is one partition: its entries by ordering key and in order (kept sorted on every write,
// so that readers never modify it).
type part struct {
	byOrd map[string]*entry
	order []*entry
}

// entry places a record in one index partition. key is its sort-key value; ord orders the
// partition (the sort key, then for a GSI the table key, so that equal GSI keys stay distinct).
type entry struct {
	key, ord string
	rec      *rec
}

// rec is a stored item: its table key, its GSI keys, the JSON the client sent, its size.
type rec struct {
	pk, sk  string
	gsi     []gsiKey
	raw     json.RawMessage
	size    int
	expires int64                  // the TTL attribute's value (epoch seconds), 0 when none
	split   atomic.Pointer[parsed] // for projections, built on first use
	// The item as the last projection read it (see projection.apply).
	projected atomic.Pointer[projectedItem]
}

type gsiKey struct{ index, hash, rng string }

// ServeHTTP answers one DynamoDB API call.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, targetPrefix)
	if r.Method != http.MethodPost || !ok {
		writeErr(w, "UnknownOperationException", "memdyn: unknown target "+target)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeErr(w, "ValidationException", err.Error())
		return
	}
	if f := s.faults.Load(); f != nil {
		if code := f.fail(op, body); code != "" {
			writeErr(w, code, "memdyn: injected fault")
			return
		}
	}
	s.expire()
	var out any
	switch op {
	case "CreateTable":
		out, err = s.createTable(body)
	case "DescribeTable":
		out, err = s.describeTable(body)
	case "DeleteTable":
		out, err = s.deleteTable(body)
	case "UpdateTimeToLive":
		out, err = s.updateTTL(body)
	case "GetItem":
		out, err = s.getItem(body)
	case "BatchGetItem":
		out, err = s.batchGetItem(body)
	case "Query":
		out, err = s.query(body)
	case "Scan":
		out, err = s.scan(body)
	case "BatchWriteItem":
		out, err = s.batchWriteItem(body)
	case "PutItem":
		out, err = s.putItem(body)
	case "DeleteItem":
		out, err = s.deleteItem(body)
	case "UpdateItem":
		out, err = s.updateItem(body)
	case "TransactWriteItems":
		out, err = s.transactWriteItems(body)
	default:
		err = &apiError{"UnknownOperationException", "memdyn does not implement " + op}
	}
	if err != nil {
		if de, ok := err.(*detailedError); ok {
			writeErrBody(w, de.code, de.msg, de.extra)
		} else if ae, ok := err.(*apiError); ok {
			writeErr(w, ae.code, ae.msg)
		} else {
			writeErr(w, "ValidationException", err.Error())
		}
		return
	}
	if c, ok := out.(committed); ok {
		w.Header().Set(GenerationHeader, strconv.FormatUint(c.generation, 10))
		out = c.body
	}
	b, ok := out.([]byte)
	if !ok {
		if b, err = json.Marshal(out); err != nil {
			writeErr(w, "InternalServerError", err.Error())
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}

type apiError struct{ code, msg string }

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func validation(format string, args ...any) error {
	return &apiError{"ValidationException", fmt.Sprintf(format, args...)}
}

// detailedError is an error whose body carries members beyond the message: a transaction's
// CancellationReasons, a failed condition's Item.
type detailedError struct {
	apiError
	extra map[string]any
}

func writeErr(w http.ResponseWriter, code, msg string) { writeErrBody(w, code, msg, nil) }

func writeErrBody(w http.ResponseWriter, code, msg string, extra map[string]any) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	status := http.StatusBadRequest
	if code == "InternalServerError" || code == "ServiceUnavailable" {
		status = http.StatusInternalServerError
	}
	w.WriteHeader(status)
	body := map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + code, "message": msg}
	for k, v := range extra {
		body[k] = v
	}
	_ = json.NewEncoder(w).Encode(body)
}

// ---------------------------------------------------------------------------------------------
// Tables.

type keyElem struct {
	AttributeName string
	KeyType       string
}

type createInput struct {
	TableName              string
	KeySchema              []keyElem
	AttributeDefinitions   []struct{ AttributeName, AttributeType string }
	GlobalSecondaryIndexes []struct {
		IndexName  string
		KeySchema  []keyElem
		Projection struct{ ProjectionType string }
	}
}

func keyNames(ks []keyElem) (hash, rng string, err error) {
	for _, k := range ks {
		switch k.KeyType {
		case "HASH":
			hash = k.AttributeName
		case "RANGE":
			rng = k.AttributeName
		}
	}
	if hash == "" {
		return "", "", validation("key schema has no HASH key")
	}
	return hash, rng, nil
}

func (s *Server) createTable(body []byte) (any, error) {
	var in createInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	hash, rng, err := keyNames(in.KeySchema)
	if err != nil {
		return nil, err
	}
	for _, d := range in.AttributeDefinitions {
		if d.AttributeType != "S" {
			return nil, validation("memdyn supports string key attributes only (%s is %s)", d.AttributeName, d.AttributeType)
		}
	}
	t := &table{srv: s, name: in.TableName, hash: hash, rng: rng, create: append(json.RawMessage(nil), body...),
		base: &index{hash: hash, rng: rng, parts: map[string]*part{}}, gsis: map[string]*index{}}
	for _, g := range in.GlobalSecondaryIndexes {
		if p := g.Projection.ProjectionType; p != "ALL" {
			return nil, validation("memdyn supports GSI projection ALL only (%s is %q)", g.IndexName, p)
		}
		h, r, err := keyNames(g.KeySchema)
		if err != nil {
			return nil, err
		}
		t.gsis[g.IndexName] = &index{name: g.IndexName, hash: h, rng: r, parts: map[string]*part{}}
	}
	s.lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[in.TableName]; ok {
		return nil, &apiError{"ResourceInUseException", "Table already exists: " + in.TableName}
	}
	s.tables[in.TableName] = t
	return map[string]any{"TableDescription": t.description()}, nil
}

func (t *table) description() map[string]any {
	var d map[string]any
	_ = json.Unmarshal(t.create, &d)
	delete(d, "BillingMode")
	d["TableStatus"] = "ACTIVE"
	d["ItemCount"] = t.items
	d["TableSizeBytes"] = t.bytes
	d["BillingModeSummary"] = map[string]string{"BillingMode": "PAY_PER_REQUEST"}
	if gs, ok := d["GlobalSecondaryIndexes"].([]any); ok {
		for _, g := range gs {
			if m, ok := g.(map[string]any); ok {
				m["IndexStatus"] = "ACTIVE"
			}
		}
	}
	return d
}

func (s *Server) table(name string) (*table, error) {
	t, ok := s.tables[name]
	if !ok {
		return nil, &apiError{"ResourceNotFoundException", "Requested resource not found: Table: " + name + " not found"}
	}
	return t, nil
}

func (s *Server) describeTable(body []byte) (any, error) {
	var in struct{ TableName string }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, err := s.table(in.TableName)
	if err != nil {
		return nil, err
	}
	return map[string]any{"Table": t.description()}, nil
}

func (s *Server) deleteTable(body []byte) (any, error) {
	var in struct{ TableName string }
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	s.lock()
	defer s.mu.Unlock()
	t, err := s.table(in.TableName)
	if err != nil {
		return nil, err
	}
	delete(s.tables, in.TableName)
	return map[string]any{"TableDescription": t.description()}, nil
}

// ---------------------------------------------------------------------------------------------
// Partitions.

// put adds the entry with e's ord, or replaces it, at its place in the order: an append when it
// sorts last (a bulk load in key order), else a binary search and a copy.
func (p *part) put(e *entry) {
	if _, ok := p.byOrd[e.ord]; ok {
		p.remove(e.ord)
	}
	p.byOrd[e.ord] = e
	n := len(p.order)
	if n == 0 || p.order[n-1].ord < e.ord {
		p.order = append(p.order, e)
		return
	}
	i := sort.Search(n, func(i int) bool { return p.order[i].ord >= e.ord })
	p.order = append(p.order, nil)
	copy(p.order[i+1:], p.order[i:])
	p.order[i] = e
}

func (p *part) remove(ord string) {
	if _, ok := p.byOrd[ord]; !ok {
		return
	}
	delete(p.byOrd, ord)
	i := sort.Search(len(p.order), func(i int) bool { return p.order[i].ord >= ord })
	p.order = append(p.order[:i], p.order[i+1:]...)
}

func (ix *index) part(hash string, create bool) *part {
	p := ix.parts[hash]
	if p == nil && create {
		p = &part{byOrd: map[string]*entry{}}
		ix.parts[hash] = p
	}
	return p
}

func gsiOrd(key, pk, sk string) string { return key + "\x00" + pk + "\x00" + sk }

// newRec reads an item for storage: its keys, GSI keys and size, in one scan of the bytes that
// decodes only the key attributes.
func (t *table) newRec(raw json.RawMessage) (*rec, error) {
	size, values, err := scanItem(raw, t.keyAttributes())
	if err != nil {
		return nil, validation("item: %v", err)
	}
	keys := make(map[string]*av, len(values))
	var expires int64
	for name, v := range values {
		if name == t.ttl {
			expires = ttlOf(v)
			if name != t.hash && name != t.rng {
				continue
			}
		}
		var x av
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, validation("item attribute %s: %v", name, err)
		}
		keys[name] = &x
	}
	pk, sk, err := t.keyOf(keys)
	if err != nil {
		return nil, err
	}
	r := &rec{pk: pk, sk: sk, raw: raw, size: size, expires: expires}
	if r.size > maxItemSize {
		return nil, validation("Item size has exceeded the maximum allowed size")
	}
	for name, g := range t.gsis {
		h, okh := keys[g.hash]
		if !okh || h.S == nil {
			continue
		}
		var rv string
		if g.rng != "" {
			x, ok := keys[g.rng]
			if !ok || x.S == nil {
				continue
			}
			rv = *x.S
		}
		r.gsi = append(r.gsi, gsiKey{index: name, hash: *h.S, rng: rv})
	}
	return r, nil
}

// keyAttributes are the attribute names of the table's and its indexes' keys.
func (t *table) keyAttributes() []string {
	names := []string{t.hash}
	if t.rng != "" {
		names = append(names, t.rng)
	}
	if t.ttl != "" {
		names = append(names, t.ttl)
	}
	for _, g := range t.gsis {
		names = append(names, g.hash)
		if g.rng != "" {
			names = append(names, g.rng)
		}
	}
	return names
}

// keyOf returns the table key of an item or a key map.
func (t *table) keyOf(item map[string]*av) (pk, sk string, err error) {
	h, ok := item[t.hash]
	if !ok || h.S == nil || *h.S == "" {
		return "", "", validation("One of the required keys was not given a value: %s", t.hash)
	}
	if t.rng != "" {
		r, ok := item[t.rng]
		if !ok || r.S == nil || *r.S == "" {
			return "", "", validation("One of the required keys was not given a value: %s", t.rng)
		}
		sk = *r.S
	}
	// DynamoDB's key limits, in bytes.
	if len(*h.S) > 2048 {
		return "", "", validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of 2048 bytes")
	}
	if len(sk) > 1024 {
		return "", "", validation("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes")
	}
	return *h.S, sk, nil
}

func (t *table) get(pk, sk string) *rec {
	p := t.base.part(pk, false)
	if p == nil {
		return nil
	}
	if e, ok := p.byOrd[sk]; ok {
		return e.rec
	}
	return nil
}

// store puts r, replacing the item with its key, and returns the item replaced.
func (t *table) store(r *rec) *rec {
	old := t.del(r.pk, r.sk)
	t.base.part(r.pk, true).put(&entry{key: r.sk, ord: r.sk, rec: r})
	for _, g := range r.gsi {
		t.gsis[g.index].part(g.hash, true).put(&entry{key: g.rng, ord: gsiOrd(g.rng, r.pk, r.sk), rec: r})
	}
	t.items++
	t.bytes += int64(r.size)
	t.srv.watch(t, r)
	return old
}

// del removes the item with the key and returns it.
func (t *table) del(pk, sk string) *rec {
	old := t.get(pk, sk)
	if old == nil {
		return nil
	}
	p := t.base.part(pk, false)
	p.remove(sk)
	if len(p.order) == 0 {
		delete(t.base.parts, pk)
	}
	for _, g := range old.gsi {
		ix := t.gsis[g.index]
		gp := ix.part(g.hash, false)
		gp.remove(gsiOrd(g.rng, old.pk, old.sk))
		if len(gp.order) == 0 {
			delete(ix.parts, g.hash)
		}
	}
	t.items--
	t.bytes -= int64(old.size)
	return old
}

// ---------------------------------------------------------------------------------------------
// Reads.

// capacity is a ConsumedCapacity in the wire format.
type capacity struct {
	TableName     string
	CapacityUnits float64
}

func readUnits(size int, consistent bool) float64 {
	u := math.Max(1, math.Ceil(float64(size)/4096))
	if !consistent {
		u /= 2
	}
	return u
}

func writeUnits(size int) float64 { return math.Max(1, math.Ceil(float64(size)/1024)) }

func (s *Server) getItem(body []byte) (any, error) {
	var in struct {
		TableName              string
		Key                    map[string]*av
		ConsistentRead         bool
		ProjectionExpression   string
		ReturnConsumedCapacity string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	if in.ProjectionExpression != "" {
		return nil, validation("memdyn does not implement ProjectionExpression")
	}
	s.mu.RLock()
	t, err := s.table(in.TableName)
	if err != nil {
		s.mu.RUnlock()
		return nil, err
	}
	pk, sk, err := t.keyOf(in.Key)
	if err != nil {
		s.mu.RUnlock()
		return nil, err
	}
	r := t.get(pk, sk)
	s.mu.RUnlock()
	var o obj
	size := 0
	if r != nil {
		size = r.size
		o.raw("Item", r.raw)
	}
	o.capacity(in.ReturnConsumedCapacity, capacity{in.TableName, readUnits(size, in.ConsistentRead)})
	return o.bytes(), nil
}

// obj writes a JSON object member by member.
type obj struct {
	b bytes.Buffer
	n int
}

func (o *obj) raw(name string, v []byte) {
	if o.n == 0 {
		o.b.WriteString("{")
	} else {
		o.b.WriteString(",")
	}
	o.n++
	o.b.WriteString(`"` + name + `":`)
	o.b.Write(v)
}

func (o *obj) value(name string, v any) {
	b, _ := json.Marshal(v)
	o.raw(name, b)
}

// capacity adds ConsumedCapacity when the caller asked for it.
func (o *obj) capacity(want string, v any) {
	if want != "" && want != "NONE" {
		o.value("ConsumedCapacity", v)
	}
}

func (o *obj) bytes() []byte {
	if o.n == 0 {
		return []byte("{}")
	}
	o.b.WriteString("}")
	return o.b.Bytes()
}

func (s *Server) batchGetItem(body []byte) (any, error) {
	var in struct {
		RequestItems map[string]struct {
			Keys                 []map[string]*av
			ConsistentRead       bool
			ProjectionExpression string
		}
		ReturnConsumedCapacity string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	n := 0
	for _, ka := range in.RequestItems {
		n += len(ka.Keys)
		if ka.ProjectionExpression != "" {
			return nil, validation("memdyn does not implement ProjectionExpression")
		}
	}
	if n == 0 || n > maxBatchGet {
		return nil, validation("Too many items requested for the BatchGetItem call (%d, at most %d)", n, maxBatchGet)
	}
	type found struct {
		table string
		recs  []*rec
		units float64
	}
	var res []found
	unprocessed := map[string]map[string]any{}
	leave := s.unprocessed()
	s.mu.RLock()
	for name, ka := range in.RequestItems {
		t, err := s.table(name)
		if err != nil {
			s.mu.RUnlock()
			return nil, err
		}
		f := found{table: name}
		seen := map[[2]string]bool{}
		for i, k := range ka.Keys {
			if leave != nil && leave(name, i, k) {
				u := unprocessed[name]
				if u == nil {
					u = map[string]any{"Keys": []map[string]*av{}, "ConsistentRead": ka.ConsistentRead}
					unprocessed[name] = u
				}
				u["Keys"] = append(u["Keys"].([]map[string]*av), k)
				continue
			}
			pk, sk, err := t.keyOf(k)
			if err != nil {
				s.mu.RUnlock()
				return nil, err
			}
			if seen[[2]string{pk, sk}] {
				s.mu.RUnlock()
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[[2]string{pk, sk}] = true
			if r := t.get(pk, sk); r != nil {
				f.recs = append(f.recs, r)
				f.units += readUnits(r.size, ka.ConsistentRead)
			}
		}
		res = append(res, f)
	}
	s.mu.RUnlock()
	var resp obj
	var caps []capacity
	for _, f := range res {
		var items bytes.Buffer
		items.WriteString("[")
		for j, r := range f.recs {
			if j > 0 {
				items.WriteString(",")
			}
			items.Write(r.raw)
		}
		items.WriteString("]")
		resp.raw(f.table, items.Bytes())
		caps = append(caps, capacity{f.table, f.units})
	}
	var o obj
	o.raw("Responses", resp.bytes())
	o.value("UnprocessedKeys", unprocessed)
	o.capacity(in.ReturnConsumedCapacity, caps)
	return o.bytes(), nil
}

type queryInput struct {
	TableName                 string
	IndexName                 string
	KeyConditionExpression    string
	FilterExpression          string
	ProjectionExpression      string
	Select                    string
	ExpressionAttributeNames  map[string]string
	ExpressionAttributeValues map[string]*av
	ScanIndexForward          *bool
	Limit                     int
	ExclusiveStartKey         map[string]*av
	ConsistentRead            bool
	ReturnConsumedCapacity    string
	// Segment and TotalSegments divide a Scan (Query has neither).
	Segment       int
	TotalSegments int
}

func (s *Server) query(body []byte) (any, error) {
	var in queryInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	if in.Select != "" && in.Select != "ALL_ATTRIBUTES" && in.Select != "COUNT" && !(in.Select == "SPECIFIC_ATTRIBUTES" && in.ProjectionExpression != "") {
		return nil, validation("memdyn does not implement Select %s", in.Select)
	}
	if in.Limit < 0 {
		return nil, validation("Limit must be positive")
	}
	forward := in.ScanIndexForward == nil || *in.ScanIndexForward
	used := map[string]bool{}

	t, ix, err := s.readIndex(in.TableName, in.IndexName, in.ConsistentRead)
	if err != nil {
		return nil, err
	}
	kc, err := parseKeyCond(in.KeyConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, used, ix.hash, ix.rng)
	if err != nil {
		s.mu.RUnlock()
		return nil, validation("%v", err)
	}
	var filter *node
	if in.FilterExpression != "" {
		if filter, err = parseExpr(in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, used); err != nil {
			s.mu.RUnlock()
			return nil, validation("FilterExpression: %v", err)
		}
	}
	var proj *projection
	if in.ProjectionExpression != "" {
		if proj, err = parseProjection(in.ProjectionExpression, in.ExpressionAttributeNames, used); err != nil {
			s.mu.RUnlock()
			return nil, err
		}
	}
	var startOrd string
	if len(in.ExclusiveStartKey) > 0 {
		if startOrd, err = t.startOrd(ix, in.ExclusiveStartKey); err != nil {
			s.mu.RUnlock()
			return nil, err
		}
	}
	var scanned []*rec
	size := 0
	stopped := false
	if p := ix.part(kc.hash, false); p != nil {
		i, j := p.bounds(kc)
		if startOrd != "" {
			if forward {
				i = max(i, sort.Search(len(p.order), func(k int) bool { return p.order[k].ord > startOrd }))
			} else {
				j = min(j, sort.Search(len(p.order), func(k int) bool { return p.order[k].ord >= startOrd }))
			}
		}
		for n := 0; n < j-i; n++ {
			e := p.order[i+n]
			if !forward {
				e = p.order[j-1-n]
			}
			if len(scanned) > 0 && size+e.rec.size > pageLimit {
				stopped = true
				break
			}
			scanned = append(scanned, e.rec)
			size += e.rec.size
			if in.Limit > 0 && len(scanned) == in.Limit {
				stopped = true
				break
			}
		}
	}
	s.mu.RUnlock()
	for k := range in.ExpressionAttributeNames {
		if !used[k] {
			return nil, validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", k)
		}
	}
	for k := range in.ExpressionAttributeValues {
		if !used[k] {
			return nil, validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", k)
		}
	}

	// The page is built once at its final size: the items first, then the envelope around them.
	items := make([][]byte, 0, len(scanned))
	total, counted := 2, 0
	for _, r := range scanned {
		if filter != nil {
			var item map[string]*av
			if err := json.Unmarshal(r.raw, &item); err != nil {
				return nil, &apiError{"InternalServerError", err.Error()}
			}
			if !filter.eval(item) {
				continue
			}
		}
		if in.Select == "COUNT" {
			counted++
			continue
		}
		item := []byte(r.raw)
		if proj != nil {
			if item, err = proj.apply(r); err != nil {
				return nil, &apiError{"InternalServerError", err.Error()}
			}
		}
		items = append(items, item)
		total += len(item) + 1
	}
	count := len(items) + counted
	var o obj
	o.b.Grow(total + 512)
	if in.Select != "COUNT" {
		o.raw("Items", nil)
		o.b.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				o.b.WriteByte(',')
			}
			o.b.Write(item)
		}
		o.b.WriteByte(']')
	}
	o.value("Count", count)
	o.value("ScannedCount", len(scanned))
	if stopped {
		o.value("LastEvaluatedKey", t.lastKey(ix, scanned[len(scanned)-1]))
	}
	o.capacity(in.ReturnConsumedCapacity, capacity{in.TableName, readUnits(size, in.ConsistentRead)})
	return o.bytes(), nil
}

// readIndex takes the read lock and returns the table and the index (its base when indexName
// is empty) a Query or Scan reads, with the lock held; on an error the lock is released.
func (s *Server) readIndex(tableName, indexName string, consistent bool) (*table, *index, error) {
	s.mu.RLock()
	t, err := s.table(tableName)
	if err != nil {
		s.mu.RUnlock()
		return nil, nil, err
	}
	ix := t.base
	if indexName != "" {
		if ix = t.gsis[indexName]; ix == nil {
			s.mu.RUnlock()
			return nil, nil, validation("The table does not have the specified index: %s", indexName)
		}
		if consistent {
			s.mu.RUnlock()
			return nil, nil, validation("Consistent reads are not supported on global secondary indexes")
		}
	}
	return t, ix, nil
}

// scan reads the table or an index in (partition key, sort key) order: FilterExpression,
// ProjectionExpression, Select COUNT, Limit, the 1 MB page and ExclusiveStartKey as for Query,
// and parallel segments (a partition lies whole in one segment).
// maxSegments is DynamoDB's limit on a parallel Scan's TotalSegments.
const maxSegments = 1000000

// segmentOf returns the segment of a parallel Scan of total segments that holds the partition pk:
// as in DynamoDB, a partition lies whole in one segment, chosen by a hash of its key.
func segmentOf(pk string, total int) int {
	h := fnv.New32a()
	h.Write([]byte(pk))
	return int(h.Sum32() % uint32(total))
}

func (s *Server) scan(body []byte) (any, error) {
	var in queryInput
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	switch in.Select {
	case "", "ALL_ATTRIBUTES", "COUNT", "ALL_PROJECTED_ATTRIBUTES":
	case "SPECIFIC_ATTRIBUTES":
		if in.ProjectionExpression == "" {
			return nil, validation("Select SPECIFIC_ATTRIBUTES needs a ProjectionExpression")
		}
	default:
		return nil, validation("memdyn does not implement Select %s", in.Select)
	}
	if in.TotalSegments < 0 || in.TotalSegments > maxSegments || in.Segment < 0 || (in.Segment > 0 && in.Segment >= in.TotalSegments) {
		return nil, validation("Segment %d of TotalSegments %d is out of range", in.Segment, in.TotalSegments)
	}
	used := map[string]bool{}
	var filter *node
	var err error
	if in.FilterExpression != "" {
		if filter, err = parseExpr(in.FilterExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues, used); err != nil {
			return nil, validation("FilterExpression: %v", err)
		}
	}
	var proj *projection
	if in.ProjectionExpression != "" {
		if proj, err = parseProjection(in.ProjectionExpression, in.ExpressionAttributeNames, used); err != nil {
			return nil, err
		}
	}
	if err := unused(in.ExpressionAttributeNames, in.ExpressionAttributeValues, used); err != nil {
		return nil, err
	}
	t, ix, err := s.readIndex(in.TableName, in.IndexName, in.ConsistentRead)
	if err != nil {
		return nil, err
	}
	hashes := make([]string, 0, len(ix.parts))
	for h := range ix.parts {
		if in.TotalSegments > 1 && segmentOf(h, in.TotalSegments) != in.Segment {
			continue // another segment's partition
		}
		hashes = append(hashes, h)
	}
	sort.Strings(hashes)
	startHash, startOrd := "", ""
	if len(in.ExclusiveStartKey) > 0 {
		h, ok := in.ExclusiveStartKey[ix.hash]
		if !ok || h.S == nil {
			s.mu.RUnlock()
			return nil, validation("The provided starting key is invalid: no %s", ix.hash)
		}
		startHash = *h.S
		if startOrd, err = t.startOrd(ix, in.ExclusiveStartKey); err != nil {
			s.mu.RUnlock()
			return nil, err
		}
	}
	var scanned []*rec
	size, stopped := 0, false
scan:
	for _, h := range hashes[sort.SearchStrings(hashes, startHash):] {
		p := ix.parts[h]
		i := 0
		if h == startHash {
			i = sort.Search(len(p.order), func(k int) bool { return p.order[k].ord > startOrd })
		}
		for _, e := range p.order[i:] {
			if len(scanned) > 0 && size+e.rec.size > pageLimit {
				stopped = true
				break scan
			}
			scanned = append(scanned, e.rec)
			size += e.rec.size
			if in.Limit > 0 && len(scanned) == in.Limit {
				stopped = true
				break scan
			}
		}
	}
	s.mu.RUnlock()
	var b bytes.Buffer
	b.WriteString("[")
	count := 0
	for _, r := range scanned {
		if filter != nil {
			item, err := decodeItem(r.raw)
			if err != nil {
				return nil, &apiError{"InternalServerError", err.Error()}
			}
			if !filter.eval(item) {
				continue
			}
		}
		if in.Select != "COUNT" {
			item := []byte(r.raw)
			if proj != nil {
				if item, err = proj.apply(r); err != nil {
					return nil, &apiError{"InternalServerError", err.Error()}
				}
			}
			if count > 0 {
				b.WriteString(",")
			}
			b.Write(item)
		}
		count++
	}
	b.WriteString("]")
	var o obj
	if in.Select != "COUNT" {
		o.raw("Items", b.Bytes())
	}
	o.value("Count", count)
	o.value("ScannedCount", len(scanned))
	if stopped {
		o.value("LastEvaluatedKey", t.lastKey(ix, scanned[len(scanned)-1]))
	}
	o.capacity(in.ReturnConsumedCapacity, capacity{in.TableName, readUnits(size, in.ConsistentRead)})
	return o.bytes(), nil
}

// lastKey is the LastEvaluatedKey of a page of index ix that ended at r: the table's key, and
// an index's key too.
func (t *table) lastKey(ix *index, r *rec) map[string]*av {
	lek := map[string]*av{t.hash: {S: &r.pk}}
	if t.rng != "" {
		lek[t.rng] = &av{S: &r.sk}
	}
	if ix != t.base {
		for _, g := range r.gsi {
			if g.index == ix.name {
				lek[ix.hash] = &av{S: &g.hash}
				if ix.rng != "" {
					lek[ix.rng] = &av{S: &g.rng}
				}
			}
		}
	}
	return lek
}

// startOrd returns the ordering key of an ExclusiveStartKey in index ix.
func (t *table) startOrd(ix *index, key map[string]*av) (string, error) {
	pk, sk, err := t.keyOf(key)
	if err != nil {
		return "", validation("The provided starting key is invalid: %v", err)
	}
	if ix == t.base {
		return sk, nil
	}
	var rv string
	if ix.rng != "" {
		x, ok := key[ix.rng]
		if !ok || x.S == nil {
			return "", validation("The provided starting key is invalid: no %s", ix.rng)
		}
		rv = *x.S
	}
	return gsiOrd(rv, pk, sk), nil
}

// bounds returns the half-open range [i, j) of a sorted partition that the sort-key condition
// selects.
func (p *part) bounds(kc *keyCond) (i, j int) {
	n := len(p.order)
	ge := func(v string) int { return sort.Search(n, func(k int) bool { return p.order[k].key >= v }) }
	gt := func(v string) int { return sort.Search(n, func(k int) bool { return p.order[k].key > v }) }
	switch kc.rangeOp {
	case "=":
		return ge(kc.a), gt(kc.a)
	case "<":
		return 0, ge(kc.a)
	case "<=":
		return 0, gt(kc.a)
	case ">":
		return gt(kc.a), n
	case ">=":
		return ge(kc.a), n
	case "between":
		if kc.a > kc.b {
			return 0, 0
		}
		return ge(kc.a), gt(kc.b)
	case "begins_with":
		i = ge(kc.a)
		return i, i + sort.Search(n-i, func(k int) bool { return !strings.HasPrefix(p.order[i+k].key, kc.a) })
	}
	return 0, n
}

// ---------------------------------------------------------------------------------------------
// Writes.

func (s *Server) batchWriteItem(body []byte) (any, error) {
	var in struct {
		RequestItems map[string][]struct {
			PutRequest    *struct{ Item json.RawMessage }
			DeleteRequest *struct{ Key map[string]*av }
		}
		ReturnConsumedCapacity string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	n := 0
	for _, reqs := range in.RequestItems {
		n += len(reqs)
	}
	if n == 0 || n > maxBatchPut {
		return nil, validation("Too many items requested for the BatchWriteItem call (%d, at most %d)", n, maxBatchPut)
	}
	// Decode outside the lock: it is the expensive part.
	type op struct {
		table string
		put   *rec
		key   map[string]*av
		n     int
	}
	var ops []op
	s.lock()
	tables := map[string]*table{}
	for name := range in.RequestItems {
		t, err := s.table(name)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		tables[name] = t
	}
	s.mu.Unlock()
	for name, reqs := range in.RequestItems {
		for i, r := range reqs {
			switch {
			case r.PutRequest != nil:
				rc, err := tables[name].newRec(r.PutRequest.Item)
				if err != nil {
					return nil, err
				}
				ops = append(ops, op{table: name, put: rc, n: i})
			case r.DeleteRequest != nil:
				ops = append(ops, op{table: name, key: r.DeleteRequest.Key, n: i})
			default:
				return nil, validation("a write request needs PutRequest or DeleteRequest")
			}
		}
	}
	// The Unprocessed fault hook picks requests to leave out, as DynamoDB may.
	unprocessed := map[string][]map[string]any{}
	if leave := s.unprocessed(); leave != nil {
		kept := ops[:0]
		for _, o := range ops {
			item, req := o.key, map[string]any{"DeleteRequest": map[string]any{"Key": o.key}}
			if o.put != nil {
				var err error
				if item, err = decodeItem(o.put.raw); err != nil {
					return nil, validation("%v", err)
				}
				req = map[string]any{"PutRequest": map[string]any{"Item": o.put.raw}}
			}
			if leave(o.table, o.n, item) {
				unprocessed[o.table] = append(unprocessed[o.table], req)
				continue
			}
			kept = append(kept, o)
		}
		ops = kept
	}
	units := map[string]float64{}
	s.lock()
	for _, o := range ops {
		t := tables[o.table]
		if o.put != nil {
			t.store(o.put)
			units[o.table] += writeUnits(o.put.size)
			continue
		}
		pk, sk, err := t.keyOf(o.key)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		t.del(pk, sk)
		units[o.table]++
	}
	s.mu.Unlock()
	var o obj
	o.value("UnprocessedItems", unprocessed)
	var caps []capacity
	for name, u := range units {
		caps = append(caps, capacity{name, u})
	}
	o.capacity(in.ReturnConsumedCapacity, caps)
	return o.bytes(), nil
}

type condInput struct {
	TableName                           string
	ConditionExpression                 string
	ExpressionAttributeNames            map[string]string
	ExpressionAttributeValues           map[string]*av
	ReturnValues                        string
	ReturnValuesOnConditionCheckFailure string
	ReturnConsumedCapacity              string
}

// parse parses the condition (nil when there is none), marking the placeholders it uses.
func (c *condInput) parse(used map[string]bool) (*node, error) {
	if c.ConditionExpression == "" {
		return nil, nil
	}
	n, err := parseExpr(c.ConditionExpression, c.ExpressionAttributeNames, c.ExpressionAttributeValues, used)
	if err != nil {
		return nil, validation("Invalid ConditionExpression: %v", err)
	}
	return n, nil
}

// holds reports whether the condition holds for the current item (nil when absent).
func holds(cond *node, current *rec) (bool, error) {
	if cond == nil {
		return true, nil
	}
	item := map[string]*av{}
	if current != nil {
		// Only the attributes the condition names: a condition reads nothing else of the item
		// (every operand that is not a :value is a path from a top-level attribute), and
		// decoding the whole item was most of what a transaction's conditions cost.
		// An item with a name written with an escape is decoded whole, as the names compare
		// decoded.
		_, values, escaped, err := scanItemNames(current.raw, cond.attributes(nil))
		if err == nil && escaped {
			item, err = decodeItem(current.raw)
		} else if err == nil {
			for name, raw := range values {
				var v *av
				if err = json.Unmarshal(raw, &v); err != nil {
					break
				}
				item[name] = v
			}
		}
		if err != nil {
			return false, &apiError{"InternalServerError", err.Error()}
		}
	}
	return cond.eval(item), nil
}

// failed returns ConditionalCheckFailedException when the condition does not hold, with the
// item when the caller asked for it (ReturnValuesOnConditionCheckFailure ALL_OLD).
func (c *condInput) failed(cond *node, current *rec) error {
	ok, err := holds(cond, current)
	if err != nil || ok {
		return err
	}
	e := &detailedError{apiError: apiError{"ConditionalCheckFailedException", "The conditional request failed"}}
	if c.ReturnValuesOnConditionCheckFailure == "ALL_OLD" && current != nil {
		e.extra = map[string]any{"Item": current.raw}
	}
	return e
}

// check evaluates the condition of a write against the current item (nil when absent).
func (c *condInput) check(current *rec) error {
	cond, err := c.parse(map[string]bool{})
	if err != nil {
		return err
	}
	return c.failed(cond, current)
}

func (c *condInput) result(old *rec, units float64) []byte {
	var o obj
	if old != nil && c.ReturnValues == "ALL_OLD" {
		o.raw("Attributes", old.raw)
	}
	o.capacity(c.ReturnConsumedCapacity, capacity{c.TableName, units})
	return o.bytes()
}

func (s *Server) putItem(body []byte) (any, error) {
	var in struct {
		condInput
		Item json.RawMessage
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	// The generation advances once the condition held, still before the change: a write that
	// failed its condition wrote nothing, and a lease that another holder tries every few seconds
	// would otherwise move it each time, for every reader that keeps what it read by it.
	// UpdateItem and DeleteItem do the same.
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.table(in.TableName)
	if err != nil {
		return nil, err
	}
	r, err := t.newRec(in.Item)
	if err != nil {
		return nil, err
	}
	if err := in.check(t.get(r.pk, r.sk)); err != nil {
		return nil, err
	}
	gen := s.gen.Add(1)
	old := t.store(r)
	return committed{body: in.result(old, writeUnits(r.size)), generation: gen}, nil
}

func (s *Server) deleteItem(body []byte) (any, error) {
	var in struct {
		condInput
		Key map[string]*av
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, validation("%v", err)
	}
	s.mu.Lock() // the generation advances once the condition held (see putItem)
	defer s.mu.Unlock()
	t, err := s.table(in.TableName)
	if err != nil {
		return nil, err
	}
	pk, sk, err := t.keyOf(in.Key)
	if err != nil {
		return nil, err
	}
	if err := in.check(t.get(pk, sk)); err != nil {
		return nil, err
	}
	s.gen.Add(1)
	old := t.del(pk, sk)
	units := 1.0
	if old != nil {
		units = writeUnits(old.size)
	}
	return in.result(old, units), nil
}
