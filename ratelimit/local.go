package ratelimit

import (
	"context"
	"hash/maphash"
	"sync"
	"time"
)

// local.go is the in-process store: the same GCRA (decide) over a sharded map of TATs on the monotonic clock, and
// the same sliding windows (decideMixed, window.go) over a map of their logs. It is the embedded default (no
// Redis) and the per-replica fallback while Redis is unavailable.

const (
	localShards = 64
	sweepEvery  = 10 * time.Second // how often a shard drops idle keys (TAT in the past)
)

type localStore struct {
	epoch  time.Time // monotonic origin of the nanosecond clock
	seed   maphash.Seed
	share  *presence        // when set (the fallback): decide with each rule's share for the replicas it counts
	clock  func() time.Time // Options.Now; nil: the monotonic clock
	shards [localShards]shard
}

type shard struct {
	mu        sync.Mutex
	tats      map[string]int64
	logs      map[string]*windowLog // window rules' keys
	lastSweep int64
}

// newLocalStore returns an empty store; with share, it decides with the rules' per-replica share of the replicas
// share counts, without, at the full rate. clock is Options.Now.
func newLocalStore(share *presence, clock func() time.Time) *localStore {
	s := &localStore{seed: maphash.MakeSeed(), share: share, clock: clock}
	if clock != nil {
		s.epoch = clock()
	} else {
		s.epoch = time.Now()
	}
	for i := range s.shards {
		s.shards[i].tats = make(map[string]int64)
		s.shards[i].logs = make(map[string]*windowLog)
	}
	return s
}

func (s *localStore) now() int64 {
	if s.clock != nil {
		return int64(s.clock().Sub(s.epoch))
	}
	return int64(time.Since(s.epoch))
}

// decide never fails.
func (s *localStore) decide(_ context.Context, q *query) (verdict, error) {
	return s.gcra(q), nil
}

// gcra runs GCRA for q's keys with each rule's params in this store's share, atomically, and commits the new
// TATs when admitted and q.commit is set. The returned slot is the forward time on s's clock.
func (s *localStore) gcra(q *query) verdict {
	var pbuf [8]params
	var kbuf, ibuf [8]int
	ps := pbuf[:0]
	of := kbuf[:0] // shard of each key
	shards := ibuf[:0]
	replicas := int64(1)
	if s.share != nil {
		replicas = s.share.replicas()
	}
	windows := false
	for j, k := range q.keys {
		p := q.rules[j].share(replicas)
		ps = append(ps, p.shaped(q.shape))
		windows = windows || q.rules[j].window
		i := int(maphash.String(s.seed, k) % localShards)
		of = append(of, i)
		shards = appendUnique(shards, i)
	}
	sortInts(shards) // a fixed lock order: no deadlock between requests sharing shards
	for _, i := range shards {
		s.shards[i].mu.Lock()
	}
	now := s.now()
	if windows {
		v := s.mixed(now, q, ps, of, replicas)
		for _, i := range shards {
			s.shards[i].sweep(now)
			s.shards[i].mu.Unlock()
		}
		return v
	}
	var tbuf [8]int64
	tats := tbuf[:0]
	for j, k := range q.keys {
		tats = append(tats, s.shards[of[j]].tats[k])
	}
	ok, delay, retry := decide(now, ps, tats, q.states)
	if ok && q.commit {
		for j, k := range q.keys {
			s.shards[of[j]].tats[k] = tats[j]
		}
	}
	for _, i := range shards {
		s.shards[i].sweep(now)
		s.shards[i].mu.Unlock()
	}
	return verdict{ok: ok, delay: time.Duration(delay), retry: time.Duration(retry), slot: now + delay, known: true}
}

// mixed is gcra's decision for a request that some window rule matches (decideMixed), with the shards of q's
// keys locked; of gives each key's shard.
func (s *localStore) mixed(now int64, q *query, ps []params, of []int, replicas int64) verdict {
	var wbuf [8]windowParams
	var lbuf [8]*windowLog
	var tbuf [8]int64
	ws, logs, tats := wbuf[:0], lbuf[:0], tbuf[:0]
	for j, k := range q.keys {
		sh := &s.shards[of[j]]
		if r := q.rules[j]; r.window {
			w := sh.logs[k]
			if w == nil && q.commit {
				w = &windowLog{period: r.win.period}
				sh.logs[k] = w
			}
			ws, logs, tats = append(ws, r.shareWindow(replicas)), append(logs, w), append(tats, 0)
			continue
		}
		ws, logs, tats = append(ws, windowParams{}), append(logs, nil), append(tats, sh.tats[k])
	}
	ok, delay, retry := decideMixed(now, ps, ws, tats, logs, q.commit, q.states)
	if ok && q.commit {
		for j, k := range q.keys {
			if !q.rules[j].window {
				s.shards[of[j]].tats[k] = tats[j]
			}
		}
	}
	return verdict{ok: ok, delay: time.Duration(delay), retry: time.Duration(retry), slot: now + delay, known: true}
}

// shaped returns p without its max delay when shaping is off for this request.
func (p params) shaped(on bool) params {
	if !on {
		p.maxDelay = 0
	}
	return p
}

// sweep drops keys whose TAT has passed (they behave exactly like absent keys); called with mu held.
func (sh *shard) sweep(now int64) {
	if now-sh.lastSweep < int64(sweepEvery) {
		return
	}
	sh.lastSweep = now
	for k, t := range sh.tats {
		if t <= now {
			delete(sh.tats, k)
		}
	}
	for k, w := range sh.logs {
		if w.idle(now) {
			delete(sh.logs, k)
		}
	}
}

func appendUnique(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// sortInts is an insertion sort: the slices hold one entry per matching policy.
func sortInts(s []int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
