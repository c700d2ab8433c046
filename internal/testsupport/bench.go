package testsupport

import (
	"sync"
	"testing"
	"time"
)

// ParallelLatencies runs b.RunParallel with parallelism goroutines per GOMAXPROCS (b.SetParallelism), as that
// many concurrent clients: each calls newOp once for an op of its own (its own random source, its own key), then
// calls that op once per iteration and times it. It returns every call's latency, in no order, and the wall time
// of the run; the timer is reset before and stopped after. An op's error fails the benchmark and ends its goroutine.
func ParallelLatencies(b *testing.B, parallelism int, newOp func() func() error) (lat []time.Duration, elapsed time.Duration) {
	b.Helper()
	var mu sync.Mutex
	b.SetParallelism(parallelism)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		op := newOp()
		local := make([]time.Duration, 0, 1024)
		for pb.Next() {
			t0 := time.Now()
			if err := op(); err != nil {
				b.Error(err)
				return
			}
			local = append(local, time.Since(t0))
		}
		mu.Lock()
		lat = append(lat, local...)
		mu.Unlock()
	})
	elapsed = time.Since(start)
	b.StopTimer()
	return lat, elapsed
}
