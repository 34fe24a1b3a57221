package main

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capcat/catalogue/internal/oidctest"
)

// lockedBuffer is a bytes.Buffer safe to write from the server while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// bannerOf drains what the server printed so far.
func bannerOf(out *lineWriter) string {
	var lines []string
	for len(out.lines) > 0 {
		lines = append(lines, <-out.lines)
	}
	return strings.Join(lines, "\n")
}

// get sends a GET with a Host header of its own and returns the status and body.
func get(t *testing.T, url, host string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

var generatedKeyPattern = regexp.MustCompile(`Bearer ([0-9a-f]{64})`)

// With no key file the generated admin key stays on this machine: the server listens on
// loopback only, and answers only loopback clients that name it by a loopback name, so neither
// another machine nor a page using DNS rebinding can read the pages that embed the key.
func TestGeneratedKeyStaysOnLoopback(t *testing.T) {
	base, _, _, out := startWith(t, []string{"-port", "0"}, nil, io.Discard)
	banner := bannerOf(out)
	m := generatedKeyPattern.FindStringSubmatch(banner)
	if m == nil || !strings.Contains(banner, "loopback clients only") || !strings.Contains(out.listening, "on 127.0.0.1 only") {
		t.Fatalf("banner = %q %q, want a generated key and loopback only", out.listening, banner)
	}
	key := m[1]
	port := base[strings.LastIndex(base, ":")+1:]
	for _, path := range []string{"/", "/graphiql", "/graphql?query=%7B__typename%7D", "/healthz", "/metrics"} {
		for _, host := range []string{"evil.example.com", "evil.example.com:" + port, "attacker.test:80"} {
			status, body := get(t, base+path, host, nil)
			if status != http.StatusForbidden || strings.Contains(body, key) {
				t.Errorf("GET %s with Host %s = %d (key in body: %v), want 403", path, host, status, strings.Contains(body, key))
			}
		}
	}
	for _, host := range []string{"", "localhost:" + port, "localhost"} {
		status, body := get(t, base+"/", host, nil)
		if status != http.StatusOK || !strings.Contains(body, key) {
			t.Errorf("GET / with Host %q = %d, want 200 with the key", host, status)
		}
	}
}

// An explicit non-loopback -host with a generated key is allowed with a warning, and still
// answers loopback clients only.
func TestExplicitHostWithGeneratedKeyWarns(t *testing.T) {
	var stderr lockedBuffer
	base, _, _, out := startWith(t, []string{"-port", "0", "-host", "0.0.0.0"}, nil, &stderr)
	if !strings.Contains(stderr.String(), "WARNING") || !strings.Contains(stderr.String(), "loopback clients only") {
		t.Errorf("stderr = %q, want a warning", stderr.String())
	}
	if !strings.Contains(out.listening, "every interface") {
		t.Errorf("listening line = %q", out.listening)
	}
	if status, _ := get(t, base+"/healthz", "", nil); status != http.StatusOK {
		t.Errorf("loopback client = %d", status)
	}
	if status, _ := get(t, base+"/healthz", "catalogue.example.com", nil); status != http.StatusForbidden {
		t.Errorf("foreign Host = %d, want 403", status)
	}
	// A client from another address is refused as TestLoopbackOnly (graph) shows: tests here
	// reach loopback addresses only.
}

// The banner's URLs name the address listened on: -host ::1 is reached at [::1].
func TestBannerNamesTheAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback on this machine: %v", err)
	}
	ln.Close()
	base, _, _, out := startWith(t, []string{"-port", "0", "-host", "::1"}, nil, io.Discard)
	if !strings.HasPrefix(base, "http://[::1]:") || !strings.Contains(out.listening, "on ::1 only") {
		t.Errorf("listening line = %q", out.listening)
	}
}

// With a key file no page embeds a key, and any Host is served.
func TestKeyFileEmbedsNoKey(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("admin 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _, out := startServer(t, nil, map[string]string{"API_KEYS_FILE": keys})
	if banner := bannerOf(out); generatedKeyPattern.MatchString(banner) {
		t.Errorf("banner prints a key: %q", banner)
	}
	for _, path := range []string{"/", "/graphiql"} {
		status, body := get(t, base+path, "catalogue.example.com", nil)
		if status != http.StatusOK || strings.Contains(body, "catalogue-api-key") || strings.Contains(body, "Bearer") {
			t.Errorf("GET %s = %d, embeds a key: %v", path, status, strings.Contains(body, "catalogue-api-key"))
		}
	}
}

// /metrics asks for a key on the API's address; with -metrics-addr it is served there without
// one, and not on the API's address.
func TestMetricsAddress(t *testing.T) {
	base, _, _, out := startServer(t, nil, nil)
	key := generatedKeyPattern.FindStringSubmatch(bannerOf(out))[1]
	if status, body := get(t, base+"/metrics", "", nil); status != http.StatusUnauthorized || strings.Contains(body, "CAP-") {
		t.Errorf("anonymous /metrics = %d", status)
	}
	if status, body := get(t, base+"/metrics", "", map[string]string{"Authorization": "Bearer " + key}); status != http.StatusOK || !strings.Contains(body, "catalogue_capability_health_score") {
		t.Errorf("/metrics with the key = %d", status)
	}

	base, _, _, out = startServer(t, []string{"-metrics-addr", "127.0.0.1:0"}, nil)
	m := regexp.MustCompile(`metrics:\s+(http://\S+/metrics)`).FindStringSubmatch(bannerOf(out))
	if m == nil {
		t.Fatal("banner lacks the metrics address")
	}
	if status, body := get(t, m[1], "", nil); status != http.StatusOK || !strings.Contains(body, "catalogue_capability_health_score") {
		t.Errorf("GET %s = %d", m[1], status)
	}
	if status, _ := get(t, base+"/metrics", "", nil); status != http.StatusNotFound {
		t.Errorf("/metrics on the API's address = %d, want 404", status)
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 and its key, returning the pool
// that trusts it.
func writeCert(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "catalogue test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(priv)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(leaf)
	return certFile, keyFile, pool
}

// With -tls-cert and -tls-key the server speaks HTTPS only, TLS 1.2 at least.
func TestTLS(t *testing.T) {
	certFile, keyFile, pool := writeCert(t, t.TempDir())
	base, _, _, _ := startServer(t, []string{"-tls-cert", certFile, "-tls-key", keyFile}, nil)
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("banner URL = %s, want https", base)
	}
	client := func(minV, maxV uint16) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: minV, MaxVersion: maxV}}}
	}
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		resp, err := client(v, v).Get(base + "/healthz")
		if err != nil {
			t.Fatalf("TLS %x: %v", v, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.Version != v {
			t.Errorf("TLS %x: status %d", v, resp.StatusCode)
		}
	}
	if resp, err := client(tls.VersionTLS10, tls.VersionTLS11).Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Error("a TLS 1.1 client was served")
	}
	plain := "http://" + strings.TrimPrefix(base, "https://")
	if resp, err := http.Get(plain + "/healthz"); err == nil {
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP was served")
		}
		resp.Body.Close()
	}
	if _, err := parseConfig([]string{"-tls-cert", certFile}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("-tls-cert without -tls-key accepted")
	}
}

// A client that sends its body slowly, or sends a request and never reads the answer, cannot
// hold a connection past the request deadline.
func TestSlowClientsCutOff(t *testing.T) {
	base, _, _, _ := startServer(t, []string{"-request-timeout", "1s"}, nil)
	addr := strings.TrimPrefix(base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"query\":")
	// Nothing more is sent: the server must answer or close long before this bound.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	_, err = io.ReadAll(r)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("a stalled body held the connection for 30 s")
	}

	srv := newHTTPServer(t.Context(), http.NotFoundHandler(), 10*time.Second, slog.New(slog.DiscardHandler))
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 10*time.Second || srv.WriteTimeout <= 10*time.Second || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes > 1<<20 {
		t.Errorf("server timeouts = header %v read %v write %v idle %v: each must be set, write past the deadline",
			srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	}
}

// The server archives by itself on a schedule (-archive-every), the embedded default included.
func TestServerArchivesOnSchedule(t *testing.T) {
	var stderr lockedBuffer
	startWith(t, []string{"-port", "0", "-host", "127.0.0.1", "-archive-every", "100ms", "-archive-min-age", "2h"}, nil, &stderr)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(stderr.String(), "\n") {
			var run struct {
				Msg                          string
				PointsArchived, ItemsDeleted int
			}
			if json.Unmarshal([]byte(line), &run) != nil || run.Msg != "scheduled archive" {
				continue
			}
			// The sample's metrics span 24 hours: those over 2 hours old move to S3.
			if run.PointsArchived == 0 || run.ItemsDeleted != run.PointsArchived {
				t.Errorf("scheduled run = %s", line)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no scheduled archive within 60 s:\n%s", stderr.String())
}

// The partition cache is on by default with its series in /metrics and its counts in
// extensions.dynamodb; -cache-bytes 0 (or CACHE_BYTES=0) turns both off.
func TestCacheBytesFlag(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
		on   bool
	}{
		{"default", nil, nil, true},
		{"flag 0", []string{"-cache-bytes", "0"}, nil, false},
		{"env 0", nil, map[string]string{"CACHE_BYTES": "0"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base, _, _, out := startServer(t, tt.args, tt.env)
			key := generatedKeyPattern.FindStringSubmatch(bannerOf(out))[1]
			auth := map[string]string{"Authorization": "Bearer " + key}
			_, body := get(t, base+"/metrics", "", auth)
			if got := strings.Contains(body, "catalogue_partition_cache_hits_total"); got != tt.on {
				t.Errorf("/metrics has the partition cache series: %v, want %v", got, tt.on)
			}
			_, body = get(t, base+`/graphql?query=%7Bcapability(id:%22CAP-ALERT-MGT-001%22)%7Bcomponents%7Bname%7D%7D%7D`, "", auth)
			if got := strings.Contains(body, `"cache":{"hits":0,"misses":1}`); got != tt.on {
				t.Errorf("extensions.dynamodb.cache of a cold view present: %v, want %v: %s", got, tt.on, body)
			}
		})
	}
}

// With an OIDC issuer: no key is generated (tokens say who writes), the banner names the
// issuer, /auth/config gives the explorer what it needs to sign in, and a token's request is
// served and written under its user's name.
func TestOIDCServer(t *testing.T) {
	idp := oidctest.New(t)
	base, _, _, out := startServer(t, []string{"-port", "0", "-oidc-issuer", idp.Issuer, "-oidc-audience", "catalogue-api",
		"-oidc-client-id", "explorer", "-oidc-groups-claim", "groups", "-oidc-role-map", "platform-admins=admin"}, nil)
	banner := bannerOf(out)
	if generatedKeyPattern.MatchString(banner) || !strings.Contains(banner, "OIDC tokens: issuer "+idp.Issuer) {
		t.Errorf("banner = %q, want the issuer and no generated key", banner)
	}
	status, body := get(t, base+"/auth/config", "", nil)
	var cfg struct{ Issuer, ClientID, Audience, AuthorizationEndpoint, TokenEndpoint string }
	if err := json.Unmarshal([]byte(body), &cfg); err != nil || status != 200 || cfg.ClientID != "explorer" ||
		cfg.AuthorizationEndpoint != idp.Issuer+"/authorize" || cfg.TokenEndpoint != idp.Issuer+"/token" || cfg.Audience != "catalogue-api" {
		t.Errorf("/auth/config = %d %s", status, body)
	}
	tok := idp.Sign(t, idp.Claims("catalogue-api", time.Now(), map[string]any{"groups": []string{"platform-admins"}, "sub": "alice-sub", "preferred_username": "alice"}), true)
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(`{"query":"mutation { createCapability(input: {capabilityId: \"CAP-SSO-001\", name: \"SSO\", businessDomain: \"testing\", priority: HIGH}) { id } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(b), "errors") {
		t.Fatalf("token's mutation = %d %s", resp.StatusCode, b)
	}
	status, body = get(t, base+`/graphql?query=%7Bcapability(id:"CAP-SSO-001")%7Bchanges(first:1)%7Bnodes%7Bactor%7Bname%20role%7D%7D%7D%7D%7D`, "", map[string]string{"Authorization": "Bearer " + tok})
	if status != 200 || !strings.Contains(body, `"name":"oidc:alice-sub","role":"admin"`) {
		t.Errorf("changes = %d %s", status, body)
	}
	if status, _ := get(t, base+"/graphql?query=%7B__typename%7D", "", map[string]string{"Authorization": "Bearer " + idp.Sign(t, idp.Claims("another-api", time.Now(), nil), false)}); status != 401 {
		t.Errorf("wrong audience = %d, want 401", status)
	}
}

func TestOIDCFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-oidc-issuer", "https://idp.example"},
		{"-oidc-audience", "api"},
		{"-oidc-client-id", "explorer"},
		{"-oidc-issuer", "https://idp.example", "-oidc-audience", "api", "-oidc-role-map", "admins=root"},
		{"-oidc-issuer", "https://idp.example", "-oidc-audience", "api", "-oidc-role-map", "=admin"},
	} {
		if _, err := parseConfig(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("parseConfig(%q) accepted", args)
		}
	}
	c, err := parseConfig(nil, func(k string) string {
		return map[string]string{"OIDC_ISSUER": "https://idp.example", "OIDC_AUDIENCE": "api", "OIDC_ROLE_MAP": "a=admin, b=devops"}[k]
	}, io.Discard)
	if err != nil || c.oidcIssuer != "https://idp.example" || c.oidcRoleClaim != "catalogue_role" {
		t.Fatalf("parseConfig from env = %+v, %v", c, err)
	}
	if m, err := parseRoleMap(c.oidcRoleMap); err != nil || len(m) != 2 || m["b"].String() != "devops" {
		t.Errorf("role map = %v, %v", m, err)
	}
}

// The server starts while the provider is down: API keys and anonymous reads work, a token is
// 503 until the background discovery succeeds, then it is served.
func TestOIDCServerStartsWithoutProvider(t *testing.T) {
	idp := oidctest.New(t)
	idp.FailDiscovery.Store(true)
	base, _, _, _ := startServer(t, []string{"-port", "0", "-oidc-issuer", idp.Issuer, "-oidc-audience", "catalogue-api"}, nil)
	query := base + "/graphql?query=%7B__typename%7D"
	if status, _ := get(t, query, "", nil); status != 200 {
		t.Fatalf("anonymous read while the provider is down = %d", status)
	}
	bearer := map[string]string{"Authorization": "Bearer " + idp.Sign(t, idp.Claims("catalogue-api", time.Now(), map[string]any{"catalogue_role": "viewer"}), false)}
	if status, body := get(t, query, "", bearer); status != 503 || !strings.Contains(body, "IDENTITY_PROVIDER_UNAVAILABLE") {
		t.Fatalf("token while the provider is down = %d %s", status, body)
	}
	idp.FailDiscovery.Store(false)
	deadline := time.Now().Add(20 * time.Second) // a bound on a hang, not a timing assertion
	for {
		status, body := get(t, query, "", bearer)
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("token after the provider came back = %d %s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := idp.JWKSFetches.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times, want 1", n)
	}
}

// Whether the server generates an admin key is one decision (config.generatesKey): loadAuth
// generates one exactly when parseConfig refuses -cors-origins for want of another way to sign
// in, for each way of configuring who writes.
func TestGeneratedKeyDecision(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("admin 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args     []string
		generate bool
	}{
		{nil, true},
		{[]string{"-api-keys-file", keys}, false},
		{[]string{"-oidc-issuer", "https://idp.example", "-oidc-audience", "api"}, false},
		{[]string{"-api-keys-file", keys, "-oidc-issuer", "https://idp.example", "-oidc-audience", "api"}, false},
	} {
		noEnv := func(string) string { return "" }
		c, err := parseConfig(tt.args, noEnv, io.Discard)
		if err != nil {
			t.Fatalf("parseConfig(%q): %v", tt.args, err)
		}
		_, generated, err := loadAuth(c)
		if err != nil || (generated != "") != tt.generate || c.generatesKey() != tt.generate {
			t.Errorf("%q: generated key %q (%v), generatesKey %v; want a key: %v", tt.args, generated, err, c.generatesKey(), tt.generate)
		}
		_, err = parseConfig(append(tt.args, "-cors-origins", "https://app.example"), noEnv, io.Discard)
		if (err != nil) != tt.generate {
			t.Errorf("%q with -cors-origins: %v; want refused: %v", tt.args, err, tt.generate)
		}
	}
}
