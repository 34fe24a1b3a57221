package catalog

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Fold is how the catalogue compares names for search, owners and tags: lower case, accents
// removed (é -> e, ß stays), every run of characters that are neither letters nor digits one
// space, trimmed. Fold("  Équipe  Plate-forme ") is "equipe plate forme".
func Fold(s string) string {
	var b strings.Builder
	space := false
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a combining mark: the accent of the letter before it
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		default:
			space = true
		}
	}
	return b.String()
}

// Words returns the words of s as Fold separates them ("CAP-ALERT-MGT-001" has the words cap,
// alert, mgt and 001), without repeats, in the order they first appear.
func Words(s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.Fields(Fold(s)) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// ComponentTally counts a capability's components by team, type and health status: what the
// catalogue's owner index and counters need of the components, kept in the capability's
// aggregates (not in the GraphQL schema) so that every write of the capability knows it without
// reading them. Teams are folded (Fold); a component without a team counts under no team.
type ComponentTally struct {
	Teams  map[string]int       `json:"teams,omitempty"`
	Types  map[string]int       `json:"types,omitempty"`
	Health map[HealthStatus]int `json:"health,omitempty"`
}

// TallyComponents tallies comps; nil when there are none.
func TallyComponents(comps []*Component) *ComponentTally {
	if len(comps) == 0 {
		return nil
	}
	t := &ComponentTally{Types: map[string]int{}, Health: map[HealthStatus]int{}}
	for _, c := range comps {
		t.Types[c.ComponentType]++
		t.Health[ComponentHealthStatus(c)]++
		if c.Ownership != nil {
			if team := Fold(c.Ownership.Team); team != "" {
				if t.Teams == nil {
					t.Teams = map[string]int{}
				}
				t.Teams[team]++
			}
		}
	}
	return t
}

// ComponentHealthStatus is the health status a component reports, unknown when it reports none.
func ComponentHealthStatus(c *Component) HealthStatus {
	if c.Health == nil || c.Health.Status == "" {
		return HealthUnknown
	}
	return c.Health.Status
}
