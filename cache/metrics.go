package cache

import (
	"io"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/internal/striped"
)

// Process-wide metrics. Several caches may live in one process (tests, replicas); the counters add up and
// reqgate_cache_bytes sums the live caches.
var (
	staleTotal         = metrics.GetOrCreateCounter(`reqgate_cache_stale_total`)
	evictionsTotal     = metrics.GetOrCreateCounter(`reqgate_cache_evictions_total`)
	invalidationsTotal = metrics.GetOrCreateCounter(`reqgate_cache_invalidations_total`)
	busErrorsTotal     = metrics.GetOrCreateCounter(`reqgate_cache_bus_errors_total`)
	busReceivedTotal   = metrics.GetOrCreateCounter(`reqgate_cache_bus_received_total`)
	busUp              = metrics.GetOrCreateGauge(`reqgate_cache_bus_up`, nil)
	busEvictionsTotal  = metrics.GetOrCreateCounter(`reqgate_cache_bus_evictions_total`)
	busLeaseLostTotal  = metrics.GetOrCreateCounter(`reqgate_cache_bus_lease_lost_total`)
)

var live struct {
	sync.Mutex
	caches map[*Cache]struct{}
}

// hitsTotal and missesTotal are counted by every read, from whichever CPU serves it: striped (internal/striped),
// so that reads on two CPUs do not share one cache line for them.
var hitsTotal, missesTotal striped.Counter

func init() {
	metrics.RegisterMetricsWriter(func(w io.Writer) {
		metrics.WriteCounterUint64(w, "reqgate_cache_hits_total", hitsTotal.Load())
		metrics.WriteCounterUint64(w, "reqgate_cache_misses_total", missesTotal.Load())
	})
	metrics.GetOrCreateGauge(`reqgate_cache_bytes`, func() float64 {
		live.Lock()
		defer live.Unlock()
		var n int64
		for c := range live.caches {
			n += c.bytes()
		}
		return float64(n)
	})
}

func register(c *Cache) {
	live.Lock()
	defer live.Unlock()
	if live.caches == nil {
		live.caches = make(map[*Cache]struct{})
	}
	live.caches[c] = struct{}{}
}

func unregister(c *Cache) {
	live.Lock()
	defer live.Unlock()
	delete(live.caches, c)
}
