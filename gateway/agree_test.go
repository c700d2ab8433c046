package gateway

import (
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestGatewayAgreesWithCore sends the same requests to the core and through the gateway and expects the same
// status and message: a path with an empty segment ("//") names no resource at either (the gateway does not
// collapse it into a path the core would never serve), with or without credentials; and a search condition
// is read alike, so a refusal quotes what the client sent, decoded as the core decodes it (%20 is a space,
// '+' a plus sign).
func TestGatewayAgreesWithCore(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, withConfig(Options{Upstreams: []string{c.URL}}))
	for _, tc := range []struct {
		name, target string
		noAuth       bool
		status       int
		message      string // a part of the error message; "" for a success
	}{
		{"a single trailing slash", "/api2/demo/re/1/", false, 200, ""},
		{"an empty segment", "/api2/demo//re/1", false, 404, "does not exist"},
		{"an empty segment without credentials", "/api2/demo//re/1", true, 404, "does not exist"},
		{"an empty segment after the version", "/api2//demo/re/1", false, 404, "does not exist"},
		{"an empty first segment", "//api2/demo/re/1", false, 404, "does not exist"},
		{"two trailing slashes", "/api2/demo/re/1//", false, 404, "does not exist"},
		{"two slashes after the key", "/api2/demo//", true, 404, "does not exist"},
		{"a space in a search condition", "/api2/demo/re/search?field_101=two%20words", false, 400, "field_101=two words"},
		{"a plus sign in a search condition", "/api2/demo/re/search?field_101=two+words", false, 400, "field_101=two+words"},
		{"an escaped plus sign in a search condition", "/api2/demo/re/search?field_101=two%2Bwords", false, 400, "field_101=two+words"},
		{"a signed time", "/api2/demo/re/search?created_time>+1262493473", false, 400, "created_time>+1262493473"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, base := range []string{c.URL, gw.URL} {
				user, pass := "demo", "demo"
				if tc.noAuth {
					user = ""
				}
				res := do(t, http.MethodGet, base+tc.target, user, pass, "")
				if res.Status != tc.status {
					t.Errorf("%s%s: status %d, want %d: %s", base, tc.target, res.Status, tc.status, res.Body)
					continue
				}
				if tc.message == "" {
					continue
				}
				var e struct {
					Message string `xml:"message"`
				}
				if err := xml.Unmarshal([]byte(res.Body), &e); err != nil || !strings.Contains(e.Message, tc.message) {
					t.Errorf("%s%s: message %q (%v), want one quoting %q", base, tc.target, e.Message, err, tc.message)
				}
			}
		})
	}
}
