package dynamo

import (
	"context"
	"fmt"

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

// CapabilityVersion returns revision rev of a capability's history (a revision before the
// current one, or a deleted capability's tombstone) with one request. With live set it reads
// the capability's metadata in the same BatchGetItem and finds the version only while the
// capability exists and is not being deleted (what Capability.history shows). It returns
// ErrNotFound when there is no such version.
func (s *Store) CapabilityVersion(ctx context.Context, id string, rev int, live bool) (*catalog.CapabilityVersion, error) {
	if err := ValidateID("id", id); err != nil {
		return nil, err
	}
	it, err := s.version(ctx, id, capabilityVersionSK(rev), live)
	if err != nil {
		return nil, fmt.Errorf("get capability %s version %d: %w", id, rev, err)
	}
	return decodeVersion(toCapabilityVersion)(it)
}

// RuleVersion returns revision rev of a rule's history with one request, as CapabilityVersion
// does. It returns ErrNotFound when there is no such version.
func (s *Store) RuleVersion(ctx context.Context, capabilityID, ruleID string, rev int, live bool) (*catalog.RuleVersion, error) {
	if err := ValidateID("capabilityId", capabilityID); err != nil {
		return nil, err
	}
	if err := ValidateID("ruleId", ruleID); err != nil {
		return nil, err
	}
	it, err := s.version(ctx, capabilityID, ruleVersionSK(ruleID, rev), live)
	if err != nil {
		return nil, fmt.Errorf("get rule %s/%s version %d: %w", capabilityID, ruleID, rev, err)
	}
	return decodeVersion(toRuleVersion)(it)
}

// version reads the version item sk of a capability's partition: with one GetItem, or with
// live set in one BatchGetItem beside the capability's metadata, which must exist and not be
// being deleted.
func (s *Store) version(ctx context.Context, capabilityID, sk string, live bool) (*item, error) {
	pk := capabilityPK(capabilityID)
	if !live {
		return s.getItem(ctx, pk, sk)
	}
	items, err := s.batchGet(ctx, [][2]string{{pk, sk}, {pk, metadataSK}})
	if err != nil {
		return nil, err
	}
	if items[0] == nil || items[1] == nil || items[1].Deleting {
		return nil, ErrNotFound
	}
	return items[0], nil
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
