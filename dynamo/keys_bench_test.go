package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/sample"
)

// Micro-benchmarks of the store's hot paths without DynamoDB: key building and parsing, item
// encoding and decoding, range planning.
//
//	go test ./dynamo/ -run '^$' -bench . -benchmem

var (
	benchTime = time.Date(2025, 11, 22, 10, 0, 0, 0, time.UTC)
	sinkS     string
	sinkN     int
	sinkErr   error
)

func BenchmarkKeyBuild(b *testing.B) {
	b.Run("componentSK", func(b *testing.B) {
		for b.Loop() {
			sinkS = componentSK(3, "api-server-alert-001")
		}
	})
	b.Run("dependencySK", func(b *testing.B) {
		for b.Loop() {
			sinkS = dependencySK("api-server-alert-001", "database-alert-001")
		}
	})
	b.Run("jobSK", func(b *testing.B) {
		for b.Loop() {
			sinkS = jobSK(benchTime, "JOB-DEPLOY-456")
		}
	})
	b.Run("metricSK", func(b *testing.B) {
		for b.Loop() {
			sinkS = metricSK("api-server-alert-001", catalog.MetricPerformance, benchTime)
		}
	})
	b.Run("ruleSK", func(b *testing.B) {
		for b.Loop() {
			sinkS = ruleSK(1, "rule-alert-severity-mapping")
		}
	})
	b.Run("capabilityGSI1SK", func(b *testing.B) {
		for b.Loop() {
			sinkS = capabilityGSI1SK("operations", catalog.PriorityCritical, "Alert Management")
		}
	})
	b.Run("healthGSI1SK", func(b *testing.B) {
		for b.Loop() {
			sinkS = healthGSI1SK(97.25, "CAP-ALERT-MGT-001")
		}
	})
	b.Run("ValidateID", func(b *testing.B) {
		for b.Loop() {
			sinkErr = ValidateID("id", "CAP-ALERT-MGT-001")
		}
	})
}

func BenchmarkKeyParse(b *testing.B) {
	component := componentSK(3, "api-server-alert-001")
	dependency := dependencySK("api-server-alert-001", "database-alert-001")
	job := jobSK(benchTime, "JOB-DEPLOY-456")
	metric := metricSK("api-server-alert-001", catalog.MetricPerformance, benchTime)
	rule := ruleSK(1, "rule-alert-severity-mapping")
	b.Run("componentSK", func(b *testing.B) {
		for b.Loop() {
			sinkN, sinkS, sinkErr = parseComponentSK(component)
		}
	})
	b.Run("dependencySK", func(b *testing.B) {
		for b.Loop() {
			sinkS, _, sinkErr = parseDependencySK(dependency)
		}
	})
	b.Run("jobSK", func(b *testing.B) {
		for b.Loop() {
			_, sinkS, sinkErr = parseJobSK(job)
		}
	})
	b.Run("metricSK", func(b *testing.B) {
		for b.Loop() {
			sinkS, _, _, sinkErr = parseMetricSK(metric)
		}
	})
	b.Run("ruleSK", func(b *testing.B) {
		for b.Loop() {
			sinkN, sinkS, sinkErr = parseRuleSK(rule)
		}
	})
}

// benchItems returns one stored item of each kind from the sample catalogue, as DynamoDB
// returns them (attribute value maps).
func benchItems(b *testing.B) map[string]map[string]types.AttributeValue {
	b.Helper()
	bundle := sample.Catalogue(benchTime)[0]
	out := map[string]map[string]types.AttributeValue{}
	add := func(name string, it *item, err error) {
		if err != nil {
			b.Fatal(err)
		}
		av, err := it.av()
		if err != nil {
			b.Fatal(err)
		}
		out[name] = av
	}
	caps, err := capabilityItems(bundle.Capability, benchTime)
	if err != nil {
		b.Fatal(err)
	}
	add("capability", caps[0], nil)
	it, err := componentItem(bundle.Components[1], benchTime)
	add("component", it, err)
	it, err = dependencyItem(bundle.Dependencies[1], benchTime)
	add("dependency", it, err)
	it, err = jobItem(bundle.Jobs[0], benchTime)
	add("job", it, err)
	it, err = metricItem(bundle.Metrics[len(bundle.Metrics)-1], benchTime)
	add("metric", it, err)
	it, err = ruleItem(bundle.Rules[0], benchTime)
	add("rule", it, err)
	return out
}

// BenchmarkItemDecode reads a stored item into its entity: the envelope (readItem), then Data
// through attributevalue (to*). This runs once per item every read returns.
func BenchmarkItemDecode(b *testing.B) {
	items := benchItems(b)
	decoders := []struct {
		name string
		to   func(*item) error
	}{
		{"capability", func(it *item) error { _, err := toCapability(it); return err }},
		{"component", func(it *item) error { _, err := toComponent(it); return err }},
		{"dependency", func(it *item) error { _, err := toDependency(it); return err }},
		{"job", func(it *item) error { _, err := toJob(it); return err }},
		{"metric", func(it *item) error { _, err := toMetric(it); return err }},
		{"rule", func(it *item) error { _, err := toRule(it); return err }},
	}
	for _, d := range decoders {
		raw := items[d.name]
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				it, err := readItem(raw)
				if err != nil {
					b.Fatal(err)
				}
				if err := d.to(it); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("envelope only", func(b *testing.B) {
		raw := items["component"]
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readItem(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkItemEncode builds the stored item of an entity (keys, envelope, Data through
// attributevalue), as every write and the bulk loader do.
func BenchmarkItemEncode(b *testing.B) {
	bundle := sample.Catalogue(benchTime)[0]
	b.Run("component", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			it, err := componentItem(bundle.Components[1], benchTime)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := it.av(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("metric", func(b *testing.B) {
		m := bundle.Metrics[len(bundle.Metrics)-1]
		b.ReportAllocs()
		for b.Loop() {
			it, err := metricItem(m, benchTime)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := it.av(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPlanRanges plans the Queries for every set of segments.
func BenchmarkPlanRanges(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for want := range Segment(8) {
			sinkN += len(PlanRanges(want))
		}
	}
}
