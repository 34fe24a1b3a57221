package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	if err := checkPartitionItems(id, items); err != nil {
		return err
	}
	diffs, err := checkRollups(items, s.now())
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("check %s: rollups: %v", id, diffs)
	}
	return nil
}

// checkPartitionItems is CheckPartition over the items of the partition, read already, but for
// the rollups (checkRollups).
func checkPartitionItems(id string, items []*item) error {
	var meta, domain, health *item
	for _, it := range items {
		switch it.EntityType {
		case entityCapability:
			meta = it
		case entityDomainIndex:
			domain = it
		case entityHealthIndex:
			health = it
		}
	}
	count, err := recountItems(items)
	if err != nil {
		return err
	}
	if meta == nil {
		return fmt.Errorf("check: %w", catalog.Missing(catalog.EntityCapability, id, ErrNotFound))
	}
	c, err := toCapability(meta)
	if err != nil {
		return err
	}
	want := c.Aggregates
	count.aggregate(&want)
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
	cmp("activeJobs", got.ActiveJobs, want.ActiveJobs)
	cmp("componentTally", got.Components, want.Components)
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
	recounted := *c
	recounted.Aggregates = want
	cards, err := auditCards(&recounted, items)
	if err != nil {
		return err
	}
	diffs = append(diffs, cards...)
	if len(diffs) > 0 {
		return fmt.Errorf("check %s: %v", id, diffs)
	}
	return nil
}

// recount is what a partition holds, as its aggregates count it.
type recount struct {
	Partition
	jobs []*catalog.Job
}

// recountItems decodes the entities of a partition's items that its aggregates count.
func recountItems(items []*item) (*recount, error) {
	r := &recount{}
	for _, it := range items {
		if it.EntityType != entityJob {
			if err := r.add(it); err != nil {
				return nil, err
			}
			continue
		}
		j, err := toJob(it)
		if err != nil {
			return nil, err
		}
		r.jobs = append(r.jobs, j)
	}
	return r, nil
}

// aggregate sets a's derived aggregates from the recount.
func (r *recount) aggregate(a *catalog.Aggregates) {
	catalog.Aggregate(a, r.Components, len(r.Dependencies), r.jobs, r.Rules)
}

// keyRow is an item's table and index keys, as a check compares them.
type keyRow struct{ pk, sk, gsi1PK, gsi1SK string }

func (k keyRow) String() string { return k.pk + " " + k.sk + " (" + k.gsi1SK + ")" }

// scanSegments is how many parallel segments a whole-table scan uses.
const scanSegments = 4

// scanKeys returns the keys of every item of the table, or of every entry of GSI1.
func (s *Store) scanKeys(ctx context.Context, index bool) ([]keyRow, error) {
	raw, err := s.scan(ctx, index, "PK, SK, GSI1PK, GSI1SK")
	if err != nil {
		return nil, err
	}
	rows := make([]keyRow, len(raw))
	for i, m := range raw {
		rows[i] = keyRow{str(m[attrPK]), str(m[attrSK]), str(m[attrGSI1PK]), str(m[attrGSI1SK])}
	}
	return rows, nil
}

// CheckIndexes compares GSI1 with a recount from a full scan of the table: under each index
// partition key, the index must hold exactly the items of the table that carry it, with their
// sort keys. It returns one finding per listing that differs, none when the index and the table
// agree. It scans the table and the index once each: an audit, not a hot path.
func (s *Store) CheckIndexes(ctx context.Context) ([]string, error) {
	group := func(rows []keyRow) map[string][]keyRow {
		m := map[string][]keyRow{}
		for _, r := range rows {
			if r.gsi1PK != "" {
				m[r.gsi1PK] = append(m[r.gsi1PK], r)
			}
		}
		return m
	}
	table, err := s.scanKeys(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("check indexes: %w", err)
	}
	index, err := s.scanKeys(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("check indexes: %w", err)
	}
	want, got := group(table), group(index)
	var findings []string
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for _, pk := range slices.Sorted(maps.Keys(keys)) {
		if f := compareListing(pk, got[pk], want[pk]); f != "" {
			findings = append(findings, f)
		}
	}
	return findings, nil
}

// compareListing describes how an index listing differs from the items that should be in it
// (by key, and by index sort key), or returns "" when it does not.
func compareListing(pk string, got, want []keyRow) string {
	in := func(rows []keyRow) map[keyRow]bool {
		m := make(map[keyRow]bool, len(rows))
		for _, r := range rows {
			m[r] = true
		}
		return m
	}
	have, should := in(got), in(want)
	var missing, extra []string
	for r := range should {
		if !have[r] {
			missing = append(missing, r.String())
		}
	}
	for r := range have {
		if !should[r] {
			extra = append(extra, r.String())
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	slices.Sort(missing)
	slices.Sort(extra)
	msg := fmt.Sprintf("GSI1 %s lists %d items, the table holds %d", pk, len(got), len(want))
	if len(missing) > 0 {
		msg += fmt.Sprintf("; missing %d: %s", len(missing), strings.Join(firstN(missing, 5), ", "))
	}
	if len(extra) > 0 {
		msg += fmt.Sprintf("; not in the table %d: %s", len(extra), strings.Join(firstN(extra, 5), ", "))
	}
	return msg
}

func firstN(s []string, n int) []string { return s[:min(n, len(s))] }

// FindingOutbox is a notification whose outbox entry (GSI1 OUTBOX#PENDING) is not what its state
// asks: a PENDING one without its entry or due at another time, a settled one still listed, a
// detached one settled and left behind, or an entry that is no notification.
const FindingOutbox = "outbox"

// checkOutbox checks the outbox index against the notifications of items (every item of the
// table that is a notification or carries an OUTBOX#PENDING entry): every PENDING notification
// has its entry with the due time it holds (nextAttemptAt, else when it was queued), no DELIVERED
// or FAILED one has one, a detached notification (its capability deleted) is PENDING, and the
// entries are notifications. An entry whose item is missing is CheckIndexes' finding (the index
// lists an item the table does not hold). It returns the findings, each naming the item's key.
func checkOutbox(items []*item) []Finding {
	var out []Finding
	add := func(it *item, repairable bool, format string, args ...any) {
		out = append(out, Finding{Kind: FindingOutbox, Subject: it.PK + " " + it.SK, Detail: fmt.Sprintf(format, args...), Repairable: repairable})
	}
	for _, it := range items {
		if it.EntityType != entityNotify {
			if it.GSI1PK == outboxPK {
				add(it, false, "listed in %s but it is a %s, not a notification", outboxPK, it.EntityType)
			}
			continue
		}
		n, err := toNotification(it)
		if err != nil {
			add(it, false, "%v", err)
			continue
		}
		want := outboxEntry(it, n)
		switch {
		case n.Detached && n.Status != catalog.NotificationPending:
			add(it, true, "%s notification %s of a deleted capability left behind (settled ones are deleted)", n.Status, n.DeliveryID)
		case n.Status == catalog.NotificationPending && it.GSI1PK != outboxPK:
			add(it, true, "PENDING notification %s has no %s entry: it would never be delivered", n.DeliveryID, outboxPK)
		case n.Status == catalog.NotificationPending && it.GSI1SK != want:
			add(it, true, "PENDING notification %s is listed in %s as %q, want %q (due at its nextAttemptAt, else when it was queued)", n.DeliveryID, outboxPK, it.GSI1SK, want)
		case n.Status != catalog.NotificationPending && it.GSI1PK != "":
			add(it, true, "%s notification %s is still listed in %s", n.Status, n.DeliveryID, it.GSI1PK)
		}
	}
	return out
}

// outboxEntry is the GSI1SK the outbox entry of it (notification n) must have while n is
// PENDING: its due time, capability and partition key (a detached notification keeps the key it
// had in the partition).
func outboxEntry(it *item, n *catalog.Notification) string {
	sk := it.SK
	if n.Detached {
		sk = notifySK(n.CreatedAt.Time, n.DeliveryID)
	}
	due := n.CreatedAt.Time
	if n.NextAttemptAt != nil {
		due = n.NextAttemptAt.Time
	}
	return outboxGSI1SK(due, n.CapabilityID, sk)
}

// repairOutbox fixes an outbox finding on the item named subject ("PK SK"): a detached
// notification settled is deleted, any other notification is put again with the index keys its
// state asks; each only if the item is still the one read (its Revision and UpdatedAt).
func (s *Store) repairOutbox(ctx context.Context, subject string) error {
	pk, sk, ok := strings.Cut(subject, " ")
	if !ok {
		return fmt.Errorf("outbox finding %q names no item", subject)
	}
	it, err := s.readItem(ctx, pk, sk, true)
	if IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	n, err := toNotification(it)
	if err != nil {
		return err
	}
	cond := aws.String("Revision = :rev AND #u = :u")
	names := map[string]string{"#u": attrUpdatedAt}
	values := map[string]types.AttributeValue{":rev": num(it.Revision), ":u": &types.AttributeValueMemberS{Value: keyTime(it.UpdatedAt)}}
	if n.Detached && n.Status != catalog.NotificationPending {
		_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: keyOf(pk, sk),
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	} else {
		fixed := *it
		fixed.GSI1PK, fixed.GSI1SK = "", ""
		if n.Status == catalog.NotificationPending {
			fixed.GSI1PK, fixed.GSI1SK = outboxPK, outboxEntry(it, n)
		}
		var av map[string]types.AttributeValue
		if av, err = fixed.av(); err != nil {
			return err
		}
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: av,
			ConditionExpression: cond, ExpressionAttributeNames: names, ExpressionAttributeValues: values})
	}
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // written meanwhile (the deliverer): the next check looks again
	}
	if err != nil {
		return classify("repair outbox "+subject, err)
	}
	return nil
}
