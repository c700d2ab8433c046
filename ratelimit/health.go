package ratelimit

import (
	"log/slog"
	"sync/atomic"
	"time"
)

// redisHealth tells whether to call Redis, circuit-breaker style with hysteresis: RedisFailures failures in a
// row switch every caller to the fallback; then one caller per RedisBackoff probes Redis, and only a probe that
// Redis answers switches back. The fallback asks it before the caches, which must not answer while Redis is
// down; the Redis store tells it how each call went, so that only Redis itself, never a cache, ends the switch.
//
// "In a row" counts moments of failure, not calls: a failure counts only when its call started after the last
// counted one was seen. A single stall of Redis (a slow fork for a snapshot, a long command, a lost packet)
// times out every call in flight at once, and under load those are many; counted one by one they switched
// a healthy Redis to the fallback many times an hour. Counted as one, it takes a stall of about RedisFailures
// times RedisTimeout, or as many refused connections one after the other, to switch. A failed call is still
// decided by the fallback, switched or not.
type redisHealth struct {
	backoff  time.Duration
	failures int64  // Options.RedisFailures
	mode     string // for the log
	log      *slog.Logger
	down     atomic.Bool  // switched to the fallback
	probeAt  atomic.Int64 // clock nanoseconds after which one caller probes Redis again
	epoch    atomic.Int64 // switches to the fallback so far: tells a probe of this switch from a call sent before it
	inRow    atomic.Int64 // failures counted in a row since Redis last answered
	lastFail atomic.Int64 // clock nanoseconds when the last counted failure was seen
}

func newRedisHealth(opt Options) *redisHealth {
	return &redisHealth{backoff: opt.RedisBackoff, failures: int64(opt.RedisFailures), mode: opt.OnRedisError,
		log: opt.Logger}
}

// healthEpoch is the origin of the health clock: monotonic nanoseconds since it, never 0 for a call.
var healthEpoch = time.Now()

func healthNow() int64 { return int64(time.Since(healthEpoch)) + 1 }

// redisCall is what the health needs to know of one call to Redis when it ends: when it started, and whether it
// was a probe of the switch it started in.
type redisCall struct {
	at    int64
	epoch int64 // the switch it probes; 0 when the limiter was not switched at its start
}

// usable reports whether to call Redis: always while it is up; while it is switched, for one caller per
// back-off, the probe.
func (h *redisHealth) usable() bool {
	if !h.down.Load() {
		return true
	}
	at := h.probeAt.Load()
	now := healthNow()
	return now >= at && h.probeAt.CompareAndSwap(at, now+int64(h.backoff))
}

// begin marks the start of a call to Redis.
func (h *redisHealth) begin() redisCall {
	c := redisCall{at: healthNow()}
	if h.down.Load() {
		c.epoch = h.epoch.Load()
	}
	return c
}

// failed records a call that failed or took longer than RedisTimeout.
func (h *redisHealth) failed(c redisCall, err error) {
	redisErrors.Inc()
	now := healthNow()
	if h.down.Load() {
		if c.epoch != 0 {
			h.probeAt.Store(now + int64(h.backoff)) // a failed probe: the next one a back-off from now
		}
		return
	}
	for {
		last := h.lastFail.Load()
		if c.at < last {
			return // in flight when the last counted failure was seen: the same stall
		}
		if h.lastFail.CompareAndSwap(last, now) {
			break
		}
	}
	if h.inRow.Add(1) < h.failures {
		return
	}
	h.probeAt.Store(now + int64(h.backoff))
	h.epoch.Add(1)
	if h.down.CompareAndSwap(false, true) {
		redisUp().Set(0)
		switchToFallback.Inc()
		h.log.Warn("ratelimit: Redis unavailable, switching to the fallback", "on_redis_error", h.mode,
			"failures_in_a_row", h.failures, "retry_in", h.backoff, "err", err)
	}
}

// answered records a call that Redis answered in time. While switched, only the probe of the current switch
// ends it: an answer to a call sent before the switch says nothing of Redis now.
func (h *redisHealth) answered(c redisCall) {
	if !h.down.Load() {
		if c.at >= h.lastFail.Load() {
			h.inRow.Store(0)
		}
		return
	}
	if c.epoch == 0 || c.epoch != h.epoch.Load() {
		return
	}
	if h.down.CompareAndSwap(true, false) {
		h.inRow.Store(0)
		redisUp().Set(1)
		switchToRedis.Inc()
		h.log.Info("ratelimit: Redis is back, shared limits restored")
	}
}
