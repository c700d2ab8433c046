package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// BenchmarkRedisCallLatency measures what ratelimit.redis_timeout must cover: the time of each decision taken in
// Redis (NoCredits: every request is a script call, through the autopipeliner as by default) while 64 callers
// keep the limiter busy, and reports its percentiles and maximum in milliseconds. The default timeout is set
// from it (docs/performance.md, Rate-limit Redis timeout); run with -benchtime=20s or more for a long tail.
func BenchmarkRedisCallLatency(b *testing.B) {
	srv := redistest.Start(b)
	l := mustNew(b, Options{Policies: never, Redis: newClient(b, srv), RedisTimeout: 10 * time.Second, NoCredits: true})
	var id atomic.Int64
	all, _ := testsupport.ParallelLatencies(b, 32, func() func() error { // 64 callers on 2 CPUs
		r := Request{APIKey: "lat-" + strconv.FormatInt(id.Add(1), 10)}
		return func() error {
			if d := l.Admit(context.Background(), r); d.Fallback {
				return fmt.Errorf("decision %+v", d)
			}
			return nil
		}
	})
	if len(all) == 0 {
		return // every caller failed at once
	}
	slices.Sort(all)
	at := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))]) / 1e6 }
	b.ReportMetric(at(0.5), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
	b.ReportMetric(at(0.999), "p99.9-ms")
	b.ReportMetric(at(0.9999), "p99.99-ms")
	b.ReportMetric(float64(all[len(all)-1])/1e6, "max-ms")
	for _, ms := range []int{50, 100} {
		n, _ := slices.BinarySearch(all, time.Duration(ms)*time.Millisecond+1)
		b.ReportMetric(float64(len(all)-n)/float64(len(all))*1e6, "per-million>"+strconv.Itoa(ms)+"ms")
	}
}
