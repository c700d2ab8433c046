package ratelimit

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// never is a policy no benchmark request exceeds.
var never = []Policy{{Name: "account", Key: KeyAPIKey, Limit: 1_000_000, Period: time.Second, Burst: 1 << 30}}

// benchAdmit runs Admit from 8 goroutines per CPU (a gateway serves many connections at once), each its own key.
func benchAdmit(b *testing.B, l *Limiter, redisPID int) {
	var id atomic.Int64
	b.SetParallelism(8)
	b.ReportAllocs()
	defer reportCPU(b, redisPID)()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := Request{APIKey: "bench-" + strconv.FormatInt(id.Add(1), 10), IP: "10.0.0.1"}
		for pb.Next() {
			if d := l.Admit(context.Background(), r); !d.Allowed || d.Fallback {
				b.Fatalf("decision %+v", d)
			}
		}
	})
}

func BenchmarkAdmitLocal(b *testing.B) {
	benchAdmit(b, mustNew(b, Options{Policies: never}), 0)
}

// BenchmarkAdmitLocalMemo is BenchmarkAdmitLocal with a Memo per goroutine, as the gateway asks with one per
// keep-alive connection: each goroutine with a key of its own, and all on one key (the connections of one
// api_key, which meet on that key's state).
func BenchmarkAdmitLocalMemo(b *testing.B) {
	for _, shared := range []bool{false, true} {
		b.Run("shared="+strconv.FormatBool(shared), func(b *testing.B) {
			l := mustNew(b, Options{Policies: never})
			var id atomic.Int64
			b.SetParallelism(8)
			b.ReportAllocs()
			defer reportCPU(b, 0)()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := Request{APIKey: "bench-" + strconv.FormatInt(id.Add(1), 10), Memo: new(Memo)}
				if shared {
					r.APIKey = "bench"
				}
				for pb.Next() {
					if d := l.Admit(context.Background(), r); !d.Allowed {
						b.Fatalf("decision %+v", d)
					}
				}
			})
		})
	}
}

// BenchmarkAdmitRedisPerRequest takes every decision in Redis (NoCredits), through the autopipeliner or with one
// pooled connection per call (NoAutoPipeline): the cost of a policy too slow for credits or near its limit.
func BenchmarkAdmitRedisPerRequest(b *testing.B) {
	for _, direct := range []bool{false, true} {
		b.Run("NoAutoPipeline="+strconv.FormatBool(direct), func(b *testing.B) {
			srv := redistest.Start(b)
			benchAdmit(b, mustNew(b, Options{Policies: never, Redis: newClient(b, srv), RedisTimeout: 10 * time.Second,
				NoCredits: true, NoAutoPipeline: direct}), srv.PID())
		})
	}
}

// BenchmarkAdmitRedisFlood is a flood far above the limit (1 request per hour): the reject cache answers almost
// every call without Redis; with NoRejectCache each one is a round trip.
func BenchmarkAdmitRedisFlood(b *testing.B) {
	for _, noCache := range []bool{false, true} {
		b.Run("NoRejectCache="+strconv.FormatBool(noCache), func(b *testing.B) {
			srv := redistest.Start(b)
			l := mustNew(b, Options{Redis: newClient(b, srv), RedisTimeout: 10 * time.Second, NoRejectCache: noCache,
				Policies: []Policy{{Name: "account", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Hour}}})
			b.SetParallelism(8)
			b.ReportAllocs()
			defer reportCPU(b, srv.PID())()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if d := l.Admit(context.Background(), Request{APIKey: "flood"}); d.Fallback {
						b.Fatalf("decision %+v", d)
					}
				}
			})
		})
	}
}

// BenchmarkRedisPing is the floor under BenchmarkAdmitRedis: one round trip to the same server.
func BenchmarkRedisPing(b *testing.B) {
	srv := redistest.Start(b)
	c := newClient(b, srv)
	b.SetParallelism(8)
	b.ReportAllocs()
	defer reportCPU(b, srv.PID())()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Ping(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAdmitRedis is the default shared limiter under a fast policy far from its limit: mostly credits.
func BenchmarkAdmitRedis(b *testing.B) {
	srv := redistest.Start(b)
	benchAdmit(b, mustNew(b, Options{Policies: never, Redis: newClient(b, srv), RedisTimeout: 10 * time.Second}), srv.PID())
}

// reportCPU reports the CPU time per operation of this process (client-cpu-ns/op) and of redis-server
// (redis-cpu-ns/op): on the shared, noisy test machine wall-clock ns/op swings with other load, CPU per op much
// less, and CPU is what bounds the gateway's requests per second on its two cores.
func reportCPU(b *testing.B, redisPID int) func() {
	c0, r0 := selfCPU(), procCPU(redisPID)
	return func() {
		n := float64(b.N)
		b.ReportMetric(float64(selfCPU()-c0)/n, "client-cpu-ns/op")
		if redisPID != 0 {
			b.ReportMetric(float64(procCPU(redisPID)-r0)/n, "redis-cpu-ns/op")
		}
	}
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU reads utime+stime of pid from /proc (clock ticks of 10ms on Linux).
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state); utime and stime are fields 14 and 15
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}
