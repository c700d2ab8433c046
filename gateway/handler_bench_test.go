package gateway

import (
	"bufio"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
)

// BenchmarkHandlerHit runs the gateway's handler on a cache hit without the network, to show the gateway's
// own cost per hit (route parsing, credential check, cache lookup, metrics), for XML and for the cached JSON
// form (Accept: application/json).
func BenchmarkHandlerHit(b *testing.B) {
	c := coretest.Start(b, coretest.Options{})
	gw := startGateway(b, cachedOptions(c))
	for _, accept := range []string{"", "application/json"} {
		name := "xml"
		if accept != "" {
			name = "json"
		}
		b.Run(name, func(b *testing.B) {
			get(b, gw.URL+benchPath, "Accept: "+accept)
			get(b, gw.URL+benchPath, "Accept: "+accept)
			h := gw.Handler()
			var ctx fasthttp.RequestCtx
			ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}, nil)
			// The request is parsed from its bytes each time, as the server does, so the figure includes
			// fasthttp's parse of the headers the handler reads.
			raw := "GET " + benchPath + " HTTP/1.1\r\nHost: gw.test\r\nAuthorization: " + benchAuth + "\r\n"
			if accept != "" {
				raw += "Accept: " + accept + "\r\n"
			}
			raw += "\r\n"
			src := strings.NewReader(raw)
			br := bufio.NewReader(src)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ctx.Request.Reset()
				ctx.Response.Reset()
				src.Reset(raw)
				br.Reset(src)
				if err := ctx.Request.Read(br); err != nil {
					b.Fatal(err)
				}
				h(&ctx)
				if string(ctx.Response.Header.Peek("X-Cache")) != "HIT" {
					b.Fatalf("X-Cache=%q", ctx.Response.Header.Peek("X-Cache"))
				}
			}
			b.ReportMetric(float64(len(ctx.Response.Body())), "body-bytes")
		})
	}
}

// BenchmarkHandlerHitParallel is BenchmarkHandlerHit from many goroutines, to show contention.
func BenchmarkHandlerHitParallel(b *testing.B) {
	c := coretest.Start(b, coretest.Options{})
	gw := startGateway(b, cachedOptions(c))
	get(b, gw.URL+benchPath)
	get(b, gw.URL+benchPath)
	h := gw.Handler()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		ctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}, nil)
		for pb.Next() {
			ctx.Request.Reset()
			ctx.Response.Reset()
			ctx.Request.SetRequestURI(benchPath)
			ctx.Request.Header.SetHost("gw.test")
			ctx.Request.Header.Set("Authorization", benchAuth)
			h(&ctx)
		}
	})
}
