package graph

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Single sign-on with OpenID Connect: bearer tokens (JWTs) issued by the organisation's identity
// provider are accepted beside API keys. Discovery (go-oidc) finds the provider's JWKS; go-jose
// verifies each token's signature against it and checks iss, aud, exp and nbf.

// Defaults of OIDCConfig.
const (
	// DefaultOIDCRoleClaim names the claim that carries the catalogue role.
	DefaultOIDCRoleClaim = "catalogue_role"
	// OIDCClockSkew is how far exp, nbf and iat may be off the server's clock.
	OIDCClockSkew = 60 * time.Second
	// MaxTokenLifetime bounds how far in the future a token's exp may lie: at most this long
	// after its iat, and after now (both with OIDCClockSkew). A token claiming to be valid for
	// longer (exp = 2^53, say) is refused: no provider issues access tokens that long.
	MaxTokenLifetime = 24 * time.Hour
	// MaxTokenBytes bounds a bearer token: a longer one is refused before it is parsed.
	MaxTokenBytes = 16 << 10
	// DefaultJWKSMinInterval is the least time between two fetches of the JWKS: an unknown
	// kid refetches it at most this often, whatever the number of tokens naming one.
	DefaultJWKSMinInterval = 10 * time.Second
	// jwksWait bounds how long a token whose kid is unknown waits for the JWKS fetch it
	// started or joined (the fetch itself may run to the HTTP client's timeout, in the
	// background).
	jwksWait = 5 * time.Second
	// jwksMaxAge is how long a fetched JWKS is used before it is fetched again (so that a key
	// the provider removed stops verifying), still within the minimum interval.
	jwksMaxAge = time.Hour
	// maxProviderBody bounds what is read of the discovery document and of the JWKS.
	maxProviderBody = 1 << 20
	// OIDCNamePrefix begins the caller name (and the actor recorded in history and changes)
	// of every token, so that it cannot be taken for an API key's name: ParseKeyRing refuses
	// names with this prefix.
	OIDCNamePrefix = "oidc:"
)

// oidcAlgorithms are the signature algorithms a token may use: asymmetric ones only. "none"
// and the HMAC algorithms (HS256...) are refused when the token is parsed, so a token signed
// with a provider's public key as an HMAC secret (algorithm confusion) never reaches a key.
var oidcAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// OIDCConfig configures the tokens of one OpenID Connect provider.
type OIDCConfig struct {
	// Issuer is the provider's issuer URL: discovery reads {Issuer}/.well-known/openid-configuration,
	// whose issuer, and every token's iss, must equal it exactly.
	Issuer string
	// Audience must be one of a token's aud values.
	Audience string
	// ClientID is the explorer's public client (authorization code with PKCE); empty: the
	// explorer offers no sign-in.
	ClientID string
	// Scopes are what the explorer asks for; openid is always asked.
	Scopes []string
	// RoleClaim names the claim (a string or an array of strings) whose values name roles:
	// viewer, devops or admin directly, or through RoleMap. A dotted path (realm_access.roles)
	// reaches into objects when no top-level claim has that name.
	RoleClaim string
	// GroupsClaim names a claim of groups whose values give roles through RoleMap only.
	GroupsClaim string
	// RoleMap gives the role of a value of the role or groups claim.
	RoleMap map[string]Role
	// HTTPClient fetches discovery and the JWKS; nil is a client with a 10 s timeout.
	HTTPClient *http.Client
	// JWKSMinInterval is the least time between two JWKS fetches; 0 is DefaultJWKSMinInterval.
	JWKSMinInterval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger notes discovery and JWKS fetches; nil discards.
	Logger *slog.Logger
}

// OIDC verifies the bearer tokens of one provider.
type OIDC struct {
	cfg OIDCConfig

	mu        sync.Mutex
	provider  *oidc.Provider
	jwksURL   string
	lastTry   time.Time // of discovery
	discovery sync.Mutex

	// keys is the cached JWKS, replaced whole (copy on write): verifying reads it without a
	// lock, so no token waits on a fetch unless its kid is unknown.
	keys atomic.Pointer[keySet]

	fetchMu   sync.Mutex // guards the fields below, never held across the network
	lastFetch time.Time  // of an attempt, successful or not
	fetches   int
	inflight  chan struct{} // closed when the fetch under way ends; nil: none
}

// keySet is one fetched JWKS.
type keySet struct {
	keys      []jose.JSONWebKey
	fetchedAt time.Time
}

// NewOIDC returns the verifier of cfg. It does not contact the provider: call Discover (the
// server does at start, retrying in the background), or the first token does.
func NewOIDC(cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidc: the issuer and the audience are both required")
	}
	if cfg.RoleClaim == "" {
		cfg.RoleClaim = DefaultOIDCRoleClaim
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.JWKSMinInterval <= 0 {
		cfg.JWKSMinInterval = DefaultJWKSMinInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &OIDC{cfg: cfg}, nil
}

// Config returns the configuration (with its defaults).
func (o *OIDC) Config() OIDCConfig { return o.cfg }

// JWKSFetches returns how many times the JWKS was fetched.
func (o *OIDC) JWKSFetches() int {
	o.fetchMu.Lock()
	defer o.fetchMu.Unlock()
	return o.fetches
}

// ErrProviderUnavailable means discovery has not succeeded yet: tokens cannot be checked.
var ErrProviderUnavailable = errors.New("the identity provider is not reachable: retry in a moment")

// Discover reads the provider's discovery document (once it has succeeded, it is kept).
func (o *OIDC) Discover(ctx context.Context) error {
	o.discovery.Lock()
	err := o.discoverLocked(ctx)
	o.discovery.Unlock()
	if err == nil && !o.haveKeys() {
		o.keysFor(ctx, "", "") // the JWKS now, so that the first token finds it
	}
	return err
}

// discoverLocked is Discover under o.discovery.
func (o *OIDC) discoverLocked(ctx context.Context) error {
	if o.discovered() != nil {
		return nil
	}
	o.mu.Lock()
	o.lastTry = o.cfg.Now()
	o.mu.Unlock()
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.client()), o.cfg.Issuer)
	if err != nil {
		return fmt.Errorf("oidc discovery: %w", err)
	}
	var doc struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKS == "" {
		return errors.New("oidc discovery: no jwks_uri")
	}
	o.mu.Lock()
	o.provider, o.jwksURL = p, doc.JWKS
	o.mu.Unlock()
	o.cfg.Logger.Info("oidc discovery", "issuer", o.cfg.Issuer, "jwks", doc.JWKS)
	return nil
}

// client is the HTTP client, with bounded bodies.
func (o *OIDC) client() *http.Client {
	c := *o.cfg.HTTPClient
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = boundedTransport{base}
	return &c
}

type boundedTransport struct{ rt http.RoundTripper }

func (b boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.rt.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxProviderBody), resp.Body}
	}
	return resp, err
}

// DiscoverInBackground retries discovery until it succeeds or ctx ends, waiting 1 s, then
// twice as long each time up to a minute.
func (o *OIDC) DiscoverInBackground(ctx context.Context) {
	wait := time.Second
	for {
		err := o.Discover(ctx)
		if err == nil {
			return
		}
		o.cfg.Logger.Warn("oidc discovery failed; retrying", "err", err, "in", wait.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Minute)
	}
}

func (o *OIDC) discovered() *oidc.Provider {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.provider
}

// ensureDiscovered returns nil once discovery succeeded. A token arriving before waits for an
// attempt in progress, or tries again itself, at most once per JWKS interval.
func (o *OIDC) ensureDiscovered(ctx context.Context) error {
	if o.discovered() != nil {
		return nil
	}
	o.discovery.Lock()
	defer o.discovery.Unlock()
	if o.discovered() != nil {
		return nil
	}
	o.mu.Lock()
	recent := !o.lastTry.IsZero() && o.cfg.Now().Sub(o.lastTry) < o.cfg.JWKSMinInterval
	o.mu.Unlock()
	if recent || o.discoverLocked(ctx) != nil {
		return ErrProviderUnavailable
	}
	return nil
}

// ExplorerConfig is what the explorer needs to sign in: GET /auth/config.
type ExplorerConfig struct {
	Issuer                string   `json:"issuer"`
	ClientID              string   `json:"clientId"`
	Audience              string   `json:"audience"`
	Scopes                []string `json:"scopes"`
	AuthorizationEndpoint string   `json:"authorizationEndpoint"`
	TokenEndpoint         string   `json:"tokenEndpoint"`
	EndSessionEndpoint    string   `json:"endSessionEndpoint,omitempty"`
}

// Explorer returns the explorer's sign-in configuration; false without a client ID or before
// discovery.
func (o *OIDC) Explorer(ctx context.Context) (ExplorerConfig, bool) {
	if o.cfg.ClientID == "" || o.ensureDiscovered(ctx) != nil {
		return ExplorerConfig{}, false
	}
	p := o.discovered()
	var doc struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = p.Claims(&doc)
	scopes := []string{"openid"}
	for _, s := range o.cfg.Scopes {
		if s != "openid" {
			scopes = append(scopes, s)
		}
	}
	ep := p.Endpoint()
	return ExplorerConfig{Issuer: o.cfg.Issuer, ClientID: o.cfg.ClientID, Audience: o.cfg.Audience, Scopes: scopes,
		AuthorizationEndpoint: ep.AuthURL, TokenEndpoint: ep.TokenURL, EndSessionEndpoint: doc.EndSession}, true
}

// TokenError is why a token was refused, in a few words (never the token's own values).
type TokenError struct{ Reason string }

func (e *TokenError) Error() string { return "invalid token: " + e.Reason }

func invalidToken(reason string) error { return &TokenError{Reason: reason} }

// NoRoleError is a valid token whose claims name no role while anonymous callers are refused.
type NoRoleError struct{ Name string }

func (e *NoRoleError) Error() string {
	return "the token of " + e.Name + " names no catalogue role"
}

// LooksLikeJWT reports whether a bearer value has the shape of a compact JWS: three base64url
// segments, the first a JSON object. API keys (hex, or any string without two dots) never do.
func LooksLikeJWT(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return false
	}
	for _, p := range parts {
		for _, r := range p {
			if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	head, err := base64.RawURLEncoding.DecodeString(parts[0])
	return err == nil && len(head) > 0 && head[0] == '{'
}

// Verify checks a token and returns its caller. anonymous is the role of a token that names
// none (RoleNone refuses it with a *NoRoleError).
func (o *OIDC) Verify(ctx context.Context, raw string, anonymous Role) (Caller, error) {
	if len(raw) > MaxTokenBytes {
		return Caller{}, invalidToken("too large")
	}
	tok, err := jwt.ParseSigned(raw, oidcAlgorithms)
	if err != nil {
		if strings.Contains(err.Error(), "unexpected signature algorithm") {
			return Caller{}, invalidToken("signature algorithm not allowed")
		}
		return Caller{}, invalidToken("malformed")
	}
	if len(tok.Headers) != 1 {
		return Caller{}, invalidToken("malformed")
	}
	if err := o.ensureDiscovered(ctx); err != nil {
		return Caller{}, err
	}
	h := tok.Headers[0]
	var std jwt.Claims
	var claims map[string]any
	verified := false
	keys := o.keysFor(ctx, h.KeyID, h.Algorithm)
	if keys == nil && !o.haveKeys() {
		return Caller{}, ErrProviderUnavailable // the JWKS could never be read
	}
	for _, key := range keys {
		if tok.Claims(key.Key, &std, &claims) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Caller{}, invalidToken("signature not verified")
	}
	if std.Expiry == nil {
		return Caller{}, invalidToken("no exp")
	}
	switch err := std.ValidateWithLeeway(jwt.Expected{Issuer: o.cfg.Issuer, AnyAudience: []string{o.cfg.Audience}, Time: o.cfg.Now()}, OIDCClockSkew); {
	case err == nil:
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Caller{}, invalidToken("wrong issuer")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Caller{}, invalidToken("wrong audience")
	case errors.Is(err, jwt.ErrExpired):
		return Caller{}, invalidToken("expired")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Caller{}, invalidToken("not valid yet")
	default:
		return Caller{}, invalidToken("claims not valid")
	}
	if exp := std.Expiry.Time(); exp.Sub(o.cfg.Now()) > MaxTokenLifetime+OIDCClockSkew ||
		(std.IssuedAt != nil && exp.Sub(std.IssuedAt.Time()) > MaxTokenLifetime) {
		return Caller{}, invalidToken("lifetime too long")
	}
	// The caller is the subject, unique and stable at the issuer (OIDC Core 5.7): never
	// preferred_username, which a user may set to another's name.
	if std.Subject == "" {
		return Caller{}, invalidToken("no sub")
	}
	if !validSubject(std.Subject) {
		return Caller{}, invalidToken("bad sub")
	}
	c := Caller{Name: OIDCNamePrefix + std.Subject, Role: o.role(claims), Expires: std.Expiry.Time()}
	if c.Role == RoleNone {
		if anonymous == RoleNone {
			return Caller{}, &NoRoleError{Name: c.Name}
		}
		c.Role, c.Roleless = anonymous, true
	}
	return c, nil
}

// maxSubjectBytes bounds a token's sub: OIDC Core 2 allows at most 255 ASCII characters.
const maxSubjectBytes = 255

// validSubject reports whether sub may name a caller (recorded as the actor of writes, shown to
// admins): valid UTF-8 of at most 255 bytes, without control characters or format characters
// (bidi overrides and isolates, zero-width characters), which could disguise one name as another.
func validSubject(sub string) bool {
	if len(sub) > maxSubjectBytes || !utf8.ValidString(sub) {
		return false
	}
	for _, r := range sub {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// role returns the highest role the token's role and groups claims name.
func (o *OIDC) role(claims map[string]any) Role {
	best := RoleNone
	for _, v := range claimStrings(claims, o.cfg.RoleClaim) {
		if r, err := ParseRole(v); err == nil {
			best = max(best, r)
		}
		best = max(best, o.cfg.RoleMap[v])
	}
	if o.cfg.GroupsClaim != "" {
		for _, v := range claimStrings(claims, o.cfg.GroupsClaim) {
			best = max(best, o.cfg.RoleMap[v])
		}
	}
	return best
}

// claimStrings returns the string values of a claim (a string, or an array whose strings
// count): the top-level claim of that name, else the dotted path through objects.
func claimStrings(claims map[string]any, name string) []string {
	v, ok := claims[name]
	if !ok {
		var cur any = claims
		for _, part := range strings.Split(name, ".") {
			m, isMap := cur.(map[string]any)
			if !isMap {
				return nil
			}
			cur = m[part]
		}
		v = cur
	}
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// keysFor returns the keys that may have signed a token with this kid and alg, from the cached
// JWKS. No lock is held across the network: a known kid is answered from the cache at once,
// even while a fetch is under way; when the JWKS is older than an hour it is refreshed in the
// background, the old keys serving meanwhile. Only a kid the cache lacks (or no JWKS yet)
// waits, at most jwksWait, for a fetch: the one under way, or one it starts itself when the
// last began at least JWKSMinInterval ago. One fetch runs at a time.
func (o *OIDC) keysFor(ctx context.Context, kid string, alg string) []jose.JSONWebKey {
	set := o.keys.Load()
	now := o.cfg.Now()
	known := set != nil && kid == ""
	if set != nil && kid != "" {
		for _, k := range set.keys {
			known = known || k.KeyID == kid
		}
	}
	if known {
		if now.Sub(set.fetchedAt) > jwksMaxAge {
			o.startFetch(ctx, now) // in the background
		}
		return matchKeys(set, kid, alg)
	}
	if done := o.startFetch(ctx, now); done != nil {
		wait := time.NewTimer(jwksWait)
		defer wait.Stop()
		select {
		case <-done:
		case <-wait.C:
		case <-ctx.Done():
		}
	}
	return matchKeys(o.keys.Load(), kid, alg)
}

// startFetch starts a JWKS fetch unless one is under way or the last began less than
// JWKSMinInterval ago. It returns what closes when the fetch under way (started now or
// before) ends; nil when none is.
func (o *OIDC) startFetch(ctx context.Context, now time.Time) <-chan struct{} {
	o.fetchMu.Lock()
	defer o.fetchMu.Unlock()
	if o.inflight != nil {
		return o.inflight
	}
	if !o.lastFetch.IsZero() && now.Sub(o.lastFetch) < o.cfg.JWKSMinInterval {
		return nil
	}
	o.lastFetch = now
	o.fetches++
	done := make(chan struct{})
	o.inflight = done
	// Not the request's cancellation: a client that hangs up must not fail the fetch that the
	// next tokens rely on.
	ctx = context.WithoutCancel(ctx)
	go func() {
		keys, err := o.fetchKeys(ctx)
		if err != nil {
			o.cfg.Logger.Warn("oidc: fetch JWKS", "err", err)
		} else {
			o.keys.Store(&keySet{keys: keys, fetchedAt: now})
		}
		o.fetchMu.Lock()
		o.inflight = nil
		o.fetchMu.Unlock()
		close(done)
	}()
	return done
}

// matchKeys returns the keys of set with this kid (any, for an empty kid) that allow alg.
func matchKeys(set *keySet, kid, alg string) []jose.JSONWebKey {
	if set == nil {
		return nil
	}
	var out []jose.JSONWebKey
	for _, k := range set.keys {
		if (kid == "" || k.KeyID == kid) && keyAllows(k, alg) {
			out = append(out, k)
		}
	}
	return out
}

// haveKeys reports whether a JWKS was ever read.
func (o *OIDC) haveKeys() bool { return o.keys.Load() != nil }

// keyAllows reports whether a JWKS key may verify a signature of alg: a public signing key
// whose own alg, when it has one, is alg, and whose type fits alg.
func keyAllows(k jose.JSONWebKey, alg string) bool {
	if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) || !k.IsPublic() {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(alg, "RS") || strings.HasPrefix(alg, "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(alg, "ES")
	case ed25519.PublicKey:
		return alg == string(jose.EdDSA)
	}
	return false
}

// fetchKeys reads the JWKS; keys of unknown types, and private or symmetric keys, are skipped.
func (o *OIDC) fetchKeys(ctx context.Context) ([]jose.JSONWebKey, error) {
	o.mu.Lock()
	url := o.jwksURL
	o.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := o.client().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS: HTTP %d", resp.StatusCode)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if json.Unmarshal(raw, &k) == nil && k.IsPublic() {
			keys = append(keys, k)
		}
	}
	o.cfg.Logger.Info("oidc: JWKS fetched", "keys", len(keys))
	return keys, nil
}
