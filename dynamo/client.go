package dynamo

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/capcat/catalogue/internal/awsconf"
	"github.com/capcat/catalogue/internal/loopback"
	"github.com/capcat/catalogue/internal/memdyn"
)

// ClientConfig says how to reach DynamoDB.
type ClientConfig struct {
	// Options say where DynamoDB is: a DynamoDB-compatible Endpoint (memdyn, minidyn, dynalite,
	// DynamoDB Local), or AWS itself through the standard configuration chain.
	awsconf.Options
	// MaxIdleConns sizes the idle-connection pool of the client NewClient builds (when
	// HTTPClient is not set); 0 means DefaultMaxIdleConns.
	MaxIdleConns int
	// Observer, when set, sees every attempt and call (metrics).
	Observer Observer
}

// DefaultMaxIdleConns is the idle-connection pool of the SDK's HTTP client (the SDK's own
// default keeps 10 per host).
const DefaultMaxIdleConns = 256

// NewClient returns a DynamoDB client for cfg with the request-counting middleware installed and
// an explicit standard retryer. A custom endpoint gets static dummy credentials (signed requests,
// as dynalite requires) unless AWS credentials are configured.
func NewClient(ctx context.Context, cfg ClientConfig) (*dynamodb.Client, error) {
	o := cfg.Options
	// A client given as is (the embedded DynamoDB's in-process one) is set on the DynamoDB
	// client below, not through the configuration chain, which would apply AWS_CA_BUNDLE to it
	// and fails on any client but the SDK's buildable one.
	given := o.HTTPClient
	o.HTTPClient = nil
	if given == nil {
		// One GraphQL request may run up to 100 partition queries at once: keep enough idle
		// connections to the endpoint that they are reused instead of re-dialled.
		idle := cfg.MaxIdleConns
		if idle <= 0 {
			idle = DefaultMaxIdleConns
		}
		o.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns = idle
			t.MaxIdleConnsPerHost = idle
		})
	}
	awsCfg, err := awsconf.Load(ctx, o)
	if err != nil {
		return nil, err
	}
	var inProcessErr error
	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
			// Local implementations (minidyn) send an X-Amz-Crc32 that does not match the
			// body they send; AWS itself keeps the check.
			o.DisableValidateResponseChecksum = true
		}
		if given != nil {
			o.HTTPClient = given
		}
		o.HTTPClient = bodyReadOnly{o.HTTPClient}
		o.APIOptions = append(o.APIOptions, statsMiddleware(cfg.Observer), wireItemDecoder)
		if _, ok := given.(*Embedded); ok && cfg.Endpoint != "" {
			// The Embedded serves in this process: skip what only the way to AWS needs
			// (inprocess.go). Every other client is built as above, unchanged.
			inProcessErr = inProcessOptions(o, cfg.Endpoint, o.Credentials)
		}
	})
	if inProcessErr != nil {
		return nil, inProcessErr
	}
	return client, nil
}

// bodyReadOnly passes requests on with their body's WriteTo method hidden. smithy-go wraps a
// request body in a closer whose WriteTo returns io.EOF once the SDK has closed it, which it
// does as soon as the response headers are in. net/http reads a body of known length once more
// after sending it, through WriteTo, to check for extra bytes; when DynamoDB has answered before
// that check (a fast endpoint, or the writing goroutine descheduled under load), the check gets
// io.EOF, the transport takes it for a write error and closes the connection under the response
// being read ("deserialization failed ... use of closed network connection"), and the SDK sends
// the request again. Through Read, a closed body is a clean end of stream.
type bodyReadOnly struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
}

type readOnlyBody struct{ io.ReadCloser }

func (c bodyReadOnly) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = readOnlyBody{r.Body}
	}
	return c.next.Do(r)
}

// Embedded is an in-process DynamoDB: memdyn (internal/memdyn) on a loopback port. Its data
// lives in memory and is lost when the process exits. Give NewClient its URL and Key (the server
// refuses requests without it) and, as its HTTPClient, the Embedded itself: its Do serves the
// SDK's requests in the calling goroutine through the same guard and wrap as the port, without
// loopback HTTP (loopback.Server.Do); the port keeps serving anything else that dials it.
type Embedded struct {
	*loopback.Server
	// Mem is the memdyn server, for fault injection in tests.
	Mem *memdyn.Server
}

// Generation is memdyn's write generation (memdyn.Server.Generation), for Options.Generation: it
// moves on with every write, whichever way it came in (this process, the port, a command).
func (e *Embedded) Generation() uint64 { return e.Mem.Generation() }

// StartEmbedded starts memdyn on 127.0.0.1 at a free port. wrap, when not nil, wraps its
// handler (to count or delay requests).
//
// memdyn keeps partitions sorted, so a Query costs a binary search plus what it returns, and
// reads run side by side under a shared lock: no call waits long enough for a queue of calls
// whose callers have gone to build up (minidyn, the embedded engine before it, scanned the
// table under one lock for every Query and needed a limiter that dropped such calls).
func StartEmbedded(wrap func(http.Handler) http.Handler) (*Embedded, error) {
	mem := memdyn.New()
	srv, err := loopback.Serve(mem, wrap)
	if err != nil {
		return nil, fmt.Errorf("start embedded dynamodb: %w", err)
	}
	return &Embedded{Server: srv, Mem: mem}, nil
}
