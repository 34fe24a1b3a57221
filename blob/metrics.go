package blob

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/capcat/catalogue/catalog"
)

// The metrics bucket, as the archiver (package archive) reads and writes it: one object per
// component-hour at MetricsKey, in the format of EncodeMetrics.

// ArchivedHour is one component-hour object of the metrics bucket.
type ArchivedHour struct {
	Key  string
	Hour time.Time
	// ETag is the version of the object the listing saw ("" when the store gave none).
	ETag string
}

// Now returns the time on the Store's clock.
func (s *Store) Now() time.Time { return s.now() }

// MetricsURI returns the s3:// URI of key in the metrics bucket, for messages and reports.
func (s *Store) MetricsURI(key string) string { return s3URI(s.metrics, key) }

// GetMetricsObject reads the object at key of the metrics bucket whole. A missing object wraps
// ErrNotFound; S3 failures wrap ErrUnavailable.
func (s *Store) GetMetricsObject(ctx context.Context, key string) ([]byte, error) {
	data, _, err := s.get(ctx, s.metrics, key)
	return data, err
}

// GetMetricsObjectVersion is GetMetricsObject with the ETag of the version read ("" when the
// store gave none).
func (s *Store) GetMetricsObjectVersion(ctx context.Context, key string) ([]byte, string, error) {
	data, out, err := s.getObject(ctx, s.metrics, key)
	if err != nil {
		return nil, "", err
	}
	return data, aws.ToString(out.ETag), nil
}

// PutMetricsObject writes data (see EncodeMetrics) at key of the metrics bucket.
func (s *Store) PutMetricsObject(ctx context.Context, key string, data []byte) error {
	return s.put(ctx, s.metrics, key, MetricsContentType, data)
}

// ArchivedComponents lists the component folders of a capability in the metrics bucket (one
// ListObjectsV2 with a delimiter per 1000 components).
func (s *Store) ArchivedComponents(ctx context.Context, capabilityID string) ([]string, error) {
	prefix := capabilityMetricsPrefix(capabilityID)
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.metrics), Prefix: aws.String(prefix), Delimiter: aws.String("/"), MaxKeys: aws.Int32(s.listPage)}
	var ids []string
	for {
		out, err := s.s3.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, classify("list archived components", err)
		}
		for _, cp := range out.CommonPrefixes {
			id := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(cp.Prefix), prefix), "/")
			if catalog.ValidateID("componentId", id) == nil {
				ids = append(ids, id)
			}
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return ids, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// ListArchivedHours returns one page (one ListObjectsV2) of a component's hour objects in time
// order: from the first hour when token is nil, from the hour of from (zero: the first) when
// it starts a listing, and after the previous page given its token. Objects whose key is not an
// hour's are skipped. next is nil after the last page.
func (s *Store) ListArchivedHours(ctx context.Context, capabilityID, componentID string, from time.Time, token *string) (hours []ArchivedHour, next *string, err error) {
	prefix := componentMetricsPrefix(capabilityID, componentID)
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.metrics), Prefix: aws.String(prefix), MaxKeys: aws.Int32(s.listPage)}
	if token != nil {
		in.ContinuationToken = token
	} else if !from.IsZero() {
		in.StartAfter = aws.String(metricsKeyFloor(capabilityID, componentID, from.Truncate(time.Hour)))
	}
	out, err := listed(s.lists, "hours|"+s.metrics+"|"+prefix+"|"+aws.ToString(in.StartAfter)+"|"+aws.ToString(in.ContinuationToken), func() (*s3.ListObjectsV2Output, error) {
		return s.s3.ListObjectsV2(ctx, in)
	})
	if err != nil {
		return nil, nil, classify("list archived hours of "+componentID, err)
	}
	for _, o := range out.Contents {
		key := aws.ToString(o.Key)
		hour, err := parseMetricsKey(prefix, key)
		if err != nil {
			continue // not an archive object: ignore it
		}
		hours = append(hours, ArchivedHour{Key: key, Hour: hour, ETag: aws.ToString(o.ETag)})
	}
	if !aws.ToBool(out.IsTruncated) {
		return hours, nil, nil
	}
	return hours, out.NextContinuationToken, nil
}
