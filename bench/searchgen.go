package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// The catalogue of the search section (search.go): N capabilities with known, varied attributes,
// one or two components each and a few active jobs, generated from a fixed seed so that every
// run (and the brute-force answers of searchtruth.go) sees the same data.

// searchDomains are the business domains of the search catalogue (20).
var searchDomains = []string{
	"payments", "risk", "customer", "operations", "analytics", "security", "platform", "finance",
	"lending", "insurance", "logistics", "marketing", "sales", "support", "hr", "legal",
	"procurement", "treasury", "identity", "data",
}

// searchWords are the words capability names are made of: the first word of a name is drawn
// with a skew, so that many names share prefixes ("alert man" finds Alert Management, Alert
// Manager, Alert Mandate, ...). The last ones carry accents.
var searchWords = []string{
	"Alert", "Management", "Manager", "Mandate", "Manifest", "Payment", "Payments", "Gateway", "Ledger", "Risk",
	"Fraud", "Detection", "Customer", "Profile", "Identity", "Access", "Audit", "Billing", "Invoice", "Catalog",
	"Search", "Index", "Order", "Orders", "Fulfilment", "Shipping", "Tracking", "Inventory", "Pricing", "Promotion",
	"Loyalty", "Rewards", "Notification", "Messaging", "Email", "Routing", "Scheduling", "Reporting", "Analytics", "Insight",
	"Forecast", "Planning", "Budget", "Treasury", "Compliance", "Policy", "Consent", "Privacy", "Security", "Threat",
	"Incident", "Response", "Monitoring", "Metrics", "Logging", "Tracing", "Deployment", "Release", "Config", "Secrets",
	"Vault", "Storage", "Archive", "Backup", "Recovery", "Document", "Content", "Media", "Translation", "Currency",
	"Exchange", "Settlement", "Clearing", "Reconciliation", "Onboarding", "Verification", "Scoring", "Credit", "Lending", "Loan",
	"Mortgage", "Claims", "Underwriting", "Quote", "Contract", "Partner", "Vendor", "Supplier", "Asset", "Fleet",
	"Maintenance", "Workforce", "Payroll", "Benefits", "Recruiting", "Training", "Feedback", "Support", "Ticketing", "Knowledge",
	"Équipe", "Réseau", "Données", "Gestión", "Überwachung", "Façade", "Sécurité", "Tarificación",
}

// accented is where the accented words of searchWords start.
const accented = 100

var (
	ownerAdjectives = []string{"blue", "red", "green", "amber", "silver", "golden", "swift", "quiet", "bold", "bright",
		"north", "south", "east", "west", "iron", "stone", "cloud", "river", "solar", "lunar"}
	ownerAnimals = []string{"falcon", "lynx", "otter", "heron", "badger", "fox", "wolf", "raven", "orca", "bison",
		"marten", "ibex", "crane", "puma", "gecko"}
	tagBases = []string{"pci", "gdpr", "sox", "hipaa", "edge", "core", "batch", "stream", "public", "internal",
		"legacy", "cloud", "onprem", "k8s", "lambda", "mobile", "web", "api", "ml", "etl",
		"realtime", "critical", "experimental", "beta", "ga", "regulated", "tier1", "tier2", "tier3", "shared",
		"payments", "risk", "ops", "data", "security", "finance", "partner", "customer", "internal-only", "audit",
		"cost-center", "migration", "deprecated-soon", "greenfield", "brownfield", "hot-path", "cold-path", "archive", "search", "alerting"}
	tagSuffixes = []string{"", "-eu", "-us", "-apac"}
)

// searchStatuses weights the lifecycle stages: half active.
var searchStatuses = []catalog.CapabilityStatus{
	catalog.CapabilityActive, catalog.CapabilityActive, catalog.CapabilityActive, catalog.CapabilityActive, catalog.CapabilityActive,
	catalog.CapabilityDevelopment, catalog.CapabilityDevelopment, catalog.CapabilityPlanning,
	catalog.CapabilityDeprecated, catalog.CapabilityRetiring,
}

// searchTags is the tag vocabulary (200).
func searchTags() []string {
	var out []string
	for _, s := range tagSuffixes {
		for _, b := range tagBases {
			out = append(out, b+s)
		}
	}
	return out
}

// searchOwners are the owners (300), as written in the data: some capitalised, some with
// spaces, one in five with an accent, so that owner matching folds them.
func searchOwners() []string {
	var out []string
	for i, a := range ownerAdjectives {
		for j, n := range ownerAnimals {
			name := a + "-" + n
			switch (i + j) % 5 {
			case 1:
				name = strings.ToUpper(a[:1]) + a[1:] + " " + n
			case 3:
				name = "équipe-" + name
			}
			out = append(out, name)
		}
	}
	return out
}

func searchCapabilityID(i int) string { return fmt.Sprintf("CAP-%05d", i) }

// searchCatalogue generates n capabilities from a fixed seed, relative to now.
func searchCatalogue(n int, now time.Time) []*catalog.Bundle {
	now = now.UTC().Truncate(time.Second)
	r := rand.New(rand.NewPCG(19, uint64(n)))
	tags, owners := searchTags(), searchOwners()
	// skewed returns an index below k, small ones far more often (a power law).
	skewed := func(k int, p float64) int { return min(int(float64(k)*math.Pow(r.Float64(), p)), k-1) }
	seen := map[string]bool{}
	out := make([]*catalog.Bundle, 0, n)
	for i := range n {
		id := searchCapabilityID(i)
		// A name of two or three words, the first skewed; "Alert Management ..." often; one in
		// twelve with an accented word; unique once folded (a number is added to repeats).
		words := []string{searchWords[skewed(accented, 2)], searchWords[r.IntN(accented)]}
		if r.IntN(3) == 0 {
			words = append(words, searchWords[r.IntN(accented)])
		}
		if r.IntN(12) == 0 {
			words[r.IntN(len(words))] = searchWords[accented+r.IntN(len(searchWords)-accented)]
		}
		name := strings.Join(words, " ")
		for k := 2; seen[catalog.Fold(name)]; k++ {
			name = strings.Join(words, " ") + " " + fmt.Sprint(k)
		}
		seen[catalog.Fold(name)] = true

		var capTags []string
		have := map[string]bool{}
		for range r.IntN(6) { // 0-5 tags, a skewed vocabulary
			t := tags[skewed(len(tags), 2.5)]
			if !have[t] {
				have[t] = true
				capTags = append(capTags, t)
			}
		}
		owner := owners[skewed(len(owners), 1.5)]
		c := &catalog.Capability{
			CapabilityID:   id,
			Name:           name,
			Description:    "Synthetic capability of the search benchmark",
			BusinessDomain: searchDomains[skewed(len(searchDomains), 1.3)],
			Status:         searchStatuses[r.IntN(len(searchStatuses))],
			Priority:       priorities[r.IntN(len(priorities))],
			Owner:          owner,
			CreatedBy:      "bench",
			Version:        "1.0.0",
			Tags:           capTags,
			Aggregates:     catalog.Aggregates{TotalIncidents: r.IntN(9)},
		}
		comps := []*catalog.Component{searchComponent(r, i, 0, owner, owners, now)}
		if r.IntN(2) == 0 {
			comps = append(comps, searchComponent(r, i, 1, owner, owners, now))
		}
		// The server keeps at most 44 search index items a capability (dynamo/search.go's
		// maxCards): tags are dropped from the end until it fits.
		for len(c.Tags) > 0 && searchIndexItems(c, comps) > 44 {
			c.Tags = c.Tags[:len(c.Tags)-1]
		}
		b := &catalog.Bundle{Capability: c, Components: comps}
		// A few jobs: about one capability in 60 runs one, one in 90 has one pending, one in 7
		// has a finished one (which activeJobs must leave out).
		start := now.Add(-time.Duration(i+1) * time.Minute)
		switch {
		case i%60 == 7:
			b.Jobs = append(b.Jobs, searchJob(i, id, catalog.JobRunning, start, comps[0]))
		case i%90 == 11:
			b.Jobs = append(b.Jobs, searchJob(i, id, catalog.JobPending, start, comps[0]))
		case i%7 == 3:
			b.Jobs = append(b.Jobs, searchJob(i, id, catalog.JobCompleted, start, comps[0]))
		}
		out = append(out, b)
	}
	return out
}

// searchComponentTypes are the types of the search catalogue's components.
var searchComponentTypes = []string{"api-server", "worker", "database", "ui-dashboard", "gateway", "cache"}

// searchComponent is component k of capability i: its team is the capability's owner two times
// in three, another team otherwise; its health is reported (healthy, degraded, unhealthy) or
// not at all, with some active alerts.
func searchComponent(r *rand.Rand, i, k int, owner string, owners []string, now time.Time) *catalog.Component {
	typ := searchComponentTypes[r.IntN(len(searchComponentTypes))]
	id := fmt.Sprintf("%s-s%05d-%d", typ, i, k)
	team := owner
	if r.IntN(3) == 0 {
		team = owners[r.IntN(len(owners))]
	}
	c := &catalog.Component{
		ComponentID: id, Name: fmt.Sprintf("%s %05d/%d", typ, i, k), ComponentType: typ, Order: k + 1,
		Layer: "business", Status: catalog.ComponentActive, Version: "1.0.0",
		Ownership: &catalog.Ownership{Team: team},
	}
	switch x := r.IntN(100); {
	case x < 10:
		// no health reported
	default:
		st := catalog.HealthHealthy
		switch {
		case x < 22:
			st = catalog.HealthUnhealthy
		case x < 40:
			st = catalog.HealthDegraded
		}
		c.Health = &catalog.ComponentHealth{Status: st, LastCheck: catalog.TimePtr(now.Add(-time.Minute)),
			Availability: 99.9, ResponseTime: 50, ErrorRate: 0.1, ActiveAlerts: r.IntN(4)}
	}
	return c
}

var searchJobTypes = []catalog.JobType{catalog.JobDeployment, catalog.JobConfiguration, catalog.JobScaling, catalog.JobMaintenance}

// searchJob is the job of capability i, of a type that depends on i.
func searchJob(i int, capID string, status catalog.JobStatus, start time.Time, c *catalog.Component) *catalog.Job {
	job := &catalog.Job{
		JobID: fmt.Sprintf("JOB-%s-0", capID), JobType: searchJobTypes[(i/7)%len(searchJobTypes)], Status: status, Priority: catalog.PriorityMedium,
		TriggeredBy: "bench", StartTime: catalog.NewTimestamp(start),
		TargetComponents: []catalog.TargetComponent{{ComponentID: c.ComponentID, FromVersion: "1.0.0", ToVersion: "1.0.1", Status: string(status)}},
	}
	if status == catalog.JobCompleted {
		end := start.Add(5 * time.Minute)
		job.EndTime = catalog.TimePtr(end)
		d := 300
		job.Duration = &d
	}
	return job
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// searchIndexItems is how many search index items (cards) the server writes for a capability,
// by dynamo/search.go's count: eight, one per folded tag, one per owner (the capability's and
// its components' teams, folded), one per distinct first letter and first two letters of the
// words of its name, ID, owner and tags.
func searchIndexItems(c *catalog.Capability, comps []*catalog.Component) int {
	words, tags, owners := map[string]bool{}, map[string]bool{}, map[string]bool{}
	add := func(s string) {
		for _, w := range catalog.Words(s) {
			words[w] = true
		}
	}
	add(c.Name)
	add(c.CapabilityID)
	add(c.Owner)
	for _, t := range c.Tags {
		add(t)
		tags[catalog.Fold(t)] = true
	}
	owners[catalog.Fold(c.Owner)] = true
	for _, x := range comps {
		if x.Ownership != nil && x.Ownership.Team != "" {
			owners[catalog.Fold(x.Ownership.Team)] = true
		}
	}
	prefixes := map[string]bool{}
	for w := range words {
		r := []rune(w)
		prefixes[string(r[:1])] = true
		if len(r) >= 2 {
			prefixes[string(r[:2])] = true
		}
	}
	return 8 + len(tags) + len(owners) + len(prefixes)
}
