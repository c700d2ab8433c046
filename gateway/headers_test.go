package gateway

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/wire/route"
)

// TestPrepareRequest checks the upstream request built from a caller's: hop-by-hop headers (and those named
// in Connection) dropped, X-Forwarded-* set, the normalised target under the upstream prefix.
func TestPrepareRequest(t *testing.T) {
	g, err := New(withConfig(Options{Upstreams: []string{"http://core.internal:8081/base"}}))
	if err != nil {
		t.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api2/demo/x/../re/./1?b=2&a=1")
	ctx.Request.Header.SetHost("gw.example:8080")
	for k, v := range map[string]string{
		"Connection": "keep-alive, X-Secret-Hop", "X-Secret-Hop": "1", "Keep-Alive": "timeout=5", "Te": "trailers",
		"Proxy-Authorization": "Basic eA==", "Upgrade": "h2c", "X-Forwarded-For": "10.0.0.1", "Authorization": "Basic ZGVtbzpkZW1v",
		"Accept-Encoding": "gzip", "X-Keep": "yes",
	} {
		ctx.Request.Header.Set(k, v)
	}
	rt, err := route.Parse(ctx.RequestURI())
	if err != nil {
		t.Fatal(err)
	}
	x := &exchange{state: state{ctx: &ctx, rt: rt, reqID: "rid-1", ip: "192.0.2.7", host: "gw.example:8080", hostRead: true}}
	g.prepare(x, &ctx.Request)
	h := &ctx.Request.Header
	for _, k := range []string{"Connection", "X-Secret-Hop", "Keep-Alive", "Te", "Proxy-Authorization", "Upgrade", "Accept-Encoding"} {
		if v := h.Peek(k); len(v) > 0 {
			t.Errorf("%s=%q still sent upstream", k, v)
		}
	}
	for _, tc := range []struct{ key, want string }{
		{"X-Forwarded-For", "10.0.0.1, 192.0.2.7"},
		{"X-Forwarded-Proto", "http"},
		{"X-Forwarded-Host", "gw.example:8080"},
		{"X-Request-Id", "rid-1"},
		{"Authorization", "Basic ZGVtbzpkZW1v"},
		{"X-Keep", "yes"},
		{"Host", "core.internal:8081"},
	} {
		if got := string(h.Peek(tc.key)); got != tc.want {
			t.Errorf("%s=%q, want %q", tc.key, got, tc.want)
		}
	}
	if got, want := string(ctx.Request.RequestURI()), "/base/api2/demo/re/1?a=1&b=2"; got != want {
		t.Errorf("target=%q, want %q", got, want)
	}
}

func TestStripHopResponse(t *testing.T) {
	var resp fasthttp.Response
	resp.Header.Set("Connection", "close, X-Hop")
	resp.Header.Set("X-Hop", "1")
	resp.Header.Set("Keep-Alive", "timeout=5")
	resp.Header.Set("X-End", "1")
	stripHop(&resp.Header)
	if resp.ConnectionClose() {
		t.Error("Connection: close of the upstream would close the caller's connection")
	}
	for _, k := range []string{"X-Hop", "Keep-Alive"} {
		if len(resp.Header.Peek(k)) > 0 {
			t.Errorf("%s kept", k)
		}
	}
	if string(resp.Header.Peek("X-End")) != "1" {
		t.Error("end-to-end header lost")
	}
}

func TestRewriteLocation(t *testing.T) {
	origins := [][]byte{[]byte("http://127.0.0.1:8081")}
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:8081/api2/demo/re/9", "https://gw.example/api2/demo/re/9"},
		{"http://127.0.0.1:80812/api2/demo/re/9", "http://127.0.0.1:80812/api2/demo/re/9"},
		{"https://gw.example/api/demo/re/9", "https://gw.example/api/demo/re/9"},
	} {
		var h fasthttp.ResponseHeader
		h.Set("Location", tc.in)
		rewriteLocation(&h, origins, "https://gw.example")
		if got := string(h.Peek("Location")); got != tc.want {
			t.Errorf("Location %q -> %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestContainsToken(t *testing.T) {
	for _, tc := range []struct {
		v, tok string
		want   bool
	}{
		{"no-cache", "no-cache", true},
		{"max-age=0, No-Cache", "no-cache", true},
		{"no-cache=\"Set-Cookie\"", "no-cache", true},
		{"max-age=0", "max-age=0", true},
		{"max-age=10", "max-age=0", false},
		{"private", "no-store", false},
		{"", "no-cache", false},
	} {
		if got := containsToken([]byte(tc.v), tc.tok); got != tc.want {
			t.Errorf("containsToken(%q, %q)=%v, want %v", tc.v, tc.tok, got, tc.want)
		}
	}
}

// TestLowercaseHeaderNames sends the headers the gateway reads with lowercase names, as some HTTP/1.1
// clients write them: they must mean what their canonical forms mean (credentials verified and the cache
// hit, no-cache revalidating, the caller's request id kept, JSON negotiated).
func TestLowercaseHeaderNames(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	get(t, gw.URL+"/api2/demo/re/1")
	get(t, gw.URL+"/api2/demo/re/1")

	conn, err := net.Dial("tcp", strings.TrimPrefix(gw.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(extra string) *http.Response {
		t.Helper()
		_, err := io.WriteString(conn, "GET /api2/demo/re/1 HTTP/1.1\r\nhost: gw.test\r\n"+
			"authorization: Basic ZGVtbzpkZW1v\r\nx-request-id: lower-1\r\n"+extra+"\r\n")
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	tests := []struct {
		name, extra, cache, ctype string
	}{
		{"authorization", "", "HIT", "application/xml"},
		{"cache-control", "cache-control: no-cache\r\n", "BYPASS", "application/xml"},
		{"pragma", "pragma: no-cache\r\n", "BYPASS", "application/xml"},
		{"accept", "accept: application/json\r\n", "", "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := send(tt.extra)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d", res.StatusCode)
			}
			if tt.cache != "" && res.Header.Get("X-Cache") != tt.cache {
				t.Errorf("X-Cache = %q, want %q", res.Header.Get("X-Cache"), tt.cache)
			}
			if !strings.HasPrefix(res.Header.Get("Content-Type"), tt.ctype) {
				t.Errorf("Content-Type = %q, want %s", res.Header.Get("Content-Type"), tt.ctype)
			}
			if id := res.Header.Get("X-Request-Id"); id != "lower-1" {
				t.Errorf("X-Request-Id = %q, want the caller's lower-1", id)
			}
		})
	}
}
