package dynamo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/capcat/catalogue/catalog"
)

// Backup and restore. Export writes the catalogue as JSON lines, one entity a line in the seed's
// field names with its envelope (revision, times, writer); Import loads such a file into a
// table, validated whole before anything is written. The file holds what no rebuild can give
// back: every entity of every capability partition and the history (versions, tombstones). It
// leaves out what is derived (the index copies of METADATA, the component ID claims: Import
// rebuilds them) and what is not the catalogue (idempotency tokens, leases, the archive's
// state). Keys are never in the file: Import builds them from the entities.

// Limits of an import file.
const (
	// maxImportLine bounds one line: an item is at most 400 KB in DynamoDB, and its plain JSON
	// is shorter than the DynamoDB JSON it is sent as.
	maxImportLine = 1 << 20
	// maxImportErrors is how many bad lines Import reports before it stops looking.
	maxImportErrors = 20
)

// What a Version line is a version of (its "versionOf").
const (
	versionOfCapability = entityCapability
	versionOfRule       = entityRule
)

// backupLine is one line of an export file.
type backupLine struct {
	EntityType string          `json:"entityType"`
	VersionOf  string          `json:"versionOf,omitempty"`
	Revision   int             `json:"revision"`
	CreatedAt  string          `json:"createdAt"`
	UpdatedAt  string          `json:"updatedAt"`
	Actor      *backupActor    `json:"actor,omitempty"`
	RequestID  string          `json:"requestId,omitempty"`
	Deleted    bool            `json:"deleted,omitempty"`
	Data       json.RawMessage `json:"data"`
}

// backupActor is who wrote an entity's revision.
type backupActor struct {
	Name string `json:"name,omitempty"`
	Role string `json:"role,omitempty"`
}

// Export writes every capability partition of the table to w as JSON lines (see backupLine),
// sorted by key so that the same table always gives the same bytes: each live capability with
// its components, dependencies, jobs, metric samples, rules and versions; of a deleted
// capability (or one being deleted) its capability versions, the tombstone last. It leaves out
// index copies, component ID claims, idempotency tokens, leases, expired metric samples and
// items of a partition without its capability (which `check` reports); metrics archived to S3
// are not in the table, and not in the export. It returns how many lines it wrote. It reads the
// whole table (a paginated, parallel Scan): a backup, not a hot path.
func (s *Store) Export(ctx context.Context, w io.Writer) (int, error) {
	raw, err := s.scan(ctx, false, "")
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	items, err := s.exportable(raw)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	n := 0
	for _, it := range items {
		line, err := backupLineOf(it)
		if err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		if _, err := bw.Write(line); err != nil {
			return n, fmt.Errorf("export: %w", err)
		}
		n++
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

// exportable returns the items of raw that an export holds, sorted by key.
func (s *Store) exportable(raw []map[string]types.AttributeValue) ([]*item, error) {
	parts := map[string][]*item{}
	for _, m := range raw {
		it, err := readItem(m)
		if err != nil {
			return nil, err
		}
		if _, err := parseCapabilityPK(it.PK); err != nil {
			continue // tokens, claims, leases, state
		}
		parts[it.PK] = append(parts[it.PK], it)
	}
	now := s.now()
	var out []*item
	for _, pk := range slices.Sorted(maps.Keys(parts)) {
		items := parts[pk]
		var meta *item
		for _, it := range items {
			if it.SK == metadataSK && it.EntityType == entityCapability {
				meta = it
			}
		}
		live := meta != nil && !meta.Deleting
		skipped := 0
		for _, it := range items {
			switch {
			case strings.HasPrefix(it.SK, indexPrefix):
				continue // derived: rebuilt from METADATA, the components and the jobs
			case it.EntityType == entityChange:
				continue // the change feed: not exported (docs/data-model.md)
			case it.EntityType == entityNotify:
				continue // the notification outbox: delivery state, not exported
			case it.EntityType == entityRollup:
				continue // metric rollups: derived from the samples as they were recorded, not exported
			case !live && !strings.HasPrefix(it.SK, capabilityVersionPrefix()):
				if it.SK != metadataSK {
					skipped++
				}
				continue
			case !exportedType(it):
				skipped++
				continue
			case it.expired(now):
				continue
			}
			if n, err := parseVersionSK(it.SK); err == nil && it.EntityType == entityVersion && n != it.Revision {
				// Import keys a version by its revision, as every writer does.
				s.log.Warn("export: a version whose key and revision differ; an import keys it by its revision", "partition", pk, "sk", it.SK, "revision", it.Revision)
			}
			out = append(out, it)
		}
		if skipped > 0 {
			s.log.Warn("export: items left out of a partition (run `check`)", "partition", pk, "items", skipped, "capabilityLive", live)
		}
	}
	slices.SortFunc(out, func(a, b *item) int {
		if c := strings.Compare(a.PK, b.PK); c != 0 {
			return c
		}
		return strings.Compare(a.SK, b.SK)
	})
	return out, nil
}

// exportedType reports whether an item of a capability partition is an entity an export holds.
func exportedType(it *item) bool {
	switch it.EntityType {
	case entityCapability:
		return it.SK == metadataSK
	case entityComponent, entityDependency, entityJob, entityMetric, entityRule:
		return true
	case entityVersion:
		return versionKind(it) != ""
	}
	return false
}

// versionKind returns what a version item is a version of (versionOfCapability or
// versionOfRule), or "" when its key is not one of a version.
func versionKind(it *item) string {
	if _, err := parseVersionSK(it.SK); err != nil {
		return ""
	}
	if strings.HasPrefix(it.SK, capabilityVersionPrefix()) {
		return versionOfCapability
	}
	data, err := it.data()
	if err != nil {
		return ""
	}
	if id := str(data["ruleId"]); id != "" && strings.HasPrefix(it.SK, ruleVersionPrefix(id)) {
		return versionOfRule
	}
	return ""
}

// backupLineOf renders an item as a line of an export file, newline included.
func backupLineOf(it *item) ([]byte, error) {
	data, err := it.data()
	if err != nil {
		return nil, err
	}
	d, err := appendJSONMap(nil, data)
	if err != nil {
		return nil, fmt.Errorf("item %s/%s: Data: %w", it.PK, it.SK, err)
	}
	l := backupLine{
		EntityType: it.EntityType,
		Revision:   it.Revision,
		CreatedAt:  keyTime(it.CreatedAt),
		UpdatedAt:  keyTime(it.UpdatedAt),
		RequestID:  it.RequestID,
		Deleted:    it.Deleted,
		Data:       d,
	}
	if it.EntityType == entityVersion {
		l.VersionOf = versionKind(it)
	}
	if it.ActorName != "" || it.ActorRole != "" {
		l.Actor = &backupActor{Name: it.ActorName, Role: it.ActorRole}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return nil, fmt.Errorf("item %s/%s: %w", it.PK, it.SK, err)
	}
	return b.Bytes(), nil
}

// appendJSONMap appends m as a JSON object with sorted keys: strings as strings, numbers as
// DynamoDB stored them, binary as base64, sets as arrays.
func appendJSONMap(dst []byte, m map[string]types.AttributeValue) ([]byte, error) {
	return appendSortedMap(dst, m, appendJSONValue)
}

// appendSortedMap appends m as a JSON object, names sorted, each value encoded by value.
func appendSortedMap(dst []byte, m map[string]types.AttributeValue, value func([]byte, types.AttributeValue) ([]byte, error)) ([]byte, error) {
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = value(dst, m[k]); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	return append(dst, '}'), nil
}

func appendJSONValue(dst []byte, av types.AttributeValue) ([]byte, error) {
	list := func(n int, elem func(int) ([]byte, error)) ([]byte, error) {
		dst = append(dst, '[')
		for i := range n {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = elem(i); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	}
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return appendJSONString(dst, v.Value), nil
	case *types.AttributeValueMemberN:
		return appendJSONNumber(dst, v.Value)
	case *types.AttributeValueMemberBOOL:
		return strconv.AppendBool(dst, v.Value), nil
	case *types.AttributeValueMemberNULL:
		return append(dst, "null"...), nil
	case *types.AttributeValueMemberB:
		return appendJSONString(dst, base64.StdEncoding.EncodeToString(v.Value)), nil
	case *types.AttributeValueMemberM:
		return appendJSONMap(dst, v.Value)
	case *types.AttributeValueMemberL:
		return list(len(v.Value), func(i int) ([]byte, error) { return appendJSONValue(dst, v.Value[i]) })
	case *types.AttributeValueMemberSS:
		return list(len(v.Value), func(i int) ([]byte, error) { return appendJSONString(dst, v.Value[i]), nil })
	case *types.AttributeValueMemberNS:
		return list(len(v.Value), func(i int) ([]byte, error) { return appendJSONNumber(dst, v.Value[i]) })
	case *types.AttributeValueMemberBS:
		return list(len(v.Value), func(i int) ([]byte, error) {
			return appendJSONString(dst, base64.StdEncoding.EncodeToString(v.Value[i])), nil
		})
	}
	return nil, fmt.Errorf("attribute value of type %T", av)
}

// appendJSONNumber appends a DynamoDB number as it is stored when it is in JSON's grammar (as
// DynamoDB's are), and rewritten through float64 otherwise.
func appendJSONNumber(dst []byte, n string) ([]byte, error) {
	if isJSONNumber([]byte(n)) {
		return append(dst, n...), nil
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return nil, fmt.Errorf("number %q: %w", n, err)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
}

// appendJSONString appends s quoted as a JSON string: quotes, backslashes and control
// characters escaped, everything else as it is.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// ImportError is a line of an import file that cannot be imported.
type ImportError struct {
	// Line is the line's number, from 1.
	Line int
	// Field is the line's field at fault ("data.name", "createdAt"), empty for the whole line.
	Field string
	// Reason says what is wrong.
	Reason string
}

func (e *ImportError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Reason)
}

// ImportReport is what Import did.
type ImportReport struct {
	// Lines is how many lines the file held.
	Lines int
	// Capabilities is how many live capabilities Import wrote, Deleted how many deleted ones
	// (their history only).
	Capabilities, Deleted int
	// Skipped are the capabilities the table held already exactly as the file does (an
	// earlier run of the same import wrote them): left as they are.
	Skipped []string
	// Items is how many items Import wrote, index items and claims included.
	Items int
	// Problems are what a check of every imported capability's partition found after writing
	// (aggregates that differ from a recount); none when the file was a consistent export.
	Problems []string
}

// importEntry is one line of an import file, read and validated.
type importEntry struct {
	line         int
	capabilityID string
	it           *item
	av           map[string]types.AttributeValue
	// index holds the index items of a Capability line.
	index []*item
	// entity is the decoded entity (a *catalog.Capability, *catalog.Component, ...).
	entity any
	// rendered is the line as an export writes it (a Capability line's only).
	rendered []byte
}

// importPartition is what an import file holds of one capability.
type importPartition struct {
	id      string
	meta    *importEntry
	entries []*importEntry
}

// Import loads a file that Export wrote into the table, keeping IDs, revisions, times, writers
// and history; it rebuilds the keys, the index items and the component ID claims from the
// entities. It reads and validates the whole file before it writes anything: a line that is not
// JSON, an unknown entityType, an invalid ID, an entity its catalogue validation refuses, two
// lines with the same key, items of a capability without its Capability line (but the
// capability versions of a deleted one), a component ID in two capabilities, or a line over
// 1 MiB, and nothing is written; the error (one *ImportError per bad line, joined) names each
// line and field. A capability that exists in the table already is refused (ErrConflict), and
// so is a component ID claimed there by another capability, unless the table holds it exactly
// as the file does (a finished part of an earlier run: skipped). The metric rollups, which an
// export leaves out, are rebuilt from the imported samples (bundleRollupItems, as BulkLoad
// does): the hours and days of samples archived to S3 before the export hold only what the file
// holds. Items are written with
// BatchWriteItem, parallel calls at once, each capability's METADATA last, so an interrupted
// import is finished by running it again. After writing, every imported capability's partition
// is checked (CheckPartition) and what differs is in the report's Problems. The catalogue's
// counters are recounted last (RepairCounters).
func (s *Store) Import(ctx context.Context, r io.Reader, parallel int) (*ImportReport, error) {
	parts, lines, err := readImport(r)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	report := &ImportReport{Lines: lines}
	todo, err := s.importTargets(ctx, parts, report)
	if err != nil {
		return report, fmt.Errorf("import: %w", err)
	}
	// Children first, then index items and claims, METADATA last: a capability whose METADATA
	// is in the table was imported whole, and one without it is imported again by a rerun.
	var children, derived, metas []types.WriteRequest
	put := func(reqs *[]types.WriteRequest, av map[string]types.AttributeValue) {
		*reqs = append(*reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
	}
	now := s.now()
	for _, p := range todo {
		for _, e := range p.entries {
			put(&children, e.av)
		}
		if p.meta == nil {
			report.Deleted++
			continue
		}
		report.Capabilities++
		for _, ix := range p.meta.index {
			av, err := ix.av()
			if err != nil {
				return report, fmt.Errorf("import: %w", err)
			}
			put(&derived, av)
		}
		for _, e := range p.entries {
			if c, ok := e.entity.(*catalog.Component); ok {
				av, err := claimItem(c, now).av()
				if err != nil {
					return report, fmt.Errorf("import: %w", err)
				}
				put(&derived, av)
			}
			// The component and active-job index items (componentindex.go).
			ixs, err := entityIndexItems(e.entity, now)
			if err != nil {
				return report, fmt.Errorf("import: %w", err)
			}
			for _, ix := range ixs {
				av, err := ix.av()
				if err != nil {
					return report, fmt.Errorf("import: %w", err)
				}
				put(&derived, av)
			}
		}
		// The metric rollups, rebuilt from the imported samples (an export leaves them out),
		// as BulkLoad builds them.
		var ms []*catalog.Metric
		for _, e := range p.entries {
			if m, ok := e.entity.(*catalog.Metric); ok {
				ms = append(ms, m)
			}
		}
		rollups, err := bundleRollupItems(ms, now)
		if err != nil {
			return report, fmt.Errorf("import: %w", err)
		}
		for _, it := range rollups {
			av, err := it.av()
			if err != nil {
				return report, fmt.Errorf("import: %w", err)
			}
			put(&derived, av)
		}
		put(&metas, p.meta.av)
		// The import's change, beside its METADATA (the last writes of the capability).
		m := p.meta.it
		ch, err := s.changeItem(p.id, m.CreatedAt, m.WriteSeq, 0, m.Revision,
			changeSpec{entity: catalog.ChangeCapability, entityID: p.id, action: catalog.ChangeCreated, detail: "imported"}, now).av()
		if err != nil {
			return report, fmt.Errorf("import: %w", err)
		}
		stampWriter(ctx, ch)
		put(&metas, ch)
	}
	for _, reqs := range [][]types.WriteRequest{children, derived, metas} {
		if err := s.batchWrite(ctx, reqs, parallel); err != nil {
			return report, fmt.Errorf("import: %w (nothing is lost: run the same import again to finish it)", err)
		}
		report.Items += len(reqs)
	}
	// The counters: recounted, as after a bulk load (RepairCounters).
	if _, err := s.RepairCounters(ctx); err != nil {
		return report, fmt.Errorf("import: %w (run the same import again, or check -repair, to finish it)", err)
	}
	for _, p := range todo {
		if p.meta == nil {
			continue
		}
		if err := s.CheckPartition(ctx, p.id); err != nil {
			report.Problems = append(report.Problems, err.Error())
		}
	}
	return report, nil
}

// importTargets compares the file's capabilities with the table: it returns those to write,
// adds those the table holds as the file does to report.Skipped, and refuses the rest.
func (s *Store) importTargets(ctx context.Context, parts []*importPartition, report *ImportReport) ([]*importPartition, error) {
	keys := make([][2]string, len(parts))
	for i, p := range parts {
		keys[i] = [2]string{capabilityPK(p.id), metadataSK}
	}
	metas, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var refused []error
	var todo []*importPartition
	var claimKeys [][2]string
	var claimants []*importEntry
	for i, p := range parts {
		have := metas[i]
		switch {
		case have == nil:
		case p.meta == nil:
			refused = append(refused, fmt.Errorf("capability %s exists in the table (revision %d), and the file holds the history of a deleted one: %w", p.id, have.Revision, ErrConflict))
			continue
		default:
			line, err := backupLineOf(have)
			if err != nil {
				return nil, err
			}
			if !have.Deleting && bytes.Equal(line, p.meta.rendered) {
				report.Skipped = append(report.Skipped, p.id)
				continue
			}
			refused = append(refused, fmt.Errorf("capability %s exists in the table (revision %d): an import never overwrites a capability; delete it first, or import into another table: %w", p.id, have.Revision, ErrConflict))
			continue
		}
		todo = append(todo, p)
		for _, e := range p.entries {
			if c, ok := e.entity.(*catalog.Component); ok {
				claimKeys = append(claimKeys, [2]string{claimPK(c.ComponentID), claimSK})
				claimants = append(claimants, e)
			}
		}
	}
	claims, err := s.batchGet(ctx, claimKeys)
	if err != nil {
		return nil, err
	}
	for i, claim := range claims {
		if claim == nil {
			continue
		}
		data, err := claim.data()
		if err != nil {
			return nil, err
		}
		e := claimants[i]
		if owner := str(data["capabilityId"]); owner != e.capabilityID {
			c := e.entity.(*catalog.Component)
			refused = append(refused, fmt.Errorf("line %d: component ID %s of capability %s is claimed in the table by capability %s: %w", e.line, c.ComponentID, e.capabilityID, owner, ErrConflict))
		}
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("nothing was written: %w", errors.Join(refused...))
	}
	return todo, nil
}

// readImport reads and validates a whole import file. It returns its capabilities in ID order
// and how many lines it held, or every bad line's *ImportError (up to maxImportErrors), joined.
func readImport(r io.Reader) ([]*importPartition, int, error) {
	var errs []error
	fail := func(err error) bool {
		errs = append(errs, err)
		return len(errs) >= maxImportErrors
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxImportLine)
	byKey := map[[2]string]int{}
	parts := map[string]*importPartition{}
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		e, err := readImportLine(n, raw)
		if err != nil {
			if fail(err) {
				break
			}
			continue
		}
		key := [2]string{e.it.PK, e.it.SK}
		if first, dup := byKey[key]; dup {
			if fail(&ImportError{Line: n, Reason: fmt.Sprintf("the same item as line %d (%s %s)", first, e.it.EntityType, e.it.SK)}) {
				break
			}
			continue
		}
		byKey[key] = n
		p := parts[e.capabilityID]
		if p == nil {
			p = &importPartition{id: e.capabilityID}
			parts[e.capabilityID] = p
		}
		if e.it.EntityType == entityCapability {
			p.meta = e
		} else {
			p.entries = append(p.entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = &ImportError{Line: n + 1, Reason: fmt.Sprintf("longer than %d bytes: not a line of an export", maxImportLine)}
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		errs = checkPartitions(parts)
	}
	if len(errs) > 0 {
		return nil, n, fmt.Errorf("nothing was written: %w", errors.Join(errs...))
	}
	out := make([]*importPartition, 0, len(parts))
	for _, id := range slices.Sorted(maps.Keys(parts)) {
		out = append(out, parts[id])
	}
	return out, n, nil
}

// checkPartitions validates what spans lines: every item has its capability (or is a
// capability version of a deleted one), dependencies join components of their capability, and
// no component ID is in two capabilities.
func checkPartitions(parts map[string]*importPartition) []error {
	var errs []error
	owners := map[string]*importEntry{} // component ID -> its line
	for _, id := range slices.Sorted(maps.Keys(parts)) {
		p := parts[id]
		if p.meta == nil {
			for _, e := range p.entries {
				if e.it.EntityType != entityVersion || !strings.HasPrefix(e.it.SK, capabilityVersionPrefix()) {
					errs = append(errs, &ImportError{Line: e.line, Field: "data.capabilityId",
						Reason: fmt.Sprintf("capability %s has no Capability line: only the capability versions of a deleted capability may come without it", id)})
					break
				}
			}
			continue
		}
		var comps []*catalog.Component
		for _, e := range p.entries {
			if c, ok := e.entity.(*catalog.Component); ok {
				comps = append(comps, c)
				if first, dup := owners[c.ComponentID]; dup && first.capabilityID != id {
					errs = append(errs, &ImportError{Line: e.line, Field: "data.componentId",
						Reason: fmt.Sprintf("component ID %s is also in capability %s (line %d): a component ID names one component across the catalogue", c.ComponentID, first.capabilityID, first.line)})
				}
				owners[c.ComponentID] = e
			}
		}
		for _, e := range p.entries {
			if d, ok := e.entity.(*catalog.Dependency); ok {
				if err := catalog.ValidateDependency(d, comps, nil); err != nil {
					errs = append(errs, importInvalid(e.line, err))
				}
			}
		}
	}
	return errs
}

// readImportLine reads one line into the item it puts, validated.
func readImportLine(n int, raw []byte) (*importEntry, error) {
	bad := func(field, format string, args ...any) error {
		return &ImportError{Line: n, Field: field, Reason: fmt.Sprintf(format, args...)}
	}
	var l backupLine
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		var wrongType *json.UnmarshalTypeError
		if errors.As(err, &wrongType) && wrongType.Field != "" {
			return nil, bad(wrongType.Field, "is a JSON %s, want %s", wrongType.Value, wrongType.Type)
		}
		return nil, bad("", "not a line of an export: %v", err)
	}
	if dec.More() {
		return nil, bad("", "not a line of an export: more than one JSON value")
	}
	if l.Revision < 1 {
		return nil, bad("revision", "must be at least 1, got %d", l.Revision)
	}
	created, err := catalog.ParseTimestamp(l.CreatedAt)
	if err != nil {
		return nil, bad("createdAt", "%v", err)
	}
	updated, err := catalog.ParseTimestamp(l.UpdatedAt)
	if err != nil {
		return nil, bad("updatedAt", "%v", err)
	}
	if l.EntityType != entityVersion && (l.Deleted || l.VersionOf != "") {
		return nil, bad("", "deleted and versionOf belong to Version lines only")
	}
	data, err := jsonToAttributes(l.Data)
	if err != nil {
		return nil, bad("data", "%v", err)
	}
	meta := catalog.Meta{Revision: l.Revision, CreatedAt: created, UpdatedAt: updated}
	e := &importEntry{line: n}
	decode := func(v any) error {
		if err := decodeJSON(l.Data, v); err != nil {
			return bad("data", "%v", err)
		}
		return nil
	}
	var items []*item
	switch l.EntityType {
	case entityCapability:
		c := &catalog.Capability{}
		if err := decode(c); err != nil {
			return nil, err
		}
		c.Meta = meta
		if err = firstError(ValidateID("capabilityId", c.CapabilityID), ValidateID("businessDomain", c.BusinessDomain), catalog.ValidateCapability(c)); err == nil {
			items, err = capabilityItems(c, updated.Time)
			e.capabilityID, e.entity = c.CapabilityID, c
		}
	case entityComponent:
		c := &catalog.Component{}
		if err := decode(c); err != nil {
			return nil, err
		}
		c.Meta = meta
		if err = firstError(validateComponentIDs(c), catalog.ValidateComponent(c)); err == nil {
			items, err = single(componentItem(c, updated.Time))
			e.capabilityID, e.entity = c.CapabilityID, c
		}
	case entityDependency:
		d := &catalog.Dependency{}
		if err := decode(d); err != nil {
			return nil, err
		}
		d.Meta = meta
		if err = firstError(ValidateID("capabilityId", d.CapabilityID), ValidateID("sourceComponentId", d.SourceComponentID),
			ValidateID("targetComponentId", d.TargetComponentID)); err == nil {
			items, err = single(dependencyItem(d, updated.Time))
			e.capabilityID, e.entity = d.CapabilityID, d
		}
	case entityJob:
		j := &catalog.Job{}
		if err := decode(j); err != nil {
			return nil, err
		}
		j.Meta = meta
		// Targets are checked as IDs only: a job keeps naming a component removed since.
		unbound := *j
		unbound.TargetComponents = nil
		err = firstError(ValidateID("capabilityId", j.CapabilityID), ValidateID("jobId", j.JobID), catalog.ValidateJob(&unbound, nil))
		for i, t := range j.TargetComponents {
			err = firstError(err, ValidateID(fmt.Sprintf("targetComponents[%d].componentId", i), t.ComponentID))
		}
		if err == nil {
			items, err = single(jobItem(j, updated.Time))
			e.capabilityID, e.entity = j.CapabilityID, j
		}
	case entityMetric:
		m := &catalog.Metric{}
		if err := decode(m); err != nil {
			return nil, err
		}
		m.Meta = meta
		// The sample was accepted when it was recorded: its age is no reason to refuse it now
		// (an expired one is hidden on read and deleted by DynamoDB).
		checked := *m
		err = firstError(ValidateID("capabilityId", m.CapabilityID), ValidateID("componentId", m.ComponentID),
			catalog.ValidateMetric(&checked, m.Timestamp.Time))
		if err == nil {
			items, err = single(metricItem(m, updated.Time))
			e.capabilityID, e.entity = m.CapabilityID, m
		}
	case entityRule:
		r := &catalog.Rule{}
		if err := decode(r); err != nil {
			return nil, err
		}
		r.Meta = meta
		if err = validateRuleIDs(nil, r); err == nil {
			items, err = single(ruleItem(r, updated.Time))
			e.capabilityID, e.entity = r.CapabilityID, r
		}
	case entityVersion:
		// A version is history: its entity was valid when it was written, and is checked here
		// only for the IDs its key is built from.
		var sk string
		switch l.VersionOf {
		case versionOfCapability:
			c := &catalog.Capability{}
			if err := decode(c); err != nil {
				return nil, err
			}
			err = ValidateID("capabilityId", c.CapabilityID)
			e.capabilityID, sk = c.CapabilityID, capabilityVersionSK(l.Revision)
		case versionOfRule:
			r := &catalog.Rule{}
			if err := decode(r); err != nil {
				return nil, err
			}
			err = firstError(ValidateID("capabilityId", r.CapabilityID), ValidateID("ruleId", r.RuleID))
			e.capabilityID, sk = r.CapabilityID, ruleVersionSK(r.RuleID, l.Revision)
		default:
			return nil, bad("versionOf", "%q is not %s or %s", l.VersionOf, versionOfCapability, versionOfRule)
		}
		if err == nil {
			items = []*item{{PK: capabilityPK(e.capabilityID), SK: sk, EntityType: entityVersion}}
		}
	default:
		return nil, bad("entityType", "%q is not one of %s, %s, %s, %s, %s, %s, %s", l.EntityType, entityCapability, entityComponent,
			entityDependency, entityJob, entityMetric, entityRule, entityVersion)
	}
	if err != nil {
		return nil, importInvalid(n, err)
	}
	// The builders gave the keys; the rest is the file's, Data exactly as it is there.
	for _, it := range items {
		it.Revision, it.CreatedAt, it.UpdatedAt, it.Data = l.Revision, created.Time, updated.Time, data
		it.RequestID, it.Deleted = l.RequestID, l.Deleted
		if l.Actor != nil {
			it.ActorName, it.ActorRole = l.Actor.Name, l.Actor.Role
		}
	}
	if l.EntityType == entityCapability {
		// A new WriteSeq, as a created capability gets (newIncarnation): no partition cache
		// can hold a state of an earlier capability with this ID under it.
		seq := newIncarnation()
		for _, it := range items {
			it.WriteSeq = seq
		}
		// The search cards carry their own Data (searchCard), not the line's.
		cards, err := cardItems(e.entity.(*catalog.Capability), updated.Time)
		if err != nil {
			return nil, importInvalid(n, err)
		}
		items = append(items, cards...)
	}
	e.it, e.index = items[0], items[1:]
	if e.av, err = e.it.av(); err != nil {
		return nil, importInvalid(n, err)
	}
	if size := itemSize(e.av); size > maxItemSize {
		return nil, bad("data", "the item would be %d bytes, over DynamoDB's 400 KB", size)
	}
	if l.EntityType == entityCapability {
		if e.rendered, err = backupLineOf(e.it); err != nil {
			return nil, bad("data", "%v", err)
		}
	}
	return e, nil
}

// importInvalid turns the validation error of line n into an *ImportError naming the field.
func importInvalid(n int, err error) error {
	var ve *catalog.ValidationError
	if errors.As(err, &ve) {
		field := "data"
		if ve.Field != "" && ve.Field != "input" {
			field += "." + ve.Field
		}
		return &ImportError{Line: n, Field: field, Reason: ve.Message}
	}
	return &ImportError{Line: n, Reason: err.Error()}
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func single(it *item, err error) ([]*item, error) {
	if err != nil {
		return nil, err
	}
	return []*item{it}, nil
}

// jsonToAttributes converts a JSON object to DynamoDB attributes as an export wrote them:
// numbers keep their text, empty lists and maps are dropped (as the store never writes them).
func jsonToAttributes(raw json.RawMessage) (map[string]types.AttributeValue, error) {
	if len(raw) == 0 {
		return nil, errors.New("is required")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON object")
	}
	av := attributeOf(m).(*types.AttributeValueMemberM).Value
	dropEmpty(av)
	return av, nil
}

func attributeOf(v any) types.AttributeValue {
	switch x := v.(type) {
	case string:
		return &types.AttributeValueMemberS{Value: x}
	case json.Number:
		return &types.AttributeValueMemberN{Value: x.String()}
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}
	case map[string]any:
		m := make(map[string]types.AttributeValue, len(x))
		for k, e := range x {
			m[k] = attributeOf(e)
		}
		return &types.AttributeValueMemberM{Value: m}
	case []any:
		l := make([]types.AttributeValue, len(x))
		for i, e := range x {
			l[i] = attributeOf(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
