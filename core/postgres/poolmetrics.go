package postgres

import (
	"sync"

	"github.com/VictoriaMetrics/metrics"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connection-pool gauges, summed over the open stores of the process (one, outside tests):
// reqgate_core_store_pool_conns{state="acquired|idle|total"} and reqgate_core_store_pool_max_conns, and the
// counter reqgate_core_store_pool_empty_acquire_total of acquires that had to wait for a connection. A pool
// that stays at its limit with waiting acquires is the sign to raise pool_max_conns (or the database's
// max_connections, shared by all replicas).
var (
	poolsMu sync.Mutex
	pools   = map[*pgxpool.Pool]bool{}
)

func registerPool(p *pgxpool.Pool) {
	poolsMu.Lock()
	pools[p] = true
	poolsMu.Unlock()
}

func unregisterPool(p *pgxpool.Pool) {
	poolsMu.Lock()
	delete(pools, p)
	poolsMu.Unlock()
}

func poolSum(f func(s *pgxpool.Stat) int64) float64 {
	poolsMu.Lock()
	defer poolsMu.Unlock()
	var n int64
	for p := range pools {
		n += f(p.Stat())
	}
	return float64(n)
}

func init() {
	metrics.NewGauge(`reqgate_core_store_pool_conns{state="acquired"}`, func() float64 {
		return poolSum(func(s *pgxpool.Stat) int64 { return int64(s.AcquiredConns()) })
	})
	metrics.NewGauge(`reqgate_core_store_pool_conns{state="idle"}`, func() float64 {
		return poolSum(func(s *pgxpool.Stat) int64 { return int64(s.IdleConns()) })
	})
	metrics.NewGauge(`reqgate_core_store_pool_conns{state="total"}`, func() float64 {
		return poolSum(func(s *pgxpool.Stat) int64 { return int64(s.TotalConns()) })
	})
	metrics.NewGauge(`reqgate_core_store_pool_max_conns`, func() float64 {
		return poolSum(func(s *pgxpool.Stat) int64 { return int64(s.MaxConns()) })
	})
	metrics.NewGauge(`reqgate_core_store_pool_empty_acquire_total`, func() float64 {
		return poolSum(func(s *pgxpool.Stat) int64 { return s.EmptyAcquireCount() })
	})
}
