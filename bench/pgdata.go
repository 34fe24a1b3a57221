package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/capcat/catalogue/catalog"
)

// The data and the queries of the PostGraphile comparison (postgraphile.go): the sample
// catalogue as the relational schema a team would write for it, the same logical operations in
// both servers' GraphQL, and the normaliser that proves both answer identical data before
// anything is measured.

// pgSchema is the relational schema: one table per entity, foreign keys to the capability (and,
// for a dependency, to its source and target components), an index on every foreign key. The
// scalar fields the queries read are columns; the nested objects (business metrics, aggregates,
// a component's health and SLA, a rule's conditions and actions) are jsonb, as the catalogue
// keeps them (the aggregates are kept by the writer, as our store keeps them).
const pgSchema = `CREATE TABLE capability (
  id text PRIMARY KEY,
  name text NOT NULL,
  description text,
  business_domain text NOT NULL,
  status text NOT NULL,
  priority text NOT NULL,
  owner text,
  version text,
  tags text[] NOT NULL DEFAULT '{}',
  business_metrics jsonb,
  aggregates jsonb NOT NULL
);
CREATE TABLE component (
  id text PRIMARY KEY,
  capability_id text NOT NULL REFERENCES capability (id),
  name text NOT NULL,
  component_type text NOT NULL,
  sort_order int NOT NULL,
  layer text,
  status text NOT NULL,
  version text,
  health jsonb,
  sla jsonb
);
CREATE INDEX component_capability_id_idx ON component (capability_id);
CREATE TABLE dependency (
  id serial PRIMARY KEY,
  capability_id text NOT NULL REFERENCES capability (id),
  source_component_id text NOT NULL REFERENCES component (id),
  target_component_id text NOT NULL REFERENCES component (id),
  dependency_type text NOT NULL,
  criticality text NOT NULL
);
CREATE INDEX dependency_capability_id_idx ON dependency (capability_id);
CREATE INDEX dependency_source_component_id_idx ON dependency (source_component_id);
CREATE INDEX dependency_target_component_id_idx ON dependency (target_component_id);
CREATE TABLE rule (
  id text PRIMARY KEY,
  capability_id text NOT NULL REFERENCES capability (id),
  name text NOT NULL,
  rule_type text NOT NULL,
  status text NOT NULL,
  priority text NOT NULL,
  sort_order int NOT NULL,
  conditions jsonb NOT NULL,
  actions jsonb NOT NULL
);
CREATE INDEX rule_capability_id_idx ON rule (capability_id);
`

// pgSQL returns the schema and the rows of the bundles as one SQL script (for psql), in a
// transaction, then ANALYZE so the planner knows the tables.
func pgSQL(bundles []*catalog.Bundle) string {
	var b strings.Builder
	b.WriteString("BEGIN;\n")
	b.WriteString(pgSchema)
	insert := func(table, cols string, rows [][]string) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES\n", table, cols)
		for i, r := range rows {
			sep := ",\n"
			if i == len(rows)-1 {
				sep = ";\n"
			}
			fmt.Fprintf(&b, "  (%s)%s", strings.Join(r, ", "), sep)
		}
	}
	var caps, comps, deps, rules [][]string
	for _, bu := range bundles {
		c := bu.Capability
		caps = append(caps, []string{pgText(c.CapabilityID), pgText(c.Name), pgText(c.Description), pgText(c.BusinessDomain),
			pgText(string(c.Status)), pgText(string(c.Priority)), pgText(c.Owner), pgText(c.Version), pgTextArray(c.Tags),
			pgJSON(c.BusinessMetrics), pgJSON(c.Aggregates)})
		for _, x := range bu.Components {
			comps = append(comps, []string{pgText(x.ComponentID), pgText(c.CapabilityID), pgText(x.Name), pgText(x.ComponentType),
				strconv.Itoa(x.Order), pgText(x.Layer), pgText(string(x.Status)), pgText(x.Version), pgJSON(x.Health), pgJSON(x.Sla)})
		}
		for _, d := range bu.Dependencies {
			deps = append(deps, []string{pgText(c.CapabilityID), pgText(d.SourceComponentID), pgText(d.TargetComponentID),
				pgText(string(d.DependencyType)), pgText(string(d.Criticality))})
		}
		for _, r := range bu.Rules {
			rules = append(rules, []string{pgText(r.RuleID), pgText(c.CapabilityID), pgText(r.Name), pgText(string(r.RuleType)),
				pgText(string(r.Status)), pgText(string(r.Priority)), strconv.Itoa(r.Order), pgJSON(r.Conditions), pgJSON(r.Actions)})
		}
	}
	insert("capability", "id, name, description, business_domain, status, priority, owner, version, tags, business_metrics, aggregates", caps)
	insert("component", "id, capability_id, name, component_type, sort_order, layer, status, version, health, sla", comps)
	insert("dependency", "capability_id, source_component_id, target_component_id, dependency_type, criticality", deps)
	insert("rule", "id, capability_id, name, rule_type, status, priority, sort_order, conditions, actions", rules)
	b.WriteString("COMMIT;\nANALYZE;\n")
	return b.String()
}

// pgText is s as an SQL string literal (standard_conforming_strings, PostgreSQL's default since
// 9.1: only the quote is doubled; a backslash is an ordinary character).
func pgText(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func pgTextArray(xs []string) string {
	if len(xs) == 0 {
		return "'{}'::text[]"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = pgText(x)
	}
	return "ARRAY[" + strings.Join(q, ", ") + "]::text[]"
}

// pgJSON is v as a jsonb literal, NULL for a nil pointer or slice.
func pgJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil || string(raw) == "null" {
		return "NULL"
	}
	return pgText(string(raw)) + "::jsonb"
}

// The same logical operations in PostGraphile's GraphQL (PostGraphile 4 with
// @graphile-contrib/pg-simplify-inflector: relations named after their tables, connections with
// nodes). jsonb columns come back whole (--dynamic-json): a component's health is the whole
// object where ours asks four of its fields.
const pgCompleteViewQuery = `query CompleteView($id: String!) {
  capability(id: $id) {
    id name description businessDomain status priority owner version tags businessMetrics aggregates
    components(orderBy: SORT_ORDER_ASC) { nodes { id name componentType sortOrder layer status version health sla } }
    dependencies(orderBy: PRIMARY_KEY_ASC) { nodes { sourceComponentId targetComponentId dependencyType criticality
      sourceComponent { id name status } targetComponent { id name status } } }
    rules(orderBy: SORT_ORDER_ASC) { nodes { id name ruleType status priority sortOrder conditions actions } }
  }
}`

const pgListAllQuery = `query ListAll {
  capabilities(first: 50, orderBy: PRIMARY_KEY_ASC) {
    nodes { id name status priority
      components(orderBy: SORT_ORDER_ASC) { nodes { id name status componentType health } }
      dependencies(orderBy: PRIMARY_KEY_ASC) { nodes { sourceComponentId targetComponentId dependencyType criticality } }
      rules(orderBy: SORT_ORDER_ASC) { nodes { id name ruleType status priority } } }
    pageInfo { hasNextPage endCursor }
  }
}`

// pgTouchMutation is PostGraphile's write before each "after a write" read: it changes the
// capability's description, as touchMutation does ours.
const pgTouchMutation = `mutation Touch($id: String!, $d: String!) {
  updateCapability(input: {id: $id, patch: {description: $d}}) { capability { id } }
}`

// pgField maps one field of the normalised answer to where each server's answer has it: a
// dotted path, a segment ending in [] maps over a list. enum fields are compared in upper case
// (ours shows the stored lower-case vocabulary as GraphQL enum values).
type pgField struct {
	name, ours, pg string
	enum           bool
}

// pgEntity is one kind of object in an answer: where its list is, its key, its fields and the
// objects nested in it.
type pgEntity struct {
	kind      string
	ours, pg  string // path of the object or list (relative to the parent)
	key       pgField
	fields    []pgField
	children  []pgEntity
	keyFields []pgField // further fields that, with key, identify the object (a dependency's pair)
}

func same(names ...string) []pgField {
	out := make([]pgField, len(names))
	for i, n := range names {
		out[i] = pgField{name: n, ours: n, pg: n}
	}
	return out
}

func enums(names ...string) []pgField {
	out := same(names...)
	for i := range out {
		out[i].enum = true
	}
	return out
}

func cat(fs ...[]pgField) []pgField { return slices.Concat(fs...) }

// pgViewShape and pgListShape describe what the complete view and the list compare.
var (
	pgViewShape = pgEntity{
		kind: "capability", ours: "data.capability", pg: "data.capability",
		key: pgField{name: "id", ours: "id", pg: "id"},
		fields: cat(same("name", "description", "businessDomain", "owner", "version", "tags[]",
			"businessMetrics.sla", "businessMetrics.rto", "businessMetrics.rpo", "businessMetrics.criticalityLevel",
			"aggregates.totalComponents", "aggregates.activeComponents", "aggregates.healthScore",
			"aggregates.totalDependencies", "aggregates.totalJobs", "aggregates.totalRules", "aggregates.activeRules"),
			enums("status", "priority", "aggregates.healthStatus")),
		children: []pgEntity{
			{
				kind: "component", ours: "components[]", pg: "components.nodes[]",
				key: pgField{name: "id", ours: "componentId", pg: "id"},
				fields: cat(same("name", "componentType", "layer", "version",
					"health.availability", "health.responseTime", "health.errorRate", "sla.availability", "sla.responseTime", "sla.errorRate"),
					enums("status", "health.status"), []pgField{{name: "order", ours: "order", pg: "sortOrder"}}),
			},
			{
				kind: "dependency", ours: "dependencies[]", pg: "dependencies.nodes[]",
				key:       pgField{name: "source", ours: "sourceComponentId", pg: "sourceComponentId"},
				keyFields: []pgField{{name: "target", ours: "targetComponentId", pg: "targetComponentId"}, {name: "type", ours: "dependencyType", pg: "dependencyType", enum: true}},
				fields: cat(enums("criticality"), []pgField{
					{name: "source.id", ours: "source.componentId", pg: "sourceComponent.id"},
					{name: "source.name", ours: "source.name", pg: "sourceComponent.name"},
					{name: "source.status", ours: "source.status", pg: "sourceComponent.status", enum: true},
					{name: "target.id", ours: "target.componentId", pg: "targetComponent.id"},
					{name: "target.name", ours: "target.name", pg: "targetComponent.name"},
					{name: "target.status", ours: "target.status", pg: "targetComponent.status", enum: true},
				}),
			},
			{
				kind: "rule", ours: "rules[]", pg: "rules.nodes[]",
				key: pgField{name: "id", ours: "ruleId", pg: "id"},
				fields: cat(same("name", "conditions[].field", "conditions[].operator", "conditions[].weight", "actions[].type"),
					enums("ruleType", "status", "priority"), []pgField{{name: "order", ours: "order", pg: "sortOrder"}}),
			},
		},
	}
	pgListShape = pgEntity{
		kind: "capability", ours: "data.capabilities.nodes[]", pg: "data.capabilities.nodes[]",
		key:    pgField{name: "id", ours: "id", pg: "id"},
		fields: cat(same("name"), enums("status", "priority")),
		children: []pgEntity{
			{
				kind: "component", ours: "components[]", pg: "components.nodes[]",
				key:    pgField{name: "id", ours: "componentId", pg: "id"},
				fields: cat(same("name", "componentType"), enums("status", "health.status")),
			},
			{
				kind: "dependency", ours: "dependencies[]", pg: "dependencies.nodes[]",
				key:       pgField{name: "source", ours: "sourceComponentId", pg: "sourceComponentId"},
				keyFields: []pgField{{name: "target", ours: "targetComponentId", pg: "targetComponentId"}, {name: "type", ours: "dependencyType", pg: "dependencyType", enum: true}},
				fields:    enums("criticality"),
			},
			{
				kind: "rule", ours: "rules[]", pg: "rules.nodes[]",
				key:    pgField{name: "id", ours: "ruleId", pg: "id"},
				fields: cat(same("name"), enums("ruleType", "status", "priority")),
			},
		},
	}
)

// pgNormalise returns the answer body (either server's: pg chooses the paths) as sorted lines,
// one per object: its kind, its key (with its parent's), and its fields. Order of lists is not
// compared (each server orders as its schema says); their content is. An answer with errors or
// without the object is an error.
func pgNormalise(body []byte, shape pgEntity, pg bool) ([]string, error) {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if m, ok := doc.(map[string]any); ok && m["errors"] != nil {
		return nil, fmt.Errorf("answer with errors: %.400s", body)
	}
	var lines []string
	var walk func(v any, e pgEntity, parent string) error
	walk = func(v any, e pgEntity, parent string) error {
		path := e.ours
		if pg {
			path = e.pg
		}
		objs := pgAt(v, path)
		if len(objs) == 0 && !strings.HasSuffix(path, "[]") {
			return fmt.Errorf("no %s at %s: %.400s", e.kind, path, body)
		}
		for _, o := range objs {
			if o == nil {
				return fmt.Errorf("null %s at %s", e.kind, path)
			}
			key := parent + e.kind + " " + pgValue(o, e.key, pg)
			for _, f := range e.keyFields {
				key += " " + pgValue(o, f, pg)
			}
			var b strings.Builder
			b.WriteString(key)
			for _, f := range e.fields {
				fmt.Fprintf(&b, " | %s=%s", f.name, pgValue(o, f, pg))
			}
			lines = append(lines, b.String())
			for _, c := range e.children {
				if err := walk(o, c, key+" > "); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(doc, shape, ""); err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return lines, nil
}

// pgAt returns the values at path in v: one for a plain path, a list's elements for a path
// ending in [] (a [] inside the path maps over that list).
func pgAt(v any, path string) []any {
	cur := []any{v}
	for _, seg := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(seg, "[]")
		var next []any
		for _, c := range cur {
			m, _ := c.(map[string]any)
			x := m[name]
			if list {
				xs, _ := x.([]any)
				next = append(next, xs...)
			} else if m != nil {
				next = append(next, x)
			}
		}
		cur = next
	}
	return cur
}

// pgValue formats field f of o: null and absent are "", numbers as Go formats a float64, lists
// joined with commas.
func pgValue(o any, f pgField, pg bool) string {
	path := f.ours
	if pg {
		path = f.pg
	}
	vals := pgAt(o, path)
	out := make([]string, len(vals))
	for i, v := range vals {
		var s string
		switch x := v.(type) {
		case nil:
		case string:
			s = x
		case float64:
			s = strconv.FormatFloat(x, 'g', -1, 64)
		case bool:
			s = strconv.FormatBool(x)
		default:
			raw, _ := json.Marshal(x)
			s = string(raw)
		}
		if f.enum {
			s = strings.ToUpper(s)
		}
		out[i] = s
	}
	return strings.Join(out, ",")
}

// pgCompare normalises both answers and returns "" when they carry the same data, else where
// they first differ.
func pgCompare(ours, theirs []byte, shape pgEntity) (string, error) {
	a, err := pgNormalise(ours, shape, false)
	if err != nil {
		return "", fmt.Errorf("ours: %w", err)
	}
	b, err := pgNormalise(theirs, shape, true)
	if err != nil {
		return "", fmt.Errorf("PostGraphile: %w", err)
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("ours %q, PostGraphile %q", a[i], b[i]), nil
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("ours %d objects, PostGraphile %d", len(a), len(b)), nil
	}
	return "", nil
}
