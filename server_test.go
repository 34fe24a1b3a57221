package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// syncBuffer collects what run prints, safe to read while run writes.
type lineWriter struct {
	lines chan string
	// listening is the banner's "listening on" line, once startWith has seen it.
	listening string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		select {
		case w.lines <- sc.Text():
		default:
		}
	}
	return len(p), nil
}

// startServer runs the embedded default on a free loopback port and returns its base URL.
func startServer(t *testing.T, args []string, env map[string]string) (string, context.CancelFunc, chan error, *lineWriter) {
	t.Helper()
	return startWith(t, append([]string{"-port", "0", "-host", "127.0.0.1"}, args...), env, io.Discard)
}

// startWith runs the server with exactly args, its log going to stderr, and returns the base
// URL of its banner once /healthz answers.
func startWith(t *testing.T, args []string, env map[string]string, stderr io.Writer) (string, context.CancelFunc, chan error, *lineWriter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lineWriter{lines: make(chan string, 1000)}
	getenv := func(k string) string { return env[k] }
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, getenv, out, stderr)
	}()
	re := regexp.MustCompile(`listening on (https?://\S+)`)
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line := <-out.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				base := m[1]
				out.listening = line
				if strings.HasPrefix(base, "http:") {
					waitHealthy(t, base)
				}
				t.Cleanup(cancel)
				return base, cancel, done, out
			}
		case err := <-done:
			cancel()
			t.Fatalf("run returned before listening: %v", err)
		case <-deadline:
			cancel()
			t.Fatal("server did not start in 60 s")
		}
	}
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	for range 100 {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("/healthz never answered 200")
}

func TestRunEmbeddedDefault(t *testing.T) {
	base, cancel, done, out := startServer(t, nil, nil)
	var banner []string
	for len(out.lines) > 0 {
		banner = append(banner, <-out.lines)
	}
	if !strings.Contains(strings.Join(banner, "\n"), "lost on exit") {
		t.Errorf("banner does not warn that data is lost on exit: %q", banner)
	}

	resp, err := http.Get(base + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz = %v, %v", resp, err)
	}
	resp.Body.Close()

	body := `{"query":"{ capability(id: \"CAP-ALERT-MGT-001\") { name components { componentId } } }"}`
	resp, err = http.Post(base+"/graphql", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out2 struct {
		Data struct {
			Capability struct {
				Name       string
				Components []struct{ ComponentID string }
			}
		}
		Extensions struct {
			DynamoDB struct{ Requests int }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out2); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if out2.Data.Capability.Name != "Alert Management" || len(out2.Data.Capability.Components) < 4 {
		t.Errorf("sample capability = %+v", out2.Data.Capability)
	}
	if out2.Extensions.DynamoDB.Requests != 2 {
		t.Errorf("extensions.dynamodb.requests = %d, want 2", out2.Extensions.DynamoDB.Requests)
	}

	resp, err = http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(string(page)), "graphiql") {
		t.Errorf("playground at / = %d", resp.StatusCode)
	}

	// GET runs queries, never mutations; multipart is not a transport.
	resp, err = http.Get(base + "/graphql?query=" + "%7B%20capability(id%3A%20%22CAP-ALERT-MGT-001%22)%20%7B%20name%20%7D%20%7D")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET query = %v, %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Post(base+"/graphql", "multipart/form-data; boundary=x", strings.NewReader("--x--"))
	if err == nil {
		if resp.StatusCode < 400 {
			t.Errorf("multipart POST answered %d, want a 4xx", resp.StatusCode)
		}
		resp.Body.Close()
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after cancel = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("run did not shut down")
	}
}

func TestParseConfig(t *testing.T) {
	env := map[string]string{"PORT": "9999", "TABLE_NAME": "Other", "DYNAMODB_ENDPOINT": "http://127.0.0.1:8000"}
	c, err := parseConfig([]string{"-seed"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.port != 9999 || c.table != "Other" || c.endpoint != "http://127.0.0.1:8000" || !c.seed || c.createTable || c.embedded() {
		t.Errorf("parseConfig = %+v", c)
	}
	c, err = parseConfig([]string{"-port", "1234", "-table", "T2"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || c.port != 1234 || c.table != "T2" {
		t.Errorf("flags do not override env: %+v, %v", c, err)
	}
	if _, err := parseConfig([]string{"-aws"}, func(k string) string { return env[k] }, io.Discard); err == nil {
		t.Error("-aws with DYNAMODB_ENDPOINT accepted")
	}
	c, _ = parseConfig(nil, func(string) string { return "" }, io.Discard)
	if !c.embedded() || c.port != 8080 || c.table != "BusinessCapabilitySystem" {
		t.Errorf("defaults = %+v", c)
	}
}

// `archive-metrics` runs the archive with progress output; against the embedded default it
// archives that process's own copy of the sample catalogue, and says so.
func TestArchiveMetricsCommand(t *testing.T) {
	var out strings.Builder
	before := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	err := run(context.Background(), []string{"archive-metrics", "-before", before, "-table", "ArchiveTest"}, func(string) string { return "" }, &out, io.Discard)
	if err != nil {
		t.Fatalf("archive-metrics: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"note: the embedded backend", "s3://capability-metrics/capabilities/CAP-ALERT-MGT-001/components/api-server-alert-001/"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if err := run(context.Background(), []string{"archive-metrics", "-before", "yesterday"}, func(string) string { return "" }, &out, io.Discard); err == nil {
		t.Error("archive-metrics -before yesterday accepted")
	}
}

// ARCHIVE_MIN_AGE at or beyond the metrics' retention is refused at start: samples would expire
// before they could be archived.
func TestArchiveMinAgeWithinRetention(t *testing.T) {
	for _, v := range []string{"2160h", "3000h"} {
		if _, err := parseConfig(nil, func(k string) string { return map[string]string{"ARCHIVE_MIN_AGE": v}[k] }, io.Discard); err == nil {
			t.Errorf("ARCHIVE_MIN_AGE=%s accepted", v)
		}
	}
	if _, err := parseConfig([]string{"-archive-min-age", "2159h"}, func(string) string { return "" }, io.Discard); err != nil {
		t.Errorf("-archive-min-age 2159h: %v", err)
	}
}

// `check` walks the whole table and reports; on the embedded default it checks its own fresh
// sample catalogue, which is consistent.
func TestCheckCommand(t *testing.T) {
	var out strings.Builder
	if err := run(context.Background(), []string{"check", "-table", "CheckTest"}, func(string) string { return "" }, &out, io.Discard); err != nil {
		t.Fatalf("check: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "0 findings") || !strings.Contains(out.String(), "note: the embedded backend") {
		t.Errorf("check printed:\n%s", out.String())
	}
	if err := run(context.Background(), []string{"check", "-repair", "extra"}, func(string) string { return "" }, &out, io.Discard); err == nil {
		t.Error("check with a stray argument accepted")
	}
}

// TestRunSubscriptionsAndShutdown: the server's WebSocket delivers a change written through
// its own API, and its graceful shutdown closes the socket with 1001 (going away) and returns.
func TestRunSubscriptionsAndShutdown(t *testing.T) {
	base, cancel, done, out := startServer(t, nil, nil)
	var key string
	for len(out.lines) > 0 {
		if _, k, ok := strings.Cut(<-out.lines, "Authorization: Bearer "); ok {
			key = strings.TrimSpace(k)
		}
	}
	if key == "" {
		t.Fatal("the banner shows no generated key")
	}
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/graphql", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	send := func(v any) {
		b, _ := json.Marshal(v)
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]any {
		_, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	send(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + key}})
	if m := read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v, want connection_ack", m)
	}
	// after: the capability's last change, so that the subscription misses nothing however
	// soon the write follows.
	post := func(q string) map[string]any {
		req, _ := http.NewRequest(http.MethodPost, base+"/graphql", strings.NewReader(q))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return v
	}
	post(`{"query":"mutation { createCapability(input: {capabilityId: \"CAP-RUN-SUBS\", name: \"S\", businessDomain: \"testing\", priority: HIGH}) { revision } }"}`)
	first := post(`{"query":"{ changes(capabilityId: \"CAP-RUN-SUBS\") { nodes { id } } }"}`)
	b, _ := json.Marshal(first)
	var firstOut struct {
		Data struct {
			Changes struct{ Nodes []struct{ ID string } }
		}
	}
	_ = json.Unmarshal(b, &firstOut)
	if len(firstOut.Data.Changes.Nodes) != 1 {
		t.Fatalf("changes = %s", b)
	}
	send(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription($a: String) { changes(capabilityId: "CAP-RUN-SUBS", after: $a) { action actor { name } } }`,
		"variables": map[string]any{"a": firstOut.Data.Changes.Nodes[0].ID}}})
	post(`{"query":"mutation { transitionCapability(id: \"CAP-RUN-SUBS\", to: DEVELOPMENT, expectedRevision: 1) { revision } }"}`)
	for {
		m := read()
		if m["type"] == "ping" {
			send(map[string]any{"type": "pong"})
			continue
		}
		if m["type"] != "next" || !strings.Contains(fmt.Sprint(m["payload"]), "TRANSITIONED") {
			t.Fatalf("got %v, want the transition", m)
		}
		break
	}
	cancel()
	_, _, err = conn.Read(ctx)
	if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
		t.Errorf("at shutdown the socket closed with %v (%v), want 1001", code, err)
	}
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
}
