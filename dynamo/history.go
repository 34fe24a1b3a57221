package dynamo

import (
	"context"

	"github.com/capcat/catalogue/catalog"
)

// CapabilityHistory lists the versions of a capability, newest first: every revision before
// the current one, and for a deleted capability its tombstone (first) and last revision. It
// reads the history of a deleted capability as well as a live one's.
func (s *Store) CapabilityHistory(ctx context.Context, id string, first int, after string) (*Page[*catalog.CapabilityVersion], error) {
	if err := ValidateID("id", id); err != nil {
		return nil, err
	}
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	p := capabilityVersionPrefix()
	q := query{pk: capabilityPK(id), lo: p, hi: p + "~", reverse: true}
	return page(s, ctx, "capabilityHistory|"+id, q, first, after, decodeVersion(toCapabilityVersion))
}

// RuleHistory lists the previous versions of a rule, newest first (with those of a deleted rule
// that had its ID, each ending in its tombstone).
func (s *Store) RuleHistory(ctx context.Context, capabilityID, ruleID string, first int, after string) (*Page[*catalog.RuleVersion], error) {
	if err := checkFirst(first, MaxPage); err != nil {
		return nil, err
	}
	p := ruleVersionPrefix(ruleID)
	q := query{pk: capabilityPK(capabilityID), lo: p, hi: p + "~", reverse: true}
	return page(s, ctx, "ruleHistory|"+capabilityID+"|"+ruleID, q, first, after, decodeVersion(toRuleVersion))
}

func toCapabilityVersion(it *item) (*catalog.CapabilityVersion, error) {
	c, err := decodeEntity[catalog.Capability](it)
	if err != nil {
		return nil, err
	}
	return &catalog.CapabilityVersion{Capability: c, Change: it.change()}, nil
}

func toRuleVersion(it *item) (*catalog.RuleVersion, error) {
	r, err := toRule(it)
	if err != nil {
		return nil, err
	}
	return &catalog.RuleVersion{Rule: r, Change: it.change()}, nil
}

func decodeVersion[T any](conv func(*item) (T, error)) func(*item) (T, error) {
	return func(it *item) (T, error) {
		if _, err := parseVersionSK(it.SK); err != nil {
			var zero T
			return zero, err
		}
		return conv(it)
	}
}
