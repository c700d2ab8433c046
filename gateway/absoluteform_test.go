package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestAbsoluteFormTarget: a request whose target is in absolute form ("POST http://host/path", as a client
// speaking to a proxy sends it) names its host there, and RFC 9112 §3.2.2 has the server ignore Host for it.
// The Location of what it creates names that host, as the core answers the same request sent to it directly;
// a target host that is not host[:port] is refused like such a Host.
func TestAbsoluteFormTarget(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	create := func(line, host string) string {
		return line + "\r\n" + host + rawAuth + "Content-Type: application/xml\r\nContent-Length: " +
			strconv.Itoa(len(rawCreate)) + "\r\n\r\n" + rawCreate
	}
	for _, tc := range []struct {
		name, raw  string
		status     int
		locPrefix  string
		bodyPhrase string
	}{
		{"target host wins over Host", create("POST http://other.example:9/api2/demo/re HTTP/1.1", "Host: example.com\r\n"),
			201, "http://other.example:9/api2/demo/re/", ""},
		{"HTTP/1.0 without Host", create("POST http://other.example/api2/demo/re HTTP/1.0", ""),
			201, "http://other.example/api2/demo/re/", ""},
		{"scheme in upper case", create("POST HTTP://other.example/api2/demo/re HTTP/1.1", "Host: example.com\r\n"),
			201, "http://other.example/api2/demo/re/", ""},
		{"port out of range", create("POST http://other.example:99999/api2/demo/re HTTP/1.1", "Host: example.com\r\n"),
			400, "", "host of the request target"},
		{"empty authority", create("POST http:///api2/demo/re HTTP/1.1", "Host: example.com\r\n"),
			400, "", "host of the request target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers, _ := sendRaw(t, gw, tc.raw, 1)
			a := answers[0]
			if a.Status != tc.status {
				t.Fatalf("status %d, want %d; body %q", a.Status, tc.status, a.Body)
			}
			if loc := a.Header.Get("Location"); tc.locPrefix != "" && !strings.HasPrefix(loc, tc.locPrefix) {
				t.Errorf("Location %q, want it under %s", loc, tc.locPrefix)
			}
			if tc.bodyPhrase != "" && !strings.Contains(string(a.Body), tc.bodyPhrase) {
				t.Errorf("body %q does not say %q", a.Body, tc.bodyPhrase)
			}
		})
	}
}
