package blob

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/loopback"
)

// Environment variables read by FromEnv.
const (
	EnvEndpoint        = "S3_ENDPOINT"
	EnvArtifactsBucket = "ARTIFACTS_BUCKET"
	EnvMetricsBucket   = "METRICS_BUCKET"
)

// ClientConfig says how to reach S3: AWS itself through the standard configuration chain, or
// an S3-compatible server (gofakes3, MinIO, LocalStack) at Endpoint, reached with path-style
// addressing and static dummy credentials (the embedded server requires its Embedded.Key as
// AccessKeyID). It is the configuration of every AWS client of the catalogue.
type ClientConfig = awsconf.Options

// FromEnv returns the client configuration and store options that the environment gives:
// S3_ENDPOINT, ARTIFACTS_BUCKET and METRICS_BUCKET (empty values keep the defaults). getenv is
// os.Getenv in a program, a map lookup in a test.
func FromEnv(getenv func(string) string) (ClientConfig, Options) {
	return ClientConfig{Endpoint: getenv(EnvEndpoint)},
		Options{ArtifactsBucket: getenv(EnvArtifactsBucket), MetricsBucket: getenv(EnvMetricsBucket)}
}

// NewClient returns an S3 client for cfg with an explicit standard retryer and the request
// counter of WithStats installed in its HTTP client. With a custom endpoint it uses path-style
// addressing (http://host/bucket/key), static dummy credentials, and computes and validates
// checksums only where S3 requires them, which every S3-compatible server understands.
func NewClient(ctx context.Context, cfg ClientConfig) (*s3.Client, error) {
	awsCfg, err := awsconf.Load(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		// Wrap whatever client the configuration chain built (with its CA bundle, proxies).
		var base aws.HTTPClient = o.HTTPClient
		if base == nil {
			base = awshttp.NewBuildableClient()
		}
		o.HTTPClient = countingClient{next: base}
		o.APIOptions = append(o.APIOptions, budgetMiddleware)
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
			o.UsePathStyle = true
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
			o.DisableLogOutputChecksumValidationSkipped = true
		}
	}), nil
}

// Embedded is an in-process S3: gofakes3 with its in-memory backend on a loopback port. Its
// objects live in memory and are lost when the process exits. Give NewClient its URL and Key,
// and Options its PresignKey and UploadKey: the server refuses requests without them, and
// presigned URLs may only read or only put. It checks no signatures beyond that, so presigned
// URLs work against it as against S3.
type Embedded struct {
	*loopback.Server
	// Backend is the in-memory store, for tests that look behind the HTTP API.
	Backend *s3mem.Backend
	clock   *clock
	// gen counts the writes: see Generation.
	gen atomic.Uint64
}

// Generation returns a number that moves whenever an object or bucket may have been written:
// when a write request (any method but GET and HEAD) arrives, before it is served, and again
// once it has been answered; RestoreObject moves it too. While it returns the same value,
// nothing has been written or was being written since: a listing read after it and kept
// tagged with it may be served again for as long as it returns that value (Options.Generation:
// the Store's listings memo). A listing that raced a write carries a value that the write's
// second step has left behind.
func (e *Embedded) Generation() uint64 { return e.gen.Load() }

// counting moves the generation around each write request.
func (e *Embedded) counting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			e.gen.Add(1)
			defer e.gen.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// StartEmbedded starts gofakes3 on 127.0.0.1 at a free port. wrap, when not nil, wraps its
// handler (to count, delay or fail requests). Create the buckets with Store.EnsureBuckets.
func StartEmbedded(wrap func(http.Handler) http.Handler) (*Embedded, error) {
	c := &clock{}
	backend := s3mem.New(s3mem.WithTimeSource(c))
	e := &Embedded{Backend: backend, clock: c}
	srv, err := loopback.Serve(e.counting(gofakes3.New(backend).Server()), wrap)
	if err != nil {
		return nil, fmt.Errorf("start embedded s3: %w", err)
	}
	e.Server = srv
	return e, nil
}

// OpenEmbedded starts an Embedded S3, connects a Store to it with opts, and creates the two
// buckets: the S3 half of the in-memory default. Close the Embedded when done. It returns an
// error when the server does not start or a bucket cannot be created.
func OpenEmbedded(ctx context.Context, opts Options) (*Store, *Embedded, error) {
	return OpenEmbeddedWrapped(ctx, opts, nil)
}

// OpenEmbeddedWrapped is OpenEmbedded with the server's handler wrapped by wrap, when not nil
// (to see every request: the data file saves after writes).
func OpenEmbeddedWrapped(ctx context.Context, opts Options, wrap func(http.Handler) http.Handler) (*Store, *Embedded, error) {
	emb, err := StartEmbedded(wrap)
	if err != nil {
		return nil, nil, err
	}
	client, err := NewClient(ctx, ClientConfig{Endpoint: emb.URL, AccessKeyID: emb.Key})
	if err != nil {
		_ = emb.Close()
		return nil, nil, fmt.Errorf("open embedded s3: %w", err)
	}
	opts.PresignAccessKeyID, opts.UploadAccessKeyID = emb.PresignKey, emb.UploadKey
	opts.Generation = emb.Generation
	s := New(client, opts)
	if err := s.EnsureBuckets(ctx); err != nil {
		_ = emb.Close()
		return nil, nil, fmt.Errorf("open embedded s3: %w", err)
	}
	return s, emb, nil
}
