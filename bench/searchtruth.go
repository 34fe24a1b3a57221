package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/capcat/catalogue/catalog"
)

// The brute-force answers of the search section: computed in Go from the bundles the bench
// loaded (after BulkLoad recounted their aggregates), by the contract of schema.graphqls, never
// from the table. The server's first page of every shape must equal them.

// capFilter is a CapabilityFilter.
type capFilter struct {
	Search         string
	Domains        []string
	Statuses       []catalog.CapabilityStatus
	Priorities     []catalog.Priority
	HealthStatuses []catalog.HealthStatus
	Owner          string
	Tags           []string
}

// capOrder is a CapabilityOrder; Field "" is the default order.
type capOrder struct {
	Field string // NAME, PRIORITY, HEALTH_SCORE
	Desc  bool
}

// vars returns the filter as GraphQL variables (nil when empty).
func (f capFilter) vars() map[string]any {
	m := map[string]any{}
	if f.Search != "" {
		m["search"] = f.Search
	}
	up := func(s string) string { return strings.ToUpper(s) }
	if len(f.Domains) > 0 {
		m["domains"] = f.Domains
	}
	if len(f.Statuses) > 0 {
		m["statuses"] = mapSlice(f.Statuses, func(s catalog.CapabilityStatus) string { return up(string(s)) })
	}
	if len(f.Priorities) > 0 {
		m["priorities"] = mapSlice(f.Priorities, func(s catalog.Priority) string { return up(string(s)) })
	}
	if len(f.HealthStatuses) > 0 {
		m["healthStatuses"] = mapSlice(f.HealthStatuses, func(s catalog.HealthStatus) string { return up(string(s)) })
	}
	if f.Owner != "" {
		m["owner"] = f.Owner
	}
	if len(f.Tags) > 0 {
		m["tags"] = f.Tags
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func (o capOrder) vars() map[string]any {
	if o.Field == "" {
		return nil
	}
	d := "ASC"
	if o.Desc {
		d = "DESC"
	}
	return map[string]any{"field": o.Field, "direction": d}
}

func mapSlice[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// searchWordsOf are the words a search matches in a capability: of its name, ID, tags and owner.
func searchWordsOf(c *catalog.Capability) []string {
	words := catalog.Words(c.Name)
	words = append(words, catalog.Words(c.CapabilityID)...)
	for _, t := range c.Tags {
		words = append(words, catalog.Words(t)...)
	}
	return append(words, catalog.Words(c.Owner)...)
}

// matchSearch reports whether every word of the search starts a word of the capability.
func matchSearch(c *catalog.Capability, search string) bool {
	words := searchWordsOf(c)
	for _, q := range catalog.Words(search) {
		if !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, q) }) {
			return false
		}
	}
	return true
}

// relevance is the search group of a match: 0 its ID is the search, 1 its name starts with it, 2
// the others.
func relevance(c *catalog.Capability, search string) int {
	q := catalog.Fold(search)
	switch {
	case catalog.Fold(c.CapabilityID) == q:
		return 0
	case strings.HasPrefix(catalog.Fold(c.Name), q):
		return 1
	}
	return 2
}

// owns reports whether owner (folded) is the capability's owner or one of its components' team.
func owns(b *catalog.Bundle, owner string) bool {
	o := catalog.Fold(owner)
	if catalog.Fold(b.Capability.Owner) == o {
		return true
	}
	for _, c := range b.Components {
		if c.Ownership != nil && catalog.Fold(c.Ownership.Team) == o {
			return true
		}
	}
	return false
}

// matches reports whether the bundle's capability passes every filter of f.
func (f capFilter) matches(b *catalog.Bundle) bool {
	c := b.Capability
	switch {
	case f.Search != "" && !matchSearch(c, f.Search),
		len(f.Domains) > 0 && !slices.Contains(f.Domains, c.BusinessDomain),
		len(f.Statuses) > 0 && !slices.Contains(f.Statuses, c.Status),
		len(f.Priorities) > 0 && !slices.Contains(f.Priorities, c.Priority),
		len(f.HealthStatuses) > 0 && !slices.Contains(f.HealthStatuses, healthOf(c)),
		f.Owner != "" && !owns(b, f.Owner):
		return false
	}
	for _, t := range f.Tags {
		if !slices.ContainsFunc(c.Tags, func(x string) bool { return strings.EqualFold(x, t) }) {
			return false
		}
	}
	return true
}

func healthOf(c *catalog.Capability) catalog.HealthStatus {
	if c.Aggregates.HealthStatus == "" {
		return catalog.HealthUnknown
	}
	return c.Aggregates.HealthStatus
}

// byName orders capabilities by folded name, then name, then ID.
func byName(a, b *catalog.Capability) int {
	if x := strings.Compare(catalog.Fold(a.Name), catalog.Fold(b.Name)); x != 0 {
		return x
	}
	if x := strings.Compare(a.Name, b.Name); x != 0 {
		return x
	}
	return strings.Compare(a.CapabilityID, b.CapabilityID)
}

// compare orders two matches as the server must: o's field (ties by name, then ID), or, by
// default, relevance with a search and name order otherwise. DESC reverses the whole order,
// ties included ("largest first" on field, name, ID: the server reads its index backwards),
// except that capabilities with no health score come last in name order either way. The
// schema's "ties are broken by name, then capabilityId" does not say which way ties go on
// DESC; this is the implementation's reading (dynamo/search_test.go's brute force too).
func (o capOrder) compare(f capFilter, a, b *catalog.Capability) int {
	sign := 1
	if o.Desc {
		sign = -1
	}
	switch o.Field {
	case "":
		if f.Search != "" {
			if x := relevance(a, f.Search) - relevance(b, f.Search); x != 0 {
				return x
			}
		}
	case "NAME":
		return sign * byName(a, b)
	case "PRIORITY":
		if x := slices.Index(priorities, a.Priority) - slices.Index(priorities, b.Priority); x != 0 {
			return sign * x
		}
	case "HEALTH_SCORE":
		sa, sb := a.Aggregates.ReportedHealthScore(), b.Aggregates.ReportedHealthScore()
		switch {
		case sa == nil && sb != nil:
			return 1 // no score last, either way
		case sa != nil && sb == nil:
			return -1
		case sa == nil && sb == nil:
			return byName(a, b)
		case *sa != *sb:
			if *sa < *sb {
				return -sign
			}
			return sign
		}
	default:
		panic("unknown order field " + o.Field)
	}
	return sign * byName(a, b)
}

// capsAnswer is one page of Query.capabilities.
type capsAnswer struct {
	IDs     []string
	HasNext bool
	Total   int
}

func (a capsAnswer) String() string {
	return fmt.Sprintf("%d nodes %v hasNextPage=%v totalCount=%d", len(a.IDs), a.IDs, a.HasNext, a.Total)
}

// truthCapabilities answers capabilities(filter: f, orderBy: o) from offset, n a page.
func truthCapabilities(bundles []*catalog.Bundle, f capFilter, o capOrder, offset, n int) capsAnswer {
	var m []*catalog.Capability
	for _, b := range bundles {
		if f.matches(b) {
			m = append(m, b.Capability)
		}
	}
	slices.SortStableFunc(m, func(a, b *catalog.Capability) int { return o.compare(f, a, b) })
	a := capsAnswer{Total: len(m), IDs: []string{}}
	for i := offset; i < len(m) && i < offset+n; i++ {
		a.IDs = append(a.IDs, m[i].CapabilityID)
	}
	a.HasNext = offset+n < len(m)
	return a
}

// truthActiveJobs returns the IDs of the first n jobs PENDING or RUNNING, oldest start first,
// whether more exist and how many there are.
func truthActiveJobs(bundles []*catalog.Bundle, n int) capsAnswer {
	var jobs []*catalog.Job
	for _, b := range bundles {
		for _, j := range b.Jobs {
			if j.Status == catalog.JobPending || j.Status == catalog.JobRunning {
				jobs = append(jobs, j)
			}
		}
	}
	sort.SliceStable(jobs, func(i, k int) bool {
		if !jobs[i].StartTime.Equal(jobs[k].StartTime.Time) {
			return jobs[i].StartTime.Before(jobs[k].StartTime.Time)
		}
		return jobs[i].JobID < jobs[k].JobID
	})
	a := capsAnswer{Total: len(jobs), IDs: []string{}, HasNext: len(jobs) > n}
	for _, j := range jobs[:min(n, len(jobs))] {
		a.IDs = append(a.IDs, j.JobID)
	}
	return a
}

// ownerAnswer is Query.owner(name) with the first page of its capabilities.
type ownerAnswer struct {
	Name                 string
	CapabilityCount      int
	ComponentCount       int
	Capabilities         []string
	CapabilitiesNextPage bool
}

func (a ownerAnswer) String() string {
	return fmt.Sprintf("name=%q capabilityCount=%d componentCount=%d capabilities=%v hasNextPage=%v",
		a.Name, a.CapabilityCount, a.ComponentCount, a.Capabilities, a.CapabilitiesNextPage)
}

func truthOwner(bundles []*catalog.Bundle, name string, n int) ownerAnswer {
	a := ownerAnswer{Name: catalog.Fold(name), Capabilities: []string{}}
	var caps []*catalog.Capability
	for _, b := range bundles {
		if owns(b, name) {
			caps = append(caps, b.Capability)
		}
		for _, c := range b.Components {
			if c.Ownership != nil && catalog.Fold(c.Ownership.Team) == a.Name {
				a.ComponentCount++
			}
		}
	}
	slices.SortStableFunc(caps, byName)
	a.CapabilityCount = len(caps)
	for _, c := range caps[:min(n, len(caps))] {
		a.Capabilities = append(a.Capabilities, c.CapabilityID)
	}
	a.CapabilitiesNextPage = len(caps) > n
	return a
}

// summaryAnswer is the CatalogueSummary, its lists as "key=count" in the schema's order.
type summaryAnswer struct {
	CapabilityCount, ComponentCount, ActiveJobs int
	ByDomain, ByStatus, ByPriority, ByHealth    []string
	ComponentsByType, ComponentsByHealth        []string
	ActiveJobsByType                            []string
	MeanHealthScore                             *float64
}

func (a summaryAnswer) String() string {
	mean := "null"
	if a.MeanHealthScore != nil {
		mean = fmt.Sprintf("%.4f", *a.MeanHealthScore)
	}
	return fmt.Sprintf("capabilities=%d components=%d activeJobs=%d byDomain=%v byStatus=%v byPriority=%v byHealth=%v componentsByType=%v componentsByHealth=%v activeJobsByType=%v meanHealthScore=%s",
		a.CapabilityCount, a.ComponentCount, a.ActiveJobs, a.ByDomain, a.ByStatus, a.ByPriority, a.ByHealth,
		a.ComponentsByType, a.ComponentsByHealth, a.ActiveJobsByType, mean)
}

// equal compares two summaries, the mean score to 1e-6.
func (a summaryAnswer) equal(b summaryAnswer) bool {
	x, y := a, b
	x.MeanHealthScore, y.MeanHealthScore = nil, nil
	if x.String() != y.String() {
		return false
	}
	if (a.MeanHealthScore == nil) != (b.MeanHealthScore == nil) {
		return false
	}
	return a.MeanHealthScore == nil || abs(*a.MeanHealthScore-*b.MeanHealthScore) < 1e-6
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func kv(k string, n int) string { return fmt.Sprintf("%s=%d", k, n) }

func truthSummary(bundles []*catalog.Bundle) summaryAnswer {
	var a summaryAnswer
	domains, types := map[string]int{}, map[string]int{}
	status, prio, health, chealth, jobs := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	sum, reported := 0.0, 0
	for _, b := range bundles {
		c := b.Capability
		a.CapabilityCount++
		domains[c.BusinessDomain]++
		status[string(c.Status)]++
		prio[string(c.Priority)]++
		health[string(healthOf(c))]++
		if s := c.Aggregates.ReportedHealthScore(); s != nil {
			sum += *s
			reported++
		}
		for _, x := range b.Components {
			a.ComponentCount++
			types[x.ComponentType]++
			chealth[string(catalog.ComponentHealthStatus(x))]++
		}
		for _, j := range b.Jobs {
			if j.Status == catalog.JobPending || j.Status == catalog.JobRunning {
				a.ActiveJobs++
				jobs[string(j.JobType)]++
			}
		}
	}
	for _, d := range sortedKeys(domains) {
		a.ByDomain = append(a.ByDomain, kv(d, domains[d]))
	}
	for _, t := range sortedKeys(types) {
		a.ComponentsByType = append(a.ComponentsByType, kv(t, types[t]))
	}
	for _, s := range catalog.CapabilityStatuses {
		a.ByStatus = append(a.ByStatus, kv(strings.ToUpper(string(s)), status[string(s)]))
	}
	for _, p := range priorities {
		a.ByPriority = append(a.ByPriority, kv(strings.ToUpper(string(p)), prio[string(p)]))
	}
	for _, h := range catalog.HealthStatuses {
		a.ByHealth = append(a.ByHealth, kv(strings.ToUpper(string(h)), health[string(h)]))
		a.ComponentsByHealth = append(a.ComponentsByHealth, kv(strings.ToUpper(string(h)), chealth[string(h)]))
	}
	for _, t := range catalog.JobTypes {
		a.ActiveJobsByType = append(a.ActiveJobsByType, kv(strings.ToUpper(string(t)), jobs[string(t)]))
	}
	if reported > 0 {
		m := sum / float64(reported)
		a.MeanHealthScore = &m
	}
	return a
}
