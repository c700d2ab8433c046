package attacktest

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/gatewaytest"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

// create is a small record write of the interface, as a tenant's client sends it.
const create = `<requirement><fields><field><name>field_101</name><value>written during the attack</value></field></fields></requirement>`

func basicAuth(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// tenants are the accounts of the attack suite and a third tenant, initech, whose user writes while the others
// attack.
const tenants = accounts + `  - api_key: initech
    name: Initech
    users:
      - {username: ivan, password: ivan-secret, email: ivan@initech.test, firstname: Ivan, lastname: Initech}
`

// uploader is a user the attacker has the credential of.
type uploader struct{ account, user, pass string }

var (
	bob  = uploader{"acme", "bob", "bob-secret"}
	gina = uploader{"globex", "gina", "gina-secret"}
)

// startUpload opens a connection from ip to addr and sends the head of u's write announcing size bytes, and one
// byte of its body: an upload the attacker holds open. The status of its answer, if the gateway gives one, is
// sent on answers (0 when the connection ends without one, -1 for a 503 without Retry-After).
func startUpload(tb testing.TB, ip, addr string, u uploader, size int, answers chan<- int) net.Conn {
	tb.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		tb.Fatalf("dial from %s: %v", ip, err)
	}
	tb.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST /api2/%s/re HTTP/1.1\r\nHost: gw\r\nAuthorization: %s\r\nContent-Type: application/xml\r\n"+
		"Content-Length: %d\r\n\r\n<", u.account, basicAuth(u.user, u.pass), size)
	go func() {
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answers <- 0
			return
		}
		res.Body.Close()
		if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
			answers <- -1
			return
		}
		answers <- res.StatusCode
	}()
	return c
}

// TestSlowUploadsOfOneTenant plays a read-only user of one tenant who takes the gateway's body budget from
// everyone: 90 uploads from 9 addresses, each announcing 1 MiB (more than the whole budget) and sent at 10 KiB/s,
// fast enough for the minimum upload rate. Once the gateway refuses some of them (its budget, or the tenant's
// share of it, is held), another tenant's writes must all succeed, and the attacker's tenant holds no more than
// its share of the budget: the other uploads are refused with 503 and Retry-After.
func TestSlowUploadsOfOneTenant(t *testing.T) {
	slowUploads(t, func(i int) (string, uploader) { return fmt.Sprintf("127.0.2.%d", 1+i%9), bob })
}

// TestSlowUploadsFromOneAddress is TestSlowUploadsOfOneTenant from one address with the credentials of users of
// two tenants, each within its account's share: the address holds no more than its own share.
func TestSlowUploadsFromOneAddress(t *testing.T) {
	slowUploads(t, func(i int) (string, uploader) { return "127.0.2.1", []uploader{bob, gina}[i%2] })
}

// slowUploads opens 90 uploads of 1 MiB, the i-th from the address and as the user of attacker(i), keeps them
// alive at 10 KiB/s, and checks that a third tenant's writes all succeed meanwhile and that the attack holds
// no more than one share of the budget.
func slowUploads(t *testing.T, attacker func(i int) (string, uploader)) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: tenants})
	opt := gatewaytest.With(gateway.Options{Upstreams: []string{c.URL}})
	_, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	const uploads, size = 90, 1 << 20
	share := max(int(float64(opt.BodyBudget)*opt.BodyShare), opt.MaxBodyBytes) / size

	answers := make(chan int, uploads)
	conns := make([]net.Conn, uploads)
	for i := range conns {
		ip, u := attacker(i)
		conns[i] = startUpload(t, ip, addr, u, size, answers)
	}
	// The attacker keeps every upload alive: 1 KiB to each, ten times a second.
	stop := make(chan struct{})
	var trickle sync.WaitGroup
	trickle.Go(func() {
		chunk := []byte(strings.Repeat(" ", 1<<10))
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for _, c := range conns {
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(chunk) // a refused upload's connection is closed: the write fails
			}
		}
	})
	defer func() { close(stop); trickle.Wait() }()
	// refusals waits until n uploads have been refused, or the bound (on correctness, not timing) has passed.
	refused := 0
	refusals := func(n int) {
		bound := time.After(20 * time.Second)
		for refused < n {
			select {
			case s := <-answers:
				if s != http.StatusServiceUnavailable {
					t.Errorf("an upload got status %d, want 503 with Retry-After, or no answer yet", s)
				}
				refused++
			case <-bound:
				return
			}
		}
	}

	// The first refusal says the attack holds what it can.
	if refusals(1); refused == 0 {
		t.Fatal("no upload of the 90 was refused: the gateway held more than its whole budget")
	}
	var slowest time.Duration
	written := 0
	for i := range 20 {
		start := time.Now()
		r := call(t, local, "POST", url+"/api2/initech/re", "ivan", "ivan-secret", create)
		slowest = max(slowest, time.Since(start))
		if r.Status != http.StatusCreated {
			t.Errorf("the other tenant's write %d during the attack: status %d, want 201 (%s)", i, r.Status, strings.TrimSpace(r.Body))
		} else {
			written++
		}
	}
	refusals(uploads - share)
	held := uploads - refused
	if held > share {
		t.Errorf("the attack holds %d uploads of 1 MiB, want at most one share of the budget (%d)", held, share)
	}
	t.Logf("%d uploads of 1 MiB at 10 KiB/s: %d held, %d refused; the other tenant's writes: %d of 20 written, slowest %v",
		uploads, held, refused, written, slowest.Round(time.Millisecond))
}

// TestTrickledBodyIsDropped plays the user who sends a body a byte at a time, far slower than the minimum upload
// rate, to hold the body budget (here the budget holds one body). Once the grace has passed, the gateway answers
// 408 (in JSON to a caller that accepts it) and closes the connection, and what the body held is free for
// another tenant's write. The same holds for a body announced with `Expect: 100-continue` that never comes after
// the 100 (the server's own 408, before the handler: XML).
func TestTrickledBodyIsDropped(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: accounts})
	opt := gatewaytest.With(gateway.Options{Upstreams: []string{c.URL}, MinUploadRate: 4 << 10,
		UploadGrace: 200 * time.Millisecond})
	opt.BodyBudget = int64(opt.MaxBodyBytes)
	_, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	for _, expect := range []bool{false, true} {
		t.Run(fmt.Sprintf("expect=%v", expect), func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a bound on correctness, not a timing check
			head := fmt.Sprintf("POST /api2/acme/re HTTP/1.1\r\nHost: gw\r\nAuthorization: %s\r\n"+
				"Content-Type: application/xml\r\nContent-Length: %d\r\n", basicAuth("bob", "bob-secret"), opt.MaxBodyBytes)
			br := bufio.NewReader(conn)
			stop := make(chan struct{})
			var trickle sync.WaitGroup
			defer func() { close(stop); trickle.Wait() }()
			if expect {
				fmt.Fprintf(conn, "%sExpect: 100-continue\r\n\r\n", head)
				res, err := http.ReadResponse(br, nil)
				if err != nil || res.StatusCode != http.StatusContinue {
					t.Fatalf("the expectation: %v, %v; want 100 Continue", status(res), err)
				}
			} else {
				fmt.Fprintf(conn, "%sAccept: application/json\r\n\r\n<", head)
				trickle.Go(func() {
					for {
						select {
						case <-stop:
							return
						case <-time.After(50 * time.Millisecond):
						}
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				})
			}
			start := time.Now()
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("the trickled upload got no answer: %v (want 408)", err)
			}
			t.Logf("the trickle was answered %d after %v (grace %v)", res.StatusCode,
				time.Since(start).Round(time.Millisecond), opt.UploadGrace)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusRequestTimeout || !res.Close {
				t.Fatalf("the trickled upload: status %d, close %v (%s); want 408 and the connection closed",
					res.StatusCode, res.Close, body)
			}
			if ct := res.Header.Get("Content-Type"); !expect && !strings.HasPrefix(ct, "application/json") {
				t.Errorf("the 408 of a caller that accepts JSON: Content-Type %q (%s), want the JSON error", ct, body)
			}
			if r := call(t, local, "POST", url+"/api2/globex/re", "gina", "gina-secret", create); r.Status != http.StatusCreated {
				t.Errorf("the other tenant's write after the drop: status %d, want 201 (%s)", r.Status, strings.TrimSpace(r.Body))
			}
		})
	}
}

func status(res *http.Response) any {
	if res == nil {
		return "no answer"
	}
	return res.StatusCode
}

// expectContinue sends a write with `Expect: 100-continue` and its body only once told to go on. It returns
// the statuses of the answers: the final one, after a 100 if there was one.
func expectContinue(tb testing.TB, addr, auth string, size int) []int {
	tb.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if auth != "" {
		auth = "Authorization: " + auth + "\r\n"
	}
	body := create
	if size > len(body) {
		body += strings.Repeat(" ", size-len(body))
	}
	fmt.Fprintf(conn, "POST /api2/acme/re HTTP/1.1\r\nHost: gw\r\n%sContent-Type: application/xml\r\nContent-Length: %d\r\n"+
		"Expect: 100-continue\r\n\r\n", auth, len(body))
	br := bufio.NewReader(conn)
	var statuses []int
	for {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			tb.Fatalf("after %v: %v", statuses, err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		statuses = append(statuses, res.StatusCode)
		if res.StatusCode != http.StatusContinue {
			return statuses
		}
		if _, err := io.WriteString(conn, body); err != nil {
			tb.Fatalf("the body after 100 Continue: %v", err)
		}
	}
}

// TestExpectContinueAfterAuth sends writes with `Expect: 100-continue`: only a caller that is authenticated,
// admitted by the rate policies and whose body the gateway will take is told to send its body (100 Continue);
// every other caller gets its final answer at once, with no 100 before it, and never sends the body.
func TestExpectContinueAfterAuth(t *testing.T) { inModes(t, testExpectContinueAfterAuth) }

func testExpectContinueAfterAuth(t *testing.T, m mode) {
	c := m.start(t, coretest.Options{AccountsYAML: accounts})
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{Policies: []ratelimit.Policy{
		{Name: "user", Key: "user", Limit: 1, Burst: 1, Period: time.Hour},
	}}))
	if err != nil {
		t.Fatal(err)
	}
	opt := m.with(gateway.Options{Upstreams: []string{c.URL}, Limiter: l})
	_, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	for _, tc := range []struct {
		name string
		auth string
		size int
		want []int
	}{
		{"no credentials", "", 0, []int{401}},
		{"wrong password", basicAuth("alice", "guess"), 0, []int{401}},
		{"body over the limit", basicAuth("alice", "alice-secret"), opt.MaxBodyBytes + 1, []int{413}},
		{"authenticated", basicAuth("alice", "alice-secret"), 0, []int{100, 201}},
		{"over the rate policy", basicAuth("alice", "alice-secret"), 0, []int{429}},
		{"another user", basicAuth("bob", "bob-secret"), 4 << 10, []int{100, 201}},
	} {
		got := expectContinue(t, addr, tc.auth, tc.size)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: answers %v, want %v", tc.name, got, tc.want)
		}
	}
}
