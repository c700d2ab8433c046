package ratelimit

import (
	"hash/maphash"
	"sync"
	"time"
)

// local.go is the in-process limiter: the same GCRA (decide) over a sharded map of TATs on the monotonic clock.
// It is the embedded default (no Redis) and the per-replica fallback while Redis is unavailable.

const (
	localShards = 64
	sweepEvery  = 10 * time.Second // how often a shard drops idle keys (TAT in the past)
)

type localStore struct {
	epoch  time.Time // monotonic origin of the nanosecond clock
	seed   maphash.Seed
	shards [localShards]shard
}

type shard struct {
	mu        sync.Mutex
	tats      map[string]int64
	lastSweep int64
}

func newLocalStore() *localStore {
	s := &localStore{epoch: time.Now(), seed: maphash.MakeSeed()}
	for i := range s.shards {
		s.shards[i].tats = make(map[string]int64)
	}
	return s
}

func (s *localStore) now() int64 { return int64(time.Since(s.epoch)) }

// decide runs GCRA for keys (one per policy, params alike) atomically and commits the new TATs when admitted and
// commit is set. states receives the per-policy state; the returned slot is the forward time on s's clock.
func (s *localStore) decide(keys []string, ps []params, commit bool, states []policyState) verdict {
	var kbuf, ibuf [8]int
	of := kbuf[:0] // shard of each key
	shards := ibuf[:0]
	for _, k := range keys {
		i := int(maphash.String(s.seed, k) % localShards)
		of = append(of, i)
		shards = appendUnique(shards, i)
	}
	sortInts(shards) // a fixed lock order: no deadlock between requests sharing shards
	for _, i := range shards {
		s.shards[i].mu.Lock()
	}
	now := s.now()
	var tbuf [8]int64
	tats := tbuf[:0]
	for j, k := range keys {
		tats = append(tats, s.shards[of[j]].tats[k])
	}
	ok, delay, retry := decide(now, ps, tats, states)
	if ok && commit {
		for j, k := range keys {
			s.shards[of[j]].tats[k] = tats[j]
		}
	}
	for _, i := range shards {
		s.shards[i].sweep(now)
		s.shards[i].mu.Unlock()
	}
	return verdict{ok: ok, delay: time.Duration(delay), retry: time.Duration(retry), slot: now + delay}
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
