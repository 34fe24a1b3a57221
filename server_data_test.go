package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capcat/catalogue/dynamo/dynamotest"
)

// postGraphQL sends query with key and decodes the response's data into out.
func postGraphQL(t *testing.T, base, key, query string, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%s = %v, %+v", query, err, r.Errors)
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		t.Fatal(err)
	}
}

// stop cancels a server started by startServer and waits for run to return nil.
func stop(t *testing.T, cancel context.CancelFunc, done chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after cancel = %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not shut down")
	}
}

// waitForFile polls path until it holds want, for at most a generous while.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q", path, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// copyDataFile copies a data file and its object bodies, as a crash would leave them.
func copyDataFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(to+".objects", 0o700); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from + ".objects")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from+".objects", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to+".objects", e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

type capabilityName struct {
	Capability struct {
		Name     string
		Revision int
	}
}

type jobArtifacts struct {
	Job struct {
		Artifacts []struct {
			Key          string
			Size         int
			LastModified string
		}
	}
}

const (
	nameQuery      = `{ capability(id: "CAP-ALERT-MGT-001") { name revision } }`
	artifactsQuery = `{ job(id: "JOB-DEPLOY-456") { artifacts { key size lastModified } } }`
)

func rename(t *testing.T, base, key string, revision int, name string) {
	t.Helper()
	var out json.RawMessage
	postGraphQL(t, base, key, fmt.Sprintf(`mutation { updateCapability(id: "CAP-ALERT-MGT-001", expectedRevision: %d, input: {name: %q}) { revision } }`,
		revision, name), &out)
}

// With -data the embedded default keeps its catalogue and objects across restarts: a write is
// in the file soon after, without a stop (what a kill -9 leaves), a clean stop saves the rest,
// and a restart loads the file instead of the sample.
func TestDataFileSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cat.jsonl")
	base, cancel, done, out := startServer(t, []string{"-data", path}, nil)
	banner := bannerOf(out)
	if !strings.Contains(banner, "data:        "+path+" (saved within 1 s of each write") || !strings.Contains(banner, "sample catalogue loaded") {
		t.Errorf("banner does not say where the data lives:\n%s", banner)
	}
	m := generatedKeyPattern.FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no generated key in the banner:\n%s", banner)
	}
	if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte(`"format":"capcat-catalogue-data"`)) {
		t.Fatalf("the data file was not written at start: %v", err)
	}
	var artifacts jobArtifacts
	postGraphQL(t, base, "", artifactsQuery, &artifacts)
	if len(artifacts.Job.Artifacts) == 0 {
		t.Fatal("the sample job has no artifacts")
	}

	rename(t, base, m[1], 1, "Saved Without A Stop")
	waitForFile(t, path, "Saved Without A Stop")
	crashed := filepath.Join(dir, "crashed.jsonl")
	copyDataFile(t, path, crashed)
	rename(t, base, m[1], 2, "Saved At The Stop")
	stop(t, cancel, done)
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("a temporary file is left: %v", err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("data file = %v, %v; want mode 0600", st, err)
	}

	for _, tt := range []struct {
		file, name string
		revision   int
	}{{path, "Saved At The Stop", 3}, {crashed, "Saved Without A Stop", 2}} {
		base, cancel, done, out := startServer(t, []string{"-data", tt.file}, nil)
		banner := bannerOf(out)
		if !strings.Contains(banner, "data file loaded") || strings.Contains(banner, "sample catalogue loaded") {
			t.Errorf("restart on %s: banner does not say it loaded the file (and only it):\n%s", tt.file, banner)
		}
		var got capabilityName
		postGraphQL(t, base, "", nameQuery, &got)
		if got.Capability.Name != tt.name || got.Capability.Revision != tt.revision {
			t.Errorf("after a restart on %s: %+v, want %q at revision %d", tt.file, got.Capability, tt.name, tt.revision)
		}
		var after jobArtifacts
		postGraphQL(t, base, "", artifactsQuery, &after)
		if a, b := mustJSON(t, after), mustJSON(t, artifacts); a != b {
			t.Errorf("artifacts after a restart = %s\nwant %s", a, b)
		}
		stop(t, cancel, done)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A data file that cannot be read refuses the start, naming the file and line, and is left as
// it was: the server never starts empty over it.
func TestDataFileCorruptRefusesStart(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, content, want string }{
		{"an export", `{"entityType":"Capability","revision":1,"createdAt":"2026-01-01T00:00:00.000000Z","updatedAt":"2026-01-01T00:00:00.000000Z","data":{}}` + "\n", "line 1: not a data file"},
		{"damaged", `{"format":"capcat-catalogue-data","version":1}` + "\n" + `{"item":{"PK":{"S":"CAPABILITY#X"},"SK":` + "\n", "line 2:"},
		{"cut short", `{"format":"capcat-catalogue-data","version":1}` + "\n" + `{"item":{"PK":{"S":"CAPABILITY#X"},"SK":{"S":"METADATA"}}}` + "\n", "cut short"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := run(ctx, []string{"-port", "0", "-host", "127.0.0.1", "-data", path}, func(string) string { return "" }, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run = %v, want an error naming %s and saying %q", err, path, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("the refused file was changed to %q", b)
			}
		})
	}
	if _, err := parseConfig([]string{"-data", "x.jsonl", "-dynamodb-endpoint", "http://127.0.0.1:8000"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Error("-data with -dynamodb-endpoint accepted")
	}
	if _, err := parseConfig([]string{"-aws"}, func(k string) string { return map[string]string{"DATA_FILE": "x.jsonl"}[k] }, io.Discard); err == nil {
		t.Error("DATA_FILE with -aws accepted")
	}
}

// `export` writes the catalogue; `import FILE -data D` loads it into a data file (created
// without the sample), and `export -data D` gives back the same bytes; a second import skips
// what is there already; a bad file writes nothing and says which line; `import -` reads
// standard input.
func TestExportImportCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	none := func(string) string { return "" }
	var exported, note bytes.Buffer
	if err := run(ctx, []string{"export", "-table", "ExportTest"}, none, &exported, &note); err != nil {
		t.Fatalf("export: %v\n%s", err, note.String())
	}
	if !strings.Contains(note.String(), "note: the embedded backend") || !bytes.HasPrefix(exported.Bytes(), []byte(`{"entityType":`)) {
		t.Fatalf("export printed %q on stdout and %q on stderr", firstLine(exported.String()), note.String())
	}
	backup := filepath.Join(dir, "backup.jsonl")
	if err := os.WriteFile(backup, exported.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	data := filepath.Join(dir, "cat.jsonl")
	var out strings.Builder
	if err := run(ctx, []string{"import", backup, "-data", data}, none, &out, io.Discard); err != nil {
		t.Fatalf("import: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "7 capabilities") {
		t.Errorf("import printed %q", out.String())
	}
	var again bytes.Buffer
	if err := run(ctx, []string{"export", "-data", data}, none, &again, io.Discard); err != nil {
		t.Fatalf("export -data: %v", err)
	}
	if !bytes.Equal(again.Bytes(), exported.Bytes()) {
		t.Errorf("export -data after import differs from the file imported (%d bytes against %d)", again.Len(), exported.Len())
	}
	out.Reset()
	if err := run(ctx, []string{"import", backup, "-data", data}, none, &out, io.Discard); err != nil || !strings.Contains(out.String(), "skipped") {
		t.Errorf("a second import = %v, printed %q; want everything skipped", err, out.String())
	}

	lines := strings.SplitAfter(exported.String(), "\n")
	lines[4] = strings.Replace(lines[4], `"revision":`, `"revision":-`, 1)
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.jsonl")
	err := run(ctx, []string{"import", bad, "-data", fresh}, none, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "line 5: revision") {
		t.Errorf("import of a bad file = %v, want an error naming line 5 and its revision", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a refused import created the data file: %v", err)
	}
	if err := run(ctx, []string{"export", "-data", filepath.Join(dir, "missing.jsonl")}, none, io.Discard, io.Discard); err == nil {
		t.Error("export of a missing data file accepted")
	}
	var help strings.Builder
	if err := run(ctx, []string{"export", "-h"}, none, io.Discard, &help); err != nil || !strings.Contains(help.String(), "archived to S3 are not") {
		t.Errorf("export -h = %v, %q; want the usage, saying archived metrics are not included", err, help.String())
	}

	env := dynamotest.New(t, dynamotest.Options{})
	out.Reset()
	cio := commandIO{stdin: bytes.NewReader(exported.Bytes()), stdout: &out, stderr: io.Discard}
	if err := runImport(ctx, []string{"-"}, cio, env.Store); err != nil || !strings.Contains(out.String(), "7 capabilities") {
		t.Errorf("import - = %v, printed %q", err, out.String())
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// A command's connection flags, -data and -create-table among them, go to the configuration
// wherever they stand; the rest is the command's.
func TestCommandArgs(t *testing.T) {
	args := []string{"backup.jsonl", "-create-table", "-table", "T", "-data=cat.jsonl", "-dynamodb-endpoint", "http://x", "-aws"}
	if got, want := fmt.Sprint(configArgs(args, true)), "[-create-table -table T -data=cat.jsonl -dynamodb-endpoint http://x -aws]"; got != want {
		t.Errorf("configArgs(%q) = %s, want %s", args, got, want)
	}
	if got, want := fmt.Sprint(archiveArgs(args)), "[backup.jsonl]"; got != want {
		t.Errorf("archiveArgs(%q) = %s, want %s", args, got, want)
	}
	if got := fmt.Sprint(archiveArgs([]string{"-", "-data", "cat.jsonl"})); got != "[-]" {
		t.Errorf("archiveArgs(- -data cat.jsonl) = %s, want [-]", got)
	}
}
