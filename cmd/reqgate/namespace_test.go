package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// namespaceConfig is the config file of a deployment in the Redis namespace ns: one account policy of
// namespaceLimit requests an hour, and 3 failed logins allowed per username from one address.
func namespaceConfig(ns string) string {
	return "redis:\n  namespace: " + ns + "\n" +
		"ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: " + strconv.Itoa(namespaceLimit) +
		", period: 1h}\n" +
		"auth:\n  max_user_failures: 3\n"
}

// otherAccount is an account file with one account besides the demo.
const otherAccount = `accounts:
  - api_key: other
    name: Other
    users:
      - {username: olga, password: olga-secret, email: olga@other.test, firstname: Olga, lastname: Other}
`

// namespaceLimit is the account policy's limit in namespaceConfig.
const namespaceLimit = 10

// isHit reports whether a read was answered from the gateway's cache.
func isHit(a answer) bool { return strings.HasPrefix(a.header.Get("X-Cache"), "HIT") }

// purgeOn purges account through the admin listener admin; on a gateway it returns once the purge has come
// back on the gateway's own subscription, so every message published on that channel before it has been
// applied there too (a subscription is read and applied in order, on one goroutine).
func purgeOn(t *testing.T, admin, account string) {
	t.Helper()
	if resp, body := do(t, http.MethodPost, "http://"+admin+"/purge?account="+account, "", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /purge?account=%s on %s: %d %q", account, admin, resp.StatusCode, body)
	}
}

// TestRedisNamespacesKeepServesApart runs two `reqgate serve` deployments, alpha and beta, on one Redis
// database, each in its own redis.namespace, as two teams sharing a Redis would:
//   - a purge on alpha empties alpha's cache only: beta's entry stays a HIT. Without namespaces both subscribe to
//     the one channel reqgate:inval, and a purge on either empties both (pub/sub ignores database numbers, so
//     even separate databases would not keep them apart);
//   - alpha's failed-login counts are alpha's: a username blocked on alpha is not blocked on beta;
//   - alpha's rate counts are alpha's: with the account's limit spent on alpha, beta still admits the same
//     account;
//   - every key and channel in Redis is in one of the two namespaces.
func TestRedisNamespacesKeepServesApart(t *testing.T) {
	rds := redistest.Start(t)
	// The demo account, and another one for beta's purge below (a purge of an account the store does not hold is
	// refused, and publishes nothing).
	other := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(other, []byte(otherAccount), 0o600); err != nil {
		t.Fatal(err)
	}
	accounts := []string{"--accounts", filepath.Join("..", "..", "core", "accounts", "demo.yaml"), "--accounts", other}
	alpha := startRole(t, "serve", namespaceConfig("alpha"), append([]string{"--redis", rds.URL()}, accounts...)...)
	beta := startRole(t, "serve", namespaceConfig("beta"), append([]string{"--redis", rds.URL()}, accounts...)...)
	waitBusUp(t, alpha.admin)
	waitBusUp(t, beta.admin)
	c := client()
	read := func(n *reloadNode) answer { return send(t, c, "http://"+n.listen+"/api2/demo/re/1", "demo", "demo") }

	// The cache: both deployments hold the record, alpha purges it.
	for _, n := range []*reloadNode{alpha, beta} {
		read(n)
		if a := read(n); a.status != http.StatusOK || !isHit(a) {
			t.Fatalf("second read on %s: %d, X-Cache %q, want a 200 HIT", n.listen, a.status, a.header.Get("X-Cache"))
		}
	}
	purgeOn(t, alpha.admin, "demo")
	if a := read(alpha); a.status != http.StatusOK || isHit(a) {
		t.Fatalf("alpha after its purge: %d, X-Cache %q, want a 200 MISS", a.status, a.header.Get("X-Cache"))
	}
	// Beta's own purge of another account: once it returns, beta has applied whatever came before it on its
	// channel, so a purge of alpha's that reached beta shows now, without waiting for it.
	purgeOn(t, beta.admin, "other")
	if a := read(beta); a.status != http.StatusOK || !isHit(a) {
		t.Errorf("beta after alpha's purge: %d, X-Cache %q, want a 200 HIT: alpha's purge reached beta",
			a.status, a.header.Get("X-Cache"))
	}
	// alpha and beta have made 3 reads of the account each.

	// The failed logins: block a username on alpha.
	guess := func(n *reloadNode) int {
		return send(t, c, "http://"+n.listen+"/api2/demo/re/1", "mallory", "guess").status
	}
	for i := range 3 {
		if s := guess(alpha); s != http.StatusUnauthorized {
			t.Fatalf("wrong password %d on alpha: %d, want 401", i+1, s)
		}
	}
	if s := guess(alpha); s != http.StatusTooManyRequests {
		t.Fatalf("the 4th wrong password on alpha: %d, want 429", s)
	}
	if s := guess(beta); s != http.StatusUnauthorized {
		t.Errorf("the first wrong password on beta: %d, want 401: the deployments share their failed-login counts", s)
	}

	// The rate limits: spend the account's limit on alpha.
	limited := false
	for range namespaceLimit {
		if a := read(alpha); a.status == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatalf("alpha admitted more than its account policy (%d an hour)", namespaceLimit)
	}
	if a := read(beta); a.status != http.StatusOK {
		t.Errorf("beta, with 4 of its %d requests an hour used, after alpha spent its own: %d, want 200: "+
			"the deployments share their rate counts", namespaceLimit, a.status)
	}

	// What is in Redis.
	rdb := redis.NewClient(&redis.Options{Addr: rds.Addr})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"alpha:reqgate:rl:account:k:demo", "beta:reqgate:rl:account:k:demo"} {
		if !slices.Contains(keys, want) {
			t.Errorf("no key %s in Redis; keys: %q", want, keys)
		}
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "alpha:reqgate:") && !strings.HasPrefix(k, "beta:reqgate:") {
			t.Errorf("key %q is in neither namespace", k)
		}
	}
	channels, err := rdb.PubSubChannels(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	// Each serve's bus channel, and the acknowledgement channel of its replica (<channel>:ack:<origin>).
	for _, ns := range []string{"alpha", "beta"} {
		if !slices.Contains(channels, ns+":reqgate:inval") {
			t.Errorf("channels subscribed in Redis: %q, none is %s's bus", channels, ns)
		}
	}
	for _, ch := range channels {
		if !strings.HasPrefix(ch, "alpha:reqgate:inval") && !strings.HasPrefix(ch, "beta:reqgate:inval") {
			t.Errorf("channel %q is in neither namespace", ch)
		}
	}
}

// TestCoreNamespaceReachesItsGateways runs split mode on one Redis: a `reqgate core` in namespace alpha with a
// gateway of alpha in front of it, and a gateway of another deployment, beta, on database 2 of the same Redis.
// A purge on the core (POST /purge, as a reload of its account files would) reaches alpha's gateway and not
// beta's: pub/sub ignores the database number, so only the namespace keeps beta's cache out of it.
func TestCoreNamespaceReachesItsGateways(t *testing.T) {
	rds := redistest.Start(t)
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(reloadAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	core := startRole(t, "core", "redis:\n  namespace: alpha\n", "--accounts", accounts, "--redis", rds.URL())
	gateway := func(ns, url string) (listen, admin string) {
		listen, admin = testbin.FreeAddr(t), testbin.FreeAddr(t)
		p := start(t, "gateway", "--listen", listen, "--admin-listen", admin, "--upstream", "http://"+core.listen,
			"--redis", url, "--set", "redis.namespace="+ns, "--set", "cache.ttl=1h")
		waitReady(t, p, "http://"+admin+"/readyz")
		waitBusUp(t, admin)
		return listen, admin
	}
	alpha, _ := gateway("alpha", rds.URL())
	beta, betaAdmin := gateway("beta", "redis://"+rds.Addr+"/2")
	c := client()
	read := func(listen string) answer { return send(t, c, "http://"+listen+"/api2/acme/user", "alice", "alice-1") }
	for _, g := range []string{alpha, beta} {
		read(g)
		if a := read(g); a.status != http.StatusOK || !isHit(a) {
			t.Fatalf("second read on %s: %d, X-Cache %q, want a 200 HIT", g, a.status, a.header.Get("X-Cache"))
		}
	}

	purgeOn(t, core.admin, "acme")
	// The core does not wait for its gateways to apply a purge, only for Redis to take it: poll alpha within
	// a bound, as a caller would see it.
	var a answer
	for deadline := time.Now().Add(credentialBound); ; time.Sleep(20 * time.Millisecond) {
		if a = read(alpha); !isHit(a) || time.Now().After(deadline) {
			break
		}
	}
	if a.status != http.StatusOK || isHit(a) {
		t.Errorf("alpha's gateway after the core's purge: %d, X-Cache %q, want a 200 MISS: the core's purge "+
			"did not reach its own gateway", a.status, a.header.Get("X-Cache"))
	}
	purgeOn(t, betaAdmin, "other") // see TestRedisNamespacesKeepServesApart
	if a := read(beta); a.status != http.StatusOK || !isHit(a) {
		t.Errorf("beta's gateway after alpha's core purged: %d, X-Cache %q, want a 200 HIT: another "+
			"deployment's purge reached it", a.status, a.header.Get("X-Cache"))
	}
}
