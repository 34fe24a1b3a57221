package signed

import "testing"

func TestCodec(t *testing.T) {
	c := New([]byte("secret"))
	cur := c.Encode("scope-a", []byte(`{"p":"x"}`))
	tests := []struct {
		name, scope, cursor string
		ok                  bool
	}{
		{"same scope", "scope-a", cur, true},
		{"other scope", "scope-b", cur, false},
		{"tampered", "scope-a", flipLast(cur), false},
		{"garbage", "scope-a", "!!", false},
		{"too short", "scope-a", "AAAA", false},
		{"other secret", "scope-a", New([]byte("other")).Encode("scope-a", []byte(`{"p":"x"}`)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, ok := c.Decode(tt.scope, tt.cursor)
			if ok != tt.ok || (ok && string(body) != `{"p":"x"}`) {
				t.Errorf("Decode(%q, %q) = %q, %v; want ok=%v", tt.scope, tt.cursor, body, ok, tt.ok)
			}
		})
	}
}

func flipLast(s string) string {
	last := byte('A')
	if s[len(s)-1] == 'A' {
		last = 'B'
	}
	return s[:len(s)-1] + string(last)
}
