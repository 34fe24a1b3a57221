package web

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/capcat/catalogue/internal/oidctest"
)

// TestBrowserSignIn signs in to the explorer through a fake OpenID Connect provider served
// here (web/test/signin.test.mjs in headless Chromium), then checks the provider's side: one
// code exchanged, the JWKS fetched by the server to verify the token. It skips as TestBrowser
// does without Chromium or playwright-core.
func TestBrowserSignIn(t *testing.T) {
	node, chromium, root := browserTools(t)
	idp := oidctest.New(t)
	idp.SignInAs("catalogue-api", map[string]any{"sub": "alice-sub", "preferred_username": "alice", "catalogue_role": "admin"})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := serverBinary(ctx, t, root)
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "web/test/signin.test.mjs")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CATALOGUE_BIN="+bin, "CHROMIUM_PATH="+chromium, "OIDC_TEST_ISSUER="+idp.Issuer, "NO_COLOR=1", "FORCE_COLOR=0")
	logw := &lineLogger{t: t}
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	logw.flush()
	if err != nil {
		t.Fatalf("sign-in browser test failed: %v", err)
	}
	if n := idp.JWKSFetches.Load(); n != 1 {
		t.Errorf("the server fetched the JWKS %d times, want 1", n)
	}
}
