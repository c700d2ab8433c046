package api_test

import (
	"bufio"
	"encoding/base64"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestLocationHostFromCaller: the Location of a created record names the server at the Host the caller used
// only when that Host is a host by the interface's rule (package wire, which the gateway holds callers to);
// otherwise (an HTTP/1.0 request with no Host, or a Host net/http lets through that is none: sub-delims, a port
// past 65535, a zone id) at the address the caller connected to. Never "http:///..." nor what a caller made up.
func TestLocationHostFromCaller(t *testing.T) {
	e := start(t, fixedClock())
	for _, tc := range []struct{ name, version, hostLine, want string }{
		{"HTTP/1.0 without Host", "HTTP/1.0", "", e.URL},
		{"a Host that is a host", "HTTP/1.1", "Host: gw.example:8443\r\n", "http://gw.example:8443"},
		{"a Host with sub-delims", "HTTP/1.1", "Host: ex$ample\r\n", e.URL},
		{"a Host with an impossible port", "HTTP/1.1", "Host: evil.test:99999\r\n", e.URL},
		{"a Host with a quote", "HTTP/1.1", "Host: a'b\r\n", e.URL},
		{"a Host with a zone id", "HTTP/1.1", "Host: [fe80::1%25eth0]\r\n", e.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			b := body("requirement", "field_101", "x")
			raw := "POST /api2/acme/re " + tc.version + "\r\n" + tc.hostLine + "Authorization: Basic " +
				base64.StdEncoding.EncodeToString([]byte("alice:alice-secret")) +
				"\r\nContent-Type: application/xml\r\nContent-Length: " + strconv.Itoa(len(b)) + "\r\nConnection: close\r\n\r\n" + b
			if _, err := conn.Write([]byte(raw)); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("status %d, want 201", res.StatusCode)
			}
			if loc, want := res.Header.Get("Location"), tc.want+"/api2/acme/re/"; !strings.HasPrefix(loc, want) {
				t.Errorf("Location %q, want it under %s", loc, want)
			}
		})
	}
}
