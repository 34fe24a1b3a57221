// Package signed makes opaque pagination cursors: a payload signed (HMAC-SHA-256) over the
// query it belongs to, so that a cursor changed by hand, or taken from another query, is
// refused.
package signed

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

const macSize = 12

// Codec signs and checks cursors with one secret.
type Codec struct{ secret []byte }

// New returns a Codec with the given secret.
func New(secret []byte) Codec { return Codec{secret: secret} }

// Encode returns the cursor of body within the query identified by scope.
func (c Codec) Encode(scope string, body []byte) string {
	return base64.RawURLEncoding.EncodeToString(append(c.mac(scope, body), body...))
}

// Decode returns the body of a cursor that Encode made for the same scope, and false for
// anything else.
func (c Codec) Decode(scope, cursor string) ([]byte, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) <= macSize {
		return nil, false
	}
	sum, body := raw[:macSize], raw[macSize:]
	if !hmac.Equal(sum, c.mac(scope, body)) {
		return nil, false
	}
	return body, true
}

func (c Codec) mac(scope string, body []byte) []byte {
	h := hmac.New(sha256.New, c.secret)
	h.Write([]byte(scope))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)[:macSize]
}
