package ratelimit

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// fallback.go switches between Redis and the OnRedisError fallback, circuit-breaker style: the first failure
// switches every caller to the fallback for RedisBackoff, then one caller probes Redis again.

// RedisOptions parses a redis:// URL into client options suited to the limiter: deadlines from the context reach
// the socket, one retry at most, dial, read and write timeouts of 1 s unless the URL sets them (a dial timeout
// above 1 s is lowered). The limiter bounds each call by RedisTimeout itself; these bound the calls it abandons.
func RedisOptions(url string) (*redis.Options, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	o.ContextTimeoutEnabled = true
	o.MaxRetries = 1
	if o.DialTimeout > time.Second || o.DialTimeout == 0 {
		o.DialTimeout = time.Second
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = time.Second
	}
	return o, nil
}

// useRedis reports whether to call Redis: always while it is up; while it is down, for one caller per back-off.
func (l *Limiter) useRedis() bool {
	if !l.down.Load() {
		return true
	}
	at := l.probeAt.Load()
	now := time.Now().UnixNano()
	return now >= at && l.probeAt.CompareAndSwap(at, now+int64(l.backoff))
}

func (l *Limiter) markDown(err error) {
	redisErrors.Inc()
	l.probeAt.Store(time.Now().UnixNano() + int64(l.backoff))
	if l.down.CompareAndSwap(false, true) {
		redisUp().Set(0)
		switchToFallback.Inc()
		l.log.Warn("ratelimit: Redis unavailable, switching to the fallback", "on_redis_error", l.onError,
			"retry_in", l.backoff, "err", err)
	}
}

func (l *Limiter) markUp() {
	if l.down.Load() && l.down.CompareAndSwap(true, false) {
		redisUp().Set(1)
		switchToRedis.Inc()
		l.log.Info("ratelimit: Redis is back, shared limits restored")
	}
}
