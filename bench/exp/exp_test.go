package exp

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

func TestMinidynScale(t *testing.T) {
	ctx := context.Background()
	emb, err := dynamo.StartEmbedded(nil)
	if err != nil { t.Fatal(err) }
	defer emb.Close()
	client, _ := dynamo.NewClient(ctx, dynamo.ClientConfig{Endpoint: emb.URL})
	st := dynamo.New(client, dynamo.Options{})
	if err := st.CreateTable(ctx, time.Minute); err != nil { t.Fatal(err) }
	now := time.Now().UTC().Truncate(5*time.Minute)
	total := 0
	for round := 0; round < 4; round++ {
		var bundles []*catalog.Bundle
		for c := 0; c < 5; c++ {
			id := fmt.Sprintf("CAP-%d-%d", round, c)
			b := &catalog.Bundle{Capability: &catalog.Capability{CapabilityID: id, Name: id, BusinessDomain: "d", Status: catalog.CapabilityActive, Priority: catalog.PriorityLow}}
			b.Components = []*catalog.Component{{ComponentID: "c-" + id, Name: "c", ComponentType: "api", Order: 1, Status: catalog.ComponentActive}}
			for i := 0; i < 2000; i++ {
				b.Metrics = append(b.Metrics, &catalog.Metric{ComponentID: "c-" + id, MetricType: catalog.MetricPerformance, Timestamp: catalog.NewTimestamp(now.Add(-time.Duration(i)*time.Minute)), Interval: "1m"})
			}
			bundles = append(bundles, b)
		}
		t0 := time.Now()
		n, err := st.BulkLoad(ctx, bundles, 4)
		if err != nil { t.Fatal(err) }
		total += n
		load := time.Since(t0)
		t0 = time.Now()
		for i := 0; i < 10; i++ {
			if _, err := st.ReadRange(ctx, "CAP-0-0", dynamo.SegComponents|dynamo.SegDependencies); err != nil { t.Fatal(err) }
		}
		q := time.Since(t0) / 10
		t0 = time.Now()
		for i := 0; i < 10; i++ {
			if _, err := st.Capabilities(ctx, "", 50, ""); err != nil { t.Fatal(err) }
		}
		g := time.Since(t0) / 10
		t0 = time.Now()
		for i := 0; i < 10; i++ {
			if _, err := st.CapabilitiesByID(ctx, []string{"CAP-0-0", "CAP-0-1"}); err != nil { t.Fatal(err) }
		}
		b := time.Since(t0) / 10
		t.Logf("items=%d load=%v (%.0f items/s) query=%v gsi=%v batchget=%v", total, load, float64(n)/load.Seconds(), q, g, b)
	}
}
