package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

// TestRateLimit puts an in-process limiter of 3 requests per minute per api_key in front of the core:
// cache hits count like any call, the fourth call is rejected with the configured status, Retry-After,
// the RateLimit headers and the throttle body, and rate_throttle_status answers without counting.
func TestRateLimit(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			c := coretest.Start(t, coretest.Options{})
			l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{RejectStatus: status,
				Policies: []ratelimit.Policy{{Name: "account", Key: "api_key", Limit: 3, Burst: 3, Period: time.Minute}}}))
			if err != nil {
				t.Fatal(err)
			}
			opt := cachedOptions(c)
			opt.Limiter = l
			gw := startGateway(t, opt)
			url := gw.URL + "/api2/demo/re/1"

			throttle := get(t, gw.URL+"/api2/demo/rate_throttle_status")
			if throttle.Status != 200 || !strings.Contains(throttle.Body, "<api_available>yes</api_available>") {
				t.Fatalf("throttle status before: %d %q", throttle.Status, throttle.Body)
			}
			for i := range 3 {
				res := get(t, url)
				if res.Status != 200 {
					t.Fatalf("call %d: status %d", i, res.Status)
				}
				if res.Header.Get("RateLimit-Policy") == "" {
					t.Errorf("call %d: no RateLimit-Policy", i)
				}
			}
			res := get(t, url)
			if got, want := res.Status, status; got != want {
				t.Fatalf("fourth call: status=%d, want %d", got, want)
			}
			if res.Header.Get("Retry-After") == "" || res.Header.Get("RateLimit-Policy") == "" {
				t.Errorf("rejection headers: %v", res.Header)
			}
			if !strings.Contains(res.Body, "<code>Request_Throttled</code>") {
				t.Errorf("rejection body %q", res.Body)
			}
			jres := get(t, url, "Accept: application/json")
			if jres.Status != status || !json.Valid([]byte(jres.Body)) || !strings.Contains(jres.Body, "Request_Throttled") {
				t.Errorf("JSON rejection: %d %q", jres.Status, jres.Body)
			}
			throttle = get(t, gw.URL+"/api2/demo/rate_throttle_status")
			if throttle.Status != 200 || !strings.Contains(throttle.Body, "<api_available>no</api_available>") ||
				!strings.Contains(throttle.Body, "<try_again_after>") {
				t.Errorf("throttle status after: %d %q", throttle.Status, throttle.Body)
			}
			if got := do(t, http.MethodGet, gw.URL+"/api2/demo/rate_throttle_status", "demo", "wrong", "").Status; got != 401 {
				t.Errorf("throttle status with a wrong password: %d, want 401", got)
			}
		})
	}
}

// TestThrottleStatusWithoutLimiter checks that rate_throttle_status is answered (always available) when no
// policy is configured, for verified callers only.
func TestThrottleStatusWithoutLimiter(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	for _, tc := range []struct {
		name, user, pass string
		status           int
		inBody           string
	}{
		{"unverified wrong password", "demo", "nope", 401, "<message>"},
		{"first call verifies", "demo", "demo", 200, "<api_available>yes</api_available>"},
		{"verified", "demo", "demo", 200, "<api_available>yes</api_available>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, http.MethodGet, gw.URL+"/api2/demo/rate_throttle_status", tc.user, tc.pass, "")
			if res.Status != tc.status || !strings.Contains(res.Body, tc.inBody) {
				t.Fatalf("got %d %q, want %d with %q", res.Status, res.Body, tc.status, tc.inBody)
			}
		})
	}
}
