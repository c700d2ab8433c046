package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// never is a policy no benchmark request exceeds.
var never = []Policy{{Name: "account", Key: KeyAPIKey, Limit: 1_000_000, Period: time.Second, Burst: 1 << 30}}

// benchAdmit runs Admit from 8 goroutines per CPU (a gateway serves many connections at once), each its own key.
func benchAdmit(b *testing.B, l *Limiter) {
	var id atomic.Int64
	b.SetParallelism(8)
	b.ReportAllocs()
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
	benchAdmit(b, mustNew(b, Options{Policies: never}))
}

func BenchmarkAdmitRedis(b *testing.B) {
	srv := redistest.Start(b)
	benchAdmit(b, mustNew(b, Options{Policies: never, Redis: newClient(b, srv), RedisTimeout: 10 * time.Second}))
}

// BenchmarkRedisPing is the floor under BenchmarkAdmitRedis: one round trip to the same server.
func BenchmarkRedisPing(b *testing.B) {
	c := newClient(b, redistest.Start(b))
	b.SetParallelism(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := c.Ping(context.Background()).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
