package main

import (
	"fmt"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// These tests reload the configuration of the real binary with SIGHUP, as an operator would after editing
// the --config file or an account file.

// reloadNode is a running `serve` whose config file a test rewrites.
type reloadNode struct {
	p      *proc
	config string // path of the --config file
	listen string
	admin  string
}

// startReloadable starts `serve` on a fresh store with the config file yaml (listen and admin_listen are
// added to it unless it names them) and extra flags, and waits until it is ready.
func startReloadable(t *testing.T, yaml string, extra ...string) *reloadNode {
	t.Helper()
	return startRole(t, "serve", yaml, extra...)
}

// startRole is startReloadable for role serve or core.
func startRole(t *testing.T, role, yaml string, extra ...string) *reloadNode {
	t.Helper()
	dir := t.TempDir()
	n := &reloadNode{config: filepath.Join(dir, "reqgate.yaml"), listen: testbin.FreeAddr(t), admin: testbin.FreeAddr(t)}
	if !strings.Contains(yaml, "listen:") {
		yaml = fmt.Sprintf("listen: %s\nadmin_listen: %s\n", n.listen, n.admin) + yaml
	}
	n.write(t, yaml)
	args := append([]string{role, "--db", filepath.Join(dir, "r.db"), "--config", n.config}, extra...)
	n.p = start(t, args...)
	waitReady(t, n.p, "http://"+n.admin+"/readyz")
	return n
}

// write replaces the config file atomically (a new file renamed over it), as an editor or a Kubernetes
// ConfigMap update does: a watching process never reads it half-written.
func (n *reloadNode) write(t *testing.T, yaml string) {
	t.Helper()
	tmp := n.config + ".new"
	if err := os.WriteFile(tmp, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, n.config); err != nil {
		t.Fatal(err)
	}
}

// reload sends SIGHUP and waits until the reload counter of result has moved to want.
func (n *reloadNode) reload(t *testing.T, result string, want int) {
	t.Helper()
	if err := n.p.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	n.waitReloads(t, result, want)
}

// waitReloads waits until the reload counter of result has reached want.
func (n *reloadNode) waitReloads(t *testing.T, result string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if reloads(t, n.admin, result) == want {
			return
		}
		select {
		case err := <-n.p.Done:
			n.p.Done <- err
			t.Fatalf("reqgate exited: %v", err)
		default:
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("reqgate_config_reloads_total{result=%q} did not reach %d within 30s", result, want)
}

// reloads reads reqgate_config_reloads_total{result} from /metrics (0 when absent).
func reloads(t *testing.T, admin, result string) int {
	t.Helper()
	_, text := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")
	m := regexp.MustCompile(`(?m)^reqgate_config_reloads_total\{result="` + result + `"\} (\d+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(m[1])
	return v
}

// answer is what a test reads of one response.
type answer struct {
	status int
	header http.Header
	reused bool // sent on a connection that had served a request before
}

// send sends a GET with Basic credentials user:pass through client, noting whether the connection was
// reused.
func send(t *testing.T, client *http.Client, url, user, pass string) answer {
	t.Helper()
	var a answer
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { a.reused = i.Reused }}
	req, err := testsupport.NewRequest(http.MethodGet, url, user, pass, "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := testsupport.Read(client, req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		t.Fatal(err)
	}
	a.status, a.header = r.Status, r.Header
	return a
}

const loosePolicy = "ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 1000, period: 1m}\n"

// TestReloadTightensRatePolicy tightens the rate policy of the config file and sends SIGHUP: the next
// requests are limited by the new policy, on the keep-alive connection that was open before the reload.
func TestReloadTightensRatePolicy(t *testing.T) {
	n := startReloadable(t, loosePolicy)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	url := "http://" + n.listen + "/api2/demo/re/1"
	if a := send(t, client, url, "demo", "demo"); a.status != http.StatusOK || a.header.Get("RateLimit-Policy") != `"account";q=1000;w=60` {
		t.Fatalf("before the reload: %d, RateLimit-Policy %q", a.status, a.header.Get("RateLimit-Policy"))
	}

	n.write(t, fmt.Sprintf("listen: %s\nadmin_listen: %s\nratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 3, period: 1h}\n", n.listen, n.admin))
	n.reload(t, "applied", 1)

	first := send(t, client, url, "demo", "demo")
	if !first.reused {
		t.Error("the first request after the reload did not go over the connection open before it")
	}
	if got := first.header.Get("RateLimit-Policy"); got != `"account";q=3;w=3600` {
		t.Errorf("after the reload: RateLimit-Policy %q, want the new policy", got)
	}
	limited := false
	for range 4 {
		if a := send(t, client, url, "demo", "demo"); a.status == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Error("five requests after the reload, none was limited by the policy of 3 an hour")
	}
}

// TestReloadRefusesInvalidFile rewrites the config file with a policy that can never admit: the reload is
// refused with the reason in an error line, counted, and the old policy stays in force.
func TestReloadRefusesInvalidFile(t *testing.T) {
	n := startReloadable(t, loosePolicy)
	n.write(t, fmt.Sprintf("listen: %s\nadmin_listen: %s\nratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 0, period: 1h}\n", n.listen, n.admin))
	n.reload(t, "refused", 1)

	if got := reloads(t, n.admin, "applied"); got != 0 {
		t.Errorf("applied reloads %d, want 0", got)
	}
	out := n.p.Output.String()
	if !regexp.MustCompile(`"level":"ERROR","msg":"configuration reload refused[^\n]*ratelimit.policies\[0\].limit`).MatchString(out) {
		t.Errorf("no error line naming the refused key:\n%s", out)
	}
	url := "http://" + n.listen + "/api2/demo/re/1"
	if a := send(t, http.DefaultClient, url, "demo", "demo"); a.status != http.StatusOK || a.header.Get("RateLimit-Policy") != `"account";q=1000;w=60` {
		t.Errorf("after the refusal: %d, RateLimit-Policy %q, want 200 under the old policy", a.status, a.header.Get("RateLimit-Policy"))
	}
}

const reloadAccounts = `
accounts:
  - api_key: acme
    name: Acme
    users:
      - {id: 1, username: alice, password: alice-1, email: alice@acme.test}
`

// TestReloadAccountFiles adds a user to an account file and changes another's password, then sends SIGHUP:
// the new user signs in without a restart, and the old password is refused through the gateway, which had
// remembered it (auth.ttl) before the reload.
func TestReloadAccountFiles(t *testing.T) {
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(reloadAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startReloadable(t, "", "--accounts", accounts)
	url := "http://" + n.listen + "/api2/acme/user"
	for range 2 { // the second answered from what the gateway remembers
		if a := send(t, http.DefaultClient, url, "alice", "alice-1"); a.status != http.StatusOK {
			t.Fatalf("alice before the reload: %d", a.status)
		}
	}
	if a := send(t, http.DefaultClient, url, "bob", "bob-1"); a.status != http.StatusUnauthorized {
		t.Fatalf("bob before the reload: %d, want 401", a.status)
	}

	changed := strings.Replace(reloadAccounts, "password: alice-1", "password: alice-2", 1) +
		"      - {id: 2, username: bob, password: bob-1, email: bob@acme.test}\n"
	if err := os.WriteFile(accounts, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	n.reload(t, "applied", 1)

	tests := []struct {
		user, pass string
		want       int
	}{
		{"bob", "bob-1", http.StatusOK},
		{"alice", "alice-1", http.StatusUnauthorized},
		{"alice", "alice-2", http.StatusOK},
	}
	for _, tt := range tests {
		if a := send(t, http.DefaultClient, url, tt.user, tt.pass); a.status != tt.want {
			t.Errorf("%s:%s after the reload: %d, want %d", tt.user, tt.pass, a.status, tt.want)
		}
	}
	if !strings.Contains(n.p.Output.String(), `"msg":"account files applied"`) {
		t.Error("the reload did not log the account files it applied")
	}
}

// TestReloadRestartKeysAndLogLevel changes listen, which needs a restart, and log.level, which does not:
// the reload warns that listen needs a restart and serves on on the old port, and the access log, off at
// level warn, comes on at info.
func TestReloadRestartKeysAndLogLevel(t *testing.T) {
	n := startReloadable(t, "log:\n  level: warn\n")
	url := "http://" + n.listen + "/api2/demo/re/1"
	accessLine := regexp.MustCompile(`"msg":"request"[^\n]*"path":"/api2/demo/re/1"`)
	send(t, http.DefaultClient, url, "demo", "demo")

	moved := testbin.FreeAddr(t)
	n.write(t, fmt.Sprintf("listen: %s\nadmin_listen: %s\nlog:\n  level: info\n", moved, n.admin))
	n.reload(t, "applied", 1)

	// The warning flushed every line written before it: a request line of the request before the reload
	// would be there. The process's output reaches the test through a pipe, so the warning, logged before the
	// reload is counted, may still be on its way.
	out := n.p.Output.String()
	for wait := time.Now().Add(5 * time.Second); !strings.Contains(out, "needs a restart") && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
		out = n.p.Output.String()
	}
	if i := strings.Index(out, "needs a restart"); i < 0 || accessLine.MatchString(out[:i]) {
		t.Fatalf("an access log line at level warn, or no warning:\n%s", out)
	}
	if !regexp.MustCompile(`"level":"WARN","msg":"configuration reload: listen changed and needs a restart`).MatchString(out) {
		t.Errorf("no warning that listen needs a restart:\n%s", out)
	}
	if a := send(t, http.DefaultClient, url, "demo", "demo"); a.status != http.StatusOK {
		t.Errorf("the old port after the reload: %d", a.status)
	}
	if _, err := http.Get("http://" + moved + "/healthz"); err == nil {
		t.Errorf("something answers on the new listen address %s before a restart", moved)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !accessLine.MatchString(n.p.Output.String()) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !accessLine.MatchString(n.p.Output.String()) {
		t.Errorf("no access log line after log.level became info:\n%s", n.p.Output.String())
	}
}

// TestReloadWatchSeesChangesDuringStart changes the config file while the process starts (after it read the
// file, before it serves): the change is applied once it serves, not missed because the watch began later.
func TestReloadWatchSeesChangesDuringStart(t *testing.T) {
	dir := t.TempDir()
	n := &reloadNode{config: filepath.Join(dir, "reqgate.yaml"), listen: testbin.FreeAddr(t), admin: testbin.FreeAddr(t)}
	head := fmt.Sprintf("listen: %s\nadmin_listen: %s\nreload:\n  watch: 50ms\n", n.listen, n.admin)
	n.write(t, head+loosePolicy)
	n.p = start(t, "serve", "--db", filepath.Join(dir, "r.db"), "--config", n.config)
	// The admin listener starts after the file was read, before the store is opened and the demo account
	// provisioned: a window of its own in every start.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(n.p.Output.String(), "admin listening") {
		if time.Now().After(deadline) {
			t.Fatal("no admin listener within 30s")
		}
		time.Sleep(time.Millisecond)
	}
	n.write(t, head+"ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 3, period: 1h}\n")
	waitReady(t, n.p, "http://"+n.admin+"/readyz")
	url := "http://" + n.listen + "/api2/demo/re/1"
	const want = `"account";q=3;w=3600`
	got := ""
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got = send(t, http.DefaultClient, url, "demo", "demo").header.Get("RateLimit-Policy"); got == want {
			return
		}
	}
	t.Errorf("RateLimit-Policy %q 10s after the start, want the policy of the changed file %q", got, want)
}

// TestReloadWatchesConfigFile sets reload.watch: a tightened policy written to the config file is applied
// without a signal, and a file that does not validate is refused once, not at every check.
func TestReloadWatchesConfigFile(t *testing.T) {
	const watch = "reload:\n  watch: 50ms\n"
	n := startReloadable(t, watch+loosePolicy)
	head := fmt.Sprintf("listen: %s\nadmin_listen: %s\n%s", n.listen, n.admin, watch)
	n.write(t, head+"ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 3, period: 1h}\n")
	n.waitReloads(t, "applied", 1)
	url := "http://" + n.listen + "/api2/demo/re/1"
	if got := send(t, http.DefaultClient, url, "demo", "demo").header.Get("RateLimit-Policy"); got != `"account";q=3;w=3600` {
		t.Errorf("after the file changed: RateLimit-Policy %q, want the new policy", got)
	}

	n.write(t, head+"ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 0, period: 1h}\n")
	n.waitReloads(t, "refused", 1)
	// A change of the file after the refusal is noticed: the refused one was not tried again meanwhile.
	n.write(t, head+"ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 4, period: 1h}\n")
	n.waitReloads(t, "applied", 2)
	if got := reloads(t, n.admin, "refused"); got != 1 {
		t.Errorf("refused reloads %d, want 1: an unchanged refused file was tried again", got)
	}
}

// TestReloadCoreTrustedProxies reloads server.trusted_proxies of a `reqgate core`: from then on the core
// believes the X-Forwarded-Proto and -Host of the listed network for Location.
func TestReloadCoreTrustedProxies(t *testing.T) {
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(reloadAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	n := startRole(t, "core", "", "--accounts", accounts)
	create := func() string {
		req, err := http.NewRequest(http.MethodPost, "http://"+n.listen+"/api2/acme/re",
			strings.NewReader(`<requirement><fields><field><name>field_101</name><value>x</value></field></fields></requirement>`))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", "alice-1")
		req.Header.Set("Content-Type", "application/xml")
		req.Header.Set("X-Forwarded-Proto", "https")
		req.Header.Set("X-Forwarded-Host", "api.example.com")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: status %d", resp.StatusCode)
		}
		return resp.Header.Get("Location")
	}
	if loc := create(); !strings.HasPrefix(loc, "http://"+n.listen+"/") {
		t.Fatalf("before the reload: Location %q, want the core's own address", loc)
	}
	n.write(t, fmt.Sprintf("listen: %s\nadmin_listen: %s\nserver:\n  trusted_proxies: [127.0.0.1]\n", n.listen, n.admin))
	n.reload(t, "applied", 1)
	if loc := create(); !strings.HasPrefix(loc, "https://api.example.com/") {
		t.Errorf("after the reload: Location %q, want https://api.example.com/...", loc)
	}
}
