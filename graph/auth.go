package graph

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/capcat/catalogue/catalog"
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

// MarshalGQL writes the role as its GraphQL enum value (VIEWER, DEVOPS, ADMIN).
func (r Role) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, strconv.Quote(strings.ToUpper(r.String())))
}

// UnmarshalGQL reads a GraphQL Role enum value.
func (r *Role) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	role, err := ParseRole(strings.ToLower(s))
	if err != nil || s != strings.ToUpper(s) {
		return fmt.Errorf("role must be VIEWER, DEVOPS or ADMIN, not %v", v)
	}
	*r = role
	return nil
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

// anonymousCaller is the name of a caller without a key.
const anonymousCaller = "anonymous"

// Caller is who made a request.
type Caller struct {
	Name string
	Role Role
	// Expires is when the caller's token expires (zero for API keys and anonymous callers):
	// a WebSocket authenticated by it is closed then.
	Expires time.Time
	// Roleless marks a token that names no role and was given the anonymous role: it counts
	// with the anonymous callers in the in-flight bound.
	Roleless bool
}

// countsAsAnonymous reports whether the caller's requests share the anonymous callers' part of
// the in-flight bound: no credentials, or a token that names no role.
func (c Caller) countsAsAnonymous() bool { return c.Name == anonymousCaller || c.Roleless }

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

// allowedMutations returns the mutations a caller with role may call, in the schema's order:
// those whose @hasRole asks for no more than role (a mutation without one is open to every
// role). Read from the parsed schema once per role.
func allowedMutations(role Role) []string {
	mutationsOnce.Do(func() {
		mutationsByRole = map[Role][]string{}
		for _, r := range []Role{RoleNone, RoleViewer, RoleDevops, RoleAdmin} {
			out := []string{}
			for _, f := range parsedSchema.Mutation.Fields {
				need := RoleNone
				if d := f.Directives.ForName("hasRole"); d != nil {
					if a := d.Arguments.ForName("role"); a != nil && a.Value != nil {
						if p, err := ParseRole(strings.ToLower(a.Value.Raw)); err == nil {
							need = p
						} else {
							need = RoleAdmin + 1 // a role the server does not know: nobody
						}
					}
				}
				if r >= need && r != RoleNone {
					out = append(out, f.Name)
				}
			}
			mutationsByRole[r] = out
		}
	})
	if out, ok := mutationsByRole[role]; ok {
		return out
	}
	return []string{}
}

var (
	mutationsOnce   sync.Once
	mutationsByRole map[Role][]string
)

// ForbiddenError says which role an action needs; it is an ErrForbidden.
type ForbiddenError struct {
	Action string
	Need   Role
	Have   Role
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("%s needs the %s role; you are %s", e.Action, e.Need, e.Have)
}

// Is makes errors.Is(err, ErrForbidden) and errors.Is(err, catalog.Forbidden) hold.
func (e *ForbiddenError) Is(target error) bool { return errors.Is(ErrForbidden, target) }

// hasRole implements the schema's @hasRole(role:) directive: the field resolves only for a
// caller with at least role need. For anyone else next (the resolver) never runs and the field's
// error is a *ForbiddenError that names the field.
func hasRole(ctx context.Context, _ any, next graphql.Resolver, need Role) (any, error) {
	if c := CallerFrom(ctx); c.Role < need {
		return nil, &ForbiddenError{Action: graphql.GetFieldContext(ctx).Field.Name, Need: need, Have: c.Role}
	}
	return next(ctx)
}

// KeyRing holds the API keys the server accepts, as SHA-256 hashes: it never sees or keeps a
// key itself.
type KeyRing struct {
	entries []keyEntry
}

type keyEntry struct {
	hash [sha256.Size]byte
	role Role
	name string
}

// ParseKeyRing reads API keys, one "role sha256-hex-of-key name" a line; blank lines and lines
// starting with # are ignored. It returns an error naming the first bad line.
func ParseKeyRing(r io.Reader) (*KeyRing, error) {
	k := &KeyRing{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("api keys line %d: want \"role sha256-hex name\"", n)
		}
		role, err := ParseRole(f[0])
		if err != nil {
			return nil, fmt.Errorf("api keys line %d: %w", n, err)
		}
		raw, err := hex.DecodeString(f[1])
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("api keys line %d: the second field must be the 64-digit hex SHA-256 of the key", n)
		}
		e := keyEntry{role: role, name: strings.Join(f[2:], " ")}
		if strings.HasPrefix(e.name, OIDCNamePrefix) {
			return nil, fmt.Errorf("api keys line %d: a key's name may not begin with %q, which names the callers of OIDC tokens", n, OIDCNamePrefix)
		}
		copy(e.hash[:], raw)
		k.entries = append(k.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read api keys: %w", err)
	}
	return k, nil
}

// Add adds a key (for the embedded default's generated key).
func (k *KeyRing) Add(key string, role Role, name string) {
	k.entries = append(k.entries, keyEntry{hash: sha256.Sum256([]byte(key)), role: role, name: name})
}

// Len returns how many keys the ring holds.
func (k *KeyRing) Len() int { return len(k.entries) }

// Lookup returns the caller a key belongs to. It compares the key's hash with every entry in
// constant time, so timing tells nothing about which entry (or how much of it) matched.
func (k *KeyRing) Lookup(key string) (Caller, bool) {
	h := sha256.Sum256([]byte(key))
	var found Caller
	ok := 0
	for _, e := range k.entries {
		match := subtle.ConstantTimeCompare(h[:], e.hash[:])
		if match == 1 && ok == 0 {
			found = Caller{Name: e.name, Role: e.role}
		}
		ok |= match
	}
	return found, ok == 1
}

// NewAPIKey returns a random key of 32 bytes, hex encoded.
func NewAPIKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// HashKey returns the hex SHA-256 of a key: what API_KEYS_FILE holds.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// Auth says who may call the API.
type Auth struct {
	// Keys are the accepted API keys; nil or empty means no keys.
	Keys *KeyRing
	// Anonymous is the role of a request without a key; RoleNone refuses it with 401.
	Anonymous Role
	// OIDC, when set, accepts the bearer tokens (JWTs) of an OpenID Connect provider beside
	// the keys: a bearer value shaped as a JWT (LooksLikeJWT) is a token, anything else a key.
	OIDC *OIDC
}

// AuthError is a refused Authorization: its HTTP status, extensions.code and
// WWW-Authenticate challenge.
type AuthError struct {
	Status    int
	Code      string
	Challenge string
	Message   string
}

func (e *AuthError) Error() string { return e.Message }

const bearerRealm = `Bearer realm="catalogue"`

func unauthenticated(msg string) *AuthError {
	return &AuthError{Status: http.StatusUnauthorized, Code: CodeUnauthenticated, Challenge: bearerRealm, Message: msg}
}

// authenticate returns the caller of r. A wrong key, or a missing key when anonymous requests
// are refused, is an error (HTTP 401).
func (a *Auth) authenticate(r *http.Request) (Caller, error) {
	return a.authorize(r.Context(), r.Header.Get("Authorization"))
}

// authorize returns the caller of an Authorization value (HTTP's header, or the Authorization
// of a WebSocket's connection_init); empty is a caller without a key. Its errors are
// *AuthError.
func (a *Auth) authorize(ctx context.Context, h string) (Caller, error) {
	if h == "" {
		if a.Anonymous == RoleNone {
			return Caller{}, unauthenticated("an API key is required: send Authorization: Bearer <key>")
		}
		return Caller{Name: anonymousCaller, Role: a.Anonymous}, nil
	}
	// RFC 9110 section 11.1: the scheme is case-insensitive, one or more spaces follow it.
	scheme, key, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || (a.Keys == nil && a.OIDC == nil) {
		return Caller{}, unauthenticated("invalid credentials: send Authorization: Bearer <key>")
	}
	key = strings.TrimSpace(key)
	if a.OIDC != nil && LooksLikeJWT(key) {
		c, err := a.OIDC.Verify(ctx, key, a.Anonymous)
		var te *TokenError
		var nr *NoRoleError
		switch {
		case err == nil:
			return c, nil
		case errors.As(err, &te):
			return Caller{}, &AuthError{Status: http.StatusUnauthorized, Code: CodeUnauthenticated, Message: err.Error(),
				Challenge: bearerRealm + `, error="invalid_token", error_description="` + te.Reason + `"`}
		case errors.As(err, &nr):
			return Caller{}, &AuthError{Status: http.StatusForbidden, Code: string(catalog.Forbidden), Message: err.Error(),
				Challenge: bearerRealm + `, error="insufficient_scope"`}
		default:
			return Caller{}, &AuthError{Status: http.StatusServiceUnavailable, Code: CodeIdentityProviderUnavailable, Message: err.Error()}
		}
	}
	if a.Keys == nil {
		return Caller{}, unauthenticated("invalid API key")
	}
	c, found := a.Keys.Lookup(key)
	if !found {
		return Caller{}, unauthenticated("invalid API key")
	}
	return c, nil
}

// authFailure writes err (an *AuthError, else a 401) as an HTTP error.
func authFailure(w http.ResponseWriter, r *http.Request, err error) {
	var ae *AuthError
	if !errors.As(err, &ae) {
		ae = unauthenticated(err.Error())
	}
	if ae.Challenge != "" {
		w.Header().Set("WWW-Authenticate", ae.Challenge)
	}
	if ae.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "10")
	}
	writeHTTPError(w, r, ae.Status, ae.Code, ae.Message)
}

// requireKey serves h only to callers with a valid API key when auth is set: an anonymous
// request is 401 whatever the anonymous role.
func requireKey(auth *Auth, h http.Handler) http.Handler {
	if auth == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", bearerRealm)
			http.Error(w, "an API key is required: send Authorization: Bearer <key>", http.StatusUnauthorized)
			return
		}
		if _, err := auth.authenticate(r); err != nil {
			var ae *AuthError
			if errors.As(err, &ae) && ae.Challenge != "" {
				w.Header().Set("WWW-Authenticate", ae.Challenge)
			}
			status := http.StatusUnauthorized
			if ae != nil {
				status = ae.Status
			}
			http.Error(w, err.Error(), status)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackOnly answers only requests from a loopback address whose Host is a loopback name or
// address (localhost, 127.0.0.1, [::1], with or without a port): anything else is 403 with a
// one-line reason. Checking Host defeats DNS rebinding, where a page on another site resolves
// its own name to 127.0.0.1 to read what the server shows local clients.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !loopbackAddr(r.RemoteAddr):
			http.Error(w, "forbidden: this server runs with a generated admin key and answers loopback clients only; configure API_KEYS_FILE to serve others", http.StatusForbidden)
		case !loopbackHost(r.Host):
			http.Error(w, "forbidden: this server runs with a generated admin key and answers only requests addressed to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// loopbackAddr reports whether a client address (host:port) is a loopback address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// loopbackHost reports whether a Host header names the loopback interface: localhost,
// 127.0.0.1 or [::1], with or without a port.
func loopbackHost(host string) bool {
	if h, port, err := net.SplitHostPort(host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}
