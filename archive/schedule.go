package archive

import (
	"context"
	"time"
)

// Lease is the name of the lease that keeps the scheduled archive to one instance.
const Lease = "archive-metrics"

// archiveLeaseTTL is how long the lease lasts without renewal; a run renews it as it goes, so
// a stopped instance frees it within this time and another resumes the archive.
const archiveLeaseTTL = 10 * time.Minute

// ScheduleResult is what one tick of the schedule did.
type ScheduleResult struct {
	// Ran reports whether this instance ran the archive (false: another holds the lease).
	Ran    bool
	Report Report
	Err    error
}

// Schedule archives, first after first and then every every until ctx ends, what is older
// than the store's MinArchiveAge, on one instance at a time across the fleet: each run takes
// the lease Lease in the table as holder, renews it while it works, and gives it up
// when done. A run that stops (an error, a crash) is resumed by the next one, on this instance
// or another: the archive is idempotent and loses nothing. done, when not nil, hears each tick.
func (a *Archiver) Schedule(ctx context.Context, first, every time.Duration, holder string, done func(ScheduleResult)) {
	if every <= 0 {
		return
	}
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		res := a.scheduledRun(ctx, holder)
		if done != nil {
			done(res)
		}
		timer.Reset(every)
	}
}

func (a *Archiver) scheduledRun(ctx context.Context, holder string) ScheduleResult {
	held, err := a.db.AcquireLease(ctx, Lease, holder, archiveLeaseTTL)
	if err != nil || !held {
		return ScheduleResult{Err: err}
	}
	defer func() { _ = a.db.ReleaseLease(context.WithoutCancel(ctx), Lease, holder) }()
	renewed := a.obj.Now()
	progress := func(Progress) {
		if a.obj.Now().Sub(renewed) > archiveLeaseTTL/3 {
			if ok, err := a.db.AcquireLease(ctx, Lease, holder, archiveLeaseTTL); err == nil && ok {
				renewed = a.obj.Now()
			}
		}
	}
	rep, err := a.Archive(ctx, a.obj.Now().Add(-a.obj.MinArchiveAge()), progress)
	return ScheduleResult{Ran: true, Report: rep, Err: err}
}
