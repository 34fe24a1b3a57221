package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// cardEntries returns the card items of c: the keys of each (the Data is cardOf(c)).
func cardEntries(c *catalog.Capability, k *searchCard) []cardEntry {
	id := c.CapabilityID
	nk := nameKey(k.Fold, id)
	out := []cardEntry{
		{cardSK(cardName, ""), cardPK(cardName, ""), nk},
		{cardSK(cardStatus, ""), cardPK(cardStatus, string(c.Status)), nk},
		{cardSK(cardPriority, ""), cardPK(cardPriority, string(c.Priority)), nk},
		{cardSK(cardDomain, ""), cardPK(cardDomain, c.BusinessDomain), nk},
		{cardSK(cardID, ""), cardPK(cardID, strings.ToLower(id)), nk},
		{cardSK(cardScore, ""), cardPK(cardScore, ""), scoreKey(c.Aggregates.ReportedHealthScore(), k.Fold, id)},
		{cardSK(cardUpdated, ""), cardPK(cardUpdated, ""), updatedKey(c.UpdatedAt.Time, k.Fold, id)},
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
	entries := cardEntries(c, k)
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

// searchWrites adds to p the card writes that take a capability from old (nil when created) to
// n: a card whose keys and content are unchanged is not written, a card n no longer has is
// deleted. It returns a *catalog.ValidationError when n would need more than maxCards cards.
func searchWrites(p *plan, old, n *catalog.Capability, now time.Time) error {
	k := cardOf(n)
	entries := cardEntries(n, k)
	if err := checkCards(n, entries); err != nil {
		return err
	}
	before := map[string]cardEntry{}
	var oldCard *searchCard
	if old != nil {
		oldCard = cardOf(old)
		for _, e := range cardEntries(old, oldCard) {
			before[e.sk] = e
		}
	}
	same := oldCard != nil && reflect.DeepEqual(oldCard, k)
	for _, e := range entries {
		if b, ok := before[e.sk]; ok && same && b == e {
			delete(before, e.sk)
			continue
		}
		delete(before, e.sk)
		it, err := newItem(capabilityPK(n.CapabilityID), e.sk, entityCard, catalog.Meta{Revision: 1}, now, k)
		if err != nil {
			return err
		}
		it.GSI1PK, it.GSI1SK = e.gpk, e.gsk
		p.put(it, "", nil)
	}
	gone := make([]string, 0, len(before))
	for sk := range before {
		gone = append(gone, sk)
	}
	sort.Strings(gone)
	for _, sk := range gone {
		p.del(capabilityPK(n.CapabilityID), sk, "", nil)
	}
	return nil
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
	stages   []stage
	scope    string
}

// stage is one GSI1 range of cards read in order; keep, when set, is the stage's own predicate
// on the card (the groups of a relevance order).
type stage struct {
	pk, lo, hi string
	reverse    bool
	keep       func(*searchCard) bool
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
	pl.plan(q.Order, q.Desc)
	pl.scope = pl.scopeOf(q.Order, q.Desc)
	return pl, nil
}

// plan chooses the ranges. Relevance (search, no order): the capability whose ID is the
// search (CARD#ID#), those whose name starts with it (a CARD#NAME prefix range), then the other
// matches (CARD#TERM# of the longest word). Name order: the most selective range by this rule,
// with no counts to go by: a search term > a tag > the owner > one domain > one status > one
// priority > every name. Priority order: the CARD#PRIORITY# ranges of the priorities asked for,
// in rank order. Health score: CARD#SCORE, scored then unscored. Updated: CARD#UPDATED.
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
			lo, hi := namePrefixRange(pl.phrase)
			pl.stages = append(pl.stages,
				stage{pk: cardPK(cardName, ""), lo: lo, hi: hi, keep: tier1},
				stage{pk: pl.termPK(), keep: func(k *searchCard) bool { return !tier0(k) && !tier1(k) }})
			return
		}
		fallthrough
	case OrderName:
		pl.stages = []stage{whole(pl.driverPK())}
	case OrderPriority:
		ranks := slices.Clone(catalog.Priorities)
		sort.Slice(ranks, func(i, j int) bool { return ranks[i].Rank() < ranks[j].Rank() })
		if desc {
			slices.Reverse(ranks)
		}
		for _, p := range ranks {
			if pl.prios == nil || pl.prios[p] {
				pl.stages = append(pl.stages, whole(cardPK(cardPriority, string(p))))
			}
		}
	case OrderHealthScore:
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

// driverPK is the most selective name-ordered range of the filter (see plan).
func (pl *searchPlan) driverPK() string {
	single := func(n int) bool { return n == 1 }
	switch {
	case pl.words != nil:
		return pl.termPK()
	case len(pl.tags) > 0:
		return cardPK(cardTag, cardPart(pl.tags[0]))
	case pl.owner != "":
		return cardPK(cardOwner, cardPart(pl.owner))
	case single(len(pl.domains)):
		for d := range pl.domains {
			return cardPK(cardDomain, d)
		}
	case single(len(pl.statuses)):
		for s := range pl.statuses {
			return cardPK(cardStatus, string(s))
		}
	case single(len(pl.prios)):
		for p := range pl.prios {
			return cardPK(cardPriority, string(p))
		}
	}
	return cardPK(cardName, "")
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
	var cur *searchCursor
	if after != "" {
		body, ok := s.cursors.Decode(pl.scope, after)
		cur = &searchCursor{}
		if !ok || json.Unmarshal(body, cur) != nil || cur.Stage < 0 || cur.Stage >= len(pl.stages) ||
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
// ranges end): cards by Query, the capabilities of the cards that pass by BatchGetItem.
func (s *Store) searchPage(ctx context.Context, pl *searchPlan, first int, cur *searchCursor) (*Page[*catalog.Capability], error) {
	p := &Page[*catalog.Capability]{Items: []*catalog.Capability{}, Cursors: []string{}}
	want := first + 1
	var found int
	from := 0
	if cur != nil {
		from = cur.Stage
	}
	for si := from; si < len(pl.stages) && found < want; si++ {
		st := pl.stages[si]
		var start map[string]types.AttributeValue
		if cur != nil && si == cur.Stage {
			start = cardStartKey(st.pk, cur.GSI1SK, cur.PK, cur.SK)
		}
		for found < want {
			limit := cardChunk
			if pl.exact(st) {
				limit = want - found
			}
			cards, items, next, err := s.readCards(ctx, st, start, limit)
			if err != nil {
				return nil, err
			}
			var cand []int
			for i, k := range cards {
				if pl.matchCard(k) && (st.keep == nil || st.keep(k)) {
					cand = append(cand, i)
				}
			}
			// Without a health filter a passing card is a match: read only the capabilities
			// the page needs. With one, read every candidate's METADATA and check it there.
			cut := pl.health == nil && len(cand) > want-found
			if cut {
				cand = cand[:want-found]
			}
			ids := make([]string, len(cand))
			for j, i := range cand {
				ids[j] = cards[i].CapabilityID
			}
			var caps []*catalog.Capability
			if len(ids) > 0 {
				if caps, err = s.capabilitiesByID(ctx, ids, false); err != nil {
					return nil, err
				}
			}
			for j, i := range cand {
				c := caps[j]
				if c == nil || !pl.matchHealth(c) || !pl.matchCard(cardOf(c)) || (st.keep != nil && !st.keep(cardOf(c))) {
					continue
				}
				found++
				if found > first {
					p.HasNext = true
					break
				}
				it := items[i]
				body, _ := json.Marshal(searchCursor{Stage: si, GSI1SK: it.GSI1SK, PK: it.PK, SK: it.SK})
				p.Items = append(p.Items, c)
				p.Cursors = append(p.Cursors, s.cursors.Encode(pl.scope, body))
			}
			if cut && found < want {
				// A card passed that its capability no longer does: go on after the last
				// candidate read, not after the cards left unread.
				last := items[cand[len(cand)-1]]
				start = cardStartKey(st.pk, last.GSI1SK, last.PK, last.SK)
				continue
			}
			if next == nil {
				break
			}
			start = next
		}
	}
	return p, nil
}

// exact reports whether every card of st passes the filter: no card need be read past the page.
func (pl *searchPlan) exact(st stage) bool {
	return st.keep == nil && pl.health == nil && pl.words == nil && len(pl.tags) == 0 && pl.owner == "" &&
		pl.domains == nil && pl.statuses == nil && (pl.prios == nil || strings.HasPrefix(st.pk, cardPK(cardPriority, "")))
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
	cards := make([]*searchCard, len(items))
	for i, it := range items {
		data, err := it.data()
		if err != nil {
			return nil, nil, nil, err
		}
		cards[i] = &searchCard{}
		if err := decodeData(data, cards[i]); err != nil {
			return nil, nil, nil, fmt.Errorf("card %s/%s: %w", it.PK, it.SK, err)
		}
	}
	var next map[string]types.AttributeValue
	if len(out.LastEvaluatedKey) > 0 {
		next = out.LastEvaluatedKey
	}
	return cards, items, next, nil
}

// input is the Query of a stage's range on GSI1.
func (st stage) input(table string) *dynamodb.QueryInput {
	names := map[string]string{"#pk": attrGSI1PK}
	values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: st.pk}}
	cond := "#pk = :pk"
	if st.lo != "" || st.hi != "" {
		names["#sk"] = attrGSI1SK
		values[":lo"] = &types.AttributeValueMemberS{Value: st.lo}
		values[":hi"] = &types.AttributeValueMemberS{Value: st.hi}
		cond += " AND #sk BETWEEN :lo AND :hi"
	}
	return &dynamodb.QueryInput{
		TableName: aws.String(table), IndexName: aws.String(gsi1Name), KeyConditionExpression: aws.String(cond),
		ExpressionAttributeNames: names, ExpressionAttributeValues: values, ScanIndexForward: aws.Bool(!st.reverse),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
	}
}

// CountCapabilities counts the capabilities that match q. Without a health filter it reads
// the cards of the planned ranges (Select=COUNT when every card of a range matches); with one,
// the HEALTH# index items of the statuses asked for, which carry the whole capability.
func (s *Store) CountCapabilities(ctx context.Context, q CapabilityQuery) (int, error) {
	pl, err := planSearch(q)
	if err != nil {
		return 0, err
	}
	if pl.none {
		return 0, nil
	}
	n := 0
	if pl.health != nil {
		for h := range pl.health {
			items, _, err := s.run(ctx, query{index: true, pk: healthPK(h)})
			if err != nil {
				return 0, err
			}
			for _, it := range items {
				c, err := toCapability(it)
				if err != nil {
					return 0, err
				}
				if pl.matchCard(cardOf(c)) {
					n++
				}
			}
		}
		return n, nil
	}
	for _, st := range pl.stages {
		if pl.exact(st) {
			c, err := s.countRange(ctx, st.input(s.table), nil)
			if err != nil {
				return 0, err
			}
			n += c
			continue
		}
		var start map[string]types.AttributeValue
		for {
			cards, _, next, err := s.readCards(ctx, st, start, 1000)
			if err != nil {
				return 0, err
			}
			for _, k := range cards {
				if pl.matchCard(k) && (st.keep == nil || st.keep(k)) {
					n++
				}
			}
			if next == nil {
				break
			}
			start = next
		}
	}
	return n, nil
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

// CountIndex counts the items of one of the existing capability listings, whose connections
// read the CAPABILITIES (optionally one domain's part of it), DOMAIN# or HEALTH# index: one
// Query with Select=COUNT per MB of index (about 1,000 capabilities), a capability being
// deleted left out. index is "capabilities", "domain" or "health".
func (s *Store) CountIndex(ctx context.Context, index, value string) (int, error) {
	q := query{index: true}
	switch index {
	case "capabilities":
		q.pk = capabilitiesPK
		if value != "" {
			q.lo, q.hi = value+"#", value+rangeEnd
		}
	case "domain":
		q.pk = domainPK(value)
	case "health":
		q.pk = healthPK(catalog.HealthStatus(value))
	default:
		return 0, fmt.Errorf("count index %q: no such index", index)
	}
	st := stage{pk: q.pk, lo: q.lo, hi: q.hi}
	in := st.input(s.table)
	in.ExpressionAttributeNames["#del"] = attrDeleting
	return s.countRange(ctx, in, aws.String("attribute_not_exists(#del)"))
}
