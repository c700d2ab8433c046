package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// credentialBound is the longest a gateway on the core's Redis may keep accepting a password after the core's
// account file changed it; a polling deadline, not a timing measurement.
const credentialBound = 3 * time.Second

// TestCoreAccountChangeReachesGateways runs split mode with real processes: a `reqgate core` watching its
// account file with --redis, two `reqgate gateway`s on the same Redis that remember a credential for an hour
// and cache reads for an hour. A user's password is used through both gateways (the second read of each a
// cache hit, which the core never sees); then the account file changes the password. Within credentialBound
// the old password is refused on both gateways, without waiting for their auth.ttl, and the new one works.
func TestCoreAccountChangeReachesGateways(t *testing.T) {
	rds := redistest.Start(t)
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(reloadAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	core := startRole(t, "core", "reload:\n  watch: 50ms\n", "--accounts", accounts, "--redis", rds.URL())
	c := client()
	r := testsupport.Do(t, c, http.MethodPost, "http://"+core.listen+"/api2/acme/re", "alice", "alice-1", titleBody("x"))
	if r.Status != http.StatusCreated {
		t.Fatalf("create a record on the core: %d", r.Status)
	}
	path := "/api2/acme/re/1"

	var gateways []string
	for range 2 {
		addr, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
		p := start(t, "gateway", "--listen", addr, "--admin-listen", admin, "--upstream", "http://"+core.listen,
			"--redis", rds.URL(), "--set", "auth.ttl=1h", "--set", "cache.ttl=1h")
		waitReady(t, p, "http://"+admin+"/readyz")
		// Until its subscription is confirmed a gateway may miss a purge: the documented bus-down case (its
		// cache then serves only up to the bus-down TTL), not this test's.
		waitBusUp(t, admin)
		gateways = append(gateways, "http://"+addr)
	}
	for _, g := range gateways {
		for i := range 2 {
			a := send(t, c, g+path, "alice", "alice-1")
			if a.status != http.StatusOK {
				t.Fatalf("%s: alice-1 before the change: %d", g, a.status)
			}
			if i == 1 && !strings.HasPrefix(a.header.Get("X-Cache"), "HIT") {
				t.Fatalf("%s: the second read was not a cache hit (X-Cache %q): the test would not show a "+
					"remembered credential", g, a.header.Get("X-Cache"))
			}
		}
	}

	changed := strings.Replace(reloadAccounts, "password: alice-1", "password: alice-2", 1)
	tmp := accounts + ".new"
	if err := os.WriteFile(tmp, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, accounts); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(credentialBound)
	for _, g := range gateways {
		var a answer
		for {
			if a = send(t, c, g+path, "alice", "alice-1"); a.status == http.StatusUnauthorized || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if a.status != http.StatusUnauthorized {
			t.Errorf("%s: the old password still answered %d (X-Cache %q) %s after the account file changed it",
				g, a.status, a.header.Get("X-Cache"), credentialBound)
		}
		if a := send(t, c, g+path, "alice", "alice-2"); a.status != http.StatusOK {
			t.Errorf("%s: the new password: %d, want 200", g, a.status)
		}
	}
	core.waitReloads(t, "applied", 1)
}

// waitBusUp waits until the gateway with the admin listener admin reports its invalidation bus up.
func waitBusUp(t *testing.T, admin string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, text := do(t, http.MethodGet, "http://"+admin+"/metrics", "", ""); strings.Contains(text, "\nreqgate_cache_bus_up 1\n") {
			return
		}
	}
	t.Fatalf("the gateway on admin %s never reported reqgate_cache_bus_up 1", admin)
}

// TestCoreAccountChangeWithRedisDown reloads the account file of a `reqgate core` whose Redis is down: the
// change is applied all the same (the core refuses the old password and takes the new one), the reload is not
// refused, and the purge it could not publish is counted, so that an operator sees the gateways were not told.
func TestCoreAccountChangeWithRedisDown(t *testing.T) {
	rds := redistest.Start(t)
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(reloadAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	core := startRole(t, "core", "", "--accounts", accounts, "--redis", rds.URL())
	rds.Stop()
	changed := strings.Replace(reloadAccounts, "password: alice-1", "password: alice-2", 1)
	if err := os.WriteFile(accounts, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	core.reload(t, "applied", 1)
	url := "http://" + core.listen + "/api2/acme/user"
	if a := send(t, http.DefaultClient, url, "alice", "alice-1"); a.status != http.StatusUnauthorized {
		t.Errorf("the old password on the core: %d, want 401", a.status)
	}
	if a := send(t, http.DefaultClient, url, "alice", "alice-2"); a.status != http.StatusOK {
		t.Errorf("the new password on the core: %d, want 200", a.status)
	}
	_, text := do(t, http.MethodGet, "http://"+core.admin+"/metrics", "", "")
	if !strings.Contains(text, "\nreqgate_core_purge_publish_errors_total 1\n") {
		t.Errorf("the unpublished purge was not counted:\n%s", grepLines(text, "purge_publish"))
	}
	if !strings.Contains(core.p.Output.String(), "the gateways were not told of an account change") {
		t.Error("the unpublished purge was not logged")
	}
}
