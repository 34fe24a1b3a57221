package dynamo

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	smithyendpoints "github.com/aws/smithy-go/endpoints"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The embedded default's in-process client.
//
// A client whose HTTPClient is the Embedded hands each request to memdyn in the calling goroutine
// (loopback.Server.Do): no network, no proxy, no other party between the SDK and the engine. Per
// call, the SDK still does work that only means something on the way to AWS, and in process it
// is a large share of the call. inProcessOptions drops that work for this client only; a client
// of any other endpoint, and of AWS, is built exactly as before.
//
//   - Endpoint: the rules engine resolves the same fixed URL on every call; a static resolver
//     returns it.
//   - Signing: SigV4 hashes the payload (SHA-256) and signs the canonical request (HMACs), which
//     nothing verifies: the embedded guard (internal/loopback) checks only the access key ID named
//     in the Authorization header, and memdyn checks nothing. The request carries an
//     Authorization header naming the client's access key ID in SigV4's form, which the guard
//     reads as it reads a signed one, so a client without the key is still refused. The port
//     (real HTTP on 127.0.0.1) is not involved: whoever dials it must sign as before.
//   - Headers for AWS's own bookkeeping: the User-Agent (built per call), the invocation ID
//     (amz-sdk-invocation-id, random per call) and the recursion-detection header (Lambda's
//     trace ID). memdyn reads none of them. The retry-metrics header (amz-sdk-request) needs the
//     invocation ID; without it the SDK skips it.
//
// Kept: serialisation and deserialisation (memdyn speaks DynamoDB's JSON wire protocol), the
// retryer (memdyn answers throttling and injected faults: internal/memdyn/fault.go), the
// request counting and the wire item decoder, the guard and the wrap (the -data file's write
// hooks) in loopback.Server.Do.

// inProcessOptions sets the in-process shortcuts on the options of a client of e.
func inProcessOptions(o *dynamodb.Options, endpoint string, creds aws.CredentialsProvider) error {
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("embedded endpoint %q: %w", endpoint, err)
	}
	o.EndpointResolverV2 = staticEndpoint{*u}
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		for _, id := range []string{"UserAgent", "ClientRequestID", "RecursionDetection"} {
			if _, err := stack.Build.Remove(id); err != nil {
				return fmt.Errorf("in-process client: remove %s: %w", id, err)
			}
		}
		for _, id := range []string{"ComputePayloadHash", "Signing"} {
			if _, err := stack.Finalize.Remove(id); err != nil {
				return fmt.Errorf("in-process client: remove %s: %w", id, err)
			}
		}
		return stack.Finalize.Add(keyOnly{creds}, middleware.After)
	})
	return nil
}

// staticEndpoint resolves every call to the embedded server's URL.
type staticEndpoint struct{ u url.URL }

func (s staticEndpoint) ResolveEndpoint(context.Context, dynamodb.EndpointParameters) (smithyendpoints.Endpoint, error) {
	return smithyendpoints.Endpoint{URI: s.u}, nil
}

// keyOnly sets the Authorization header the embedded guard reads: SigV4's form with the client's
// access key ID as the credential, without a signature (nothing in process verifies one).
type keyOnly struct{ creds aws.CredentialsProvider }

func (keyOnly) ID() string { return "CatalogueInProcessKey" }

func (k keyOnly) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok {
		return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("in-process client: unexpected request type %T", in.Request)
	}
	c, err := k.creds.Retrieve(ctx) // the SDK's cache: no work once retrieved
	if err != nil {
		return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("in-process client: credentials: %w", err)
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKeyID+"/in-process, SignedHeaders=, Signature=")
	return next.HandleFinalize(ctx, in)
}
