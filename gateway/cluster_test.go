package gateway

import (
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestFailedLoginLimitOnCluster counts failed logins across two replicas on a Redis Cluster: the reservation
// script touches several counters at once (per user and address, per address, per user), which a cluster runs
// only when they share a hash slot, so the third failure through either replica locks the user on both.
func TestFailedLoginLimitOnCluster(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	cl := redistest.StartCluster(t, 0)
	var gws [2]*testGateway
	for i := range gws {
		opt := cachedOptions(c)
		opt.MaxUserFailures, opt.MaxIPFailures = 3, 100
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
		t.Cleanup(func() { rdb.Close() })
		opt.Redis = rdb
		gws[i] = startGateway(t, opt)
	}
	attempt := func(gw int, user string) int {
		t.Helper()
		return do(t, http.MethodGet, gws[gw].URL+"/api2/acme/re/1", user, "guess", "").Status
	}
	for n, gw := range []int{0, 0, 1} {
		if got := attempt(gw, "alice"); got != http.StatusUnauthorized {
			t.Fatalf("failure %d (gateway %d): status %d, want 401", n+1, gw, got)
		}
	}
	for gw := range gws {
		if got := attempt(gw, "alice"); got != http.StatusTooManyRequests {
			t.Errorf("gateway %d after 3 failures across replicas on a cluster: status %d, want 429", gw, got)
		}
	}
}
