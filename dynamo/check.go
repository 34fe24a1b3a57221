package dynamo

import (
	"context"
	"fmt"
	"math"
	"reflect"

	"github.com/capcat/catalogue/catalog"
)

// CheckPartition recounts a capability's partition and compares it with what METADATA and its
// two index items say: every derived aggregate must equal the recount, and the index items must
// carry the same Data, under the right GSI1 keys. It returns nil when all agree, and an error
// listing the differences otherwise. It reads the whole partition: an audit tool, not a hot path.
func (s *Store) CheckPartition(ctx context.Context, id string) error {
	items, _, err := s.run(ctx, query{pk: capabilityPK(id), consistent: true})
	if err != nil {
		return err
	}
	var meta, domain, health *item
	var comps []*catalog.Component
	var jobs []*catalog.Job
	var rules []*catalog.Rule
	deps := 0
	for _, it := range items {
		switch it.EntityType {
		case entityCapability:
			meta = it
		case entityDomainIndex:
			domain = it
		case entityHealthIndex:
			health = it
		case entityComponent:
			c, err := toComponent(it)
			if err != nil {
				return err
			}
			comps = append(comps, c)
		case entityDependency:
			deps++
		case entityJob:
			j, err := toJob(it)
			if err != nil {
				return err
			}
			jobs = append(jobs, j)
		case entityRule:
			r, err := toRule(it)
			if err != nil {
				return err
			}
			rules = append(rules, r)
		}
	}
	if meta == nil {
		return fmt.Errorf("check %s: %w", id, ErrNotFound)
	}
	c, err := toCapability(meta)
	if err != nil {
		return err
	}
	want := c.Aggregates
	catalog.Aggregate(&want, comps, deps, jobs, rules)
	var diffs []string
	got := c.Aggregates
	cmp := func(name string, g, w any) {
		if !reflect.DeepEqual(g, w) {
			diffs = append(diffs, fmt.Sprintf("%s = %v, recount %v", name, g, w))
		}
	}
	cmp("totalComponents", got.TotalComponents, want.TotalComponents)
	cmp("activeComponents", got.ActiveComponents, want.ActiveComponents)
	cmp("totalDependencies", got.TotalDependencies, want.TotalDependencies)
	cmp("totalJobs", got.TotalJobs, want.TotalJobs)
	cmp("successfulJobs", got.SuccessfulJobs, want.SuccessfulJobs)
	cmp("failedJobs", got.FailedJobs, want.FailedJobs)
	cmp("totalRules", got.TotalRules, want.TotalRules)
	cmp("activeRules", got.ActiveRules, want.ActiveRules)
	cmp("healthStatus", got.HealthStatus, want.HealthStatus)
	if math.Abs(got.HealthScore-want.HealthScore) > 1e-9 {
		diffs = append(diffs, fmt.Sprintf("healthScore = %v, recount %v", got.HealthScore, want.HealthScore))
	}
	if (got.LastDeployment == nil) != (want.LastDeployment == nil) || (got.LastDeployment != nil && !got.LastDeployment.Equal(want.LastDeployment.Time)) {
		diffs = append(diffs, fmt.Sprintf("lastDeployment = %v, recount %v", got.LastDeployment, want.LastDeployment))
	}
	for _, ix := range []struct {
		name     string
		it       *item
		pk, gsk  string
		wantData bool
	}{
		{"INDEX#DOMAIN", domain, domainPK(c.BusinessDomain), domainGSI1SK(c.Priority, c.Name), true},
		{"INDEX#HEALTH", health, healthPK(got.HealthStatus), healthGSI1SK(got.HealthScore, id), true},
	} {
		if ix.it == nil {
			diffs = append(diffs, ix.name+" missing")
			continue
		}
		if ix.it.GSI1PK != ix.pk || ix.it.GSI1SK != ix.gsk {
			diffs = append(diffs, fmt.Sprintf("%s keys = %s/%s, want %s/%s", ix.name, ix.it.GSI1PK, ix.it.GSI1SK, ix.pk, ix.gsk))
		}
		ixData, err := ix.it.data()
		if err != nil {
			return err
		}
		metaData, err := meta.data()
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(ixData, metaData) {
			diffs = append(diffs, ix.name+" Data differs from METADATA")
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("check %s: %v", id, diffs)
	}
	return nil
}
