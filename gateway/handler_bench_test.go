package gateway

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

// BenchmarkHandlerHit runs the gateway's handler on a cache hit without the network, to show the gateway's
// own cost per hit (route parsing, credential check, cache lookup, metrics), for XML, for the cached JSON
// form (Accept: application/json), for XML with the defaults of a deployment (access log, a rate policy), and
// for XML traced (every request sampled; the spans batched to an exporter that drops them) and traced at ratio 0
// (every request a trace that is not recorded, the share a low tracing.sample_ratio leaves).
func BenchmarkHandlerHit(b *testing.B) {
	c := coretest.Start(b, coretest.Options{})
	plain := startGateway(b, cachedOptions(c))
	// The gateway at its defaults: the access log on (written to a buffered discard), and one in-process
	// rate policy that never rejects.
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{Policies: []ratelimit.Policy{
		{Name: "never", Key: "api_key", Limit: 1_000_000, Burst: 1_000_000, Period: time.Second}}}))
	if err != nil {
		b.Fatal(err)
	}
	opt := cachedOptions(c)
	opt.Limiter = l
	opt.AccessLog = accesslog.New(bufio.NewWriterSize(io.Discard, 64<<10), "json", "part", "gateway")
	opt.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil)) // at info: the access log is written
	defaults := startGateway(b, opt)
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opt = cachedOptions(c)
	opt.Tracer = tp.Tracer("bench")
	traced := startGateway(b, opt)
	tpNever := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0))))
	b.Cleanup(func() { _ = tpNever.Shutdown(context.Background()) })
	opt.Tracer = tpNever.Tracer("bench")
	unsampled := startGateway(b, opt)
	for _, tc := range []struct {
		name, accept string
		gw           *testGateway
	}{
		{"xml", "", plain},
		{"json", "application/json", plain},
		{"defaults", "", defaults},
		{"traced", "", traced},
		{"unsampled", "", unsampled},
	} {
		b.Run(tc.name, func(b *testing.B) {
			gw, accept := tc.gw, tc.accept
			get(b, gw.URL+benchPath, "Accept: "+accept)
			get(b, gw.URL+benchPath, "Accept: "+accept)
			h := gw.Handler()
			// On a connection as the gateway accepts it (the memos of its last request in use), over TCP.
			server, _ := tcpPair(b)
			var ctx fasthttp.RequestCtx
			ctx.Init2(&conn{Conn: server}, nil, false)
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
