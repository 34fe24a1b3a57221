// Package graph is the GraphQL surface of the catalogue: the gqlgen executor generated from
// schema.graphqls, thin resolvers, the per-request loaders that batch every DynamoDB read, the
// error presenter, and NewHandler, which returns the whole HTTP surface.
package graph

import (
	"context"
	"github.com/vektah/gqlparser/v2/ast"
	"log/slog"
	"time"

	"github.com/capcat/catalogue/archive"
	"github.com/capcat/catalogue/blob"
	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// Store is what the GraphQL layer needs of the catalogue store.
type Store interface {
	CapabilitiesByID(ctx context.Context, ids []string) ([]*catalog.Capability, error)
	CapabilitiesByIDConsistent(ctx context.Context, ids []string) ([]*catalog.Capability, error)
	ReadRange(ctx context.Context, capabilityID string, rng dynamo.Segment, f dynamo.Fields) (*dynamo.Partition, error)
	ReadRangeConsistent(ctx context.Context, capabilityID string, rng dynamo.Segment) (*dynamo.Partition, error)
	Capabilities(ctx context.Context, domain string, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	CapabilitiesByDomain(ctx context.Context, domain string, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	CapabilitiesByHealth(ctx context.Context, status catalog.HealthStatus, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	SearchCapabilities(ctx context.Context, q dynamo.CapabilityQuery, first int, after string) (*dynamo.Page[*catalog.Capability], error)
	CountCapabilities(ctx context.Context, q dynamo.CapabilityQuery) (int, error)
	CountIndex(ctx context.Context, index, value string) (int, error)
	ComponentsByType(ctx context.Context, componentType string, first int, after string) (*dynamo.Page[*catalog.Component], error)
	Components(ctx context.Context, f dynamo.ComponentFilter, first int, after string) (*dynamo.Page[*catalog.Component], error)
	CountComponents(ctx context.Context, f dynamo.ComponentFilter) (int, error)
	ActiveJobs(ctx context.Context, jobTypes []catalog.JobType, first int, after string) (*dynamo.Page[*catalog.Job], error)
	CountActiveJobs(ctx context.Context, jobTypes []catalog.JobType) (int, error)
	CountJobs(ctx context.Context, capabilityID string, f dynamo.JobFilter) (int, error)
	JobByID(ctx context.Context, jobID string) (*catalog.Job, error)
	Jobs(ctx context.Context, capabilityID string, f dynamo.JobFilter, first int, after string) (*dynamo.Page[*catalog.Job], error)
	Metrics(ctx context.Context, capabilityID string, f dynamo.MetricFilter, first int, after string) (*dynamo.Page[*catalog.Metric], error)
	ComponentMetrics(ctx context.Context, f dynamo.MetricFilter, first int, after string) (*dynamo.Page[*catalog.Metric], error)
	ComponentOwner(ctx context.Context, componentID string) (string, error)
	ComponentsMetrics(ctx context.Context, w dynamo.ComponentsWindow, first int, after string) (*dynamo.Page[*catalog.Metric], error)
	MetricRollups(ctx context.Context, capabilityID, componentID string, t catalog.MetricType, daily bool, from, to time.Time) ([]*dynamo.Rollup, error)
	ArchiveState(ctx context.Context) (dynamo.ArchiveState, error)
	Ping(ctx context.Context) error

	CapabilityHistory(ctx context.Context, id string, first int, after string) (*dynamo.Page[*catalog.CapabilityVersion], error)
	RuleHistory(ctx context.Context, capabilityID, ruleID string, first int, after string) (*dynamo.Page[*catalog.RuleVersion], error)
	CapabilityVersion(ctx context.Context, id string, rev int, live bool) (*catalog.CapabilityVersion, error)
	RuleVersion(ctx context.Context, capabilityID, ruleID string, rev int, live bool) (*catalog.RuleVersion, error)
	CapabilityChanges(ctx context.Context, capabilityID string, f dynamo.ChangeFilter, first int, after string) (*dynamo.Page[*catalog.ChangeRecord], error)
	Changes(ctx context.Context, f dynamo.ChangeFilter, first int, after string) (*dynamo.Page[*catalog.ChangeRecord], error)
	CapabilityChangesBefore(ctx context.Context, capabilityID string, f dynamo.ChangeFilter, last int, before string) (*dynamo.Page[*catalog.ChangeRecord], error)
	ChangesBefore(ctx context.Context, f dynamo.ChangeFilter, last int, before string) (*dynamo.Page[*catalog.ChangeRecord], error)
	RecordArtifactUpload(ctx context.Context, capabilityID, jobID, name string) error
	CreateCapability(ctx context.Context, c *catalog.Capability, idem dynamo.Idempotency) (*catalog.Capability, error)
	UpdateCapability(ctx context.Context, id string, expectedRevision int, change func(*catalog.Capability) error, idem dynamo.Idempotency) (*catalog.Capability, error)
	TransitionCapability(ctx context.Context, id string, to catalog.CapabilityStatus, expectedRevision int, idem dynamo.Idempotency) (*catalog.Capability, error)
	DeleteCapability(ctx context.Context, id string, expectedRevision int, idem dynamo.Idempotency) error
	AddComponent(ctx context.Context, c *catalog.Component, idem dynamo.Idempotency) (*catalog.Component, error)
	UpdateComponent(ctx context.Context, capabilityID, componentID string, expectedRevision int, change func(*catalog.Component) error, idem dynamo.Idempotency) (*catalog.Component, error)
	RemoveComponent(ctx context.Context, capabilityID, componentID string, cascade bool, idem dynamo.Idempotency) error
	AddDependency(ctx context.Context, d *catalog.Dependency, idem dynamo.Idempotency) (*catalog.Dependency, error)
	RemoveDependency(ctx context.Context, capabilityID, sourceID, targetID string, idem dynamo.Idempotency) error
	StartJob(ctx context.Context, j *catalog.Job, idem dynamo.Idempotency) (*catalog.Job, error)
	UpdateJob(ctx context.Context, jobID string, expectedRevision int, change func(*catalog.Job) error, idem dynamo.Idempotency) (*catalog.Job, error)
	RecordMetrics(ctx context.Context, metrics []*catalog.Metric, idem dynamo.Idempotency) (*dynamo.MetricsResult, error)
	CreateRule(ctx context.Context, r *catalog.Rule, idem dynamo.Idempotency) (*catalog.Rule, error)
	ExecuteRules(ctx context.Context, capabilityID string, input map[string]any, ruleType *catalog.RuleType, idem dynamo.Idempotency) ([]*catalog.RuleExecution, error)
	CapabilityNotifications(ctx context.Context, capabilityID string, first int, after string) (*dynamo.Page[*catalog.Notification], error)
	UpdateRule(ctx context.Context, capabilityID, ruleID string, expectedRevision int, change func(*catalog.Rule) error, idem dynamo.Idempotency) (*catalog.Rule, error)
	DeleteRule(ctx context.Context, capabilityID, ruleID string, idem dynamo.Idempotency) error

	// The catalogue's counters (dynamo/counters.go): one BatchGetItem each.
	Counts(ctx context.Context) (*dynamo.Counts, error)
	Owners(ctx context.Context, first int, after string) (*dynamo.Page[*dynamo.OwnerCounts], int, error)
	Owner(ctx context.Context, name string) (*dynamo.OwnerCounts, error)
}

var _ Store = (*dynamo.Store)(nil)

// Artifacts is the storage of job artifacts (S3).
type Artifacts interface {
	ListArtifacts(ctx context.Context, capabilityID, jobID string, opts blob.ArtifactListOptions) (*blob.ArtifactList, error)
	PresignUpload(ctx context.Context, capabilityID, jobID, name, contentType string) (*blob.PresignedRequest, error)
	Ping(ctx context.Context) error
}

// MetricsArchive moves old metrics to S3 and reads windows across the boundary.
type MetricsArchive interface {
	Page(ctx context.Context, q archive.MetricsQuery, table archive.TableRead, components func(context.Context) ([]string, error)) (*dynamo.Page[*catalog.Metric], error)
	Archive(ctx context.Context, before time.Time, progress func(archive.Progress)) (archive.Report, error)
	Metrics(ctx context.Context, q archive.MetricsQuery) (*dynamo.Page[*catalog.Metric], error)
	// Reaches reports whether a window from from may hold archived samples (Page reads the
	// table alone otherwise).
	Reaches(from *time.Time) bool
}

var (
	_ Artifacts      = (*blob.Store)(nil)
	_ MetricsArchive = (*archive.Archiver)(nil)
)

// Resolver is the root resolver. It holds no per-request state: that lives in the Loaders.
type Resolver struct {
	store     Store
	artifacts Artifacts
	archive   MetricsArchive
	log       *slog.Logger
	now       func() time.Time
	segments  fieldSegments // what each field reads of the partition, from the schema's @reads
	schema    *ast.Schema   // the parsed schema (update inputs' clear is checked against it)
	hub       *Hub          // serves subscriptions; nil without a WebSocket transport
}
