package blob

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// MetricsContentType is the Content-Type of an archived metrics object. The object is a gzip
// file, stored without Content-Encoding so that no HTTP layer unpacks it on the way.
const MetricsContentType = "application/gzip"

// MaxMetricsObjectSize bounds how large an archived metrics object may be when read back,
// decompressed: a component-hour holds at most 60 one-minute samples of each metric type.
const MaxMetricsObjectSize = 64 << 20

// SortMetrics orders samples by time, then metric type (then component, for mixed sets).
func SortMetrics(ms []*catalog.Metric) {
	sort.SliceStable(ms, func(i, j int) bool { return MetricLess(ms[i], ms[j]) })
}

// MetricLess is the order of archived samples and of merged reads (archive.Archiver.Metrics):
// timestamp, component, metric type.
func MetricLess(a, b *catalog.Metric) bool {
	if !a.Timestamp.Equal(b.Timestamp.Time) {
		return a.Timestamp.Before(b.Timestamp.Time)
	}
	if a.ComponentID != b.ComponentID {
		return a.ComponentID < b.ComponentID
	}
	return a.MetricType < b.MetricType
}

// EncodeMetrics returns the archived form of samples: a gzip file (no name, zero modification
// time, so the same samples always give the same bytes) of a JSON array with one sample per
// line, each the catalog.Metric JSON with the seed's field names, sorted by time then metric
// type.
func EncodeMetrics(samples []*catalog.Metric) ([]byte, error) {
	ms := append([]*catalog.Metric(nil), samples...)
	SortMetrics(ms)
	var raw bytes.Buffer
	raw.WriteString("[\n")
	for i, m := range ms {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode metrics: %w", err)
		}
		raw.Write(b)
		if i < len(ms)-1 {
			raw.WriteByte(',')
		}
		raw.WriteByte('\n')
	}
	raw.WriteString("]\n")
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("encode metrics: %w", err)
	}
	zw.Header = gzip.Header{ModTime: time.Time{}, OS: 255}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, fmt.Errorf("encode metrics: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode metrics: %w", err)
	}
	return out.Bytes(), nil
}

// DecodeMetrics reads an archived metrics object written by EncodeMetrics. It returns an error
// wrapping ErrCorrupt when the bytes are not gzip, not a JSON array of samples, or unpack to
// more than MaxMetricsObjectSize.
func DecodeMetrics(data []byte) ([]*catalog.Metric, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode metrics: %w: %w", ErrCorrupt, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, MaxMetricsObjectSize+1))
	if err != nil {
		return nil, fmt.Errorf("decode metrics: %w: %w", ErrCorrupt, err)
	}
	if len(raw) > MaxMetricsObjectSize {
		return nil, fmt.Errorf("decode metrics: %w: over %d bytes unpacked", ErrCorrupt, MaxMetricsObjectSize)
	}
	var ms []*catalog.Metric
	if err := json.Unmarshal(raw, &ms); err != nil {
		return nil, fmt.Errorf("decode metrics: %w: %w", ErrCorrupt, err)
	}
	for i, m := range ms {
		if m == nil {
			return nil, fmt.Errorf("decode metrics: %w: sample %d is null", ErrCorrupt, i)
		}
	}
	return ms, nil
}

// sampleKey is what identifies a sample within a component-hour.
type sampleKey struct {
	capabilityID, componentID string
	metricType                catalog.MetricType
	timestamp                 time.Time
}

func (k sampleKey) String() string {
	return k.capabilityID + "/" + k.componentID + "/" + string(k.metricType) + "/" + k.timestamp.Format(catalog.TimeLayout)
}

// CheckHour returns an error wrapping ErrCorrupt unless every sample belongs to the
// component-hour (capability, component, hour) and no key repeats.
func CheckHour(ms []*catalog.Metric, capabilityID, componentID string, hour time.Time) error {
	seen := make(map[sampleKey]bool, len(ms))
	for _, m := range ms {
		k := sampleKey{m.CapabilityID, m.ComponentID, m.MetricType, m.Timestamp.UTC().Truncate(time.Microsecond)}
		switch {
		case m.CapabilityID != capabilityID || m.ComponentID != componentID:
			return fmt.Errorf("%w: sample %s is not of %s/%s", ErrCorrupt, k, capabilityID, componentID)
		case !m.Timestamp.Truncate(time.Hour).Equal(hour):
			return fmt.Errorf("%w: sample %s is not of the hour %s", ErrCorrupt, k, hour.Format(time.RFC3339))
		case !m.MetricType.Valid():
			return fmt.Errorf("%w: sample %s has no valid metric type", ErrCorrupt, k)
		case seen[k]:
			return fmt.Errorf("%w: sample %s appears twice", ErrCorrupt, k)
		}
		seen[k] = true
	}
	return nil
}
