package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestCORS checks cors.allowed_origins: an allowed origin gets the CORS headers and its preflight is answered
// by the gateway; another origin gets none.
func TestCORS(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example.com"}
	gw := startGateway(t, opt)
	url := gw.URL + "/api2/demo/re/1"
	for _, tc := range []struct {
		name, method, origin string
		headers              []string
		wantStatus           int
		wantAllow            string
	}{
		{"allowed read", http.MethodGet, "https://app.example.com", nil, 200, "https://app.example.com"},
		{"other origin", http.MethodGet, "https://evil.example", nil, 200, ""},
		{"preflight", http.MethodOptions, "https://app.example.com",
			[]string{"Access-Control-Request-Method: PUT", "Access-Control-Request-Headers: authorization"}, 204, "https://app.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, pass := "demo", "demo"
			if tc.method == http.MethodOptions {
				user = "" // browsers send preflights without credentials
			}
			res := do(t, tc.method, url, user, pass, "", append(tc.headers, "Origin: "+tc.origin)...)
			if got, want := res.Status, tc.wantStatus; got != want {
				t.Fatalf("status=%d, want %d", got, want)
			}
			if got, want := res.Header.Get("Access-Control-Allow-Origin"), tc.wantAllow; got != want {
				t.Errorf("Access-Control-Allow-Origin=%q, want %q", got, want)
			}
			if !strings.Contains(strings.Join(res.Header.Values("Vary"), ","), "Origin") {
				t.Errorf("no Vary: Origin")
			}
			if tc.method == http.MethodOptions && !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "PUT") {
				t.Errorf("preflight allows %q", res.Header.Get("Access-Control-Allow-Methods"))
			}
		})
	}
}

// TestCORSWildcard checks that allowed_origins "*" allows any origin without the browser's credentials, that
// a listed origin keeps them, and that the origin "null" is never reflected.
func TestCORSWildcard(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"*", "https://app.example.com", "null"}
	gw := startGateway(t, opt)
	url := gw.URL + "/api2/demo/re/1"
	for _, tc := range []struct {
		origin, wantAllow, wantCreds string
	}{
		{"https://evil.example", "*", ""},
		{"https://app.example.com", "https://app.example.com", "true"},
		{"null", "", ""},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			res := get(t, url, "Origin: "+tc.origin)
			if res.Status != 200 {
				t.Fatalf("status=%d", res.Status)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != tc.wantAllow {
				t.Errorf("Access-Control-Allow-Origin=%q, want %q", got, tc.wantAllow)
			}
			if got := res.Header.Get("Access-Control-Allow-Credentials"); got != tc.wantCreds {
				t.Errorf("Access-Control-Allow-Credentials=%q, want %q", got, tc.wantCreds)
			}
		})
	}
}

// TestCORSRefusals checks that the gateway's refusals before authentication (a malformed target, a body over
// the limit) carry the CORS headers of an allowed origin: a page can read them only then, and otherwise sees a
// failed fetch instead of the status and the message.
func TestCORSRefusals(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example.com"}
	opt.MaxBodyBytes = 64
	gw := startGateway(t, opt)
	for _, tc := range []struct {
		name, method, path, body string
		wantStatus               int
	}{
		{"malformed target", http.MethodGet, "/api2/demo/re%2F1", "", 400},
		{"body over the limit", http.MethodPost, "/api2/demo/re", strings.Repeat("x", 65), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, tc.method, gw.URL+tc.path, "demo", "demo", tc.body,
				"Origin: https://app.example.com", "Accept: application/json")
			if got, want := res.Status, tc.wantStatus; got != want {
				t.Fatalf("status=%d, want %d (%q)", got, want, res.Body)
			}
			if got, want := res.Header.Get("Access-Control-Allow-Origin"), "https://app.example.com"; got != want {
				t.Errorf("Access-Control-Allow-Origin=%q, want %q", got, want)
			}
			if !strings.Contains(res.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
				t.Errorf("Access-Control-Expose-Headers=%q", res.Header.Get("Access-Control-Expose-Headers"))
			}
		})
	}
}

// TestUnauthorizedPageGetsNoChallenge: a 401 to a request with an Origin (a page's fetch) carries no Basic
// challenge, which would make the browser show its own login dialog instead of letting the page read the JSON
// error; a direct client still gets the challenge.
func TestUnauthorizedPageGetsNoChallenge(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example"}
	gw := startGateway(t, opt)
	for _, tc := range []struct {
		name      string
		headers   []string
		challenge bool
	}{
		{"direct client", []string{"Accept: application/json"}, true},
		{"listed origin", []string{"Accept: application/json", "Origin: https://app.example"}, false},
		{"other origin", []string{"Origin: https://elsewhere.example"}, false},
	} {
		for _, user := range []string{"", "demo"} {
			res := do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", user, "wrong", "", tc.headers...)
			if res.Status != http.StatusUnauthorized {
				t.Fatalf("%s: status %d, want 401", tc.name, res.Status)
			}
			if got := res.Header.Get("WWW-Authenticate") != ""; got != tc.challenge {
				t.Errorf("%s (user %q): WWW-Authenticate %q, want a challenge: %v", tc.name, user,
					res.Header.Get("WWW-Authenticate"), tc.challenge)
			}
		}
	}
}

// TestCORSPreflightMethods checks that a preflight allows what the route serves, as the route table states it,
// so that a page is told before its write that a path takes no such method (the core would answer 405), and
// that the request a preflight allowed is then served.
func TestCORSPreflightMethods(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example.com"}
	gw := startGateway(t, opt)
	for _, tc := range []struct{ path, method, want string }{
		{"/api2/demo/re/1", "PUT", "GET, PUT, DELETE"},
		{"/api/demo/re/1", "DELETE", "GET, PUT, DELETE"},
		{"/api2/demo/re", "POST", "POST"},
		{"/api2/demo/re/search?x", "GET", "GET"},
		{"/api2/demo/re/1/fieldhistory/101", "GET", "GET"},
		{"/api2/demo/rate_throttle_status", "GET", "GET"},
		{"/api/demo/re/search", "GET", "GET"},   // a version-2 route under version 1: names nothing
		{"/api2/demo/re/1/a/b/c", "PUT", "GET"}, // no route
		{"/openapi.json", "GET", "GET"},         // the gateway's own
	} {
		res := do(t, http.MethodOptions, gw.URL+tc.path, "", "", "",
			"Origin: https://app.example.com", "Access-Control-Request-Method: "+tc.method)
		if res.Status != http.StatusNoContent {
			t.Errorf("OPTIONS %s: status %d, want 204", tc.path, res.Status)
		}
		if got := res.Header.Get("Access-Control-Allow-Methods"); got != tc.want {
			t.Errorf("OPTIONS %s: Access-Control-Allow-Methods %q, want %q", tc.path, got, tc.want)
		}
	}
}
