package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit"
)

// TestUpstreamThrottleRespected puts a gateway in front of an upstream with the mirrored service's throttle (a
// second gateway with the window-and-block policy, in front of the core): once the upstream answers an
// account's call with 503 Request_Throttled, the front gateway sends none of the account's calls until the time
// it gave has passed, answering them itself with the same status and body and the time left, serving cached
// reads, and saying so in rate_throttle_status. The client's retries do not restart the upstream's block: when
// the time is up, the upstream admits the account again.
func TestUpstreamThrottleRespected(t *testing.T) {
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	c := coretest.Start(t, coretest.Options{})
	mirror := ratelimit.Policy{Name: "account", Key: ratelimit.KeyAPIKey, Limit: 3, Burst: 3,
		Period: 10 * time.Second, Algorithm: ratelimit.AlgorithmWindow, Block: 10 * time.Minute}
	upstream := startGateway(t, Options{Upstreams: []string{c.URL}, Limiter: mirroredLimiter(t, clk, false, mirror)})
	gw := startGateway(t, Options{Upstreams: []string{upstream.URL}, Verify: config.VerifyProbe, Now: clk.Now,
		Cache: CacheOptions{Enabled: true}})
	base := gw.URL + "/api2/demo"

	// The probe of the credential and two reads are the upstream's three calls in the window; the third read is
	// the fourth call, which the upstream throttles for 600 s.
	if r := get(t, base+"/re/1"); r.Status != http.StatusOK {
		t.Fatalf("first read: %d %s", r.Status, r.Body)
	}
	if r := get(t, base+"/user"); r.Status != http.StatusOK {
		t.Fatalf("second read: %d %s", r.Status, r.Body)
	}
	r := get(t, base+"/re/field")
	if r.Status != http.StatusServiceUnavailable || testsupport.ReadThrottle(t, r.Body).Code != "Request_Throttled" {
		t.Fatalf("fourth call of the window: %d %s, want the upstream's 503 Request_Throttled", r.Status, r.Body)
	}

	sent := gw.Stats().UpstreamRequests
	retries := []struct{ method, path, body string }{
		{"GET", "/re/field", ""},
		{"GET", "/re/field", ""},
		{"GET", "/re/2", ""},
		{"POST", "/re", "<requirement><field_101>x</field_101></requirement>"},
		{"DELETE", "/re/1", ""},
	}
	for _, rt := range retries {
		r := do(t, rt.method, base+rt.path, "demo", "demo", rt.body)
		if r.Status != http.StatusServiceUnavailable {
			t.Fatalf("%s %s while blocked: %d %s, want 503", rt.method, rt.path, r.Status, r.Body)
		}
		if b := testsupport.ReadThrottle(t, r.Body); b.Code != "Request_Throttled" || b.After != 600 {
			t.Errorf("%s %s while blocked: code %q try_again_after %d, want Request_Throttled and 600", rt.method,
				rt.path, b.Code, b.After)
		}
		if got := r.Header.Get("Retry-After"); got != "600" {
			t.Errorf("%s %s while blocked: Retry-After %q, want 600", rt.method, rt.path, got)
		}
	}
	if r := get(t, base+"/re/1"); r.Status != http.StatusOK || r.Header.Get("X-Cache") != "HIT" {
		t.Errorf("cached read while blocked: %d, X-Cache %q; want 200 from the cache", r.Status, r.Header.Get("X-Cache"))
	}
	// A read that asks past the cache gets the cached entry as a stand-in (cache.stale_if_error), as when the
	// upstream fails.
	if r := get(t, base+"/re/1", "Cache-Control: no-cache"); r.Status != http.StatusOK || r.Header.Get("X-Cache") != "STALE" {
		t.Errorf("a read that bypasses the cache while blocked: %d, X-Cache %q; want 200 STALE", r.Status, r.Header.Get("X-Cache"))
	}
	for _, wantLeft := range []int{600, 300} {
		st := get(t, base+"/rate_throttle_status")
		if b := testsupport.ReadThrottle(t, st.Body); st.Status != http.StatusOK || b.Available != "no" || b.After != wantLeft {
			t.Errorf("rate_throttle_status while blocked: %d, api_available %q try_again_after %d; want 200, no, %d",
				st.Status, b.Available, b.After, wantLeft)
		}
		clk.Add(5 * time.Minute)
	}
	if got := gw.Stats().UpstreamRequests; got != sent {
		t.Errorf("%d calls reached the upstream while it blocked the account, want none", got-sent)
	}

	// The block is over: nothing restarted it, so the upstream admits the account again.
	if st := get(t, base+"/rate_throttle_status"); testsupport.ReadThrottle(t, st.Body).Available != "yes" {
		t.Errorf("rate_throttle_status after the block: %s", st.Body)
	}
	if r := get(t, base+"/re/2"); r.Status == http.StatusServiceUnavailable {
		t.Errorf("after the block: %d %s, want the upstream's answer (the client's retries restarted the upstream's block)", r.Status, r.Body)
	}
}

// TestUpstreamThrottleAnswers: which upstream answers are its throttle, and for how long. A 503 is one only with
// the interface's Request_Throttled body (an upstream's own busy 503 with Retry-After is not an account's
// block); a 429 without that body only with a Retry-After and on a proved caller's request.
func TestUpstreamThrottleAnswers(t *testing.T) {
	cases := []struct {
		name        string
		status      int
		retryAfter  string
		body        string
		anyRetry429 bool
		want        time.Duration
		throttle    bool
	}{
		{"503 throttle", 503, "", string(throttleXML(600 * time.Second)), false, 600 * time.Second, true},
		{"503 throttle, JSON", 503, "", `{"error":{"code":"Request_Throttled","message":"m","try_again_after":42}}`, false, 42 * time.Second, true},
		{"503 throttle, Retry-After only", 503, "7", "<error><code>Request_Throttled</code></error>", false, 7 * time.Second, true},
		{"503 busy", 503, "1", "<error><message>The upstream service is busy</message></error>", true, 0, false},
		{"429 throttle", 429, "30", string(throttleXML(30 * time.Second)), false, 30 * time.Second, true},
		{"429 Retry-After, proved caller", 429, "12", "", true, 12 * time.Second, true},
		{"429 Retry-After, credential check", 429, "12", "<error><message>Too many failed authentication attempts.</message></error>", false, 0, false},
		{"429 nothing", 429, "", "", true, 0, false},
		{"500", 500, "5", "Request_Throttled", true, 0, false},
		{"200", 200, "5", "Request_Throttled", true, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var resp fasthttp.Response
			resp.SetStatusCode(tc.status)
			if tc.retryAfter != "" {
				resp.Header.Set("Retry-After", tc.retryAfter)
			}
			resp.SetBodyString(tc.body)
			d, ok := upstreamThrottle(&resp, tc.anyRetry429)
			if ok != tc.throttle || d != tc.want {
				t.Errorf("upstreamThrottle = %s, %v; want %s, %v", d, ok, tc.want, tc.throttle)
			}
		})
	}
}
