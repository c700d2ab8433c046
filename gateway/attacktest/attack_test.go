// Package attacktest is the gateway's attack suite: each test plays an attacker against a real gateway in front
// of the real core (and real Redis where the attack involves it), over loopback, and checks that the gateway's
// promise holds. docs/security.md lists the threats and which test covers each; a change to the gateway runs
// them all in `make test`.
package attacktest

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/gatewaytest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// accounts are two organisations: the victim (acme) and another tenant (globex).
const accounts = testsupport.TwoAccounts

// secret is what only acme's users may read.
const secret = "Acme secret plan"

// serve runs a gateway with opt on a free loopback port (all of 127.0.0.1) until the test ends.
func serve(tb testing.TB, opt gateway.Options) (*gateway.Gateway, string) {
	tb.Helper()
	return gatewaytest.Serve(tb, opt)
}

// cached are the options of the default configuration in front of c, with the cache on.
func cached(c *coretest.Core) gateway.Options {
	return gatewaytest.With(gateway.Options{Upstreams: []string{c.URL}, Cache: gateway.CacheOptions{Enabled: true}})
}

// from is a client whose connections leave from the loopback address ip (127.0.0.0/8 is all ours).
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
}

var local = from("127.0.0.1")

// reply is a response read whole.
type reply = testsupport.Reply

// call sends a request as user:pass ("" sends no credentials) with headers "Key: value". It ends the test
// on a transport failure, so it is for the test's own goroutine; others use send.
func call(tb testing.TB, c *http.Client, method, url, user, pass, body string, headers ...string) reply {
	tb.Helper()
	return testsupport.Do(tb, c, method, url, user, pass, body, headers...)
}

// send is call returning the transport failure, for any goroutine.
func send(c *http.Client, method, url, user, pass, body string, headers ...string) (reply, error) {
	return testsupport.Send(c, method, url, user, pass, body, headers...)
}

// raw sends request bytes on a connection of its own and returns the status line's code (0 when the
// gateway closed the connection without answering).
func raw(tb testing.TB, addr, request string) int {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		tb.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// TestForgedCredentialAfterPreAuthAnswers plays the attacker who makes up a credential and first sends it
// where the core answers before it authenticates anything (an unknown version, a malformed target) or
// refuses after authenticating (an unknown segment, a bad id, a wrong method), hoping the gateway takes such
// an answer as proof of the credential. Whatever came before, the made-up credential must get 401 on a
// cached read of the account, never its data, in both cache scopes.
func TestForgedCredentialAfterPreAuthAnswers(t *testing.T) {
	inModes(t, testForgedCredentialAfterPreAuthAnswers)
}

func testForgedCredentialAfterPreAuthAnswers(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	probes := []struct{ method, target, body string }{
		{"GET", "/api3/acme/rate_throttle_status", ""},
		{"GET", "/api3/acme/re/1", ""},
		{"GET", "/api7/acme/user", ""},
		{"GET", "/api999/acme/re/1", ""},
		{"GET", "/api2/acme/nosuch", ""},
		{"GET", "/api2/acme/re/x", ""},
		{"GET", "/api2/acme/re/99999", ""},
		{"GET", "/api/acme/re/view", ""},
		{"GET", "/api/acme/re/1/related", ""},
		{"PATCH", "/api2/acme/re/1", ""},
		{"TRACE", "/api2/acme/re/1", ""},
		{"HEAD", "/api2/acme/re/1", ""},
		{"POST", "/api2/acme/rate_throttle_status", ""},
		{"DELETE", "/api2/acme/user/1", ""},
		{"POST", "/api3/acme/re", "<requirement/>"},
		{"PUT", "/api2/acme/re/1/x/y/z/w/v/u/t/s", "<requirement/>"},
		{"GET", "/api2/acme", ""},
		{"GET", "/api2/acme/", ""},
		{"GET", "/api2/acme/rate_throttle_status", ""},
	}
	malformed := []string{"/api2/acme/%zz", "/api2/acme/re/1?x=%zz", "http://gw/api3/acme/re/1", "/api2/ac%2Fme/re/1"}
	for _, scope := range []string{"account", "user"} {
		t.Run(scope, func(t *testing.T) {
			opt := m.cached(c)
			opt.Cache.Scope = scope
			opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = 1000, 1000, 1000
			g, url := serve(t, opt)
			target := url + "/api2/acme/re/1"
			for range 2 {
				if r := call(t, local, "GET", target, "alice", "alice-secret", ""); r.Status != 200 {
					t.Fatalf("alice's read: %d", r.Status)
				}
			}
			forged := [][2]string{{"mallory", "anything"}, {"alice", "guess"}, {"gina", "gina-secret"}}
			addr := strings.TrimPrefix(url, "http://")
			// Each probe, then at once the cached read with the same credential (a later refusal by the core
			// could make the gateway forget what an earlier probe made it believe).
			check := func(probe string, cr [2]string) {
				t.Helper()
				before := g.Stats().Cache.Hits
				r := call(t, local, "GET", target, cr[0], cr[1], "")
				if r.Status != http.StatusUnauthorized || strings.Contains(r.Body, secret) {
					t.Errorf("%s:%s after %s: status %d, X-Cache %q; want 401 without data",
						cr[0], cr[1], probe, r.Status, r.Header.Get("X-Cache"))
				}
				if hits := g.Stats().Cache.Hits - before; hits != 0 {
					t.Errorf("%s:%s after %s: served from the cache", cr[0], cr[1], probe)
				}
			}
			for _, p := range probes {
				for _, cr := range forged {
					call(t, local, p.method, url+p.target, cr[0], cr[1], p.body)
					check(p.method+" "+p.target, cr)
				}
			}
			for _, m := range malformed {
				raw(t, addr, "GET "+m+" HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic bWFsbG9yeTphbnl0aGluZw==\r\n\r\n")
				check("GET "+m, forged[0])
			}
			if r := call(t, local, "GET", target, "alice", "alice-secret", ""); r.Status != 200 || !strings.Contains(r.Body, secret) {
				t.Errorf("alice after the attack: %d", r.Status)
			}
		})
	}
}

// TestQuotaTheft plays the stranger who spends an account's quota: requests without credentials, or with
// wrong ones, must not be charged to the account's (or a user's) rate policies. They are limited by IP.
func TestQuotaTheft(t *testing.T) { inModes(t, testQuotaTheft) }

func testQuotaTheft(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{Policies: []ratelimit.Policy{
		{Name: "account", Key: "api_key", Limit: 5, Burst: 5, Period: time.Hour},
		{Name: "user", Key: "user", Limit: 5, Burst: 5, Period: time.Hour},
		{Name: "ip", Key: "ip", Limit: 40, Burst: 40, Period: time.Hour},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	opt := m.cached(c)
	opt.Limiter = l
	opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = 1000, 1000, 1000
	_, url := serve(t, opt)
	thief := from("127.0.0.7")
	for i := range 30 {
		user, pass := "", ""
		if i%2 == 1 {
			user, pass = "alice", fmt.Sprintf("guess-%d", i)
		}
		if r := call(t, thief, "GET", url+"/api2/acme/re/1", user, pass, ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("stranger's call %d: status %d, want 401", i, r.Status)
		}
	}
	for i := range 5 {
		r := call(t, local, "GET", url+"/api2/acme/re/1", "alice", "alice-secret", "")
		if r.Status != 200 {
			t.Fatalf("alice's call %d after 30 strangers' calls: status %d, want 200 (quota spent by strangers)", i, r.Status)
		}
	}
	if r := call(t, local, "GET", url+"/api2/acme/re/1", "alice", "alice-secret", ""); r.Status != http.StatusTooManyRequests {
		t.Errorf("alice's sixth call: status %d, want 429 (the account's own quota)", r.Status)
	}
	// The strangers are limited by their address: 40 calls an hour, 30 spent.
	for i := range 10 {
		if r := call(t, thief, "GET", url+"/api2/acme/re/1", "", "", ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("stranger's call %d: status %d, want 401", 30+i, r.Status)
		}
	}
	if r := call(t, thief, "GET", url+"/api2/acme/re/1", "", "", ""); r.Status != http.StatusTooManyRequests {
		t.Errorf("stranger's 41st call: status %d, want 429 (the ip policy)", r.Status)
	}
}

// TestConcurrentBruteForce sends 300 simultaneous guesses of one user's password from one IP, the right one
// among them: the failed-login limit must hold however the guesses interleave, in process and across two
// replicas sharing Redis. At most the limit's worth of guesses reach the core.
func TestConcurrentBruteForce(t *testing.T) { inModes(t, testConcurrentBruteForce) }

func testConcurrentBruteForce(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	rs := redistest.Start(t)
	const limit, guesses = 10, 300
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("redis=%v", shared), func(t *testing.T) {
			var urls []string
			var gws []*gateway.Gateway
			for range 2 {
				opt := m.cached(c)
				opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = limit, 1000, 1000
				if shared {
					// 300 calls at once queue for the client's connections: a slow answer here must not
					// pass for an unreachable Redis (each replica would then count alone), neither at the
					// store's timeout nor at the pool's (go-redis gives up waiting for a connection after
					// its read timeout + 1 s, which a loaded machine reaches).
					rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, PoolTimeout: 10 * time.Second})
					t.Cleanup(func() { rdb.Close() })
					opt.Redis = rdb
					opt.FailureStoreTimeout = 10 * time.Second
				}
				g, u := serve(t, opt)
				gws, urls = append(gws, g), append(urls, u)
				if !shared {
					break
				}
			}
			user, other := "bob", "alice"
			if shared {
				user, other = "alice", "bob" // fresh counters in Redis
			}
			for _, u := range urls { // the record is cached: a guess that passes costs no read of it
				call(t, local, "GET", u+"/api2/acme/re/1", other, other+"-secret", "")
			}
			var before uint64
			for _, g := range gws {
				before += g.Stats().UpstreamRequests
			}
			statuses := make([]int, guesses)
			var wg sync.WaitGroup
			for i := range guesses {
				wg.Go(func() {
					pass := fmt.Sprintf("guess-%d", i)
					if i == guesses-1 {
						pass = user + "-secret"
					}
					r, err := send(local, "GET", urls[i%len(urls)]+"/api2/acme/re/1", user, pass, "")
					if err != nil {
						t.Errorf("guess %d: %v", i, err)
						return
					}
					statuses[i] = r.Status
				})
			}
			wg.Wait()
			sent := -before
			for _, g := range gws {
				sent += g.Stats().UpstreamRequests
			}
			if sent > limit+1 {
				t.Errorf("%d guesses reached the core, want at most %d (the limit, and the right password)", sent, limit+1)
			}
			count := map[int]int{}
			for _, s := range statuses {
				count[s]++
			}
			if count[http.StatusUnauthorized] > limit || count[http.StatusOK] > 1 || count[http.StatusTooManyRequests] < guesses-limit-1 {
				t.Errorf("answers %v: want at most %d 401, the rest 429 (one 200 at most)", count, limit)
			}
		})
	}
}

// TestNoLockoutFromOneAddress plays the attacker who locks a user out by failing on purpose: wrong passwords
// from one address block that address's further guesses at the user, not the user's own logins from
// elsewhere. Many addresses together (max_user_failures_all_ips) only slow down the guesses from networks the
// user has not logged in from (TestNoLockoutFromManyAddresses shows that the user is not locked out).
func TestNoLockoutFromOneAddress(t *testing.T) { inModes(t, testNoLockoutFromOneAddress) }

func testNoLockoutFromOneAddress(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	opt := m.cached(c)
	opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = 3, 100, 8
	opt.AuthTTL = 0 // never remembered: every login is checked, so a lockout would show
	g, url := serve(t, opt)
	target := url + "/api2/acme/re/1"
	attacker := from("127.0.3.9")
	for i := range 3 {
		if r := call(t, attacker, "GET", target, "alice", "wrong", ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i, r.Status)
		}
	}
	if r := call(t, attacker, "GET", target, "alice", "wrong", ""); r.Status != http.StatusTooManyRequests {
		t.Fatalf("the attacker's fourth guess: %d, want 429", r.Status)
	}
	if r := call(t, local, "GET", target, "alice", "alice-secret", ""); r.Status != 200 {
		t.Fatalf("alice from her own address after the attacker's guesses: %d, want 200 (locked out)", r.Status)
	}
	// Distributed guessing: three more addresses reach the per-user limit of all addresses together.
	for i, ip := range []string{"127.0.3.10", "127.0.4.11", "127.0.5.12"} {
		for range 2 {
			if r := call(t, from(ip), "GET", target, "alice", "wrong", ""); r.Status != http.StatusUnauthorized && i < 2 {
				t.Fatalf("guess from %s: %d, want 401", ip, r.Status)
			}
		}
	}
	delayed := g.Stats().DelayedLogins
	if r := call(t, from("127.0.6.13"), "GET", target, "alice", "wrong", ""); r.Status != http.StatusUnauthorized {
		t.Errorf("a guess after max_user_failures_all_ips from a new network: %d, want 401 after a wait", r.Status)
	}
	if g.Stats().DelayedLogins == delayed {
		t.Errorf("a guess after max_user_failures_all_ips from a new network did not wait")
	}
}

// TestSpoofedForwardedFor plays the caller behind a trusted proxy that adds its own X-Forwarded-For line:
// whatever the caller wrote in a line of its own, it is counted under the address the proxy saw.
func TestSpoofedForwardedFor(t *testing.T) { inModes(t, testSpoofedForwardedFor) }

func testSpoofedForwardedFor(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	opt := m.cached(c)
	opt.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = 1000, 3, 1000
	_, url := serve(t, opt)
	for i := range 3 {
		r := call(t, local, "GET", url+"/api2/acme/re/1", fmt.Sprintf("user%d", i), "x", "",
			fmt.Sprintf("X-Forwarded-For: 6.6.6.%d", i), "X-Forwarded-For: 192.0.2.1")
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, r.Status)
		}
	}
	r := call(t, local, "GET", url+"/api2/acme/re/1", "user9", "x", "",
		"X-Forwarded-For: 6.6.6.99", "X-Forwarded-For: 192.0.2.1")
	if r.Status != http.StatusTooManyRequests {
		t.Errorf("fourth guess of 192.0.2.1 with a new spoofed first line: %d, want 429 (counted by the spoofed line)", r.Status)
	}
}

// TestSmuggledBodies sends bodies the gateway does not read (to a non-API path, with a GET, refused before
// authentication, over the size limit): whatever is left of them on the connection must never be read as a
// request of its own. Each body here is a complete request that would be served if it were.
func TestSmuggledBodies(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: accounts})
	opt := cached(c)
	opt.MaxBodyBytes = 1024
	g, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	inner := "GET /api2/acme/re/1 HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic YWxpY2U6YWxpY2Utc2VjcmV0\r\n\r\n"
	big := inner + strings.Repeat("x", 2000)
	for _, outer := range []string{
		"POST /nosuch HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n%s",
		"GET /api2/acme/re/1 HTTP/1.1\r\nHost: gw\r\nContent-Length: %d\r\n\r\n%s",
		"POST /api2/acme/re HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic bWFsbG9yeTp4\r\nContent-Length: %d\r\n\r\n%s",
	} {
		for _, body := range []string{inner, big} {
			before := g.Stats().UpstreamRequests
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, outer, len(body), body)
			br := bufio.NewReader(conn)
			answers := 0
			for {
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					break
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				answers++
				if strings.Contains(string(b), secret) {
					t.Errorf("%q: the smuggled request was served", strings.SplitN(outer, "\r\n", 2)[0])
				}
			}
			conn.Close()
			if answers != 1 {
				t.Errorf("%q with a %d-byte body: %d answers, want 1", strings.SplitN(outer, "\r\n", 2)[0], len(body), answers)
			}
			if sent := g.Stats().UpstreamRequests - before; sent > 1 {
				t.Errorf("%q: %d requests reached the core, want at most 1", strings.SplitN(outer, "\r\n", 2)[0], sent)
			}
		}
	}
}

// TestCredentialsChangeOnOneConnection sends requests of different credentials down one keep-alive connection
// (as a proxy or a shared client may): each request is judged by its own Authorization header, whatever the
// connection carried before.
func TestCredentialsChangeOnOneConnection(t *testing.T) {
	inModes(t, testCredentialsChangeOnOneConnection)
}

func testCredentialsChangeOnOneConnection(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	_, url := serve(t, m.cached(c))
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	for i, step := range []struct {
		path, auth string
		want       int
	}{
		{"/api2/acme/re/1", basic("alice", "alice-secret"), 200},
		{"/api2/acme/re/1", basic("alice", "alice-secret"), 200},
		{"/api2/acme/re/1", basic("mallory", "x"), 401},
		{"/api2/acme/re/1", basic("alice", "wrong"), 401},
		{"/api2/acme/re/1", "", 401},
		{"/api2/globex/user", basic("alice", "alice-secret"), 401},
		{"/api2/acme/re/1", basic("alice", "alice-secret"), 200},
		{"/api2/acme/re/1", basic("gina", "gina-secret"), 401},
		{"/api2/globex/user", basic("gina", "gina-secret"), 200},
	} {
		auth := ""
		if step.auth != "" {
			auth = "Authorization: " + step.auth + "\r\n"
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: gw\r\n%s\r\n", step.path, auth)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != step.want || step.want != 200 && strings.Contains(string(body), secret) {
			t.Fatalf("step %d (%s as %q): status %d, want %d", i, step.path, step.auth, res.StatusCode, step.want)
		}
	}
}

// TestFoldedFramingHeaders folds a framing header over two lines (obsolete line folding, which fasthttp would
// join), then sends, on the same connection, a request with bare-LF line ends and a folded field, which the
// line guard must refuse. The folded framing header must be refused itself, so the connection gets one answer,
// a 400, and closes: the later request is never served.
func TestFoldedFramingHeaders(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: accounts})
	g, url := serve(t, cached(c))
	addr := strings.TrimPrefix(url, "http://")
	later := "GET /api2/acme/re/1 HTTP/1.1\nHost: gw\nAuthorization: Basic YWxpY2U6YWxpY2Utc2VjcmV0\nX-A: a\n b\r\n\r\n"
	for _, first := range []string{
		"Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n",
		"Content-Length:\r\n 5\r\n\r\nhello",
		"Transfer-Encoding:\r\n\tchunked\r\n\r\n0\r\n\r\n",
	} {
		name := strings.Split(first, "\r\n")[0]
		first = "GET /api2/acme/re/1 HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic YWxpY2U6YWxpY2Utc2VjcmV0\r\n" + first
		before := g.Stats().UpstreamRequests
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(conn, first+later); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		var statuses []int
		for {
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				break
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			statuses = append(statuses, res.StatusCode)
			if strings.Contains(string(b), secret) {
				t.Errorf("%q folded: the request was served", name)
			}
		}
		conn.Close()
		if len(statuses) != 1 || statuses[0] != http.StatusBadRequest {
			t.Errorf("%q folded: answers %v, want only a 400", name, statuses)
		}
		if sent := g.Stats().UpstreamRequests - before; sent != 0 {
			t.Errorf("%q folded: %d requests reached the core, want none", name, sent)
		}
	}
}

// TestFailureCountsSurviveFlood blocks an attacker's address at one user, then floods the in-process
// failed-login counters (no Redis) from other addresses with guesses of made-up names, at an api_key that
// cannot exist and at a real one, until the counters' store is full many times over. The flood must not reset
// the count that blocks the attacker, and a real user's login must still work.
func TestFailureCountsSurviveFlood(t *testing.T) { inModes(t, testFailureCountsSurviveFlood) }

func testFailureCountsSurviveFlood(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	opt := m.cached(c)
	opt.MaxUserFailures, opt.MaxIPFailures, opt.MaxUserFailuresAllIPs = 5, 20, 1000
	opt.MaxFailureKeys = 200
	opt.AuthTTL = 0 // every login is checked
	_, url := serve(t, opt)
	target := url + "/api2/acme/re/1"
	attacker := from("127.0.0.2")
	for i := range 5 {
		if r := call(t, attacker, "GET", target, "alice", "wrong", ""); r.Status != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i, r.Status)
		}
	}
	if r := call(t, attacker, "GET", target, "alice", "wrong", ""); r.Status != http.StatusTooManyRequests {
		t.Fatalf("the attacker's sixth guess: %d, want 429", r.Status)
	}

	// 20 addresses, 20 guesses each (their per-address limit): 400 guesses, up to 800 counters.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for a := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := from(fmt.Sprintf("127.0.1.%d", a+1))
			for i := range 20 {
				u := url + "/api2/globex/re/1"
				if i%2 == 0 {
					u = url + "/api2/no.such.key/re/1"
				}
				r, err := send(cl, "GET", u, fmt.Sprintf("name-%d-%d", a, i), "x", "")
				if err != nil {
					errs <- err
					return
				}
				if r.Status != http.StatusUnauthorized {
					errs <- fmt.Errorf("flood guess: %d, want 401", r.Status)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	if r := call(t, attacker, "GET", target, "alice", "wrong", ""); r.Status != http.StatusTooManyRequests {
		t.Errorf("the blocked attacker's guess after the flood: %d, want 429 (its count was forgotten)", r.Status)
	}
	if r := call(t, local, "GET", target, "alice", "alice-secret", ""); r.Status != http.StatusOK {
		t.Errorf("alice's login after the flood: %d, want 200", r.Status)
	}
}
