package dynamo

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
)

// The component index and the active-job index (docs/data-model.md).
//
// Every component has small index cards in its capability's partition, each the entry of one
// GSI1 partition ordered by {capabilityId}#{componentId} (the order of componentsByType):
//
//	INDEX#COMP#{componentId}#STATUS      CSTATUS#{status}
//	INDEX#COMP#{componentId}#HEALTH      CHEALTH#{health status}
//	INDEX#COMP#{componentId}#TEAM        CTEAM#{folded ownership.team}   (when it has a team)
//	INDEX#COMP#{componentId}#T#{prefix}  CTERM#{prefix}                  (one per distinct prefix of
//	                                                                  1..termPrefixRunes runes of a
//	                                                                  word of its ID, name, type)
//
// A card's Data is what the filters test (componentCard): every card but the HEALTH one leaves
// the health status out, so that recordMetrics, which changes only health, rewrites one card
// per component, and only when the status moved. Pages read the cards of one filter's
// partitions (the most selective), test the other filters on the cards, then read the
// components with one BatchGetItem.
//
// Every PENDING or RUNNING job has an item INDEX#ACTIVEJOB#{jobId} in its capability's
// partition, GSI1 ACTIVEJOBS / {startTime}#{capabilityId}#{jobId}, whose Data is a copy of the
// job's: a page of activeJobs is one Query.

// termPrefixRunes is the longest word prefix with a CTERM# partition of its own: a longer search
// word reads the partition of its first termPrefixRunes runes and is tested on the card's words.
const termPrefixRunes = 3

// MaxComponentCards bounds the index cards of one component (its status, health and team cards
// and the word prefixes of its ID, name and type): a component write that would need more is
// BAD_USER_INPUT naming the name, since a transaction holds 100 actions.
const MaxComponentCards = 36

// componentCard is the Data of a component's index card.
type componentCard struct {
	CapabilityID string   `json:"capabilityId"`
	ComponentID  string   `json:"componentId"`
	Order        int      `json:"order"`
	Type         string   `json:"componentType"`
	Status       string   `json:"status"`
	Team         string   `json:"team,omitempty"`
	Words        []string `json:"words,omitempty"`
	// Health is on the HEALTH card only.
	Health string `json:"health,omitempty"`
}

// componentWords are the folded words a component's search matches: of its ID, name and type.
func componentWords(c *catalog.Component) []string {
	return catalog.Words(c.ComponentID + " " + c.Name + " " + c.ComponentType)
}

// componentTeam is a component's folded team, "" for none.
func componentTeam(c *catalog.Component) string {
	if c.Ownership == nil {
		return ""
	}
	return catalog.Fold(c.Ownership.Team)
}

// wordPrefixes returns the distinct prefixes of 1..termPrefixRunes runes of words.
func wordPrefixes(words []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		r := []rune(w)
		for n := 1; n <= min(len(r), termPrefixRunes); n++ {
			p := string(r[:n])
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// termPrefix is the CTERM# partition a search word reads.
func termPrefix(word string) string {
	r := []rune(word)
	return string(r[:min(len(r), termPrefixRunes)])
}

// componentCards returns the index cards of c, by SK.
func componentCards(c *catalog.Component, now time.Time) (map[string]*item, error) {
	card := componentCard{CapabilityID: c.CapabilityID, ComponentID: c.ComponentID, Order: c.Order, Type: c.ComponentType,
		Status: string(c.Status), Team: componentTeam(c), Words: componentWords(c)}
	out := map[string]*item{}
	gsk := componentGSI1SK(c.CapabilityID, c.ComponentID)
	add := func(kind, gpk string, d componentCard) error {
		data, err := encodeData(d)
		if err != nil {
			return err
		}
		it := &item{PK: capabilityPK(c.CapabilityID), SK: componentCardSK(c.ComponentID, kind), EntityType: entityComponentCard,
			GSI1PK: gpk, GSI1SK: gsk, CreatedAt: now, UpdatedAt: now, Revision: 1, Data: data}
		out[it.SK] = it
		return nil
	}
	if err := add(compCardStatus, componentStatusPK(c.Status), card); err != nil {
		return nil, err
	}
	health := card
	health.Health = string(catalog.ComponentHealthStatus(c))
	if err := add(compCardHealth, componentHealthPK(catalog.HealthStatus(health.Health)), health); err != nil {
		return nil, err
	}
	if card.Team != "" {
		if err := add(compCardTeam, componentTeamPK(card.Team), card); err != nil {
			return nil, err
		}
	}
	for _, p := range wordPrefixes(card.Words) {
		if err := add(compCardTerm+p, componentTermPK(p), card); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// sameCard reports whether two cards have the same keys and Data: an unchanged card is not
// rewritten.
func sameCard(a, b *item) bool {
	return a.GSI1PK == b.GSI1PK && a.GSI1SK == b.GSI1SK && reflect.DeepEqual(a.Data, b.Data)
}

// activeJobItem returns the active-job index item of j, nil when j is neither PENDING nor RUNNING.
func activeJobItem(j *catalog.Job, now time.Time) (*item, error) {
	if j.Status != catalog.JobPending && j.Status != catalog.JobRunning {
		return nil, nil
	}
	it, err := jobItem(j, now)
	if err != nil {
		return nil, err
	}
	it.SK, it.EntityType = activeJobSK(j.JobID), entityActiveJob
	it.GSI1PK, it.GSI1SK = activeJobsPK, activeJobGSI1SK(j.StartTime.Time, j.CapabilityID, j.JobID)
	return it, nil
}

// componentIndexItems returns every index item of a component (bulk load, import).
func componentIndexItems(c *catalog.Component, now time.Time) ([]*item, error) {
	cards, err := componentCards(c, now)
	if err != nil {
		return nil, err
	}
	return sortedItems(cards), nil
}

func sortedItems(m map[string]*item) []*item {
	out := make([]*item, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// componentIndex adds to tail the index writes of the component and job writes that p plans:
// the cards of an added or changed component whose content changed, the deletes of the cards it
// no longer has (all of them for a removed component), and the active-job item of a written job
// (put while PENDING or RUNNING, deleted when it leaves them). The old state is st's: the
// components it read, and the job item UpdateJob read.
func componentIndex(st *partitionState, p *plan, tail *plan, now time.Time) error {
	type change struct{ old, new *catalog.Component }
	changes := map[string]*change{}
	var order []string
	at := func(id string) *change {
		if c := changes[id]; c != nil {
			return c
		}
		c := &change{}
		if i := indexOf(st.Components, id); i >= 0 {
			c.old = st.Components[i]
		}
		changes[id] = c
		order = append(order, id)
		return c
	}
	for _, a := range p.actions {
		switch {
		case a.Put != nil && str(a.Put.Item[attrEntityType]) == entityComponent:
			it, err := readItem(a.Put.Item)
			if err != nil {
				return err
			}
			c, err := toComponent(it)
			if err != nil {
				return err
			}
			at(c.ComponentID).new = c
		case a.Put != nil && str(a.Put.Item[attrEntityType]) == entityJob:
			it, err := readItem(a.Put.Item)
			if err != nil {
				return err
			}
			if err := activeJobDelta(st.items[it.SK], it, tail, now); err != nil {
				return err
			}
		case a.Delete != nil && strings.HasPrefix(str(a.Delete.Key[attrSK]), componentPrefix):
			if _, id, err := parseComponentSK(str(a.Delete.Key[attrSK])); err == nil {
				at(id)
			}
		}
	}
	for _, id := range order {
		c := changes[id]
		var olds, news map[string]*item
		var err error
		if c.old != nil {
			if olds, err = componentCards(c.old, now); err != nil {
				return err
			}
		}
		if c.new != nil {
			if news, err = componentCards(c.new, now); err != nil {
				return err
			}
		}
		changed := false
		for _, sk := range slices.Sorted(maps.Keys(news)) {
			if o := olds[sk]; o == nil || !sameCard(o, news[sk]) {
				tail.put(news[sk], "", nil)
				changed = true
			}
		}
		if changed && len(news) > MaxComponentCards {
			return catalog.Invalid("name", "component %s would have %d index entries (its status, health, team and the prefixes of the words of its ID, name and type), over %d: use fewer words", id, len(news), MaxComponentCards)
		}
		for _, sk := range slices.Sorted(maps.Keys(olds)) {
			if news[sk] == nil {
				tail.del(capabilityPK(c.old.CapabilityID), sk, "", nil)
			}
		}
	}
	return tail.err
}

// activeJobDelta plans the active-job item of a job written as it: put when active and changed,
// deleted when it left PENDING/RUNNING (old is the job item read before, nil when new or unread).
func activeJobDelta(old, it *item, tail *plan, now time.Time) error {
	j, err := toJob(it)
	if err != nil {
		return err
	}
	next, err := activeJobItem(j, now)
	if err != nil {
		return err
	}
	var prev *item
	if old != nil {
		oj, err := toJob(old)
		if err != nil {
			return err
		}
		if prev, err = activeJobItem(oj, now); err != nil {
			return err
		}
	}
	switch {
	case next != nil:
		tail.put(next, "", nil)
	case old == nil || prev != nil:
		tail.del(it.PK, activeJobSK(j.JobID), "", nil)
	}
	return nil
}

// ComponentFilter narrows Components: every set filter must hold (a list holds when any of its
// values does). Search matches when every word of it starts a word of the component's ID, name
// or type (catalog.Words: case- and accent-insensitive); Team compares folded (catalog.Fold).
type ComponentFilter struct {
	Search         string
	Types          []string
	Statuses       []catalog.ComponentStatus
	HealthStatuses []catalog.HealthStatus
	Team           string
}

// maxComponentFilterValues bounds each list of a filter (each value may be a partition read).
const maxComponentFilterValues = 20

// componentQuery is how a filter is read: the GSI1 partitions whose union (in GSI1SK order)
// holds every match, and the test of the rest of the filter.
type componentQuery struct {
	pks []string
	// full says the entries are the components (COMPONENT#{type}), not cards.
	full bool
	// residual says some filter is not served by the partitions: entries are tested.
	residual bool
	words    []string
	team     string
	f        ComponentFilter
	scope    string
}

func (f ComponentFilter) plan() (*componentQuery, error) {
	q := &componentQuery{f: f, words: catalog.Words(f.Search)}
	if err := noEmptyList("filter", map[string]int{"types": lenIfGiven(f.Types), "statuses": lenIfGiven(f.Statuses),
		"healthStatuses": lenIfGiven(f.HealthStatuses)}); err != nil {
		return nil, err
	}
	if len(f.Types) > maxComponentFilterValues || len(f.Statuses) > maxComponentFilterValues || len(f.HealthStatuses) > maxComponentFilterValues {
		return nil, catalog.Invalid("filter", "give at most %d values of each list", maxComponentFilterValues)
	}
	for i, t := range f.Types {
		if err := ValidateID(fmt.Sprintf("filter.types[%d]", i), t); err != nil {
			return nil, err
		}
	}
	for i, s := range f.Statuses {
		if !s.Valid() {
			return nil, catalog.Invalid(fmt.Sprintf("filter.statuses[%d]", i), "%q is not a component status", s)
		}
	}
	for i, h := range f.HealthStatuses {
		if !h.Valid() {
			return nil, catalog.Invalid(fmt.Sprintf("filter.healthStatuses[%d]", i), "%q is not a health status", h)
		}
	}
	if f.Team != "" {
		if q.team = catalog.Fold(f.Team); q.team == "" {
			return nil, catalog.Invalid("filter.team", "a team name needs a letter or a digit")
		}
		if len(q.team) > maxSortKeyBytes {
			return nil, catalog.Invalid("filter.team", "too long")
		}
	}
	if len(q.words) > maxComponentFilterValues {
		return nil, catalog.Invalid("filter.search", "give at most %d words", maxComponentFilterValues)
	}
	types := dedupe(f.Types)
	statuses := dedupe(f.Statuses)
	health := dedupe(f.HealthStatuses)
	served := ""
	switch {
	case len(health) > 0 && len(types) == 0:
		// Only the HEALTH cards and the components carry the health status.
		for _, h := range health {
			q.pks = append(q.pks, componentHealthPK(h))
		}
		served = "health"
	case len(q.words) > 0:
		longest := q.words[0]
		for _, w := range q.words {
			if len([]rune(w)) > len([]rune(longest)) {
				longest = w
			}
		}
		q.pks = []string{componentTermPK(termPrefix(longest))}
		served = "search"
		if len(q.words) == 1 && len([]rune(longest)) <= termPrefixRunes {
			served = "search-exact"
		}
	case q.team != "":
		q.pks = []string{componentTeamPK(q.team)}
		served = "team"
	case len(types) > 0:
		for _, t := range types {
			q.pks = append(q.pks, componentTypePK(t))
		}
		q.full = true
		served = "types"
	case len(statuses) > 0:
		for _, s := range statuses {
			q.pks = append(q.pks, componentStatusPK(s))
		}
		served = "statuses"
	default:
		for _, h := range catalog.HealthStatuses {
			q.pks = append(q.pks, componentHealthPK(h))
		}
		served = "all"
	}
	rest := 0
	if len(types) > 0 && served != "types" {
		rest++
	}
	if len(statuses) > 0 && served != "statuses" {
		rest++
	}
	if len(health) > 0 && served != "health" {
		rest++
	}
	if q.team != "" && served != "team" {
		rest++
	}
	if len(q.words) > 0 && served != "search-exact" {
		rest++
	}
	q.residual = rest > 0
	slices.Sort(types)
	slices.Sort(statuses)
	slices.Sort(health)
	q.scope = fmt.Sprintf("components|%q|%q|%q|%q|%q", strings.Join(q.words, " "), types, statuses, health, q.team)
	return q, nil
}

func dedupe[T comparable](xs []T) []T {
	var out []T
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// match tests an entry (a card or a component) against the whole filter.
func (q *componentQuery) match(it *item) (bool, error) {
	data, err := it.data()
	if err != nil {
		return false, err
	}
	var card componentCard
	if q.full {
		c, err := toComponent(it)
		if err != nil {
			return false, err
		}
		card = componentCard{Type: c.ComponentType, Status: string(c.Status), Team: componentTeam(c), Words: componentWords(c),
			Health: string(catalog.ComponentHealthStatus(c))}
	} else if err := decodeData(data, &card); err != nil {
		return false, fmt.Errorf("read component card %s: %w", it.SK, err)
	}
	f := q.f
	switch {
	case len(f.Types) > 0 && !slices.Contains(f.Types, card.Type),
		len(f.Statuses) > 0 && !slices.Contains(f.Statuses, catalog.ComponentStatus(card.Status)),
		len(f.HealthStatuses) > 0 && !slices.Contains(f.HealthStatuses, catalog.HealthStatus(card.Health)),
		q.team != "" && card.Team != q.team:
		return false, nil
	}
	for _, w := range q.words {
		if !slices.ContainsFunc(card.Words, func(cw string) bool { return strings.HasPrefix(cw, w) }) {
			return false, nil
		}
	}
	return true, nil
}

// gsiRead is one Query of a GSI1 partition from after (exclusive, "" for the start).
type gsiRead struct {
	pk, after string
	start     map[string]types.AttributeValue
	limit     int
	count     bool
}

// queryGSI runs one Query request of r: the entries it read (none when counting), their count,
// and where to go on (nil at the end).
func (s *Store) queryGSI(ctx context.Context, r gsiRead) ([]*item, int, map[string]types.AttributeValue, error) {
	cond := "#pk = :pk"
	names := map[string]string{"#pk": attrGSI1PK}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: r.pk}}
	if r.after != "" {
		cond += " AND #sk > :after"
		names["#sk"] = attrGSI1SK
		values[":after"] = &types.AttributeValueMemberS{Value: r.after}
	}
	in := &dynamodb.QueryInput{TableName: &s.table, IndexName: aws.String(gsi1Name), KeyConditionExpression: &cond,
		ExpressionAttributeNames: names, ExpressionAttributeValues: values, ExclusiveStartKey: r.start,
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	if r.limit > 0 {
		in.Limit = aws.Int32(int32(r.limit))
	}
	if r.count {
		// The keys only: DynamoDB charges a Select=COUNT Query for the entries it reads all the
		// same, and the embedded engine has no COUNT.
		in.ProjectionExpression = aws.String("#pk")
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, 0, nil, classify("query", err)
		}
		return nil, len(out.Items), out.LastEvaluatedKey, nil
	}
	wctx := withWireItems(ctx)
	out, err := s.db.Query(wctx, in)
	if err != nil {
		return nil, 0, nil, classify("query", err)
	}
	got, err := responseItems(out.ResultMetadata, out.Items)
	if err != nil {
		return nil, 0, nil, err
	}
	return got, len(got), out.LastEvaluatedKey, nil
}

// mergeRead reads the union of the GSI1 partitions pks in GSI1SK order from after, keeping the
// entries keep accepts, until want are kept or every partition is done. The partitions are read
// in parallel, limit entries a request: a round reads every partition that bounds how far the
// union is known. It returns the kept entries in order and whether more may follow them.
func (s *Store) mergeRead(ctx context.Context, pks []string, after string, want, limit int, keep func(*item) (bool, error)) ([]*item, bool, error) {
	type stream struct {
		pk    string
		start map[string]types.AttributeValue
		pos   string // the GSI1SK the stream has read up to
		buf   []*item
		done  bool
	}
	streams := make([]*stream, len(pks))
	for i, pk := range pks {
		streams[i] = &stream{pk: pk, pos: after}
	}
	var kept []*item
	for {
		frontier := ""
		for _, st := range streams {
			if !st.done && (frontier == "" || st.pos < frontier) {
				frontier = st.pos
			}
		}
		g, gctx := errgroup.WithContext(ctx)
		for _, st := range streams {
			if st.done || st.pos != frontier {
				continue
			}
			g.Go(func() error {
				got, _, next, err := s.queryGSI(gctx, gsiRead{pk: st.pk, after: after, start: st.start, limit: limit})
				if err != nil {
					return err
				}
				st.buf = append(st.buf, got...)
				st.start, st.done = next, len(next) == 0
				if len(got) > 0 {
					st.pos = got[len(got)-1].GSI1SK
				}
				if next != nil {
					st.pos = max(st.pos, str(next[attrGSI1SK]))
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, false, err
		}
		// Everything up to the lowest position of a stream still going is known.
		open, bound := false, ""
		for _, st := range streams {
			if !st.done && (!open || st.pos < bound) {
				open, bound = true, st.pos
			}
		}
		var ready []*item
		for _, st := range streams {
			n := len(st.buf)
			if open {
				n, _ = slices.BinarySearchFunc(st.buf, bound, func(it *item, k string) int { return strings.Compare(it.GSI1SK, k) })
				if n < len(st.buf) && st.buf[n].GSI1SK == bound {
					n++
				}
			}
			ready = append(ready, st.buf[:n]...)
			st.buf = st.buf[n:]
		}
		slices.SortFunc(ready, func(a, b *item) int { return strings.Compare(a.GSI1SK, b.GSI1SK) })
		for _, it := range ready {
			ok, err := keep(it)
			if err != nil {
				return nil, false, err
			}
			if ok {
				kept = append(kept, it)
				if len(kept) > want {
					return kept[:want], true, nil
				}
			}
		}
		if !open {
			return kept, false, nil
		}
	}
}

// Components lists the components that match f across the catalogue, ordered by capability and
// component ID, from the index partitions of the most selective filter (see ComponentFilter.plan
// and docs/api.md), then the components of the page with one BatchGetItem (none for a types
// filter, whose COMPONENT#{type} entries are the components).
func (s *Store) Components(ctx context.Context, f ComponentFilter, first int, after string) (*Page[*catalog.Component], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	q, err := f.plan()
	if err != nil {
		return nil, err
	}
	from, err := s.decodeKeyCursor(q.scope, after)
	if err != nil {
		return nil, err
	}
	return memoized(s, pageKey{scope: q.scope, first: first, after: after}, func() (*Page[*catalog.Component], error) {
		return s.componentPage(ctx, q, first, from)
	})
}

// componentPage reads the page of q of first components after the GSI1SK from.
func (s *Store) componentPage(ctx context.Context, q *componentQuery, first int, from string) (*Page[*catalog.Component], error) {
	limit := first + 1
	if q.residual {
		limit = min(max(4*(first+1), 100), 1000)
	}
	entries, more, err := s.mergeRead(ctx, q.pks, from, first, limit, q.match)
	if err != nil {
		return nil, fmt.Errorf("list components: %w", err)
	}
	items := entries
	if !q.full && len(entries) > 0 {
		keys := make([][2]string, len(entries))
		for i, e := range entries {
			var card componentCard
			data, err := e.data()
			if err != nil {
				return nil, err
			}
			if err := decodeData(data, &card); err != nil {
				return nil, fmt.Errorf("read component card %s: %w", e.SK, err)
			}
			keys[i] = [2]string{capabilityPK(card.CapabilityID), componentSK(card.Order, card.ComponentID)}
		}
		got, err := s.batchGet(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("list components: %w", err)
		}
		items = items[:0:0]
		for i, it := range got {
			if it != nil {
				it.GSI1SK = entries[i].GSI1SK
				items = append(items, it)
			}
		}
	}
	p := &Page[*catalog.Component]{Items: make([]*catalog.Component, 0, len(items)), HasNext: more}
	for _, it := range items {
		c, err := toComponent(it)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, c)
		p.Cursors = append(p.Cursors, s.cursors.Encode(q.scope, []byte(it.GSI1SK)))
	}
	return p, nil
}

// decodeKeyCursor returns the GSI1SK a cursor of scope names ("" for none): anything else is a
// *catalog.ValidationError on "after".
func (s *Store) decodeKeyCursor(scope, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	body, ok := s.cursors.Decode(scope, cursor)
	if !ok || len(body) == 0 {
		return "", catalog.Invalid("after", "cursor is not valid for this query")
	}
	return string(body), nil
}

// CountComponents counts the components that match f: from the catalogue's counters (one
// BatchGetItem) with no filter or a filter of types, health statuses or team alone; otherwise a
// keys-only Query of each partition of the filter when the partitions serve it whole, else every
// entry of the partitions, tested (a request per 1 MB of entries either way).
func (s *Store) CountComponents(ctx context.Context, f ComponentFilter) (int, error) {
	q, err := f.plan()
	if err != nil {
		return 0, err
	}
	return memoized(s, pageKey{scope: "count|" + q.scope}, func() (int, error) {
		if !f.countedByCounters() {
			return s.countGSI(ctx, q.pks, !q.residual, q.match)
		}
		counts, err := s.Counts(ctx)
		if err != nil {
			return 0, err
		}
		n, _ := counts.componentCount(f)
		return n, nil
	})
}

// countGSI counts the entries of the GSI1 partitions pks that keep accepts (all when exact).
func (s *Store) countGSI(ctx context.Context, pks []string, exact bool, keep func(*item) (bool, error)) (int, error) {
	counts := make([]int, len(pks))
	g, gctx := errgroup.WithContext(ctx)
	for i, pk := range pks {
		g.Go(func() error {
			var start map[string]types.AttributeValue
			for {
				got, n, next, err := s.queryGSI(gctx, gsiRead{pk: pk, start: start, count: exact})
				if err != nil {
					return err
				}
				if exact {
					counts[i] += n
				}
				for _, it := range got {
					ok, err := keep(it)
					if err != nil {
						return err
					}
					if ok {
						counts[i]++
					}
				}
				if len(next) == 0 {
					return nil
				}
				start = next
			}
		})
	}
	if err := g.Wait(); err != nil {
		return 0, fmt.Errorf("count: %w", err)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, nil
}

// ActiveJobs lists the PENDING and RUNNING jobs across the catalogue, oldest start first, from
// the ACTIVEJOBS partition of GSI1 (whose entries are copies of the jobs). jobTypes, when
// given, is tested on the entries: a page reads ahead (up to 1000 entries a request).
func (s *Store) ActiveJobs(ctx context.Context, jobTypes []catalog.JobType, first int, after string) (*Page[*catalog.Job], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	keep, scope, err := activeJobFilter(jobTypes)
	if err != nil {
		return nil, err
	}
	from, err := s.decodeKeyCursor(scope, after)
	if err != nil {
		return nil, err
	}
	limit := first + 1
	if len(jobTypes) > 0 {
		limit = 1000
	}
	return memoized(s, pageKey{scope: scope, first: first, after: after}, func() (*Page[*catalog.Job], error) {
		return s.activeJobPage(ctx, scope, from, first, limit, keep)
	})
}

// activeJobPage reads a page of active jobs after the GSI1SK from.
func (s *Store) activeJobPage(ctx context.Context, scope, from string, first, limit int, keep func(*item) (bool, error)) (*Page[*catalog.Job], error) {
	items, more, err := s.mergeRead(ctx, []string{activeJobsPK}, from, first, limit, keep)
	if err != nil {
		return nil, fmt.Errorf("list active jobs: %w", err)
	}
	p := &Page[*catalog.Job]{Items: make([]*catalog.Job, 0, len(items)), HasNext: more}
	for _, it := range items {
		j, err := toJob(it)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, j)
		p.Cursors = append(p.Cursors, s.cursors.Encode(scope, []byte(it.GSI1SK)))
	}
	return p, nil
}

func activeJobFilter(jobTypes []catalog.JobType) (func(*item) (bool, error), string, error) {
	if jobTypes != nil && len(jobTypes) == 0 {
		return nil, "", catalog.Invalid("jobTypes", "give at least one job type, or leave the argument out for every type")
	}
	if len(jobTypes) > maxComponentFilterValues {
		return nil, "", catalog.Invalid("jobTypes", "give at most %d", maxComponentFilterValues)
	}
	for i, t := range jobTypes {
		if !t.Valid() {
			return nil, "", catalog.Invalid(fmt.Sprintf("jobTypes[%d]", i), "%q is not a job type", t)
		}
	}
	types := dedupe(jobTypes)
	slices.Sort(types)
	keep := func(it *item) (bool, error) {
		if len(types) == 0 {
			return true, nil
		}
		data, err := it.data()
		if err != nil {
			return false, err
		}
		return slices.Contains(types, catalog.JobType(str(data["jobType"]))), nil
	}
	return keep, fmt.Sprintf("activejobs|%q", types), nil
}

// CountActiveJobs counts the PENDING and RUNNING jobs (of jobTypes, when given) from the
// catalogue's counters: one BatchGetItem whatever the catalogue's size.
func (s *Store) CountActiveJobs(ctx context.Context, jobTypes []catalog.JobType) (int, error) {
	_, scope, err := activeJobFilter(jobTypes)
	if err != nil {
		return 0, err
	}
	return memoized(s, pageKey{scope: "count|" + scope}, func() (int, error) {
		counts, err := s.Counts(ctx)
		if err != nil {
			return 0, err
		}
		return counts.activeJobCount(jobTypes), nil
	})
}

// CountJobs counts a capability's jobs that match f: a keys-only Query of its JOB# segment with
// f as the filter (a request per 1 MB of the capability's jobs).
func (s *Store) CountJobs(ctx context.Context, capabilityID string, f JobFilter) (int, error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return 0, err
	}
	cond := "#pk = :pk AND #sk BETWEEN :lo AND :hi"
	names := map[string]string{"#pk": attrPK, "#sk": attrSK}
	values := map[string]types.AttributeValue{
		":pk": &types.AttributeValueMemberS{Value: capabilityPK(capabilityID)},
		":lo": &types.AttributeValueMemberS{Value: jobPrefix}, ":hi": &types.AttributeValueMemberS{Value: prefixEnd(jobPrefix)},
	}
	var conds []string
	if f.Status != "" {
		conds = append(conds, "#d.#st = :st")
		names["#st"], values[":st"] = "status", &types.AttributeValueMemberS{Value: string(f.Status)}
	}
	if f.JobType != "" {
		conds = append(conds, "#d.#jt = :jt")
		names["#jt"], values[":jt"] = "jobType", &types.AttributeValueMemberS{Value: string(f.JobType)}
	}
	in := &dynamodb.QueryInput{TableName: &s.table, KeyConditionExpression: &cond, ExpressionAttributeNames: names,
		ExpressionAttributeValues: values, ProjectionExpression: aws.String("#pk"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	if len(conds) > 0 {
		names["#d"] = attrData
		in.FilterExpression = aws.String(strings.Join(conds, " AND "))
	}
	total := 0
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return 0, classify("count jobs of "+capabilityID, err)
		}
		total += len(out.Items)
		if len(out.LastEvaluatedKey) == 0 {
			return total, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// FindingComponentIndex is a capability whose component or active-job index items differ from
// what its components and jobs say (check -repair rewrites them).
const FindingComponentIndex = "component-index"

// componentIndexDiff compares the INDEX#COMP# and INDEX#ACTIVEJOB# items of a partition with the
// ones its components and jobs should have: the items to put and the keys to delete.
func componentIndexDiff(items []*item, now time.Time) (puts []*item, dels []*item, err error) {
	want := map[string]*item{}
	have := map[string]*item{}
	for _, it := range items {
		switch {
		case it.EntityType == entityComponent:
			c, err := toComponent(it)
			if err != nil {
				return nil, nil, err
			}
			cards, err := componentCards(c, now)
			if err != nil {
				return nil, nil, err
			}
			for k, v := range cards {
				want[k] = v
			}
		case it.EntityType == entityJob:
			j, err := toJob(it)
			if err != nil {
				return nil, nil, err
			}
			a, err := activeJobItem(j, now)
			if err != nil {
				return nil, nil, err
			}
			if a != nil {
				a.CreatedAt, a.UpdatedAt = it.CreatedAt, it.UpdatedAt
				want[a.SK] = a
			}
		case isComponentCardSK(it.SK) || isActiveJobSK(it.SK):
			have[it.SK] = it
		}
	}
	for _, sk := range slices.Sorted(maps.Keys(want)) {
		w := want[sk]
		h := have[sk]
		if h == nil {
			puts = append(puts, w)
			continue
		}
		hd, err := h.data()
		if err != nil {
			return nil, nil, err
		}
		if h.GSI1PK != w.GSI1PK || h.GSI1SK != w.GSI1SK || !sameData(hd, w.Data) {
			puts = append(puts, w)
		}
	}
	for _, sk := range slices.Sorted(maps.Keys(have)) {
		if want[sk] == nil {
			dels = append(dels, have[sk])
		}
	}
	return puts, dels, nil
}

// sameData compares two Data maps by their decoded values (a read item and a built one may
// differ in representation only).
func sameData(a, b map[string]types.AttributeValue) bool {
	var x, y any
	if decodeData(a, &x) != nil || decodeData(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// checkComponentIndex returns what is wrong with a partition's component index, "" if nothing.
func checkComponentIndex(items []*item, now time.Time) (string, error) {
	puts, dels, err := componentIndexDiff(items, now)
	if err != nil || len(puts)+len(dels) == 0 {
		return "", err
	}
	var parts []string
	for _, it := range puts {
		parts = append(parts, "missing or stale "+it.SK)
	}
	for _, it := range dels {
		parts = append(parts, "extra "+it.SK)
	}
	if len(parts) > 5 {
		parts = append(parts[:5], fmt.Sprintf("and %d more", len(parts)-5))
	}
	return strings.Join(parts, ", "), nil
}

// repairComponentIndex rewrites a capability's component and active-job index items from its
// components and jobs (BatchWriteItem: idempotent; a write racing it is seen by the next check).
func (s *Store) repairComponentIndex(ctx context.Context, id string) error {
	items, _, err := s.run(ctx, query{pk: capabilityPK(id), consistent: true})
	if err != nil {
		return err
	}
	puts, dels, err := componentIndexDiff(items, s.now())
	if err != nil {
		return err
	}
	reqs, err := putRequests(puts)
	if err != nil {
		return err
	}
	for _, it := range dels {
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: keyOf(it.PK, it.SK)}})
	}
	if len(reqs) == 0 {
		return nil
	}
	return s.batchWrite(ctx, reqs, 4)
}

// entityIndexItems returns the component or active-job index items of an imported entity (none
// for other entities).
func entityIndexItems(entity any, now time.Time) ([]*item, error) {
	switch x := entity.(type) {
	case *catalog.Component:
		return componentIndexItems(x, now)
	case *catalog.Job:
		a, err := activeJobItem(x, now)
		if a == nil || err != nil {
			return nil, err
		}
		return []*item{a}, nil
	}
	return nil, nil
}
