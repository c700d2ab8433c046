package ratelimit

import (
	"fmt"
	"io"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/internal/striped"
)

// Metrics of every Limiter in the process (VictoriaMetrics default set, served by the gateway's /metrics).
var (
	redisFallback    = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_fallback_total`) // decisions made without Redis
	redisErrors      = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_errors_total`)   // failed or slow script calls
	switchToFallback = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_switches_total{to="fallback"}`)
	switchToRedis    = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_switches_total{to="redis"}`)
	rejectCacheHits  = metrics.GetOrCreateCounter(`reqgate_ratelimit_reject_cache_hits_total`) // rejected without Redis
	creditHits       = metrics.GetOrCreateCounter(`reqgate_ratelimit_credit_hits_total`)       // admitted on a credit, without Redis
	heldNow          = metrics.GetOrCreateGauge(`reqgate_ratelimit_held`, nil)                 // requests held for a slot now
	replicasGauge    = metrics.GetOrCreateGauge(`reqgate_ratelimit_replicas`, nil)             // replicas sharing the limits, as last counted
	redisSeconds     = metrics.GetOrCreatePrometheusHistogram(`reqgate_ratelimit_redis_duration_seconds`)
	// redisUpGauge is 1 while decisions come from Redis and 0 while on the fallback, and 0 in a process without
	// Redis: limits are not shared there either. An alert on a replica that lost Redis therefore watches
	// reqgate_ratelimit_redis_fallback_total, which only a limiter with Redis moves.
	redisUpGauge = metrics.GetOrCreateGauge(`reqgate_ratelimit_redis_up`, nil)
)

func redisUp() *metrics.Gauge { return redisUpGauge }

// decisions counts reqgate_ratelimit_decisions_total by result. Every request a policy matches makes a
// decision, on whichever CPU serves it, so the counts are striped (internal/striped) on Request.Stripe.
var decisions [3]striped.Counter

const (
	decisionAdmit = iota
	decisionDelay
	decisionReject
)

func init() {
	metrics.RegisterMetricsWriter(func(w io.Writer) {
		metrics.WriteMetadataIfNeeded(w, "reqgate_ratelimit_decisions_total", "counter")
		for i, result := range [...]string{"admit", "delay", "reject"} {
			fmt.Fprintf(w, "reqgate_ratelimit_decisions_total{result=%q} %d\n", result, decisions[i].Load())
		}
	})
}
