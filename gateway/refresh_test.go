package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/coretest"
)

// TestRefreshAhead: a remembered credential used past half its TTL is re-verified in the background, so the
// first request after the original expiry is served without asking the core (no request waits for the
// routine re-verification); and a credential whose password changed meanwhile is forgotten by that refresh,
// before its TTL runs out.
func TestRefreshAhead(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: twoAccounts})
	clk := &testClock{now: time.Now()}
	opt := cachedOptions(c)
	opt.Now = clk.Now
	opt.AuthTTL = 10 * time.Second
	opt.Cache.TTL = time.Hour
	gw := startGateway(t, opt)
	url := gw.URL + "/api2/acme/re/1"

	// waitRefreshed waits until no refresh runs and the core has been asked n times in all.
	waitRefreshed := func(t *testing.T, n uint64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			busy := false
			gw.refreshing.Range(func(any, any) bool { busy = true; return false })
			if !busy && gw.upstreamCalls.Load() >= n {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatalf("no refresh within 30s (upstream calls %d, want %d)", gw.upstreamCalls.Load(), n)
	}
	read := func(t *testing.T, pass string) int {
		t.Helper()
		return do(t, http.MethodGet, url, "alice", pass, "").Status
	}

	if got := read(t, "alice-secret"); got != http.StatusOK { // verified, then fetched
		t.Fatalf("first read: %d", got)
	}
	calls := gw.upstreamCalls.Load()
	clk.Add(4 * time.Second)
	read(t, "alice-secret") // under half the TTL: a hit, nothing asked
	if got := gw.upstreamCalls.Load(); got != calls {
		t.Fatalf("a credential proved 4s ago (TTL 10s) was re-verified: %d upstream calls, want %d", got, calls)
	}
	clk.Add(2 * time.Second) // 6s: past half the TTL
	if got := read(t, "alice-secret"); got != http.StatusOK {
		t.Fatalf("read past half the TTL: %d", got)
	}
	waitRefreshed(t, calls+1)
	calls = gw.upstreamCalls.Load()
	clk.Add(4 * time.Second) // 10s: the first proof's expiry; the refreshed one (at 6s) is 4s old
	if got := read(t, "alice-secret"); got != http.StatusOK {
		t.Fatalf("read after the first expiry: %d", got)
	}
	if got := gw.upstreamCalls.Load(); got != calls {
		t.Errorf("the read after the first expiry asked the core (%d upstream calls, want %d): it waited for a verification", got, calls)
	}

	// alice's password changes in the core; the next refresh learns it and forgets the credential.
	prov, err := accounts.Parse("changed.yaml", []byte(strings.Replace(twoAccounts, "password: alice-secret", "password: alice-new", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Store.Apply(context.Background(), prov); err != nil {
		t.Fatal(err)
	}
	c.API.FlushCaches()
	clk.Add(2 * time.Second) // 12s: past half the refreshed TTL, within it
	read(t, "alice-secret")  // still trusted until the refresh answers
	waitRefreshed(t, calls+1)
	if got := read(t, "alice-secret"); got != http.StatusUnauthorized {
		t.Errorf("old password after the refresh learnt of the change: %d, want 401 before the TTL ran out", got)
	}
	if got := read(t, "alice-new"); got != http.StatusOK {
		t.Errorf("new password: %d", got)
	}
}
