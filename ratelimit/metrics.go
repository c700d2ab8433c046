package ratelimit

import "github.com/VictoriaMetrics/metrics"

// Metrics of every Limiter in the process (VictoriaMetrics default set, served by the gateway's /metrics).
var (
	decisionsAdmit   = metrics.GetOrCreateCounter(`reqgate_ratelimit_decisions_total{result="admit"}`)
	decisionsDelay   = metrics.GetOrCreateCounter(`reqgate_ratelimit_decisions_total{result="delay"}`)
	decisionsReject  = metrics.GetOrCreateCounter(`reqgate_ratelimit_decisions_total{result="reject"}`)
	redisFallback    = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_fallback_total`) // decisions made without Redis
	redisErrors      = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_errors_total`)   // failed or slow script calls
	switchToFallback = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_switches_total{to="fallback"}`)
	switchToRedis    = metrics.GetOrCreateCounter(`reqgate_ratelimit_redis_switches_total{to="redis"}`)
	redisUp          = metrics.GetOrCreateGauge(`reqgate_ratelimit_redis_up`, nil) // 1 shared limits, 0 fallback
	heldNow          = metrics.GetOrCreateGauge(`reqgate_ratelimit_held`, nil)     // requests held for a slot now
	redisSeconds     = metrics.GetOrCreatePrometheusHistogram(`reqgate_ratelimit_redis_duration_seconds`)
)
