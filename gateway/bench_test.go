package gateway

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/reqgate/reqgate/core/coretest"
)

// The benchmarks send the same GET over loopback HTTP (a fasthttp client) straight to the real core, through
// the gateway as a cache hit, through the gateway as a miss (Cache-Control: no-cache: fetched, copied and
// stored every time), and to a bare fasthttp server returning the same bytes (the ceiling). Each reports
// req/s and, for the sequential variants, p50/p99 latency in µs.

const benchPath = "/api2/demo/re/1"

var benchAuth = "Basic ZGVtbzpkZW1v" // demo:demo

type benchTarget struct {
	addr    string
	headers []string
}

func benchClient(addr string) *fasthttp.HostClient {
	return &fasthttp.HostClient{Addr: addr, MaxConns: 256, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
}

func benchRequest(t benchTarget) *fasthttp.Request {
	req := fasthttp.AcquireRequest()
	req.SetRequestURI("http://" + t.addr + benchPath)
	req.Header.Set("Authorization", benchAuth)
	for i := 0; i+1 < len(t.headers); i += 2 {
		req.Header.Set(t.headers[i], t.headers[i+1])
	}
	return req
}

// runParallel measures throughput with b.RunParallel (GOMAXPROCS*p goroutines).
func runParallel(b *testing.B, t benchTarget, wantCache string) {
	c := benchClient(t.addr)
	b.SetParallelism(32)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		req := benchRequest(t)
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		for pb.Next() {
			if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
				b.Errorf("status %d err %v", resp.StatusCode(), err)
				return
			}
			if wantCache != "" && string(resp.Header.Peek("X-Cache")) != wantCache {
				b.Errorf("X-Cache=%q, want %q", resp.Header.Peek("X-Cache"), wantCache)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// runSequential measures latency, one request at a time.
func runSequential(b *testing.B, t benchTarget) {
	c := benchClient(t.addr)
	req := benchRequest(t)
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		t0 := time.Now()
		if err := c.Do(req, resp); err != nil || resp.StatusCode() != 200 {
			b.Fatalf("status %d err %v", resp.StatusCode(), err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

type benchSetup struct {
	core    benchTarget
	hit     benchTarget
	miss    benchTarget
	ceiling benchTarget
}

func setupBench(b *testing.B) benchSetup {
	c := coretest.Start(b, coretest.Options{})
	gw := startGateway(b, cachedOptions(c))
	addr := gw.URL[len("http://"):]
	// Verify the credential and fill the cache.
	for range 2 {
		get(b, gw.URL+benchPath)
	}
	body := get(b, c.URL+benchPath).Body
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	bodyBytes := []byte(body)
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/xml; charset=utf-8")
		ctx.SetBody(bodyBytes)
	}}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown() })
	return benchSetup{
		core:    benchTarget{addr: c.Addr},
		hit:     benchTarget{addr: addr},
		miss:    benchTarget{addr: addr, headers: []string{"Cache-Control", "no-cache"}},
		ceiling: benchTarget{addr: ln.Addr().String()},
	}
}

// BenchmarkCachedGET is the gateway answering from its cache, with its sequential latency.
func BenchmarkCachedGET(b *testing.B) {
	s := setupBench(b)
	b.Run("parallel", func(b *testing.B) { runParallel(b, s.hit, "HIT") })
	b.Run("sequential", func(b *testing.B) { runSequential(b, s.hit) })
}

// BenchmarkMissGET is the gateway fetching from the core every time (and storing the copy).
func BenchmarkMissGET(b *testing.B) {
	s := setupBench(b)
	b.Run("parallel", func(b *testing.B) { runParallel(b, s.miss, "BYPASS") })
	b.Run("sequential", func(b *testing.B) { runSequential(b, s.miss) })
}

// BenchmarkDirectCore is the same GET straight to the core, the baseline of both.
func BenchmarkDirectCore(b *testing.B) {
	s := setupBench(b)
	b.Run("parallel", func(b *testing.B) { runParallel(b, s.core, "") })
	b.Run("sequential", func(b *testing.B) { runSequential(b, s.core) })
}

// BenchmarkCeiling is a bare fasthttp server returning the same bytes: what any gateway hit could reach.
func BenchmarkCeiling(b *testing.B) {
	s := setupBench(b)
	b.Run("parallel", func(b *testing.B) { runParallel(b, s.ceiling, "") })
	b.Run("sequential", func(b *testing.B) { runSequential(b, s.ceiling) })
}
