// Package awsconf builds the AWS configuration that the DynamoDB and S3 clients share (an
// explicit standard retryer, the region, and static dummy credentials for a custom endpoint)
// and tells their transient failures apart.
package awsconf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// Defaults of the retryer: bounded so that retries stay inside a request's deadline.
const (
	DefaultMaxAttempts = 4
	DefaultMaxBackoff  = 500 * time.Millisecond
	defaultRegion      = "us-east-1"
)

// Options say how to reach AWS or an AWS-compatible endpoint.
type Options struct {
	// Endpoint is a custom endpoint; it gets static dummy credentials (requests are still
	// signed, as dynalite and S3-compatible servers want). Empty means AWS itself through the
	// standard configuration chain.
	Endpoint string
	// Region defaults to the configuration chain's, then us-east-1.
	Region string
	// MaxAttempts and MaxBackoff bound the standard retryer; zero means the defaults.
	MaxAttempts int
	MaxBackoff  time.Duration
	// HTTPClient, when set, replaces the SDK's HTTP client.
	HTTPClient aws.HTTPClient
	// AccessKeyID is the static access key ID of a custom endpoint; empty means "local". The
	// embedded backends require their own.
	AccessKeyID string
}

// Load returns the configuration of o. It returns the configuration chain's error otherwise.
func Load(ctx context.Context, o Options) (aws.Config, error) {
	attempts := o.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	backoff := o.MaxBackoff
	if backoff <= 0 {
		backoff = DefaultMaxBackoff
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(s *retry.StandardOptions) {
				s.MaxAttempts = attempts
				s.MaxBackoff = backoff
			})
		}),
	}
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTPClient))
	}
	if o.Endpoint != "" {
		key := o.AccessKeyID
		if key == "" {
			key = "local"
		}
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(key, "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load aws config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	return cfg, nil
}

// Transient reports whether err, an SDK error, is worth retrying later: exhausted SDK retries,
// an API error whose code is one of codes (the service's throttling and busy codes) or that is
// the server's fault, and network failures.
func Transient(err error, codes ...string) bool {
	var maxAttempts *retry.MaxAttemptsError
	if errors.As(err, &maxAttempts) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return slices.Contains(codes, ae.ErrorCode()) || ae.ErrorFault() == smithy.FaultServer
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}
