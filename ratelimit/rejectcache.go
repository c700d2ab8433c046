package ratelimit

import (
	"context"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// rejectcache.go remembers Redis rejections in process: a request whose key set Redis rejected with "retry after
// d" is rejected by every replica until d has passed, because a GCRA TAT never moves back (it only expires once it
// is in the past). So until then the same keys can be rejected without a round trip, and a client flooding above
// its limit costs Redis one call per retry window per replica instead of one per request. The window starts at
// the moment the call was sent (before Redis took its time), so the cache never rejects longer than Redis would.

const (
	rejectShards     = 16
	rejectMaxEntries = 1 << 16 // per shard; beyond it rejections are simply not remembered
)

// rejectCache is a store that answers from the remembered rejections, and asks next otherwise.
type rejectCache struct {
	next    store
	shaping bool // some rule has MaxDelay > 0
	seed    maphash.Seed
	shards  [rejectShards]rejectShard
}

type rejectShard struct {
	mu        sync.Mutex
	m         map[string]rejection
	lastSweep time.Time
}

// rejection is one remembered Redis rejection.
type rejection struct {
	at     time.Time // when the call was sent
	until  time.Time // at + retry
	states []policyState
}

func newRejectCache(next store, shaping bool) *rejectCache {
	c := &rejectCache{next: next, shaping: shaping, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = make(map[string]rejection)
	}
	return c
}

func (c *rejectCache) decide(ctx context.Context, q *query) (verdict, error) {
	if q.blocks() {
		// Each request refused while blocked starts the block again in Redis: none may be answered here.
		return c.next.decide(ctx, q)
	}
	k, now := q.cacheKey(), q.now()
	if retry, ok := c.get(k, now, q.stateBuf()); ok {
		rejectCacheHits.Inc()
		return verdict{retry: retry, known: true}, nil
	}
	v, err := c.next.decide(ctx, q)
	// Only rejections computed with this request's own max delays are remembered: one computed without
	// shaping (MaxHeld reached) would reject requests that could be held.
	if err == nil && !v.ok && (q.shape || !c.shaping) {
		c.put(k, now, v.retry, q.states)
	}
	return v, err
}

// setKey is the cache key of a request's key set.
func setKey(keys []string) string {
	if len(keys) == 1 {
		return keys[0]
	}
	return strings.Join(keys, "\x00")
}

func (c *rejectCache) shard(k string) *rejectShard {
	return &c.shards[maphash.String(c.seed, k)%rejectShards]
}

// get returns the rejection of k still in force at now, with the states' reset times moved on to now.
func (c *rejectCache) get(k string, now time.Time, states []policyState) (retry time.Duration, ok bool) {
	sh := c.shard(k)
	sh.mu.Lock()
	r, found := sh.m[k]
	if found && !now.Before(r.until) {
		delete(sh.m, k)
		found = false
	}
	sh.mu.Unlock()
	if !found || len(r.states) != len(states) {
		return 0, false
	}
	elapsed := int64(now.Sub(r.at))
	for i, s := range r.states {
		states[i] = policyState{remaining: s.remaining, reset: max(0, s.reset-elapsed)}
	}
	return r.until.Sub(now), true
}

// put remembers that Redis rejected k for retry, counted from at (when the call was sent).
func (c *rejectCache) put(k string, at time.Time, retry time.Duration, states []policyState) {
	if retry <= 0 {
		return
	}
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if at.Sub(sh.lastSweep) > sweepEvery {
		sh.lastSweep = at
		for key, r := range sh.m {
			if !at.Before(r.until) {
				delete(sh.m, key)
			}
		}
	}
	if len(sh.m) >= rejectMaxEntries {
		return
	}
	sh.m[k] = rejection{at: at, until: at.Add(retry), states: append([]policyState(nil), states...)}
}
