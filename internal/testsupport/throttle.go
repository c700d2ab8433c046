package testsupport

import (
	"encoding/xml"
	"testing"
)

// Throttle is what the throttle's answers say, read as a client of the mirrored service reads them: a
// refusal's code, rate_throttle_status's availability, and the seconds to wait in either.
type Throttle struct {
	Code      string `xml:"code"`
	Available string `xml:"api_available"`
	After     int    `xml:"try_again_after"`
}

// ReadThrottle decodes a throttle refusal (<error>) or a rate_throttle_status document, ending the test on any
// other body.
func ReadThrottle(tb testing.TB, body string) Throttle {
	tb.Helper()
	var b Throttle
	if err := xml.Unmarshal([]byte(body), &b); err != nil {
		tb.Fatalf("body %q: %v", body, err)
	}
	return b
}
