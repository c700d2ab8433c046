package gateway

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/accesslog"
	"github.com/reqgate/reqgate/internal/race"
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
	defaults := startGateway(b, defaultsOptions(b, c))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	opt := cachedOptions(c)
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
			hit := hitter(b, tc.gw, tc.accept)
			b.ReportAllocs()
			b.ResetTimer()
			c0 := processCPU()
			for range b.N {
				hit()
			}
			b.StopTimer()
			// The process's CPU per hit: on a shared machine, less swayed by other load than ns/op.
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestHitAllocations: a cache hit allocates nothing, XML or JSON, at the defaults of a deployment (the access
// log written, a rate policy). AllocsPerRun counts the whole process, whose background work (the in-process
// core, the cache's bookkeeping) allocates now and then: averaged over many hits it stays below one per hit.
func TestHitAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("under the race detector sync.Pool drops items at random, so pooled state is made again (make unit runs this without it)")
	}
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, defaultsOptions(t, c))
	for _, accept := range []string{"", "application/json"} {
		hit := hitter(t, gw, accept)
		if n := testing.AllocsPerRun(1000, hit); n != 0 {
			t.Errorf("Accept %q: %.0f allocations per hit, want 0", accept, n)
		}
	}
}

// defaultsOptions is the gateway at the defaults of a deployment: the access log on (batched, written to a
// buffered discard), and one in-process rate policy that never rejects.
func defaultsOptions(tb testing.TB, c *coretest.Core) Options {
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{Policies: []ratelimit.Policy{
		{Name: "never", Key: "api_key", Limit: 1_000_000, Burst: 1_000_000, Period: time.Second}}}))
	if err != nil {
		tb.Fatal(err)
	}
	opt := cachedOptions(c)
	opt.Limiter = l
	opt.AccessLog = accesslog.New(&lockedWriter{w: bufio.NewWriterSize(io.Discard, 64<<10)}, "json", "part", "gateway")
	opt.AccessLog.Batch(100 * time.Millisecond) // as the binary's
	tb.Cleanup(opt.AccessLog.Close)
	opt.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil)) // at info: the access log is written
	return opt
}

// lockedWriter is a buffered discard that takes a lock for each line, as the binary's log writer does: the
// access log is written from every connection's goroutine.
type lockedWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// hitter fills gw's cache with benchPath (in the representation accept asks for) and returns a function that
// serves one hit of it through gw's handler, on a connection as the gateway accepts it (the memos of its last
// request in use), over TCP. The request is parsed from its bytes each time, as the server does, so a
// benchmark's figure includes fasthttp's parse of the headers the handler reads.
func hitter(tb testing.TB, gw *testGateway, accept string) func() {
	get(tb, gw.URL+benchPath, "Accept: "+accept)
	get(tb, gw.URL+benchPath, "Accept: "+accept)
	h := gw.Handler()
	server, _ := tcpPair(tb)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init2(&conn{Conn: server, stripe: nextStripe.Add(1)}, nil, false)
	raw := "GET " + benchPath + " HTTP/1.1\r\nHost: gw.test\r\nAuthorization: " + benchAuth + "\r\n"
	if accept != "" {
		raw += "Accept: " + accept + "\r\n"
	}
	raw += "\r\n"
	src := strings.NewReader(raw)
	br := bufio.NewReader(src)
	return func() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		src.Reset(raw)
		br.Reset(src)
		if err := ctx.Request.Read(br); err != nil {
			tb.Fatal(err)
		}
		h(ctx)
		if string(ctx.Response.Header.Peek("X-Cache")) != "HIT" {
			tb.Fatalf("X-Cache=%q", ctx.Response.Header.Peek("X-Cache"))
		}
	}
}

// BenchmarkHandlerHitParallel is BenchmarkHandlerHit from several goroutines at once, each on a connection of
// its own as the server would run them: with -cpu 2 and more it shows what the hit's shared state (cache,
// counters, rate policy, access log) costs once the requests run on several CPUs. cpu-ns/op is the process's
// CPU per hit; compare it with the -cpu 1 figure.
func BenchmarkHandlerHitParallel(b *testing.B) {
	c := coretest.Start(b, coretest.Options{})
	plain := startGateway(b, cachedOptions(c))
	defaults := startGateway(b, defaultsOptions(b, c))
	for _, tc := range []struct {
		name string
		gw   *testGateway
	}{{"xml", plain}, {"defaults", defaults}} {
		b.Run(tc.name, func(b *testing.B) {
			hits := make(chan func(), 64)
			for range cap(hits) {
				hits <- hitter(b, tc.gw, "")
			}
			b.ReportAllocs()
			b.SetParallelism(4)
			b.ResetTimer()
			c0 := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				hit := <-hits
				defer func() { hits <- hit }()
				for pb.Next() {
					hit()
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
}
