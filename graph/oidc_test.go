package graph_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/capcat/catalogue/graph"
	"github.com/capcat/catalogue/internal/oidctest"
)

const oidcAudience = "catalogue-api"

// newOIDC returns a verifier of idp's tokens at the test clock, discovered.
func newOIDC(t *testing.T, idp *oidctest.Provider, configure func(*graph.OIDCConfig)) *graph.OIDC {
	t.Helper()
	cfg := graph.OIDCConfig{Issuer: idp.Issuer, Audience: oidcAudience, Now: func() time.Time { return testNow },
		RoleMap: map[string]graph.Role{"platform-admins": graph.RoleAdmin, "sre": graph.RoleDevops}}
	if configure != nil {
		configure(&cfg)
	}
	o, err := graph.NewOIDC(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o
}

func oidcHarness(t *testing.T, idp *oidctest.Provider, anonymous graph.Role) (*harness, *graph.OIDC) {
	t.Helper()
	o := newOIDC(t, idp, nil)
	h := newHarnessWith(t, func(opts *graph.Options) {
		opts.Auth = &graph.Auth{Keys: keyFile(t, "admin "+graph.HashKey("admin-key")+" ops"), Anonymous: anonymous, OIDC: o}
	})
	return h, o
}

// Each role's token may do what the role may, and no more; the writes name the token's user.
func TestOIDCRoles(t *testing.T) {
	idp := oidctest.New(t)
	h, _ := oidcHarness(t, idp, graph.RoleViewer)
	token := func(role string, ec bool) string {
		return idp.Sign(t, idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": role, "sub": role + "-user", "preferred_username": "alice"}), ec)
	}
	read := `{ capability(id: "CAP-ALERT-MGT-001") { name } }`
	addComponent := `mutation { addComponent(capabilityId: "CAP-ALERT-MGT-001", input: {componentId: "oidc-%s", name: "x", componentType: "cache", order: 9}) { componentId } }`
	createRule := `mutation { createRule(capabilityId: "CAP-ALERT-MGT-001", input: {ruleId: "oidc-rule-%s", name: "r", ruleType: ROUTING, priority: LOW, order: 50, conditions: [], actions: []}) { ruleId } }`
	tests := []struct {
		name, role, query string
		ec                bool
		code              string
	}{
		{"viewer reads", "viewer", read, false, ""},
		{"viewer cannot add components", "viewer", addComponent, false, "FORBIDDEN"},
		{"devops adds components", "devops", addComponent, false, ""},
		{"devops (EC key) adds components", "devops", addComponent, true, ""},
		{"devops cannot create rules", "devops", createRule, false, "FORBIDDEN"},
		{"admin creates rules", "admin", createRule, false, ""},
		{"admin (EC key) creates rules", "admin", createRule, true, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.query
			if strings.Contains(q, "%s") {
				q = fmt.Sprintf(q, fmt.Sprint(i))
			}
			resp := h.doAs(t, token(tt.role, tt.ec), q, nil)
			if resp.Status != 200 || resp.code(0) != tt.code {
				t.Fatalf("status %d code %q, want 200 %q: %s", resp.Status, resp.code(0), tt.code, resp.Body)
			}
			if tt.code != "" && h.writes() != 0 {
				t.Errorf("refused request made %d writes", h.writes())
			}
		})
	}
	// The changes feed names the token's sub, prefixed, never its preferred_username (anyone may
	// choose that one: all these tokens claim to be alice).
	var out struct {
		Capability struct {
			Changes struct {
				Nodes []struct {
					Entity string
					Actor  struct{ Name, Role string }
				}
			}
		}
	}
	resp := h.doAs(t, "admin-key", `{ capability(id: "CAP-ALERT-MGT-001") { changes(last: 5) { nodes { entity actor { name role } } } } }`, nil)
	if err := json.Unmarshal(resp.Data, &out); err != nil || len(resp.Errors) > 0 {
		t.Fatalf("changes: %s", resp.Body)
	}
	actors := map[string]bool{}
	for _, n := range out.Capability.Changes.Nodes {
		actors[n.Actor.Name+"/"+n.Actor.Role] = true
	}
	if !actors["oidc:admin-user/admin"] || !actors["oidc:devops-user/devops"] {
		t.Errorf("change actors = %v, want oidc:admin-user/admin and oidc:devops-user/devops", actors)
	}
}

// The actor is the subject; a capability's history names it.
func TestOIDCActorIsSubject(t *testing.T) {
	idp := oidctest.New(t)
	h, _ := oidcHarness(t, idp, graph.RoleViewer)
	tok := idp.Sign(t, idp.Claims(oidcAudience, testNow, map[string]any{"sub": "00u1abcd", "catalogue_role": "admin"}), false)
	create := h.doAs(t, tok, createCap, map[string]any{"in": map[string]any{"capabilityId": "CAP-OIDC-001", "name": "First", "businessDomain": "testing", "priority": "HIGH"}})
	update := h.doAs(t, tok, `mutation { updateCapability(id: "CAP-OIDC-001", expectedRevision: 1, input: {name: "Second"}) { revision } }`, nil)
	if len(create.Errors)+len(update.Errors) > 0 {
		t.Fatalf("writes: %s %s", create.Body, update.Body)
	}
	resp := h.doAs(t, "admin-key", `{ capability(id: "CAP-OIDC-001") { history { nodes { revision actor { name role } } } } }`, nil)
	if !strings.Contains(resp.Body, `"actor":{"name":"oidc:00u1abcd","role":"admin"}`) {
		t.Errorf("history = %s", resp.Body)
	}
}

// Every way of being invalid is 401 with a short reason, before any DynamoDB request.
func TestOIDCRefusals(t *testing.T) {
	idp := oidctest.New(t)
	h, o := oidcHarness(t, idp, graph.RoleViewer)
	claims := func() map[string]any {
		return idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": "admin", "preferred_username": "mallory"})
	}
	with := func(k string, v any) map[string]any {
		c := claims()
		c[k] = v
		return c
	}
	without := func(c map[string]any, k string) map[string]any {
		delete(c, k)
		return c
	}
	valid := idp.Sign(t, claims(), false)
	parts := strings.Split(valid, ".")
	b64 := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tampered := parts[0] + "." + b64(with("preferred_username", "someone-else")) + "." + parts[2]
	none := b64(map[string]any{"alg": "none", "typ": "JWT"}) + "." + parts[1] + "."
	noneSigned := b64(map[string]any{"alg": "none", "typ": "JWT", "kid": oidctest.RSAKeyID}) + "." + parts[1] + ".c2ln"
	der, err := x509.MarshalPKIXPublicKey(&idp.RSA.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	hs256 := oidctest.SignWith(t, jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: der, KeyID: oidctest.RSAKeyID}}, claims())
	// An RSA signature presented as ES256 (the kid names the RSA key).
	wrongAlgForKey := b64(map[string]any{"alg": "ES256", "typ": "JWT", "kid": oidctest.RSAKeyID}) + "." + parts[1] + "." + parts[2]
	tests := []struct{ name, token, reason string }{
		{"expired", idp.Sign(t, with("exp", testNow.Add(-2*time.Minute).Unix()), false), "expired"},
		{"expired within the skew is fine", "", ""},
		{"not yet valid", idp.Sign(t, with("nbf", testNow.Add(5*time.Minute).Unix()), false), "not valid yet"},
		{"wrong audience", idp.Sign(t, with("aud", "another-api"), false), "wrong audience"},
		{"wrong issuer", idp.Sign(t, with("iss", idp.Issuer+"/other"), false), "wrong issuer"},
		{"no exp", idp.Sign(t, with("exp", nil), false), "no exp"},
		{"tampered payload", tampered, "signature not verified"},
		{"alg none", none, "signature algorithm not allowed"},
		{"alg none with a signature", noneSigned, "signature algorithm not allowed"},
		{"HS256 with the public key as secret", hs256, "signature algorithm not allowed"},
		{"RSA signature as ES256", wrongAlgForKey, "signature not verified"},
		{"too large", idp.Sign(t, with("padding", strings.Repeat("x", graph.MaxTokenBytes)), false), "too large"},
		{"lifetime over 24 h", idp.Sign(t, with("exp", testNow.Add(graph.MaxTokenLifetime+2*time.Minute).Unix()), false), "lifetime too long"},
		{"exp 2^53", idp.Sign(t, with("exp", int64(1)<<53), false), "lifetime too long"},
		{"exp 2^53 without iat", idp.Sign(t, without(with("exp", int64(1)<<53), "iat"), false), "lifetime too long"},
		{"issued 25 h before exp", idp.Sign(t, with("iat", testNow.Add(-25*time.Hour).Unix()), false), "lifetime too long"},
		{"no sub", idp.Sign(t, with("sub", nil), false), "no sub"},
		{"control character in sub", idp.Sign(t, with("sub", "alice\nadmin"), false), "bad sub"},
		{"bidi override in sub", idp.Sign(t, with("sub", "alice\u202etxt.exe"), false), "bad sub"},
		{"sub over 255 bytes", idp.Sign(t, with("sub", strings.Repeat("s", 256)), false), "bad sub"},
	}
	for _, tt := range tests {
		if tt.token == "" {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			resp := h.doAs(t, tt.token, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil)
			if resp.Status != 401 || resp.code(0) != "UNAUTHENTICATED" {
				t.Fatalf("status %d code %q: %s", resp.Status, resp.code(0), resp.Body)
			}
			want := `Bearer realm="catalogue", error="invalid_token", error_description="` + tt.reason + `"`
			if got := resp.Header.Get("WWW-Authenticate"); got != want {
				t.Errorf("WWW-Authenticate = %q, want %q", got, want)
			}
			if resp.Errors[0].Message != "invalid token: "+tt.reason {
				t.Errorf("message = %q", resp.Errors[0].Message)
			}
			if n := h.env.Counter.Total(); n != 0 {
				t.Errorf("refused token made %d DynamoDB requests", n)
			}
		})
	}
	t.Run("expired within the skew", func(t *testing.T) {
		resp := h.doAs(t, idp.Sign(t, with("exp", testNow.Add(-30*time.Second).Unix()), false), `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil)
		if resp.Status != 200 || len(resp.Errors) > 0 {
			t.Errorf("token 30 s past exp = %d %s", resp.Status, resp.Body)
		}
	})
	t.Run("API keys work beside tokens", func(t *testing.T) {
		if resp := h.doAs(t, "admin-key", `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil); resp.Status != 200 || len(resp.Errors) > 0 {
			t.Errorf("API key = %d %s", resp.Status, resp.Body)
		}
		if resp := h.doAs(t, "not-a-key", `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil); resp.Status != 401 {
			t.Errorf("wrong key = %d", resp.Status)
		}
	})
	if n := o.JWKSFetches(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1 (every token named a known kid)", n)
	}
}

// Tokens naming unknown kids refetch the JWKS at most once per interval: 100 of them, one
// fetch; after the interval, one more.
func TestOIDCUnknownKeyRefetchBound(t *testing.T) {
	idp := oidctest.New(t)
	now := testNow
	o := newOIDC(t, idp, func(c *graph.OIDCConfig) { c.Now = func() time.Time { return now } })
	good := idp.Sign(t, idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": "viewer"}), false)
	if _, err := o.Verify(context.Background(), good, graph.RoleNone); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	if n := idp.JWKSFetches.Load(); n != 1 {
		t.Fatalf("JWKS fetches after the first token = %d, want 1", n)
	}
	now = now.Add(graph.DefaultJWKSMinInterval) // the first unknown kid may refetch
	for i := range 100 {
		key := jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: idp.RSA, KeyID: fmt.Sprintf("random-%d", i)}}
		tok := oidctest.SignWith(t, key, idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": "admin"}))
		_, err := o.Verify(context.Background(), tok, graph.RoleNone)
		var te *graph.TokenError
		if !errors.As(err, &te) || te.Reason != "signature not verified" {
			t.Fatalf("token %d with an unknown kid: %v", i, err)
		}
	}
	if n := idp.JWKSFetches.Load(); n != 2 {
		t.Errorf("JWKS fetches after 100 unknown kids = %d, want 2 (the first, one refetch)", n)
	}
	now = now.Add(graph.DefaultJWKSMinInterval)
	tok := oidctest.SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: idp.RSA, KeyID: "later"}}, idp.Claims(oidcAudience, testNow, nil))
	_, _ = o.Verify(context.Background(), tok, graph.RoleNone)
	_, _ = o.Verify(context.Background(), tok, graph.RoleNone)
	if n := idp.JWKSFetches.Load(); n != 3 {
		t.Errorf("JWKS fetches after the interval = %d, want 3", n)
	}
}

// The role claim may be a string or an array (the highest role wins), reached by a dotted path,
// mapped by the role map; the groups claim gives roles through the map only; a token naming no
// role gets the anonymous role, or 403 when anonymous callers are refused.
func TestOIDCRoleMapping(t *testing.T) {
	idp := oidctest.New(t)
	o := newOIDC(t, idp, func(c *graph.OIDCConfig) { c.GroupsClaim = "groups" })
	nested := newOIDC(t, idp, func(c *graph.OIDCConfig) { c.RoleClaim = "realm_access.roles" })
	tests := []struct {
		name   string
		o      *graph.OIDC
		claims map[string]any
		anon   graph.Role
		want   graph.Role
	}{
		{"string", o, map[string]any{"catalogue_role": "devops"}, graph.RoleNone, graph.RoleDevops},
		{"array, highest wins", o, map[string]any{"catalogue_role": []any{"viewer", "admin", "devops"}}, graph.RoleNone, graph.RoleAdmin},
		{"mapped value of the role claim", o, map[string]any{"catalogue_role": []any{"sre"}}, graph.RoleNone, graph.RoleDevops},
		{"groups through the map", o, map[string]any{"groups": []any{"staff", "platform-admins"}}, graph.RoleNone, graph.RoleAdmin},
		{"a group named admin is not a role", o, map[string]any{"groups": []any{"admin"}}, graph.RoleViewer, graph.RoleViewer},
		{"dotted path", nested, map[string]any{"realm_access": map[string]any{"roles": []any{"offline_access", "devops"}}}, graph.RoleNone, graph.RoleDevops},
		{"unknown values: the anonymous role", o, map[string]any{"catalogue_role": "root"}, graph.RoleViewer, graph.RoleViewer},
		{"no role, anonymous refused", o, map[string]any{}, graph.RoleNone, graph.RoleNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := idp.Sign(t, idp.Claims(oidcAudience, testNow, tt.claims), false)
			c, err := tt.o.Verify(context.Background(), tok, tt.anon)
			if tt.want == graph.RoleNone {
				var nr *graph.NoRoleError
				if !errors.As(err, &nr) {
					t.Fatalf("Verify = %+v, %v; want a NoRoleError", c, err)
				}
				return
			}
			if err != nil || c.Role != tt.want || c.Name != "oidc:user-1" {
				t.Errorf("Verify = %+v, %v; want oidc:user-1 as %s", c, err, tt.want)
			}
		})
	}
	t.Run("403 over HTTP", func(t *testing.T) {
		h, _ := oidcHarness(t, idp, graph.RoleNone)
		resp := h.doAs(t, idp.Sign(t, idp.Claims(oidcAudience, testNow, nil), false), `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil)
		if resp.Status != 403 || resp.code(0) != "FORBIDDEN" || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) {
			t.Errorf("token without a role = %d %q %s", resp.Status, resp.Header.Get("WWW-Authenticate"), resp.Body)
		}
	})
}

// Before discovery succeeds a token is answered 503 (API keys still work); discovery is tried
// again at most once per interval, and once it succeeds tokens pass.
func TestOIDCProviderUnreachable(t *testing.T) {
	idp := oidctest.New(t)
	idp.FailDiscovery.Store(true)
	now := testNow
	o, err := graph.NewOIDC(graph.OIDCConfig{Issuer: idp.Issuer, Audience: oidcAudience, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Discover(context.Background()); err == nil {
		t.Fatal("discovery of a failing provider succeeded")
	}
	h := newHarnessWith(t, func(opts *graph.Options) {
		opts.Auth = &graph.Auth{Keys: keyFile(t, "admin "+graph.HashKey("admin-key")+" ops"), Anonymous: graph.RoleViewer, OIDC: o}
	})
	tok := idp.Sign(t, idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": "viewer"}), false)
	for range 5 {
		resp := h.doAs(t, tok, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil)
		if resp.Status != 503 || resp.code(0) != graph.CodeIdentityProviderUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("token before discovery = %d %s", resp.Status, resp.Body)
		}
	}
	if n := idp.DiscoveryFetches.Load(); n != 1 {
		t.Errorf("discovery fetched %d times within the interval, want 1", n)
	}
	if resp := h.doAs(t, "admin-key", `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil); resp.Status != 200 {
		t.Errorf("API key before discovery = %d", resp.Status)
	}
	idp.FailDiscovery.Store(false)
	now = now.Add(graph.DefaultJWKSMinInterval)
	if resp := h.doAs(t, tok, `{ capability(id: "CAP-ALERT-MGT-001") { name } }`, nil); resp.Status != 200 || len(resp.Errors) > 0 {
		t.Errorf("token after the provider came back = %d %s", resp.Status, resp.Body)
	}
}

func TestLooksLikeJWT(t *testing.T) {
	for s, want := range map[string]bool{
		graph.NewAPIKey():               false,
		"eyJhbGciOiJSUzI1NiJ9.e30.c2ln": true,
		"eyJhbGciOiJSUzI1NiJ9.e30.":     true, // alg none has an empty signature
		"a.b.c":                         false,
		"eyJhbGciOiJSUzI1NiJ9.e30":      false,
		"eyJ+bGciOiJSUzI1NiJ9.e30.c2ln": false,
	} {
		if got := graph.LooksLikeJWT(s); got != want {
			t.Errorf("LooksLikeJWT(%q) = %v", s, got)
		}
	}
}

func TestKeyNamesCannotPassForTokens(t *testing.T) {
	if _, err := graph.ParseKeyRing(strings.NewReader("admin " + graph.HashKey("k") + " oidc:alice")); err == nil {
		t.Error("a key named oidc:alice was accepted")
	}
}

// connection_init accepts a token; the socket closes when the token expires, telling the client
// why; a bad token closes it with 4403.
func TestOIDCWebSocket(t *testing.T) {
	idp := oidctest.New(t)
	o := newOIDC(t, idp, func(c *graph.OIDCConfig) { c.Now = time.Now })
	h := newSubsHarness(t, subsConfig{auth: &graph.Auth{Anonymous: graph.RoleNone, OIDC: o}})
	expires := time.Now().Add(2 * time.Second)
	tok := idp.Sign(t, idp.Claims(oidcAudience, time.Now(), map[string]any{"catalogue_role": "viewer", "exp": expires.Unix() + 1}), false)
	c := connect(t, h.a, tok)
	c.subscribe("all", `subscription { changes { `+subChangeFields+` } }`, nil)
	for range c.msgs {
	}
	var ce websocket.CloseError
	if code := c.closed(); code != 4401 || !errors.As(c.closeErr, &ce) || !strings.Contains(ce.Reason, "token expired") {
		t.Errorf("socket closed with %d (%v), want 4401: the token expired", code, c.closeErr)
	}
	bad := dial(t, h.a, nil, map[string]any{"Authorization": "Bearer " + idp.Sign(t, idp.Claims("other", time.Now(), nil), false)})
	if code := bad.closed(); code != 4403 {
		t.Errorf("a wrong audience closed the socket with %d, want 4403", code)
	}
}

// A JWKS fetch that hangs (a slow or blackholed provider) holds up nobody but the caller whose
// kid is unknown: a token with a known kid verifies from the cached keys at once, both while
// an unknown kid's fetch hangs and when the hourly refresh is due (that refresh runs in the
// background, the old keys serving meanwhile).
func TestOIDCKnownKidDoesNotWaitForFetch(t *testing.T) {
	idp := oidctest.New(t)
	var clock atomic.Int64
	clock.Store(testNow.UnixNano())
	o := newOIDC(t, idp, func(c *graph.OIDCConfig) { c.Now = func() time.Time { return time.Unix(0, clock.Load()) } })
	known := idp.Sign(t, idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": "admin"}), false)
	if _, err := o.Verify(context.Background(), known, graph.RoleNone); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	release := idp.HoldJWKS()
	defer release()
	waitFetches := func(n int32) {
		t.Helper()
		for idp.JWKSFetches.Load() < n {
			time.Sleep(time.Millisecond)
		}
	}

	clock.Add(int64(graph.DefaultJWKSMinInterval)) // the unknown kid may refetch
	unknown := oidctest.SignWith(t, jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: idp.RSA, KeyID: "rotated"}},
		idp.Claims(oidcAudience, testNow, map[string]any{"catalogue_role": "admin"}))
	unknownDone := make(chan struct{})
	go func() {
		defer close(unknownDone)
		_, _ = o.Verify(context.Background(), unknown, graph.RoleNone)
	}()
	waitFetches(2) // the unknown kid's fetch hangs at the provider
	if _, err := o.Verify(context.Background(), known, graph.RoleNone); err != nil {
		t.Fatalf("known kid during a hanging fetch: %v", err)
	}
	select {
	case <-unknownDone:
		t.Fatal("the known kid was answered only after the hanging fetch ended")
	default:
	}
	release()
	<-unknownDone

	// The hourly refresh: due, it starts in the background; the known kid does not wait.
	release = idp.HoldJWKS()
	defer release()
	clock.Add(int64(2 * time.Hour))
	known = idp.Sign(t, idp.Claims(oidcAudience, time.Unix(0, clock.Load()), map[string]any{"catalogue_role": "admin"}), false)
	if _, err := o.Verify(context.Background(), known, graph.RoleNone); err != nil {
		t.Fatalf("known kid while the stale JWKS is refreshed: %v", err)
	}
	waitFetches(3) // the refresh did start
	if _, err := o.Verify(context.Background(), known, graph.RoleNone); err != nil {
		t.Fatalf("known kid during the refresh: %v", err)
	}
	if n := idp.JWKSFetches.Load(); n != 3 {
		t.Errorf("JWKS fetches = %d, want 3 (one refresh in flight, not one per token)", n)
	}
	release()
}

// The caller is the token's subject, never its preferred_username, which a user may set to
// anyone's name (OIDC Core 5.7): mallory claiming to be alice is oidc:<mallory's sub>, so she
// neither writes as alice nor takes alice's per-caller WebSocket slots.
func TestOIDCCallerIsSubjectNotPreferredUsername(t *testing.T) {
	idp := oidctest.New(t)
	o := newOIDC(t, idp, nil)
	tok := idp.Sign(t, idp.Claims(oidcAudience, testNow, map[string]any{"sub": "00u-mallory", "preferred_username": "alice", "catalogue_role": "viewer"}), false)
	c, err := o.Verify(context.Background(), tok, graph.RoleNone)
	if err != nil || c.Name != "oidc:00u-mallory" {
		t.Errorf("Verify = %+v, %v; want the caller oidc:00u-mallory", c, err)
	}
}

// A valid token that names no role gets the anonymous role, and is counted with the anonymous
// callers in the in-flight bound: roleless tokens (which anyone with an account at the
// provider can mint) cannot take the slots kept for callers with a role.
func TestOIDCRolelessTokenSharesAnonymousSlots(t *testing.T) {
	idp := oidctest.New(t)
	o := newOIDC(t, idp, nil)
	h := newHarnessWith(t, func(opts *graph.Options) {
		opts.MaxInFlight = 4
		opts.Auth = &graph.Auth{Keys: keyFile(t, "viewer "+graph.HashKey("ui-key")+" ui"), Anonymous: graph.RoleViewer, OIDC: o}
	})
	roleless := idp.Sign(t, idp.Claims(oidcAudience, testNow, nil), false)
	query := `{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name } }"}`
	postAs := func(key string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(query))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		h.handler.ServeHTTP(w, req)
		return w
	}
	release := make(chan struct{})
	var wg, held sync.WaitGroup
	held.Add(3)
	for range 3 { // three roleless tokens whose bodies never finish
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, "/graphql", nil)
			req.Body = &blockingBody{release: release, reading: held.Done}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+roleless)
			h.handler.ServeHTTP(httptest.NewRecorder(), req)
		}()
	}
	held.Wait()
	if w := postAs(roleless); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "OVERLOADED") {
		t.Errorf("a fourth roleless token = %d %s, want 503: roleless tokens hold the anonymous share only", w.Code, w.Body.String())
	}
	if w := postAs("ui-key"); w.Code != http.StatusOK {
		t.Errorf("a request with a key while roleless tokens hold their share = %d %s", w.Code, w.Body.String())
	}
	close(release)
	wg.Wait()
}
