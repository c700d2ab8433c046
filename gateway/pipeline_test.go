package gateway

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// stageExchange parses raw (a request head, CRLF line ends; no body is read) as the server would and returns an
// exchange for it from a remote address.
func stageExchange(t *testing.T, raw, remote string) *exchange {
	t.Helper()
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(remote), Port: 40000}, nil)
	if err := ctx.Request.Header.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	x := &exchange{}
	x.state = state{ctx: ctx}
	x.extra = x.extraBuf[:0]
	return x
}

func header(x *exchange, key string) string {
	for _, h := range x.extra {
		if h.Key == key {
			return h.Value
		}
	}
	return string(x.ctx.Response.Header.Peek(key))
}

// TestStages runs each stage of the pipeline on its own, on parsed requests without a network: whether it
// lets the request go on, and what it notes or answers.
func TestStages(t *testing.T) {
	g, err := New(withConfig(Options{Upstreams: []string{"http://127.0.0.1:1"}, MaxBodyBytes: 100,
		CORSOrigins: []string{"https://app.example"}, TrustedProxies: networks(t, "10.0.0.0/8")}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Shutdown(t.Context()) })
	get := func(target, extra string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: gw.test\r\n" + extra + "\r\n"
	}
	for _, tc := range []struct {
		name   string
		stage  stage
		raw    string
		remote string
		goOn   bool
		check  func(t *testing.T, x *exchange)
	}{
		{"identify keeps a plain request id", (*Gateway).identify, get("/x", "X-Request-Id: abc-1\r\nAccept: application/json\r\nAccept-Encoding: br\r\n"), "192.0.2.1", true,
			func(t *testing.T, x *exchange) {
				if x.reqID != "abc-1" || header(x, "X-Request-Id") != "abc-1" || !x.json || x.accept != acceptBrotli {
					t.Errorf("id %q, json %v, accept %b", x.reqID, x.json, x.accept)
				}
			}},
		{"identify replaces a request id with spaces", (*Gateway).identify, get("/x", "X-Request-Id: a b\r\n"), "192.0.2.1", true,
			func(t *testing.T, x *exchange) {
				if x.reqID == "" || x.reqID == "a b" {
					t.Errorf("id %q", x.reqID)
				}
			}},
		{"route normalises", (*Gateway).route, get("/api2/x/../demo/./re/1?b=2&a=1", ""), "192.0.2.1", true,
			func(t *testing.T, x *exchange) {
				if x.rt.Path != "/api2/demo/re/1" || x.rt.Query != "a=1&b=2" || x.rt.APIKey != "demo" {
					t.Errorf("route %+v", x.rt)
				}
			}},
		{"refuse answers a malformed target", (*Gateway).refuse, get("/api2/demo/%zz", ""), "192.0.2.1", false,
			func(t *testing.T, x *exchange) {
				if x.ctx.Response.StatusCode() != 400 {
					t.Errorf("status %d", x.ctx.Response.StatusCode())
				}
			}},
		{"refuse answers an empty path segment 404", (*Gateway).refuse, get("/api2/demo//re/1", ""), "192.0.2.1", false,
			func(t *testing.T, x *exchange) {
				if x.ctx.Response.StatusCode() != 404 {
					t.Errorf("status %d", x.ctx.Response.StatusCode())
				}
			}},
		{"refuse answers a body over the limit", (*Gateway).refuse, "POST /api2/demo/re HTTP/1.1\r\nHost: gw\r\nContent-Length: 101\r\n\r\n", "192.0.2.1", false,
			func(t *testing.T, x *exchange) {
				if x.ctx.Response.StatusCode() != 413 || !x.announced {
					t.Errorf("status %d, announced %v", x.ctx.Response.StatusCode(), x.announced)
				}
			}},
		{"health answers /healthz", (*Gateway).serveOwn, get("/healthz", ""), "192.0.2.1", false,
			func(t *testing.T, x *exchange) {
				if x.ctx.Response.StatusCode() != 200 || string(x.ctx.Response.Body()) != "ok\n" {
					t.Errorf("%d %q", x.ctx.Response.StatusCode(), x.ctx.Response.Body())
				}
			}},
		{"health passes the API on", (*Gateway).serveOwn, get("/api2/demo/re/1", ""), "192.0.2.1", true, nil},
		{"cors answers an allowed preflight", (*Gateway).cors, "OPTIONS /api2/demo/re/1 HTTP/1.1\r\nHost: gw\r\nOrigin: https://app.example\r\nAccess-Control-Request-Method: PUT\r\n\r\n", "192.0.2.1", false,
			func(t *testing.T, x *exchange) {
				if x.ctx.Response.StatusCode() != 204 || header(x, "Access-Control-Allow-Origin") != "https://app.example" {
					t.Errorf("%d, allow %q", x.ctx.Response.StatusCode(), header(x, "Access-Control-Allow-Origin"))
				}
			}},
		{"cors passes another origin on without headers", (*Gateway).cors, get("/api2/demo/re/1", "Origin: https://evil.example\r\n"), "192.0.2.1", true,
			func(t *testing.T, x *exchange) {
				if header(x, "Access-Control-Allow-Origin") != "" {
					t.Errorf("allowed %q", header(x, "Access-Control-Allow-Origin"))
				}
			}},
		{"origin believes a trusted proxy", (*Gateway).origin, get("/x", "X-Forwarded-Proto: https\r\nX-Forwarded-Host: api.example\r\nX-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 192.0.2.9\r\n"), "10.1.2.3", true,
			func(t *testing.T, x *exchange) {
				if x.scheme() != "https" || x.callerHost() != "api.example" || x.clientIP() != "192.0.2.9" {
					t.Errorf("scheme %q host %q ip %q", x.scheme(), x.callerHost(), x.clientIP())
				}
			}},
		{"origin ignores anyone else's forwarding headers", (*Gateway).origin, get("/x", "X-Forwarded-Proto: https\r\nX-Forwarded-Host: api.example\r\nX-Forwarded-For: 6.6.6.6\r\n"), "192.0.2.1", true,
			func(t *testing.T, x *exchange) {
				if x.scheme() != "http" || x.callerHost() != "gw.test" || x.clientIP() != "192.0.2.1" {
					t.Errorf("scheme %q host %q ip %q", x.scheme(), x.callerHost(), x.clientIP())
				}
			}},
		{"auth passes a non-API request on", (*Gateway).auth, get("/elsewhere", ""), "192.0.2.1", true, nil},
		{"limit passes without a limiter", (*Gateway).limit, get("/elsewhere", ""), "192.0.2.1", true, nil},
		{"body reads nothing of a non-API request", (*Gateway).body, "POST /elsewhere HTTP/1.1\r\nHost: gw\r\nContent-Length: 5\r\n\r\n", "192.0.2.1", true,
			func(t *testing.T, x *exchange) {
				if x.bodyRead {
					t.Error("the body was read")
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := stageExchange(t, tc.raw, tc.remote)
			// The stages before the one under test, as the pipeline runs them.
			for _, s := range pipeline {
				if samestage(s, tc.stage) {
					break
				}
				if !s(g, x) {
					t.Fatalf("an earlier stage answered: %d", x.ctx.Response.StatusCode())
				}
			}
			if got := tc.stage(g, x); got != tc.goOn {
				t.Fatalf("stage returned %v, want %v (status %d)", got, tc.goOn, x.ctx.Response.StatusCode())
			}
			if tc.check != nil {
				tc.check(t, x)
			}
		})
	}
}

// samestage reports whether two stages are the same method (func values do not compare in Go: by name).
func samestage(a, b stage) bool { return funcName(a) == funcName(b) }

func funcName(s stage) string { return runtime.FuncForPC(reflect.ValueOf(s).Pointer()).Name() }

// TestPipelineInMemory serves through Serve on an in-memory listener (fasthttputil) in front of the real core:
// the stages together answer a read, a cached read and a refusal, without a TCP port.
func TestPipelineInMemory(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	g, err := New(cachedOptions(c))
	if err != nil {
		t.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	go func() { _ = g.Serve(ln) }()
	t.Cleanup(func() { _ = g.Shutdown(t.Context()) })
	hc := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return ln.Dial()
	}}}
	for i, want := range []struct {
		user, cache string
		status      int
	}{{"demo", "MISS", 200}, {"demo", "HIT", 200}, {"", "MISS", 401}} {
		res := testsupport.Do(t, hc, http.MethodGet, "http://gw/api2/demo/re/1", want.user, want.user, "")
		if res.Status != want.status || res.Header.Get("X-Cache") != want.cache {
			t.Errorf("request %d: %d %q, want %d %q", i, res.Status, res.Header.Get("X-Cache"), want.status, want.cache)
		}
	}
}
