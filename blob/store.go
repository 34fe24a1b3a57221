// Package blob is the S3 half of the catalogue's hybrid storage (the seed's "Hybrid Storage
// Architecture"): jobs keep their status in DynamoDB and their plans, logs and reports in the
// artifacts bucket; metrics stay in DynamoDB while recent and move, one gzipped JSON object per
// component-hour, to the metrics bucket as they age. The layouts are the seed's:
//
//	s3://{artifacts}/capabilities/{capability_id}/jobs/{job_id}/deployment-plan.yaml
//	                                                        .../logs/{pre-deployment,deployment,post-deployment}.log
//	                                                        .../reports/{test-results,performance-baseline}.json
//	s3://{metrics}/capabilities/{capability_id}/components/{component_id}/{yyyy}/{mm}/{dd}/metrics-{hh}.json.gz
//
// Store reaches the buckets (artifact listings, presigned URLs, metric objects); package
// archive moves metrics across the boundary and reads windows that span it. Embedded runs an
// in-memory S3 (gofakes3) in-process, as dynamo.StartEmbedded does for DynamoDB. Every S3
// request made with a context from WithStats is counted there.
package blob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/internal/awsconf"
)

// Bucket defaults: the seed's bucket names.
const (
	DefaultArtifactsBucket = "capability-deployments"
	DefaultMetricsBucket   = "capability-metrics"
)

// Defaults and limits of presigned URLs and of the archive.
const (
	// DefaultPresignExpiry is how long a presigned URL works unless Options say otherwise.
	DefaultPresignExpiry = 15 * time.Minute
	// MaxPresignExpiry is S3's limit on a SigV4 presigned URL.
	MaxPresignExpiry = 7 * 24 * time.Hour
	// DefaultMinArchiveAge is how old an hour of metrics must be before Archive may move it.
	DefaultMinArchiveAge = 24 * time.Hour
	// EmbeddedMinArchiveAge is the embedded default server's (no -archive-min-age): its first
	// scheduled archive, 10 minutes after start, moves nearly all sample metrics to its S3.
	EmbeddedMinArchiveAge = 10 * time.Minute
	// listPage is the page size of ListObjectsV2 (S3's maximum).
	listPage = 1000
)

// Sentinel errors of the package, each classified by a code of catalog's error vocabulary. S3
// error types never leave it: callers test these with errors.Is.
var (
	// ErrNotFound means the object or bucket asked for does not exist.
	ErrNotFound = catalog.NewError(catalog.NotFound, "object not found")
	// ErrUnavailable means S3 could not be reached or kept failing (throttling, 5xx, network)
	// after the retries.
	ErrUnavailable = catalog.NewError(catalog.Unavailable, "object storage unavailable")
	// ErrCorrupt means an archived metrics object does not hold what its key says it holds.
	ErrCorrupt = catalog.NewError(catalog.Corrupt, "archived object is corrupt")
)

// Options configure a Store.
type Options struct {
	// ArtifactsBucket holds job artifacts; empty means DefaultArtifactsBucket.
	ArtifactsBucket string
	// MetricsBucket holds archived metrics; empty means DefaultMetricsBucket.
	MetricsBucket string
	// PresignExpiry is the lifetime of presigned URLs; 0 means DefaultPresignExpiry. It is
	// capped at MaxPresignExpiry.
	PresignExpiry time.Duration
	// PresignAccessKeyID and UploadAccessKeyID, when set, are the access key IDs presigned
	// download and upload URLs carry in place of the client's (the embedded server's keys that
	// only read, and only put: URLs go to clients).
	PresignAccessKeyID, UploadAccessKeyID string
	// MinArchiveAge is how far behind now the archive boundary must stay; 0 means
	// DefaultMinArchiveAge, a negative value means none. Archive refuses a later boundary, and
	// so Metrics never asks S3 about the last MinArchiveAge.
	MinArchiveAge time.Duration
	// ListPage is the page size of listings (ListObjectsV2); 0 means S3's maximum, 1000. Tests
	// set it low to reach a second page without writing a thousand objects.
	ListPage int32
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives notices; nil means slog.Default().
	Logger *slog.Logger
	// Generation, for an S3 in this process that counts its writes (Embedded.Generation, set by
	// OpenEmbedded), lets the Store keep its listings of artifacts and archived hours and answer
	// them again, without a request, while nothing was written (see listMemo). nil for any
	// other S3: every listing is sent.
	Generation func() uint64
}

// Store reads and writes the two buckets.
type Store struct {
	s3        *s3.Client
	presign   *s3.PresignClient
	upload    *s3.PresignClient
	artifacts string
	metrics   string
	expiry    time.Duration
	minAge    time.Duration
	now       func() time.Time
	log       *slog.Logger
	listPage  int32
	lists     *listMemo // nil without Options.Generation
}

// presignClient presigns with client's configuration, under the access key ID key when set.
// Presigning sends nothing, so it runs without the client's budget middleware: a query's S3
// budget bounds the requests it makes, not the URLs it hands out.
func presignClient(client *s3.Client, key string) *s3.PresignClient {
	return s3.NewPresignClient(client, func(po *s3.PresignOptions) {
		po.ClientOptions = append(po.ClientOptions, func(o *s3.Options) {
			o.APIOptions = append(o.APIOptions, withoutBudget)
			if key != "" {
				o.Credentials = credentials.NewStaticCredentialsProvider(key, "local", "")
			}
		})
	})
}

// New returns a Store over client (see NewClient).
func New(client *s3.Client, opts Options) *Store {
	s := &Store{
		s3:        client,
		presign:   presignClient(client, opts.PresignAccessKeyID),
		upload:    presignClient(client, opts.UploadAccessKeyID),
		artifacts: opts.ArtifactsBucket,
		metrics:   opts.MetricsBucket,
		expiry:    opts.PresignExpiry,
		minAge:    opts.MinArchiveAge,
		now:       opts.Now,
		log:       opts.Logger,
		listPage:  opts.ListPage,
		lists:     newListMemo(opts.Generation),
	}
	if s.listPage <= 0 {
		s.listPage = listPage
	}
	if s.artifacts == "" {
		s.artifacts = DefaultArtifactsBucket
	}
	if s.metrics == "" {
		s.metrics = DefaultMetricsBucket
	}
	if s.expiry <= 0 {
		s.expiry = DefaultPresignExpiry
	}
	s.expiry = min(s.expiry, MaxPresignExpiry)
	switch {
	case s.minAge == 0:
		s.minAge = DefaultMinArchiveAge
	case s.minAge < 0:
		s.minAge = 0
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// ArtifactsBucket returns the name of the job artifacts bucket.
func (s *Store) ArtifactsBucket() string { return s.artifacts }

// MetricsBucket returns the name of the archived metrics bucket.
func (s *Store) MetricsBucket() string { return s.metrics }

// MinArchiveAge returns how far behind now the archive boundary stays.
func (s *Store) MinArchiveAge() time.Duration { return s.minAge }

// EnsureBuckets creates the two buckets unless they exist (HeadBucket first, so an existing
// bucket costs one request and needs no create permission). It is for the embedded backend and
// local S3-compatible servers; on AWS, buckets are usually made by infrastructure code.
func (s *Store) EnsureBuckets(ctx context.Context) error {
	for _, b := range []string{s.artifacts, s.metrics} {
		_, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b)})
		if err == nil {
			continue
		}
		if !errors.Is(classify("", err), ErrNotFound) {
			return fmt.Errorf("ensure bucket %s: %w", b, classify("head bucket", err))
		}
		in := &s3.CreateBucketInput{Bucket: aws.String(b)}
		if r := s.s3.Options().Region; r != "" && r != "us-east-1" {
			in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(r)}
		}
		_, err = s.s3.CreateBucket(ctx, in)
		var owned *types.BucketAlreadyOwnedByYou
		var exists *types.BucketAlreadyExists
		if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) {
			return fmt.Errorf("ensure bucket %s: %w", b, classify("create bucket", err))
		}
		s.log.Info("created bucket", "bucket", b)
	}
	return nil
}

// Ping checks that both buckets exist and answer (one HeadBucket each), for readiness probes.
// A missing bucket is ErrNotFound; an unreachable S3 is ErrUnavailable.
func (s *Store) Ping(ctx context.Context) error {
	for _, b := range []string{s.artifacts, s.metrics} {
		if _, err := s.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b)}); err != nil {
			return fmt.Errorf("ping bucket %s: %w", b, classify("head bucket", err))
		}
	}
	return nil
}

// classify wraps an SDK error of operation op: a missing key or bucket becomes ErrNotFound,
// transient failures ErrUnavailable; the AWS text stays in the chain for logs.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	wrap := func(sentinel error) error {
		if op == "" {
			return fmt.Errorf("%w: %w", sentinel, err)
		}
		return fmt.Errorf("%s: %w: %w", op, sentinel, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	var noKey *types.NoSuchKey
	var notFound *types.NotFound
	var noBucket *types.NoSuchBucket
	if errors.As(err, &noKey) || errors.As(err, &notFound) || errors.As(err, &noBucket) {
		return wrap(ErrNotFound)
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NotFound", "NoSuchKey", "NoSuchBucket":
			return wrap(ErrNotFound)
		}
	}
	if transient(err) {
		return wrap(ErrUnavailable)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// transient reports whether err is worth retrying later: throttling, server errors, timeouts
// and network failures (including exhausted SDK retries of those).
func transient(err error) bool {
	return awsconf.Transient(err, "SlowDown", "InternalError", "ServiceUnavailable", "RequestTimeout", "RequestTimeTooSkewed")
}

// Buckets returns the artifacts and metrics bucket names.
func (s *Store) Buckets() [2]string { return [2]string{s.artifacts, s.metrics} }
