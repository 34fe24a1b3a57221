package dynamo_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

func TestItemsFollowKeyPatterns(t *testing.T) {
	env := newEnv(t)
	bundles := loadSample(t, env)
	items := partitionItems(t, env, "CAPABILITY#"+alertID)
	alert := bundleOf(t, bundles, alertID)
	if want := itemCount([]*catalog.Bundle{alert}) - len(alert.Components); len(items) != want { // the claims live outside
		t.Errorf("Query(PK = CAPABILITY#%s) = %d items, want %d", alertID, len(items), want)
	}
	metricAt := "2025-11-22T14:30:00.000000Z"
	metricTTL := strconv.FormatInt(time.Date(2025, 11, 22, 14, 30, 0, 0, time.UTC).Add(90*24*time.Hour).Unix(), 10)

	tests := []struct {
		sk, entity, gsi1pk, gsi1sk string
		attrs                      map[string]string // path -> rendered scalar
	}{
		{"METADATA", "Capability", "CAPABILITIES", "operations#01#alert-management", map[string]string{
			"CreatedAt":                       "2025-11-22T09:00:00.000000Z",
			"UpdatedAt":                       "2025-11-22T14:30:00.000000Z",
			"Data.capabilityId":               alertID,
			"Data.name":                       "Alert Management",
			"Data.businessDomain":             "operations",
			"Data.priority":                   "critical",
			"Data.businessMetrics.sla":        "99.99%",
			"Data.architecture.redundancy":    "active-active",
			"Data.compliance.lastAudit":       "2025-10-15T00:00:00.000000Z",
			"Data.aggregates.totalComponents": "4",
			"Data.aggregates.healthStatus":    "healthy",
			"Data.lifecycle.phase":            "production",
		}},
		{"INDEX#DOMAIN", "CapabilityDomainIndex", "DOMAIN#operations", "01#alert-management", map[string]string{
			"Data.capabilityId":               alertID,
			"Data.aggregates.totalComponents": "4",
		}},
		{"INDEX#HEALTH", "CapabilityHealthIndex", "HEALTH#healthy", "097#" + alertID, map[string]string{
			"Data.capabilityId":           alertID,
			"Data.aggregates.healthScore": "97.5",
		}},
		{"COMPONENT#01#ui-dashboard-alert-001", "SoftwareComponent", "COMPONENT#ui-dashboard", alertID + "#ui-dashboard-alert-001", map[string]string{
			"Data.componentId":                         "ui-dashboard-alert-001",
			"Data.capabilityId":                        alertID,
			"Data.componentType":                       "ui-dashboard",
			"Data.order":                               "1",
			"Data.technology.framework":                "next.js",
			"Data.configuration.featureFlags.darkMode": "true",
		}},
		{"DEPENDENCY#api-server-alert-001#database-alert-001", "ComponentDependency", "CAPABILITY#" + alertID + "#DEPENDENCIES", "01#api-server-alert-001#database-alert-001", map[string]string{
			"Data.sourceComponentId":                   "api-server-alert-001",
			"Data.targetComponentId":                   "database-alert-001",
			"Data.criticality":                         "critical",
			"Data.interface.poolSize":                  "20",
			"Data.requirements.performance.maxLatency": "10ms",
		}},
		{"JOB#2025-11-22T10:00:00.000000Z#JOB-DEPLOY-456", "ImplementationJob", "JOB#JOB-DEPLOY-456", "2025-11-22T10:00:00.000000Z", map[string]string{
			"CreatedAt":                       "2025-11-22T10:00:00.000000Z",
			"Data.jobId":                      "JOB-DEPLOY-456",
			"Data.jobType":                    "deployment",
			"Data.status":                     "completed",
			"Data.startTime":                  "2025-11-22T10:00:00.000000Z",
			"Data.duration":                   "900",
			"Data.strategy.canary.percentage": "10",
		}},
		{"METRIC#api-server-alert-001#performance#" + metricAt, "PerformanceMetric", "METRICS#api-server-alert-001", metricAt, map[string]string{
			"CreatedAt":                     metricAt,
			"TTL":                           metricTTL,
			"Data.componentId":              "api-server-alert-001",
			"Data.metricType":               "performance",
			"Data.timestamp":                metricAt,
			"Data.dimensions.region":        "us-east-1",
			"Data.values.availability.unit": "percent",
		}},
		{"RULE#001#rule-alert-severity-mapping", "ConfigurationRule", "CAPABILITY#" + alertID + "#RULES", "business#001#rule-alert-severity-mapping", map[string]string{
			"Data.ruleId":                 "rule-alert-severity-mapping",
			"Data.ruleType":               "business",
			"Data.priority":               "high",
			"Data.order":                  "1",
			"Data.metrics.executionCount": "45230",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.sk, func(t *testing.T) {
			it, ok := items[tt.sk]
			if !ok {
				var sks []string
				for sk := range items {
					if !strings.HasPrefix(sk, "METRIC#") {
						sks = append(sks, sk)
					}
				}
				sort.Strings(sks)
				t.Fatalf("item (CAPABILITY#%s, %q) missing; non-metric SKs: %v", alertID, tt.sk, sks)
			}
			want := map[string]string{
				"PK":         "CAPABILITY#" + alertID,
				"SK":         tt.sk,
				"EntityType": tt.entity,
				"GSI1PK":     tt.gsi1pk,
				"GSI1SK":     tt.gsi1sk,
				"Revision":   "1",
			}
			for k, v := range tt.attrs {
				want[k] = v
			}
			for path, w := range want {
				if got := render(attrAt(it, path)); got != w {
					t.Errorf("item %s: %s = %q, want %q", tt.sk, path, got, w)
				}
			}
			if tt.entity != "PerformanceMetric" {
				if ttl, ok := it["TTL"]; ok {
					t.Errorf("item %s: TTL = %s, want none (only metrics expire)", tt.sk, render(ttl))
				}
			}
		})
	}

	t.Run("index items copy METADATA's Data", func(t *testing.T) {
		meta := items["METADATA"]["Data"]
		for _, sk := range []string{"INDEX#DOMAIN", "INDEX#HEALTH"} {
			if !jsonEqualAV(meta, items[sk]["Data"]) {
				t.Errorf("item %s: Data differs from METADATA's", sk)
			}
		}
	})

	t.Run("every item has the envelope", func(t *testing.T) {
		all := scanAll(t, env)
		if want := itemCount(bundles); len(all) != want {
			t.Errorf("Scan = %d items, want %d", len(all), want)
		}
		prefixes := map[string]string{
			"METADATA": "Capability", "INDEX#DOMAIN": "CapabilityDomainIndex", "INDEX#HEALTH": "CapabilityHealthIndex",
			"COMPONENT#": "SoftwareComponent", "DEPENDENCY#": "ComponentDependency", "JOB#": "ImplementationJob",
			"METRIC#": "PerformanceMetric", "RULE#": "ConfigurationRule", "INDEX#C#": "CapabilityCard",
			"INDEX#COMP#": "ComponentIndex", "INDEX#ACTIVEJOB#": "ActiveJobIndex", "ROLLUP#": "MetricRollup",
		}
		owners := map[string]string{}
		for _, b := range bundles {
			for _, c := range b.Components {
				owners[c.ComponentID] = b.Capability.CapabilityID
			}
		}
		bad, claims := 0, 0
		for _, it := range all {
			pk, sk := render(it["PK"]), render(it["SK"])
			var problems []string
			if id, ok := strings.CutPrefix(pk, "COMPONENTID#"); ok {
				// A component ID's claim: outside every partition, naming its capability.
				claims++
				if sk != "CLAIM" || render(it["EntityType"]) != "ComponentClaim" || render(attrAt(it, "Data.componentId")) != id ||
					render(attrAt(it, "Data.capabilityId")) != owners[id] || it["GSI1PK"] != nil {
					t.Errorf("claim item (%s, %s) = %v", pk, sk, it)
				}
				continue
			}
			if !strings.HasPrefix(pk, "CAPABILITY#") {
				problems = append(problems, "PK not CAPABILITY#")
			}
			rollup := strings.HasPrefix(sk, "ROLLUP#") // metric rollups: no GSI1 entry, a TTL
			if rollup && (it["GSI1PK"] != nil || kind(it["TTL"]) != "N") {
				problems = append(problems, "a rollup with a GSI1 entry or without TTL")
			}
			for _, a := range []string{"PK", "SK", "EntityType", "GSI1PK", "GSI1SK", "CreatedAt", "UpdatedAt"} {
				if rollup && strings.HasPrefix(a, "GSI1") {
					continue
				}
				if k := kind(it[a]); k != "S" || render(it[a]) == "" {
					problems = append(problems, fmt.Sprintf("%s is %s %q", a, k, render(it[a])))
				}
			}
			for _, a := range []string{"CreatedAt", "UpdatedAt"} {
				if _, err := time.Parse(catalog.TimeLayout, render(it[a])); err != nil {
					problems = append(problems, fmt.Sprintf("%s %q not in %s", a, render(it[a]), catalog.TimeLayout))
				}
			}
			if k := kind(it["Revision"]); k != "N" || render(it["Revision"]) != "1" {
				problems = append(problems, fmt.Sprintf("Revision is %s %s", k, render(it["Revision"])))
			}
			if k := kind(it["Data"]); k != "M" {
				problems = append(problems, "Data is "+k)
			}
			matched := false
			for p, entity := range prefixes {
				if sk == p || (strings.HasSuffix(p, "#") && strings.HasPrefix(sk, p)) {
					matched = true
					if got := render(it["EntityType"]); got != entity {
						problems = append(problems, fmt.Sprintf("EntityType %q, want %q", got, entity))
					}
				}
			}
			if !matched {
				problems = append(problems, "unknown SK")
			}
			if id := render(attrAt(it, "Data.capabilityId")); "CAPABILITY#"+id != pk {
				problems = append(problems, fmt.Sprintf("Data.capabilityId %q", id))
			}
			if strings.HasPrefix(sk, "METRIC#") {
				ts, err := time.Parse(catalog.TimeLayout, render(attrAt(it, "Data.timestamp")))
				if err != nil || render(it["TTL"]) != strconv.FormatInt(ts.Add(90*24*time.Hour).Unix(), 10) || kind(it["TTL"]) != "N" {
					problems = append(problems, fmt.Sprintf("TTL %s %s for timestamp %s", kind(it["TTL"]), render(it["TTL"]), render(attrAt(it, "Data.timestamp"))))
				}
				if !strings.HasSuffix(sk, "#"+render(attrAt(it, "Data.timestamp"))) || render(it["GSI1SK"]) != render(attrAt(it, "Data.timestamp")) {
					problems = append(problems, "metric keys do not carry Data.timestamp")
				}
			}
			if len(problems) > 0 {
				bad++
				if bad <= 10 {
					t.Errorf("item (%s, %s): %s", pk, sk, strings.Join(problems, "; "))
				}
			}
		}
		if bad > 10 {
			t.Errorf("... %d items with problems in all", bad)
		}
		if claims != len(owners) {
			t.Errorf("%d claims, want one per component ID (%d)", claims, len(owners))
		}
	})
}

// jsonEqualAV reports whether two attribute values hold the same data.
func jsonEqualAV(a, b types.AttributeValue) bool {
	var x, y any
	if err := attributevalue.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := attributevalue.Unmarshal(b, &y); err != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// ---------------------------------------------------------------------------------------------
// Leftovers and throttling.
