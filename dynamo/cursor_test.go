package dynamo_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
	"github.com/capcat/catalogue/sample"
)

func TestCursors(t *testing.T) {
	env := newEnv(t)
	loadSample(t, env)
	ctx := context.Background()
	newest := sampleNow.Truncate(sample.MetricInterval)
	from := newest.Add(-time.Hour)

	cursor := func(call string) func(string, error) string {
		return func(c string, err error) string {
			t.Helper()
			if err != nil {
				t.Fatalf("%s = %v", call, err)
			}
			return c
		}
	}
	capsCursor := cursor("Capabilities()")(firstCursor(env.Store.Capabilities(ctx, "", 1, "")))
	opsCursor := cursor("Capabilities(operations)")(firstCursor(env.Store.Capabilities(ctx, "operations", 1, "")))
	domainCursor := cursor("CapabilitiesByDomain(operations)")(firstCursor(env.Store.CapabilitiesByDomain(ctx, "operations", 1, "")))
	jobsCursor := cursor("Jobs(alert)")(firstCursor(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{}, 1, "")))
	completedCursor := cursor("Jobs(alert, completed)")(firstCursor(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 1, "")))
	metricsCursor := cursor("ComponentMetrics(api, from)")(firstCursor(env.Store.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: "api-server-alert-001", From: &from}, 1, "")))
	typeCursor := cursor("ComponentsByType(database)")(firstCursor(env.Store.ComponentsByType(ctx, "database", 1, "")))
	other := dynamo.New(env.Client, dynamo.Options{Table: env.Table, CursorSecret: []byte("another-secret")})
	foreignCursor := cursor("other store Capabilities()")(firstCursor(other.Capabilities(ctx, "", 1, "")))

	// The cursors work where they were issued.
	if _, err := env.Store.Capabilities(ctx, "", 1, capsCursor); err != nil {
		t.Errorf("Capabilities(after: its own cursor) = %v", err)
	}
	if _, err := env.Store.Jobs(ctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 1, completedCursor); err != nil {
		t.Errorf("Jobs(completed, after: its own cursor) = %v", err)
	}

	tampered := []byte(capsCursor)
	i := len(tampered) / 2
	if tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}

	env.Counter.Reset()
	tests := []struct {
		name string
		call func() error
	}{
		{"not base64", func() error { return second(env.Store.Capabilities(ctx, "", 10, "!!not a cursor!!")) }},
		{"too short", func() error { return second(env.Store.Capabilities(ctx, "", 10, "AAAA")) }},
		{"tampered", func() error { return second(env.Store.Capabilities(ctx, "", 10, string(tampered))) }},
		{"other secret", func() error { return second(env.Store.Capabilities(ctx, "", 10, foreignCursor)) }},
		{"Capabilities cursor to another domain", func() error { return second(env.Store.Capabilities(ctx, "customer", 10, opsCursor)) }},
		{"Capabilities cursor to CapabilitiesByDomain", func() error {
			return second(env.Store.CapabilitiesByDomain(ctx, "operations", 10, opsCursor))
		}},
		{"CapabilitiesByDomain cursor to another domain", func() error {
			return second(env.Store.CapabilitiesByDomain(ctx, "customer", 10, domainCursor))
		}},
		{"CapabilitiesByDomain cursor to CapabilitiesByHealth", func() error {
			return second(env.Store.CapabilitiesByHealth(ctx, catalog.HealthHealthy, 10, domainCursor))
		}},
		{"Jobs cursor with another filter", func() error {
			return second(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{Status: catalog.JobCompleted}, 10, jobsCursor))
		}},
		{"Jobs cursor without its filter", func() error {
			return second(env.Store.Jobs(ctx, alertID, dynamo.JobFilter{}, 10, completedCursor))
		}},
		{"Jobs cursor to another capability", func() error {
			return second(env.Store.Jobs(ctx, "CAP-FRAUD-DET-001", dynamo.JobFilter{}, 10, jobsCursor))
		}},
		{"ComponentMetrics cursor to another window", func() error {
			return second(env.Store.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: "api-server-alert-001"}, 10, metricsCursor))
		}},
		{"ComponentMetrics cursor to Metrics", func() error {
			return second(env.Store.Metrics(ctx, alertID, dynamo.MetricFilter{ComponentID: "api-server-alert-001", From: &from}, 10, metricsCursor))
		}},
		{"ComponentsByType cursor to another type", func() error {
			return second(env.Store.ComponentsByType(ctx, "api-server", 10, typeCursor))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !isValidation(err, "after") {
				t.Errorf("%s: err = %v, want a *catalog.ValidationError on after", tt.name, err)
			}
		})
	}
	if n := env.Counter.Total(); n != 0 {
		t.Errorf("rejected cursors sent %d requests, want 0", n)
	}
}

// firstCursor returns the cursor of the first item of a page.
func firstCursor[T any](p *dynamo.Page[T], err error) (string, error) {
	if err != nil {
		return "", err
	}
	if len(p.Cursors) == 0 {
		return "", errors.New("page has no cursor")
	}
	return p.Cursors[0], nil
}

// ---------------------------------------------------------------------------------------------
// Items in the table.
