package gateway

import (
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
)

// frontCore serves the core at target through a reverse proxy on a loopback port until the test ends, and
// returns the proxy's URL (a gateway's upstream): a hop between gateway and core where a test sees or holds
// what the gateway sends. intercept runs first on every request; a request it answered itself (it returns
// true) goes no further. The proxy closes its connections when the test ends without waiting for the requests
// intercept holds, so that a test that fails while holding one ends all the same; a test that holds requests
// releases them in a cleanup of its own.
func frontCore(tb testing.TB, target string, intercept func(w http.ResponseWriter, r *http.Request) (answered bool)) string {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	front := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			proxy.ServeHTTP(w, r)
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = front.Serve(ln) }()
	tb.Cleanup(func() { _ = front.Close() })
	return "http://" + ln.Addr().String()
}
