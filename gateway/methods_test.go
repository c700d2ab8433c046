package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestMethodsThroughGateway sends methods a path does not serve through the gateway, as docs/api.md promises
// them: a known path answers 401 without valid credentials, then 405 with Allow naming the methods it serves
// (PATCH and TRACE included, rate_throttle_status and the gateway's own paths too); 501 is for a method no path
// serves, saying so; and TRACE echoes nothing of the request.
func TestMethodsThroughGateway(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	const secret = "do-not-echo-7f3a"
	tests := []struct {
		name, method, path, user string
		headers                  []string
		status                   int
		allow                    string // the Allow header a 405 must carry
		message                  string
	}{
		{"PATCH without credentials", "PATCH", "/api2/demo/re/1", "", nil, 401, "", "Credentials"},
		{"TRACE without credentials", "TRACE", "/api2/demo/re/1", "", nil, 401, "", "Credentials"},
		{"PATCH with a wrong password", "PATCH", "/api2/demo/re/1", "bad", nil, 401, "", "Credentials"},
		{"POST rate_throttle_status without credentials", "POST", "/api2/demo/rate_throttle_status", "", nil, 401, "", "Credentials"},
		{"PATCH a record", "PATCH", "/api2/demo/re/1", "demo", nil, 405, "GET, PUT, DELETE", "allows GET, PUT, DELETE"},
		{"TRACE a record", "TRACE", "/api2/demo/re/1", "demo", []string{"X-Secret: " + secret}, 405, "GET, PUT, DELETE", "allows GET, PUT, DELETE"},
		{"PATCH a collection", "PATCH", "/api2/demo/re", "demo", nil, 405, "POST", "allows POST"},
		{"TRACE a search", "TRACE", "/api2/demo/re/search", "demo", nil, 405, "GET", "allows GET"},
		{"PATCH the users", "PATCH", "/api/demo/user", "demo", nil, 405, "GET", "allows GET"},
		{"DELETE the fields", "DELETE", "/api2/demo/re/field", "demo", nil, 405, "GET", "allows GET"},
		{"POST rate_throttle_status", "POST", "/api2/demo/rate_throttle_status", "demo", nil, 405, "GET", "allows GET"},
		{"TRACE rate_throttle_status", "TRACE", "/api2/demo/rate_throttle_status", "demo", nil, 405, "GET", "allows GET"},
		{"PATCH in JSON", "PATCH", "/api2/demo/re/1", "demo", []string{"Accept: application/json"}, 405, "GET, PUT, DELETE", `"message"`},
		{"POST /healthz", "POST", "/healthz", "", nil, 405, "GET", "allows GET"},
		{"TRACE /openapi.json", "TRACE", "/openapi.json", "", nil, 405, "GET", "allows GET"},
		{"an unknown method", "FOO", "/api2/demo/re/1", "demo", nil, 501, "", "No path of this service implements the method"},
		{"an unknown method without credentials", "FOO", "/api2/demo/re/1", "", nil, 501, "", "No path of this service implements the method"},
		{"lowercase get", "get", "/api2/demo/re/1", "demo", nil, 501, "", "case-sensitive"},
		{"HEAD rate_throttle_status", "HEAD", "/api2/demo/rate_throttle_status", "demo", nil, 200, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pass := "demo"
			if tt.user == "bad" {
				tt.user, pass = "demo", "wrong"
			}
			body := ""
			if tt.method == "TRACE" {
				body = "<requirement>" + secret + "</requirement>"
			}
			r := do(t, tt.method, gw.URL+tt.path, tt.user, pass, body, tt.headers...)
			if r.Status != tt.status {
				t.Fatalf("%s %s: status %d, want %d; body %q", tt.method, tt.path, r.Status, tt.status, r.Body)
			}
			if got := r.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow=%q, want %q", got, tt.allow)
			}
			if !strings.Contains(r.Body, tt.message) {
				t.Errorf("body %q does not say %q", r.Body, tt.message)
			}
			if strings.Contains(r.Body, secret) || strings.Contains(r.Body, "Authorization") ||
				strings.Contains(r.Body, "ZGVtbzpkZW1v") {
				t.Errorf("the answer echoes the request: %q", r.Body)
			}
			for k, vs := range r.Header {
				if strings.Contains(strings.Join(vs, ","), secret) {
					t.Errorf("header %s echoes the request: %q", k, vs)
				}
			}
			if r.Status == http.StatusMethodNotAllowed && r.Header.Get("X-Cache") != "" {
				t.Errorf("X-Cache=%q on a refused method", r.Header.Get("X-Cache"))
			}
		})
	}
}
