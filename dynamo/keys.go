package dynamo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/capcat/catalogue/catalog"
)

// Every key string of the table is built and parsed in this file, and nowhere else.

// Key prefixes and fixed sort keys of the single-table design.
const (
	capabilityPrefix = "CAPABILITY#"
	componentPrefix  = "COMPONENT#"
	dependencyPrefix = "DEPENDENCY#"
	indexPrefix      = "INDEX#"
	jobPrefix        = "JOB#"
	metricPrefix     = "METRIC#"
	metricsPrefix    = "METRICS#"
	rulePrefix       = "RULE#"
	rollupPrefix     = "ROLLUP#"
	tokenPrefix      = "TOKEN#"
	claimPrefix      = "COMPONENTID#"
	leasePrefix      = "LEASE#"
	statePK          = "STATE#archive-metrics"
	versionPrefix    = "VERSION#"
	domainPrefix     = "DOMAIN#"
	healthPrefix     = "HEALTH#"
	changePrefix     = "CHANGE#"
	changesPrefix    = "CHANGES#"
	counterPrefix    = "COUNTERS#"
	notifyPrefix     = "NOTIFY#"
	outboxPK         = "OUTBOX#PENDING"
	// detachedNotifyPrefix starts the PK of a notification that outlived its capability.
	detachedNotifyPrefix = "OUTBOX#DETACHED#"

	metadataSK     = "METADATA"
	tokenSK        = "TOKEN"
	claimSK        = "CLAIM"
	resultSK       = "RESULT"
	leaseSK        = "LEASE"
	stateSK        = "STATE"
	domainIndexSK  = "INDEX#DOMAIN"
	healthIndexSK  = "INDEX#HEALTH"
	capabilitiesPK = "CAPABILITIES"
	counterSK      = "COUNTER"
	detachedSK     = "NOTIFICATION"

	dependenciesSuffix = "#DEPENDENCIES"
	rulesSuffix        = "#RULES"

	// rangeEnd sorts after '#' and before every other character a key can hold after a
	// prefix, so "X#" .. "X$" spans exactly the keys that begin with "X#".
	rangeEnd = "$"
)

// DynamoDB's limits on key values, in bytes of UTF-8. PK and GSI1PK are partition keys, SK and
// GSI1SK sort keys.
const (
	maxPartitionKeyBytes = 2048 // DynamoDB limit
	maxSortKeyBytes      = 1024 // DynamoDB limit

	// maxSlugBytes bounds the name slug of a GSI1 sort key: with the longest business domain
	// (an ID, 128 bytes) the key stays far below maxSortKeyBytes.
	maxSlugBytes = 200
	// slugHashDigits is how many hex digits of the slug's SHA-256 end a shortened slug.
	slugHashDigits = 16
)

// Entity type names stored in the EntityType attribute.
const (
	entityCapability  = "Capability"
	entityDomainIndex = "CapabilityDomainIndex"
	entityHealthIndex = "CapabilityHealthIndex"
	entityComponent   = "SoftwareComponent"
	entityDependency  = "ComponentDependency"
	entityJob         = "ImplementationJob"
	entityMetric      = "PerformanceMetric"
	entityRule        = "ConfigurationRule"
	entityToken       = "IdempotencyToken"
	entityClaim       = "ComponentClaim"
	entityResult      = "Result"
	entityLease       = "Lease"
	entityState       = "ArchiveState"
	entityVersion     = "Version"
	entityChange      = "Change"
	entityCounter     = "CounterShard"
	entityNotify      = "Notification"
	entityRollup      = "MetricRollup"
)

// bounds returns the sort-key range of a contiguous group of segments from PlanRanges.
func (s Segment) bounds() (lo, hi string, err error) {
	switch s {
	case SegComponents:
		return componentPrefix, prefixEnd(componentPrefix), nil
	case SegDependencies:
		return dependencyPrefix, prefixEnd(dependencyPrefix), nil
	case SegComponents | SegDependencies:
		return componentPrefix, prefixEnd(dependencyPrefix), nil
	case SegRules:
		return rulePrefix, prefixEnd(rulePrefix), nil
	}
	return "", "", fmt.Errorf("segments %v are not one contiguous range", s)
}

// prefixEnd is the upper bound of the keys beginning with p (p ends in '#').
func prefixEnd(p string) string { return strings.TrimSuffix(p, "#") + rangeEnd }

// cachedSegments are the segments of a partition whose ranges (Segment.bounds) readers may
// cache: each alone, and components with dependencies as one range (PlanRanges).
var cachedSegments = [...]Segment{SegComponents, SegDependencies, SegRules}

// segmentsHolding returns the segments whose range (Segment.bounds, the bounds the range reads
// query) holds the sort key sk of a capability's partition: none for METADATA, jobs, metrics,
// versions, changes and the rest.
func segmentsHolding(sk string) Segment {
	var held Segment
	for _, seg := range cachedSegments {
		lo, hi, _ := seg.bounds()
		if lo <= sk && sk <= hi {
			held |= seg
		}
	}
	return held
}

// ValidateID returns a *catalog.ValidationError naming field unless id may be part of a key
// (catalog.ValidateID: the identifier alphabet is the table's and the buckets').
func ValidateID(field, id string) error { return catalog.ValidateID(field, id) }

// keyTime formats t as it appears in keys: UTC, fixed width, microseconds.
func keyTime(t time.Time) string { return t.UTC().Format(catalog.TimeLayout) }

func twoDigits(n int) string   { return fmt.Sprintf("%02d", n) }
func threeDigits(n int) string { return fmt.Sprintf("%03d", n) }

// Slug turns a name into the lower-case, dash-separated form used in GSI1 sort keys:
// "Alert Management" -> "alert-management". It is at most maxSlugBytes long whatever the name: a
// longer slug is cut to its first bytes, which keep the index order of names that differ there,
// and ends with a hash of the whole slug, which keeps two long names apart.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		default:
			if b.Len() > 0 && !dash {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	slug := strings.TrimSuffix(b.String(), "-")
	if len(slug) <= maxSlugBytes {
		return slug
	}
	// The slug is ASCII: every byte is a character boundary.
	sum := sha256.Sum256([]byte(slug))
	head := strings.TrimSuffix(slug[:maxSlugBytes-1-slugHashDigits], "-")
	return head + "-" + hex.EncodeToString(sum[:])[:slugHashDigits]
}

// checkKeySizes returns a *catalog.ValidationError if a key of an item would be over DynamoDB's
// limits. The builders keep validated input within them; this is the last check before a
// write, so that no input reaches DynamoDB as a ValidationException.
func checkKeySizes(pk, sk, gsi1PK, gsi1SK string) error {
	for _, k := range []struct {
		v   string
		max int
	}{{pk, maxPartitionKeyBytes}, {sk, maxSortKeyBytes}, {gsi1PK, maxPartitionKeyBytes}, {gsi1SK, maxSortKeyBytes}} {
		if len(k.v) > k.max {
			return catalog.Invalid("input", "a key of this item would be %d bytes, over DynamoDB's limit of %d: shorten its identifiers or name", len(k.v), k.max)
		}
	}
	return nil
}

// capabilityPK is the partition key of every item of a capability.
func capabilityPK(capabilityID string) string { return capabilityPrefix + capabilityID }

// parseCapabilityPK returns the capability ID of a partition key.
func parseCapabilityPK(pk string) (string, error) {
	id, ok := strings.CutPrefix(pk, capabilityPrefix)
	if !ok || !catalog.ValidID(id) {
		return "", fmt.Errorf("parse partition key %q: not a capability key", pk)
	}
	return id, nil
}

// capabilityGSI1SK orders the CAPABILITIES index by domain, priority and name.
func capabilityGSI1SK(domain string, p catalog.Priority, name string) string {
	return domain + "#" + twoDigits(p.Rank()) + "#" + Slug(name)
}

// domainPK is the GSI1 partition of a business domain's index items.
func domainPK(domain string) string { return domainPrefix + domain }

// domainGSI1SK orders a domain's capabilities by priority and name.
func domainGSI1SK(p catalog.Priority, name string) string {
	return twoDigits(p.Rank()) + "#" + Slug(name)
}

// healthPK is the GSI1 partition of the capabilities in one health status.
func healthPK(status catalog.HealthStatus) string { return healthPrefix + string(status) }

// capabilityListKeys returns the GSI1 keys (partition, sort) of a capability's three list
// entries, as capabilityItems writes them: its METADATA item in CAPABILITIES (by domain,
// priority and name), its DOMAIN# index item (by priority and name) and its HEALTH# index item
// (by score and ID; a capability without a health status is listed as unknown).
func capabilityListKeys(c *catalog.Capability) [3][2]string {
	status := c.Aggregates.HealthStatus
	if status == "" {
		status = catalog.HealthUnknown
	}
	return [3][2]string{
		{capabilitiesPK, capabilityGSI1SK(c.BusinessDomain, c.Priority, c.Name)},
		{domainPK(c.BusinessDomain), domainGSI1SK(c.Priority, c.Name)},
		{healthPK(status), healthGSI1SK(c.Aggregates.HealthScore, c.CapabilityID)},
	}
}

// capabilityListPartition reports whether gsi1pk is the GSI1 partition of a capability list
// (capabilityPage): the CAPABILITIES index, a business domain's or a health status's.
func capabilityListPartition(gsi1pk string) bool {
	return gsi1pk == capabilitiesPK || strings.HasPrefix(gsi1pk, domainPrefix) || strings.HasPrefix(gsi1pk, healthPrefix)
}

// capabilityEntrySK reports whether sk is that of a capability's entry in those lists: its
// METADATA item or one of its two index items.
func capabilityEntrySK(sk string) bool {
	return sk == metadataSK || sk == domainIndexSK || sk == healthIndexSK
}

// healthGSI1SK orders a health partition by score (floored, three digits) then ID.
func healthGSI1SK(score float64, capabilityID string) string {
	s := int(math.Floor(score))
	s = min(max(s, 0), 999)
	return threeDigits(s) + "#" + capabilityID
}

// componentSK places a component in its capability's partition by order.
func componentSK(order int, componentID string) string {
	return componentPrefix + twoDigits(order) + "#" + componentID
}

// parseComponentSK returns the order and component ID of a component sort key.
func parseComponentSK(sk string) (order int, componentID string, err error) {
	rest, ok := strings.CutPrefix(sk, componentPrefix)
	if !ok {
		return 0, "", fmt.Errorf("parse component key %q: missing prefix", sk)
	}
	o, id, ok := strings.Cut(rest, "#")
	if !ok || len(o) != 2 {
		return 0, "", fmt.Errorf("parse component key %q: want COMPONENT#nn#id", sk)
	}
	order, err = strconv.Atoi(o)
	if err != nil || !catalog.ValidID(id) {
		return 0, "", fmt.Errorf("parse component key %q: want COMPONENT#nn#id", sk)
	}
	return order, id, nil
}

// componentTypePK is the GSI1 partition of every component of one type.
func componentTypePK(componentType string) string { return componentPrefix + componentType }

// componentGSI1SK orders a component type's partition by capability then component.
func componentGSI1SK(capabilityID, componentID string) string {
	return capabilityID + "#" + componentID
}

// dependencySK is the key of the edge source -> target.
func dependencySK(sourceID, targetID string) string {
	return dependencyPrefix + sourceID + "#" + targetID
}

// parseDependencySK returns the source and target component IDs of a dependency key.
func parseDependencySK(sk string) (sourceID, targetID string, err error) {
	rest, ok := strings.CutPrefix(sk, dependencyPrefix)
	if !ok {
		return "", "", fmt.Errorf("parse dependency key %q: missing prefix", sk)
	}
	sourceID, targetID, ok = strings.Cut(rest, "#")
	if !ok || !catalog.ValidID(sourceID) || !catalog.ValidID(targetID) {
		return "", "", fmt.Errorf("parse dependency key %q: want DEPENDENCY#source#target", sk)
	}
	return sourceID, targetID, nil
}

// dependenciesPK is the GSI1 partition of a capability's dependencies.
func dependenciesPK(capabilityID string) string {
	return capabilityPrefix + capabilityID + dependenciesSuffix
}

// dependencyGSI1SK orders a capability's dependencies by criticality.
func dependencyGSI1SK(c catalog.Criticality, sourceID, targetID string) string {
	return twoDigits(c.Rank()) + "#" + sourceID + "#" + targetID
}

// jobSK places a job in its partition by start time.
func jobSK(start time.Time, jobID string) string { return jobPrefix + keyTime(start) + "#" + jobID }

// parseJobSK returns the start time and ID of a job key.
func parseJobSK(sk string) (start time.Time, jobID string, err error) {
	rest, ok := strings.CutPrefix(sk, jobPrefix)
	if !ok || len(rest) < len(catalog.TimeLayout)+2 || rest[len(catalog.TimeLayout)] != '#' {
		return time.Time{}, "", fmt.Errorf("parse job key %q: want JOB#time#id", sk)
	}
	start, err = time.Parse(catalog.TimeLayout, rest[:len(catalog.TimeLayout)])
	jobID = rest[len(catalog.TimeLayout)+1:]
	if err != nil || !catalog.ValidID(jobID) {
		return time.Time{}, "", fmt.Errorf("parse job key %q: want JOB#time#id", sk)
	}
	return start, jobID, nil
}

// jobPK is the GSI1 partition that finds a job by ID.
func jobPK(jobID string) string { return jobPrefix + jobID }

// metricSK places a metric sample by component, type and time.
func metricSK(componentID string, t catalog.MetricType, at time.Time) string {
	return metricPrefix + componentID + "#" + string(t) + "#" + keyTime(at)
}

// metricComponentPrefix is the sort-key prefix of one component's metrics.
func metricComponentPrefix(componentID string) string { return metricPrefix + componentID + "#" }

// metricTypePrefix is the sort-key prefix of one component's metrics of one type.
func metricTypePrefix(componentID string, t catalog.MetricType) string {
	return metricPrefix + componentID + "#" + string(t) + "#"
}

// parseMetricSK returns the parts of a metric key.
func parseMetricSK(sk string) (componentID string, t catalog.MetricType, at time.Time, err error) {
	rest, ok := strings.CutPrefix(sk, metricPrefix)
	parts := strings.Split(rest, "#")
	if !ok || len(parts) != 3 || !catalog.ValidID(parts[0]) || !catalog.MetricType(parts[1]).Valid() {
		return "", "", time.Time{}, fmt.Errorf("parse metric key %q: want METRIC#component#type#time", sk)
	}
	at, err = time.Parse(catalog.TimeLayout, parts[2])
	if err != nil {
		return "", "", time.Time{}, fmt.Errorf("parse metric key %q: bad time", sk)
	}
	return parts[0], catalog.MetricType(parts[1]), at, nil
}

// Rollup kinds: the hour and day items of a component's metric rollups (rollup.go).
const (
	rollupHour = "H"
	rollupDay  = "D"
)

// rollupSK places a rollup item by component, type, kind (rollupHour or rollupDay) and the
// bucket's start: ROLLUP#{component}#{type}#H#{hourStart} or ...#D#{dayStart}. ROLLUP# sorts
// between RESULT and RULE#, outside every segment a range read asks for (COMPONENT#,
// DEPENDENCY#, JOB#, METRIC#, RULE#, CHANGE#, NOTIFY#, INDEX#, VERSION#): only whole-partition
// reads (check, export, delete) see rollups.
func rollupSK(componentID string, t catalog.MetricType, kind string, start time.Time) string {
	return rollupKindPrefix(componentID, t, kind) + keyTime(start)
}

// rollupKindPrefix is the sort-key prefix of one component's rollups of one type and kind: the
// bucket starts follow in fixed width, so a time range is one BETWEEN range.
func rollupKindPrefix(componentID string, t catalog.MetricType, kind string) string {
	return rollupPrefix + componentID + "#" + string(t) + "#" + kind + "#"
}

// parseRollupSK returns the parts of a rollup key.
func parseRollupSK(sk string) (componentID string, t catalog.MetricType, kind string, start time.Time, err error) {
	rest, ok := strings.CutPrefix(sk, rollupPrefix)
	parts := strings.Split(rest, "#")
	if !ok || len(parts) != 4 || !catalog.ValidID(parts[0]) || !catalog.MetricType(parts[1]).Valid() || (parts[2] != rollupHour && parts[2] != rollupDay) {
		return "", "", "", time.Time{}, fmt.Errorf("parse rollup key %q: want ROLLUP#component#type#H|D#time", sk)
	}
	start, err = time.Parse(catalog.TimeLayout, parts[3])
	if err != nil {
		return "", "", "", time.Time{}, fmt.Errorf("parse rollup key %q: bad time", sk)
	}
	return parts[0], catalog.MetricType(parts[1]), parts[2], start, nil
}

// metricsPK is the GSI1 partition of one component's metrics across types.
func metricsPK(componentID string) string { return metricsPrefix + componentID }

// ruleSK places a rule in its partition by order.
func ruleSK(order int, ruleID string) string { return rulePrefix + threeDigits(order) + "#" + ruleID }

// parseRuleSK returns the order and ID of a rule key.
func parseRuleSK(sk string) (order int, ruleID string, err error) {
	rest, ok := strings.CutPrefix(sk, rulePrefix)
	o, id, cut := strings.Cut(rest, "#")
	if !ok || !cut || len(o) != 3 || !catalog.ValidID(id) {
		return 0, "", fmt.Errorf("parse rule key %q: want RULE#nnn#id", sk)
	}
	order, err = strconv.Atoi(o)
	if err != nil {
		return 0, "", fmt.Errorf("parse rule key %q: want RULE#nnn#id", sk)
	}
	return order, id, nil
}

// rulesPK is the GSI1 partition of a capability's rules.
func rulesPK(capabilityID string) string { return capabilityPrefix + capabilityID + rulesSuffix }

// ruleGSI1SK orders a capability's rules by type and order.
func ruleGSI1SK(t catalog.RuleType, order int, ruleID string) string {
	return string(t) + "#" + threeDigits(order) + "#" + ruleID
}

// tokenPK is the partition of an idempotency token (its only item has SK tokenSK). A token has
// one item across the catalogue, outside every capability's partition, so that it names one
// request whatever capability the request touched.
func tokenPK(token string) string { return tokenPrefix + token }

// leasePK is the partition of a lease: one holder at a time across the fleet (the scheduled
// archive's).
func leasePK(name string) string { return leasePrefix + name }

// tokenPart is the token of one capability's part of a call that spans several capabilities
// (recordMetrics): a client's token cannot hold '#', so no client token equals it.
func tokenPart(token, capabilityID string) string { return token + "#" + capabilityID }

// claimPK is the partition of a component ID's claim (its only item has SK claimSK): a
// component ID names one component across the catalogue, and its claim says whose it is.
func claimPK(componentID string) string { return claimPrefix + componentID }

// capabilityVersionSK is the key of version n of a capability's metadata.
func capabilityVersionSK(n int) string {
	return versionPrefix + "CAPABILITY#v" + fmt.Sprintf("%06d", n)
}

// capabilityVersionPrefix is the sort-key prefix of a capability's versions.
func capabilityVersionPrefix() string { return versionPrefix + "CAPABILITY#v" }

// rangesBesideHistory returns the SK ranges (BETWEEN lo AND hi) of every item of a partition
// but its capability versions and its change records, which sort between them: what a delete
// removes.
func rangesBesideHistory() [][2]string {
	h := versionPrefix + "CAPABILITY"
	c := strings.TrimSuffix(changePrefix, "#")
	// Every sort key begins with an upper-case letter, after "0" and before "~".
	return [][2]string{{"0", c + "#"}, {c + rangeEnd, h + "#"}, {h + rangeEnd, "~"}}
}

// changeSeqDigits is the width of a WriteSeq in a change key: a WriteSeq is below 2^53.
const changeSeqDigits = 16

// changeSK is the key of the n-th change (from 0) that one write made to a capability: the
// incarnation's creation time (so that a capability created again after a delete sorts its
// changes after the earlier one's, whose WriteSeq started elsewhere), the partition's WriteSeq
// after the write (one per write, increasing, within an incarnation) and n (recordMetrics
// records one change per component in one write).
func changeSK(incarnation time.Time, seq, n int) string {
	return changePrefix + keyTime(incarnation) + "#" + fmt.Sprintf("%0*d", changeSeqDigits, seq) + "#" + threeDigits(n)
}

// changeRange returns the SK range of a partition's change records.
func changeRange() (lo, hi string) { return changePrefix, changePrefix + "~" }

// isChangeSK reports whether sk is the key of a change record.
func isChangeSK(sk string) bool { return strings.HasPrefix(sk, changePrefix) }

// parseChangeSK returns the incarnation, WriteSeq and number of a change key.
func parseChangeSK(sk string) (incarnation time.Time, seq, n int, err error) {
	rest, ok := strings.CutPrefix(sk, changePrefix)
	parts := strings.Split(rest, "#")
	if ok && len(parts) == 3 && len(parts[1]) == changeSeqDigits && len(parts[2]) == 3 {
		incarnation, err = time.Parse(catalog.TimeLayout, parts[0])
		if err == nil {
			seq, err = strconv.Atoi(parts[1])
		}
		if err == nil {
			n, err = strconv.Atoi(parts[2])
		}
		if err == nil && seq > 0 && n >= 0 {
			return incarnation, seq, n, nil
		}
	}
	return time.Time{}, 0, 0, fmt.Errorf("parse change key %q: want CHANGE#time#seq#nnn", sk)
}

// changeBucketLayout is the time bucket of the catalogue-wide change index: one GSI1
// partition per UTC day.
const changeBucketLayout = "2006-01-02"

// ChangeBucket is how much time one GSI1 partition of the change feed holds.
const ChangeBucket = 24 * time.Hour

// changesPK is the GSI1 partition of the changes made in t's bucket (UTC day).
func changesPK(t time.Time) string { return changesPrefix + t.UTC().Format(changeBucketLayout) }

// bucketStart returns the start of t's bucket.
func bucketStart(t time.Time) time.Time { return t.UTC().Truncate(ChangeBucket) }

// changeGSI1SK orders a bucket's changes by time, then capability, then the change's own key.
func changeGSI1SK(at time.Time, capabilityID, sk string) string {
	return keyTime(at) + "#" + capabilityID + "#" + strings.TrimPrefix(sk, changePrefix)
}

// changeGSI1From is the lowest GSI1SK of the changes made at or after t.
func changeGSI1From(t time.Time) string { return keyTime(t) }

// isCapabilityVersion reports whether sk is the key of a capability version.
func isCapabilityVersion(sk string) bool {
	_, ok := cutPrefix(sk, capabilityVersionPrefix())
	return ok
}

// ruleVersionSK is the key of version n of a rule.
func ruleVersionSK(ruleID string, n int) string {
	return versionPrefix + "RULE#" + ruleID + "#v" + fmt.Sprintf("%06d", n)
}

// ruleVersionPrefix is the sort-key prefix of a rule's versions.
func ruleVersionPrefix(ruleID string) string { return versionPrefix + "RULE#" + ruleID + "#v" }

// parseVersionSK returns the version number of a version key.
func parseVersionSK(sk string) (int, error) {
	i := strings.LastIndex(sk, "#v")
	if !strings.HasPrefix(sk, versionPrefix) || i < 0 || len(sk)-i-2 != 6 {
		return 0, fmt.Errorf("parse version key %q: want VERSION#...#vNNNNNN", sk)
	}
	n, err := strconv.Atoi(sk[i+2:])
	if err != nil {
		return 0, fmt.Errorf("parse version key %q: want VERSION#...#vNNNNNN", sk)
	}
	return n, nil
}

// Search cards (dynamo/search.go): small copies of a capability's filterable fields, one per
// GSI1 range that can serve a filter or an order. Their sort keys are INDEX#C#{kind}, their GSI1
// partition keys CARD#{range}, and every range but SCORE and UPDATED is in name order.
const (
	cardSKPrefix = indexPrefix + "C#"
	cardPKPrefix = "CARD#"

	cardName     = "NAME"
	cardStatus   = "STATUS"
	cardPriority = "PRIORITY"
	cardRank     = "RANK"
	cardDomain   = "DOMAIN"
	cardID       = "ID"
	cardTag      = "TAG"
	cardOwner    = "OWNER"
	cardTerm     = "TERM"
	cardScore    = "SCORE"
	cardUpdated  = "UPDATED"

	entityCard = "CapabilityCard"

	// maxCardPart bounds a folded tag or owner in a card key: a longer one keeps its head and
	// ends with a hash of the whole, as Slug does.
	maxCardPart = 600
)

// cardSK is the sort key of a capability's card of kind (NAME, STATUS...), with value for the
// kinds a capability holds several of (TAG, OWNER, TERM).
func cardSK(kind, value string) string {
	if value == "" {
		return cardSKPrefix + kind
	}
	return cardSKPrefix + kind + "#" + value
}

// cardPK is the GSI1 partition of the cards of one range: CARD#NAME, CARD#STATUS#active,
// CARD#TAG#pci...
func cardPK(kind, value string) string {
	if value == "" {
		return cardPKPrefix + kind
	}
	return cardPKPrefix + kind + "#" + value
}

// cardPart is a folded tag or owner as it appears in a card key: at most maxCardPart bytes.
func cardPart(folded string) string {
	if len(folded) <= maxCardPart {
		return folded
	}
	sum := sha256.Sum256([]byte(folded))
	head := folded[:maxCardPart-1-slugHashDigits]
	for len(head) > 0 && !utf8.RuneStart(folded[len(head)]) {
		head = head[:len(head)-1]
	}
	return head + "~" + hex.EncodeToString(sum[:])[:slugHashDigits]
}

// nameKey orders cards by folded name, then capability ID: the folded name's spaces become '-',
// which sorts below every letter and digit as the space does, and '#' (below '-') ends it, so
// "ab" sorts before "ab c" as its folded name does.
func nameKey(folded, capabilityID string) string {
	return strings.ReplaceAll(folded, " ", "-") + "#" + capabilityID
}

// namePrefixRange is the GSI1SK range of the NAME cards whose folded name starts with folded.
func namePrefixRange(folded string) (lo, hi string) {
	p := strings.ReplaceAll(folded, " ", "-")
	return p, p + "~"
}

// maxNameSegments is how many segments nameSegments splits the name keys into at most.
const maxNameSegments = 8

// nameSegmentBounds split name keys (folded names, which begin with a letter or a digit) by
// their first letter into maxNameSegments segments of roughly even size for names in Latin
// letters: the segment i ends before its letter i.
const nameSegmentBounds = "ceimpsu"

// nameSegments returns n (1 to maxNameSegments) consecutive GSI1SK segments [lo, hi) that
// cover every name key together, "" meaning an open end.
func nameSegments(n int) [][2]string {
	n = min(max(n, 1), maxNameSegments)
	out := make([][2]string, 0, n)
	lo := ""
	for i := 1; i < n; i++ {
		hi := nameSegmentBounds[i*maxNameSegments/n-1 : i*maxNameSegments/n]
		out = append(out, [2]string{lo, hi})
		lo = hi
	}
	return append(out, [2]string{lo, ""})
}

// rankKey orders the RANK range by priority (critical first), then name.
func rankKey(p catalog.Priority, folded, capabilityID string) string {
	return twoDigits(p.Rank()) + "#" + nameKey(folded, capabilityID)
}

// rankRange is the GSI1SK range of one priority's RANK cards.
func rankRange(p catalog.Priority) (lo, hi string) {
	return twoDigits(p.Rank()) + "#", twoDigits(p.Rank()) + rangeEnd
}

// scoreKey orders the SCORE range: reported scores (S#, fixed width) by score then name; the
// capabilities with no reported score (N#) by name, read after the scored ones either way.
func scoreKey(score *float64, folded, capabilityID string) string {
	if score == nil {
		return "N#" + nameKey(folded, capabilityID)
	}
	v := min(max(*score, 0), 99999)
	return "S#" + fmt.Sprintf("%010.4f", v) + "#" + nameKey(folded, capabilityID)
}

// scoreRanges are the GSI1SK ranges of the scored and the unscored SCORE cards.
func scoreRanges() (scored, unscored [2]string) {
	return [2]string{"S#", "S" + rangeEnd}, [2]string{"N#", "N" + rangeEnd}
}

// updatedKey orders the UPDATED range by update time, then name.
func updatedKey(at time.Time, folded, capabilityID string) string {
	return keyTime(at) + "#" + nameKey(folded, capabilityID)
}

// counterPK is the partition key of counter shard n (0 <= n < counterShards): each shard is an
// item in a partition of its own (docs/data-model.md).
func counterPK(n int) string { return counterPrefix + twoDigits(n) }

// Attribute names of the counters a counter shard holds: a fixed name for the catalogue's
// totals, a prefix and a value for the counters per domain, status, owner... (counterKey).
const (
	counterCapabilities = "cap"  // capabilities
	counterComponents   = "comp" // components
	counterHealthSum    = "hsum" // sum of the reported health scores, in thousandths of a point
	counterHealthN      = "hn"   // capabilities that report a health score
	counterVersion      = "v"    // updates the shard took (not a count: check -repair's witness)

	counterDomain          = "d#"  // capabilities per business domain
	counterStatus          = "s#"  // capabilities per lifecycle stage
	counterPriority        = "p#"  // capabilities per priority
	counterHealth          = "h#"  // capabilities per health status
	counterComponentType   = "ct#" // components per type
	counterComponentHealth = "ch#" // components per health status
	counterOwnerCaps       = "oc#" // capabilities per owner (folded owner or component team)
	counterOwnerComps      = "ok#" // components per team (folded)
	counterActiveJobs      = "aj#" // PENDING or RUNNING jobs per job type

	// maxCounterNameBytes bounds the value part of a counter's attribute name (an owner or a
	// team, folded, may be up to catalog.MaxTextLength characters): a longer one is cut and
	// ends with a hash of the whole (as Slug does), so a shard's size stays bounded per key.
	maxCounterNameBytes = 200
)

// counterKey is the attribute name of the counter kind (a counter* prefix) of value.
func counterKey(kind, value string) string { return kind + counterName(value) }

// counterName is value as a counter attribute name holds it: unchanged up to
// maxCounterNameBytes bytes, else cut on a character boundary and ended with a hash.
func counterName(value string) string {
	if len(value) <= maxCounterNameBytes {
		return value
	}
	sum := sha256.Sum256([]byte(value))
	cut := maxCounterNameBytes - 1 - slugHashDigits
	for cut > 0 && !utf8.RuneStart(value[cut]) {
		cut--
	}
	return value[:cut] + "~" + hex.EncodeToString(sum[:])[:slugHashDigits]
}

// parseCounterKey splits a counter attribute name into its kind and value; ok is false for an
// attribute that is not a counter (the key, the entity type, the version).
func parseCounterKey(name string) (kind, value string, ok bool) {
	switch name {
	case counterCapabilities, counterComponents, counterHealthSum, counterHealthN:
		return name, "", true
	}
	for _, k := range []string{counterDomain, counterStatus, counterPriority, counterHealth, counterComponentType,
		counterComponentHealth, counterOwnerCaps, counterOwnerComps, counterActiveJobs} {
		if v, found := strings.CutPrefix(name, k); found {
			return k, v, true
		}
	}
	return "", "", false
}

// The component index and the active-job index (componentindex.go): items in a capability's
// partition under INDEX#, each with a GSI1 entry ordered by capability then component (or by
// start time for active jobs).
const (
	componentCardPrefix = "INDEX#COMP#"
	activeJobPrefix     = "INDEX#ACTIVEJOB#"
	activeJobsPK        = "ACTIVEJOBS"
	componentTeamPrefix = "CTEAM#"
	componentStatusPfx  = "CSTATUS#"
	componentHealthPfx  = "CHEALTH#"
	componentTermPrefix = "CTERM#"

	entityComponentCard = "ComponentIndex"
	entityActiveJob     = "ActiveJobIndex"

	compCardStatus = "STATUS"
	compCardHealth = "HEALTH"
	compCardTeam   = "TEAM"
	compCardTerm   = "T#"
)

// componentCardSK is the key of one index card of a component: kind is compCardStatus,
// compCardHealth, compCardTeam or compCardTerm followed by a word prefix. (INDEX#COMP#, not
// INDEX#C#: that prefix is the capability search cards'.)
func componentCardSK(componentID, kind string) string {
	return componentCardPrefix + componentID + "#" + kind
}

// isComponentCardSK reports whether sk is the key of a component's index card.
func isComponentCardSK(sk string) bool { return strings.HasPrefix(sk, componentCardPrefix) }

// componentTeamPK is the GSI1 partition of the components of one team (folded, catalog.Fold).
func componentTeamPK(foldedTeam string) string { return componentTeamPrefix + foldedTeam }

// componentStatusPK is the GSI1 partition of the components in one status.
func componentStatusPK(s catalog.ComponentStatus) string { return componentStatusPfx + string(s) }

// componentHealthPK is the GSI1 partition of the components in one health status.
func componentHealthPK(h catalog.HealthStatus) string { return componentHealthPfx + string(h) }

// componentTermPK is the GSI1 partition of the components with a word that starts with prefix.
func componentTermPK(prefix string) string { return componentTermPrefix + prefix }

// activeJobSK is the key of a PENDING or RUNNING job's item in the active-job index.
func activeJobSK(jobID string) string { return activeJobPrefix + jobID }

// isActiveJobSK reports whether sk is the key of an active-job index item.
func isActiveJobSK(sk string) bool { return strings.HasPrefix(sk, activeJobPrefix) }

// activeJobGSI1SK orders the ACTIVEJOBS partition by start time, then capability and job.
func activeJobGSI1SK(start time.Time, capabilityID, jobID string) string {
	return keyTime(start) + "#" + capabilityID + "#" + jobID
}

// notifySK places a notification (an outbox delivery) in its capability's partition by the
// time it was queued, then its delivery ID.
func notifySK(at time.Time, deliveryID string) string {
	return notifyPrefix + keyTime(at) + "#" + deliveryID
}

// notifyDeliveryID returns the delivery ID of a notification key (notifySK).
func notifyDeliveryID(sk string) (string, bool) {
	rest, ok := strings.CutPrefix(sk, notifyPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '#')
	if i < 0 || !catalog.ValidID(rest[i+1:]) {
		return "", false
	}
	return rest[i+1:], true
}

// notifyRange returns the SK range of a partition's notifications.
func notifyRange() (lo, hi string) { return notifyPrefix, notifyPrefix + "~" }

// outboxGSI1SK orders the pending deliveries (GSI1 partition outboxPK) by when they are due,
// then capability, then the notification's own key. Only a PENDING notification has it: the
// index is sparse, so the deliverer reads the due ones with one Query.
func outboxGSI1SK(due time.Time, capabilityID, sk string) string {
	return keyTime(due) + "#" + capabilityID + "#" + strings.TrimPrefix(sk, notifyPrefix)
}

// detachedNotifyPK is the key of a pending notification whose capability was deleted before it
// was delivered: DeleteCapability moves it out of the partition (SK detachedSK), with its
// GSI1 entry unchanged, so that the deliverer still delivers it; it is deleted once settled.
func detachedNotifyPK(deliveryID string) string { return detachedNotifyPrefix + deliveryID }

// isDetachedNotifyPK reports whether pk is a detached notification's.
func isDetachedNotifyPK(pk string) bool { return strings.HasPrefix(pk, detachedNotifyPrefix) }

// outboxDue is the highest GSI1SK of the deliveries due at t.
func outboxDue(t time.Time) string { return keyTime(t) + "#~" }
