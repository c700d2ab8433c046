package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/accounts"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestRefreshAhead: a remembered credential used past half its TTL is re-verified in the background, so the
// first request after the original expiry is served without asking the core (no request waits for the
// routine re-verification); and a credential whose password changed meanwhile is forgotten by that refresh,
// before its TTL runs out.
func TestRefreshAhead(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	clk := testsupport.NewClock(time.Now())
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
	prov, err := accounts.Parse("changed.yaml", []byte(strings.Replace(testsupport.TwoAccounts, "password: alice-secret", "password: alice-new", 1)))
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

// TestRefreshBackoff: while the core does not answer, a credential used past half its TTL is still served from
// what the gateway remembers, and its background refresh is tried once per refreshRetry, not once per request;
// when the core answers again, the next refresh renews the credential, so it outlives its first expiry without
// a request waiting for a verification.
func TestRefreshBackoff(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	// hung is closed when the core comes back: until then the "hangs" case holds its requests unanswered.
	var hung chan struct{}
	for _, tc := range []struct {
		name string
		fail func(w http.ResponseWriter) // how the core fails a request while down
	}{
		{"503", func(w http.ResponseWriter) { http.Error(w, "down", http.StatusServiceUnavailable) }},
		{"connection dropped", func(w http.ResponseWriter) {
			if nc, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = nc.Close()
			}
		}},
		// No answer for longer than the reads take (the upstream timeout is a minute): a read that waited for
		// the refresh would not finish, and no second attempt starts while the first still waits.
		{"hangs", func(w http.ResponseWriter) {
			<-hung
			http.Error(w, "down", http.StatusServiceUnavailable)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hung = make(chan struct{})
			var release sync.Once
			recovered := func() { release.Do(func() { close(hung) }) }
			// Between the gateway and the core: counts the credential checks (GET of the account's base URL) and, while
			// down, fails every request as the case says.
			var down atomic.Bool
			var checks, answered atomic.Int64
			front := frontCore(t, c.URL, func(w http.ResponseWriter, r *http.Request) bool {
				check := r.URL.Path == "/api2/acme/"
				if check {
					checks.Add(1)
				}
				if down.Load() {
					tc.fail(w)
					return true
				}
				if check {
					answered.Add(1)
				}
				return false
			})
			t.Cleanup(recovered) // the held requests end

			clk := testsupport.NewClock(time.Now())
			opt := cachedOptions(c)
			opt.Upstreams = []string{front}
			opt.Now = clk.Now
			opt.AuthTTL = 10 * time.Second
			opt.Cache.TTL = time.Hour
			opt.UpstreamTimeout = time.Minute
			gw := startGateway(t, opt)
			read := func(t *testing.T) int {
				t.Helper()
				return do(t, http.MethodGet, gw.URL+"/api2/acme/re/1", "alice", "alice-secret", "").Status
			}
			if got := read(t); got != http.StatusOK { // verified, then fetched and cached
				t.Fatalf("first read: %d", got)
			}

			down.Store(true)
			clk.Add(6 * time.Second) // past half the TTL, within it
			// Attempts are counted by the gateway: the proxy may see two requests of one (fasthttp's client retries a
			// GET once on a reused connection that was dropped).
			before := gw.upstreamCalls.Load()
			const reads = 100
			start := time.Now()
			for range reads {
				if got := read(t); got != http.StatusOK {
					t.Fatalf("read while the core is down, within the credential's TTL: %d, want 200", got)
				}
			}
			// The refresh runs in the background: on a loaded machine its attempt may start after the reads.
			for wait := time.Now().Add(5 * time.Second); gw.upstreamCalls.Load() == before && time.Now().Before(wait); {
				time.Sleep(time.Millisecond)
			}
			// One attempt per refreshRetry that passed during the reads, and the first.
			allowed := int64(time.Since(start)/refreshRetry) + 1
			if tried := int64(gw.upstreamCalls.Load() - before); tried < 1 || tried > allowed {
				t.Errorf("%d reads while the core was down made %d refresh attempts, want 1 to %d (one per %v)",
					reads, tried, allowed, refreshRetry)
			}

			down.Store(false)
			recovered()
			deadline := time.Now().Add(30 * time.Second)
			for answered.Load() < 2 { // the first verification, then a refresh once the retry wait is over
				if time.Now().After(deadline) {
					t.Fatal("no refresh reached the core within 30s after it came back")
				}
				read(t)
				time.Sleep(20 * time.Millisecond)
			}
			waitIdle := time.Now().Add(30 * time.Second)
			for busy := true; busy && time.Now().Before(waitIdle); {
				busy = false
				gw.refreshing.Range(func(any, any) bool { busy = true; return false })
				time.Sleep(5 * time.Millisecond)
			}
			n := checks.Load()
			clk.Add(4500 * time.Millisecond) // 10.5s: past the first proof's expiry; the refreshed one (at 6s) is under half its TTL old
			if got := read(t); got != http.StatusOK {
				t.Fatalf("read after the first expiry: %d", got)
			}
			if got := checks.Load(); got != n {
				t.Errorf("the read after the first expiry asked the core to verify the credential (%d checks, want %d)", got, n)
			}
		})
	}
}
