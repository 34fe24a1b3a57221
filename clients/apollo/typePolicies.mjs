// The documented InMemoryCache configuration of the catalogue (docs/clients.md):
//
//   import { InMemoryCache } from "@apollo/client";
//   import { typePolicies } from "./typePolicies.mjs";
//   const cache = new InMemoryCache({ typePolicies });
//
// Objects with an `id` are normalised by `__typename:id` (Apollo's default keyFields): every id
// names one object of its type across the catalogue. Objects without an `id` are kept inside
// their parent; `merge: true` lets two views that select different fields of one (Aggregates,
// ComponentHealth, ...) add up instead of replacing each other ("Cache data may be lost").
// The lists of id-less objects are replaced as a whole (`merge: false`: a rule's conditions are
// the ones last read). The cursor connections are kept one list per set of arguments other than
// `first`/`after`, a page read with `after` appended to the pages before it.
//
// The blocks between BEGIN and END are JSON that clients/apollo_test.go checks against
// schema.graphqls: every object type without an `id` reachable from a field has a policy.

// BEGIN mergeTypes
const mergeTypes = [
  "Action", "ActionResult", "Actor", "Aggregates", "Alert", "AlertThreshold", "Architecture", "ArchiveReport",
  "Artifact", "ArtifactUpload", "AvailabilityChain", "AvailabilityValue", "BusinessMetrics",
  "Caller", "Canary", "CapabilityStatusCount", "CatalogueSummary", "Compliance", "ComponentHealth",
  "ComponentSla", "ComponentTrends", "ComponentTypeCount", "Condition", "ConditionResult", "Configuration",
  "Contract", "DependencyGraph", "DependencyInterface", "Deployment", "DomainCount", "Endpoint",
  "ErrorsValue", "Fallback", "HealthStatusCount", "Impact", "ImpactedComponent", "JobArtifacts",
  "JobMetrics", "JobTypeCount", "LatencyValue", "Lifecycle", "Metric", "MetricAlerts", "MetricRollup",
  "MetricValues", "Monitoring", "Notification", "Owner", "Ownership", "PageInfo", "PerformanceRequirements",
  "PostDeployment", "PreDeployment", "PriorityCount", "RecordMetricsPayload", "Repository",
  "Requirements", "Resources", "Rollback", "RuleEvaluation", "RuleMetadata", "RuleMetrics",
  "SaturationValue", "Sla", "SlaReport", "Stat", "Strategy", "TargetComponent", "Technology",
  "ThroughputValue", "Trends", "Validation"
]
// END mergeTypes

// BEGIN replacedLists
const replacedLists = {
  "Capability": ["evaluateRules", "tags"],
  "CatalogueSummary": ["byDomain", "byStatus", "byPriority", "byHealthStatus", "componentsByType", "componentsByHealthStatus", "activeJobsByType"],
  "CapabilityVersion": ["tags"],
  "Component": ["metricRollups"],
  "Deployment": ["endpoints"],
  "Impact": ["affected"],
  "Job": ["targetComponents", "artifacts"],
  "MetricAlerts": ["active", "resolved"],
  "RecordMetricsPayload": ["metrics"],
  "Rule": ["conditions", "actions"],
  "RuleEvaluation": ["conditions"],
  "RuleVersion": ["conditions", "actions"],
  "SlaReport": ["components", "chains"]
}
// END replacedLists

// BEGIN paginatedFields
const paginatedFields = {
  "Query": ["capabilities", "capabilitiesByDomain", "capabilitiesByHealth", "componentsByType", "capabilityHistory", "componentMetrics", "changes", "components", "activeJobs", "owners"],
  "Capability": ["jobs", "metrics", "history", "changes", "notifications"],
  "Component": ["metrics"],
  "Job": ["componentMetrics"],
  "Owner": ["capabilities", "components"],
  "Rule": ["history"]
}
// END paginatedFields

// The connections' own types (XConnection, XEdge) are never merged by type: their field policy
// (cursorPagination) owns them.

/**
 * cursorPagination is the field policy of a connection `{ edges, nodes, pageInfo }` paged with
 * `first`/`after`: one cached list per value of the other arguments; a page fetched with
 * `after` is appended (edges and nodes), a page without `after` replaces the list.
 */
export function cursorPagination() {
  return {
    keyArgs: (args) => {
      const rest = Object.keys(args ?? {}).filter((k) => k !== "first" && k !== "after").sort();
      return rest.length ? rest : false;
    },
    merge(existing, incoming, { args }) {
      if (!existing || !args?.after) return incoming;
      return {
        ...incoming,
        edges: [...(existing.edges ?? []), ...(incoming.edges ?? [])],
        nodes: [...(existing.nodes ?? []), ...(incoming.nodes ?? [])],
      };
    },
  };
}

/** typePolicies is the `typePolicies` option of InMemoryCache for the catalogue's schema. */
export const typePolicies = (() => {
  const p = {};
  const at = (t) => (p[t] ??= {});
  for (const t of mergeTypes) at(t).merge = true;
  for (const [t, fields] of Object.entries(replacedLists)) {
    for (const f of fields) ((at(t).fields ??= {})[f] = { merge: false });
  }
  for (const [t, fields] of Object.entries(paginatedFields)) {
    for (const f of fields) ((at(t).fields ??= {})[f] = cursorPagination());
  }
  return p;
})();
