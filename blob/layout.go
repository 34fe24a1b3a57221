package blob

import (
	"fmt"
	"mime"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// Every object key of both buckets is built and parsed in this file, and nowhere else.

// The standard artifact names of a job, relative to its prefix (the seed's layout).
const (
	ArtifactDeploymentPlan      = "deployment-plan.yaml"
	ArtifactPreDeploymentLog    = "logs/pre-deployment.log"
	ArtifactDeploymentLog       = "logs/deployment.log"
	ArtifactPostDeploymentLog   = "logs/post-deployment.log"
	ArtifactTestResults         = "reports/test-results.json"
	ArtifactPerformanceBaseline = "reports/performance-baseline.json"
)

// Limits of artifact names and content types.
const (
	// MaxArtifactNameLength bounds an artifact name, in bytes.
	MaxArtifactNameLength = 256
	// MaxArtifactNameDepth bounds the number of '/'-separated segments of an artifact name.
	MaxArtifactNameDepth = 8
	// MaxContentTypeLength bounds a content type given for an upload.
	MaxContentTypeLength = 128
)

const (
	capabilitiesDir = "capabilities/"
	jobsDir         = "/jobs/"
	componentsDir   = "/components/"
	metricsFile     = "metrics-"
	metricsExt      = ".json.gz"
	// hourPath is the date path of a metrics object: zero-padded, so that key order is time
	// order.
	hourPath = "2006/01/02/"
)

// segmentPattern is what each '/'-separated segment of an artifact name must match: it starts
// with a letter or digit, so "." and ".." (and hidden names) cannot occur.
var segmentPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidateArtifactName returns a *catalog.ValidationError on field "name" unless name is a
// relative artifact name that stays inside a job's prefix: 1 to MaxArtifactNameLength bytes, at
// most MaxArtifactNameDepth segments separated by '/', each segment starting with a letter or
// digit and holding only letters, digits, '.', '_' and '-'. So "..", "a/../b", "/etc/passwd",
// "a//b", "a/", and "a\b" are all refused.
func ValidateArtifactName(name string) error {
	switch {
	case name == "":
		return catalog.Invalid("name", "is required")
	case len(name) > MaxArtifactNameLength:
		return catalog.Invalid("name", "is %d bytes long, over the limit of %d", len(name), MaxArtifactNameLength)
	case strings.HasPrefix(name, "/"):
		return catalog.Invalid("name", "%q is absolute: give a name relative to the job, such as %q", name, ArtifactDeploymentLog)
	case strings.Contains(name, `\`):
		return catalog.Invalid("name", "%q contains a backslash: separate segments with '/'", name)
	}
	segments := strings.Split(name, "/")
	if len(segments) > MaxArtifactNameDepth {
		return catalog.Invalid("name", "%q has %d segments, over the limit of %d", name, len(segments), MaxArtifactNameDepth)
	}
	for _, seg := range segments {
		switch {
		case seg == "":
			return catalog.Invalid("name", "%q has an empty segment", name)
		case seg == "." || seg == "..":
			return catalog.Invalid("name", "%q has a %q segment: names cannot leave the job's prefix", name, seg)
		case !segmentPattern.MatchString(seg):
			return catalog.Invalid("name", "%q: segment %q must start with a letter or digit and hold only letters, digits, '.', '_' and '-'", name, seg)
		}
	}
	return nil
}

func validateJob(capabilityID, jobID string) error {
	if err := catalog.ValidateID("capabilityId", capabilityID); err != nil {
		return err
	}
	return catalog.ValidateID("jobId", jobID)
}

// jobPrefix is the key prefix of a job's artifacts; the IDs are validated.
func jobPrefix(capabilityID, jobID string) string {
	return capabilitiesDir + capabilityID + jobsDir + jobID + "/"
}

// artifactKey returns the key of a job's artifact after validating the IDs and the name, and
// checking that the key, cleaned, is still under the job's prefix.
func artifactKey(capabilityID, jobID, name string) (string, error) {
	if err := validateJob(capabilityID, jobID); err != nil {
		return "", err
	}
	if err := ValidateArtifactName(name); err != nil {
		return "", err
	}
	prefix := jobPrefix(capabilityID, jobID)
	key := prefix + name
	if path.Clean(key) != key || !strings.HasPrefix(key, prefix) {
		return "", catalog.Invalid("name", "%q leaves the job's prefix", name)
	}
	return key, nil
}

// artifactName returns the name of key relative to the job's prefix.
func artifactName(prefix, key string) (string, bool) {
	name, ok := strings.CutPrefix(key, prefix)
	return name, ok && name != ""
}

// s3URI returns the s3:// URI of a key.
func s3URI(bucket, key string) string { return "s3://" + bucket + "/" + key }

// JobArtifactURIs returns the S3 URIs of a job's plan, logs folder and reports folder in the
// seed's layout, in the shape of catalog.JobArtifacts. The IDs must be valid IDs (see
// catalog.ValidateID); it returns a *catalog.ValidationError otherwise.
func (s *Store) JobArtifactURIs(capabilityID, jobID string) (*catalog.JobArtifacts, error) {
	if err := validateJob(capabilityID, jobID); err != nil {
		return nil, err
	}
	base := s3URI(s.artifacts, jobPrefix(capabilityID, jobID))
	return &catalog.JobArtifacts{DeploymentPlan: base + ArtifactDeploymentPlan, Logs: base + "logs/", Reports: base + "reports/"}, nil
}

// contentTypes maps the extensions of the seed's artifacts (and a few more) to content types.
var contentTypes = map[string]string{
	".yaml": "application/yaml",
	".yml":  "application/yaml",
	".log":  "text/plain; charset=utf-8",
	".txt":  "text/plain; charset=utf-8",
	".json": "application/json",
	".gz":   "application/gzip",
	".html": "text/html; charset=utf-8",
	".xml":  "application/xml",
	".csv":  "text/csv; charset=utf-8",
}

// ContentTypeFor returns the content type an artifact name implies from its extension:
// application/yaml for .yaml, text/plain for .log, application/json for .json and so on, and
// application/octet-stream for an extension it does not know.
func ContentTypeFor(name string) string {
	if ct, ok := contentTypes[strings.ToLower(path.Ext(name))]; ok {
		return ct
	}
	return "application/octet-stream"
}

// validateContentType returns a *catalog.ValidationError on field "contentType" unless ct is a
// media type (type/subtype with optional parameters) of at most MaxContentTypeLength bytes.
func validateContentType(ct string) error {
	if len(ct) > MaxContentTypeLength {
		return catalog.Invalid("contentType", "is %d bytes long, over the limit of %d", len(ct), MaxContentTypeLength)
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !strings.Contains(mt, "/") || strings.ContainsAny(ct, "\r\n") {
		return catalog.Invalid("contentType", "%q is not a media type such as \"application/json\"", ct)
	}
	return nil
}

// componentMetricsPrefix is the key prefix of one component's archived metrics.
func componentMetricsPrefix(capabilityID, componentID string) string {
	return capabilityMetricsPrefix(capabilityID) + componentID + "/"
}

// capabilityMetricsPrefix is the key prefix under which each component of a capability has its
// folder of archived metrics.
func capabilityMetricsPrefix(capabilityID string) string {
	return capabilitiesDir + capabilityID + componentsDir
}

// MetricsKey returns the key of the archived metrics of one component-hour:
// capabilities/{capability}/components/{component}/{yyyy}/{mm}/{dd}/metrics-{hh}.json.gz, the
// hour in UTC. The IDs are not validated here.
func MetricsKey(capabilityID, componentID string, hour time.Time) string {
	h := hour.UTC()
	return componentMetricsPrefix(capabilityID, componentID) + h.Format(hourPath) + metricsFile + h.Format("15") + metricsExt
}

// metricsKeyFloor returns a string that sorts just before the key of hour and after the keys
// of every earlier hour of the component: the StartAfter of a listing that begins at hour.
func metricsKeyFloor(capabilityID, componentID string, hour time.Time) string {
	return strings.TrimSuffix(MetricsKey(capabilityID, componentID, hour), metricsExt)
}

// parseMetricsKey returns the hour of an archived metrics key under prefix.
func parseMetricsKey(prefix, key string) (time.Time, error) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok || !strings.HasSuffix(rest, metricsExt) {
		return time.Time{}, fmt.Errorf("parse metrics key %q: not under %q", key, prefix)
	}
	rest = strings.TrimSuffix(rest, metricsExt)
	h, err := time.Parse(hourPath+metricsFile+"15", rest)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse metrics key %q: want yyyy/mm/dd/metrics-hh.json.gz", key)
	}
	return h.UTC(), nil
}
