package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	samplecat "github.com/capcat/catalogue/sample"
)

// The PostGraphile comparison (issue #17): PostGraphile 4 over a throwaway PostgreSQL 15 cluster
// loaded with the sample catalogue as a relational schema (pgdata.go), beside the embedded
// default as the embedded section builds it (startEmbedded), both answering the same logical
// operations over loopback HTTP to the same Go client, measured interleaved in rounds so that
// the machine's load hits both alike. Before anything is measured, both servers' answers are
// normalised and compared; the run fails if they differ.

// pgConfig is the section's part of the command line.
type pgConfig struct {
	enabled bool
	only    bool
	dir     string // bench/postgraphile: package.json, node_modules
	bin     string // PostgreSQL's bin directory ("": found)
	n1, n16 int    // runs per operation, server and mode at concurrency 1 and 16 (over all rounds)
	rounds  int
}

func registerPGFlags(fs *flag.FlagSet, c *pgConfig) {
	*c = pgConfig{enabled: true, dir: filepath.Join("bench", "postgraphile"), n1: 200, n16: 800, rounds: 4}
	fs.BoolVar(&c.enabled, "postgraphile", c.enabled, "measure the embedded default beside PostGraphile 4 over PostgreSQL when both are installed (bench/postgraphile/install.sh); otherwise the section says it was not measured")
	fs.BoolVar(&c.only, "postgraphile-only", false, "measure the PostGraphile comparison only and replace its section of -out (the rest of the file stays as it is); fails when PostgreSQL or PostGraphile is missing")
	fs.StringVar(&c.dir, "postgraphile-dir", c.dir, "the directory of PostGraphile's package.json and node_modules")
	fs.StringVar(&c.bin, "pg-bin", "", "PostgreSQL's bin directory (initdb, postgres, psql); empty: /usr/lib/postgresql/15/bin, else the newest /usr/lib/postgresql/*/bin, else pg_config --bindir")
	fs.IntVar(&c.n1, "pg-n1", c.n1, "runs per operation, server and mode at concurrency 1 in the PostGraphile comparison (over all rounds)")
	fs.IntVar(&c.n16, "pg-n16", c.n16, "runs per operation, server and mode at concurrency 16 in the PostGraphile comparison (over all rounds)")
	fs.IntVar(&c.rounds, "pg-rounds", c.rounds, "rounds of the PostGraphile comparison: each measures every server and mode, alternating which goes first")
}

const pgHeading = "## Beside PostGraphile on PostgreSQL\n"

const pgInstallHint = "install them with `bash bench/postgraphile/install.sh` (PostgreSQL 15 from apt when missing, PostGraphile 4 with `npm ci`) and run `go run ./bench -postgraphile-only`"

// pgTools are the programs the comparison runs.
type pgTools struct {
	bin          string // initdb, postgres, psql
	postgraphile string // node_modules/.bin/postgraphile
	dir          string
}

// findPGTools returns the programs, or an error saying what is missing.
func findPGTools(c pgConfig) (*pgTools, error) {
	bin := c.bin
	if bin == "" {
		bin = "/usr/lib/postgresql/15/bin"
		if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
			dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
			slices.SortFunc(dirs, func(a, b string) int { return pgMajor(b) - pgMajor(a) })
			bin = ""
			if len(dirs) > 0 {
				bin = dirs[0]
			} else if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
				bin = strings.TrimSpace(string(out))
			}
		}
	}
	var missing []string
	for _, p := range []string{"initdb", "postgres", "psql"} {
		if _, err := os.Stat(filepath.Join(bin, p)); bin == "" || err != nil {
			if p == "psql" {
				if _, err := exec.LookPath("psql"); err == nil {
					continue
				}
			}
			missing = append(missing, "PostgreSQL's "+p)
		}
	}
	pg := filepath.Join(c.dir, "node_modules", ".bin", "postgraphile")
	if _, err := os.Stat(pg); err != nil {
		missing = append(missing, "PostGraphile ("+pg+")")
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing = append(missing, "node")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s not installed", strings.Join(missing, ", "))
	}
	abs, err := filepath.Abs(c.dir)
	if err != nil {
		return nil, err
	}
	return &pgTools{bin: bin, postgraphile: filepath.Join(abs, "node_modules", ".bin", "postgraphile"), dir: abs}, nil
}

func pgMajor(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func (t *pgTools) psql() string {
	if p := filepath.Join(t.bin, "psql"); fileExists(p) {
		return p
	}
	return "psql"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// pgStack is a running PostgreSQL cluster and PostGraphile over it.
type pgStack struct {
	tmp            string
	pgPort, gqPort int
	postgres, node *exec.Cmd
	url            string // PostGraphile's /graphql
	client         *http.Client
	versions       string
	log            bytes.Buffer // their output, shown when something fails
	logMu          sync.Mutex
}

func (s *pgStack) Write(p []byte) (int, error) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.Write(p)
}

func (s *pgStack) output() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	out := s.log.String()
	if len(out) > 3000 {
		out = "…" + out[len(out)-3000:]
	}
	return out
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startPG makes a throwaway cluster in a temporary directory (owned by the user it runs as),
// starts postgres on a free loopback port and a socket in that directory, loads sql with psql and
// starts PostGraphile over it. fsync, synchronous_commit and full_page_writes are off: the
// cluster is thrown away, and the reads measured do not touch the disk; the writes between
// "after a write" reads commit without waiting for it. The returned stack's close stops
// everything and removes the directory.
func startPG(ctx context.Context, t *pgTools, sql string, logf func(string, ...any)) (_ *pgStack, err error) {
	owner, err := pgRunAs()
	if err != nil {
		return nil, fmt.Errorf("the user to run PostgreSQL as: %w", err)
	}
	s := &pgStack{}
	defer func() {
		if err != nil {
			if out := s.output(); out != "" {
				err = fmt.Errorf("%w\n--- PostgreSQL and PostGraphile said:\n%s", err, out)
			}
			s.close()
		}
	}()
	if s.tmp, err = os.MkdirTemp("", "bench-pg-"); err != nil {
		return nil, err
	}
	data := filepath.Join(s.tmp, "data")
	if owner != nil {
		if err := os.Chown(s.tmp, int(owner.uid), int(owner.gid)); err != nil {
			return nil, err
		}
	}
	run := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, name, args...)
		pgProcAttr(cmd, owner)
		cmd.Dir = s.tmp
		cmd.Stdout, cmd.Stderr = s, s
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		return nil
	}
	if err := run(filepath.Join(t.bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return nil, err
	}
	if s.pgPort, err = freePort(); err != nil {
		return nil, err
	}
	s.postgres = exec.Command(filepath.Join(t.bin, "postgres"), "-D", data, "-p", strconv.Itoa(s.pgPort), "-k", s.tmp,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=50", "-c", "shared_buffers=128MB")
	pgProcAttr(s.postgres, owner)
	s.postgres.Dir = s.tmp
	s.postgres.Stdout, s.postgres.Stderr = s, s
	if err := s.postgres.Start(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	psql := func(stdin string, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, t.psql(), append([]string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(s.pgPort), "-U", "postgres", "-d", "postgres"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil {
			return out, fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(errb.String()))
		}
		return out, nil
	}
	for i := 0; ; i++ {
		if _, err = psql("", "-c", "SELECT 1"); err == nil {
			break
		}
		if i == 100 {
			return nil, fmt.Errorf("postgres did not accept connections: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if _, err := psql(sql, "-f", "-"); err != nil {
		return nil, fmt.Errorf("loading the catalogue: %w", err)
	}
	pgv, _ := exec.Command(filepath.Join(t.bin, "postgres"), "--version").Output()
	gqv := "?"
	if raw, err := os.ReadFile(filepath.Join(t.dir, "node_modules", "postgraphile", "package.json")); err == nil {
		var pkg struct{ Version string }
		_ = json.Unmarshal(raw, &pkg)
		gqv = pkg.Version
	}
	nodev, _ := exec.Command("node", "--version").Output()
	s.versions = fmt.Sprintf("%s, PostGraphile %s on Node.js %s", strings.TrimSpace(string(pgv)), gqv, strings.TrimSpace(string(nodev)))
	if s.gqPort, err = freePort(); err != nil {
		return nil, err
	}
	s.node = exec.Command(t.postgraphile, pgPostGraphileArgs(s.pgPort, s.gqPort)...)
	pgProcAttr(s.node, nil)
	s.node.Dir = t.dir
	s.node.Env = append(os.Environ(), "NODE_ENV=production")
	s.node.Stdout, s.node.Stderr = s, s
	if err := s.node.Start(); err != nil {
		return nil, fmt.Errorf("postgraphile: %w", err)
	}
	s.url = fmt.Sprintf("http://127.0.0.1:%d/graphql", s.gqPort)
	tr := &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}
	s.client = &http.Client{Transport: tr}
	for i := 0; ; i++ {
		a, err := s.post(ctx, []byte(`{"query":"{ __typename }"}`))
		if err == nil && a.status == http.StatusOK {
			break
		}
		if i == 300 {
			return nil, fmt.Errorf("PostGraphile did not answer on %s: %v", s.url, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	logf("postgraphile: %s; PostgreSQL on 127.0.0.1:%d, PostGraphile on %s", s.versions, s.pgPort, s.url)
	return s, nil
}

// pgPostGraphileArgs are PostGraphile's options: as a team runs it in production (no watch, no
// GraphiQL, no query log), jsonb as JSON (--dynamic-json), the simplify inflector for the
// natural field names, connections only.
func pgPostGraphileArgs(pgPort, port int) []string {
	return []string{
		"-c", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres", pgPort),
		"--schema", "public", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--disable-query-log", "--disable-graphiql", "--dynamic-json", "--no-setof-functions-contain-nulls",
		"--append-plugins", "@graphile-contrib/pg-simplify-inflector",
	}
}

// close stops PostGraphile and PostgreSQL (a fast shutdown, then a kill) and removes the
// temporary directory.
func (s *pgStack) close() {
	stop := func(cmd *exec.Cmd, sig syscall.Signal) {
		if cmd == nil || cmd.Process == nil {
			return
		}
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		pgSignalGroup(cmd.Process.Pid, sig)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			pgSignalGroup(cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	stop(s.node, syscall.SIGTERM)
	stop(s.postgres, syscall.SIGINT) // postgres: SIGINT is the fast shutdown
	if s.client != nil {
		s.client.CloseIdleConnections()
	}
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp)
	}
}

func (s *pgStack) post(ctx context.Context, body []byte) (embAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return embAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return embAnswer{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return embAnswer{status: resp.StatusCode, body: out}, err
}

// cpu returns the CPU time PostGraphile's node process and the PostgreSQL processes (the
// postmaster, its live children and the children it has reaped) have used, from /proc.
func (s *pgStack) cpu() time.Duration {
	var ticks int64
	ticks += procTicks(s.node.Process.Pid, false)
	pm := s.postgres.Process.Pid
	ticks += procTicks(pm, true)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pm {
			continue
		}
		if procParent(pid) == pm {
			ticks += procTicks(pid, false)
		}
	}
	return time.Duration(ticks) * time.Second / pgTicks
}

// procStat returns the fields of /proc/pid/stat after the command name.
func procStat(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(raw[i+1:]))
}

// procTicks is utime+stime of pid (and cutime+cstime, its reaped children, with children).
func procTicks(pid int, children bool) int64 {
	f := procStat(pid)
	if len(f) < 15 {
		return 0
	}
	// After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	t := n(11) + n(12)
	if children {
		t += n(13) + n(14)
	}
	return t
}

func procParent(pid int) int {
	f := procStat(pid)
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

// pgRow is one server and mode of one operation.
type pgRow struct {
	Server, Mode   string
	P50C1, P99C1   time.Duration
	Throughput     float64 // at concurrency 16
	P50C16, P99C16 time.Duration
	Errors         int           // at concurrency 16: failed requests (status, errors in the answer, transport)
	CPU            time.Duration // server CPU per operation at concurrency 16 (ours: estimated, see write)
	ProcessCPU     time.Duration // this process's CPU per operation at concurrency 16
	Runs1, Runs16  int
	lat1, lat16    []time.Duration
	wall16         time.Duration
	cpuTotal       time.Duration // the server's (PostGraphile) or this process's (ours) over the C=16 passes
	ops16          int
}

// pgOpReport is one operation's rows.
type pgOpReport struct {
	Name string
	Rows []*pgRow // ours warm, ours after a write, PostGraphile, PostGraphile after a write
}

// pgReport is the section.
type pgReport struct {
	Missing               string // why it was not measured ("": it was)
	Versions              string
	Counts                [4]int // capabilities, components, dependencies, rules loaded
	Ops                   []*pgOpReport
	Rounds                int
	LoadBefore, LoadAfter string
	CacheNote             string
	Command               string
	At                    time.Time
}

// pgSide is one server in one mode as the measurement drives it.
type pgSide struct {
	server, mode string
	// one sends one timed request; write is the untimed write before it (nil: none).
	one   func(ctx context.Context) error
	write func(ctx context.Context) error
	// cpu is the server's cumulative CPU (nil: this process's, less the client's share).
	cpu func() time.Duration
}

// measurePostGraphile starts both servers, compares their answers and measures them.
func measurePostGraphile(ctx context.Context, cfg config, logf func(string, ...any)) (*pgReport, error) {
	tools, err := findPGTools(cfg.pg)
	if err != nil {
		return nil, err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := &pgReport{LoadBefore: loadAverage(), Rounds: max(cfg.pg.rounds, 1), CacheNote: cacheNote(cfg.cacheBytes)}
	e, _, bundles, err := startEmbedded(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("embedded default: %w", err)
	}
	defer e.close()
	for _, b := range bundles {
		rep.Counts[0]++
		rep.Counts[1] += len(b.Components)
		rep.Counts[2] += len(b.Dependencies)
		rep.Counts[3] += len(b.Rules)
	}
	// The same catalogue: samplecat.Catalogue is deterministic but for its clock, and the
	// fields compared do not depend on it; the comparison below proves it.
	pg, err := startPG(ctx, tools, pgSQL(samplecat.Catalogue(time.Now())), logf)
	if err != nil {
		return nil, err
	}
	defer pg.close()
	rep.Versions = pg.versions
	id := bundles[0].Capability.CapabilityID
	body := func(q string, vars map[string]any) []byte {
		b, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		return b
	}
	type op struct {
		name     string
		ours, pg []byte
		shape    *pgEntity
		touch    string
	}
	ops := []op{
		{name: "trivial", ours: body(trivialQuery, nil), pg: body(trivialQuery, nil)},
		{name: "complete view", ours: body(completeViewQuery, map[string]any{"id": id}), pg: body(pgCompleteViewQuery, map[string]any{"id": id}), shape: &pgViewShape, touch: id},
		{name: "list all", ours: body(listAllQuery, nil), pg: body(pgListAllQuery, nil), shape: &pgListShape, touch: id},
	}
	// Both answer identical data, or nothing is measured.
	for _, o := range ops {
		a, err := e.post(ctx, o.ours)
		if err != nil {
			return nil, err
		}
		b, err := pg.post(ctx, o.pg)
		if err != nil {
			return nil, err
		}
		if a.status != http.StatusOK || b.status != http.StatusOK {
			return nil, fmt.Errorf("%s: status %d (ours) and %d (PostGraphile): %.400s %.400s", o.name, a.status, b.status, a.body, b.body)
		}
		if o.shape == nil {
			var x, y struct{ Data json.RawMessage }
			if json.Unmarshal(a.body, &x) != nil || json.Unmarshal(b.body, &y) != nil || !bytes.Equal(x.Data, y.Data) {
				return nil, fmt.Errorf("%s: ours %s, PostGraphile %s", o.name, a.body, b.body)
			}
			continue
		}
		diff, err := pgCompare(a.body, b.body, *o.shape)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
		if diff != "" {
			return nil, fmt.Errorf("%s: THE SERVERS' ANSWERS DIFFER: %s", o.name, diff)
		}
		lines, _ := pgNormalise(a.body, *o.shape, false)
		logf("postgraphile: %s: both answers carry the same %d objects", o.name, len(lines))
	}
	client := &pgClientCPU{}
	var touches atomic.Int64
	var pgWriteMu sync.Mutex
	for _, o := range ops {
		ourOp := &embOp{name: o.name, bodies: [][]byte{o.ours}}
		oursOne := func(ctx context.Context) error {
			_, _, late, err := e.runOnce(ctx, ourOp, 10*time.Second)
			if err == nil && late {
				err = errors.New("past the deadline")
			}
			return err
		}
		pgOne := func(ctx context.Context) error { return pgCheck(pg.post(ctx, o.pg)) }
		sides := []*pgSide{{server: "ours", mode: "warm", one: oursOne}}
		if o.touch != "" {
			sides = append(sides, &pgSide{server: "ours", mode: "after a write", one: oursOne, write: func(ctx context.Context) error { return e.touch(ctx, o.touch) }})
		}
		pgCPU := pg.cpu
		sides = append(sides, &pgSide{server: "PostGraphile", mode: "warm", one: pgOne, cpu: pgCPU})
		if o.touch != "" {
			sides = append(sides, &pgSide{server: "PostGraphile", mode: "after a write", one: pgOne, cpu: pgCPU, write: func(ctx context.Context) error {
				// One write at a time, as ours' client sends them (each needs the revision the
				// last one returned), so both servers see the same stream of writes.
				pgWriteMu.Lock()
				defer pgWriteMu.Unlock()
				n := touches.Add(1)
				return pgCheck(pg.post(ctx, body(pgTouchMutation, map[string]any{"id": o.touch, "d": fmt.Sprintf("touched by the benchmark, %d", n)})))
			}})
		}
		or := &pgOpReport{Name: o.name}
		for _, sd := range sides {
			or.Rows = append(or.Rows, &pgRow{Server: sd.server, Mode: sd.mode})
		}
		// Warm both up, then the rounds: every side at C=1 and at C=16, the order reversed every
		// other round.
		for _, sd := range sides {
			if _, _, _, err := pgDrive(ctx, max(cfg.warm, 16), 4, sd); err != nil {
				return nil, fmt.Errorf("%s, %s %s: %w", o.name, sd.server, sd.mode, err)
			}
		}
		n1, n16 := max(cfg.pg.n1/rep.Rounds, 1), max(cfg.pg.n16/rep.Rounds, 16)
		for round := range rep.Rounds {
			order := make([]int, len(sides))
			for i := range order {
				order[i] = i
			}
			if round%2 == 1 {
				slices.Reverse(order)
			}
			for _, i := range order {
				sd, row := sides[i], or.Rows[i]
				n1, n16 := n1, n16
				if sd.write != nil {
					n1, n16 = max(n1/2, 1), max(n16/2, 16)
				}
				lats, errs, _, err := pgDrive(ctx, n1, 1, sd)
				if err != nil {
					return nil, err
				}
				if errs > 0 {
					return nil, fmt.Errorf("%s, %s %s at concurrency 1: %d errors", o.name, sd.server, sd.mode, errs)
				}
				row.lat1 = append(row.lat1, lats...)
				cpu0, proc0 := pgSideCPU(sd), processCPU()
				lats, errs, wall, err := pgDrive(ctx, n16, 16, sd)
				if err != nil {
					return nil, err
				}
				cpu1, proc1 := pgSideCPU(sd), processCPU()
				row.lat16 = append(row.lat16, lats...)
				row.Errors += errs
				row.wall16 += wall
				row.ops16 += n16
				if sd.cpu != nil {
					row.cpuTotal += cpu1 - cpu0
					client.add(o.name, sd.mode, proc1-proc0, n16) // this process is only the client then
				} else {
					row.cpuTotal += proc1 - proc0 // the server, memdyn and the client
				}
			}
		}
		for _, row := range or.Rows {
			row.P50C1, row.P99C1, row.Runs1 = percentile(row.lat1, 0.5), percentile(row.lat1, 0.99), len(row.lat1)
			row.P50C16, row.P99C16, row.Runs16 = percentile(row.lat16, 0.5), percentile(row.lat16, 0.99), row.ops16
			if row.wall16 > 0 {
				row.Throughput = float64(row.ops16) / row.wall16.Seconds()
			}
			if row.ops16 > 0 {
				per := row.cpuTotal / time.Duration(row.ops16)
				if row.Server == "ours" {
					// This process: the server, memdyn and the client. Less the client's share:
					// what this process spent per run of the same operation and mode while it
					// only drove PostGraphile.
					row.ProcessCPU = per
					per -= client.per(o.name, row.Mode)
				} else {
					row.ProcessCPU = client.per(o.name, row.Mode)
				}
				row.CPU = max(per, 0)
			}
			logf("postgraphile: %-13s %-12s %-13s p50 C=1 %7.2f ms  p99 %7.2f  C=16 %7.0f/s p50 %7.2f p99 %7.2f  errors %d  CPU %5.0f µs",
				o.name, row.Server, row.Mode, ms(row.P50C1), ms(row.P99C1), row.Throughput, ms(row.P50C16), ms(row.P99C16), row.Errors, us(row.CPU))
		}
		rep.Ops = append(rep.Ops, or)
	}
	rep.LoadAfter = loadAverage()
	return rep, nil
}

// pgClientCPU is the client's CPU per run while it drove PostGraphile, per operation and mode.
type pgClientCPU struct {
	cpu map[string]time.Duration
	n   map[string]int
}

func (c *pgClientCPU) add(op, mode string, d time.Duration, n int) {
	if c.cpu == nil {
		c.cpu, c.n = map[string]time.Duration{}, map[string]int{}
	}
	c.cpu[op+"/"+mode] += d
	c.n[op+"/"+mode] += n
}

func (c *pgClientCPU) per(op, mode string) time.Duration {
	if n := c.n[op+"/"+mode]; n > 0 {
		return c.cpu[op+"/"+mode] / time.Duration(n)
	}
	return 0
}

func pgSideCPU(sd *pgSide) time.Duration {
	if sd.cpu != nil {
		return sd.cpu()
	}
	return 0
}

// pgCheck turns an answer into an error unless it is a 200 without errors.
func pgCheck(a embAnswer, err error) error {
	if err != nil {
		return err
	}
	if a.status != http.StatusOK || bytes.Contains(a.body, []byte(`"errors":[`)) {
		return fmt.Errorf("status %d: %.400s", a.status, a.body)
	}
	return nil
}

// pgDrive runs n of the side's operations on c workers: its write (untimed) then its timed
// request. It returns the latencies of those that succeeded, how many failed, and the wall time.
// A failed write fails the run.
func pgDrive(ctx context.Context, n, c int, sd *pgSide) ([]time.Duration, int, time.Duration, error) {
	var next atomic.Int64
	var mu sync.Mutex
	var lats []time.Duration
	var errs int
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range max(min(c, n), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for int(next.Add(1)) <= n {
				if ctx.Err() != nil {
					return
				}
				if sd.write != nil {
					if err := sd.write(ctx); err != nil {
						mu.Lock()
						firstErr = cmp(firstErr, fmt.Errorf("the write before the read: %w", err))
						mu.Unlock()
						return
					}
				}
				t := time.Now()
				err := sd.one(ctx)
				lat := time.Since(t)
				mu.Lock()
				if err != nil {
					errs++
				} else {
					lats = append(lats, lat)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return lats, errs, wall, firstErr
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// postgraphileOnly runs the section alone (-postgraphile-only).
func postgraphileOnly(cfg config, command, out string, stdout, stderr io.Writer) error {
	return sectionOnly(sectionRun[*pgReport]{
		name: "postgraphile", heading: pgHeading, out: out, stdout: stdout, stderr: stderr,
		measure: func(logf func(string, ...any)) (*pgReport, error) {
			rep, err := measurePostGraphile(context.Background(), cfg, logf)
			if err == nil {
				rep.Command, rep.At = command, time.Now()
			}
			return rep, err
		},
		write:  func(r *pgReport, p func(string, ...any)) { r.write(p) },
		failed: func(*pgReport) error { return nil },
	})
}

// pgSection is the full run's section: measured when PostgreSQL and PostGraphile are
// installed, else a report saying why not.
func pgSection(ctx context.Context, cfg config, logf func(string, ...any)) (*pgReport, error) {
	if _, err := findPGTools(cfg.pg); err != nil {
		logf("postgraphile: not measured: %v", err)
		return &pgReport{Missing: err.Error()}, nil
	}
	return measurePostGraphile(ctx, cfg, logf)
}

// write writes the section.
func (r *pgReport) write(p func(string, ...any)) {
	if r == nil {
		return
	}
	p("%s", strings.TrimSuffix(pgHeading, "\n"))
	p("")
	if r.Missing != "" {
		p("Not measured: %s; %s.", r.Missing, pgInstallHint)
		p("")
		return
	}
	if r.Command != "" {
		p("Measured by `%s` (%s UTC); the other sections are from the full run.", r.Command, r.At.UTC().Format("2006-01-02 15:04"))
		p("")
	}
	p("What a team might pick instead (issue #17): **PostGraphile 4 over a local PostgreSQL**, %s, beside the embedded default as its own section builds it (memdyn in this process, the sample catalogue). %s. Machine: %s. Load average before and after the section: %s / %s (the machine is shared: other work shows in every timing, alike for both servers).",
		r.Versions, r.CacheNote, machine(), r.LoadBefore, r.LoadAfter)
	p("")
	p("PostgreSQL is a throwaway cluster (initdb into a temporary directory, as the user postgres when the benchmark runs as root; fsync, synchronous_commit and full_page_writes off: it is thrown away, and the reads do not touch the disk) loaded with the same sample catalogue as the relational schema a team would write (bench/pgdata.go: capability, component, dependency and rule tables, foreign keys to the capability and from a dependency to its source and target components, an index on every foreign key, the nested objects as jsonb): %d capabilities, %d components, %d dependencies, %d rules. PostGraphile runs as in production: no watch, no GraphiQL, no query log, `--dynamic-json`, the simplify inflector, one Node.js process. Before measuring, both servers' answers to each operation were normalised (every capability, component, dependency and rule with every field both queries ask) and found equal; the run fails if they differ.",
		r.Counts[0], r.Counts[1], r.Counts[2], r.Counts[3])
	p("")
	p("Both over loopback HTTP from the same Go client in this process, interleaved: %d rounds, each measuring every server and mode at concurrency 1 then 16, the order reversed every other round; the latencies are pooled over the rounds. **After a write**: each run first sends an untimed write to the capability read (ours: `updateCapability` of its description, which bumps its WriteSeq, so the partition cache and the read memo miss; PostGraphile: its own `updateCapability` mutation of the same row), as in the embedded default's cold rows; the write's CPU is in the CPU columns, and at concurrency 16 the ops/s count write-then-read pairs (the client sends the writes one at a time to both servers: ours needs the revision the last one returned, as in the embedded section, and PostGraphile's are serialised alike so that both see the same stream of writes), so fewer reads overlap and their p50 can fall below the warm one's. **CPU per operation** (over the concurrency-16 passes): PostGraphile's server CPU is its node process's plus every PostgreSQL process's (postmaster, backends, the children it reaped), from /proc, and this process's is then the client alone (and this process's idle background work); ours runs in this process with memdyn and the client, so its server CPU (≈) is this process's CPU less this process's per run of the same operation and mode while it drove PostGraphile: an estimate (the answers differ in size; background work is spread over a different wall time), 0 when the difference is below the noise.", r.Rounds)
	p("")
	for _, o := range r.Ops {
		p("**%s**", o.Name)
		p("")
		p("| server | mode | p50 C=1 ms | p99 C=1 ms | ops/s C=16 | p50 C=16 ms | p99 C=16 ms | errors C=16 | server CPU µs/op | this process's CPU µs/op | runs C=1 / C=16 |")
		p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, x := range o.Rows {
			cpu := fmt.Sprintf("%.0f", us(x.CPU))
			if x.Server == "ours" {
				cpu = "≈ " + cpu
			}
			p("| %s | %s | %.2f | %.2f | %.0f | %.2f | %.2f | %d | %s | %.0f | %d / %d |", x.Server, x.Mode, ms(x.P50C1), ms(x.P99C1), x.Throughput, ms(x.P50C16), ms(x.P99C16), x.Errors, cpu, us(x.ProcessCPU), x.Runs1, x.Runs16)
		}
		for _, mode := range []string{"warm", "after a write"} {
			a, b := o.row("ours", mode), o.row("PostGraphile", mode)
			if a == nil || b == nil || a.P50C1 == 0 || b.Throughput == 0 {
				continue
			}
			cpu := "–"
			if b.CPU > 0 {
				cpu = fmt.Sprintf("%.2f", float64(a.CPU)/float64(b.CPU))
			}
			p("| **ours ÷ PostGraphile** | %s | %.2f× | %.2f× | %.2f× | %.2f× | %.2f× | | %s× | | |", mode, durRatio(a.P50C1, b.P50C1), durRatio(a.P99C1, b.P99C1),
				a.Throughput/b.Throughput, durRatio(a.P50C16, b.P50C16), durRatio(a.P99C16, b.P99C16), cpu)
		}
		p("")
	}
	p("Latency ratios below 1× and a throughput ratio above 1× are ours ahead. What each server is asked: ours the queries of the section above (trivial, complete view, list all); PostGraphile `%s`, `%s` and `%s` (bench/pgdata.go), the same objects and fields in its schema's names.",
		"{ __typename }", "capability(id) { … components, dependencies { sourceComponent, targetComponent }, rules }", "capabilities(first: 50) { nodes { … components, dependencies, rules } }")
	p("")
}

func (o *pgOpReport) row(server, mode string) *pgRow {
	for _, x := range o.Rows {
		if x.Server == server && x.Mode == mode {
			return x
		}
	}
	return nil
}

func durRatio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
