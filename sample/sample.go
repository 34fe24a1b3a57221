// Package sample builds the sample Business Capability Catalogue: the seed's Alert Management
// capability with its own IDs and values, plus six more capabilities across four business
// domains, so that every component type, dependency type, job type and status, rule type and
// health state appears at least once.
//
// Each capability is built in a file of its own (alertmanagement.go, frauddetection.go, ...);
// blocks.go holds the building blocks they share and series.go the generated metric series.
// LoadArtifacts writes the jobs' artifacts to the object store.
package sample

import (
	"time"

	"github.com/capcat/catalogue/catalog"
)

// MetricInterval is the sampling interval of the sample's performance metrics.
const MetricInterval = 5 * time.Minute

// MetricWindow is how far back before now the sample's metrics reach.
const MetricWindow = 6 * time.Hour

// Catalogue returns the sample catalogue relative to now: seven capabilities, each a
// *catalog.Bundle with its components, dependencies, jobs, metrics and rules, recounted (see
// catalog.Bundle.Recount) so that every capability's aggregates equal what its bundle holds.
//
// The seed's Alert Management capability (CAP-ALERT-MGT-001) keeps the seed's IDs, values and
// fixed timestamps: its four components, the api-server-alert-001 -> database-alert-001
// dependency, the JOB-DEPLOY-456 deployment (2025-11-22T10:00:00Z) and the
// rule-alert-severity-mapping rule. Everything else is placed relative to now: component health
// was last checked a few minutes before now, jobs started minutes to days before now (a pending
// job may be scheduled a few hours after now), and performance metrics are sampled every
// MetricInterval over the MetricWindow before now, the newest at now truncated to
// MetricInterval, for every component of Alert Management and one or two components of each
// other capability. Metric values vary deterministically (sums of sines of the sample index);
// the newest sample of api-server-alert-001 carries the seed's values.
//
// The capabilities are healthy (Alert Management, Customer Onboarding, Incident Response),
// degraded (Fraud Detection, Reporting & Analytics), unhealthy (Payment Processing) and unknown
// (Identity Verification, in planning, whose components report no health).
//
// Catalogue is deterministic: two calls with the same now return deep-equal results. Every call
// returns fresh values that the caller may modify.
func Catalogue(now time.Time) []*catalog.Bundle {
	now = now.UTC()
	g := &gen{now: now, newest: now.Truncate(MetricInterval)}
	bundles := []*catalog.Bundle{
		g.alertManagement(),
		g.fraudDetection(),
		g.customerOnboarding(),
		g.paymentProcessing(),
		g.incidentResponse(),
		g.identityVerification(),
		g.reportingAnalytics(),
	}
	for _, b := range bundles {
		b.Recount()
	}
	return bundles
}

// gen carries the reference instants of one Catalogue call.
type gen struct {
	now    time.Time // the caller's now, in UTC
	newest time.Time // the newest metric sample: now truncated to MetricInterval
}

// ago returns the timestamp d before now.
func (g *gen) ago(d time.Duration) *catalog.Timestamp { return catalog.TimePtr(g.now.Add(-d)) }

// day returns midnight UTC of the day n days after today (n may be negative).
func (g *gen) day(n int) *catalog.Timestamp {
	return catalog.TimePtr(g.now.Truncate(24*time.Hour).AddDate(0, 0, n))
}

// fixed parses one of the seed's RFC 3339 timestamps.
func fixed(s string) catalog.Timestamp {
	t, err := catalog.ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

func fixedPtr(s string) *catalog.Timestamp { t := fixed(s); return &t }

func intPtr(n int) *int { return &n }

func strPtr(s string) *string { return &s }
