package loopback

import (
	"net/http"
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
			resp, err := http.DefaultClient.Do(req)
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
