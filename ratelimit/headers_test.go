package ratelimit

import (
	"encoding/xml"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestThrottleXML(t *testing.T) {
	got := string(ThrottleXML(599500 * time.Millisecond))
	want := `<error>
  <code>Request_Throttled</code>
  <message>Concurrent rate limit exceeded. Try again after the following amount of time has elapsed (in seconds):</message>
  <try_again_after>600</try_again_after>
</error>
`
	if got != want {
		t.Errorf("ThrottleXML =\n%s\nwant\n%s", got, want)
	}
	var e struct {
		Code    string `xml:"code"`
		After   int    `xml:"try_again_after"`
		Message string `xml:"message"`
	}
	if err := xml.Unmarshal(ThrottleXML(0), &e); err != nil {
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
		if got := string(ThrottleStatusXML(tt.retry)); got != tt.want {
			t.Errorf("ThrottleStatusXML(%s) = %q, want %q", tt.retry, got, tt.want)
		}
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 1}, {0, 1}, {time.Millisecond, 1}, {time.Second, 1}, {time.Second + 1, 2}, {90 * time.Second, 90},
	}
	for _, tt := range tests {
		if got := RetryAfterSeconds(tt.d); got != tt.want {
			t.Errorf("RetryAfterSeconds(%s) = %d, want %d", tt.d, got, tt.want)
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
		if err := xml.Unmarshal(ThrottleXML(time.Duration(ns)), &e); err != nil {
			t.Fatal(err)
		}
		if e.After < 1 {
			t.Fatalf("try_again_after %d for %d ns", e.After, ns)
		}
	})
}

func TestDecisionHeaders(t *testing.T) {
	a := &rule{quoted: `"a";r=`}
	withCounts := func(d Decision, remaining int64, reset time.Duration) Decision {
		d.counts.set([]*rule{a}, []policyState{{remaining: remaining, reset: int64(reset)}})
		return d
	}
	tests := []struct {
		name string
		d    Decision
		want string
	}{
		{"no policy", Decision{Allowed: true}, ""},
		{"admitted", withCounts(Decision{Allowed: true, Limited: true, Policy: `"a";q=1;w=1`}, 0, time.Second),
			`RateLimit-Policy: "a";q=1;w=1|RateLimit: "a";r=0;t=1|`},
		{"rejected", withCounts(Decision{Limited: true, Policy: `"a";q=1;w=1`, RetryAfter: 2500 * time.Millisecond}, 0, 2500*time.Millisecond),
			`RateLimit-Policy: "a";q=1;w=1|RateLimit: "a";r=0;t=3|Retry-After: 3|`},
		{"fallback allow: no counts", Decision{Allowed: true, Limited: true, Policy: `"a";q=1;w=1`},
			`RateLimit-Policy: "a";q=1;w=1|`},
	}
	for _, tt := range tests {
		var got strings.Builder
		tt.d.Headers(func(k, v string) { got.WriteString(k + ": " + v + "|") })
		if got.String() != tt.want {
			t.Errorf("%s: headers %q, want %q", tt.name, got.String(), tt.want)
		}
	}
	// More policies than a Decision holds inline.
	var d Decision
	rules, states := make([]*rule, 10), make([]policyState, 10)
	for i := range rules {
		rules[i], states[i] = &rule{quoted: `"p` + strconv.Itoa(i) + `";r=`}, policyState{remaining: int64(i)}
	}
	d.counts.set(rules, states)
	if got := d.RateLimit(); strings.Count(got, ";r=") != 10 || !strings.HasSuffix(got, `"p9";r=9;t=0`) {
		t.Errorf("ten policies: %s", got)
	}
}
