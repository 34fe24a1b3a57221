package blob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
)

// MaxArtifacts bounds how many artifacts ListArtifacts returns for one job: one
// ListObjectsV2 page.
const MaxArtifacts = listPage

// headParallel bounds the concurrent HeadObject calls of ListArtifacts.
const headParallel = 8

// Artifact is one object under a job's prefix.
type Artifact struct {
	// Name is the key relative to the job's prefix, e.g. "logs/deployment.log".
	Name string
	// Bucket and Key locate the object; URI is s3://Bucket/Key.
	Bucket string
	Key    string
	URI    string
	Size   int64
	// LastModified is when the object was last written.
	LastModified time.Time
	// ContentType is the stored Content-Type with ArtifactListOptions.StoredContentTypes,
	// otherwise what the name's extension implies (ContentTypeFor).
	ContentType string
	// DownloadURL is a presigned GET URL, valid until DownloadURLExpires.
	DownloadURL        string
	DownloadURLExpires time.Time
}

// ArtifactList is a job's artifacts in key order.
type ArtifactList struct {
	Artifacts []*Artifact
	// Truncated reports that the job has more than MaxArtifacts objects; the first
	// MaxArtifacts are listed.
	Truncated bool
}

// ArtifactListOptions tune ListArtifacts.
type ArtifactListOptions struct {
	// StoredContentTypes reads each object's stored Content-Type with one HeadObject per
	// artifact (concurrently). Without it the listing is one request and ContentType is
	// inferred from the name.
	StoredContentTypes bool
}

// ListArtifacts lists the objects under a job's prefix with one ListObjectsV2 request (plus
// one HeadObject per artifact with StoredContentTypes), each with a presigned download URL.
// Presigning is local and costs no request. A job without artifacts has an empty list. Bad IDs
// are a *catalog.ValidationError; S3 failures wrap ErrUnavailable (transient) or ErrNotFound
// (no bucket).
func (s *Store) ListArtifacts(ctx context.Context, capabilityID, jobID string, opts ArtifactListOptions) (*ArtifactList, error) {
	if err := validateJob(capabilityID, jobID); err != nil {
		return nil, err
	}
	prefix := jobPrefix(capabilityID, jobID)
	out, err := listed(s.lists, "artifacts|"+s.artifacts+"|"+prefix, func() (*s3.ListObjectsV2Output, error) {
		return s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
			Bucket:  aws.String(s.artifacts),
			Prefix:  aws.String(prefix),
			MaxKeys: aws.Int32(s.listPage),
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list artifacts of %s: %w", jobID, classify("list objects", err))
	}
	list := &ArtifactList{Artifacts: make([]*Artifact, 0, len(out.Contents)), Truncated: aws.ToBool(out.IsTruncated)}
	for _, o := range out.Contents {
		key := aws.ToString(o.Key)
		name, ok := artifactName(prefix, key)
		if !ok {
			continue
		}
		a := &Artifact{
			Name: name, Bucket: s.artifacts, Key: key, URI: s3URI(s.artifacts, key),
			Size: aws.ToInt64(o.Size), LastModified: aws.ToTime(o.LastModified).UTC(), ContentType: ContentTypeFor(name),
		}
		req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.artifacts), Key: aws.String(key)}, s3.WithPresignExpires(s.expiry))
		if err != nil {
			return nil, fmt.Errorf("list artifacts of %s: presign %s: %w", jobID, name, err)
		}
		a.DownloadURL, a.DownloadURLExpires = req.URL, s.now().Add(s.expiry).UTC()
		list.Artifacts = append(list.Artifacts, a)
	}
	if opts.StoredContentTypes {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(headParallel)
		for _, a := range list.Artifacts {
			g.Go(func() error {
				h, err := s.s3.HeadObject(gctx, &s3.HeadObjectInput{Bucket: aws.String(a.Bucket), Key: aws.String(a.Key)})
				if err != nil {
					return fmt.Errorf("list artifacts of %s: %w", jobID, classify("head "+a.Name, err))
				}
				if ct := aws.ToString(h.ContentType); ct != "" {
					a.ContentType = ct
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// PresignedRequest is a time-limited URL that lets a client without AWS credentials make one
// request: send Method to URL with Headers (they are part of the signature).
type PresignedRequest struct {
	Method  string
	URL     string
	Headers map[string]string
	Expires time.Time
	// Name, Bucket and Key say which artifact the URL reads or writes.
	Name   string
	Bucket string
	Key    string
}

// PresignUpload returns a presigned PUT URL with which a pipeline uploads the named artifact of
// a job: the request must carry the Content-Type given here (empty means ContentTypeFor(name))
// and the object's bytes as its body. It makes no request. A bad ID, name (see
// ValidateArtifactName) or content type is a *catalog.ValidationError.
func (s *Store) PresignUpload(ctx context.Context, capabilityID, jobID, name, contentType string) (*PresignedRequest, error) {
	key, err := artifactKey(capabilityID, jobID, name)
	if err != nil {
		return nil, err
	}
	if contentType == "" {
		contentType = ContentTypeFor(name)
	}
	if err := validateContentType(contentType); err != nil {
		return nil, err
	}
	req, err := s.upload.PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.artifacts), Key: aws.String(key), ContentType: aws.String(contentType),
	}, s3.WithPresignExpires(s.expiry))
	if err != nil {
		return nil, fmt.Errorf("presign upload of %s: %w", key, err)
	}
	return &PresignedRequest{
		Method: http.MethodPut, URL: req.URL, Headers: map[string]string{"Content-Type": contentType},
		Expires: s.now().Add(s.expiry).UTC(), Name: name, Bucket: s.artifacts, Key: key,
	}, nil
}

// PresignDownload returns a presigned GET URL for the named artifact of a job. It makes no
// request and does not check that the artifact exists (the GET answers 404 if not). A bad ID
// or name is a *catalog.ValidationError.
func (s *Store) PresignDownload(ctx context.Context, capabilityID, jobID, name string) (*PresignedRequest, error) {
	key, err := artifactKey(capabilityID, jobID, name)
	if err != nil {
		return nil, err
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.artifacts), Key: aws.String(key)}, s3.WithPresignExpires(s.expiry))
	if err != nil {
		return nil, fmt.Errorf("presign download of %s: %w", key, err)
	}
	return &PresignedRequest{
		Method: http.MethodGet, URL: req.URL, Headers: map[string]string{},
		Expires: s.now().Add(s.expiry).UTC(), Name: name, Bucket: s.artifacts, Key: key,
	}, nil
}

// PutArtifact writes the named artifact of a job (one PutObject), overwriting any previous
// one; an empty contentType means ContentTypeFor(name). A bad ID, name or content type is a
// *catalog.ValidationError.
func (s *Store) PutArtifact(ctx context.Context, capabilityID, jobID, name, contentType string, body []byte) error {
	key, err := artifactKey(capabilityID, jobID, name)
	if err != nil {
		return err
	}
	if contentType == "" {
		contentType = ContentTypeFor(name)
	}
	if err := validateContentType(contentType); err != nil {
		return err
	}
	if err := s.put(ctx, s.artifacts, key, contentType, body); err != nil {
		return fmt.Errorf("put artifact %s: %w", key, err)
	}
	return nil
}

// GetArtifact reads the named artifact of a job and its content type. A missing artifact wraps
// ErrNotFound; a bad ID or name is a *catalog.ValidationError.
func (s *Store) GetArtifact(ctx context.Context, capabilityID, jobID, name string) (body []byte, contentType string, err error) {
	key, err := artifactKey(capabilityID, jobID, name)
	if err != nil {
		return nil, "", err
	}
	body, contentType, err = s.get(ctx, s.artifacts, key)
	if err != nil {
		return nil, "", fmt.Errorf("get artifact %s: %w", key, err)
	}
	return body, contentType, nil
}

// put writes one object.
func (s *Store) put(ctx context.Context, bucket, key, contentType string, body []byte) error {
	_, err := s.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), ContentType: aws.String(contentType),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
	})
	return classify("put object", err)
}

// get reads one object whole. A missing object wraps ErrNotFound.
func (s *Store) get(ctx context.Context, bucket, key string) ([]byte, string, error) {
	body, out, err := s.getObject(ctx, bucket, key)
	if err != nil {
		return nil, "", err
	}
	return body, aws.ToString(out.ContentType), nil
}

// getObject reads an object whole, and returns its body and the response's headers.
func (s *Store) getObject(ctx context.Context, bucket, key string) ([]byte, *s3.GetObjectOutput, error) {
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, nil, classify("get object", err)
	}
	defer out.Body.Close()
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, nil, classify("read object", err)
	}
	return body, out, nil
}
