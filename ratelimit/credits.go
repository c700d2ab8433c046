package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

// credits.go lets a replica admit some requests of a fast policy without a round trip, without ever admitting more
// than the policy. When Redis admits a request without delay and every matching policy keeps at least 4 times as
// many requests in its bucket, the script reserves up to maxCredits further slots for this replica at once (their
// TATs move on as for admitted requests), and the replica admits that many more requests of the same key set
// locally. Every admitted request is thus a slot counted in Redis; a credit left unused when it expires is a slot
// lost (an under-count, never an over-count). A grant spans at most creditSpan of a policy's schedule, and only
// fast policies (at least creditMin slots in creditSpan: 800 per second) get any, never near the limit, where
// each request goes to Redis exactly as before; slower policies are always decided request by request. They expire after creditTTL, so a replica cannot hoard them past
// the point where the bucket would have refilled.

const (
	creditSpan = 10 * time.Millisecond // the most schedule time the credits of one grant may cover
	creditMax  = 64                    // the most credits of one grant
	creditMin  = 8                     // policies whose creditSpan holds fewer slots (under 800/s) get none
	creditTTL  = 50 * time.Millisecond // how long a replica may keep unused credits
)

// boxedCredits holds the script argument for each credit limit, boxed once.
var boxedCredits = func() (b [creditMax + 1]any) {
	for i := range b {
		b[i] = any(int64(i))
	}
	return b
}()

// ruleCredits is the credit limit of one grant for a rule with this emission interval.
func ruleCredits(interval time.Duration) int {
	if interval <= 0 {
		return 0
	}
	n := int(min(creditMax, int64(creditSpan/interval)))
	if n < creditMin {
		return 0
	}
	return n
}

// creditStore is a store that admits on the credits granted to this replica, and asks next otherwise, for as
// many credits as the rules allow.
type creditStore struct {
	next   store
	spent  atomic.Int64 // requests admitted on a credit
	seed   maphash.Seed
	shards [rejectShards]creditShard
}

type creditShard struct {
	mu        sync.Mutex
	m         map[string]*grant
	lastSweep time.Time
}

// grant is the unused credits of one key set, with the policy states Redis reported when it granted them.
type grant struct {
	left   int
	at     time.Time // when the granting call was sent
	until  time.Time
	states []policyState // remaining excludes the credits
}

func newCreditStore(next store) *creditStore {
	c := &creditStore{next: next, seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].m = make(map[string]*grant)
	}
	return c
}

func (c *creditStore) decide(ctx context.Context, q *query) (verdict, error) {
	k, now := q.cacheKey(), q.now()
	if !q.commit {
		if c.available(k, now) {
			return verdict{ok: true}, nil
		}
		return c.next.decide(ctx, q)
	}
	if c.take(k, now, q.stateBuf()) {
		creditHits.Inc()
		c.spent.Add(1)
		return verdict{ok: true, known: true}, nil
	}
	q.credits = creditMax
	for _, r := range q.rules {
		q.credits = min(q.credits, r.credits)
	}
	v, err := c.next.decide(ctx, q)
	if err == nil && v.credits > 0 {
		c.put(k, v.credits, now, q.states)
		for i := range q.states {
			q.states[i].remaining += int64(v.credits) // the client may still send them
		}
	}
	return v, err
}

func (c *creditStore) shard(k string) *creditShard {
	return &c.shards[maphash.String(c.seed, k)%rejectShards]
}

// take spends one credit of k if there is one, filling states as the RateLimit header should show them.
func (c *creditStore) take(k string, now time.Time, states []policyState) bool {
	sh := c.shard(k)
	sh.mu.Lock()
	g, ok := sh.m[k]
	if !ok || g.left <= 0 || !now.Before(g.until) || len(g.states) != len(states) {
		if ok {
			delete(sh.m, k)
		}
		sh.mu.Unlock()
		return false
	}
	g.left--
	left := int64(g.left)
	elapsed := int64(now.Sub(g.at))
	for i, s := range g.states {
		states[i] = policyState{remaining: s.remaining + left, reset: max(0, s.reset-elapsed)}
	}
	sh.mu.Unlock()
	return true
}

// available reports whether k has an unused credit (for Status).
func (c *creditStore) available(k string, now time.Time) bool {
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	g, ok := sh.m[k]
	return ok && g.left > 0 && now.Before(g.until)
}

// put stores n credits for k granted by a call sent at at, with the states Redis reported.
func (c *creditStore) put(k string, n int, at time.Time, states []policyState) {
	sh := c.shard(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if at.Sub(sh.lastSweep) > sweepEvery {
		sh.lastSweep = at
		for key, g := range sh.m {
			if g.left <= 0 || !at.Before(g.until) {
				delete(sh.m, key)
			}
		}
	}
	if len(sh.m) >= rejectMaxEntries {
		return
	}
	if g, ok := sh.m[k]; ok && at.Before(g.until) && len(g.states) == len(states) {
		// Concurrent requests found no credit and each got a grant: keep them all.
		g.left += n
		g.at, g.until = at, at.Add(creditTTL)
		copy(g.states, states)
		return
	}
	sh.m[k] = &grant{left: n, at: at, until: at.Add(creditTTL), states: append([]policyState(nil), states...)}
}
