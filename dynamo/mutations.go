package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/capcat/catalogue/catalog"
)

// clone deep-copies an entity through its JSON form (Meta is copied by the caller).
func clone[T any](v *T) (*T, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	return out, nil
}

// existing returns the capability of st, or ErrNotFound.
func (st *partitionState) existing(id string) (*catalog.Capability, error) {
	if st.capability == nil {
		return nil, catalog.Missing(catalog.EntityCapability, id, ErrNotFound)
	}
	c := *st.capability
	return &c, nil
}

// revised returns the next revision of old: a copy changed by change, after checking that old
// is still at the expected revision (a ConflictError naming what otherwise), then settled by
// settle (which restores what change may not touch and validates the result), then stamped with
// the next revision and now. It is the shared body of the Update* methods.
func revised[T any, P catalog.Entity[T]](what string, old P, expected int, change func(P) error, settle func(P) error, now time.Time) (P, error) {
	m := old.GetMeta()
	if m.Revision != expected {
		return nil, stale(what, m.Revision)
	}
	c, err := clone((*T)(old))
	if err != nil {
		return nil, err
	}
	n := P(c)
	n.SetMeta(m)
	if err := change(n); err != nil {
		return nil, err
	}
	if err := settle(n); err != nil {
		return nil, err
	}
	next := n.GetMeta()
	next.Revision, next.UpdatedAt = next.Revision+1, catalog.NewTimestamp(now)
	n.SetMeta(next)
	return n, nil
}

// created returns a copy of v as a new entity: revision 1, created and updated now.
func created[T any, P catalog.Entity[T]](v P, now time.Time) (P, error) {
	c, err := clone((*T)(v))
	if err != nil {
		return nil, err
	}
	n := P(c)
	n.SetMeta(catalog.Meta{Revision: 1, CreatedAt: catalog.NewTimestamp(now), UpdatedAt: catalog.NewTimestamp(now)})
	return n, nil
}

// insert adds to p the put of a new item, which must not exist yet and is the mutation's
// result; it takes a builder's (item, error) as they come.
func (p *plan) insert(it *item, err error) (*plan, error) {
	if err != nil {
		return nil, err
	}
	p.result = it
	p.put(it, notExists, nil)
	return p, nil
}

func stale(what string, current int) error {
	return &ConflictError{Reason: what + " was changed by someone else: expectedRevision is stale", CurrentRevision: current}
}

// withComponents sets the component counters and health of c from comps, the components the
// partition holds after the mutation.
func withComponents(c *catalog.Capability, comps []*catalog.Component) {
	a := &c.Aggregates
	a.TotalComponents, a.ActiveComponents = len(comps), 0
	for _, x := range comps {
		if x.Status == catalog.ComponentActive {
			a.ActiveComponents++
		}
	}
	a.HealthScore, a.HealthStatus = catalog.HealthScore(comps, a.TotalIncidents)
	a.Components = catalog.TallyComponents(comps)
}

func activeRule(r *catalog.Rule) int {
	if r != nil && r.Status == catalog.RuleActive {
		return 1
	}
	return 0
}

// CreateCapability creates a capability with zeroed counters. It returns a ConflictError if the
// ID exists.
func (s *Store) CreateCapability(ctx context.Context, c *catalog.Capability, idem Idempotency) (*catalog.Capability, error) {
	if err := ValidateID("capabilityId", c.CapabilityID); err != nil {
		return nil, err
	}
	if err := ValidateID("businessDomain", c.BusinessDomain); err != nil {
		return nil, err
	}
	if err := catalog.ValidateCapability(c); err != nil {
		return nil, err
	}
	it, err := s.continueHistory(ctx, c.CapabilityID, capabilityVersionPrefix(), func(base int) (*item, error) {
		var after time.Time // the newest incarnation of a deleted capability with this ID
		if base > 0 {
			var err error
			if after, err = s.lastIncarnation(ctx, c.CapabilityID); err != nil {
				return nil, err
			}
		}
		return s.mutate(ctx, c.CapabilityID, 0, idem, func(st *partitionState, now time.Time) (*plan, error) {
			if !now.After(after) {
				// The incarnation orders the partition's changes: this one's come after the
				// deleted one's, whatever the clocks say.
				now = after.Add(time.Microsecond)
			}
			return s.planCreateCapability(c, st, base, now)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("create capability %s: %w", c.CapabilityID, err)
	}
	return toCapability(it)
}

// planCreateCapability plans the first revision of c, base + 1 (base is the newest revision of
// a capability deleted with the same ID, whose history it continues).
func (s *Store) planCreateCapability(c *catalog.Capability, st *partitionState, base int, now time.Time) (*plan, error) {
	if st.meta != nil {
		return nil, &ConflictError{Reason: fmt.Sprintf("capability %s exists already", c.CapabilityID), CurrentRevision: st.meta.Revision}
	}
	n, err := clone(c)
	if err != nil {
		return nil, err
	}
	reported := c.Aggregates
	n.Aggregates = catalog.Aggregates{TotalIncidents: reported.TotalIncidents, AverageDeploymentTime: reported.AverageDeploymentTime,
		MonthlyOperationalCost: reported.MonthlyOperationalCost, UserCount: reported.UserCount}
	withComponents(n, nil)
	n.Meta = catalog.Meta{Revision: base + 1, CreatedAt: catalog.NewTimestamp(now), UpdatedAt: catalog.NewTimestamp(now)}
	items, err := capabilityItems(n, now)
	if err != nil {
		return nil, err
	}
	p := &plan{capability: n, create: true, result: items[0]}
	p.record(catalog.ChangeCapability, c.CapabilityID, catalog.ChangeCreated, nil)
	p.require(capabilityPK(c.CapabilityID), capabilityVersionSK(base+1), notExists, errHistoryExists)
	return p, nil
}

// UpdateCapability applies change to a copy of the capability at expectedRevision, keeps the
// previous version as a VERSION# item, and returns the new one. The aggregates' derived
// counters cannot be changed this way. It returns ErrNotFound, a ConflictError for a stale
// revision, or the *catalog.ValidationError of an invalid result.
func (s *Store) UpdateCapability(ctx context.Context, id string, expectedRevision int, change func(*catalog.Capability) error, idem Idempotency) (*catalog.Capability, error) {
	return s.updateCapability(ctx, id, expectedRevision, change, idem, catalog.ChangeUpdated)
}

// updateCapability is UpdateCapability recording its change with action.
func (s *Store) updateCapability(ctx context.Context, id string, expectedRevision int, change func(*catalog.Capability) error, idem Idempotency, action catalog.ChangeAction) (*catalog.Capability, error) {
	it, err := s.mutate(ctx, id, 0, idem, func(st *partitionState, now time.Time) (*plan, error) {
		old, err := st.existing(id)
		if err != nil {
			return nil, err
		}
		n, err := revised("capability "+id, old, expectedRevision, change, func(n *catalog.Capability) error {
			// Identity and derived counters are the store's.
			reported := n.Aggregates
			n.CapabilityID, n.Aggregates = old.CapabilityID, old.Aggregates
			n.Aggregates.TotalIncidents, n.Aggregates.AverageDeploymentTime = reported.TotalIncidents, reported.AverageDeploymentTime
			n.Aggregates.MonthlyOperationalCost, n.Aggregates.UserCount = reported.MonthlyOperationalCost, reported.UserCount
			if err := ValidateID("businessDomain", n.BusinessDomain); err != nil {
				return err
			}
			if err := catalog.ValidateCapability(n); err != nil {
				return err
			}
			if n.Aggregates.TotalIncidents != old.Aggregates.TotalIncidents {
				comps, err := s.componentsOf(ctx, id)
				if err != nil {
					return err
				}
				withComponents(n, comps)
			}
			return nil
		}, now)
		if err != nil {
			return nil, err
		}
		p := &plan{capability: n}
		p.put(versionOf(st.meta, capabilityVersionSK(old.Revision)), notExists, nil)
		items, err := capabilityItems(n, now)
		if err != nil {
			return nil, err
		}
		p.result = items[0]
		p.record(catalog.ChangeCapability, id, action, fieldsChanged(st.meta, items[0]))
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("update capability %s: %w", id, err)
	}
	return toCapability(it)
}

// componentsOf reads a capability's components, strongly consistent.
func (s *Store) componentsOf(ctx context.Context, id string) ([]*catalog.Component, error) {
	st, err := s.loadState(ctx, id, SegComponents)
	if err != nil {
		return nil, err
	}
	return st.Components, nil
}

// TransitionCapability moves a capability's status one lifecycle step (see
// catalog.CapabilityTransitions).
func (s *Store) TransitionCapability(ctx context.Context, id string, to catalog.CapabilityStatus, expectedRevision int, idem Idempotency) (*catalog.Capability, error) {
	return s.updateCapability(ctx, id, expectedRevision, func(c *catalog.Capability) error {
		if err := catalog.CheckCapabilityTransition(c.Status, to); err != nil {
			return err
		}
		c.Status = to
		return nil
	}, idem, catalog.ChangeTransitioned)
}

// AddComponent adds a component to its capability, and claims its ID for it in the same
// transaction. It returns ErrNotFound for an unknown capability and a *ConflictError for a
// component ID that the capability, or any other, already has.
func (s *Store) AddComponent(ctx context.Context, c *catalog.Component, idem Idempotency) (*catalog.Component, error) {
	if err := validateComponentIDs(c); err != nil {
		return nil, err
	}
	if err := catalog.ValidateComponent(c); err != nil {
		return nil, err
	}
	it, err := s.mutate(ctx, c.CapabilityID, SegComponents, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(c.CapabilityID)
		if err != nil {
			return nil, err
		}
		if i := indexOf(st.Components, c.ComponentID); i >= 0 {
			return nil, &ConflictError{Reason: fmt.Sprintf("component %s exists already in %s", c.ComponentID, c.CapabilityID), CurrentRevision: st.Components[i].Revision}
		}
		n, err := created(c, now)
		if err != nil {
			return nil, err
		}
		withComponents(capability, append(st.Components, n))
		p, err := (&plan{capability: capability}).insert(componentItem(n, now))
		if err != nil {
			return nil, err
		}
		p.claim(claimItem(n, now), &ConflictError{Reason: fmt.Sprintf("component ID %s is taken by another capability: a component ID names one component across the catalogue", c.ComponentID)})
		p.record(catalog.ChangeComponent, c.ComponentID, catalog.ChangeCreated, nil)
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("add component %s: %w", c.ComponentID, err)
	}
	return toComponent(it)
}

func validateComponentIDs(c *catalog.Component) error {
	for _, f := range []struct{ name, v string }{{"capabilityId", c.CapabilityID}, {"componentId", c.ComponentID}, {"componentType", c.ComponentType}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
	}
	return nil
}

// indexOf returns the index of the entity with the given ID (componentId, ruleId) in xs, or -1.
func indexOf[T interface{ LocalID() string }](xs []T, id string) int {
	return slices.IndexFunc(xs, func(x T) bool { return x.LocalID() == id })
}

// UpdateComponent applies change to a copy of the component at expectedRevision. A new order
// moves the item to its new sort key, and a new name renames the copies its dependencies keep,
// in the same transaction.
func (s *Store) UpdateComponent(ctx context.Context, capabilityID, componentID string, expectedRevision int, change func(*catalog.Component) error, idem Idempotency) (*catalog.Component, error) {
	if err := ValidateID("componentId", componentID); err != nil {
		return nil, err
	}
	it, err := s.mutate(ctx, capabilityID, SegComponents|SegDependencies, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		i := indexOf(st.Components, componentID)
		if i < 0 {
			return nil, catalog.MissingIn(capabilityID, catalog.EntityComponent, componentID, ErrNotFound)
		}
		n, err := revised("component "+componentID, st.Components[i], expectedRevision, change, func(n *catalog.Component) error {
			n.CapabilityID, n.ComponentID = capabilityID, componentID
			if err := validateComponentIDs(n); err != nil {
				return err
			}
			return catalog.ValidateComponent(n)
		}, now)
		if err != nil {
			return nil, err
		}
		return s.replaceComponent(capability, st, i, n, now)
	})
	if err != nil {
		return nil, fmt.Errorf("update component %s: %w", componentID, err)
	}
	return toComponent(it)
}

// replaceComponent plans writing n in place of the i-th component of st (moving its key when
// its order changed) and recounts the capability.
func (s *Store) replaceComponent(capability *catalog.Capability, st *partitionState, i int, n *catalog.Component, now time.Time) (*plan, error) {
	old := st.Components[i]
	comps := append([]*catalog.Component{}, st.Components...)
	comps[i] = n
	withComponents(capability, comps)
	ci, err := componentItem(n, now)
	if err != nil {
		return nil, err
	}
	p := &plan{capability: capability, result: ci}
	p.record(catalog.ChangeComponent, n.ComponentID, catalog.ChangeUpdated, fieldsChanged(st.items[componentSK(old.Order, old.ComponentID)], ci))
	cond, vals := revisionIs(old.Revision)
	oldSK := componentSK(old.Order, old.ComponentID)
	if oldSK != ci.SK {
		p.del(capabilityPK(capability.CapabilityID), oldSK, cond, vals)
		p.put(ci, notExists, nil)
	} else {
		p.put(ci, cond, vals)
	}
	if n.Name != old.Name {
		// The edges keep a copy of their ends' names: renamed in the same transaction.
		for _, d := range st.Dependencies {
			if d.SourceComponentID != n.ComponentID && d.TargetComponentID != n.ComponentID {
				continue
			}
			e := *d
			if e.SourceComponentID == n.ComponentID {
				e.SourceComponentName = n.Name
			}
			if e.TargetComponentID == n.ComponentID {
				e.TargetComponentName = n.Name
			}
			di, err := dependencyItem(&e, now)
			if err != nil {
				return nil, err
			}
			dcond, dvals := revisionIs(d.Revision)
			p.put(di, dcond, dvals)
		}
	}
	return p, nil
}

// RemoveComponent removes a component and releases its ID's claim, in one transaction. Its
// dependencies go with it when cascade is set;
// otherwise a component that has any is refused with a *catalog.ValidationError.
func (s *Store) RemoveComponent(ctx context.Context, capabilityID, componentID string, cascade bool, idem Idempotency) error {
	if err := ValidateID("componentId", componentID); err != nil {
		return err
	}
	_, err := s.mutate(ctx, capabilityID, SegComponents|SegDependencies, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		i := indexOf(st.Components, componentID)
		if i < 0 {
			return nil, catalog.MissingIn(capabilityID, catalog.EntityComponent, componentID, ErrNotFound)
		}
		var edges []*catalog.Dependency
		for _, d := range st.Dependencies {
			if d.SourceComponentID == componentID || d.TargetComponentID == componentID {
				edges = append(edges, d)
			}
		}
		if len(edges) > 0 && !cascade {
			return nil, catalog.Invalid("cascade", "component %s has %d dependencies; remove them first or pass cascade: true", componentID, len(edges))
		}
		comps := append(append([]*catalog.Component{}, st.Components[:i]...), st.Components[i+1:]...)
		withComponents(capability, comps)
		capability.Aggregates.TotalDependencies -= len(edges)
		p := &plan{capability: capability}
		old := st.Components[i]
		cond, vals := revisionIs(old.Revision)
		p.del(capabilityPK(capabilityID), componentSK(old.Order, componentID), cond, vals)
		for _, d := range edges {
			p.del(capabilityPK(capabilityID), dependencySK(d.SourceComponentID, d.TargetComponentID), "attribute_exists(PK)", nil)
		}
		p.release(capabilityID, componentID, &ConflictError{Reason: fmt.Sprintf("the claim of component ID %s names another capability: run `check -repair`", componentID)})
		p.record(catalog.ChangeComponent, componentID, catalog.ChangeDeleted, nil)
		return p, nil
	})
	if err != nil {
		return fmt.Errorf("remove component %s: %w", componentID, err)
	}
	return nil
}

// AddDependency adds the edge source -> target between two components of the capability.
func (s *Store) AddDependency(ctx context.Context, d *catalog.Dependency, idem Idempotency) (*catalog.Dependency, error) {
	for _, f := range []struct{ name, v string }{{"capabilityId", d.CapabilityID}, {"sourceComponentId", d.SourceComponentID}, {"targetComponentId", d.TargetComponentID}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return nil, err
		}
	}
	it, err := s.mutate(ctx, d.CapabilityID, SegComponents|SegDependencies, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(d.CapabilityID)
		if err != nil {
			return nil, err
		}
		n, err := created(d, now)
		if err != nil {
			return nil, err
		}
		if err := catalog.ValidateDependency(n, st.Components, st.Dependencies); err != nil {
			return nil, err
		}
		n.SourceComponentName = st.Components[indexOf(st.Components, n.SourceComponentID)].Name
		n.TargetComponentName = st.Components[indexOf(st.Components, n.TargetComponentID)].Name
		capability.Aggregates.TotalDependencies = len(st.Dependencies) + 1
		p := &plan{capability: capability}
		p.record(catalog.ChangeDependency, n.SourceComponentID+"->"+n.TargetComponentID, catalog.ChangeCreated, nil)
		return p.insert(dependencyItem(n, now))
	})
	if err != nil {
		return nil, fmt.Errorf("add dependency %s -> %s: %w", d.SourceComponentID, d.TargetComponentID, err)
	}
	return toDependency(it)
}

// RemoveDependency removes the edge source -> target. It returns ErrNotFound if there is none.
func (s *Store) RemoveDependency(ctx context.Context, capabilityID, sourceID, targetID string, idem Idempotency) error {
	for _, f := range []struct{ name, v string }{{"sourceComponentId", sourceID}, {"targetComponentId", targetID}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
	}
	_, err := s.mutate(ctx, capabilityID, SegDependencies, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		if st.items[dependencySK(sourceID, targetID)] == nil {
			return nil, catalog.MissingIn(capabilityID, catalog.EntityDependency, sourceID+"->"+targetID, ErrNotFound)
		}
		capability.Aggregates.TotalDependencies = len(st.Dependencies) - 1
		p := &plan{capability: capability}
		p.del(capabilityPK(capabilityID), dependencySK(sourceID, targetID), "attribute_exists(PK)", nil)
		p.record(catalog.ChangeDependency, sourceID+"->"+targetID, catalog.ChangeDeleted, nil)
		return p, nil
	})
	if err != nil {
		return fmt.Errorf("remove dependency %s -> %s: %w", sourceID, targetID, err)
	}
	return nil
}

// StartJob records a new job, pending or running. Job IDs are unique across the catalogue.
func (s *Store) StartJob(ctx context.Context, j *catalog.Job, idem Idempotency) (*catalog.Job, error) {
	for _, f := range []struct{ name, v string }{{"capabilityId", j.CapabilityID}, {"jobId", j.JobID}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return nil, err
		}
	}
	if j.Status != catalog.JobPending && j.Status != catalog.JobRunning {
		return nil, catalog.Invalid("status", "a job starts PENDING or RUNNING, not %s", j.Status)
	}
	if j.StartTime.IsZero() {
		j.StartTime = catalog.NewTimestamp(s.now())
	}
	it, err := s.mutate(ctx, j.CapabilityID, SegComponents, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(j.CapabilityID)
		if err != nil {
			return nil, err
		}
		if err := catalog.ValidateJob(j, st.Components); err != nil {
			return nil, err
		}
		if err := startGated(j); err != nil {
			return nil, err
		}
		if existing, err := s.JobByID(ctx, j.JobID); err == nil {
			return nil, &ConflictError{Reason: fmt.Sprintf("job %s exists already", j.JobID), CurrentRevision: existing.Revision}
		} else if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		n, err := created(j, now)
		if err != nil {
			return nil, err
		}
		capability.Aggregates.TotalJobs++
		catalog.MoveActiveJob(&capability.Aggregates, "", "", n.JobType, n.Status)
		p := &plan{capability: capability}
		p.record(catalog.ChangeJob, n.JobID, catalog.ChangeCreated, nil)
		return p.insert(jobItem(n, now))
	})
	if err != nil {
		return nil, fmt.Errorf("start job %s: %w", j.JobID, err)
	}
	return toJob(it)
}

// startGated applies the gate rules to a new deployment or rollback job: it starts RUNNING
// only with every preDeployment gate passed, never with a failed gate, and the metrics the
// server maintains start at zero.
func startGated(j *catalog.Job) error {
	catalog.KeepMaintainedMetrics(nil, j)
	status := j.Status
	if _, err := catalog.SettleGatedJob(nil, j); err != nil {
		return err
	}
	if j.Status != status {
		for _, g := range append(catalog.PreGates(j), catalog.PostGates(j)...) {
			if g.Result == catalog.GateFailed {
				j.Status = status
				return catalog.Invalid(g.Field, "the gate failed: a %s job does not start with a failed gate", j.JobType)
			}
		}
	}
	return nil
}

// UpdateJob applies change to a copy of the job at expectedRevision. Status moves follow
// catalog.JobTransitions and, for deployment and rollback jobs, their validation gates
// (catalog.SettleGatedJob); finishing sets endTime (now unless given) and duration, and the
// capability's job counters, lastDeployment and averageDeploymentTime move with it. A gated job
// that finishes moves its target components' versions (catalog.FinishGatedJob) in the same
// transaction, with a change record per component moved. Completing a RUNNING automatic
// deployment first reads its targets' samples since its startTime (one Query per target, in
// parallel): a breach that a recordMetrics call left unrolled rolls the job back instead (the
// transaction rollbackOnBreach writes) and the answer is a ConflictError naming the breach.
func (s *Store) UpdateJob(ctx context.Context, jobID string, expectedRevision int, change func(*catalog.Job) error, idem Idempotency) (*catalog.Job, error) {
	found, err := s.JobByID(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("update job %s: %w", jobID, err)
	}
	capabilityID, sk := found.CapabilityID, jobSK(found.StartTime.Time, jobID)
	// The breach check of a completing automatic deployment, read once for the job's revision
	// (a retried attempt of the transaction at the same revision reuses it).
	checkedAt, checked, breached := -1, breach{}, false
	it, err := s.mutate(ctx, capabilityID, SegComponents, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		cur, err := s.readItem(ctx, capabilityPK(capabilityID), sk, true)
		if IsNotFound(err) {
			return nil, catalog.Missing(catalog.EntityJob, jobID, err)
		}
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", jobID, err)
		}
		old, err := toJob(cur)
		if err != nil {
			return nil, err
		}
		st.items[sk] = cur // what the commit's index writes compare with
		var moves []catalog.VersionMove
		automatic := false
		n, err := revised("job "+jobID, old, expectedRevision, change, func(n *catalog.Job) error {
			n.JobID, n.CapabilityID, n.StartTime = old.JobID, old.CapabilityID, old.StartTime
			catalog.KeepMaintainedMetrics(old, n)
			if automatic, err = catalog.SettleGatedJob(old, n); err != nil {
				return err
			}
			if err := catalog.CheckJobTransition(old.Status, n.Status); err != nil {
				return err
			}
			if err := catalog.ValidateJobUpdate(old, n, st.Components); err != nil {
				return err
			}
			if n.Status.Terminal() && !old.Status.Terminal() {
				moves = finishJob(capability, n, automatic, now)
			}
			return nil
		}, now)
		if err != nil {
			return nil, err
		}
		if n.Status == catalog.JobCompleted && mayBreach(old) {
			// A breach whose recordMetrics call stopped before its rollback transaction must
			// not be completed over: read the targets' samples since the startTime.
			if checkedAt != old.Revision {
				if checked, breached, err = s.breachSince(ctx, old); err != nil {
					return nil, fmt.Errorf("job %s: %w", jobID, err)
				}
				checkedAt = old.Revision
			}
			if breached {
				return nil, &breachFound{b: checked}
			}
		}
		return planJobMove(st, capability, old, n, cur, moves, "", now)
	})
	var bf *breachFound
	if errors.As(err, &bf) {
		// Rolled back instead, by the transaction rollbackOnBreach writes (exactly once: it
		// moves the job only while it is RUNNING), and the caller told so.
		// It is a CONFLICT: the job is not what the caller read (it is ROLLED_BACK, at the
		// currentRevision given; none when another writer moved it first).
		rolled, err := s.rollBack(ctx, bf.b)
		conflict := &ConflictError{Reason: fmt.Sprintf("job %s was rolled back, not completed: %s", jobID, bf.b.reason)}
		switch {
		case errors.Is(err, errNotRunning):
		case err != nil:
			return nil, fmt.Errorf("update job %s: roll back: %w", jobID, err)
		default:
			conflict.CurrentRevision = rolled.Revision
		}
		return nil, conflict
	}
	if err != nil {
		return nil, fmt.Errorf("update job %s: %w", jobID, err)
	}
	return toJob(it)
}

// finishJob settles a job n that has just finished: its endTime (now unless given) and
// duration, the capability's job counters, lastDeployment and averageDeploymentTime, and, for a
// gated job, what catalog.FinishGatedJob maintains. It returns the version moves to write.
func finishJob(capability *catalog.Capability, n *catalog.Job, automatic bool, now time.Time) []catalog.VersionMove {
	if n.EndTime == nil {
		n.EndTime = catalog.TimePtr(now)
	}
	d := int(n.EndTime.Sub(n.StartTime.Time).Seconds())
	n.Duration = &d
	a := &capability.Aggregates
	a.SuccessfulJobs += catalog.JobSucceeded(n.Status)
	a.FailedJobs += catalog.JobFailedCount(n.Status)
	if end := catalog.DeploymentEnd(n); end != nil {
		if a.LastDeployment == nil || end.After(a.LastDeployment.Time) {
			a.LastDeployment = end
		}
		catalog.AddDeploymentTime(a, d)
	}
	return catalog.FinishGatedJob(n, automatic)
}

// planJobMove plans writing job n (read as cur, decoded as old) at its next revision with the
// version moves of its target components: each component whose version changes is written at
// its next revision, conditioned on the one read, with a change record naming the job. detail,
// when set, is the job change's detail (why the server moved it). A guarded move (a rolled-back
// deployment's restore) is skipped when the component no longer has the job's toVersion, and
// the job change's detail says so; so is the move of a component that no longer exists (removed
// while the job ran: it is not written back).
func planJobMove(st *partitionState, capability *catalog.Capability, old, n *catalog.Job, cur *item, moves []catalog.VersionMove, detail string, now time.Time) (*plan, error) {
	catalog.MoveActiveJob(&capability.Aggregates, old.JobType, old.Status, n.JobType, n.Status)
	ji, err := jobItem(n, now)
	if err != nil {
		return nil, err
	}
	p := &plan{capability: capability, result: ji}
	cond, vals := revisionIs(old.Revision)
	p.put(ji, cond, vals)
	action := catalog.ChangeUpdated
	if n.Status != old.Status {
		action = catalog.ChangeTransitioned
	}
	jobChange := len(p.changes)
	p.changes = append(p.changes, changeSpec{entity: catalog.ChangeJob, entityID: n.JobID, action: action, fields: fieldsChanged(cur, ji), detail: detail})
	var notes []string
	seen := map[string]bool{}
	for _, m := range moves {
		i := indexOf(st.Components, m.ComponentID)
		if i < 0 && !seen[m.ComponentID] {
			seen[m.ComponentID] = true
			notes = append(notes, fmt.Sprintf("%s no longer exists: version %s not set", m.ComponentID, m.Version))
			continue
		}
		if i < 0 || seen[m.ComponentID] || st.Components[i].Version == m.Version {
			continue
		}
		if m.Guard && st.Components[i].Version != m.IfAt {
			notes = append(notes, fmt.Sprintf("%s left at %s (not %s, the version the job put there): %s not restored", m.ComponentID, st.Components[i].Version, m.IfAt, m.Version))
			continue
		}
		seen[m.ComponentID] = true
		c := st.Components[i]
		nc, err := clone(c)
		if err != nil {
			return nil, err
		}
		nc.Meta = c.Meta
		nc.Version = m.Version
		nc.Revision, nc.UpdatedAt = c.Revision+1, catalog.NewTimestamp(now)
		ci, err := componentItem(nc, now)
		if err != nil {
			return nil, err
		}
		cond, vals := revisionIs(c.Revision)
		p.put(ci, cond, vals)
		p.changes = append(p.changes, changeSpec{entity: catalog.ChangeComponent, entityID: m.ComponentID, action: catalog.ChangeUpdated,
			fields: fieldsChanged(st.items[ci.SK], ci), detail: fmt.Sprintf("version %s -> %s by job %s (%s)", c.Version, m.Version, n.JobID, strings.ToUpper(string(n.Status)))})
	}
	if len(notes) > 0 {
		p.changes[jobChange].detail = strings.Join(append(slices.DeleteFunc([]string{detail}, func(s string) bool { return s == "" }), notes...), "; ")
	}
	return p, nil
}

// validateRuleIDs checks r's IDs and fields: ValidateRuleFields on create (old is nil),
// ValidateRuleUpdate of old as patched into r on update.
func validateRuleIDs(old, r *catalog.Rule) error {
	for _, f := range []struct{ name, v string }{{"capabilityId", r.CapabilityID}, {"ruleId", r.RuleID}} {
		if err := ValidateID(f.name, f.v); err != nil {
			return err
		}
	}
	if old != nil {
		return catalog.ValidateRuleUpdate(old, r)
	}
	return catalog.ValidateRuleFields(r)
}

// CreateRule adds a configuration rule, validated (operators, severity mapping, effective
// window) before it is written.
func (s *Store) CreateRule(ctx context.Context, r *catalog.Rule, idem Idempotency) (*catalog.Rule, error) {
	if err := validateRuleIDs(nil, r); err != nil {
		return nil, err
	}
	it, err := s.continueHistory(ctx, r.CapabilityID, ruleVersionPrefix(r.RuleID), func(base int) (*item, error) {
		return s.mutate(ctx, r.CapabilityID, SegRules, idem, func(st *partitionState, now time.Time) (*plan, error) {
			capability, err := st.existing(r.CapabilityID)
			if err != nil {
				return nil, err
			}
			if i := indexOf(st.Rules, r.RuleID); i >= 0 {
				return nil, &ConflictError{Reason: fmt.Sprintf("rule %s exists already", r.RuleID), CurrentRevision: st.Rules[i].Revision}
			}
			n, err := created(r, now)
			if err != nil {
				return nil, err
			}
			n.Revision = base + 1
			capability.Aggregates.TotalRules = len(st.Rules) + 1
			capability.Aggregates.ActiveRules = countActive(st.Rules) + activeRule(n)
			p, err := (&plan{capability: capability}).insert(ruleItem(n, now))
			if err != nil {
				return nil, err
			}
			p.record(catalog.ChangeRule, r.RuleID, catalog.ChangeCreated, nil)
			p.require(capabilityPK(r.CapabilityID), ruleVersionSK(r.RuleID, base+1), notExists, errHistoryExists)
			return p, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("create rule %s: %w", r.RuleID, err)
	}
	return toRule(it)
}

func countActive(rs []*catalog.Rule) int {
	n := 0
	for _, r := range rs {
		n += activeRule(r)
	}
	return n
}

// UpdateRule applies change to a copy of the rule at expectedRevision, validates the result
// (catalog.ValidateRuleUpdate), keeps the previous version as a VERSION# item, and moves the
// rule's key when its order changed.
func (s *Store) UpdateRule(ctx context.Context, capabilityID, ruleID string, expectedRevision int, change func(*catalog.Rule) error, idem Idempotency) (*catalog.Rule, error) {
	if err := ValidateID("ruleId", ruleID); err != nil {
		return nil, err
	}
	it, err := s.mutate(ctx, capabilityID, SegRules, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		i := indexOf(st.Rules, ruleID)
		if i < 0 {
			return nil, catalog.MissingIn(capabilityID, catalog.EntityRule, ruleID, ErrNotFound)
		}
		old := st.Rules[i]
		n, err := revised("rule "+ruleID, old, expectedRevision, change, func(n *catalog.Rule) error {
			n.CapabilityID, n.RuleID = capabilityID, ruleID
			return validateRuleIDs(old, n)
		}, now)
		if err != nil {
			return nil, err
		}
		capability.Aggregates.TotalRules = len(st.Rules)
		capability.Aggregates.ActiveRules = countActive(st.Rules) - activeRule(old) + activeRule(n)
		ri, err := ruleItem(n, now)
		if err != nil {
			return nil, err
		}
		p := &plan{capability: capability, result: ri}
		oldItem := st.items[ruleSK(old.Order, ruleID)]
		p.record(catalog.ChangeRule, ruleID, catalog.ChangeUpdated, fieldsChanged(oldItem, ri))
		p.put(versionOf(oldItem, ruleVersionSK(ruleID, old.Revision)), notExists, nil)
		cond, vals := revisionIs(old.Revision)
		if oldItem.SK != ri.SK {
			p.del(capabilityPK(capabilityID), oldItem.SK, cond, vals)
			p.put(ri, notExists, nil)
		} else {
			p.put(ri, cond, vals)
		}
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("update rule %s: %w", ruleID, err)
	}
	return toRule(it)
}

// DeleteRule removes a rule; its version history stays. It returns ErrNotFound if there is
// none.
func (s *Store) DeleteRule(ctx context.Context, capabilityID, ruleID string, idem Idempotency) error {
	if err := ValidateID("ruleId", ruleID); err != nil {
		return err
	}
	_, err := s.mutate(ctx, capabilityID, SegRules, idem, func(st *partitionState, now time.Time) (*plan, error) {
		capability, err := st.existing(capabilityID)
		if err != nil {
			return nil, err
		}
		i := indexOf(st.Rules, ruleID)
		if i < 0 {
			return nil, catalog.MissingIn(capabilityID, catalog.EntityRule, ruleID, ErrNotFound)
		}
		old := st.Rules[i]
		capability.Aggregates.TotalRules = len(st.Rules) - 1
		capability.Aggregates.ActiveRules = countActive(st.Rules) - activeRule(old)
		p := &plan{capability: capability}
		cond, vals := revisionIs(old.Revision)
		p.del(capabilityPK(capabilityID), ruleSK(old.Order, ruleID), cond, vals)
		p.entomb(ctx, st.items[ruleSK(old.Order, ruleID)], func(rev int) string { return ruleVersionSK(ruleID, rev) }, now)
		p.record(catalog.ChangeRule, ruleID, catalog.ChangeDeleted, nil)
		return p, nil
	})
	if err != nil {
		return fmt.Errorf("delete rule %s: %w", ruleID, err)
	}
	return nil
}
