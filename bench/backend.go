package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	miniserver "github.com/truora/minidyn/server"

	"github.com/capcat/catalogue/internal/memdyn"
)

// delayCounter is the http.Handler in front of the DynamoDB backend: it counts every request by
// operation (from X-Amz-Target, outside the code under test) and holds each one for a fixed
// delay before passing it on, the stand-in for the network and service time of a real DynamoDB
// round trip. Paths under /_bench/ control it (delay, counts, reset) when it runs in another
// process.
type delayCounter struct {
	next  http.Handler
	delay atomic.Int64 // nanoseconds

	mu    sync.Mutex
	ops   map[string]int
	slept time.Duration // measured time actually spent in the injected delays
}

func newDelayCounter(next http.Handler) *delayCounter {
	return &delayCounter{next: next, ops: map[string]int{}}
}

func (d *delayCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/_bench/") {
		d.control(w, r)
		return
	}
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	var slept time.Duration
	if delay := time.Duration(d.delay.Load()); delay > 0 {
		start := time.Now()
		hold(delay)
		slept = time.Since(start)
	}
	d.mu.Lock()
	d.ops[op]++
	d.slept += slept
	d.mu.Unlock()
	d.next.ServeHTTP(w, r)
}

// counts is what the counter saw since its last reset.
type counts struct {
	Ops   map[string]int `json:"ops"`
	Slept time.Duration  `json:"slept"`
}

func (c counts) total() int {
	n := 0
	for _, v := range c.Ops {
		n += v
	}
	return n
}

func (d *delayCounter) snapshot() counts {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := counts{Ops: make(map[string]int, len(d.ops)), Slept: d.slept}
	for k, v := range d.ops {
		c.Ops[k] = v
	}
	return c
}

func (d *delayCounter) reset() {
	d.mu.Lock()
	d.ops = map[string]int{}
	d.slept = 0
	d.mu.Unlock()
}

func (d *delayCounter) control(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/_bench/delay":
		v, err := time.ParseDuration(r.URL.Query().Get("d"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.delay.Store(int64(v))
	case "/_bench/reset":
		d.reset()
	case "/_bench/counts":
		_ = json.NewEncoder(w).Encode(d.snapshot())
	default:
		http.NotFound(w, r)
	}
}

// newBackendHandler returns the named DynamoDB implementation.
func newBackendHandler(kind string) (http.Handler, error) {
	switch kind {
	case "memdyn":
		return memdyn.New(), nil
	case "minidyn":
		return miniserver.NewServer(), nil
	}
	return nil, fmt.Errorf("unknown backend %q (memdyn or minidyn)", kind)
}

// backend is the delayed DynamoDB the benchmark runs against: in this process, in a child
// process (so that its CPU time is not counted as the GraphQL server's), or an external endpoint
// that the benchmark does not control.
type backend struct {
	URL  string
	Kind string

	local   *delayCounter // in this process
	control string        // the child's base URL
	cmd     *exec.Cmd
	stdin   io.Closer
	srv     *http.Server
}

// startLocal serves the backend in this process on a loopback port.
func startLocal(kind string) (*backend, error) {
	h, err := newBackendHandler(kind)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	dc := newDelayCounter(h)
	srv := &http.Server{Handler: dc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &backend{URL: "http://" + ln.Addr().String(), Kind: kind, local: dc, srv: srv}, nil
}

// startSelf runs this binary with args in a child process (one that exits when its stdin
// closes) and returns it, its stdin and the first line it prints (where it listens).
func startSelf(what string, args ...string) (*exec.Cmd, io.WriteCloser, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, "", err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, "", err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, nil, "", fmt.Errorf("%s child: %w", what, err)
	}
	return cmd, stdin, line, nil
}

// startChild runs the backend in a child process (this binary with -serve-backend) and reads
// the URL it prints. The child exits when its stdin closes, so it does not outlive this process.
func startChild(kind string) (*backend, error) {
	cmd, stdin, line, err := startSelf("backend", "-serve-backend", "127.0.0.1:0", "-backend", kind, "-delay", "0")
	if err != nil {
		return nil, err
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "LISTEN "))
	return &backend{URL: url, Kind: kind, control: url, cmd: cmd, stdin: stdin}, nil
}

// childCPU returns the CPU time the child backend has used (0 when unknown or in-process).
func (b *backend) childCPU() time.Duration {
	if b.cmd == nil || b.cmd.Process == nil {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", b.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start after the last ')'.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// external uses an endpoint the benchmark neither delays nor counts.
func external(url string) *backend { return &backend{URL: url, Kind: "external"} }

// serveBackend is the child's main: serve, print the URL, exit when stdin closes. Run by hand
// (go run ./bench -serve-backend 127.0.0.1:8000 -delay 4ms), it is a delaying, counting
// DynamoDB for other tools; its counts are at /_bench/counts.
// heldProcs is the backend process's GOMAXPROCS (see serveBackend).
const heldProcs = 512

func serveBackend(addr, kind string, delay time.Duration) error {
	h, err := newBackendHandler(kind)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	dc := newDelayCounter(h)
	dc.delay.Store(int64(delay))
	// Every held request blocks a thread in nanosleep (hold), and a blocked thread keeps its P
	// until the runtime's monitor takes it back: with the default of one P per core, a fan-out
	// of fifty held requests would queue the backend's work behind them. The P count only
	// bounds Go code running at once; the two cores are shared all the same.
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), heldProcs))
	srv := &http.Server{Handler: dc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	if p := os.Getenv("BENCH_BACKEND_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("LISTEN http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return srv.Close()
}

func (b *backend) controlled() bool { return b.local != nil || b.control != "" }

func (b *backend) call(path string, out any) error {
	resp, err := http.Post(b.control+path, "text/plain", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("backend control %s: %s", path, body)
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// SetDelay sets the delay injected before every DynamoDB request.
func (b *backend) SetDelay(d time.Duration) error {
	switch {
	case b.local != nil:
		b.local.delay.Store(int64(d))
		return nil
	case b.control != "":
		return b.call("/_bench/delay?d="+d.String(), nil)
	}
	return nil
}

// Reset zeroes the request counts.
func (b *backend) Reset() error {
	switch {
	case b.local != nil:
		b.local.reset()
		return nil
	case b.control != "":
		return b.call("/_bench/reset", nil)
	}
	return nil
}

// Counts returns the requests seen since the last reset (empty for an external endpoint).
func (b *backend) Counts() (counts, error) {
	switch {
	case b.local != nil:
		return b.local.snapshot(), nil
	case b.control != "":
		var c counts
		err := b.call("/_bench/counts", &c)
		return c, err
	}
	return counts{Ops: map[string]int{}}, nil
}

// Close stops the backend.
func (b *backend) Close() error {
	if b.srv != nil {
		return b.srv.Close()
	}
	if b.cmd != nil {
		_ = b.stdin.Close()
		done := make(chan error, 1)
		go func() { done <- b.cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			_ = b.cmd.Process.Kill()
			return <-done
		}
	}
	return nil
}

// waitReady polls the backend until it answers.
func waitReady(ctx context.Context, url string) error {
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("backend %s not ready: %w", url, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
