package ratelimit

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// redis.go is the shared store: one atomic Lua script per request, with time from Redis so that every replica
// shares one clock. The script mirrors decide in gcra.go and, for window rules, decideMixed in window.go.

// limitScript checks every matching policy and commits only if all admit: it sets every TAT and records the
// admission in every window. A refused request changes nothing, except that a window with a block that refused
// it starts its block (only when committing).
//
//	KEYS: one key per matching policy: a GCRA TAT (a string: µs since the Unix epoch), or a window (a sorted set:
//	      the admitted times as scores, and the member "block" scored minus the end of the block).
//	ARGV[1]: "1" commit, "0" peek (Status: never writes, so it also runs as EVALSHA_RO).
//	ARGV[2]: the most credits to grant (see credits.go); 0 for none.
//	ARGV[3]: the time to decide at, µs since the epoch (Options.Now); 0: the server's TIME.
//	ARGV[4i .. 4i+3] for policy i: "g", interval, tolerance and max delay, or "w", limit, period and block (µs).
//	Returns {ok, delay, retry, now, credits, remaining_1, reset_1, remaining_2, reset_2, ...}, all integers
//	(microseconds). Credits are extra slots reserved for the calling replica, granted only to an admitted request
//	without delay while every policy keeps at least 4 times as many; remaining excludes them. A window policy
//	never grants credits (its rules carry none, so ARGV[2] is 0).
//
// Numbers stay below 2^53, so Lua's doubles hold them exactly; they are written with %.0f because Lua's default
// number format (%.14g) would round a 16-digit TAT.
var limitScript = redis.NewScript(limitLua)

const limitLua = `
local now = tonumber(ARGV[3])
if now <= 0 then
  local t = redis.call("TIME")
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local commit = ARGV[1] == "1"
local credits = tonumber(ARGV[2])
local n = #KEYS
local tats, wins, ok, delay, retry = {}, {}, true, 0, 0
for i = 1, n do
  local b = 4*i
  if ARGV[b] == "w" then
    local limit, period, block = tonumber(ARGV[b+1]), tonumber(ARGV[b+2]), tonumber(ARGV[b+3])
    local from = "(" .. string.format("%.0f", now - period)
    local w = {from = from, count = redis.call("ZCOUNT", KEYS[i], from, "+inf"), wait = 0}
    if w.count >= limit then
      local first = redis.call("ZRANGEBYSCORE", KEYS[i], from, "+inf", "WITHSCORES", "LIMIT", 0, 1)
      w.oldest = tonumber(first[2])
      w.wait = w.oldest + period - now
    end
    local untl = -(tonumber(redis.call("ZSCORE", KEYS[i], "block")) or 0)
    if untl > now then
      w.wait = math.max(w.wait, untl - now)
    end
    if w.wait > 0 and commit and block > 0 then
      w.wait = math.max(w.wait, block)
    end
    if w.wait > 0 then
      ok = false
      retry = math.max(retry, w.wait)
    end
    wins[i] = w
  else
    local interval, tolerance, maxdelay = tonumber(ARGV[b+1]), tonumber(ARGV[b+2]), tonumber(ARGV[b+3])
    local tat = tonumber(redis.call("GET", KEYS[i]) or "0") or 0
    tats[i] = tat
    local d = math.max(tat, now) + interval - tolerance - now
    if d > maxdelay then
      ok = false
      retry = math.max(retry, d - maxdelay)
    elseif d > delay then
      delay = d
    end
  end
end
if not ok then delay = 0 end
local bases = {}
for i = 1, n do
  if not wins[i] then
    local interval, tolerance = tonumber(ARGV[4*i+1]), tonumber(ARGV[4*i+2])
    local base = math.max(tats[i], now)
    if ok then
      base = math.max(tats[i], now + delay) + interval
    end
    bases[i] = base
    local r = math.floor((now - (base - tolerance)) / interval)
    credits = math.min(credits, math.floor(r / 4))
  end
end
if not ok or not commit or delay > 0 or credits < 0 then credits = 0 end
local out = {ok and 1 or 0, delay, retry, now, credits}
for i = 1, n do
  local w = wins[i]
  if w then
    local limit, period, block = tonumber(ARGV[4*i+1]), tonumber(ARGV[4*i+2]), tonumber(ARGV[4*i+3])
    local slot = now + delay
    if w.wait > 0 then
      out[4 + 2*i] = 0
      out[5 + 2*i] = w.wait
      if commit and block > 0 then
        redis.call("ZADD", KEYS[i], -(now + block), "block")
      end
    else
      local c, oldest, newest = w.count, 0, 0
      if c > 0 then
        oldest = tonumber(redis.call("ZRANGEBYSCORE", KEYS[i], w.from, "+inf", "WITHSCORES", "LIMIT", 0, 1)[2])
        newest = tonumber(redis.call("ZREVRANGEBYSCORE", KEYS[i], "+inf", w.from, "WITHSCORES", "LIMIT", 0, 1)[2])
      end
      if ok then
        if c == 0 then oldest, newest = slot, slot end
        oldest, newest = math.min(oldest, slot), math.max(newest, slot)
        c = c + 1
      end
      local left = limit - c
      out[4 + 2*i] = math.max(0, left)
      if left > 0 then
        if c == 0 then
          out[5 + 2*i] = 0
        else
          out[5 + 2*i] = math.max(0, newest + period - now)
        end
      else
        out[5 + 2*i] = math.max(0, oldest + period - now)
      end
      if ok and commit then
        redis.call("ZREMRANGEBYSCORE", KEYS[i], 0, string.format("%.0f", now - period))
        redis.call("ZADD", KEYS[i], string.format("%.0f", slot), string.format("%.0f:%.0f:%d", slot, now, w.count))
      end
    end
    if commit then
      local last = -(tonumber(redis.call("ZSCORE", KEYS[i], "block")) or 0)
      local top = redis.call("ZREVRANGEBYSCORE", KEYS[i], "+inf", 0, "WITHSCORES", "LIMIT", 0, 1)
      if top[2] then last = math.max(last, tonumber(top[2]) + period) end
      if last > now then
        redis.call("PEXPIRE", KEYS[i], math.ceil((last - now) / 1000) + 1000)
      else
        redis.call("DEL", KEYS[i])
      end
    end
  else
    local interval, tolerance = tonumber(ARGV[4*i+1]), tonumber(ARGV[4*i+2])
    local base = bases[i]
    if ok and commit then
      base = base + credits * interval
      redis.call("SET", KEYS[i], string.format("%.0f", base), "PX", math.ceil((base - now) / 1000) + 1000)
    end
    local free = now - (base - tolerance)
    if free < interval then
      out[4 + 2*i] = 0
      out[5 + 2*i] = math.max(0, base + interval - tolerance - now)
    else
      out[4 + 2*i] = math.floor(free / interval)
      out[5 + 2*i] = math.max(0, base - now)
    end
  end
end
return out
`

// redisStore runs limitScript on one Redis, and tells health how each call went.
type redisStore struct {
	rdb     redis.Scripter       // direct calls, one pooled connection each
	ap      *redis.AutoPipeliner // when not nil: the deferred autopipeliner face, used instead of rdb
	timeout time.Duration        // Options.RedisTimeout
	health  *redisHealth
	clock   bool // Options.Now is set: the script decides at the query's time, not at Redis TIME
}

// newRedisStore returns the store of opt.Redis, through its autopipeliner unless NoAutoPipeline is set.
func newRedisStore(opt Options, health *redisHealth) (*redisStore, error) {
	s := &redisStore{rdb: opt.Redis, timeout: opt.RedisTimeout, health: health, clock: opt.Now != nil}
	if !opt.NoAutoPipeline {
		ap, err := opt.Redis.AsyncAutoPipeline()
		if err != nil {
			return nil, fmt.Errorf("redis autopipeline: %w", err)
		}
		s.ap = ap
	}
	if !contextTimeouts(opt.Redis) {
		opt.Logger.Warn("ratelimit: the Redis client has ContextTimeoutEnabled=false, so a stalled Redis can hold requests "+
			"for its ReadTimeout instead of RedisTimeout", "redis_timeout", opt.RedisTimeout)
	}
	return s, nil
}

// contextTimeouts reports whether rdb lets a context's deadline reach the socket (ContextTimeoutEnabled).
func contextTimeouts(rdb redis.UniversalClient) bool {
	switch c := rdb.(type) {
	case *redis.Client: // a single node, or the master of a Sentinel group (NewFailoverClient)
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return true // a client of another kind: nothing to tell
}

var (
	argCommit = any("1")
	argPeek   = any("0")
	argZero   = any(int64(0))
)

// decide runs the script for q within RedisTimeout. The end of ctx does not cut the call short: it would be
// taken for a Redis failure and move every request to the fallback.
func (s *redisStore) decide(ctx context.Context, q *query) (verdict, error) {
	start := q.now()
	call := s.health.begin()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	// A copy for the Redis client (which may keep it past this call: the autopipeliner), so that the query's
	// keys can go back to the pool.
	v, err := s.eval(cctx, slices.Clone(q.keys), q)
	cancel()
	if err != nil {
		s.health.failed(call, err)
		return verdict{}, err
	}
	redisSeconds.UpdateDuration(start)
	s.health.answered(call)
	return v, nil
}

// eval runs the script for keys (q's or a copy); q.shape=false passes max delay 0 (the held-request bound is
// reached).
func (s *redisStore) eval(ctx context.Context, keys []string, q *query) (verdict, error) {
	var abuf [3 + 4*8]any
	args := append(abuf[:0], argPeek, argZero, argZero)
	if q.commit {
		args[0] = argCommit
		args[1] = boxedCredits[q.credits]
	}
	if s.clock {
		args[2] = q.now().UnixMicro()
	}
	for _, r := range q.rules {
		md := r.redis[3]
		if !q.shape && !r.window {
			md = argZero
		}
		args = append(args, r.redis[0], r.redis[1], r.redis[2], md)
	}
	var vals []int64
	var err error
	if s.ap != nil {
		vals, err = s.runPipelined(ctx, q.commit, keys, args)
	} else {
		vals, err = s.run(ctx, q.commit, keys, args)
	}
	if err != nil {
		return verdict{}, fmt.Errorf("run rate-limit script: %w", err)
	}
	if len(vals) != 5+2*len(keys) {
		return verdict{}, fmt.Errorf("rate-limit script: %d values for %d keys", len(vals), len(keys))
	}
	v := verdict{ok: vals[0] == 1, delay: time.Duration(vals[1]) * time.Microsecond,
		retry: time.Duration(vals[2]) * time.Microsecond, slot: vals[3] + vals[1], credits: int(vals[4]), known: true}
	if q.states != nil {
		for i := range keys {
			q.states[i] = policyState{remaining: vals[5+2*i], reset: vals[6+2*i] * int64(time.Microsecond)}
		}
	}
	return v, nil
}

// scriptResult carries a script call's answer from the goroutine that waits for go-redis.
type scriptResult struct {
	vals []int64
	err  error
}

// run calls the script directly and returns when it answers or ctx ends, whichever is first: go-redis does not
// bound every path by the context (measured here: 90 ms against a 50 ms deadline right after Redis was killed,
// as a failed call is retried on a new connection). The call finishes in the background within the client's own
// dial and read timeouts.
func (s *redisStore) run(ctx context.Context, commit bool, keys []string, args []any) ([]int64, error) {
	ch := make(chan scriptResult, 1)
	go func() {
		var cmd *redis.Cmd
		if commit {
			cmd = limitScript.Run(ctx, s.rdb, keys, args...)
		} else {
			cmd = limitScript.RunRO(ctx, s.rdb, keys, args...)
		}
		vals, err := cmd.Int64Slice()
		ch <- scriptResult{vals, err}
	}()
	select {
	case r := <-ch:
		return r.vals, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runPipelined submits the script to the autopipeliner and waits for its batch or the end of ctx, whichever is
// first (a blocking autopipeliner call ignores the context: 2 s against a 50 ms deadline right after Redis was
// killed). EVALSHA falls back to EVAL when Redis lost the script, like redis.Script.Run.
func (s *redisStore) runPipelined(ctx context.Context, commit bool, keys []string, args []any) ([]int64, error) {
	name, src := "evalsha", limitScript.Hash()
	if !commit {
		name = "evalsha_ro"
	}
	vals, err := s.submit(ctx, name, src, keys, args)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		name = "eval"
		if !commit {
			name = "eval_ro"
		}
		vals, err = s.submit(ctx, name, limitLua, keys, args)
	}
	return vals, err
}

func (s *redisStore) submit(ctx context.Context, name, script string, keys []string, args []any) ([]int64, error) {
	cmdArgs := make([]any, 0, 3+len(keys)+len(args))
	cmdArgs = append(cmdArgs, name, script, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	if err := s.ap.Submit(ctx, cmd).WaitContext(ctx); err != nil {
		return nil, err // after a context error the command may still be running: never read it
	}
	return cmd.Int64Slice()
}
