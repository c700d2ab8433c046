package gateway

import (
	"strconv"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestHostlessCreateLocation: an HTTP/1.0 client may send no Host. The Location of what it creates must still
// name this gateway, at the address the client connected to, never "http:///..." nor the core's own address.
func TestHostlessCreateLocation(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	raw := "POST /api2/demo/re HTTP/1.0\r\n" + rawAuth + "Content-Type: application/xml\r\nContent-Length: " +
		strconv.Itoa(len(rawCreate)) + "\r\n\r\n" + rawCreate
	answers, _ := sendRaw(t, gw, raw, 1)
	if answers[0].Status != 201 {
		t.Fatalf("status %d, want 201; body %q", answers[0].Status, answers[0].Body)
	}
	loc := answers[0].Header.Get("Location")
	if want := gw.URL + "/api2/demo/re/"; !strings.HasPrefix(loc, want) {
		t.Errorf("Location %q, want it under %s", loc, want)
	}
}
