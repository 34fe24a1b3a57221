package dynamo

import (
	"testing"
)

// BenchmarkWireDecode reads the sample catalogue's items from a Query response body: the wire
// decoder (envelope, Data to plain JSON) and then each entity (encoding/json).
func BenchmarkWireDecode(b *testing.B) {
	stored := sampleItems(b)
	var comps []*item
	for _, it := range stored {
		if it.EntityType == entityComponent || it.EntityType == entityRule || it.EntityType == entityDependency {
			comps = append(comps, it)
		}
	}
	body := queryBody(b, comps)
	b.Logf("%d items, %d bytes", len(comps), len(body))
	b.Run("split", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := splitItems(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("split+entities", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			items, _, err := splitItems(body)
			if err != nil {
				b.Fatal(err)
			}
			for _, it := range items {
				var err error
				switch it.EntityType {
				case entityComponent:
					_, err = toComponent(it)
				case entityRule:
					_, err = toRule(it)
				case entityDependency:
					_, err = toDependency(it)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
