package gateway

import (
	"encoding/xml"
	"testing"
	"time"
)

func TestThrottleXML(t *testing.T) {
	got := string(throttleXML(599500 * time.Millisecond))
	want := `<error>
  <code>Request_Throttled</code>
  <message>Concurrent rate limit exceeded. Try again after the following amount of time has elapsed (in seconds):</message>
  <try_again_after>600</try_again_after>
</error>
`
	if got != want {
		t.Errorf("throttleXML =\n%s\nwant\n%s", got, want)
	}
	var e struct {
		Code    string `xml:"code"`
		After   int    `xml:"try_again_after"`
		Message string `xml:"message"`
	}
	if err := xml.Unmarshal(throttleXML(0), &e); err != nil {
		t.Fatal(err)
	}
	if got, want := e.After, 1; got != want {
		t.Errorf("try_again_after for 0 = %d, want %d", got, want)
	}
}

func TestThrottleStatusXML(t *testing.T) {
	tests := []struct {
		retry time.Duration
		want  string
	}{
		{0, "<rate_throttle_status>\n<api_available>yes</api_available>\n</rate_throttle_status>\n"},
		{44100 * time.Millisecond, "<rate_throttle_status>\n<api_available>no</api_available>\n<try_again_after>45</try_again_after>\n</rate_throttle_status>\n"},
		{time.Nanosecond, "<rate_throttle_status>\n<api_available>no</api_available>\n<try_again_after>1</try_again_after>\n</rate_throttle_status>\n"},
	}
	for _, tt := range tests {
		if got := string(throttleStatusXML(tt.retry)); got != tt.want {
			t.Errorf("throttleStatusXML(%s) = %q, want %q", tt.retry, got, tt.want)
		}
	}
}

func FuzzThrottleXML(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(1 << 62))
	f.Add(int64(-5))
	f.Fuzz(func(t *testing.T, ns int64) {
		var e struct {
			After int64 `xml:"try_again_after"`
		}
		if err := xml.Unmarshal(throttleXML(time.Duration(ns)), &e); err != nil {
			t.Fatal(err)
		}
		if e.After < 1 {
			t.Fatalf("try_again_after %d for %d ns", e.After, ns)
		}
	})
}
