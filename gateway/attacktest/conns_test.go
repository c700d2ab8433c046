package attacktest

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// dialFrom opens a connection to addr from the loopback address ip.
func dialFrom(ctx context.Context, ip, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return d.DialContext(ctx, "tcp", addr)
}

// holder keeps connections open from one address until its context ends, reopening each one the gateway
// closes: an unfinished request head (a slowloris), or, when idle, a connection kept alive after one answered
// request.
type holder struct {
	addr   string
	idle   bool
	opened atomic.Int64 // connections opened and written to
}

func (h *holder) hold(ctx context.Context, ip string) {
	for ctx.Err() == nil {
		c, err := dialFrom(ctx, ip, h.addr)
		if err != nil {
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		if h.idle {
			_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n")
		} else {
			_, err = io.WriteString(c, "GET /api2/acme/re/1 HTTP/1.1\r\nHost: gw\r\nX-Slow: ")
		}
		if err == nil {
			h.opened.Add(1)
			// Read until the gateway closes the connection: the idle one's answer, then nothing.
			_, _ = io.Copy(io.Discard, c)
		}
		stop()
		c.Close()
	}
}

// readsDuringAttack is a legitimate client's reads of url as alice, each on a new connection from 127.0.0.1, one
// after another: how many were answered 200 with acme's secret, what the others got, and how long each took
// (sorted).
func readsDuringAttack(url string, tries int) (ok int, failures []string, took []time.Duration) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1")}}).DialContext}}
	for range tries {
		began := time.Now()
		r, err := send(client, "GET", url, "alice", "alice-secret", "")
		took = append(took, time.Since(began))
		switch {
		case err != nil:
			failures = append(failures, err.Error())
		case r.Status != http.StatusOK || !strings.Contains(r.Body, secret):
			failures = append(failures, fmt.Sprint(r.Status, " ", r.Body))
		default:
			ok++
		}
	}
	slices.Sort(took)
	return ok, failures, took
}

// flood runs per goroutines from each of n addresses, 127.<first+i>.0.1 for i < n (each in a /24 of its own),
// until the test ends: each calls hold with the address's index and the address.
func flood(t *testing.T, n, per, first int, hold func(ctx context.Context, i int, ip string)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for i := range n {
		for range per {
			wg.Go(func() { hold(ctx, i, fmt.Sprintf("127.%d.0.1", first+i)) })
		}
	}
}

// TestSlowlorisAcrossAddresses plays a stranger with 40 addresses (each in a /24 of its own, so only the global
// cap stands in its way) who keeps more connections open than the gateway's cap, half of them unfinished
// request heads, half idle kept-alive connections, reopening each one the gateway closes. A legitimate client
// opening a new connection for each read must still be answered: near the cap each new connection takes the
// place of the oldest sheddable one of the networks holding the most. The head timeout is set far beyond the
// test, so only shedding makes room.
func TestSlowlorisAcrossAddresses(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: accounts})
	opt := cached(c)
	opt.MaxConns, opt.MaxConnsPerIP = 64, 4 // 40 addresses hold up to 160
	opt.HeaderTimeout = time.Hour
	g, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	read := url + "/api2/acme/re/1"
	if r := call(t, local, "GET", read, "alice", "alice-secret", ""); r.Status != http.StatusOK {
		t.Fatalf("read before the attack: %d", r.Status)
	}

	heads, idle := &holder{addr: addr}, &holder{addr: addr, idle: true}
	flood(t, 40, opt.MaxConnsPerIP, 101, func(ctx context.Context, i int, ip string) {
		if i%2 == 1 {
			idle.hold(ctx, ip)
		} else {
			heads.hold(ctx, ip)
		}
	})
	// The attack holds more than the cap once the table is full and both kinds have been turned away.
	deadline := time.Now().Add(30 * time.Second)
	for g.Stats().OpenConns < int64(opt.MaxConns-opt.MaxConns/16) || heads.opened.Load()+idle.opened.Load() < int64(2*opt.MaxConns) {
		if time.Now().After(deadline) {
			t.Fatalf("the attack did not fill the gateway: %d open, %d heads and %d idle opened",
				g.Stats().OpenConns, heads.opened.Load(), idle.opened.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}

	const tries = 50
	ok, failures, took := readsDuringAttack(read, tries)
	t.Logf("%d of %d reads answered during the attack (median %v, slowest %v; %d heads and %d idle connections opened by then); failures: %v",
		ok, tries, took[tries/2], took[tries-1], heads.opened.Load(), idle.opened.Load(), failures)
	if ok < tries*8/10 {
		t.Errorf("only %d of %d reads answered while 40 addresses held the connections, want at least 80%%", ok, tries)
	}
}

// nonReader keeps connections open from one address until its context ends, reopening each one the gateway
// closes: each pipelines requests whose answers are far more than the kernel's buffers hold (a send buffer
// grows to 4 MiB) and reads none of them, so that once the buffers are full the gateway's write of an answer
// waits on the client for as long as it does not read.
type nonReader struct {
	addr     string
	pipeline string
	opened   atomic.Int64 // connections opened whose pipeline was written
}

func (h *nonReader) hold(ctx context.Context, ip string) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second,
		Control: testsupport.SmallReceiveBuffer}
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", h.addr)
		if err != nil {
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		if _, err = io.WriteString(c, h.pipeline); err == nil {
			h.opened.Add(1)
			// Nothing is read: a write fails once the gateway has closed the connection (and reset it, its
			// requests unread).
			for ctx.Err() == nil {
				if _, err := io.WriteString(c, "\r\n"); err != nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		stop()
		c.Close()
	}
}

// TestSlowReadersAcrossAddresses plays a stranger with 4 addresses (each in a /24 of its own, so only the
// global cap stands in its way) who keeps more connections open than the gateway's cap, each pipelining reads
// of a 30 KB record whose answers it never takes, reopening each one the gateway closes: once the kernel's
// buffers are full, every one of them is a request being served whose write waits on its client. The write
// timeout is set far beyond the test, so only shedding makes room: a legitimate client opening a new connection
// for each read must still be answered, each taking the place of a connection whose write is stuck.
func TestSlowReadersAcrossAddresses(t *testing.T) {
	const big = "      - {kind: re, id: 2, created_by: alice, fields: {field_101: Big, field_102: "
	yaml := strings.Replace(accounts, "    records:\n", "    records:\n"+big+strings.Repeat("b", 30000)+"}}\n", 1)
	c := coretest.Start(t, coretest.Options{AccountsYAML: yaml})
	opt := cached(c)
	opt.MaxConns, opt.MaxConnsPerIP = 32, 16 // 4 addresses hold up to 64
	opt.WriteTimeout = time.Hour
	g, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	read := url + "/api2/acme/re/1"
	if r := call(t, local, "GET", read, "alice", "alice-secret", ""); r.Status != http.StatusOK {
		t.Fatalf("read before the attack: %d", r.Status)
	}
	r := call(t, local, "GET", url+"/api2/acme/re/2", "alice", "alice-secret", "")
	if r.Status != http.StatusOK || len(r.Body) < 30000 {
		t.Fatalf("the big record: %d, %d bytes", r.Status, len(r.Body))
	}
	// Enough requests that their answers are several times the 4 MiB a send buffer grows to.
	request := "GET /api2/acme/re/2 HTTP/1.1\r\nHost: gw\r\nAuthorization: Basic " +
		base64.StdEncoding.EncodeToString([]byte("alice:alice-secret")) + "\r\n\r\n"
	h := &nonReader{addr: addr, pipeline: strings.Repeat(request, 3*(4<<20)/len(r.Body)+1)}

	flood(t, 4, opt.MaxConnsPerIP, 151, func(ctx context.Context, _ int, ip string) { h.hold(ctx, ip) })
	if !testsupport.WaitUntil(time.Minute, func() bool {
		return g.Stats().OpenConns >= int64(opt.MaxConns) && h.opened.Load() >= int64(opt.MaxConns)
	}) {
		t.Fatalf("the attack did not fill the gateway: %d open, %d opened", g.Stats().OpenConns, h.opened.Load())
	}
	deadline := time.Now().Add(time.Minute)
	// Once every connection's writes wait on its client, no more of its requests are answered: the cache's
	// hits stop, for longer than a write takes to count as stuck.
	for hits, quiet := g.Stats().Cache.Hits, 0; quiet < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway still answers the attack's requests: %d hits", hits)
		}
		time.Sleep(500 * time.Millisecond)
		now := g.Stats().Cache.Hits
		if now == hits {
			quiet++
		} else {
			quiet = 0
		}
		hits = now
	}

	const tries = 64 // twice the places: each read gives its place back when it ends
	ok, failures, took := readsDuringAttack(read, tries)
	t.Logf("%d of %d reads answered during the attack (median %v, slowest %v; %d connections opened by then); failures: %v",
		ok, tries, took[tries/2], took[tries-1], h.opened.Load(), failures)
	if ok < tries*8/10 {
		t.Errorf("only %d of %d reads answered while 4 addresses held the connections in stuck writes, want at least 80%%", ok, tries)
	}
}

// TestConnsPerNetwork: addresses of one /24 together hold at most server.max_conns_per_prefix connections; one
// more from that network is answered 429 and closed, while another network is served.
func TestConnsPerNetwork(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: accounts})
	opt := cached(c)
	opt.MaxConnsPerIP, opt.MaxConnsPerPrefix = 2, 4
	g, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	ctx := context.Background()
	for _, ip := range []string{"127.77.7.1", "127.77.7.1", "127.77.7.2", "127.77.7.2"} {
		c, err := dialFrom(ctx, ip, addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	deadline := time.Now().Add(10 * time.Second)
	for g.Stats().OpenConns < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections open, want 4", g.Stats().OpenConns)
		}
		time.Sleep(5 * time.Millisecond)
	}
	get := "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n"
	if got := rawFrom(t, "127.77.7.3", addr, get); got != http.StatusTooManyRequests {
		t.Errorf("a fifth connection from 127.77.7.0/24: status %d, want 429", got)
	}
	if got := rawFrom(t, "127.77.8.1", addr, get); got != http.StatusOK {
		t.Errorf("a connection from 127.77.8.0/24: status %d, want 200", got)
	}
}

// TestSlowHeadDropped: a request head that does not arrive whole within server.header_timeout gets 408 and
// the connection is closed, long before the read timeout, whether its connection is new (the clock runs
// from its acceptance) or kept alive (from the head's first byte); a kept-alive connection may stay idle
// longer than the head timeout and is still served.
func TestSlowHeadDropped(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: accounts})
	opt := cached(c)
	opt.HeaderTimeout, opt.ReadTimeout, opt.IdleTimeout = 200*time.Millisecond, time.Hour, time.Hour
	_, url := serve(t, opt)
	addr := strings.TrimPrefix(url, "http://")
	// status reads one answer; 0 when the connection ends or the test's guard deadline passes first.
	status := func(br *bufio.Reader) int {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	open := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// Only keeps a failing test from hanging: the gateway is to answer within a fraction of it.
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		return c, bufio.NewReader(c)
	}
	for _, tc := range []struct{ name, sent string }{
		{"nothing sent", ""},
		{"unfinished head", "GET /healthz HTTP/1.1\r\nHost: gw\r\n"},
	} {
		c, br := open()
		_, _ = io.WriteString(c, tc.sent)
		if got := status(br); got != http.StatusRequestTimeout {
			t.Errorf("%s: status %d, want 408", tc.name, got)
		}
	}

	c2, br := open()
	get := "GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n"
	_, _ = io.WriteString(c2, get)
	if got := status(br); got != http.StatusOK {
		t.Fatalf("first request: %d", got)
	}
	time.Sleep(3 * opt.HeaderTimeout) // idle for longer than a head may take: idleness is not a late head
	_, _ = io.WriteString(c2, get)
	if got := status(br); got != http.StatusOK {
		t.Errorf("request after an idle spell on a kept-alive connection: status %d, want 200", got)
	}
	_, _ = io.WriteString(c2, "GET /healthz HTTP/1.1\r\n")
	if got := status(br); got != http.StatusRequestTimeout {
		t.Errorf("unfinished head on a kept-alive connection: status %d, want 408", got)
	}
}

// rawFrom sends request bytes on a connection of its own from the loopback address ip and returns the status
// line's code (0 when the gateway closed the connection without answering).
func rawFrom(tb testing.TB, ip, addr, request string) int {
	tb.Helper()
	conn, err := dialFrom(context.Background(), ip, addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		return 0
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}
