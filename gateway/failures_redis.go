package gateway

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/go-redis/v9"
)

// loginFailures counts failed logins per client IP and per username of an api_key (see failures).
type loginFailures interface {
	blocked(ip, apiKey, user string) time.Duration
	record(ip, apiKey, user string)
}

// sharedFailures counts failed logins in Redis as well, so that the limits hold across every replica of the
// gateway (otherwise N replicas would allow N times the attempts). The process's own counters are kept
// too and stand alone while Redis cannot be reached; the longer wait of the two wins.
type sharedFailures struct {
	local   *failures
	rdb     *redis.Client
	log     *slog.Logger
	timeout time.Duration
	down    atomic.Int64 // unix nanoseconds until which Redis is not asked again after an error
}

// Redis calls of the failure counters: a short timeout, then a pause before the next try, so an unreachable
// Redis costs an unverified request at most one timeout per pause.
const (
	failureRedisTimeout = 100 * time.Millisecond
	failureRedisPause   = time.Second
)

var failureStoreErrors = metrics.GetOrCreateCounter(`reqgate_auth_failure_store_errors_total`)

// recordScript adds one failure to each key, starting its window (PEXPIRE, ARGV[1] ms) at the first.
var recordScript = redis.NewScript(`
for _, k in ipairs(KEYS) do
  if redis.call('INCR', k) == 1 or redis.call('PTTL', k) < 0 then
    redis.call('PEXPIRE', k, ARGV[1])
  end
end
return 0`)

// blockedScript returns the longest remaining window (ms) among the keys whose count reached its limit
// (ARGV[i] for KEYS[i]), 0 when none did.
var blockedScript = redis.NewScript(`
local wait = 0
for i, k in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', k) or '0')
  if n >= tonumber(ARGV[i]) then
    local t = redis.call('PTTL', k)
    if t > wait then wait = t end
  end
end
return wait`)

func newSharedFailures(local *failures, rdb *redis.Client, log *slog.Logger) *sharedFailures {
	return &sharedFailures{local: local, rdb: rdb, log: log, timeout: failureRedisTimeout}
}

func redisFailureKey(k string) string { return "reqgate:authfail:" + k }

func (s *sharedFailures) keys(ip, apiKey, user string) (keys []string, limits []any) {
	keys = []string{redisFailureKey(ipKey(ip))}
	limits = []any{s.local.maxIP}
	if user != "" {
		keys = append(keys, redisFailureKey(userKey(apiKey, user)))
		limits = append(limits, s.local.maxUser)
	}
	return keys, limits
}

func (s *sharedFailures) blocked(ip, apiKey, user string) time.Duration {
	wait := s.local.blocked(ip, apiKey, user)
	if !s.up() {
		return wait
	}
	keys, limits := s.keys(ip, apiKey, user)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	ms, err := blockedScript.Run(ctx, s.rdb, keys, limits...).Int64()
	if err != nil {
		s.failed("read", err)
		return wait
	}
	return max(wait, time.Duration(ms)*time.Millisecond)
}

func (s *sharedFailures) record(ip, apiKey, user string) {
	s.local.record(ip, apiKey, user)
	if !s.up() {
		return
	}
	keys, _ := s.keys(ip, apiKey, user)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := recordScript.Run(ctx, s.rdb, keys, strconv.FormatInt(s.local.window.Milliseconds(), 10)).Err(); err != nil {
		s.failed("record", err)
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
