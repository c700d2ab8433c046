package ratelimit

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// local.go is the in-process store: the same GCRA (decide) over a sharded map of TAT cells on the monotonic clock,
// lock-free for a request of one key whose Memo knows its cell (see cell), and the same sliding windows
// (decideMixed, window.go) over a map of their logs. It is the embedded default (no Redis) and the per-replica
// fallback while Redis is unavailable.

const (
	localShards = 64
	sweepEvery  = 10 * time.Second // how often a shard drops idle keys (TAT in the past)
	fastTries   = 4                // compare-and-swaps a lock-free decision may lose before it takes the lock
)

// A GCRA key's TAT lives in a cell, which its shard's map holds and a Memo may hold too (Memo.local), so that
// the common request, one GCRA key through a Memo that knows its cell, is decided without a lock, a hash or a
// map access: load the TAT, decide, compare-and-swap the new TAT (fast). Everything else takes the lock of the
// shards of its keys (locked), which also excludes the sweeper. Two values no TAT takes mark a cell's state:
//
//   - cellHeld: a locked decision owns the cell. It holds every GCRA cell of its query before it reads them and
//     stores the new TATs (or the old ones) when it has decided, so a decision over several keys is atomic
//     against the lock-free ones too: they see cellHeld and take the lock.
//   - cellDead: the sweeper dropped the cell from its map (idle key). Whoever still has it (a Memo) takes the
//     lock and finds the key's live cell, or makes one.
//
// A TAT in a live cell only grows, except that a locked decision that admits nothing stores the TAT it read
// back; a lock-free decision whose compare-and-swap meets that value again decided on the state it would see
// anyway.
const (
	cellDead = math.MinInt64
	cellHeld = math.MinInt64 + 1
)

type cell struct{ tat atomic.Int64 }

// localMemo is a Memo's cell of its single GCRA key in one store: a Limiter's own store or its fallback's are
// different stores, and a Memo made for another Limiter starts afresh (Limiter.match).
type localMemo struct {
	store *localStore
	cell  *cell
}

type localStore struct {
	epoch  time.Time // monotonic origin of the nanosecond clock
	seed   maphash.Seed
	share  *presence        // when set (the fallback): decide with each rule's share for the replicas it counts
	clock  func() time.Time // Options.Now; nil: the monotonic clock
	shards [localShards]shard
}

type shard struct {
	mu        sync.Mutex
	tats      map[string]*cell      // GCRA rules' keys
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
		s.shards[i].tats = make(map[string]*cell)
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

func (s *localStore) replicas() int64 {
	if s.share != nil {
		return s.share.replicas()
	}
	return 1
}

// decide never fails.
func (s *localStore) decide(_ context.Context, q *query) (verdict, error) {
	return s.gcra(q), nil
}

// gcra runs GCRA for q's keys with each rule's params in this store's share, atomically, and commits the new
// TATs when admitted and q.commit is set. The returned slot is the forward time on s's clock.
func (s *localStore) gcra(q *query) verdict {
	if m := q.local; m != nil && m.store == s && m.cell != nil && len(q.keys) == 1 && !q.rules[0].window {
		if v, ok := s.fast(q, m.cell); ok {
			return v
		}
	}
	return s.locked(q)
}

// fast decides q, whose one key is GCRA's with cell c, without a lock: false when c is held or dead, or when
// other decisions changed c fastTries times between this one's read and its compare-and-swap. The clock is read
// after the TAT, so a decision that commits never decides at a time before that of the decision it follows.
func (s *localStore) fast(q *query, c *cell) (verdict, bool) {
	ps := [1]params{q.rules[0].share(s.replicas()).shaped(q.shape)}
	for range fastTries {
		old := c.tat.Load()
		if old == cellDead || old == cellHeld {
			return verdict{}, false
		}
		now := s.now()
		tats := [1]int64{old}
		ok, delay, retry := decide(now, ps[:], tats[:], q.states)
		if !ok || !q.commit || c.tat.CompareAndSwap(old, tats[0]) {
			return gcraVerdict(now, ok, delay, retry), true
		}
	}
	return verdict{}, false
}

// locked decides q under the locks of its keys' shards, holding its GCRA keys' cells (see cellHeld) while it
// decides, and gives q.local the cell of a single GCRA key.
func (s *localStore) locked(q *query) verdict {
	var pbuf [8]params
	var kbuf, ibuf [8]int
	ps := pbuf[:0]
	of := kbuf[:0] // shard of each key
	shards := ibuf[:0]
	replicas := s.replicas()
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
	var cbuf [8]*cell
	var obuf, tbuf [8]int64
	cells, olds, tats := cbuf[:0], obuf[:0], tbuf[:0]
	for j, k := range q.keys {
		var c *cell
		var t int64
		if !q.rules[j].window {
			c, t = s.shards[of[j]].hold(k, q.commit)
		}
		cells, olds, tats = append(cells, c), append(olds, t), append(tats, t)
	}
	now := s.now()
	var ok bool
	var delay, retry int64
	if windows {
		ok, delay, retry = s.mixed(now, q, ps, of, replicas, tats)
	} else {
		ok, delay, retry = decide(now, ps, tats, q.states)
	}
	if !ok || !q.commit {
		tats = olds
	}
	for j, c := range cells {
		if c != nil {
			c.tat.Store(tats[j])
		}
	}
	if m := q.local; m != nil && len(cells) == 1 && cells[0] != nil {
		m.store, m.cell = s, cells[0]
	}
	for _, i := range shards {
		s.shards[i].sweep(now)
		s.shards[i].mu.Unlock()
	}
	return gcraVerdict(now, ok, delay, retry)
}

// gcraVerdict is the verdict of a decision taken at now on s's clock (nanoseconds, as delay and retry).
func gcraVerdict(now int64, ok bool, delay, retry int64) verdict {
	return verdict{ok: ok, delay: time.Duration(delay), retry: time.Duration(retry), slot: now + delay, known: true}
}

// hold marks k's cell held and returns it with the TAT it had; without create, an absent key gets no cell and
// TAT 0 (idle). Called with sh.mu held: no other locked decision holds a cell of sh meanwhile and the sweeper
// kills none, so the compare-and-swap only races with lock-free decisions, which never leave a cell held. The
// keys of one query are distinct (each begins with its rule's prefix, and rule names are unique), so a cell
// found held is a broken invariant, not a wait.
func (sh *shard) hold(k string, create bool) (*cell, int64) {
	c := sh.tats[k]
	if c == nil {
		if !create {
			return nil, 0
		}
		c = new(cell)
		c.tat.Store(cellHeld)
		sh.tats[k] = c
		return c, 0
	}
	for {
		t := c.tat.Load()
		if t == cellHeld || t == cellDead {
			panic("ratelimit: a mapped cell found held or dead under its shard's lock")
		}
		if c.tat.CompareAndSwap(t, cellHeld) {
			return c, t
		}
	}
}

// mixed is locked's decision for a request that some window rule matches (decideMixed), with the shards of q's
// keys locked; of gives each key's shard, tats the GCRA keys' TATs, overwritten with the new ones when admitted.
func (s *localStore) mixed(now int64, q *query, ps []params, of []int, replicas int64, tats []int64) (
	ok bool, delay, retry int64) {
	var wbuf [8]windowParams
	var lbuf [8]*windowLog
	ws, logs := wbuf[:0], lbuf[:0]
	for j, k := range q.keys {
		r := q.rules[j]
		if !r.window {
			ws, logs = append(ws, windowParams{}), append(logs, nil)
			continue
		}
		sh := &s.shards[of[j]]
		w := sh.logs[k]
		if w == nil && q.commit {
			w = &windowLog{period: r.win.period}
			sh.logs[k] = w
		}
		ws, logs = append(ws, r.shareWindow(replicas)), append(logs, w)
	}
	return decideMixed(now, ps, ws, tats, logs, q.commit, q.states)
}

// shaped returns p without its max delay when shaping is off for this request.
func (p params) shaped(on bool) params {
	if !on {
		p.maxDelay = 0
	}
	return p
}

// sweep drops keys whose TAT has passed (they behave exactly like absent keys), marking their cells dead;
// called with mu held.
func (sh *shard) sweep(now int64) {
	if now-sh.lastSweep < int64(sweepEvery) {
		return
	}
	sh.lastSweep = now
	for k, c := range sh.tats {
		// A lock-free decision may advance the TAT meanwhile: then the compare-and-swap fails and the key stays.
		if t := c.tat.Load(); t <= now && c.tat.CompareAndSwap(t, cellDead) {
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
