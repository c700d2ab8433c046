package gateway

import (
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestHealth checks /healthz (the process lives) and /readyz (the core and Redis answer) on the public
// listener.
func TestHealth(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	rs := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	opt := cachedOptions(c)
	opt.Redis = rdb
	gw := startGateway(t, opt)
	check := func(step string, wantHealthz, wantReadyz int) {
		t.Helper()
		if got := do(t, http.MethodGet, gw.URL+"/healthz", "", "", "").Status; got != wantHealthz {
			t.Errorf("%s: /healthz=%d, want %d", step, got, wantHealthz)
		}
		if got := do(t, http.MethodGet, gw.URL+"/readyz", "", "", "").Status; got != wantReadyz {
			t.Errorf("%s: /readyz=%d, want %d", step, got, wantReadyz)
		}
	}
	check("all up", 200, 200)
	rs.Stop()
	check("redis down", 200, 503)
	rs.Restart(t)
	c.Stop()
	check("core down", 200, 503)
	c.Restart(t)
	check("all back", 200, 200)
}
