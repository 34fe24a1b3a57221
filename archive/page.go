package archive

import (
	"context"

	"github.com/capcat/catalogue/catalog"
	"github.com/capcat/catalogue/dynamo"
)

// TableRead reads a metrics window from the table alone, as its caller batches such reads (the
// GraphQL loaders): Page uses it for windows that cannot reach the archive.
type TableRead func(ctx context.Context) (*dynamo.Page[*catalog.Metric], error)

// Page returns a page of the metrics window q, deciding where it is read:
//
//   - a window that starts after the archive boundary (see Reaches) is read by table, from the
//     table alone in sort-key order, at no S3 cost;
//   - any other window is read across the table and the archive in time order (Metrics).
//
// For the latter, q without a CapabilityID names a component whose capability is found from
// its ID's claim (one GetItem) or, for a component without a claim (a table loaded before
// claims existed, until `check -repair`), from its newest metric in the table (one Query); a
// component that no capability holds has an empty page. A capability-wide q without
// ComponentIDs reads those that components returns (typically the capability's components as
// the caller already loaded them); none is an empty page. Errors are those of table,
// components and Metrics.
func (a *Archiver) Page(ctx context.Context, q MetricsQuery, table TableRead, components func(context.Context) ([]string, error)) (*dynamo.Page[*catalog.Metric], error) {
	if !a.Reaches(q.From) {
		return table(ctx)
	}
	switch {
	case q.CapabilityID == "":
		owner, err := a.componentOwner(ctx, q.ComponentID)
		if err != nil {
			return nil, err
		}
		if owner == "" {
			return &dynamo.Page[*catalog.Metric]{}, nil // no capability holds the component
		}
		q.CapabilityID = owner
	case q.ComponentID == "" && len(q.ComponentIDs) == 0:
		ids, err := components(ctx)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return &dynamo.Page[*catalog.Metric]{}, nil
		}
		q.ComponentIDs = ids
	}
	return a.Metrics(ctx, q)
}

// componentOwner returns the capability that holds a component ID, from its claim, or from its
// newest metric left in the table when it has none; "" when neither names one.
func (a *Archiver) componentOwner(ctx context.Context, componentID string) (string, error) {
	owner, err := a.db.ComponentOwner(ctx, componentID)
	if err == nil || !dynamo.IsNotFound(err) {
		return owner, err
	}
	probe, err := a.db.ComponentMetrics(ctx, dynamo.MetricFilter{ComponentID: componentID}, 1, "")
	if err != nil || len(probe.Items) == 0 {
		return "", err
	}
	return probe.Items[0].CapabilityID, nil
}
