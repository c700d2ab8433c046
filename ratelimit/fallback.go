package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// fallback.go switches between Redis and the OnRedisError fallback, circuit-breaker style: the first failure
// switches every caller to the fallback for RedisBackoff, then one caller probes Redis again.

// RedisOptions parses a redis:// URL into client options suited to the limiter: deadlines from the context reach
// the socket, one retry at most. The dial, read and write timeouts are those the URL sets (dial_timeout,
// read_timeout, write_timeout: an operator's explicit choice wins), and timeout (redis.timeout) for those it
// does not; timeout must be > 0. The limiter bounds each call by RedisTimeout itself; these bound the calls it
// abandons.
func RedisOptions(url string, timeout time.Duration) (*redis.Options, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("redis timeout %v: must be > 0", timeout)
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	o.ContextTimeoutEnabled = true
	o.MaxRetries = 1
	// ParseURL leaves a timeout the URL does not name at zero; one it names 0 is -1 (none), and stays.
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout} {
		if *d == 0 {
			*d = timeout
		}
	}
	return o, nil
}

// fallbackStore decides by OnRedisError whenever the shared store (the chain around Redis) cannot: while Redis is
// down, and when a call fails. It never fails itself.
type fallbackStore struct {
	shared  store
	health  *redisHealth
	mode    string        // Options.OnRedisError
	local   *localStore   // OnErrorLocal: this replica's share of each policy, for the replicas it counts
	backoff time.Duration // OnErrorDeny: the Retry-After of a rejection
}

func newFallback(shared store, health *redisHealth, replicas *presence, opt Options) *fallbackStore {
	f := &fallbackStore{shared: shared, health: health, mode: opt.OnRedisError, backoff: opt.RedisBackoff}
	if f.mode == OnErrorLocal {
		f.local = newLocalStore(replicas, opt.Now)
	}
	return f
}

func (f *fallbackStore) decide(ctx context.Context, q *query) (verdict, error) {
	if f.health.usable() {
		if v, err := f.shared.decide(ctx, q); err == nil {
			return v, nil
		}
	}
	redisFallback.Inc()
	var v verdict
	switch f.mode {
	case OnErrorAllow:
		v = verdict{ok: true}
	case OnErrorDeny:
		v = verdict{retry: f.backoff}
	default:
		v = f.local.gcra(q)
	}
	v.fallback = true
	return v, nil
}

// redisHealth tells whether to call Redis, circuit-breaker style: the first failure switches every caller to the
// fallback for RedisBackoff, then one caller probes Redis again. The fallback asks it before the caches, which
// must not answer while Redis is down; the Redis store tells it how each call went, so that only Redis itself,
// never a cache, ends the switch.
type redisHealth struct {
	backoff time.Duration
	mode    string // for the log
	log     *slog.Logger
	down    atomic.Bool  // Redis is failing: use the fallback
	probeAt atomic.Int64 // unix nanoseconds after which one caller probes Redis again
}

func newRedisHealth(opt Options) *redisHealth {
	return &redisHealth{backoff: opt.RedisBackoff, mode: opt.OnRedisError, log: opt.Logger}
}

// usable reports whether to call Redis: always while it is up; while it is down, for one caller per back-off.
func (h *redisHealth) usable() bool {
	if !h.down.Load() {
		return true
	}
	at := h.probeAt.Load()
	now := time.Now().UnixNano()
	return now >= at && h.probeAt.CompareAndSwap(at, now+int64(h.backoff))
}

func (h *redisHealth) failed(err error) {
	redisErrors.Inc()
	h.probeAt.Store(time.Now().UnixNano() + int64(h.backoff))
	if h.down.CompareAndSwap(false, true) {
		redisUp().Set(0)
		switchToFallback.Inc()
		h.log.Warn("ratelimit: Redis unavailable, switching to the fallback", "on_redis_error", h.mode,
			"retry_in", h.backoff, "err", err)
	}
}

func (h *redisHealth) answered() {
	if h.down.Load() && h.down.CompareAndSwap(true, false) {
		redisUp().Set(1)
		switchToRedis.Inc()
		h.log.Info("ratelimit: Redis is back, shared limits restored")
	}
}
