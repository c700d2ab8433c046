package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestAuthBeforeCache checks that a cached read is only ever served to a credential the core accepted.
func TestAuthBeforeCache(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	gw := startGateway(t, cachedOptions(c))
	acme := gw.URL + "/api2/acme/re/1"
	// Fill the cache and check it serves alice.
	do(t, http.MethodGet, acme, "alice", "alice-secret", "")
	if res := do(t, http.MethodGet, acme, "alice", "alice-secret", ""); res.Header.Get("X-Cache") != "HIT" {
		t.Fatalf("cache not filled: X-Cache=%q", res.Header.Get("X-Cache"))
	}
	for _, tc := range []struct {
		name       string
		url        string
		user, pass string
		wantStatus int
		wantCache  string
	}{
		{"wrong password on a cached key", acme, "alice", "wrong", 401, "MISS"},
		{"no credentials on a cached key", acme, "", "", 401, "MISS"},
		{"unknown user on a cached key", acme, "mallory", "alice-secret", 401, "MISS"},
		{"another account's user on a cached key", acme, "gina", "gina-secret", 401, "MISS"},
		{"another account's key", gw.URL + "/api2/globex/re/1", "alice", "alice-secret", 401, "MISS"},
		{"unknown key", gw.URL + "/api2/nosuch/re/1", "alice", "alice-secret", 401, "MISS"},
		{"second user of the account shares the entry once verified", acme, "bob", "bob-secret", 200, "HIT"},
		{"second user then hits", acme, "bob", "bob-secret", 200, "HIT"},
		{"other account reads its own data", gw.URL + "/api2/globex/re/1", "gina", "gina-secret", 200, "MISS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := do(t, http.MethodGet, tc.url, tc.user, tc.pass, "")
			if got, want := res.Status, tc.wantStatus; got != want {
				t.Fatalf("status=%d, want %d (%q)", got, want, res.Body)
			}
			if got, want := res.Header.Get("X-Cache"), tc.wantCache; got != want {
				t.Errorf("X-Cache=%q, want %q", got, want)
			}
			if tc.wantStatus == 401 {
				if strings.Contains(res.Body, "secret plan") || strings.Contains(res.Body, "Globex plan") {
					t.Fatalf("refused caller got record data: %q", res.Body)
				}
				if !strings.Contains(res.Body, "<message>") {
					t.Errorf("401 body is not an XML error: %q", res.Body)
				}
			}
		})
	}
}

// TestFailedLoginLimit checks brute-force protection: after MaxUserFailures wrong passwords a username is
// refused with 429 and Retry-After, without asking the core, while a credential verified before still works.
func TestFailedLoginLimit(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	opt := cachedOptions(c)
	opt.MaxUserFailures, opt.MaxIPFailures = 3, 100
	gw := startGateway(t, opt)
	url := gw.URL + "/api2/acme/re/1"
	if res := do(t, http.MethodGet, url, "bob", "bob-secret", ""); res.Status != 200 {
		t.Fatalf("bob's first read: %d", res.Status)
	}
	for i := range 3 {
		if got, want := do(t, http.MethodGet, url, "alice", "guess", "").Status, 401; got != want {
			t.Fatalf("attempt %d: status=%d, want %d", i, got, want)
		}
	}
	before := gw.Stats().UpstreamRequests
	res := do(t, http.MethodGet, url, "alice", "guess", "")
	if got, want := res.Status, http.StatusTooManyRequests; got != want {
		t.Fatalf("attempt after the limit: status=%d, want %d", got, want)
	}
	if res.Header.Get("Retry-After") == "" || !strings.Contains(res.Body, "<message>") {
		t.Errorf("429 without Retry-After or XML message: %v %q", res.Header, res.Body)
	}
	if got := do(t, http.MethodGet, url, "alice", "alice-secret", "").Status; got != http.StatusTooManyRequests {
		t.Errorf("blocked username with the right password: status=%d, want 429 until the window ends", got)
	}
	if got := gw.Stats().UpstreamRequests - before; got != 0 {
		t.Errorf("blocked attempts reached the core %d times", got)
	}
	if got, want := do(t, http.MethodGet, url, "bob", "bob-secret", "").Status, 200; got != want {
		t.Errorf("verified user of the same account: status=%d, want %d", got, want)
	}
}

// TestFailedLoginLimitPerIP checks the per-IP limit across usernames.
func TestFailedLoginLimitPerIP(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	opt := cachedOptions(c)
	opt.MaxUserFailures, opt.MaxIPFailures = 100, 4
	gw := startGateway(t, opt)
	url := gw.URL + "/api2/acme/re/1"
	for range 10 { // requests without credentials are challenged, not counted
		if got := do(t, http.MethodGet, url, "", "", "").Status; got != 401 {
			t.Fatalf("no credentials: status=%d, want 401", got)
		}
	}
	for i, u := range []string{"u1", "u2", "u3", "u4"} {
		if got := do(t, http.MethodGet, url, u, "x", "").Status; got != 401 {
			t.Fatalf("attempt %d: status=%d, want 401", i, got)
		}
	}
	if got, want := do(t, http.MethodGet, url, "u5", "x", "").Status, http.StatusTooManyRequests; got != want {
		t.Fatalf("fifth username from one IP: status=%d, want %d", got, want)
	}
}
