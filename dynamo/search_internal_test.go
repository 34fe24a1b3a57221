package dynamo

import "github.com/capcat/catalogue/catalog"

// CardCount is how many search cards c keeps (for the tests that count a bulk load's items).
func CardCount(c *catalog.Capability) int { return len(cardEntries(c, cardOf(c))) }
