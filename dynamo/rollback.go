package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// Automatic rollback (docs/design.md, "Deployments"): while a deployment job with
// strategy.rollback.automatic is RUNNING, a recordMetrics performance sample of one of its
// target components, timestamped at or after the job's startTime, that breaches
// strategy.rollback.threshold moves the job to ROLLED_BACK,
// adds one to metrics.rollbacksTriggered and restores each target's fromVersion.
//
// It is the transaction that follows the one recording the samples' health (applyHealth,
// whose 31-component budget leaves no room for a job and its targets): it re-reads the job
// strongly consistent and rolls it back only while it is still RUNNING, under the partition's
// WriteSeq condition and the job's revision, so that of concurrent breaching samples exactly
// one rolls it back and the others find it rolled back. A call interrupted between the two
// transactions and retried (with its token or without) rolls back on the retry: the retry
// carries the same breaching samples and finds the job still RUNNING.

// errNotRunning ends a rollback whose job is no longer RUNNING: nothing to write.
var errNotRunning = errors.New("the job is no longer running")

// breach is a sample of a component that breaches a running job's threshold.
type breach struct {
	job    *catalog.Job
	reason string
}

// rollbackOnBreach rolls back the running automatic deployments of capabilityID whose targets
// ms breach. It reads the capability's active-job index items (one Query) and, per job to roll
// back, runs one transaction. It returns the jobs it rolled back.
func (s *Store) rollbackOnBreach(ctx context.Context, capabilityID string, ms []*catalog.Metric) ([]*catalog.Job, error) {
	items, _, err := s.run(ctx, query{pk: capabilityPK(capabilityID), lo: activeJobPrefix, hi: prefixEnd(activeJobPrefix), consistent: true})
	if err != nil {
		return nil, fmt.Errorf("read the active jobs of %s: %w", capabilityID, err)
	}
	var found []breach
	for _, it := range items {
		j, err := toJob(it)
		if err != nil {
			return nil, err
		}
		if b, ok := breachOf(j, ms); ok {
			found = append(found, b)
		}
	}
	var rolled []*catalog.Job
	for _, b := range found {
		j, err := s.rollBack(ctx, b)
		if errors.Is(err, errNotRunning) {
			continue
		}
		if err != nil {
			return rolled, fmt.Errorf("roll back job %s: %w", b.job.JobID, err)
		}
		rolled = append(rolled, j)
	}
	return rolled, nil
}

// breachOf returns the first sample of ms that breaches j's rollback threshold on one of its
// targets, when j is a RUNNING deployment that rolls back automatically. A sample timestamped
// before the job's startTime says nothing about what the job deployed and is ignored.
func breachOf(j *catalog.Job, ms []*catalog.Metric) (breach, bool) {
	if j.JobType != catalog.JobDeployment || j.Status != catalog.JobRunning || !catalog.AutomaticRollback(j) {
		return breach{}, false
	}
	for _, m := range ms {
		if m.Timestamp.Before(j.StartTime.Time) {
			continue
		}
		if !slices.ContainsFunc(j.TargetComponents, func(t catalog.TargetComponent) bool { return t.ComponentID == m.ComponentID }) {
			continue
		}
		if why, ok := catalog.Breaches(m, j.Strategy.Rollback.Threshold); ok {
			return breach{job: j, reason: fmt.Sprintf("automatic rollback: %s of %s at %s", why, m.ComponentID, m.Timestamp.Format(time.RFC3339))}, true
		}
	}
	return breach{}, false
}

// rollBack moves b.job from RUNNING to ROLLED_BACK with its version moves, in one transaction;
// errNotRunning when it is no longer RUNNING.
func (s *Store) rollBack(ctx context.Context, b breach) (*catalog.Job, error) {
	capabilityID, sk := b.job.CapabilityID, jobSK(b.job.StartTime.Time, b.job.JobID)
	it, err := s.mutate(ctx, capabilityID, SegComponents, Idempotency{}, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		cur, err := s.readItem(ctx, capabilityPK(capabilityID), sk, true)
		if IsNotFound(err) {
			return nil, errNotRunning
		}
		if err != nil {
			return nil, err
		}
		old, err := toJob(cur)
		if err != nil {
			return nil, err
		}
		if old.Status != catalog.JobRunning {
			return nil, errNotRunning
		}
		st.items[sk] = cur
		c, err := clone(old)
		if err != nil {
			return nil, err
		}
		n := c
		n.Meta = old.Meta
		n.Status = catalog.JobRolledBack
		moves := finishJob(capability, n, true, now)
		n.Revision, n.UpdatedAt = old.Revision+1, catalog.NewTimestamp(now)
		return planJobMove(st, capability, old, n, cur, moves, b.reason, now)
	})
	if err != nil {
		return nil, err
	}
	return toJob(it)
}
