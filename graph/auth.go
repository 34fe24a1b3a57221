package graph

import (
	"context"
	"fmt"
)

// Role is what a caller may do: viewer reads; devops also changes components, dependencies,
// jobs and metrics; admin may do everything, including capabilities, rules and deletes.
type Role int

// The roles, each including the ones before it.
const (
	RoleNone Role = iota
	RoleViewer
	RoleDevops
	RoleAdmin
)

func (r Role) String() string {
	switch r {
	case RoleViewer:
		return "viewer"
	case RoleDevops:
		return "devops"
	case RoleAdmin:
		return "admin"
	}
	return "none"
}

// ParseRole returns the role named s.
func ParseRole(s string) (Role, error) {
	for _, r := range []Role{RoleViewer, RoleDevops, RoleAdmin} {
		if r.String() == s {
			return r, nil
		}
	}
	return RoleNone, fmt.Errorf("unknown role %q: want viewer, devops or admin", s)
}

// Caller is who made a request.
type Caller struct {
	Name string
	Role Role
}

type callerKey struct{}

// WithCaller returns ctx carrying the caller.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller of ctx. Without authentication configured (tests, the library
// use of GraphQLHandler) every caller is an admin.
func CallerFrom(ctx context.Context) Caller {
	if c, ok := ctx.Value(callerKey{}).(Caller); ok {
		return c
	}
	return Caller{Name: "local", Role: RoleAdmin}
}

// require returns an ErrForbidden error unless the caller has at least role need.
func require(ctx context.Context, need Role, action string) error {
	c := CallerFrom(ctx)
	if c.Role >= need {
		return nil
	}
	return fmt.Errorf("%s needs the %s role; you are %s: %w", action, need, c.Role, ErrForbidden)
}
