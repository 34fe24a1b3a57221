// Package oidctest is a fake OpenID Connect provider for tests: discovery, a JWKS with an RSA
// and an EC key generated at start, an authorization endpoint that signs in at once (it
// redirects back with a code) and a token endpoint that answers a code with signed tokens.
package oidctest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Key IDs of the provider's keys.
const (
	RSAKeyID = "rsa-1"
	ECKeyID  = "ec-1"
)

// Provider is the fake identity provider.
type Provider struct {
	Server *httptest.Server
	RSA    *rsa.PrivateKey
	EC     *ecdsa.PrivateKey
	// Issuer is the server's URL, the iss of every token.
	Issuer string
	// JWKSFetches counts GETs of the JWKS; DiscoveryFetches of the discovery document.
	JWKSFetches, DiscoveryFetches atomic.Int32
	// FailDiscovery answers discovery with 503 while true.
	FailDiscovery atomic.Bool
	// jwksGate, when set, holds every JWKS request (counted first) until it is closed or the
	// client hangs up: a slow or blackholed provider.
	jwksGate atomic.Pointer[chan struct{}]
	// SignIn are the claims of the tokens the token endpoint issues (besides iss, iat, exp,
	// nonce), and Audience their access token's aud.
	mu       sync.Mutex
	signIn   map[string]any
	codes    map[string]codeGrant
	Audience string
}

type codeGrant struct {
	clientID, redirectURI, challenge, nonce string
}

// New starts a provider; it stops when the test ends.
func New(t testing.TB) *Provider {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{RSA: rk, EC: ek, codes: map[string]codeGrant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("/token", p.token)
	p.Server = httptest.NewServer(mux)
	p.Issuer = p.Server.URL
	t.Cleanup(p.Server.Close)
	return p
}

func (p *Provider) discovery(w http.ResponseWriter, _ *http.Request) {
	p.DiscoveryFetches.Add(1)
	if p.FailDiscovery.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer": p.Issuer, "jwks_uri": p.Issuer + "/jwks",
		"authorization_endpoint": p.Issuer + "/authorize", "token_endpoint": p.Issuer + "/token",
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
	})
}

// HoldJWKS makes JWKS requests hang until release is called (or the client gives up).
func (p *Provider) HoldJWKS() (release func()) {
	gate := make(chan struct{})
	p.jwksGate.Store(&gate)
	var once sync.Once
	return func() {
		once.Do(func() {
			p.jwksGate.Store(nil)
			close(gate)
		})
	}
}

func (p *Provider) jwks(w http.ResponseWriter, r *http.Request) {
	p.JWKSFetches.Add(1)
	if gate := p.jwksGate.Load(); gate != nil {
		select {
		case <-*gate:
		case <-r.Context().Done():
			return
		}
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &p.RSA.PublicKey, KeyID: RSAKeyID, Algorithm: string(jose.RS256), Use: "sig"},
		{Key: &p.EC.PublicKey, KeyID: ECKeyID, Algorithm: string(jose.ES256), Use: "sig"},
	}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

// Sign signs claims with the RSA key (RS256) or, with ec, the EC key (ES256).
func (p *Provider) Sign(t testing.TB, claims map[string]any, ec bool) string {
	t.Helper()
	key := jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.RSA, KeyID: RSAKeyID}}
	if ec {
		key = jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: p.EC, KeyID: ECKeyID}}
	}
	return SignWith(t, key, claims)
}

// SignWith signs claims with any key (a JSONWebKey carries the kid).
func SignWith(t testing.TB, key jose.SigningKey, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Claims returns the usual claims of a token of the provider for aud, valid for an hour from
// now, with extra added.
func (p *Provider) Claims(aud string, now time.Time, extra map[string]any) map[string]any {
	c := map[string]any{"iss": p.Issuer, "aud": aud, "sub": "user-1", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// SignInAs sets the claims of the tokens the token endpoint issues next, and their access
// token's audience.
func (p *Provider) SignInAs(audience string, claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signIn, p.Audience = claims, audience
}

// authorize signs in at once: it redirects to redirect_uri with a code and the state.
func (p *Provider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" {
		http.Error(w, "want response_type=code, S256 PKCE, state and nonce", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	p.mu.Lock()
	p.codes[code] = codeGrant{clientID: q.Get("client_id"), redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), nonce: q.Get("nonce")}
	p.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	bq := back.Query()
	bq.Set("code", code)
	bq.Set("state", q.Get("state"))
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code (public client, PKCE verifier checked) for an ID token and an access
// token, with CORS headers for a browser.
func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	g, ok := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	claims, aud := p.signIn, p.Audience
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if !ok || g.clientID != r.PostForm.Get("client_id") || g.redirectURI != r.PostForm.Get("redirect_uri") ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	now := time.Now()
	id := p.Claims(g.clientID, now, claims)
	id["nonce"] = g.nonce
	access := p.Claims(aud, now, claims)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token_type": "Bearer", "expires_in": 3600,
		"id_token":     p.sign(id),
		"access_token": p.sign(access),
	})
}

func (p *Provider) sign(claims map[string]any) string {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: p.RSA, KeyID: RSAKeyID}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		panic(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		panic(err)
	}
	return tok
}
