package gateway

import (
	"encoding/base64"
	"net/http"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestPurgeAcrossReplicas purges an account through one replica: on both, its cached reads are gone and its
// remembered credentials forgotten (the next request is checked with the core again), while another account
// keeps its entries and credentials.
func TestPurgeAcrossReplicas(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	rs := redistest.Start(t)
	a, b := startReplica(t, cachedOptions(c), rs), startReplica(t, cachedOptions(c), rs)
	waitListening(t, a, b)
	for _, gw := range []*testGateway{a, b} {
		for range 2 {
			do(t, http.MethodGet, gw.URL+"/api2/acme/re/1", "alice", "alice-secret", "")
			do(t, http.MethodGet, gw.URL+"/api2/globex/re/1", "gina", "gina-secret", "")
		}
	}
	users := map[string]string{"acme": "alice:alice-secret", "globex": "gina:gina-secret"}
	remembered := func(gw *testGateway, account string) int {
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(users[account]))
		if _, ok := gw.creds.check([]byte(auth), account, time.Now()); ok {
			return 1
		}
		return 0
	}
	if remembered(b, "acme") != 1 || remembered(b, "globex") != 1 {
		t.Fatalf("before the purge: acme %d, globex %d credentials remembered", remembered(b, "acme"), remembered(b, "globex"))
	}
	a.Purge("acme")
	for name, gw := range map[string]*testGateway{"purging replica": a, "other replica": b} {
		if !testsupport.WaitUntil(5*time.Second, func() bool { return remembered(gw, "acme") == 0 }) {
			t.Errorf("%s: acme's credential still remembered", name)
		}
		if remembered(gw, "globex") != 1 {
			t.Errorf("%s: globex's credential forgotten too", name)
		}
		before := gw.Stats().UpstreamRequests
		if res := do(t, http.MethodGet, gw.URL+"/api2/acme/re/1", "alice", "alice-secret", ""); res.Header.Get("X-Cache") != "MISS" {
			t.Errorf("%s: acme's read after the purge: X-Cache %q, want MISS", name, res.Header.Get("X-Cache"))
		}
		if n := gw.Stats().UpstreamRequests - before; n != 2 {
			t.Errorf("%s: %d requests to the core for acme's read after the purge, want 2 (the credential, the read)", name, n)
		}
		if res := do(t, http.MethodGet, gw.URL+"/api2/globex/re/1", "gina", "gina-secret", ""); res.Header.Get("X-Cache") != "HIT" {
			t.Errorf("%s: globex's read after acme's purge: X-Cache %q, want HIT", name, res.Header.Get("X-Cache"))
		}
	}
}
