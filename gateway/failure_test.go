package gateway

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// staleGateway is a cached gateway in front of a core of its own, on a clock of the test's, whose entries are
// fresh for 10 s and may stand in for a failing core for a minute after (stale_if_error); its credentials last
// an hour, so the core is not needed to verify them again.
func staleGateway(t *testing.T) (*coretest.Core, *testsupport.Clock, *testGateway) {
	t.Helper()
	c := coretest.Start(t, coretest.Options{})
	clk := testsupport.NewClock(time.Now())
	opt := cachedOptions(c)
	opt.Now = clk.Now
	opt.AuthTTL = time.Hour
	opt.Cache.TTL, opt.Cache.StaleIfError = 10*time.Second, time.Minute
	gw := startGateway(t, opt)
	return c, clk, gw
}

// TestStaleIfError stops the core: a verified read whose entry is past its TTL but within stale_if_error is
// served STALE; an uncached read gets 502 with an XML error; past stale_if_error the entry is gone too.
func TestStaleIfError(t *testing.T) {
	c, clk, gw := staleGateway(t)
	url := gw.URL + "/api2/demo/re/6"
	fresh := get(t, url)
	if fresh.Status != 200 {
		t.Fatalf("first read: %d", fresh.Status)
	}
	c.Stop()
	clk.Add(20 * time.Second) // past the TTL, within stale_if_error

	res := get(t, url)
	if got, want := res.Status, 200; got != want {
		t.Fatalf("stale read status=%d, want %d (%q)", got, want, res.Body)
	}
	if got, want := res.Header.Get("X-Cache"), "STALE"; got != want {
		t.Errorf("X-Cache=%q, want %q", got, want)
	}
	if got, want := res.Header.Get("Age"), "20"; got != want {
		t.Errorf("Age=%q, want %q", got, want)
	}
	if res.Body != fresh.Body {
		t.Errorf("stale body differs from the cached one")
	}
	if got := do(t, http.MethodGet, url, "demo", "wrong", "").Status; got != http.StatusBadGateway {
		t.Errorf("unverified credential with the core down: status=%d, want 502 (never the cache)", got)
	}
	for _, path := range []string{"/api2/demo/re/7", "/api2/demo/re"} {
		method := http.MethodGet
		if path == "/api2/demo/re" {
			method = http.MethodPost
		}
		res := do(t, method, gw.URL+path, "demo", "demo", "<requirement/>")
		if got, want := res.Status, http.StatusBadGateway; got != want {
			t.Errorf("%s %s with the core down: status=%d, want %d", method, path, got, want)
		}
		if !strings.Contains(res.Body, "<error>") || !strings.Contains(res.Body, "<message>") {
			t.Errorf("%s %s: body %q is not an XML error", method, path, res.Body)
		}
	}
	clk.Add(2 * time.Minute) // past stale_if_error
	if got, want := get(t, url).Status, http.StatusBadGateway; got != want {
		t.Errorf("read past stale_if_error: status=%d, want %d", got, want)
	}

	c.Restart(t)
	if got, want := get(t, url).Status, http.StatusOK; got != want {
		t.Errorf("read after the core came back: status=%d, want %d", got, want)
	}
}

// TestUpstreamTimeout puts the gateway in front of a listener that accepts and never answers: the caller
// gets 504 with an XML error instead of a hang.
func TestUpstreamTimeout(t *testing.T) {
	silent := testsupport.ServeTCP(t, "127.0.0.1:0", func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	gw := startGateway(t, Options{Upstreams: []string{"http://" + silent}, UpstreamTimeout: 300 * time.Millisecond,
		Cache: CacheOptions{Enabled: true}})
	for _, method := range []string{http.MethodGet, http.MethodPut} {
		res := do(t, method, gw.URL+"/api2/demo/re/1", "demo", "demo", "<requirement/>")
		if got, want := res.Status, http.StatusGatewayTimeout; got != want {
			t.Errorf("%s: status=%d, want %d", method, got, want)
		}
		if !strings.Contains(res.Body, "<message>") {
			t.Errorf("%s: body %q is not an XML error", method, res.Body)
		}
	}
}

// TestBodyLimit sends a body over the limit: 413 from the gateway, and the core never sees it.
func TestBodyLimit(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.MaxBodyBytes = 1024
	gw := startGateway(t, opt)
	before := gw.Stats().UpstreamRequests
	big := "<requirement>" + strings.Repeat("x", 4096) + "</requirement>"
	res := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", big)
	if got, want := res.Status, http.StatusRequestEntityTooLarge; got != want {
		t.Fatalf("status=%d, want %d", got, want)
	}
	if !strings.Contains(res.Body, "<message>") {
		t.Errorf("body %q is not an XML error", res.Body)
	}
	if got := gw.Stats().UpstreamRequests - before; got != 0 {
		t.Errorf("the oversized request reached the core (%d upstream requests)", got)
	}
}

// TestRequestID checks that a caller's X-Request-Id is kept and returned, a missing or unsafe one replaced.
func TestRequestID(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	if got, want := get(t, gw.URL+"/api2/demo/re/1", "X-Request-Id: abc-123").Header.Get("X-Request-Id"), "abc-123"; got != want {
		t.Errorf("kept id=%q, want %q", got, want)
	}
	a := get(t, gw.URL+"/api2/demo/re/1").Header.Get("X-Request-Id")
	b := get(t, gw.URL+"/api2/demo/re/1").Header.Get("X-Request-Id")
	if a == "" || a == b {
		t.Errorf("created ids %q and %q are not distinct", a, b)
	}
	if got := get(t, gw.URL+"/api2/demo/re/1", "X-Request-Id: <script>").Header.Get("X-Request-Id"); got == "<script>" {
		t.Errorf("unsafe id kept")
	}
}

// TestUpstreamReset puts the gateway in front of a listener that accepts and closes every connection at once:
// the caller gets 502 with an XML error.
func TestUpstreamReset(t *testing.T) {
	resetting := testsupport.ServeTCP(t, "127.0.0.1:0", func(c net.Conn) {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST instead of FIN
		}
		c.Close()
	})
	gw := startGateway(t, Options{Upstreams: []string{"http://" + resetting}, Cache: CacheOptions{Enabled: true}})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		res := do(t, method, gw.URL+"/api2/demo/re", "demo", "demo", "<requirement/>")
		if got, want := res.Status, http.StatusBadGateway; got != want {
			t.Errorf("%s: status=%d, want %d", method, got, want)
		}
		if !strings.Contains(res.Body, "<message>") {
			t.Errorf("%s: body %q is not an XML error", method, res.Body)
		}
	}
}

// TestFailedWriteKeepsStaleEntries stops the core: a write that could not reach it (the kept-alive connection
// was closed by the core, a new one is refused) changed nothing, so the read it would have invalidated is still
// served stale.
func TestFailedWriteKeepsStaleEntries(t *testing.T) {
	c, clk, gw := staleGateway(t)
	url := gw.URL + "/api2/demo/re/6"
	if fresh := get(t, url); fresh.Status != 200 {
		t.Fatalf("first read: %d", fresh.Status)
	}
	c.Stop()
	put := do(t, http.MethodPut, url, "demo", "demo",
		`<requirement><fields><field><name>field_101</name><value>never sent</value></field></fields></requirement>`)
	if put.Status != http.StatusBadGateway {
		t.Fatalf("PUT with the core down: %d, want 502", put.Status)
	}
	clk.Add(20 * time.Second) // past the TTL, within stale_if_error
	if res := get(t, url); res.Status != 200 || res.Header.Get("X-Cache") != "STALE" {
		t.Errorf("after a write that never reached the core: %d X-Cache %q, want the stale entry", res.Status,
			res.Header.Get("X-Cache"))
	}
}
