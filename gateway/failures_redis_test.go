package gateway

import (
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestFailedLoginLimitAcrossReplicas checks that with Redis the failed-login limits hold across replicas:
// wrong passwords spread over two gateways reach the per-username limit together. With Redis gone, each
// replica still counts the failures it saw itself.
func TestFailedLoginLimitAcrossReplicas(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	rs := redistest.Start(t)
	var gws [2]*testGateway
	for i := range gws {
		opt := cachedOptions(c)
		opt.MaxUserFailures, opt.MaxIPFailures = 3, 100
		rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
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
	// The second gateway saw one failure of alice's itself; the other two came from the first.
	for gw := range gws {
		if got := attempt(gw, "alice"); got != http.StatusTooManyRequests {
			t.Errorf("gateway %d after 3 failures across replicas: status %d, want 429", gw, got)
		}
	}

	rs.Stop()
	for n := range 3 {
		if got := attempt(0, "mallory"); got != http.StatusUnauthorized {
			t.Fatalf("failure %d without Redis: status %d, want 401", n+1, got)
		}
	}
	if got := attempt(0, "mallory"); got != http.StatusTooManyRequests {
		t.Errorf("without Redis, the replica that saw 3 failures: status %d, want 429", got)
	}
	if got := attempt(1, "mallory"); got != http.StatusUnauthorized {
		t.Errorf("without Redis, a replica that saw none: status %d, want 401 (its own count only)", got)
	}
}
