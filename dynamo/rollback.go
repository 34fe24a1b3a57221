package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

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
// carries the same breaching samples and finds the job still RUNNING. One never retried is
// finished by whichever comes first, with the same transaction (rollBack): UpdateJob asked to
// complete the job (it reads the targets' samples since the startTime first: breachSince), or
// the sweep (SweepRollbacks).

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

// MaxBreachTargets bounds the target components whose samples one breach check reads: one
// Query each, all at once (catalog.MaxGatedTargets bounds a gated job's targets).
const MaxBreachTargets = catalog.MaxGatedTargets

// breachSince reads the performance samples each target of j has recorded since j's startTime
// (one strongly consistent Query per target, all in parallel: a key range of the target's
// METRIC#component#performance# segment from the startTime on) and returns the first that
// breaches j's rollback threshold, as rollbackOnBreach would have found it. Nothing is read
// unless j is a RUNNING deployment that rolls back automatically with a threshold (mayBreach). The targets' Queries are
// the whole cost: the job itself is not read.
func (s *Store) breachSince(ctx context.Context, j *catalog.Job) (breach, bool, error) {
	if !mayBreach(j) {
		return breach{}, false, nil
	}
	targets := breachTargets(j)
	found := make([][]*catalog.Metric, len(targets))
	g, gctx := errgroup.WithContext(ctx)
	now := s.now()
	for i, c := range targets {
		g.Go(func() error {
			p := metricTypePrefix(c, catalog.MetricPerformance)
			items, _, err := s.run(gctx, query{pk: capabilityPK(j.CapabilityID), lo: p + keyTime(j.StartTime.Time), hi: prefixEnd(p), consistent: true, now: now})
			if err != nil {
				return fmt.Errorf("read the samples of %s: %w", c, err)
			}
			for _, it := range items {
				m, err := toMetric(it)
				if err != nil {
					return err
				}
				found[i] = append(found[i], m)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return breach{}, false, err
	}
	b, ok := breachOf(j, slices.Concat(found...))
	return b, ok, nil
}

// mayBreach reports whether j is a RUNNING deployment that rolls back automatically with a
// threshold set (an errorRate or latency above 0): one whose samples can breach.
func mayBreach(j *catalog.Job) bool {
	if j.JobType != catalog.JobDeployment || j.Status != catalog.JobRunning || !catalog.AutomaticRollback(j) {
		return false
	}
	th := j.Strategy.Rollback.Threshold
	return th != nil && (th.ErrorRate > 0 || th.Latency > 0) && len(j.TargetComponents) > 0
}

// breachTargets returns j's target component IDs, each once, in order, at most MaxBreachTargets.
func breachTargets(j *catalog.Job) []string {
	var ids []string
	for _, t := range j.TargetComponents {
		if t.ComponentID != "" && !slices.Contains(ids, t.ComponentID) && len(ids) < MaxBreachTargets {
			ids = append(ids, t.ComponentID)
		}
	}
	return ids
}

// breachFound stops an updateJob attempt that found a breach: the job is rolled back instead.
type breachFound struct{ b breach }

func (e *breachFound) Error() string { return e.b.reason }

// The rollback sweep: the background pass that finishes rollbacks a recordMetrics call
// interrupted between its health and rollback transactions left undone.

// Bounds of one sweep pass.
const (
	// SweepJobs is how many running automatic deployments one pass checks.
	SweepJobs = 25
	// SweepQueries is how many sample Queries one pass makes (a job's targets are one each);
	// a pass always checks at least one job.
	SweepQueries = 200
	// sweepScan is how many active-job index entries one pass reads.
	sweepScan = 1000
)

// SweepReport is what one sweep pass did.
type SweepReport struct {
	// Checked is the running automatic deployments with a threshold whose samples were read.
	Checked int
	// Queries is the sample Queries made.
	Queries int
	// RolledBack is the jobs this pass rolled back.
	RolledBack []*catalog.Job
	// Next is where the next pass resumes in the active-job index ("": from the start).
	Next string
}

// SweepRollbacks checks the RUNNING deployments with strategy.rollback.automatic and a
// threshold (mayBreach), from the
// active-job index (GSI1 partition ACTIVEJOBS, oldest start first, after the position after
// that a previous pass returned as Next), and rolls back each one of whose targets breached its
// threshold since the job's startTime, with the transaction rollbackOnBreach writes (exactly
// once: it re-reads the job and moves it only while it is RUNNING). A pass reads one page of
// the index (up to 1000 entries), checks at most SweepJobs jobs and makes at most SweepQueries
// sample Queries; Next says where the next pass goes on, "" once the index is done.
func (s *Store) SweepRollbacks(ctx context.Context, after string) (SweepReport, error) {
	var rep SweepReport
	q := query{index: true, pk: activeJobsPK, want: sweepScan}
	if after != "" {
		// From the previous pass's last entry on (every GSI1SK of the index starts with the
		// digits of a start time: "~" is past them all).
		q.lo, q.hi = after, "~"
	}
	items, more, err := s.run(ctx, q)
	if err != nil {
		return rep, fmt.Errorf("sweep rollbacks: list active jobs: %w", err)
	}
	last := after
	for _, it := range items {
		if it.GSI1SK == after {
			continue // the previous pass's last entry
		}
		j, err := toJob(it)
		if err != nil {
			return rep, err
		}
		if mayBreach(j) {
			n := len(breachTargets(j))
			if rep.Checked >= SweepJobs || rep.Checked > 0 && rep.Queries+n > SweepQueries {
				rep.Next = last
				return rep, nil
			}
			rep.Checked++
			rep.Queries += n
			b, found, err := s.breachSince(ctx, j)
			if err != nil {
				return rep, fmt.Errorf("sweep rollbacks: job %s: %w", j.JobID, err)
			}
			if found {
				rolled, err := s.rollBack(ctx, b)
				switch {
				case errors.Is(err, errNotRunning):
				case err != nil:
					return rep, fmt.Errorf("sweep rollbacks: roll back job %s: %w", j.JobID, err)
				default:
					rep.RolledBack = append(rep.RolledBack, rolled)
				}
			}
		}
		last = it.GSI1SK
	}
	if more {
		rep.Next = last
	}
	return rep, nil
}
