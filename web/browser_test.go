package web

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBrowser runs the explorer's browser tests, `node --test web/test/`, in headless Chromium
// against the embedded default server. Without Chromium or playwright-core it skips, unless
// REQUIRE_BROWSER_TESTS=1 makes that a failure (web/install.sh installs both).
//
// CATALOGUE_BIN names a server binary to test instead of building one; TEST_OUTPUT_DIR is where
// the screenshots go (default: catalogue-web-screenshots under the OS temp dir).
func TestBrowser(t *testing.T) {
	node, chromium, root := browserTools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	bin := serverBinary(ctx, t, root)
	outDir := os.Getenv("TEST_OUTPUT_DIR")
	if outDir == "" {
		outDir = filepath.Join(os.TempDir(), "catalogue-web-screenshots")
	}
	outDir, err := filepath.Abs(outDir)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "web/test/")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CATALOGUE_BIN="+bin, "TEST_OUTPUT_DIR="+outDir, "CHROMIUM_PATH="+chromium, "NO_COLOR=1", "FORCE_COLOR=0")
	logw := &lineLogger{t: t}
	cmd.Stdout, cmd.Stderr = logw, logw
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	logw.flush()
	if err != nil {
		t.Fatalf("browser tests failed: %v (screenshots in %s)", err, outDir)
	}
	t.Logf("screenshots in %s", outDir)
}

// TestExplorerScripts runs the explorer's browser-free JavaScript tests (the graph layout, the
// chart ticks, the live-update client against a fake socket, the capability list's URL state, the
// rollup charts' intervals and series) when
// Node is installed: they need
// neither Chromium nor node_modules.
func TestExplorerScripts(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the layout tests did not run")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	recordInputs(t, filepath.Join(root, "web"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scripts := []string{"test/layout.test.mjs", "test/live.test.mjs", "test/liststate.test.mjs", "test/rollups.test.mjs"}
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, scripts...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test %s: %v\n%s", strings.Join(scripts, " "), err, out)
	}
}

// recordInputs opens the browser tests and stats every Go source of the module, so that `go
// test`'s result cache, which tracks the files a test touches, reruns this test when the server
// or the scripts change.
func recordInputs(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(name, ".mjs"):
			_, err = os.ReadFile(p)
		case strings.HasSuffix(name, ".go"), name == "go.mod", name == "go.sum":
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// goTool returns the go command that runs this test.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	//lint:ignore SA1019 the test runs on the machine that built it, where the build's GOROOT is real
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// lineLogger passes a child process's output to t.Log a line at a time.
type lineLogger struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for {
		line, err := l.buf.ReadString('\n')
		if err != nil {
			l.buf.WriteString(line)
			return len(p), nil
		}
		l.t.Log(strings.TrimRight(line, "\r\n"))
	}
}

func (l *lineLogger) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() > 0 {
		l.t.Log(l.buf.String())
		l.buf.Reset()
	}
}

// browserTools returns node, Chromium and the repository's root for a browser test, or skips
// the test without them (fails it with REQUIRE_BROWSER_TESTS=1; web/install.sh installs them).
// It records the test's inputs for the test cache.
func browserTools(t *testing.T) (node, chromium, root string) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser tests skipped in -short mode")
	}
	chromium = os.Getenv("CHROMIUM_PATH")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	var missing []string
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "web/node_modules/playwright-core")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("browser tests did not run: chromium or playwright-core missing; .ci/run installs them (missing %s; web/install.sh installs them)", strings.Join(missing, ", "))
		if os.Getenv("REQUIRE_BROWSER_TESTS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if root, err = filepath.Abs(".."); err != nil {
		t.Fatal(err)
	}
	recordInputs(t, root)
	return node, chromium, root
}

// serverBinary is $CATALOGUE_BIN, else the server built from root into the test's directory.
func serverBinary(ctx context.Context, t *testing.T, root string) string {
	t.Helper()
	if bin := os.Getenv("CATALOGUE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "catalogue")
	build := exec.CommandContext(ctx, goTool(), "build", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the server: %v\n%s", err, out)
	}
	return bin
}
