package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

func putTitle(t *testing.T, url, title string) {
	t.Helper()
	body := `<requirement><fields><field><name>field_101</name><value>` + title + `</value></field></fields></requirement>`
	if res := do(t, http.MethodPut, url, "demo", "demo", body); res.Status != http.StatusOK {
		t.Fatalf("PUT %s: %d %q", url, res.Status, res.Body)
	}
}

// startReplica runs a gateway with opt whose Redis client points at rs, as one replica of several.
func startReplica(t *testing.T, opt Options, rs *redistest.Server) *testGateway {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	opt.Redis = rdb
	return startGateway(t, opt)
}

// waitListening returns once b hears what a publishes and both serve hits: b's subscription may still be
// connecting after start, and a replica serves hits only once it has joined the bus.
func waitListening(t *testing.T, a, b *testGateway) {
	t.Helper()
	if !testsupport.WaitUntil(5*time.Second, func() bool {
		a.invalidate(cache.Write{Account: "probe"})
		return b.cache.Generation("probe") > 0
	}) {
		t.Fatal("replica B never received an invalidation")
	}
	for _, g := range []*testGateway{a, b} {
		if rb, ok := g.bus.(*cache.RedisBus); ok && !testsupport.WaitUntil(10*time.Second, rb.Serving) {
			t.Fatal("a replica never joined the bus")
		}
	}
}

// TestInvalidationAcrossReplicas writes through one replica and reads through another that shares a real
// Redis: the second replica drops its cached reads of the record within one second, and the reads that may
// show it (its kind's search, related items) too, but keeps what the write cannot change (another kind's
// records and searches, users).
func TestInvalidationAcrossReplicas(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	rs := redistest.Start(t)
	a, b := startReplica(t, cachedOptions(c), rs), startReplica(t, cachedOptions(c), rs)
	paths := []string{"/api2/demo/re/2", "/api/demo/re/2", "/api2/demo/re/search?field_103=2", "/api2/demo/re/2/related"}
	kept := []string{"/api2/demo/ft/2", "/api2/demo/ft/search?field_203=2", "/api2/demo/user", "/api2/demo/re/4"}
	for _, p := range append(kept, paths...) {
		get(t, b.URL+p)
		if res := get(t, b.URL+p); res.Header.Get("X-Cache") != "HIT" {
			t.Fatalf("replica B did not cache %s", p)
		}
	}
	waitListening(t, a, b)

	putTitle(t, a.URL+"/api2/demo/re/2", "Changed through replica A")
	if got := get(t, a.URL+"/api2/demo/re/2"); !strings.Contains(got.Body, "Changed through replica A") {
		t.Fatalf("replica A serves the old version after its own write: %q", got.Body)
	}
	written := time.Now()
	for _, p := range paths[:2] {
		if !testsupport.WaitUntil(time.Second-time.Since(written), func() bool {
			return strings.Contains(get(t, b.URL+p).Body, "Changed through replica A")
		}) {
			t.Fatalf("replica B still serves the old %s one second after the write", p)
		}
	}
	for _, p := range paths[2:] {
		if got := get(t, b.URL+p).Header.Get("X-Cache"); got == "HIT" {
			t.Errorf("replica B still has %s cached after the write", p)
		}
	}
	for _, p := range kept {
		if got := get(t, b.URL+p).Header.Get("X-Cache"); got != "HIT" {
			t.Errorf("replica B dropped %s, which the write cannot change: X-Cache=%q", p, got)
		}
	}
}

// TestInvalidationOnlyOnSuccess checks that a refused write leaves the cache alone, and a successful one on
// another account's key leaves this account's entries alone.
func TestInvalidationOnlyOnSuccess(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	url := gw.URL + "/api2/demo/re/3"
	get(t, url)
	body := `<requirement><fields><field><name>field_101</name><value>x</value></field></fields></requirement>`
	if res := do(t, http.MethodPut, url, "demo", "wrong", body); res.Status != http.StatusUnauthorized {
		t.Fatalf("PUT with a wrong password: %d", res.Status)
	}
	if res := do(t, http.MethodPut, gw.URL+"/api2/demo/re/9999", "demo", "demo", body); res.Status != http.StatusNotFound {
		t.Fatalf("PUT of a missing record: %d", res.Status)
	}
	if got, want := get(t, url).Header.Get("X-Cache"), "HIT"; got != want {
		t.Fatalf("X-Cache=%q after refused writes, want %q", got, want)
	}
}

// TestNoCacheBypass checks Cache-Control: no-cache: the read goes to the core (BYPASS) and refreshes the entry.
func TestNoCacheBypass(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	url := gw.URL + "/api2/demo/re/4"
	get(t, url)
	before := gw.Stats().UpstreamRequests
	for _, h := range []string{"Cache-Control: no-cache", "Pragma: no-cache", "Cache-Control: max-age=0"} {
		res := get(t, url, h)
		if got, want := res.Header.Get("X-Cache"), "BYPASS"; got != want {
			t.Errorf("%s: X-Cache=%q, want %q", h, got, want)
		}
	}
	if got, want := gw.Stats().UpstreamRequests-before, uint64(3); got != want {
		t.Errorf("upstream requests=%d, want %d", got, want)
	}
	if got, want := get(t, url).Header.Get("X-Cache"), "HIT"; got != want {
		t.Errorf("plain read after bypass: X-Cache=%q, want %q", got, want)
	}
}
