package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/capcat/catalogue/catalog"
)

// Search cards: how Query.capabilities filters, searches and orders without a Scan.
//
// Every capability keeps, in its own partition under INDEX#C#, small "card" items: a copy of its
// filterable fields (searchCard) keyed into one GSI1 range per filter value it has (CARD#NAME,
// CARD#STATUS#{s}, CARD#PRIORITY#{p}, CARD#DOMAIN#{d}, CARD#ID#{lower id}, CARD#TAG#{tag},
// CARD#OWNER#{owner}, CARD#TERM#{1- or 2-letter prefix of a word}), in name order, and two
// volatile ranges in the orders that change with writes (CARD#SCORE, CARD#UPDATED). A page reads
// the most selective range, keeps the cards that pass every filter the range does not serve,
// and reads the page's capabilities from METADATA (one BatchGetItem, through the read memo),
// where the health filter, which changes with every recordMetrics, is checked.

// Bounds of a search: what one query may ask.
const (
	// MaxSearchLength bounds filter.search in characters, MaxSearchWords in words.
	MaxSearchLength = 200
	MaxSearchWords  = 10
	// maxFilterValues bounds each list of a CapabilityFilter.
	maxFilterValues = 100
	// maxCards bounds the cards of one capability, so that a write that replaces every card
	// (a rename, a retag) fits a transaction with its deletes and the entity's own actions:
	// 2 × 44 + 12 ≤ 100.
	maxCards = 44
	// cardChunk is how many cards one Query reads when the range holds cards the filter drops.
	cardChunk = 250
)

// searchCard is the Data of a card: the capability's static filterable fields, folded.
type searchCard struct {
	CapabilityID string                   `json:"capabilityId"`
	Name         string                   `json:"name"`
	Fold         string                   `json:"fold"`
	Words        []string                 `json:"words,omitempty"`
	Domain       string                   `json:"businessDomain"`
	Status       catalog.CapabilityStatus `json:"status"`
	Priority     catalog.Priority         `json:"priority"`
	Tags         []string                 `json:"tags,omitempty"`
	Owners       []string                 `json:"owners,omitempty"`
}

// cardOf returns the card of c.
func cardOf(c *catalog.Capability) *searchCard {
	k := &searchCard{CapabilityID: c.CapabilityID, Name: c.Name, Fold: catalog.Fold(c.Name), Domain: c.BusinessDomain,
		Status: c.Status, Priority: c.Priority}
	words := map[string]bool{}
	add := func(s string) {
		for _, w := range catalog.Words(s) {
			words[w] = true
		}
	}
	add(c.Name)
	add(c.CapabilityID)
	add(c.Owner)
	tags := map[string]bool{}
	for _, t := range c.Tags {
		add(t)
		if f := catalog.Fold(t); f != "" {
			tags[f] = true
		}
	}
	owners := map[string]bool{}
	if o := catalog.Fold(c.Owner); o != "" {
		owners[o] = true
	}
	if t := c.Aggregates.Components; t != nil {
		for team := range t.Teams {
			if team != "" {
				owners[team] = true
			}
		}
	}
	k.Words, k.Tags, k.Owners = sortedKeys(words), sortedKeys(tags), sortedKeys(owners)
	return k
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// prefixes returns the 1- and 2-letter prefixes of words: the TERM ranges a card is in.
func prefixes(words []string) []string {
	seen := map[string]bool{}
	for _, w := range words {
		seen[runePrefix(w, 1)] = true
		if utf8.RuneCountInString(w) >= 2 {
			seen[runePrefix(w, 2)] = true
		}
	}
	return sortedKeys(seen)
}

// runePrefix returns the first n letters of w.
func runePrefix(w string, n int) string {
	i := 0
	for j := range w {
		if i == n {
			return w[:j]
		}
		i++
	}
	return w
}

// cardEntry is one card item: its sort key and GSI1 keys.
type cardEntry struct{ sk, gpk, gsk string }

// cardEntries returns the card items of c: the keys of each (the Data is cardOf(c)). A
// capability not stored yet (a bulk load's, with no update time) is keyed as written at now.
func cardEntries(c *catalog.Capability, k *searchCard) []cardEntry {
	return cardEntriesAt(c, k, c.UpdatedAt.Time)
}

func cardEntriesAt(c *catalog.Capability, k *searchCard, updated time.Time) []cardEntry {
	id := c.CapabilityID
	nk := nameKey(k.Fold, id)
	out := []cardEntry{
		{cardSK(cardName, ""), cardPK(cardName, ""), nk},
		{cardSK(cardStatus, ""), cardPK(cardStatus, string(c.Status)), nk},
		{cardSK(cardPriority, ""), cardPK(cardPriority, string(c.Priority)), nk},
		{cardSK(cardRank, ""), cardPK(cardRank, ""), rankKey(c.Priority, k.Fold, id)},
		{cardSK(cardDomain, ""), cardPK(cardDomain, c.BusinessDomain), nk},
		{cardSK(cardID, ""), cardPK(cardID, strings.ToLower(id)), nk},
		{cardSK(cardScore, ""), cardPK(cardScore, ""), scoreKey(c.Aggregates.ReportedHealthScore(), k.Fold, id)},
		{cardSK(cardUpdated, ""), cardPK(cardUpdated, ""), updatedKey(updated, k.Fold, id)},
	}
	for _, t := range k.Tags {
		out = append(out, cardEntry{cardSK(cardTag, cardPart(t)), cardPK(cardTag, cardPart(t)), nk})
	}
	for _, o := range k.Owners {
		out = append(out, cardEntry{cardSK(cardOwner, cardPart(o)), cardPK(cardOwner, cardPart(o)), nk})
	}
	for _, p := range prefixes(k.Words) {
		out = append(out, cardEntry{cardSK(cardTerm, p), cardPK(cardTerm, p), nk})
	}
	return out
}

// checkCards returns a *catalog.ValidationError naming the field that makes c need more cards
// than maxCards.
func checkCards(c *catalog.Capability, entries []cardEntry) error {
	if len(entries) <= maxCards {
		return nil
	}
	bare := *c
	bare.Tags, bare.Aggregates.Components = nil, nil
	field := "tags"
	if n := len(cardEntries(&bare, cardOf(&bare))); n > maxCards-2 {
		field = "name"
	} else if t := c.Aggregates.Components; t != nil && len(t.Teams) > 0 && len(c.Tags) == 0 {
		field = "ownership.team"
	}
	return catalog.Invalid(field, "the capability's name, ID, tags, owner and teams would need %d search index items, over the limit of %d: use fewer distinct words, tags or teams", len(entries), maxCards)
}

// cardItems returns the card items of c.
func cardItems(c *catalog.Capability, now time.Time) ([]*item, error) {
	k := cardOf(c)
	_, updated := stamp(c.Meta, now)
	entries := cardEntriesAt(c, k, updated)
	if err := checkCards(c, entries); err != nil {
		return nil, err
	}
	out := make([]*item, 0, len(entries))
	for _, e := range entries {
		it, err := newItem(capabilityPK(c.CapabilityID), e.sk, entityCard, catalog.Meta{Revision: 1}, now, k)
		if err != nil {
			return nil, err
		}
		it.GSI1PK, it.GSI1SK = e.gpk, e.gsk
		out = append(out, it)
	}
	return out, nil
}

// searchWrites adds to p the card writes that take a capability from st (st.capability is nil
// when it is created) to n: a card whose keys and content are unchanged is not written, a card n
// no longer has is deleted. The cards st holds are derived from st.capability, or are the ones
// read (st.cards, a repair). It returns a *catalog.ValidationError when n would need more than
// maxCards cards.
func searchWrites(p *plan, st *partitionState, n *catalog.Capability, now time.Time) error {
	k := cardOf(n)
	entries := cardEntries(n, k)
	if err := checkCards(n, entries); err != nil {
		return err
	}
	// before maps each stored card's SK to its keys, and says whether its Data is k.
	type stored struct {
		e    cardEntry
		same bool
	}
	before := map[string]stored{}
	switch {
	case st.cards != nil:
		for sk, it := range st.cards {
			same := false
			if data, err := it.data(); err == nil {
				var c searchCard
				same = decodeData(data, &c) == nil && reflect.DeepEqual(&c, k)
			}
			before[sk] = stored{cardEntry{sk, it.GSI1PK, it.GSI1SK}, same}
		}
	case st.capability != nil:
		old := cardOf(st.capability)
		same := reflect.DeepEqual(old, k)
		for _, e := range cardEntries(st.capability, old) {
			before[e.sk] = stored{e, same}
		}
	}
	for _, e := range entries {
		b, ok := before[e.sk]
		delete(before, e.sk)
		if ok && b.same && b.e == e {
			continue
		}
		it, err := newItem(capabilityPK(n.CapabilityID), e.sk, entityCard, catalog.Meta{Revision: 1}, now, k)
		if err != nil {
			return err
		}
		it.GSI1PK, it.GSI1SK = e.gpk, e.gsk
		p.put(it, "", nil)
	}
	for _, sk := range slices.Sorted(maps.Keys(before)) {
		p.del(capabilityPK(n.CapabilityID), sk, "", nil)
	}
	return nil
}

// auditCards compares the card items of a partition with the cards c (its aggregates
// recounted) must have: keys and Data. It returns one line per difference.
func auditCards(c *catalog.Capability, items []*item) ([]string, error) {
	k := cardOf(c)
	want := map[string]cardEntry{}
	for _, e := range cardEntries(c, k) {
		want[e.sk] = e
	}
	var diffs []string
	for _, it := range items {
		if !isCardSK(it.SK) {
			continue
		}
		e, ok := want[it.SK]
		delete(want, it.SK)
		if !ok {
			diffs = append(diffs, "search card "+it.SK+" should not exist")
			continue
		}
		if it.GSI1PK != e.gpk || it.GSI1SK != e.gsk {
			diffs = append(diffs, fmt.Sprintf("search card %s keys = %s/%s, want %s/%s", it.SK, it.GSI1PK, it.GSI1SK, e.gpk, e.gsk))
			continue
		}
		data, err := it.data()
		if err != nil {
			return nil, err
		}
		var got searchCard
		if err := decodeData(data, &got); err != nil || !reflect.DeepEqual(&got, k) {
			diffs = append(diffs, "search card "+it.SK+" Data differs from the capability's")
		}
	}
	for _, sk := range slices.Sorted(maps.Keys(want)) {
		diffs = append(diffs, "search card "+sk+" missing")
	}
	return diffs, nil
}

// searchDeletes adds to p the deletes of every card of c (a capability being deleted).
func searchDeletes(p *plan, c *catalog.Capability) {
	for _, e := range cardEntries(c, cardOf(c)) {
		p.del(capabilityPK(c.CapabilityID), e.sk, "", nil)
	}
}

// isCardSK reports whether sk is a card's sort key.
func isCardSK(sk string) bool { return strings.HasPrefix(sk, cardSKPrefix) }

// CapabilityQuery is what Query.capabilities asks for with a filter or an order: every set
// field must hold (each list matches any of its values, Tags all of them).
type CapabilityQuery struct {
	// Domain is the `domain` argument: it intersects Domains.
	Domain         string
	Search         *string
	Domains        []string
	Statuses       []catalog.CapabilityStatus
	Priorities     []catalog.Priority
	HealthStatuses []catalog.HealthStatus
	Owner          *string
	Tags           []string
	// Order is "" (relevance with Search, else name), "NAME", "PRIORITY", "HEALTH_SCORE" or
	// "UPDATED_AT"; Desc reverses it.
	Order string
	Desc  bool
}

// The orders of CapabilityQuery.Order.
const (
	OrderName        = "NAME"
	OrderPriority    = "PRIORITY"
	OrderHealthScore = "HEALTH_SCORE"
	OrderUpdatedAt   = "UPDATED_AT"
)

// searchPlan is a validated CapabilityQuery: the predicate and the ranges that serve it.
type searchPlan struct {
	words    []string
	phrase   string
	exactID  string
	domains  map[string]bool // nil: any
	statuses map[catalog.CapabilityStatus]bool
	prios    map[catalog.Priority]bool
	health   map[catalog.HealthStatus]bool
	owner    string
	tags     []string
	none     bool // the domain argument and filter.domains share no domain
	order    string
	desc     bool
	// parallel: the stages' first reads go out at once (the groups of a relevance order, the
	// scored and unscored parts of the health-score order).
	parallel bool
	stages   []stage
	scope    string
	// stats are the planning statistics the plan was made with (nil: none).
	stats *Counts
}

// stage is one GSI1 range of cards read in order; keep, when set, is the stage's own predicate
// on the card (the groups of a relevance order); serves names the one filter the range answers
// whole ("tag", "owner", "domain", "status", "prio").
//
// pks, when it holds more than one range, are the ranges of a list filter's values (pk is
// the first), read in parallel and merged in name order.
type stage struct {
	pk, lo, hi string
	pks        []string
	// after, on a stage of a whole range (no lo, hi), is where a page resumes: the cards
	// whose GSI1SK comes after it in the stage's direction (each capability has one card in
	// a range, its GSI1SK unique there).
	after   string
	reverse bool
	keep    func(*searchCard) bool
	serves  string
}

// planSearch validates q and plans its ranges. Bad input is a *catalog.ValidationError naming
// the field.
func planSearch(q CapabilityQuery) (*searchPlan, error) {
	pl := &searchPlan{}
	if q.Search != nil {
		s := *q.Search
		if n := utf8.RuneCountInString(s); n > MaxSearchLength {
			return nil, catalog.Invalid("filter.search", "must be at most %d characters, got %d", MaxSearchLength, n)
		}
		pl.words = catalog.Words(s)
		if len(pl.words) == 0 {
			return nil, catalog.Invalid("filter.search", "must hold at least one letter or digit")
		}
		if len(pl.words) > MaxSearchWords {
			return nil, catalog.Invalid("filter.search", "must be at most %d words, got %d", MaxSearchWords, len(pl.words))
		}
		pl.phrase = catalog.Fold(s)
		if id := strings.ToLower(strings.TrimSpace(s)); catalog.ValidID(id) {
			pl.exactID = id
		}
	}
	if err := noEmptyList("filter", map[string]int{"domains": lenIfGiven(q.Domains), "statuses": lenIfGiven(q.Statuses),
		"priorities": lenIfGiven(q.Priorities), "healthStatuses": lenIfGiven(q.HealthStatuses), "tags": lenIfGiven(q.Tags)}); err != nil {
		return nil, err
	}
	if len(q.Domains) > maxFilterValues || len(q.Statuses) > maxFilterValues || len(q.Priorities) > maxFilterValues ||
		len(q.HealthStatuses) > maxFilterValues || len(q.Tags) > maxFilterValues {
		return nil, catalog.Invalid("filter", "each list holds at most %d values", maxFilterValues)
	}
	if q.Domain != "" {
		if err := ValidateID("domain", q.Domain); err != nil {
			return nil, err
		}
	}
	if q.Domains != nil {
		pl.domains = map[string]bool{}
		for _, d := range q.Domains {
			if err := ValidateID("filter.domains", d); err != nil {
				return nil, err
			}
			if q.Domain == "" || d == q.Domain {
				pl.domains[d] = true
			}
		}
		pl.none = len(pl.domains) == 0
	} else if q.Domain != "" {
		pl.domains = map[string]bool{q.Domain: true}
	}
	if q.Statuses != nil {
		pl.statuses = map[catalog.CapabilityStatus]bool{}
		for _, s := range q.Statuses {
			if !s.Valid() {
				return nil, catalog.Invalid("filter.statuses", "%q is not a capability status", s)
			}
			pl.statuses[s] = true
		}
		pl.none = pl.none || len(pl.statuses) == 0
	}
	if q.Priorities != nil {
		pl.prios = map[catalog.Priority]bool{}
		for _, p := range q.Priorities {
			if !p.Valid() {
				return nil, catalog.Invalid("filter.priorities", "%q is not a priority", p)
			}
			pl.prios[p] = true
		}
		pl.none = pl.none || len(pl.prios) == 0
	}
	if q.HealthStatuses != nil {
		pl.health = map[catalog.HealthStatus]bool{}
		for _, h := range q.HealthStatuses {
			if !h.Valid() {
				return nil, catalog.Invalid("filter.healthStatuses", "%q is not a health status", h)
			}
			pl.health[h] = true
		}
		pl.none = pl.none || len(pl.health) == 0
	}
	if q.Owner != nil {
		if utf8.RuneCountInString(*q.Owner) > catalog.MaxTextLength {
			return nil, catalog.Invalid("filter.owner", "must be at most %d characters", catalog.MaxTextLength)
		}
		if pl.owner = catalog.Fold(*q.Owner); pl.owner == "" {
			return nil, catalog.Invalid("filter.owner", "must hold at least one letter or digit")
		}
	}
	seenTag := map[string]bool{}
	for _, t := range q.Tags {
		if utf8.RuneCountInString(t) > catalog.MaxTextLength {
			return nil, catalog.Invalid("filter.tags", "a tag is at most %d characters", catalog.MaxTextLength)
		}
		f := catalog.Fold(t)
		if f == "" {
			return nil, catalog.Invalid("filter.tags", "a tag must hold at least one letter or digit")
		}
		if !seenTag[f] {
			seenTag[f] = true
			pl.tags = append(pl.tags, f)
		}
	}
	switch q.Order {
	case "", OrderName, OrderPriority, OrderHealthScore, OrderUpdatedAt:
	default:
		return nil, catalog.Invalid("orderBy.field", "%q is not an order", q.Order)
	}
	pl.order, pl.desc = q.Order, q.Desc
	pl.plan(q.Order, q.Desc)
	pl.scope = pl.scopeOf(q.Order, q.Desc)
	return pl, nil
}

// plan chooses the ranges. Relevance (search, no order): the capability whose ID is the
// search (CARD#ID#), those whose name starts with it (a CARD#NAME prefix range), then the other
// matches (CARD#TERM# of the longest word). Name order: the driver, the smallest range by the
// planning statistics or, without them, by a fixed order (see drives and driver); the values
// of one list filter are several ranges merged in name order. Priority order: CARD#RANK (one priority's part of it when the filter
// asks for one). Health score: CARD#SCORE, scored then unscored. Updated: CARD#UPDATED.
func (pl *searchPlan) plan(order string, desc bool) {
	if pl.none {
		return
	}
	whole := func(pk string) stage { return stage{pk: pk, reverse: desc} }
	switch order {
	case "":
		if pl.words != nil {
			tier0 := func(k *searchCard) bool { return strings.ToLower(k.CapabilityID) == pl.exactID }
			tier1 := func(k *searchCard) bool { return !tier0(k) && strings.HasPrefix(k.Fold, pl.phrase) }
			if pl.exactID != "" {
				pl.stages = append(pl.stages, stage{pk: cardPK(cardID, pl.exactID), keep: tier0})
			}
			pl.parallel = true
			lo, hi := namePrefixRange(pl.phrase)
			pl.stages = append(pl.stages,
				stage{pk: cardPK(cardName, ""), lo: lo, hi: hi, keep: tier1},
				stage{pk: pl.termPK(), keep: func(k *searchCard) bool { return !tier0(k) && !tier1(k) }})
			return
		}
		fallthrough
	case OrderName:
		d := pl.driver()
		pl.stages = []stage{{pk: d.pks[0], pks: d.pks, reverse: desc, serves: d.serves}}
	case OrderPriority:
		st := whole(cardPK(cardRank, ""))
		if len(pl.prios) == 1 {
			for p := range pl.prios {
				st.lo, st.hi = rankRange(p)
			}
			st.serves = "prio"
		}
		pl.stages = []stage{st}
	case OrderHealthScore:
		pl.parallel = true
		scored, unscored := scoreRanges()
		pl.stages = []stage{
			{pk: cardPK(cardScore, ""), lo: scored[0], hi: scored[1], reverse: desc},
			{pk: cardPK(cardScore, ""), lo: unscored[0], hi: unscored[1]},
		}
	case OrderUpdatedAt:
		pl.stages = []stage{whole(cardPK(cardUpdated, ""))}
	}
}

// termPK is the TERM range of the search's longest word (its first two letters).
func (pl *searchPlan) termPK() string {
	w := pl.words[0]
	for _, x := range pl.words[1:] {
		if utf8.RuneCountInString(x) > utf8.RuneCountInString(w) {
			w = x
		}
	}
	return cardPK(cardTerm, runePrefix(w, 2))
}

// maxMergedRanges bounds the values of one list filter (domains, statuses, priorities) whose
// ranges a page merges in name order (one Query each, in parallel): a longer list drives from
// another range, or walks every name.
const maxMergedRanges = 8

// drive is a set of name-ordered card ranges whose union holds every capability that passes
// the filter it serves: one range (a search term, a tag, the owner, one domain...) or the
// ranges of the values of one list filter, merged in name order.
type drive struct {
	pks    []string
	serves string
	// size is the cards the ranges hold by the planning statistics; -1 when no counter knows
	// it (a search term, a tag) or there are no statistics.
	size int
}

// drives returns the ranges that could drive pl in name order, in the fixed order of
// preference (a search term > a tag > the owner > one domain > one status > one priority >
// several domains > several statuses > several priorities), then every name.
func (pl *searchPlan) drives() []drive {
	c := pl.stats
	counted := func(n int) int {
		if c == nil {
			return -1
		}
		return n
	}
	var out []drive
	if pl.words != nil {
		out = append(out, drive{pks: []string{pl.termPK()}, size: -1})
	}
	if len(pl.tags) > 0 {
		out = append(out, drive{pks: []string{cardPK(cardTag, cardPart(pl.tags[0]))}, serves: "tag", size: -1})
	}
	if pl.owner != "" {
		n := -1
		if c != nil {
			n = c.OwnerCapabilities[OwnerKey(pl.owner)]
		}
		out = append(out, drive{pks: []string{cardPK(cardOwner, cardPart(pl.owner))}, serves: "owner", size: n})
	}
	var domains, statuses, prios drive
	for _, d := range slices.Sorted(maps.Keys(pl.domains)) {
		domains.pks = append(domains.pks, cardPK(cardDomain, d))
	}
	for _, st := range slices.Sorted(maps.Keys(pl.statuses)) {
		statuses.pks = append(statuses.pks, cardPK(cardStatus, string(st)))
	}
	for _, p := range slices.Sorted(maps.Keys(pl.prios)) {
		prios.pks = append(prios.pks, cardPK(cardPriority, string(p)))
	}
	domains.serves, statuses.serves, prios.serves = "domain", "status", "prio"
	if c != nil {
		domains.size, statuses.size, prios.size = sumOf(c.ByDomain, pl.domains), sumOf(c.ByStatus, pl.statuses), sumOf(c.ByPriority, pl.prios)
	} else {
		domains.size, statuses.size, prios.size = -1, -1, -1
	}
	lists := []drive{domains, statuses, prios}
	for _, single := range []bool{true, false} {
		for _, d := range lists {
			if n := len(d.pks); n > 0 && n <= maxMergedRanges && (n == 1) == single {
				out = append(out, d)
			}
		}
	}
	return append(out, drive{pks: []string{cardPK(cardName, "")}, size: counted(c.capabilities())})
}

// capabilities is the number of capabilities the counters hold (0 without counters).
func (c *Counts) capabilities() int {
	if c == nil {
		return 0
	}
	return c.Capabilities
}

// driver is the name-ordered range set that drives pl. Without statistics, the first of
// drives (the fixed order). With them, the counted one that holds the fewest cards (fewer
// ranges on a tie); a range no counter sizes (a search term, a tag) keeps its precedence
// unless a counted one holds at most maxSorted cards (one Query reads it whole).
func (pl *searchPlan) driver() drive {
	ds := pl.drives()
	if pl.stats == nil {
		return ds[0]
	}
	best := -1
	for i, d := range ds {
		if d.size < 0 {
			continue
		}
		if best < 0 || d.size < ds[best].size || (d.size == ds[best].size && len(d.pks) < len(ds[best].pks)) {
			best = i
		}
	}
	if ds[0].size < 0 && (best < 0 || ds[best].size > maxSorted) {
		return ds[0]
	}
	return ds[best]
}

// wantsStats reports whether statistics could change pl's plan: more than one range could
// drive it, or a health filter comes with another one (its selectivity sizes the candidate
// batches; a small health range drives the page).
func (pl *searchPlan) wantsStats() bool {
	n := len(pl.drives()) - 1 // every name is always there
	return n >= 2 || (pl.health != nil && n >= 1)
}

// withStats plans pl again with the statistics c (nil: none).
func (pl *searchPlan) withStats(c *Counts) {
	if c == nil {
		return
	}
	pl.stats = c
	pl.stages, pl.parallel = nil, false
	pl.plan(pl.order, pl.desc)
}

// scopeOf names the query for its cursors: a cursor is valid only for the same arguments.
func (pl *searchPlan) scopeOf(order string, desc bool) string {
	keys := func(m any) []string {
		v := reflect.ValueOf(m)
		if v.IsNil() {
			return nil
		}
		out := []string{}
		for _, k := range v.MapKeys() {
			out = append(out, k.String())
		}
		sort.Strings(out)
		return out
	}
	body, _ := json.Marshal([]any{pl.words, pl.phrase, keys(pl.domains), keys(pl.statuses), keys(pl.prios), keys(pl.health),
		pl.owner, pl.tags, order, desc})
	return "search|" + string(body)
}

// matchCard reports whether a card passes every static filter.
func (pl *searchPlan) matchCard(k *searchCard) bool {
	if pl.domains != nil && !pl.domains[k.Domain] {
		return false
	}
	if pl.statuses != nil && !pl.statuses[k.Status] {
		return false
	}
	if pl.prios != nil && !pl.prios[k.Priority] {
		return false
	}
	if pl.owner != "" && !slices.Contains(k.Owners, pl.owner) {
		return false
	}
	for _, t := range pl.tags {
		if !slices.Contains(k.Tags, t) {
			return false
		}
	}
	for _, w := range pl.words {
		if !slices.ContainsFunc(k.Words, func(x string) bool { return strings.HasPrefix(x, w) }) {
			return false
		}
	}
	return true
}

// matchHealth reports whether c passes the health filter.
func (pl *searchPlan) matchHealth(c *catalog.Capability) bool {
	if pl.health == nil {
		return true
	}
	h := c.Aggregates.HealthStatus
	if h == "" {
		h = catalog.HealthUnknown
	}
	return pl.health[h]
}

// searchCursor is where a search page ends: the stage and the card's keys.
type searchCursor struct {
	Stage  int    `json:"t"`
	GSI1SK string `json:"gs"`
	PK     string `json:"p"`
	SK     string `json:"s"`
}

// SearchCapabilities returns a page of the capabilities that match q, in q's order.
func (s *Store) SearchCapabilities(ctx context.Context, q CapabilityQuery, first int, after string) (*Page[*catalog.Capability], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	pl, err := planSearch(q)
	if err != nil {
		return nil, err
	}
	if pl.wantsStats() {
		pl.withStats(s.planningStats())
	}
	var cur *searchCursor
	if after != "" {
		body, ok := s.cursors.Decode(pl.scope, after)
		cur = &searchCursor{}
		if !ok || json.Unmarshal(body, cur) != nil || cur.Stage < -1 || (cur.Stage == -1 && !pl.sortable()) || cur.Stage >= len(pl.stages) ||
			!isCardSK(cur.SK) {
			return nil, catalog.Invalid("after", "cursor is not valid for this query")
		}
	}
	if s.memo == nil {
		return s.searchPage(ctx, pl, first, cur)
	}
	g, k := s.memo.now(), pageKey{scope: pl.scope, first: first, after: after}
	if p := s.memo.page(g, k); p != nil {
		return p, nil
	}
	p, err := s.searchPage(ctx, pl, first, cur)
	if err == nil {
		s.memo.keepPage(g, k, p)
	}
	return p, err
}

// searchPage reads the stages from cur until first matches and one more are found (or the
// ranges end): cards by Query, then the capabilities of the cards that pass by one
// BatchGetItem for the whole page, where the health filter is checked. The stages of a
// relevance order (small groups before the big one) are read at once, in parallel: a search
// page is two round trips when its first reads hold the page.
func (s *Store) searchPage(ctx context.Context, pl *searchPlan, first int, cur *searchCursor) (*Page[*catalog.Capability], error) {
	if (cur == nil && s.sortFirst(pl)) || (cur != nil && cur.Stage == -1) {
		p, ok, err := s.sortedPage(ctx, pl, first, cur)
		if err != nil || ok {
			return p, err
		}
		// The driving range holds more than maxSorted cards: the order's own ranges.
	}
	p := &Page[*catalog.Capability]{Items: []*catalog.Capability{}, Cursors: []string{}}
	want := first + 1
	from := 0
	if cur != nil {
		from = cur.Stage
	}
	readers := make([]*stageReader, len(pl.stages))
	for si := from; si < len(pl.stages); si++ {
		var at *searchCursor
		if cur != nil && si == cur.Stage {
			at = cur
		}
		readers[si] = newStageReader(pl, pl.stages[si], at)
	}
	if pl.parallel {
		g, gctx := errgroup.WithContext(ctx)
		for _, r := range readers[from:] {
			g.Go(func() error { return r.fill(gctx, s, want) })
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	found, si := 0, from
	// perMatch is how many candidates a match took in the batches so far: the health filter is
	// checked on METADATA only, so with one the next batch is sized by it (at most
	// maxCandidateBatch), not by the matches still missing, and a selective health filter costs
	// a few round trips, not one per batch of the page's size.
	perMatch := 1.0
	if c := pl.stats; pl.health != nil && c != nil {
		// The statistics' share of the health statuses asked for sizes the first batch.
		if h := sumOf(c.ByHealth, pl.health); h > 0 && c.Capabilities > h {
			perMatch = float64(c.Capabilities) / float64(h)
		}
	}
	for found < want && si < len(pl.stages) {
		need := want - found
		if pl.health != nil {
			need = min(maxCandidateBatch, int(math.Ceil(float64(need)*perMatch*1.25)))
		}
		// Gather the candidates the page still needs, in order, across the stages.
		type cand struct {
			stage int
			card  *searchCard
			it    *item
		}
		var cands []cand
		for len(cands) < need && si < len(pl.stages) {
			r := readers[si]
			if len(r.cards) == 0 {
				if r.done {
					si++
					continue
				}
				if err := r.fill(ctx, s, need-len(cands)); err != nil {
					return nil, err
				}
				continue
			}
			k, it := r.cards[0], r.items[0]
			r.cards, r.items = r.cards[1:], r.items[1:]
			if pl.matchCard(k) && (r.st.keep == nil || r.st.keep(k)) {
				cands = append(cands, cand{si, k, it})
			}
		}
		if len(cands) == 0 {
			break
		}
		ids := make([]string, len(cands))
		for i, c := range cands {
			ids[i] = c.card.CapabilityID
		}
		caps, err := s.capabilitiesByID(ctx, ids, false)
		if err != nil {
			return nil, err
		}
		before := found
		for i, c := range cands {
			capability := caps[i]
			if capability == nil || !pl.matchHealth(capability) {
				continue
			}
			// The card may be older than METADATA (GSI1 is eventually consistent): the
			// capability itself decides.
			if k := cardOf(capability); !pl.matchCard(k) || (pl.stages[c.stage].keep != nil && !pl.stages[c.stage].keep(k)) {
				continue
			}
			found++
			if found > first {
				p.HasNext = true
				break
			}
			body, _ := json.Marshal(searchCursor{Stage: c.stage, GSI1SK: c.it.GSI1SK, PK: c.it.PK, SK: c.it.SK})
			p.Items = append(p.Items, capability)
			p.Cursors = append(p.Cursors, s.cursors.Encode(pl.scope, body))
		}
		perMatch = float64(len(cands)) / float64(max(found-before, 1))
	}
	return p, nil
}

// countChunk is how many cards a Query of a count asks for: as many as DynamoDB's 1 MB a
// response holds (about 3,000 cards), so a count of two filters reads its driving range in as
// few round trips as the range's size allows.
const countChunk = 5000

// maxCandidateBatch bounds the candidates one batch of a page with a health filter reads:
// their cards in one Query, their METADATA in BatchGetItems of 100 sent at once.
const maxCandidateBatch = 400

// maxSorted is how many cards of a driving range a page reads whole to sort its matches itself
// (sortable): one Query.
const maxSorted = 1000

// sortLimitOf is maxSorted, or the tests' limit.
func (s *Store) sortLimitOf(n int) int {
	if s.sortLimit > 0 {
		return s.sortLimit
	}
	return n
}

// orderSortable reports whether the order is not the driving range's and a filter gives a
// selective driving range (a search term, a tag, the owner, domains, statuses, priorities
// other than for the priority order): a first page then reads that range whole, when it holds
// at most maxSorted cards, and sorts the matches, rather than walking the order's range of the
// whole catalogue for them (one domain at 10,000 capabilities: 2 round trips where the walk
// took 4, BENCHMARKS.md).
func (pl *searchPlan) orderSortable() bool {
	if pl.order != OrderPriority && pl.order != OrderHealthScore && pl.order != OrderUpdatedAt {
		return false
	}
	return pl.words != nil || len(pl.tags) > 0 || pl.owner != "" || pl.domains != nil || pl.statuses != nil ||
		(pl.prios != nil && pl.order != OrderPriority)
}

// sortable reports whether a page of pl may come from a sorted read (sortedPage), whatever
// the statistics: a cursor of a sorted page is valid for pl exactly then. It does not depend
// on the statistics, so that a cursor stays valid when they change between pages.
func (pl *searchPlan) sortable() bool {
	return pl.health != nil || pl.orderSortable()
}

// sortFirst reports whether the first page of pl tries a sorted read: the health filter's
// HEALTH# items when it is the only selective filter or the statistics count them at most
// maxHealthSorted, or the driving range when the order is sortable and the statistics do not
// say it holds more than maxSorted cards.
func (s *Store) sortFirst(pl *searchPlan) bool {
	return s.healthDriven(pl) || (pl.orderSortable() && (pl.stats == nil || pl.driver().size <= s.sortLimitOf(maxSorted)))
}

// healthDriven reports whether a page of pl reads the HEALTH# index items of the statuses
// asked for, which carry the whole capability, and sorts the matches: when the health filter
// is the only selective one (no search, tag or owner), or the statistics count at most
// maxHealthSorted capabilities of those statuses. It reads at most that many items (one Query
// a status, in parallel) and falls back to the cards when they are more.
func (s *Store) healthDriven(pl *searchPlan) bool {
	if pl.health == nil {
		return false
	}
	if pl.words == nil && len(pl.tags) == 0 && pl.owner == "" {
		return true
	}
	return pl.stats != nil && sumOf(pl.stats.ByHealth, pl.health) <= s.sortLimitOf(maxHealthSorted)
}

// maxHealthSorted is how many HEALTH# items (whole capabilities, about 2 KB each) a page reads
// to sort them itself: past it, the name-ordered cards and METADATA.
const maxHealthSorted = 200

// healthCandidates returns the capabilities of the HEALTH# items of the statuses pl asks for,
// read in parallel; ok is false when the first page finds more than the limit.
func (s *Store) healthCandidates(ctx context.Context, pl *searchPlan, probe bool) (caps []*catalog.Capability, ok bool, err error) {
	limit := s.sortLimitOf(maxHealthSorted)
	statuses := slices.Sorted(maps.Keys(pl.health))
	found := make([][]*item, len(statuses))
	more := make([]bool, len(statuses))
	g, gctx := errgroup.WithContext(ctx)
	for i, h := range statuses {
		g.Go(func() (err error) {
			q := query{index: true, pk: healthPK(h)}
			if probe {
				q.want = limit
			}
			found[i], more[i], err = s.run(gctx, q)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, false, err
	}
	n := 0
	for i := range found {
		n += len(found[i])
		if more[i] || (probe && n > limit) {
			return nil, false, nil
		}
	}
	for _, items := range found {
		for _, it := range items {
			c, err := toCapability(it)
			if err != nil {
				return nil, false, err
			}
			caps = append(caps, c)
		}
	}
	return caps, true, nil
}

// sortedPage answers a sortable query by sorting its matches: from the HEALTH# items of the
// statuses asked for (healthDriven), or from its driving ranges read whole (one Query each,
// in parallel) and the matching cards' capabilities by BatchGetItem (100 a call, sent at
// once), sorted by the order's index key. ok is false, with nothing read past one Query a
// range, when the items or cards are more than the limit and the page is the first (a page
// after a cursor of this kind reads them whatever their number).
func (s *Store) sortedPage(ctx context.Context, pl *searchPlan, first int, cur *searchCursor) (p *Page[*catalog.Capability], ok bool, err error) {
	var caps []*catalog.Capability
	if s.healthDriven(pl) || (cur != nil && !pl.orderSortable()) {
		if caps, ok, err = s.healthCandidates(ctx, pl, cur == nil); err != nil {
			return nil, false, err
		}
		if ok {
			return s.sortPage(pl, caps, first, cur), true, nil
		}
		if !pl.orderSortable() {
			return nil, false, nil
		}
	}
	d := pl.driver()
	limit := s.sortLimitOf(maxSorted)
	found := make([][]*searchCard, len(d.pks))
	more := make([]bool, len(d.pks))
	g, gctx := errgroup.WithContext(ctx)
	for i, pk := range d.pks {
		g.Go(func() error {
			st := stage{pk: pk}
			var start map[string]types.AttributeValue
			for {
				cards, _, next, err := s.readCards(gctx, st, start, limit)
				if err != nil {
					return err
				}
				found[i] = append(found[i], cards...)
				if next != nil && cur == nil {
					more[i] = true
					return nil
				}
				if next == nil {
					return nil
				}
				start = next
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, false, err
	}
	var ids []string
	n := 0
	for i := range found {
		n += len(found[i])
		if cur == nil && (more[i] || n > limit) {
			return nil, false, nil
		}
		for _, k := range found[i] {
			if pl.matchCard(k) {
				ids = append(ids, k.CapabilityID)
			}
		}
	}
	if len(ids) > 0 {
		if caps, err = s.capabilitiesByID(ctx, ids, false); err != nil {
			return nil, false, err
		}
	}
	return s.sortPage(pl, caps, first, cur), true, nil
}

// sortPage is the page after cur of the capabilities of caps that match, sorted by the order.
func (s *Store) sortPage(pl *searchPlan, caps []*catalog.Capability, first int, cur *searchCursor) *Page[*catalog.Capability] {
	type entry struct {
		key string
		c   *catalog.Capability
	}
	var all []entry
	for _, c := range caps {
		if c == nil || !pl.matchHealth(c) || !pl.matchCard(cardOf(c)) {
			continue
		}
		all = append(all, entry{pl.orderKey(c), c})
	}
	cmp := func(a, b string) int { return pl.compareKeys(a, b) }
	slices.SortFunc(all, func(a, b entry) int { return cmp(a.key, b.key) })
	from := 0
	if cur != nil {
		from = sort.Search(len(all), func(i int) bool { return cmp(cur.GSI1SK, all[i].key) < 0 })
	}
	p := &Page[*catalog.Capability]{Items: []*catalog.Capability{}, Cursors: []string{}}
	for _, e := range all[from:] {
		if len(p.Items) == first {
			p.HasNext = true
			break
		}
		body, _ := json.Marshal(searchCursor{Stage: -1, GSI1SK: e.key, PK: capabilityPK(e.c.CapabilityID), SK: cardSK(cardName, "")})
		p.Items = append(p.Items, e.c)
		p.Cursors = append(p.Cursors, s.cursors.Encode(pl.scope, body))
	}
	return p
}

// orderKey is c's key in the order's card range.
func (pl *searchPlan) orderKey(c *catalog.Capability) string {
	f := catalog.Fold(c.Name)
	switch pl.order {
	case OrderPriority:
		return rankKey(c.Priority, f, c.CapabilityID)
	case OrderHealthScore:
		return scoreKey(c.Aggregates.ReportedHealthScore(), f, c.CapabilityID)
	case OrderUpdatedAt:
		return updatedKey(c.UpdatedAt.Time, f, c.CapabilityID)
	case "":
		if pl.words != nil {
			// Relevance: the exact ID, then the name prefix matches, then the others, each in
			// name order.
			tier := "2"
			switch {
			case strings.ToLower(c.CapabilityID) == pl.exactID:
				tier = "0"
			case strings.HasPrefix(f, pl.phrase):
				tier = "1"
			}
			return tier + nameKey(f, c.CapabilityID)
		}
	}
	return nameKey(f, c.CapabilityID)
}

// compareKeys orders two order keys as the order's stages read them: DESC reverses, but the
// unscored part of the health-score order comes last, in name order, either way.
func (pl *searchPlan) compareKeys(a, b string) int {
	if pl.order == OrderHealthScore {
		scoredA, _ := scoreRanges()
		ua, ub := !strings.HasPrefix(a, scoredA[0]), !strings.HasPrefix(b, scoredA[0])
		switch {
		case ua && ub:
			return strings.Compare(a, b)
		case ua:
			return 1
		case ub:
			return -1
		}
	}
	if pl.desc {
		return strings.Compare(b, a)
	}
	return strings.Compare(a, b)
}

// stageReader holds the cards of one stage read and not yet looked at, and where its next
// Query starts. A stage of several ranges has one rangeReader each: their cards are merged
// into cards in the stage's order.
type stageReader struct {
	st    stage
	exact bool
	start map[string]types.AttributeValue
	cards []*searchCard
	items []*item
	done  bool
	subs  []*stageReader
}

// newStageReader returns the reader of st, after cur when cur is in st.
func newStageReader(pl *searchPlan, st stage, cur *searchCursor) *stageReader {
	r := &stageReader{st: st, exact: pl.exact(st)}
	if len(st.pks) > 1 {
		for _, pk := range st.pks {
			sub := st
			sub.pk, sub.pks = pk, nil
			r.subs = append(r.subs, &stageReader{st: sub, exact: r.exact})
		}
	}
	switch {
	case cur != nil && st.lo == "" && st.hi == "":
		// A position in the order of a whole range: valid in any range of that order,
		// whether or not the card is in it (the driver may differ from the previous page's
		// when the statistics moved; an ExclusiveStartKey would also compare the card's SK).
		r.st.after = cur.GSI1SK
		for _, sub := range r.subs {
			sub.st.after = cur.GSI1SK
		}
	case cur != nil:
		r.start = cardStartKey(st.pk, cur.GSI1SK, cur.PK, cur.SK)
	}
	return r
}

// fill reads the stage's next chunk: need cards when every card of the range matches, else
// cardChunk. A stage of several ranges reads each range whose cards ran out (need or
// cardChunk each, in parallel) and merges them.
func (r *stageReader) fill(ctx context.Context, s *Store, need int) error {
	if r.subs != nil {
		g, gctx := errgroup.WithContext(ctx)
		for _, sub := range r.subs {
			if len(sub.cards) == 0 && !sub.done {
				g.Go(func() error { return sub.fill(gctx, s, need) })
			}
		}
		if err := g.Wait(); err != nil {
			return err
		}
		r.merge()
		return nil
	}
	limit := cardChunk
	if r.exact {
		limit = max(need, 1)
	}
	cards, items, next, err := s.readCards(ctx, r.st, r.start, limit)
	if err != nil {
		return err
	}
	r.cards, r.items = append(r.cards, cards...), append(r.items, items...)
	r.start, r.done = next, next == nil
	return nil
}

// merge moves the ranges' cards into r in the stage's order, as far as every range not done
// has a card to compare (the others' next cards could come before).
func (r *stageReader) merge() {
	for {
		var best *stageReader
		for _, sub := range r.subs {
			if len(sub.cards) == 0 {
				if !sub.done {
					return
				}
				continue
			}
			if best == nil || (sub.items[0].GSI1SK < best.items[0].GSI1SK) != r.st.reverse {
				best = sub
			}
		}
		if best == nil {
			r.done = true
			return
		}
		r.cards, r.items = append(r.cards, best.cards[0]), append(r.items, best.items[0])
		best.cards, best.items = best.cards[1:], best.items[1:]
	}
}

// exact reports whether every card of st passes the filter on cards (the health filter is
// checked on METADATA): no card need be read past the candidates asked for.
func (pl *searchPlan) exact(st stage) bool {
	ok := func(name string, set bool) bool { return !set || st.serves == name }
	return st.keep == nil && pl.words == nil && len(pl.tags) <= 1 && ok("tag", len(pl.tags) > 0) &&
		ok("owner", pl.owner != "") && ok("domain", pl.domains != nil) && ok("status", pl.statuses != nil) && ok("prio", pl.prios != nil)
}

// readCards runs one Query of a stage's range from start, at most limit cards: the cards, their
// items and where the next Query starts (nil when the range is done).
func (s *Store) readCards(ctx context.Context, st stage, start map[string]types.AttributeValue, limit int) ([]*searchCard, []*item, map[string]types.AttributeValue, error) {
	in := st.input(s.table)
	in.ExclusiveStartKey = start
	in.Limit = aws.Int32(int32(limit))
	out, err := s.db.Query(withWireItems(ctx), in)
	if err != nil {
		return nil, nil, nil, classify("query", err)
	}
	items, err := responseItems(out.ResultMetadata, out.Items)
	if err != nil {
		return nil, nil, nil, err
	}
	cards, err := cardsOf(items)
	if err != nil {
		return nil, nil, nil, err
	}
	var next map[string]types.AttributeValue
	if len(out.LastEvaluatedKey) > 0 {
		next = out.LastEvaluatedKey
	}
	return cards, items, next, nil
}

// decodeCards returns the cards of a Query's response.
func decodeCards(out *dynamodb.QueryOutput) ([]*searchCard, error) {
	items, err := responseItems(out.ResultMetadata, out.Items)
	if err != nil {
		return nil, err
	}
	return cardsOf(items)
}

// cardsOf decodes the Data of card items.
func cardsOf(items []*item) ([]*searchCard, error) {
	cards := make([]*searchCard, len(items))
	for i, it := range items {
		data, err := it.data()
		if err != nil {
			return nil, err
		}
		cards[i] = &searchCard{}
		if err := decodeData(data, cards[i]); err != nil {
			return nil, fmt.Errorf("card %s/%s: %w", it.PK, it.SK, err)
		}
	}
	return cards, nil
}

// input is the Query of a stage's range on GSI1.
func (st stage) input(table string) *dynamodb.QueryInput {
	names := map[string]string{"#pk": attrGSI1PK}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: st.pk}}
	cond := "#pk = :pk"
	switch {
	case st.lo != "" || st.hi != "":
		names["#sk"] = attrGSI1SK
		values[":lo"] = &types.AttributeValueMemberS{Value: st.lo}
		values[":hi"] = &types.AttributeValueMemberS{Value: st.hi}
		cond += " AND #sk BETWEEN :lo AND :hi"
	case st.after != "":
		names["#sk"] = attrGSI1SK
		values[":after"] = &types.AttributeValueMemberS{Value: st.after}
		if st.reverse {
			cond += " AND #sk < :after"
		} else {
			cond += " AND #sk > :after"
		}
	}
	return &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String(gsi1Name), KeyConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values, ScanIndexForward: aws.Bool(!st.reverse),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
}

// memoCount is count(ctx) answered from the read memo while the engine is unchanged (on an
// engine without one, count(ctx)). scope names what is counted.
func (s *Store) memoCount(ctx context.Context, scope string, count func(context.Context) (int, error)) (int, error) {
	return memoized(s, pageKey{scope: scope}, func() (int, error) { return count(ctx) })
}

// CountCapabilities counts the capabilities that match q. With no filter, or a filter of one
// counted kind (domains, statuses, priorities, health statuses or owner alone), the catalogue's
// counters answer it (one BatchGetItem). Otherwise, without a health filter it reads the cards
// of the planned ranges (Select=COUNT when every card of a range matches); with one, the HEALTH#
// index items of the statuses asked for, which carry the whole capability.
func (s *Store) CountCapabilities(ctx context.Context, q CapabilityQuery) (int, error) {
	pl, err := planSearch(q)
	if err != nil {
		return 0, err
	}
	return s.memoCount(ctx, "count|"+pl.scope, func(ctx context.Context) (int, error) {
		if pl.none {
			return 0, nil
		}
		if !pl.countedByCounters() {
			if pl.wantsStats() {
				pl.withStats(s.planningStats())
			}
			return s.countSearch(ctx, pl)
		}
		counts, err := s.Counts(ctx)
		if err != nil {
			return 0, err
		}
		n, _ := counts.capabilityCount(pl)
		return n, nil
	})
}

// countSearch counts the matches of a planned search (see CountCapabilities): with a health
// filter, from the HEALTH# items of its statuses (one range each, in parallel); otherwise
// from the driving ranges, each split into name segments read in parallel (countSegments),
// Select=COUNT when every card of the range matches.
func (s *Store) countSearch(ctx context.Context, pl *searchPlan) (int, error) {
	if pl.none {
		return 0, nil
	}
	var mu sync.Mutex
	n := 0
	add := func(k int) {
		mu.Lock()
		n += k
		mu.Unlock()
	}
	g, gctx := errgroup.WithContext(ctx)
	if pl.health != nil {
		for h := range pl.health {
			g.Go(func() error {
				items, _, err := s.run(gctx, query{index: true, pk: healthPK(h)})
				if err != nil {
					return err
				}
				k := 0
				for _, it := range items {
					c, err := toCapability(it)
					if err != nil {
						return err
					}
					if pl.matchCard(cardOf(c)) {
						k++
					}
				}
				add(k)
				return nil
			})
		}
		err := g.Wait()
		return n, err
	}
	// The count is the order's no matter: it reads the driving ranges of name order.
	d := pl.driver()
	for _, pk := range d.pks {
		st := stage{pk: pk, serves: d.serves}
		exact := pl.exact(st)
		for _, seg := range nameSegments(countSegments(pl, d)) {
			g.Go(func() error {
				in := st.input(s.table)
				segmentCondition(in, seg)
				if exact {
					c, err := s.countRange(gctx, in, nil)
					add(c)
					return err
				}
				var start map[string]types.AttributeValue
				for {
					in.ExclusiveStartKey = start
					in.Limit = aws.Int32(countChunk)
					out, err := s.db.Query(withWireItems(gctx), in)
					if err != nil {
						return classify("query", err)
					}
					cards, err := decodeCards(out)
					if err != nil {
						return err
					}
					k := 0
					for _, c := range cards {
						if pl.matchCard(c) {
							k++
						}
					}
					add(k)
					if len(out.LastEvaluatedKey) == 0 {
						return nil
					}
					start = out.LastEvaluatedKey
				}
			})
		}
	}
	err := g.Wait()
	return n, err
}

// countSegmentCards is how many cards a segment of a count is meant to hold: about what one
// Query returns (DynamoDB's 1 MB holds some 3,000 cards), so that a counted range is read in
// one round trip of parallel Queries when the names spread evenly.
const countSegmentCards = 2500

// countSegments is how many name segments a count of pl driven by d reads in parallel: by the
// range's counted size, or, when no counter knows it (a tag, a search term), by the
// catalogue's; one without statistics.
func countSegments(pl *searchPlan, d drive) int {
	size := d.size
	if size < 0 {
		size = pl.stats.capabilities()
	}
	return min(max((size+countSegmentCards-1)/countSegmentCards, 1), maxNameSegments)
}

// segmentCondition narrows a stage's Query to the GSI1SK segment seg ("" ends are open).
func segmentCondition(in *dynamodb.QueryInput, seg [2]string) {
	switch lo, hi := seg[0], seg[1]; {
	case lo == "" && hi == "":
		return
	case lo == "":
		*in.KeyConditionExpression += " AND #sk < :hi"
		in.ExpressionAttributeValues[":hi"] = &types.AttributeValueMemberS{Value: hi}
	case hi == "":
		*in.KeyConditionExpression += " AND #sk >= :lo"
		in.ExpressionAttributeValues[":lo"] = &types.AttributeValueMemberS{Value: lo}
	default:
		// Name keys hold a '#', so none equals a boundary: BETWEEN lo AND hi is [lo, hi).
		*in.KeyConditionExpression += " AND #sk BETWEEN :lo AND :hi"
		in.ExpressionAttributeValues[":lo"] = &types.AttributeValueMemberS{Value: lo}
		in.ExpressionAttributeValues[":hi"] = &types.AttributeValueMemberS{Value: hi}
	}
	in.ExpressionAttributeNames["#sk"] = attrGSI1SK
}

// countRange counts the items of a Query with Select=COUNT, following LastEvaluatedKey.
func (s *Store) countRange(ctx context.Context, in *dynamodb.QueryInput, filter *string) (int, error) {
	in.Select = types.SelectCount
	in.FilterExpression = filter
	n := 0
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return 0, classify("count", err)
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// cardStartKey is the ExclusiveStartKey of a GSI1 Query that continues after a card.
func cardStartKey(gpk, gsk, pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrGSI1PK: &types.AttributeValueMemberS{Value: gpk}, attrGSI1SK: &types.AttributeValueMemberS{Value: gsk},
		attrPK: &types.AttributeValueMemberS{Value: pk}, attrSK: &types.AttributeValueMemberS{Value: sk},
	}
}

// CountIndex counts the capabilities of one of the existing listings, CAPABILITIES (optionally
// one domain's part of it), DOMAIN# or HEALTH#, a capability being deleted left out: from the
// catalogue's counters, one BatchGetItem whatever their size (CountCapabilities). index is
// "capabilities", "domain" or "health".
func (s *Store) CountIndex(ctx context.Context, index, value string) (int, error) {
	var q CapabilityQuery
	switch index {
	case "capabilities", "domain":
		q.Domain = value
	case "health":
		q.HealthStatuses = []catalog.HealthStatus{catalog.HealthStatus(value)}
	default:
		return 0, fmt.Errorf("count index %q: no such index", index)
	}
	return s.CountCapabilities(ctx, q)
}
