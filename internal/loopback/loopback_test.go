package loopback

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

// The embedded backends answer only their own process: requests addressed to their loopback
// address, signed with their key (presigned URLs only read or only put), and never with CORS
// headers, so that neither another local user nor a web page (DNS rebinding, or a cross-origin
// fetch to 127.0.0.1) can read or change the embedded data.
func TestGuard(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Allow-Methods", "PUT, DELETE")
		_, _ = w.Write([]byte("ok"))
	})
	s, err := Serve(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	signed := "AWS4-HMAC-SHA256 Credential=" + s.Key + "/20261201/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x"
	tests := []struct {
		name, method, query, host, auth string
		status                          int
	}{
		{"signed", "POST", "", "", signed, 200},
		{"signed, localhost", "POST", "", "localhost", signed, 200},
		{"unsigned", "POST", "", "", "", 403},
		{"another key", "POST", "", "", "AWS4-HMAC-SHA256 Credential=local/20261201/us-east-1/dynamodb/aws4_request", 403},
		{"rebinding host", "POST", "", "evil.example.com", signed, 403},
		{"preflight", "OPTIONS", "", "", signed, 403},
		{"presigned read", "GET", "X-Amz-Credential=" + s.PresignKey + "%2F20261201%2Fus-east-1%2Fs3%2Faws4_request", "", "", 200},
		{"presigned read key cannot put", "PUT", "X-Amz-Credential=" + s.PresignKey + "%2F20261201%2Fus-east-1%2Fs3%2Faws4_request", "", "", 403},
		{"presigned upload", "PUT", "X-Amz-Credential=" + s.UploadKey + "%2F20261201%2Fus-east-1%2Fs3%2Faws4_request", "", "", 200},
		{"presigned upload key cannot delete", "DELETE", "X-Amz-Credential=" + s.UploadKey + "%2F20261201%2Fus-east-1%2Fs3%2Faws4_request", "", "", 403},
		{"presigned upload key cannot read", "GET", "X-Amz-Credential=" + s.UploadKey + "%2F20261201%2Fus-east-1%2Fs3%2Faws4_request", "", "", 403},
	}
	// Over the port, and in process through Do: the same guard.
	clients := map[string]interface {
		Do(*http.Request) (*http.Response, error)
	}{"port": http.DefaultClient, "in process": s}
	for via, client := range clients {
		for _, tt := range tests {
			t.Run(via+"/"+tt.name, func(t *testing.T) {
				url := s.URL + "/bucket/key"
				if tt.query != "" {
					url += "?" + tt.query
				}
				req, _ := http.NewRequest(tt.method, url, nil)
				if tt.host != "" {
					req.Host = tt.host + url[len("http://127.0.0.1"):len(s.URL)]
				}
				if tt.auth != "" {
					req.Header.Set("Authorization", tt.auth)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Errorf("%s %s = %d, want %d", tt.method, tt.name, resp.StatusCode, tt.status)
				}
				for k := range resp.Header {
					if len(k) > 15 && k[:15] == "Access-Control-" {
						t.Errorf("response carries %s", k)
					}
				}
			})
		}
	}
}

// Do serves in process through the wrap (the -data file's write hooks), answers with what the
// handler wrote, does not serve a request whose context is done, and turns a panic into an
// error.
func TestDoInProcess(t *testing.T) {
	var wrapped atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Panic") != "" {
			panic("boom")
		}
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("got " + string(body)))
	})
	s, err := Serve(h, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			wrapped.Add(1)
			next.ServeHTTP(w, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := func(ctx context.Context, panics bool) *http.Request {
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/", strings.NewReader("hello"))
		r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+s.Key+"/20261201/us-east-1/dynamodb/aws4_request")
		if panics {
			r.Header.Set("X-Panic", "1")
		}
		return r
	}
	resp, err := s.Do(req(context.Background(), false))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTeapot || string(body) != "got hello" || resp.ContentLength != 9 || resp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("Do = %d %q (length %d, %q), want 418 \"got hello\"", resp.StatusCode, body, resp.ContentLength, resp.Header.Get("Content-Type"))
	}
	if n := wrapped.Load(); n != 1 {
		t.Errorf("the wrap saw %d requests, want 1", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Do(req(ctx, false)); err == nil {
		t.Error("Do served a request whose context was done")
	}
	if _, err := s.Do(req(context.Background(), true)); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Errorf("Do of a panicking handler = %v, want an error", err)
	}
	if n := wrapped.Load(); n != 2 {
		t.Errorf("the wrap saw %d requests, want 2 (the cancelled one is not served)", n)
	}
}
