package memdyn

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// call sends one API call to s and returns its status and body.
func call(s *Server, op, body string) (int, string) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("X-Amz-Target", targetPrefix+op)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// A client request token answers a replay for tokenLifetime and is then forgotten: the same
// token with other parameters is a new call, and the server keeps no record of the tokens that
// expired (a call drops them oldest first; a token recorded again lives by its last record).
func TestClientRequestTokensExpire(t *testing.T) {
	s := New()
	now := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	if code, body := call(s, "CreateTable", `{"TableName":"T","KeySchema":[{"AttributeName":"PK","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"}]}`); code != 200 {
		t.Fatalf("CreateTable: %d %s", code, body)
	}
	put := func(token, value string) (int, string) {
		return call(s, "TransactWriteItems", fmt.Sprintf(`{"ClientRequestToken":%q,"TransactItems":[{"Put":{"TableName":"T","Item":{"PK":{"S":"k"},"V":{"S":%q}}}}]}`, token, value))
	}
	for i := range 5 {
		if code, body := put(fmt.Sprint("tok-", i), "a"); code != 200 {
			t.Fatalf("put %d: %d %s", i, code, body)
		}
		now = now.Add(time.Minute)
	}
	// tok-0 is 5 minutes old: a replay with other parameters is refused.
	if code, body := put("tok-0", "b"); code != 400 || !strings.Contains(body, "IdempotentParameterMismatch") {
		t.Fatalf("tok-0 again, 5 minutes later, other parameters: %d %s; want IdempotentParameterMismatchException", code, body)
	}
	// 8 minutes later (13) tok-0, tok-1 and tok-2 (recorded at 0, 1 and 2 minutes) have expired.
	now = now.Add(8 * time.Minute)
	if code, body := put("tok-0", "b"); code != 200 {
		t.Fatalf("tok-0 after its lifetime, other parameters: %d %s; want a new call", code, body)
	}
	if _, ok := s.tokens["tok-1"]; ok || len(s.tokens) != 3 || len(s.tokenOrder) != 3 {
		t.Errorf("tokens kept: %v (order %v); want tok-3, tok-4 and tok-0 again", s.tokens, s.tokenOrder)
	}
	// tok-0's new record outlives its old one.
	now = now.Add(9 * time.Minute)
	if code, body := put("tok-0", "c"); code != 400 || !strings.Contains(body, "IdempotentParameterMismatch") {
		t.Fatalf("tok-0 9 minutes after it was recorded again: %d %s; want IdempotentParameterMismatchException", code, body)
	}
	if _, ok := s.tokens["tok-0"]; !ok || len(s.tokens) != 1 {
		t.Errorf("tokens kept: %v; want tok-0 alone", s.tokens)
	}
	// A clock set back: a token recorded later but at an earlier time is still checked by its
	// own age.
	now = now.Add(-time.Hour)
	if code, body := put("tok-5", "a"); code != 200 {
		t.Fatalf("tok-5: %d %s", code, body)
	}
	now = now.Add(time.Hour + 11*time.Minute) // tok-0 and tok-5 both expired
	if code, body := put("tok-5", "b"); code != 200 {
		t.Fatalf("tok-5 after its lifetime: %d %s; want a new call", code, body)
	}
	if code, body := put("tok-0", "d"); code != 200 {
		t.Fatalf("tok-0 after its lifetime: %d %s; want a new call", code, body)
	}
}

// BenchmarkTransactLiveTokens is one small TransactWriteItems with a token while 20,000 tokens
// of the last ten minutes are live (a minute of writes at 330 a second): what each call pays for
// the tokens it keeps.
func BenchmarkTransactLiveTokens(b *testing.B) {
	s := New()
	call(s, "CreateTable", `{"TableName":"T","KeySchema":[{"AttributeName":"PK","KeyType":"HASH"}],"AttributeDefinitions":[{"AttributeName":"PK","AttributeType":"S"}]}`)
	put := func(i int) {
		if code, body := call(s, "TransactWriteItems", fmt.Sprintf(`{"ClientRequestToken":"tok-%d","TransactItems":[{"Put":{"TableName":"T","Item":{"PK":{"S":"k"},"V":{"N":"%d"}}}}]}`, i, i)); code != 200 {
			b.Fatalf("%d %s", code, body)
		}
	}
	for i := range 20000 {
		put(i)
	}
	b.ReportAllocs()
	i := 20000
	for b.Loop() {
		put(i)
		i++
	}
}
