package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
)

// testGateway is a gateway serving on a real loopback port.
type testGateway struct {
	*Gateway
	URL string
}

// startGateway runs a gateway with opt on a free loopback port and shuts it down when the test ends.
func startGateway(tb testing.TB, opt Options) *testGateway {
	tb.Helper()
	g, err := New(opt)
	if err != nil {
		tb.Fatalf("gateway.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Serve(ln)
	}()
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		<-done
	})
	return &testGateway{Gateway: g, URL: "http://" + ln.Addr().String()}
}

// cachedOptions are gateway options with the cache on, in front of core.
func cachedOptions(c *coretest.Core) Options {
	return Options{Upstreams: []string{c.URL}, Cache: CacheOptions{Enabled: true}}
}

// reply is a response read whole.
type reply struct {
	Status int
	Header http.Header
	Body   string
}

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

// do sends one request with Basic credentials (user "" sends none) and extra headers as "Key: value". It
// ends the test on a transport failure, so it is for the test's own goroutine; others use send.
func do(tb testing.TB, method, url, user, pass, body string, headers ...string) reply {
	tb.Helper()
	r, err := send(method, url, user, pass, body, headers...)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// send is do returning the transport failure, for any goroutine.
func send(method, url, user, pass, body string, headers ...string) (reply, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{}, fmt.Errorf("new request: %w", err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/xml")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	res, err := client.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s: read body: %w", method, url, err)
	}
	return reply{Status: res.StatusCode, Header: res.Header, Body: string(b)}, nil
}

// get is a GET as demo/demo.
func get(tb testing.TB, url string, headers ...string) reply {
	tb.Helper()
	return do(tb, http.MethodGet, url, "demo", "demo", "", headers...)
}

// parallel runs f n times at once and waits. f runs on goroutines of its own: it reports with t.Errorf,
// never t.Fatalf (see send).
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// waitUntil polls cond until it holds or limit passes; limit is a correctness bound, not a timing check.
func waitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}
