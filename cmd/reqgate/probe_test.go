package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/gateway/certs/certstest"
	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// probeAccounts are two organisations behind the upstream: acme (the writer user) and globex (gina).
const probeAccounts = `accounts:
  - api_key: acme
    name: Acme
    users:
      - {username: writer, password: writer, email: w@acme.test, firstname: W, lastname: R}
  - api_key: globex
    name: Globex
    users:
      - {username: gina, password: gina, email: gina@globex.test, firstname: Gina, lastname: Globex}
`

// tlsFront serves TLS with pair's certificate on a free loopback port and relays the bytes of each connection
// to target, until the test ends: the upstream at target served over HTTPS, as a hosted service is behind its
// TLS terminator. It returns the port's address and the server names the clients sent (SNI) so far.
func tlsFront(t *testing.T, pair certstest.Pair, target string) (addr string, names func() []string) {
	t.Helper()
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		sni []string
	)
	conf := &tls.Config{Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			mu.Lock()
			sni = append(sni, hello.ServerName)
			mu.Unlock()
			return nil, nil
		}}
	addr = testsupport.ServeTCP(t, "127.0.0.1:0", func(raw net.Conn) {
		c := tls.Server(raw, conf)
		if err := c.Handshake(); err != nil {
			return // a client that does not trust the certificate: nothing is relayed
		}
		relayTo(c, target)
	})
	return addr, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), sni...)
	}
}

// TestGatewayProbesHTTPSUpstream runs `reqgate gateway --upstream https://...` with upstream.verify: probe in
// front of an upstream that sends no proof of authentication (`reqgate core` with core.auth_proof: false)
// served over HTTPS with a certificate of a test CA (upstream.tls.ca_file), and checks what a team putting the
// gateway in front of such a service relies on: a known credential reads (a miss, then a hit); a wrong
// password is 401 and never served from the cache a good one filled; valid credentials of one account are
// refused on another's api_key; a write passes and invalidates the cached read; JSON is translated;
// rate_throttle_status is answered. The upstream's certificate is verified for the URL's name, sent as SNI: a
// gateway without the CA file (the system's roots) is not ready, answers 502, never the data, sends no write,
// and logs the reason.
func TestGatewayProbesHTTPSUpstream(t *testing.T) {
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(probeAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	coreAddr := testbin.FreeAddr(t)
	core := start(t, "core", "--listen", coreAddr, "--admin-listen", "off", "--db", filepath.Join(dir, "core.db"),
		"--accounts", accounts, "--set", "core.auth_proof=false")
	waitReady(t, core, "http://"+coreAddr+"/readyz")
	if r, body := do(t, http.MethodGet, "http://"+coreAddr+"/api2/acme/user", "writer", ""); r.StatusCode != http.StatusOK ||
		r.Header.Get("Reqgate-Authenticated") != "" {
		t.Fatalf("the core with core.auth_proof: false: %d, proof %q, %s; want 200 without a proof",
			r.StatusCode, r.Header.Get("Reqgate-Authenticated"), body)
	}
	ca := certstest.Write(t, dir, "upstream")
	front, sni := tlsFront(t, ca, coreAddr)
	upstream := "https://localhost:" + strings.TrimPrefix(front, "127.0.0.1:")

	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	gw := start(t, "gateway", "--listen", listen, "--admin-listen", admin, "--upstream", upstream,
		"--set", "upstream.verify=probe", "--set", "upstream.tls.ca_file="+ca.CertFile)
	waitReady(t, gw, "http://"+admin+"/readyz")
	base := "http://" + listen + "/api2"
	c := client()

	// A known credential: the write passes, its record reads (a miss, then a hit).
	code, loc, err := call(c, http.MethodPost, base+"/acme/re", titleBody("first"))
	if err != nil || code != http.StatusCreated {
		t.Fatalf("create through the gateway: %d %v", code, err)
	}
	id := loc[strings.LastIndex(loc, "/")+1:]
	record := base + "/acme/re/" + id
	for i, want := range []string{"MISS", "HIT"} {
		if title, x := readTitle(t, c, record); title != "first" || x != want {
			t.Fatalf("read %d: %q, X-Cache %q; want first, %s", i+1, title, x, want)
		}
	}

	// Wrong or missing credentials after the good one filled the cache; another account's credentials; a
	// good credential on another account's api_key (whose read is cached as well).
	for i := range 2 {
		if a := send(t, c, base+"/globex/user", "gina", "gina"); a.status != http.StatusOK || (i == 1) != isHit(a) {
			t.Fatalf("gina's read %d of her own account: %d, X-Cache %q", i+1, a.status, a.header.Get("X-Cache"))
		}
	}
	for _, tt := range []struct{ name, url, user, pass string }{
		{"wrong password", record, "writer", "wrong"},
		{"no credentials", record, "", ""},
		{"another account's user", record, "gina", "gina"},
		{"a user of acme on globex's api_key", base + "/globex/user", "writer", "writer"},
	} {
		if a := send(t, c, tt.url, tt.user, tt.pass); a.status != http.StatusUnauthorized || isHit(a) {
			t.Errorf("%s: %d, X-Cache %q; want 401, never the cached read", tt.name, a.status, a.header.Get("X-Cache"))
		}
	}

	// A write invalidates the cached read.
	if r, body := do(t, http.MethodPut, record, "writer", titleBody("second")); r.StatusCode != http.StatusOK {
		t.Fatalf("update through the gateway: %d %s", r.StatusCode, body)
	}
	if title, x := readTitle(t, c, record); title != "second" || x != "MISS" {
		t.Fatalf("read after the update: %q, X-Cache %q; want second, MISS", title, x)
	}

	// JSON for a JSON-only client.
	r := testsupport.Do(t, c, http.MethodGet, record, "writer", "writer", "", "Accept: application/json")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("read in JSON: %d %q: %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	if title, _ := testsupport.JSONRecordValues(t, r.Body, "requirement")["field_101"].(string); title != "second" {
		t.Errorf("read in JSON: field_101 %q, want second: %s", title, r.Body)
	}

	if r, body := do(t, http.MethodGet, base+"/acme/rate_throttle_status", "writer", ""); r.StatusCode != http.StatusOK ||
		!strings.Contains(body, "<api_available>yes</api_available>") {
		t.Errorf("rate_throttle_status: %d %s, want 200, available", r.StatusCode, body)
	}
	if names := sni(); len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return n != "localhost" }) {
		t.Errorf("SNI sent to the upstream: %q, want the URL's localhost", names)
	}

	// The upstream's certificate is verified: without the CA file the gateway trusts the system's roots only,
	// so it is not ready and answers 502, never the data (nor plain text to the upstream's port).
	untrusting, untrustingAdmin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	ug := start(t, "gateway", "--listen", untrusting, "--admin-listen", untrustingAdmin, "--upstream", upstream,
		"--set", "upstream.verify=probe")
	waitReady(t, ug, "http://"+untrustingAdmin+"/healthz")
	if r, body := do(t, http.MethodGet, "http://"+untrustingAdmin+"/readyz", "", ""); r.StatusCode == http.StatusOK {
		t.Errorf("/readyz of the gateway that cannot verify its upstream: 200 %s", body)
	}
	for _, tt := range []struct{ method, body string }{{http.MethodGet, ""}, {http.MethodPut, titleBody("third")}} {
		r, body := do(t, tt.method, "http://"+untrusting+"/api2/acme/re/"+id, "writer", tt.body)
		if r.StatusCode != http.StatusBadGateway || strings.Contains(body, "second") {
			t.Errorf("%s through the gateway without the CA file: %d %s, want 502", tt.method, r.StatusCode, body)
		}
	}
	// The operator is told why.
	waitLog(t, ug, func(rec map[string]any) bool {
		err, _ := rec["err"].(string)
		return rec["msg"] == "upstream request failed" && strings.Contains(err, "certificate signed by unknown authority")
	})
	if _, body := do(t, http.MethodGet, "http://"+coreAddr+"/api2/acme/re/"+id, "writer", ""); !strings.Contains(body, "second") {
		t.Errorf("the record at the core after the write the gateway could not send: %s, want second", body)
	}
}

// TestGatewayProbesHTTPSUpstreamThrottle puts `reqgate gateway` with upstream.verify: probe in front of an
// upstream over HTTPS that has the mirrored service's throttle (`reqgate serve` with the window-and-block policy
// answering 503, as docs/api.md gives it, behind a TLS terminator): once the upstream answers the account's call
// with 503 Request_Throttled, the gateway sends none of the account's calls (the credential's probe was one of
// them) until the block ends. It answers them itself with the same status and the time left, and
// rate_throttle_status says the account is blocked, so that a client's retries never restart the upstream's
// block. (That cached reads are served meanwhile is gateway.TestUpstreamThrottleRespected's.)
func TestGatewayProbesHTTPSUpstreamThrottle(t *testing.T) {
	dir := t.TempDir()
	upAddr := serveMirroredThrottle(t, 4)
	ca := certstest.Write(t, dir, "upstream")
	front, _ := tlsFront(t, ca, upAddr)

	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	gw := start(t, "gateway", "--listen", listen, "--admin-listen", admin,
		"--upstream", "https://localhost:"+strings.TrimPrefix(front, "127.0.0.1:"),
		"--set", "upstream.verify=probe", "--set", "upstream.tls.ca_file="+ca.CertFile)
	waitReady(t, gw, "http://"+admin+"/readyz")
	base := "http://" + listen + "/api2/demo"
	var b testsupport.Throttle
	// The probe of the credential and three reads are the upstream's four calls of the window.
	for _, path := range []string{"/re/1", "/user", "/object"} {
		if r, body := do(t, http.MethodGet, base+path, "demo", ""); r.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.StatusCode, body)
		}
	}
	r, body := do(t, http.MethodGet, base+"/re/view", "demo", "")
	b = testsupport.ReadThrottle(t, body)
	if r.StatusCode != http.StatusServiceUnavailable || b.Code != "Request_Throttled" || b.After != 600 {
		t.Fatalf("the call past the upstream's limit: %d %s, want its 503 Request_Throttled after 600 s", r.StatusCode, body)
	}
	sent := metricSum(scrape(t, admin), "reqgate_gateway_upstream_requests_total")

	// While the upstream blocks the account its calls are answered by the gateway, reads of the upstream's too
	// (its answers are Cache-Control: private, a gateway's, so none was cached here).
	for _, path := range []string{"/re/view", "/re/1", "/re/2"} {
		r, body := do(t, http.MethodGet, base+path, "demo", "")
		b = testsupport.ReadThrottle(t, body)
		if r.StatusCode != http.StatusServiceUnavailable || b.Code != "Request_Throttled" || b.After < 1 || b.After > 600 ||
			r.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s while blocked: %d Retry-After %q %s, want 503 Request_Throttled with the time left",
				path, r.StatusCode, r.Header.Get("Retry-After"), body)
		}
	}
	r, body = do(t, http.MethodGet, base+"/rate_throttle_status", "demo", "")
	b = testsupport.ReadThrottle(t, body)
	if r.StatusCode != http.StatusOK || b.Available != "no" || b.After < 1 || b.After > 600 {
		t.Errorf("rate_throttle_status while blocked: %d %s, want 200, not available, the time left", r.StatusCode, body)
	}
	if after := metricSum(scrape(t, admin), "reqgate_gateway_upstream_requests_total"); after != sent {
		t.Errorf("%v calls reached the upstream while it blocked the account, want none", after-sent)
	}
}
