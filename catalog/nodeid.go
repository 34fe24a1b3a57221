package catalog

import (
	"strconv"
	"strings"
)

// Global IDs: the GraphQL `id` of every object type (Relay's object identification). Each
// names one object of its type across the whole catalogue and is built from local IDs, which
// never hold '/', '@' or '>' (ValidID):
//
//	Capability         {capabilityId}
//	Component          {capabilityId}/components/{componentId}
//	Dependency         {capabilityId}/dependencies/{sourceComponentId}->{targetComponentId}
//	Job                {capabilityId}/jobs/{jobId}
//	Rule               {capabilityId}/rules/{ruleId}
//	CapabilityVersion  {capabilityId}@{revision}
//	RuleVersion        {capabilityId}/rules/{ruleId}@{revision}
//
// NodeID.String builds them and ParseNodeID reads them back; nothing else does.

// NodeKind is the type of object a global ID names: its GraphQL type name.
type NodeKind string

// The kinds of global IDs.
const (
	KindCapability        NodeKind = "Capability"
	KindComponent         NodeKind = "Component"
	KindDependency        NodeKind = "Dependency"
	KindJob               NodeKind = "Job"
	KindRule              NodeKind = "Rule"
	KindCapabilityVersion NodeKind = "CapabilityVersion"
	KindRuleVersion       NodeKind = "RuleVersion"
)

// The collection names of global IDs, by kind.
var collections = map[string]NodeKind{
	"components":   KindComponent,
	"dependencies": KindDependency,
	"jobs":         KindJob,
	"rules":        KindRule,
}

// maxNodeIDLen bounds what ParseNodeID reads: the longest ID, a dependency's (three local IDs
// of 128 bytes) or a rule version's, is well below it.
const maxNodeIDLen = 512

// NodeID is a parsed global ID.
type NodeID struct {
	Kind         NodeKind
	CapabilityID string
	// LocalID is the componentId, jobId or ruleId, or a dependency's sourceComponentId.
	LocalID string
	// TargetID is a dependency's targetComponentId.
	TargetID string
	// Revision is a version's revision (1 and up).
	Revision int
}

// String returns the global ID.
func (n NodeID) String() string {
	switch n.Kind {
	case KindCapability:
		return n.CapabilityID
	case KindComponent:
		return n.CapabilityID + "/components/" + n.LocalID
	case KindDependency:
		return n.CapabilityID + "/dependencies/" + n.LocalID + "->" + n.TargetID
	case KindJob:
		return n.CapabilityID + "/jobs/" + n.LocalID
	case KindRule:
		return n.CapabilityID + "/rules/" + n.LocalID
	case KindCapabilityVersion:
		return n.CapabilityID + "@" + strconv.Itoa(n.Revision)
	case KindRuleVersion:
		return n.CapabilityID + "/rules/" + n.LocalID + "@" + strconv.Itoa(n.Revision)
	}
	return ""
}

// ParseNodeID reads a global ID. It returns a *ValidationError naming field unless id is one
// of the forms NodeID.String builds, with valid local IDs and a revision of 1 or more written
// without leading zeros.
func ParseNodeID(field, id string) (NodeID, error) {
	n, ok := parseNodeID(id)
	if !ok {
		shown := id
		if len(shown) > 64 {
			shown = strings.ToValidUTF8(shown[:64], "") + "…"
		}
		return NodeID{}, Invalid(field, "%q is not an object ID: see \"Object identity and node(id:)\" in docs/api.md", shown)
	}
	return n, nil
}

func parseNodeID(id string) (n NodeID, ok bool) {
	if len(id) == 0 || len(id) > maxNodeIDLen {
		return n, false
	}
	path, rev, versioned := strings.Cut(id, "@")
	if versioned {
		r, ok := parseRevision(rev)
		if !ok {
			return n, false
		}
		n.Revision = r
	}
	parts := strings.Split(path, "/")
	if !ValidID(parts[0]) {
		return n, false
	}
	n.CapabilityID = parts[0]
	switch len(parts) {
	case 1:
		n.Kind = KindCapability
		if versioned {
			n.Kind = KindCapabilityVersion
		}
		return n, true
	case 3:
	default:
		return n, false
	}
	kind, known := collections[parts[1]]
	if !known {
		return n, false
	}
	n.Kind, n.LocalID = kind, parts[2]
	switch {
	case versioned && kind != KindRule:
		return n, false
	case versioned:
		n.Kind = KindRuleVersion
	case kind == KindDependency:
		src, dst, found := strings.Cut(parts[2], "->")
		if !found || !ValidID(dst) {
			return n, false
		}
		n.LocalID, n.TargetID = src, dst
	}
	return n, ValidID(n.LocalID)
}

// parseRevision reads a revision: 1 and up, decimal, no sign and no leading zero, so that one
// version has one ID.
func parseRevision(s string) (int, bool) {
	if len(s) == 0 || len(s) > 9 || s[0] == '0' {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	r, err := strconv.Atoi(s)
	return r, err == nil
}
