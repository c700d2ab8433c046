package gateway

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/redisns"
)

// loginFailures counts failed logins (see failures): reserve before the core checks an attempt, release when
// the attempt was not a failure.
type loginFailures interface {
	reserve(ip, apiKey, user string) time.Duration
	release(ip, apiKey, user string)
}

// sharedFailures counts failed logins in Redis as well, so that the limits hold across every replica of the
// gateway (otherwise N replicas would allow N times the attempts). The process's own counters are kept
// too and stand alone while Redis cannot be reached.
type sharedFailures struct {
	local   *failures
	rdb     *redis.Client
	prefix  string // of every counter's key: failureKeyPrefix in the namespace
	log     *slog.Logger
	timeout time.Duration
	down    atomic.Int64 // unix nanoseconds until which Redis is not asked again after an error
}

// After a failed Redis call of the failure counters, Redis is not asked again for a pause, so an unreachable
// Redis costs an unverified request at most one timeout (Options.FailureStoreTimeout) per pause.
const failureRedisPause = time.Second

var failureStoreErrors = metrics.GetOrCreateCounter(`reqgate_auth_failure_store_errors_total`)

// reserveScript is failures.reserve in Redis, one atomic step: when a counter (KEYS[i]) has reached its limit
// (ARGV[i+1]) it returns the longest remaining window in milliseconds and counts nothing; otherwise it adds one
// to every counter, starting a window of ARGV[1] ms at a counter's first attempt, and returns 0.
var reserveScript = redis.NewScript(`
local wait = 0
for i, k in ipairs(KEYS) do
  if tonumber(redis.call('GET', k) or '0') >= tonumber(ARGV[i + 1]) then
    local t = redis.call('PTTL', k)
    if t > wait then wait = t end
  end
end
if wait > 0 then return wait end
for _, k in ipairs(KEYS) do
  if redis.call('INCR', k) == 1 or redis.call('PTTL', k) < 0 then
    redis.call('PEXPIRE', k, ARGV[1])
  end
end
return 0`)

// releaseScript takes one attempt back from every counter that has one.
var releaseScript = redis.NewScript(`
for _, k in ipairs(KEYS) do
  if tonumber(redis.call('GET', k) or '0') > 0 then redis.call('DECR', k) end
end
return 0`)

// failureKeyPrefix starts the Redis key of every failed-login counter, after the namespace.
const failureKeyPrefix = "reqgate:authfail:"

// newSharedFailures counts in Redis under keys in the namespace ns (redis.namespace).
func newSharedFailures(local *failures, rdb *redis.Client, ns string, timeout time.Duration,
	log *slog.Logger) *sharedFailures {
	return &sharedFailures{local: local, rdb: rdb, prefix: redisns.Name(ns, failureKeyPrefix), log: log,
		timeout: timeout}
}

// redisFailureKeys are the Redis keys, each starting with prefix, of an attempt's counters (failureKeys) and, in
// the same order, their limits (of limits, in the order of failureLimits.limits).
func redisFailureKeys(prefix, ip, apiKey, user string, limits [3]int) ([]string, []any) {
	k := failureKeys(ip, apiKey, user)
	keys, lim := make([]string, 0, len(k)), make([]any, 0, len(k))
	for i := range k {
		if k[i] != "" {
			keys = append(keys, prefix+k[i])
			lim = append(lim, limits[i])
		}
	}
	return keys, lim
}

func (s *sharedFailures) reserve(ip, apiKey, user string) time.Duration {
	if wait := s.local.reserve(ip, apiKey, user); wait > 0 || !s.up() {
		return wait
	}
	keys, limits := redisFailureKeys(s.prefix, ip, apiKey, user, s.local.limits())
	args := append([]any{strconv.FormatInt(s.local.window.Milliseconds(), 10)}, limits...)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	ms, err := reserveScript.Run(ctx, s.rdb, keys, args...).Int64()
	if err != nil {
		s.failed("reserve", err)
		return 0 // the local reservation stands
	}
	if ms > 0 {
		s.local.release(ip, apiKey, user)
		return time.Duration(ms) * time.Millisecond
	}
	return 0
}

func (s *sharedFailures) release(ip, apiKey, user string) {
	s.local.release(ip, apiKey, user)
	if !s.up() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	keys, _ := redisFailureKeys(s.prefix, ip, apiKey, user, [3]int{})
	if err := releaseScript.Run(ctx, s.rdb, keys).Err(); err != nil {
		s.failed("release", err)
	}
}

func (s *sharedFailures) up() bool { return time.Now().UnixNano() >= s.down.Load() }

func (s *sharedFailures) failed(op string, err error) {
	failureStoreErrors.Inc()
	if s.down.Swap(time.Now().Add(failureRedisPause).UnixNano()) < time.Now().UnixNano() {
		s.log.Warn("failed-login counters: Redis unreachable; counting in this process only for now",
			"op", op, "err", err)
	}
}
