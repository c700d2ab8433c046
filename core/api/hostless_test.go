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

// TestHostlessCreateLocation: an HTTP/1.0 client may send no Host. The Location of what it creates must still
// name the server, at the address the client connected to, as the gateway names itself: never "http:///...".
func TestHostlessCreateLocation(t *testing.T) {
	e := start(t, fixedClock())
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	b := body("requirement", "field_101", "x")
	raw := "POST /api2/acme/re HTTP/1.0\r\nAuthorization: Basic " +
		base64.StdEncoding.EncodeToString([]byte("alice:alice-secret")) +
		"\r\nContent-Type: application/xml\r\nContent-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n" + b
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
	if loc, want := res.Header.Get("Location"), e.URL+"/api2/acme/re/"; !strings.HasPrefix(loc, want) {
		t.Errorf("Location %q, want it under %s", loc, want)
	}
}
