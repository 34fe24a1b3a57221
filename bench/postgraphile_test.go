package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	samplecat "github.com/capcat/catalogue/sample"
)

// pgLiterals returns the SQL string literals of sql, decoded (” is one quote), and fails when a
// literal is left open.
func pgLiterals(t *testing.T, sql string) []string {
	t.Helper()
	var out []string
	for i := 0; i < len(sql); i++ {
		if sql[i] != '\'' {
			continue
		}
		var b strings.Builder
		for i++; ; i++ {
			if i >= len(sql) {
				t.Fatalf("unterminated string literal: %q", b.String())
			}
			if sql[i] == '\'' {
				if i+1 < len(sql) && sql[i+1] == '\'' {
					b.WriteByte('\'')
					i++
					continue
				}
				break
			}
			b.WriteByte(sql[i])
		}
		out = append(out, b.String())
	}
	return out
}

// pgRowCounts counts the rows of each table's INSERT in sql.
func pgRowCounts(sql string) map[string]int {
	counts := map[string]int{}
	table := ""
	for _, line := range strings.Split(sql, "\n") {
		if m := regexp.MustCompile(`^INSERT INTO (\w+) `).FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		if table != "" && strings.HasPrefix(line, "  (") {
			counts[table]++
			if strings.HasSuffix(line, ";") {
				table = ""
			}
		}
	}
	return counts
}

// pgColumns returns each table's columns as pgSchema declares them.
func pgColumns() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	var cur map[string]bool
	for _, line := range strings.Split(pgSchema, "\n") {
		if m := regexp.MustCompile(`^CREATE TABLE (\w+) \($`).FindStringSubmatch(line); m != nil {
			cur = map[string]bool{}
			out[m[1]] = cur
			continue
		}
		if m := regexp.MustCompile(`^  (\w+) `).FindStringSubmatch(line); m != nil && cur != nil {
			cur[m[1]] = true
		}
	}
	return out
}

func snake(s string) string {
	return strings.ToLower(regexp.MustCompile(`([a-z0-9])([A-Z])`).ReplaceAllString(s, "${1}_${2}"))
}

// TestPGSQLSample: the script holds the sample's 7 capabilities, 31 components, 35 dependencies
// and 15 rules, every field the PostGraphile queries read is a column of its table (or one of
// its relations) and is asked by the query, and every field ours reads is asked by ours.
func TestPGSQLSample(t *testing.T) {
	sql := pgSQL(samplecat.Catalogue(time.Now()))
	want := map[string]int{"capability": 7, "component": 31, "dependency": 35, "rule": 15}
	if got := pgRowCounts(sql); len(got) != len(want) || got["capability"] != 7 || got["component"] != 31 || got["dependency"] != 35 || got["rule"] != 15 {
		t.Errorf("rows %v, want %v", got, want)
	}
	pgLiterals(t, sql)
	cols := pgColumns()
	relations := map[string]string{"components": "component", "dependencies": "dependency", "rules": "rule", "sourceComponent": "component", "targetComponent": "component"}
	for _, c := range []struct {
		shape     pgEntity
		pg, ours  string
		rootTable string
	}{{pgViewShape, pgCompleteViewQuery, completeViewQuery, "capability"}, {pgListShape, pgListAllQuery, listAllQuery, "capability"}} {
		var check func(e pgEntity, table string)
		check = func(e pgEntity, table string) {
			for _, f := range append(append([]pgField{e.key}, e.keyFields...), e.fields...) {
				// A relation, then a column; what follows a column is inside its jsonb (the
				// normaliser's test reads it from the sample).
				segs := strings.Split(strings.ReplaceAll(f.pg, "[]", ""), ".")
				if rel, ok := relations[segs[0]]; ok {
					if !cols[rel][snake(segs[1])] {
						t.Errorf("%s: %s is not a column of %s", e.kind, f.pg, rel)
					}
					segs = segs[:2]
				} else {
					if !cols[table][snake(segs[0])] {
						t.Errorf("%s: %s (%s) is not a column of %s", e.kind, f.pg, snake(segs[0]), table)
					}
					segs = segs[:1]
				}
				for _, s := range segs {
					if !regexp.MustCompile(`\b` + s + `\b`).MatchString(c.pg) {
						t.Errorf("%s: the PostGraphile query does not ask %s (%s)", e.kind, s, f.pg)
					}
				}
				for _, s := range strings.Split(strings.ReplaceAll(f.ours, "[]", ""), ".") {
					if !regexp.MustCompile(`\b` + s + `\b`).MatchString(c.ours) {
						t.Errorf("%s: our query does not ask %s (%s)", e.kind, s, f.ours)
					}
				}
			}
			for _, ch := range e.children {
				check(ch, relations[strings.Split(ch.pg, ".")[0]])
			}
		}
		check(c.shape, c.rootTable)
	}
}

// TestPGSQLQuoting: quotes in strings (and in JSON) are doubled, backslashes and double quotes
// kept as they are, and each value is one literal.
func TestPGSQLQuoting(t *testing.T) {
	if got := pgText(`O'Brien's "cap" \n`); got != `'O''Brien''s "cap" \n'` {
		t.Errorf("pgText = %s", got)
	}
	name := `O'Brien's "cap" \ back''`
	b := &catalog.Bundle{
		Capability: &catalog.Capability{CapabilityID: "CAP-'1", Name: name, Tags: []string{"it's", "plain"},
			BusinessMetrics: &catalog.BusinessMetrics{Sla: `99.9' "x"`}},
		Components: []*catalog.Component{{ComponentID: "c'1", Name: name, Health: &catalog.ComponentHealth{Status: "healthy"}}},
		Rules:      []*catalog.Rule{{RuleID: "r1", Name: name, Conditions: []catalog.Condition{{Field: "it's", Operator: "=="}}}},
	}
	lits := pgLiterals(t, pgSQL([]*catalog.Bundle{b}))
	found := map[string]int{}
	for _, l := range lits {
		found[l]++
	}
	if found[name] != 3 || found["CAP-'1"] != 3 || found["it's"] != 1 || found["c'1"] != 1 {
		t.Errorf("literals %q", lits)
	}
	var jsonOK bool
	for _, l := range lits {
		var bm catalog.BusinessMetrics
		if json.Unmarshal([]byte(l), &bm) == nil && bm.Sla == `99.9' "x"` {
			jsonOK = true
		}
	}
	if !jsonOK {
		t.Errorf("no jsonb literal decodes to the business metrics: %q", lits)
	}
	if got := pgTextArray(nil); got != "'{}'::text[]" {
		t.Errorf("empty tags: %s", got)
	}
	if got := pgJSON((*catalog.SLA)(nil)); got != "NULL" {
		t.Errorf("nil jsonb: %s", got)
	}
}

// pgAnswer is what PostGraphile answers for the bundles (its names, the lower-case vocabulary,
// jsonb whole), in the reverse order of ours, as the test's own statement of its shape.
func pgAnswer(bundles []*catalog.Bundle, view bool) []byte {
	js := func(v any) any {
		raw, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	names := map[string]*catalog.Component{}
	for _, b := range bundles {
		for _, c := range b.Components {
			names[c.ComponentID] = c
		}
	}
	var caps []any
	for i := len(bundles) - 1; i >= 0; i-- {
		b := bundles[i]
		c := b.Capability
		var comps, deps, rules []any
		for j := len(b.Components) - 1; j >= 0; j-- {
			x := b.Components[j]
			comps = append(comps, map[string]any{"id": x.ComponentID, "name": x.Name, "componentType": x.ComponentType, "sortOrder": x.Order,
				"layer": x.Layer, "status": string(x.Status), "version": x.Version, "health": js(x.Health), "sla": js(x.Sla)})
		}
		for j := len(b.Dependencies) - 1; j >= 0; j-- {
			d := b.Dependencies[j]
			s, g := names[d.SourceComponentID], names[d.TargetComponentID]
			deps = append(deps, map[string]any{"sourceComponentId": d.SourceComponentID, "targetComponentId": d.TargetComponentID,
				"dependencyType": string(d.DependencyType), "criticality": string(d.Criticality),
				"sourceComponent": map[string]any{"id": s.ComponentID, "name": s.Name, "status": string(s.Status)},
				"targetComponent": map[string]any{"id": g.ComponentID, "name": g.Name, "status": string(g.Status)}})
		}
		for j := len(b.Rules) - 1; j >= 0; j-- {
			r := b.Rules[j]
			rules = append(rules, map[string]any{"id": r.RuleID, "name": r.Name, "ruleType": string(r.RuleType), "status": string(r.Status),
				"priority": string(r.Priority), "sortOrder": r.Order, "conditions": js(r.Conditions), "actions": js(r.Actions)})
		}
		caps = append(caps, map[string]any{"id": c.CapabilityID, "name": c.Name, "description": c.Description, "businessDomain": c.BusinessDomain,
			"status": string(c.Status), "priority": string(c.Priority), "owner": c.Owner, "version": c.Version, "tags": c.Tags,
			"businessMetrics": js(c.BusinessMetrics), "aggregates": js(c.Aggregates),
			"components": map[string]any{"nodes": comps}, "dependencies": map[string]any{"nodes": deps}, "rules": map[string]any{"nodes": rules}})
	}
	var data map[string]any
	if view {
		data = map[string]any{"capability": caps[len(caps)-1]}
	} else {
		data = map[string]any{"capabilities": map[string]any{"nodes": caps}}
	}
	raw, _ := json.Marshal(map[string]any{"data": data})
	return raw
}

// TestPGNormalise: our server's real answers (the embedded default) and PostGraphile's answers
// for the same rows (in its names, the other order, jsonb whole) compare equal; a changed name,
// a changed enum, a missing component or an answer with errors do not.
func TestPGNormalise(t *testing.T) {
	ctx := context.Background()
	e, _, bundles, err := startEmbedded(ctx, config{cacheBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	ask := func(q string, vars map[string]any) []byte {
		body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		a, err := e.post(ctx, body)
		if err != nil || a.status != http.StatusOK {
			t.Fatalf("status %d, %v: %.300s", a.status, err, a.body)
		}
		return a.body
	}
	view := ask(completeViewQuery, map[string]any{"id": bundles[0].Capability.CapabilityID})
	list := ask(listAllQuery, nil)
	for _, c := range []struct {
		name  string
		ours  []byte
		pg    []byte
		shape pgEntity
		edit  func(string) string
		want  string // "" equal; else a part of the difference
	}{
		{name: "view equal", ours: view, pg: pgAnswer(bundles, true), shape: pgViewShape},
		{name: "list equal", ours: list, pg: pgAnswer(bundles, false), shape: pgListShape},
		{name: "view: a component's name changed", ours: view, pg: pgAnswer(bundles, true), shape: pgViewShape,
			edit: func(s string) string { return strings.Replace(s, bundles[0].Components[0].Name, "Renamed", 1) }, want: "Renamed"},
		{name: "view: a condition's field changed", ours: view, pg: pgAnswer(bundles, true), shape: pgViewShape,
			edit: func(s string) string { return strings.Replace(s, `"field":"`, `"field":"x`, 1) }, want: "conditions"},
		{name: "list: a capability's name changed", ours: list, pg: pgAnswer(bundles, false), shape: pgListShape,
			edit: func(s string) string { return strings.Replace(s, bundles[3].Capability.Name, "Renamed", 1) }, want: "Renamed"},
		{name: "list: a criticality changed", ours: list, pg: pgAnswer(bundles, false), shape: pgListShape,
			edit: func(s string) string { return strings.Replace(s, `"criticality":"critical"`, `"criticality":"low"`, 1) }, want: "criticality"},
		{name: "list: a dependency missing", ours: list, pg: pgAnswer(bundles, false), shape: pgListShape,
			edit: func(s string) string {
				var doc map[string]map[string]map[string][]map[string]any
				_ = json.Unmarshal([]byte(s), &doc)
				deps := doc["data"]["capabilities"]["nodes"][2]["dependencies"].(map[string]any)
				deps["nodes"] = deps["nodes"].([]any)[1:]
				raw, _ := json.Marshal(doc)
				return string(raw)
			}, want: "dependency"},
	} {
		t.Run(c.name, func(t *testing.T) {
			pg := c.pg
			if c.edit != nil {
				edited := c.edit(string(pg))
				if edited == string(pg) {
					t.Fatal("the edit changed nothing")
				}
				pg = []byte(edited)
			}
			diff, err := pgCompare(c.ours, pg, c.shape)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == "" && diff != "" {
				t.Errorf("differ: %s", diff)
			}
			if c.want != "" && !strings.Contains(diff, c.want) {
				t.Errorf("difference %q, want one naming %q", diff, c.want)
			}
		})
	}
	if lines, err := pgNormalise(view, pgViewShape, false); err != nil || len(lines) != 1+len(bundles[0].Components)+len(bundles[0].Dependencies)+len(bundles[0].Rules) {
		t.Errorf("view: %d objects, %v", len(lines), err)
	}
	if _, err := pgCompare(view, []byte(`{"errors":[{"message":"boom"}],"data":null}`), pgViewShape); err == nil {
		t.Error("an answer with errors compared")
	}
	if _, err := pgCompare(view, []byte(`{"data":{"capability":null}}`), pgViewShape); err == nil {
		t.Error("a missing capability compared")
	}
}

// TestPGSectionWrite: the section's tables and ratios, and the one line when it was not
// measured.
func TestPGSectionWrite(t *testing.T) {
	var b strings.Builder
	p := func(f string, a ...any) { b.WriteString(strings.TrimSuffix(fmt.Sprintf(f, a...), "\n") + "\n") }
	(&pgReport{Missing: "PostgreSQL's postgres not installed"}).write(p)
	if got := b.String(); got != "## Beside PostGraphile on PostgreSQL\n\nNot measured: PostgreSQL's postgres not installed; "+pgInstallHint+".\n\n" {
		t.Errorf("missing: %q", got)
	}
	b.Reset()
	ms := time.Millisecond
	rep := &pgReport{Versions: "postgres (PostgreSQL) 15.x, PostGraphile 4.14.1", Counts: [4]int{7, 31, 35, 15}, Rounds: 2, LoadBefore: "1.00 1.00 1.00", LoadAfter: "2.00 1.00 1.00",
		Ops: []*pgOpReport{{Name: "complete view", Rows: []*pgRow{
			{Server: "ours", Mode: "warm", P50C1: ms, P99C1: 2 * ms, Throughput: 1000, P50C16: 10 * ms, P99C16: 20 * ms, CPU: 500 * time.Microsecond, ProcessCPU: 800 * time.Microsecond, Runs1: 10, Runs16: 40},
			{Server: "ours", Mode: "after a write", P50C1: 3 * ms, P99C1: 4 * ms, Throughput: 200, P50C16: 30 * ms, P99C16: 40 * ms, Errors: 1, Runs1: 5, Runs16: 20},
			{Server: "PostGraphile", Mode: "warm", P50C1: 4 * ms, P99C1: 8 * ms, Throughput: 250, P50C16: 40 * ms, P99C16: 80 * ms, CPU: 4 * ms, ProcessCPU: 300 * time.Microsecond, Runs1: 10, Runs16: 40},
		}}}}
	rep.write(p)
	out := b.String()
	for _, want := range []string{
		"## Beside PostGraphile on PostgreSQL\n",
		"7 capabilities, 31 components, 35 dependencies, 15 rules",
		"postgres (PostgreSQL) 15.x, PostGraphile 4.14.1",
		"1.00 1.00 1.00 / 2.00 1.00 1.00",
		"**complete view**",
		"| ours | warm | 1.00 | 2.00 | 1000 | 10.00 | 20.00 | 0 | ≈ 500 | 800 | 10 / 40 |",
		"| ours | after a write | 3.00 | 4.00 | 200 | 30.00 | 40.00 | 1 | ≈ 0 | 0 | 5 / 20 |",
		"| PostGraphile | warm | 4.00 | 8.00 | 250 | 40.00 | 80.00 | 0 | 4000 | 300 | 10 / 40 |",
		"| **ours ÷ PostGraphile** | warm | 0.25× | 0.25× | 4.00× | 0.25× | 0.25× | | 0.12× | | |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("section lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "| **ours ÷ PostGraphile** | after a write") {
		t.Errorf("a ratio without PostGraphile's row:\n%s", out)
	}
	// -postgraphile-only replaces its own section of BENCHMARKS.md and nothing else.
	doc := "# B\n\n## Search, filters and counts at scale\n\nS\n\n" + pgHeading + "\nold\n\n## What each operation asks\n\nW\n"
	if got := spliceHeading(doc, pgHeading, out); got != "# B\n\n## Search, filters and counts at scale\n\nS\n\n"+out+"## What each operation asks\n\nW\n" {
		t.Errorf("splice: %q", got)
	}
}

// TestPGSectionMissing: without PostgreSQL or PostGraphile the full run's section says what is
// missing and how to install it, and measures nothing.
func TestPGSectionMissing(t *testing.T) {
	cfg := config{}
	cfg.pg.dir = t.TempDir() // no node_modules
	cfg.pg.bin = t.TempDir() // no PostgreSQL
	rep, err := pgSection(context.Background(), cfg, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Missing, "PostGraphile") || !strings.Contains(rep.Missing, "postgres") || len(rep.Ops) != 0 {
		t.Errorf("report %+v", rep)
	}
	if _, err := measurePostGraphile(context.Background(), cfg, t.Logf); err == nil {
		t.Error("-postgraphile-only measured without PostgreSQL and PostGraphile")
	}
}
