package gateway

import (
	"net/http"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
)

// TestSingleFlight sends N concurrent reads of one uncached key with verified credentials: the core sees
// one request.
func TestSingleFlight(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	for _, u := range []string{"demo", "viewer"} {
		if res := do(t, http.MethodGet, gw.URL+"/api2/demo/object", u, u, ""); res.Status != 200 {
			t.Fatalf("verify %s: %d", u, res.Status)
		}
	}
	const n = 32
	before := gw.Stats().UpstreamRequests
	bodies := make([]string, n)
	parallel(n, func(i int) {
		u := []string{"demo", "viewer"}[i%2]
		res, err := send(http.MethodGet, gw.URL+"/api2/demo/re/view/1/search?created_by=1", u, u, "")
		if err != nil {
			t.Errorf("read %d: %v", i, err)
		} else if res.Status != 200 {
			t.Errorf("read %d: status %d", i, res.Status)
		}
		bodies[i] = res.Body
	})
	if got, want := gw.Stats().UpstreamRequests-before, uint64(1); got != want {
		t.Fatalf("upstream requests for %d concurrent misses=%d, want %d", n, got, want)
	}
	for i := range bodies {
		if bodies[i] != bodies[0] {
			t.Fatalf("read %d got a different body", i)
		}
	}
}

// TestSingleFlightUnverified sends concurrent first reads with one wrong credential: each is answered 401,
// and none is served another caller's data.
func TestSingleFlightUnverified(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	get(t, gw.URL+"/api2/demo/re/5") // cached for demo
	parallel(16, func(i int) {
		user, pass, want := "demo", "demo", 200
		if i%2 == 1 {
			user, pass, want = "viewer", "bad", 401
		}
		res, err := send(http.MethodGet, gw.URL+"/api2/demo/re/5", user, pass, "")
		if err != nil {
			t.Errorf("read %d as %s: %v", i, user, err)
		} else if res.Status != want {
			t.Errorf("read %d as %s: status=%d, want %d", i, user, res.Status, want)
		}
	})
}
