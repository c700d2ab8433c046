package gateway

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// mirroredLimiter is the limiter of the policy docs/api.md gives for the mirrored service's throttle (25 calls in
// any 10 s, then blocked for 10 min, 503), on the clock clk, in process or (redis) in a private Redis.
func mirroredLimiter(t *testing.T, clk *testsupport.Clock, withRedis bool, policy ratelimit.Policy) *ratelimit.Limiter {
	t.Helper()
	opt := ratelimittest.With(ratelimit.Options{RejectStatus: http.StatusServiceUnavailable, Now: clk.Now,
		Policies: []ratelimit.Policy{policy}})
	if withRedis {
		o, err := ratelimit.RedisOptions(redistest.Start(t).URL(), config.Default(config.RoleGateway).Redis.Timeout)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(o)
		t.Cleanup(func() { _ = rdb.Close() })
		opt.Redis = rdb
		opt.RedisTimeout = 5 * time.Second // every decision from Redis, however slow the shared test machine
	}
	l, err := ratelimit.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

var mirroredPolicy = ratelimit.Policy{Name: "account", Key: ratelimit.KeyAPIKey, Limit: 25, Burst: 25,
	Period: 10 * time.Second, Algorithm: ratelimit.AlgorithmWindow, Block: 10 * time.Minute}

// TestMirroredThrottle drives the mirrored service's throttle through the gateway as its manual describes it:
// 25 calls in 10 s pass, the 26th gets 503 Request_Throttled with try_again_after, every call while blocked
// restarts the block, and rate_throttle_status answers 200 throughout, counting the block down.
func TestMirroredThrottle(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"local", "redis"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
			c := coretest.Start(t, coretest.Options{})
			opt := cachedOptions(c)
			opt.Limiter = mirroredLimiter(t, clk, backend == "redis", mirroredPolicy)
			gw := startGateway(t, opt)
			url, status := gw.URL+"/api2/demo/re/1", gw.URL+"/api2/demo/rate_throttle_status"

			for i := range 25 { // 25 calls within 7.2 s
				if res := get(t, url); res.Status != http.StatusOK {
					t.Fatalf("call %d: status %d %q", i+1, res.Status, res.Body)
				}
				clk.Add(300 * time.Millisecond)
			}
			res := get(t, url)
			if res.Status != http.StatusServiceUnavailable {
				t.Fatalf("26th call in 10s: status %d, want 503", res.Status)
			}
			if b := testsupport.ReadThrottle(t, res.Body); b.Code != "Request_Throttled" || b.After != 600 {
				t.Fatalf("26th call: code %q try_again_after %d, want Request_Throttled and 600", b.Code, b.After)
			}
			if got := res.Header.Get("Retry-After"); got != "600" {
				t.Errorf("Retry-After %q, want 600", got)
			}
			if got, want := res.Header.Get("RateLimit"), `"account";r=0;t=600`; got != want {
				t.Errorf("RateLimit %q, want %q", got, want)
			}
			if got, want := res.Header.Get("RateLimit-Policy"), `"account";q=25;w=10`; got != want {
				t.Errorf("RateLimit-Policy %q, want %q", got, want)
			}

			// The status counts the block down and answers 200 without restarting it.
			for _, wantLeft := range []int{600, 540, 480} {
				st := get(t, status)
				if st.Status != http.StatusOK {
					t.Fatalf("rate_throttle_status while blocked: status %d, want 200", st.Status)
				}
				if b := testsupport.ReadThrottle(t, st.Body); b.Available != "no" || b.After != wantLeft {
					t.Fatalf("rate_throttle_status: api_available %q try_again_after %d, want no and %d", b.Available,
						b.After, wantLeft)
				}
				clk.Add(time.Minute)
			}
			// Three minutes on, long after the window emptied, a call is refused and restarts the block.
			if res := get(t, url); res.Status != http.StatusServiceUnavailable || testsupport.ReadThrottle(t, res.Body).After != 600 {
				t.Fatalf("call while blocked: status %d %q, want 503 with 600 s", res.Status, res.Body)
			}
			clk.Add(9 * time.Minute)
			if b := testsupport.ReadThrottle(t, get(t, status).Body); b.Available != "no" || b.After != 60 {
				t.Fatalf("9 min after the restart: api_available %q try_again_after %d, want no and 60", b.Available,
					b.After)
			}
			clk.Add(time.Minute)
			if b := testsupport.ReadThrottle(t, get(t, status).Body); b.Available != "yes" {
				t.Fatalf("after a quiet block: api_available %q, want yes", b.Available)
			}
			if res := get(t, url); res.Status != http.StatusOK {
				t.Fatalf("after the block: status %d", res.Status)
			}
		})
	}
}

// TestThrottleStatusUnverifiedBlocked: a caller the gateway has not verified yet, whose address is blocked by an
// ip policy, asks rate_throttle_status: 200 with the time left, as for any caller, and the question does not
// restart the block.
func TestThrottleStatusUnverifiedBlocked(t *testing.T) {
	t.Parallel()
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.Limiter = mirroredLimiter(t, clk, false, ratelimit.Policy{Name: "per-ip", Key: ratelimit.KeyIP, Limit: 2,
		Burst: 2, Period: 10 * time.Second, Algorithm: ratelimit.AlgorithmWindow, Block: time.Minute})
	gw := startGateway(t, opt)
	status := gw.URL + "/api2/demo/rate_throttle_status"
	// Wrong passwords are never remembered as verified: each call is charged to the address.
	for i := range 3 {
		do(t, http.MethodGet, gw.URL+"/api2/demo/re/1", "demo", "wrong"+strconv.Itoa(i), "")
	}
	for _, wantLeft := range []int{60, 50} {
		st := do(t, http.MethodGet, status, "demo", "demo", "")
		if st.Status != http.StatusOK {
			t.Fatalf("rate_throttle_status from a blocked address: status %d %q, want 200", st.Status, st.Body)
		}
		if b := testsupport.ReadThrottle(t, st.Body); b.Available != "no" || b.After != wantLeft {
			t.Fatalf("rate_throttle_status: api_available %q try_again_after %d, want no and %d", b.Available, b.After,
				wantLeft)
		}
		clk.Add(10 * time.Second)
	}
}
