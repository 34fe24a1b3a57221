// Package sweep finishes automatic rollbacks that were left undone: a recordMetrics call that
// stopped between the transaction recording a breaching sample's health and the one rolling
// the deployment back (and was never retried) leaves the job RUNNING. The Sweeper checks the
// running automatic deployments every interval, on one instance of the fleet at a time (a
// lease in the table), and rolls back those whose targets breached their threshold since the
// job started, with the same exactly-once transaction (dynamo.Store.SweepRollbacks).
package sweep

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/capcat/catalogue/dynamo"
)

// Lease is the name of the lease that keeps the sweeper to one instance.
const Lease = "rollback-sweeper"

// Store is what the sweeper needs of the store.
type Store interface {
	SweepRollbacks(ctx context.Context, after string) (dynamo.SweepReport, error)
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error)
	ReleaseLease(ctx context.Context, name, holder string) error
}

// Sweeper runs the rollback sweep.
type Sweeper struct {
	store Store
	// next is where the next pass resumes in the active-job index.
	next string
	// counters
	passes, checked, rolledBack, requests prometheus.Counter
}

// New returns a Sweeper; reg, when set, gets the counters catalogue_rollback_sweep_{passes,
// jobs_checked,rolled_back,requests}_total.
func New(store Store, reg prometheus.Registerer) *Sweeper {
	s := &Sweeper{store: store,
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_rollback_sweep_passes_total",
			Help: "Passes of the rollback sweeper on this instance (one that held the lease)."}),
		checked: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_rollback_sweep_jobs_checked_total",
			Help: "Running automatic deployments whose samples since their start the sweeper read."}),
		rolledBack: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_rollback_sweep_rolled_back_total",
			Help: "Deployments the sweeper rolled back: breaches whose recordMetrics call stopped before its rollback."}),
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "catalogue_rollback_sweep_requests_total",
			Help: "DynamoDB requests of the rollback sweeper's passes (the lease's included)."}),
	}
	if reg != nil {
		reg.MustRegister(s.passes, s.checked, s.rolledBack, s.requests)
	}
	return s
}

// Result is what one pass did.
type Result struct {
	// Checked is the running automatic deployments checked, RolledBack those rolled back.
	Checked, RolledBack int
	// Requests is the DynamoDB requests the pass made.
	Requests int
}

// RunOnce makes one pass (it does not take the lease: Run does): it checks the next running
// automatic deployments (at most dynamo.SweepJobs, dynamo.SweepQueries sample Queries) and
// rolls back those that breached; the pass after resumes where it stopped, and starts over
// once the active jobs are done.
func (s *Sweeper) RunOnce(ctx context.Context) (Result, error) {
	ctx, stats := dynamo.WithStats(ctx)
	defer func() { s.requests.Add(float64(stats.Snapshot().Requests)) }()
	return s.pass(ctx, stats)
}

func (s *Sweeper) pass(ctx context.Context, stats *dynamo.Stats) (Result, error) {
	rep, err := s.store.SweepRollbacks(ctx, s.next)
	res := Result{Checked: rep.Checked, RolledBack: len(rep.RolledBack), Requests: stats.Snapshot().Requests}
	s.passes.Inc()
	s.checked.Add(float64(rep.Checked))
	s.rolledBack.Add(float64(len(rep.RolledBack)))
	if err != nil {
		return res, err // the next pass starts where this one did
	}
	s.next = rep.Next
	return res, nil
}

// Run sweeps every `every` while ctx lives, holding the lease while it does: an instance that
// cannot take the lease skips the pass. done, when set, gets each pass's result.
func (s *Sweeper) Run(ctx context.Context, every time.Duration, holder string, done func(Result, error)) {
	dynamo.EveryWithLease(ctx, s.store, Lease, holder, every, func(ctx context.Context, acquire func(context.Context) (bool, error)) {
		pctx, stats := dynamo.WithStats(ctx)
		held, err := acquire(pctx)
		if err != nil || !held {
			s.requests.Add(float64(stats.Snapshot().Requests))
			if done != nil && err != nil {
				done(Result{}, err)
			}
			return
		}
		res, err := s.pass(pctx, stats)
		res.Requests = stats.Snapshot().Requests
		s.requests.Add(float64(res.Requests))
		if done != nil {
			done(res, err)
		}
	})
}
