package ratelimit

import (
	"context"
	"sync"
	"time"
)

// store.go is the seam between the Limiter and its backends. A Limiter asks one store per decision; without
// Redis that is the in-process store (local.go), with Redis a chain of decorators around the Redis store:
//
//	fallback (fallback.go) -> credits (credits.go) -> reject cache (rejectcache.go) -> Redis (redis.go)
//
// The fallback is outermost because while Redis is down neither cache may answer; it turns the chain's errors
// into decisions of OnRedisError, so the store a Limiter holds never fails.

// store decides on one request against every matching rule at once.
type store interface {
	// decide admits, delays or rejects q. The error is the Redis store's; decorators pass it on.
	decide(ctx context.Context, q *query) (verdict, error)
}

// verdict is a store's answer.
type verdict struct {
	ok           bool
	delay, retry time.Duration
	slot         int64 // the forward time on the store's clock (Redis: µs since epoch; local: ns): for tests
	credits      int   // slots Redis granted this replica beyond the request (credits.go)
	known        bool  // the query's states were filled
	fallback     bool  // decided without Redis (OnRedisError)
}

// query is one decision's input, handed down the chain of stores. The Limiter builds it on its stack, over
// buffers of its own; as nothing passed through an interface can stay there, the stores get a pooledQuery copy
// (see Limiter.decide).
type query struct {
	rules      []*rule
	keys       []string      // one per rule
	states     []policyState // one per rule, filled when the verdict is known; nil for Status, which wants none
	commit     bool          // count the request (Admit), or only look (Status)
	shape      bool          // the request may be held for its slot: the rules' max delays apply
	overridden bool          // the request's api_key has overrides: its rules' numbers are its own

	// Set in the copy the stores get:
	apiKey  string        // the request's api_key, part of cacheKey when overridden
	scratch []policyState // room for one state per rule where states is nil
	credits int           // the most credits the Redis store may grant with this decision (credits.go)
	local   *localMemo    // the request's Memo's cell for the in-process store (local.go), when it has a Memo
	set     string        // cacheKey, once computed
	at      time.Time     // now, once read
}

// pooledQuery is a query with room for the rules of a common request, pooled so that a decision allocates
// nothing of its own.
type pooledQuery struct {
	query
	rbuf [8]*rule
	kbuf [8]string
	sbuf [8]policyState
}

var queries = sync.Pool{New: func() any { return new(pooledQuery) }}

// pooled returns a copy of q for the request's apiKey and Memo cell (local), to release after use. It copies the
// elements of q's slices and its flags, nothing else: to the compiler's escape analysis, copying a pointer held by
// q (apiKey or local, for one) lets every buffer q points to escape, and each would then cost an allocation per
// decision.
func (q *query) pooled(apiKey string, local *localMemo) *pooledQuery {
	p := queries.Get().(*pooledQuery)
	n := len(q.rules)
	if n <= len(p.rbuf) {
		p.rules, p.keys = p.rbuf[:n], p.kbuf[:n]
		p.scratch = p.sbuf[:n]
	} else {
		p.rules, p.keys = make([]*rule, n), make([]string, n)
		p.scratch = make([]policyState, n)
	}
	for i, r := range q.rules {
		p.rules[i], p.keys[i] = r, q.keys[i]
	}
	if q.states != nil {
		p.states, p.scratch = p.scratch, nil
	}
	p.commit, p.shape, p.overridden, p.apiKey, p.local = q.commit, q.shape, q.overridden, apiKey, local
	return p
}

// release returns p to the pool. Its buffers keep their old keys and rules until the next use: the pool drops
// its queries within two garbage collections anyway.
func (p *pooledQuery) release() {
	p.query = query{}
	queries.Put(p)
}

// stateSlots returns room for n states: buf, or a new slice when buf is too small.
func stateSlots(buf []policyState, n int) []policyState {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]policyState, n)
}

// stateBuf is where a cache writes the states it remembers: q.states, or scratch room for Status.
func (q *query) stateBuf() []policyState {
	if q.states != nil {
		return q.states
	}
	return q.scratch
}

// cacheKey is the key of q's key set in the caches of this replica. A key set under an api_key with overrides is
// kept apart, as its numbers differ from those of other api_keys counted under the same keys.
func (q *query) cacheKey() string {
	if q.set == "" {
		q.set = setKey(q.keys)
		if q.overridden {
			q.set = q.apiKey + "\x01" + q.set
		}
	}
	return q.set
}

// now is the time the decision started, read once for the whole chain: the caches count their windows from it,
// as the moment the Redis call was sent.
func (q *query) now() time.Time {
	if q.at.IsZero() {
		q.at = time.Now()
	}
	return q.at
}

// blocks reports whether some rule of q blocks its key (a window rule with a block).
func (q *query) blocks() bool {
	for _, r := range q.rules {
		if r.block > 0 {
			return true
		}
	}
	return false
}
