package gateway

import (
	"testing"
	"time"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestBusDownBoundsCachedReads stops Redis under a replica: once the replica cannot hear the other replicas'
// invalidations, its lease runs out and every read goes to the core, however fresh its entry (a write through
// another replica could not reach it); once Redis is back and the lease renewed, the cache TTL applies again.
func TestBusDownBoundsCachedReads(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	rs := redistest.Start(t)
	clk := testsupport.NewClock(time.Now())
	opt := cachedOptions(c)
	opt.Now = clk.Now
	opt.AuthTTL = time.Hour
	gw := startReplica(t, opt, rs)
	bus := gw.bus.(*cache.RedisBus)
	url := gw.URL + "/api2/demo/re/3"
	older := cache.DefaultBusDownTTL + time.Second // still well within the cache TTL

	// step reads url after advancing the clock and checks the answer's X-Cache and whether it reached the core.
	step := func(name string, advance time.Duration, want string) {
		t.Helper()
		clk.Add(advance)
		before := gw.Stats().UpstreamRequests
		res := get(t, url)
		if res.Status != 200 {
			t.Fatalf("%s: status %d", name, res.Status)
		}
		upstream := gw.Stats().UpstreamRequests - before
		if got := res.Header.Get("X-Cache"); got != want || (want == "HIT") != (upstream == 0) {
			t.Errorf("%s: X-Cache=%q with %d upstream requests, want %s", name, got, upstream, want)
		}
	}
	waitBus := func(up bool) {
		t.Helper()
		if !testsupport.WaitUntil(10*time.Second, func() bool { return bus.Up() == up && bus.Serving() == up }) {
			t.Fatalf("bus up=%v serving=%v, want %v", bus.Up(), bus.Serving(), up)
		}
	}

	waitBus(true)
	step("first read", 0, "MISS")
	step("bus up, older entry", older, "HIT")

	rs.Stop()
	waitBus(false)
	step("bus down, older entry", 0, "MISS")
	step("bus down, fresh entry", 0, "MISS")

	rs.Restart(t)
	waitBus(true)
	// The new subscription dropped every entry: messages of the outage may have been missed.
	step("bus back, first read", 0, "MISS")
	step("bus back, older entry", older, "HIT")
}
