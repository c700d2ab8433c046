package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// fallback.go answers by OnRedisError whatever Redis cannot decide: a failed call, and every call while the
// limiter is switched to the fallback (health.go decides when it is).

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
