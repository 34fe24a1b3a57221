package graph

import (
	"context"

	"github.com/capcat/catalogue/catalog"
)

// hiddenActorName is what a change's actor is called for a caller below admin when it is an
// API key: the key's name is an admin's to see (docs/security.md); the role stays visible.
const hiddenActorName = "hidden"

// visibleActor returns a change's actor as the caller may see it: whole for an admin, and for
// anyone else with an API key's name replaced by hiddenActorName. The names the server gives
// itself ("system", "anonymous", "unknown") are no key's and stay.
func visibleActor(ctx context.Context, a catalog.Actor) *catalog.Actor {
	if CallerFrom(ctx).Role >= RoleAdmin {
		return &a
	}
	switch a.Name {
	case catalog.SystemActor.Name, catalog.UnknownActor.Name, anonymousCaller:
		return &a
	}
	return &catalog.Actor{Name: hiddenActorName, Role: a.Role}
}
