package graph

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Cross-origin resource sharing of /graphql, for web UIs served from another origin
// (Options.CORSOrigins, the server's -cors-origins).
//
// A listed origin's preflight (OPTIONS with Access-Control-Request-Method) is answered 204 with
// the methods and request headers the endpoint accepts and how long the browser may cache the
// answer; its GET and POST responses carry Access-Control-Allow-Origin with that exact origin and
// expose the headers a client reads. Never Access-Control-Allow-Credentials: callers
// authenticate with a bearer token in Authorization, which a page sets itself, and the server
// sets no cookie. Every /graphql response carries Vary: Origin while origins are listed.
//
// An origin not listed gets no Access-Control header at all, and its preflight is refused with
// 403, so the browser sends nothing else. Its simple requests (a GET, which runs queries only)
// are answered as for any client without CORS: the browser keeps the answer from the page.
const (
	// corsMethods are the methods a preflight allows: the endpoint's GraphQL methods.
	corsMethods = "GET, POST"
	// corsRequestHeaders are the request headers a preflight allows: the bearer token, the JSON
	// body and the response type (Accept: application/graphql-response+json), a request ID the
	// client chose, and Apollo Client's client-awareness and CSRF-prevention headers.
	corsRequestHeaders = "Authorization, Content-Type, Accept, X-Request-ID, " +
		"Apollo-Require-Preflight, Apollographql-Client-Name, Apollographql-Client-Version"
	// corsExposedHeaders are the response headers a page may read: the request's ID (the
	// explorer shows it) and Retry-After of a 503.
	corsExposedHeaders = RequestIDHeader + ", Retry-After"
	// corsMaxAge is how long, in seconds, a browser may reuse a preflight's answer (Chromium
	// caps it at 2 hours, Firefox at 24).
	corsMaxAge = "7200"
)

// ParseCORSOrigin checks one origin of -cors-origins and returns it as browsers send it in
// Origin: scheme://host[:port], scheme http or https, lower case, without the scheme's default
// port. No path (not even "/"), query, fragment or user; no wildcard; not "null" (the origin of
// sandboxed frames and local files, which any page can take on).
func ParseCORSOrigin(s string) (string, error) {
	switch {
	case s == "":
		return "", errors.New("an empty origin")
	case strings.EqualFold(s, "null"):
		return "", errors.New(`"null" is not an origin that may be allowed: sandboxed frames and files have it, so any page could`)
	case strings.Contains(s, "*"):
		return "", fmt.Errorf("%q: wildcards are not allowed, list each origin", s)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%q is not an origin: %v", s, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", fmt.Errorf("%q: an origin is http:// or https:// and a host", s)
	}
	if u.Opaque != "" || u.Host == "" {
		return "", fmt.Errorf("%q: an origin is scheme://host[:port]", s)
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.HasSuffix(s, "#") {
		return "", fmt.Errorf("%q: an origin is scheme://host[:port], without a path (not even /), query, fragment or user", s)
	}
	host := strings.ToLower(u.Hostname())
	if host == "" || strings.ContainsAny(host, " %") {
		return "", fmt.Errorf("%q: no valid host", s)
	}
	port := u.Port()
	if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("%q: an empty port", s)
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("%q: port %q is not 1..65535", s, port)
		}
		if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
			port = "" // browsers leave the default port out of Origin
		} else {
			port = strconv.Itoa(n)
		}
	}
	origin := scheme + "://" + host
	if strings.Contains(host, ":") {
		origin = scheme + "://[" + host + "]"
	}
	if port != "" {
		origin = scheme + "://" + net.JoinHostPort(host, port)
	}
	return origin, nil
}

// ParseCORSOrigins checks every origin of a list (see ParseCORSOrigin) and returns them as
// browsers send them, without duplicates.
func ParseCORSOrigins(list []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, s := range list {
		o, err := ParseCORSOrigin(s)
		if err != nil {
			return nil, err
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out, nil
}

// withCORS answers preflights of the listed origins and marks their responses (see above);
// without origins it returns next unchanged. The origins are as ParseCORSOrigins returns them;
// one that is not panics (a programming error: the server validates its flag at startup).
func withCORS(origins []string, next http.Handler) http.Handler {
	if len(origins) == 0 {
		return next
	}
	allowed := map[string]bool{}
	for _, o := range origins {
		if p, err := ParseCORSOrigin(o); err != nil || p != o {
			panic(fmt.Sprintf("graph: CORS origin %q is not one ParseCORSOrigins returns", o))
		}
		allowed[o] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
		if !allowed[origin] {
			if preflight {
				http.Error(w, "forbidden: this origin may not call the API from a browser (see -cors-origins)", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		if preflight {
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsRequestHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.Set("Access-Control-Expose-Headers", corsExposedHeaders)
		next.ServeHTTP(w, r)
	})
}
