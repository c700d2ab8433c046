package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/redisns"
	"github.com/reqgate/reqgate/internal/wire"
)

// loginFailures counts failed logins (see failures): reserve before the core checks an attempt, release when
// the attempt was not a failure; succeeded when the core proved the credential (the caller's network becomes
// one the user logged in from, known.go).
type loginFailures interface {
	reserve(ip, apiKey, user string) reservation
	release(ip, apiKey, user string)
	succeeded(ip, apiKey, user string)
}

// sharedFailures counts failed logins in Redis as well, so that the limits hold across every replica of the
// gateway (otherwise N replicas would allow N times the attempts). The process's own counters are kept
// too and stand alone while Redis cannot be reached.
type sharedFailures struct {
	local       *failures
	rdb         redis.UniversalClient
	prefix      string // of every counter's key: failureKeyPrefix in the namespace
	knownPrefix string // of every set of known networks: knownKeyPrefix in the namespace
	log         *slog.Logger
	timeout     time.Duration
	down        atomic.Int64 // unix nanoseconds until which Redis is not asked again after an error
}

// After a failed Redis call of the failure counters, Redis is not asked again for a pause, so an unreachable
// Redis costs an unverified request at most one timeout (Options.FailureStoreTimeout) per pause.
const failureRedisPause = time.Second

// reserveScript is failures.reserve in Redis, one atomic step. KEYS are the counters, then, when ARGV[2] names
// the position of the counter of a user from all addresses (0: none), the user's known networks (a sorted set
// scored by expiry in unix ms). ARGV[1] is the window in ms, ARGV[3] the time in unix ms, ARGV[4] the caller's
// network's member in that set, ARGV[5...] the counters' limits.
//
// When a counter other than the user's from all addresses has reached its limit, it returns {the longest
// remaining window in ms, 0, 0} and counts nothing. Otherwise it adds one to every counter, starting a window
// of ARGV[1] ms at a counter's first attempt, and returns {0, excess, ms left}: excess > 0 when the user's
// count from all addresses had reached its limit and the caller's network is not known (failures.reserve).
var reserveScript = redis.NewScript(`
local n, u = #KEYS, tonumber(ARGV[2])
if u > 0 then n = n - 1 end
local wait = 0
for i = 1, n do
  if i ~= u and tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i + 4]) then
    local t = redis.call('PTTL', KEYS[i])
    if t > wait then wait = t end
  end
end
if wait > 0 then return {wait, 0, 0} end
local excess, left = 0, 0
if u > 0 then
  local exp = redis.call('ZSCORE', KEYS[n + 1], ARGV[4])
  local c, lim = tonumber(redis.call('GET', KEYS[u]) or '0'), tonumber(ARGV[u + 4])
  if (not exp or tonumber(exp) <= tonumber(ARGV[3])) and c >= lim then
    excess, left = c - lim + 1, redis.call('PTTL', KEYS[u])
  end
end
for i = 1, n do
  if redis.call('INCR', KEYS[i]) == 1 or redis.call('PTTL', KEYS[i]) < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
  end
end
return {0, excess, left}`)

// knownScript records a login from a network (KEYS[1] the user's known networks, ARGV[1] the network's member,
// ARGV[2] its expiry in unix ms, ARGV[3] the time in unix ms, ARGV[4] the most networks kept, ARGV[5] the TTL
// in ms): expired networks go, then the ones that expire first while there are too many.
var knownScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local extra = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if extra > 0 then redis.call('ZPOPMIN', KEYS[1], extra) end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 0`)

// releaseScript takes one attempt back from every counter that has one.
var releaseScript = redis.NewScript(`
for _, k in ipairs(KEYS) do
  if tonumber(redis.call('GET', k) or '0') > 0 then redis.call('DECR', k) end
end
return 0`)

// failureKeyPrefix starts the Redis key of every failed-login counter, knownKeyPrefix that of every set of the
// networks a user logged in from, after the namespace.
const (
	failureKeyPrefix = "reqgate:authfail:"
	knownKeyPrefix   = "reqgate:authknown:"
)

// newSharedFailures counts in Redis under keys in the namespace ns (redis.namespace).
func newSharedFailures(local *failures, rdb redis.UniversalClient, ns string, timeout time.Duration,
	log *slog.Logger) *sharedFailures {
	ns = redisns.On(rdb, ns) // on a cluster: one hash slot, since one script touches several counters
	return &sharedFailures{local: local, rdb: rdb, prefix: redisns.Name(ns, failureKeyPrefix),
		knownPrefix: redisns.Name(ns, knownKeyPrefix), log: log, timeout: timeout}
}

// redisFailureKeys are the Redis keys, each starting with prefix, of an attempt's counters (failureKeys) and,
// in the same order, their limits (of limits, in the order of failureLimits.limits), and the position (from 1)
// of the counter of the user from all addresses among the keys, 0 when there is none.
func redisFailureKeys(prefix, ip, apiKey, user string, limits [3]int) ([]string, []any, int) {
	k := failureKeys(ip, apiKey, user)
	keys, lim := make([]string, 0, len(k)+1), make([]any, 0, len(k))
	u := 0
	for i := range k {
		if k[i] != "" {
			keys = append(keys, prefix+k[i])
			lim = append(lim, limits[i])
			if i == userAll {
				u = len(keys)
			}
		}
	}
	return keys, lim, u
}

// redisKnownKeys are the Redis key of the networks user of apiKey logged in from, and the member of ip's
// network in it.
func redisKnownKeys(prefix, ip, apiKey, user string) (key, member string) {
	u, a := knownKeys(ip, apiKey, user)
	return prefix + hexKnown(u[:]), hexKnown(a[:])
}

func (s *sharedFailures) reserve(ip, apiKey, user string) reservation {
	r := s.local.reserve(ip, apiKey, user)
	if r.wait > 0 || !s.up() {
		return r
	}
	keys, limits, u := redisFailureKeys(s.prefix, ip, apiKey, user, s.local.limits())
	now := s.local.now()
	member := ""
	if u > 0 {
		var set string
		set, member = redisKnownKeys(s.knownPrefix, ip, apiKey, user)
		keys = append(keys, set)
	}
	args := append([]any{strconv.FormatInt(s.local.window.Milliseconds(), 10), u, now.UnixMilli(), member}, limits...)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	res, err := reserveScript.Run(ctx, s.rdb, keys, args...).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("reserve script returned %d values, want 3", len(res))
	}
	if err != nil {
		s.failed("reserve", err)
		return r // the local reservation stands
	}
	if res[0] > 0 {
		s.local.release(ip, apiKey, user)
		return reservation{wait: time.Duration(res[0]) * time.Millisecond}
	}
	// Redis counts every replica's attempts and knows the networks of logins through any of them.
	return reservation{excess: int(res[1]), left: time.Duration(res[2]) * time.Millisecond}
}

func (s *sharedFailures) succeeded(ip, apiKey, user string) {
	s.local.succeeded(ip, apiKey, user)
	ttl := s.local.known.ttl
	if ttl <= 0 || !wire.ValidAPIKey(apiKey) || !s.up() {
		return
	}
	set, member := redisKnownKeys(s.knownPrefix, ip, apiKey, user)
	now := s.local.now()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	err := knownScript.Run(ctx, s.rdb, []string{set}, member, now.Add(ttl).UnixMilli(), now.UnixMilli(),
		knownPerUser, ttl.Milliseconds()).Err()
	if err != nil {
		s.failed("known", err)
	}
}

func (s *sharedFailures) release(ip, apiKey, user string) {
	s.local.release(ip, apiKey, user)
	if !s.up() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	keys, _, _ := redisFailureKeys(s.prefix, ip, apiKey, user, [3]int{})
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
