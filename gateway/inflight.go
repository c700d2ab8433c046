package gateway

import (
	"errors"
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// The connections to the cores are shared by every tenant: one account sending slow requests (a search over many
// records) at a high enough rate would hold all of them, and every other account's misses and writes would wait
// for a free connection and get 503. So the requests of one account in flight to the cores are capped
// (Options.MaxInflightPerAccount): one over the cap waits for a slot of its own account briefly, then gets 503
// with Retry-After and is never sent, while other accounts' requests go on. Only requests that go to the core
// count: a cached hit takes no slot. The account is the api_key of the path; requests without one (paths the
// gateway forwards without a credential) share one bucket. Credential checks take no slot: they come before
// the caller is proved, so a stranger naming an account's api_key must not be able to spend its slots (the
// failed-login limits bound them instead).

// errAccountBusy is a request not sent because its account had MaxInflightPerAccount requests at the cores for
// as long as it could wait: nothing reached the core.
var errAccountBusy = errors.New("the account's requests in flight to the core are at their cap")

// inflightShards spreads the accounts over locks, so that the requests of different accounts do not contend on
// one lock's cache line.
const inflightShards = 32

// inflight holds a semaphore per account: a buffered channel of capacity limit, one element per request in
// flight. Semaphores are made on an account's first request to the core and kept: only proved callers reach
// the core, so there are as many as accounts in use (plus the bucket of requests without one), each a few
// dozen bytes. A request's slot costs a map lookup under a read lock and a channel send, and no allocation
// unless it must wait.
type inflight struct {
	limit  int
	seed   maphash.Seed
	shards [inflightShards]inflightShard
}

type inflightShard struct {
	mu    sync.RWMutex
	slots map[string]chan struct{}
	_     [32]byte // a cache line per shard
}

func newInflight(limit int) *inflight {
	f := &inflight{limit: limit, seed: maphash.MakeSeed()}
	for i := range f.shards {
		f.shards[i].slots = make(map[string]chan struct{})
	}
	return f
}

// of returns the semaphore of account, made on first use. account may point into a request's buffer: it is
// copied when kept.
func (f *inflight) of(account string) chan struct{} {
	s := &f.shards[maphash.String(f.seed, account)%inflightShards]
	s.mu.RLock()
	sem := s.slots[account]
	s.mu.RUnlock()
	if sem != nil {
		return sem
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sem = s.slots[account]; sem == nil {
		sem = make(chan struct{}, f.limit)
		s.slots[strings.Clone(account)] = sem
	}
	return sem
}

// enter takes a slot of x's account for a request to the core, waiting for one at most MaxConnWait (the wait
// for a free connection of the pool, which this stands in front of) and never beyond the request's
// QueueTimeout; errAccountBusy when none came free. The slot is given back by leave. Without a cap it returns
// nil, nil.
func (g *Gateway) enter(x *exchange) (chan struct{}, error) {
	if g.inflight == nil {
		return nil, nil
	}
	sem := g.inflight.of(x.rt.APIKey)
	select {
	case sem <- struct{}{}:
		return sem, nil
	default:
	}
	inflightWaited.Inc()
	if wait := g.slotWait(x); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case sem <- struct{}{}:
			return sem, nil
		case <-t.C:
		}
	}
	inflightRefused.Inc()
	return nil, errAccountBusy
}

// leave gives back the slot *sem taken by enter, if any, once: it may be deferred and called before.
func (g *Gateway) leave(sem *chan struct{}) {
	if *sem != nil {
		<-*sem
		*sem = nil
	}
}

// slotWait is how long x may wait for a slot of its account: MaxConnWait, less than what is left of its
// QueueTimeout (counted as expired counts it), 0 or less when nothing is left.
func (g *Gateway) slotWait(x *exchange) time.Duration {
	wait := g.opt.MaxConnWait
	if q := g.opt.QueueTimeout; q > 0 {
		if t := x.ctx.Time(); !t.IsZero() {
			wait = min(wait, q-(time.Since(t)-x.uploading-x.held))
		}
	}
	return wait
}
