package gateway

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/gateway/route"
)

// TestPrepareRequest checks the upstream request built from a caller's: hop-by-hop headers (and those named
// in Connection) dropped, X-Forwarded-* set, the normalised target under the upstream prefix.
func TestPrepareRequest(t *testing.T) {
	g, err := New(Options{Upstream: "http://core.internal:8081/base"})
	if err != nil {
		t.Fatal(err)
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI("/api2/demo//re/./1?b=2&a=1")
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
	x := &exchange{ctx: &ctx, rt: rt, reqID: "rid-1", ip: "192.0.2.7", host: "gw.example:8080"}
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
