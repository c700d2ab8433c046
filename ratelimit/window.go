package ratelimit

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/reqgate/reqgate/internal/redisns"
)

// window.go holds the sliding window, the policy of algorithm "window": a key is admitted while it was admitted
// fewer than limit times in the last period, counted from the time of each admitted request (a log of at most
// limit times per key), so no period-long interval ever holds more than limit admitted requests, wherever it
// starts. GCRA, by contrast, admits up to burst at once and then limit per period, so a window of one period
// can hold burst + limit of its requests.
//
// With a block, a request refused for a full window starts a block of the key: every request is refused until the
// block has passed, and each one refused meanwhile starts it again, so a client that keeps calling stays blocked
// until it stops calling for the whole block. Status, which never counts, reports the time the block has left.
//
// The in-process store calls decideMixed directly; the Lua script in redis.go mirrors it line for line (keep them
// in step). In Redis a window key is a sorted set of the admitted times (µs since the epoch, as scores), plus the
// member "block" whose score is minus the end of the block, so one key holds a window's whole state.

// windowParams are one window rule's constants, in the caller's time unit (nanoseconds locally, microseconds in
// Redis). limit 0 marks a GCRA rule in the slices of decideMixed.
type windowParams struct {
	limit  int64
	period int64
	block  int64
}

// newWindowRule is newRule for algorithm "window".
func newWindowRule(p Policy, ns string) (*rule, error) {
	switch {
	case p.Limit < 1 || p.Limit > MaxWindowLimit:
		return nil, fmt.Errorf("policy %q: limit %d: a window policy takes 1 to %d", p.Name, p.Limit, MaxWindowLimit)
	case p.Period < time.Millisecond:
		return nil, fmt.Errorf("policy %q: period %s: a window policy takes at least 1ms", p.Name, p.Period)
	case p.Block < 0:
		return nil, fmt.Errorf("policy %q: block %s: must not be negative", p.Name, p.Block)
	case p.MaxDelay != 0:
		return nil, fmt.Errorf("policy %q: max_delay applies to algorithm gcra only", p.Name)
	}
	r := &rule{name: p.Name, kind: p.Key, limit: p.Limit, period: p.Period, burst: p.Limit,
		prefix: redisns.Name(ns, "reqgate:rlw:"+p.Name+":"), window: true, block: p.Block}
	r.win = windowParams{limit: int64(p.Limit), period: int64(p.Period), block: int64(p.Block)}
	r.redis = [4]any{"w", int64(p.Limit), p.Period.Microseconds(), p.Block.Microseconds()}
	r.header = policyItem(p.Name, p.Limit, p.Period)
	r.quoted = strconv.Quote(p.Name) + ";r="
	return r, nil // no credits: each request of a window key is decided where the window is kept
}

// shareWindow is r's window for one of n replicas limiting on their own (the local fallback): limit/n, rounded
// down but at least 1, so that n replicas together admit at most the policy (or n, when the limit is below n).
func (r *rule) shareWindow(n int64) windowParams {
	w := r.win
	if n > 1 {
		w.limit = max(1, w.limit/n)
	}
	return w
}

// windowLog is one window key's state in process: the times of the requests admitted in the last period,
// ascending, and the end of its block.
type windowLog struct {
	times  []int64
	until  int64 // the block ends; <= now: not blocked
	period int64 // of the last write, for the sweep
}

// after returns the index of the first time > t.
func (w *windowLog) after(t int64) int {
	if w == nil {
		return 0
	}
	return sort.Search(len(w.times), func(i int) bool { return w.times[i] > t })
}

// count is the number of admitted times > t.
func (w *windowLog) count(t int64) int64 {
	if w == nil {
		return 0
	}
	return int64(len(w.times) - w.after(t))
}

// add records an admission at at and forgets the times <= old, which no window counts any more.
func (w *windowLog) add(at, old int64) {
	if i := w.after(old); i > 0 {
		w.times = append(w.times[:0], w.times[i:]...)
	}
	i := w.after(at)
	w.times = append(w.times, 0)
	copy(w.times[i+1:], w.times[i:])
	w.times[i] = at
}

// idle reports whether w behaves as an absent key at now: no block and no time within the period.
func (w *windowLog) idle(now int64) bool {
	return w.until <= now && (len(w.times) == 0 || w.times[len(w.times)-1] <= now-w.period)
}

// windowWait is how long a request at now must wait for window w to admit it: 0 to admit now. A request that
// counts (commit) while the key is blocked or the window is full starts the block, if the rule has one.
func windowWait(now int64, p windowParams, w *windowLog, commit bool) int64 {
	var wait int64
	from := now - p.period
	if w.count(from) >= p.limit {
		wait = w.times[w.after(from)] + p.period - now
	}
	blocked := w != nil && w.until > now
	if blocked {
		wait = max(wait, w.until-now)
	}
	if wait > 0 && commit && p.block > 0 {
		wait = max(wait, p.block)
	}
	return wait
}

// windowStateOf is the RateLimit state of an admitting window w at now, after an admission at slot when admitted.
func windowStateOf(now int64, p windowParams, w *windowLog, admitted bool, slot int64) policyState {
	from := now - p.period
	c := w.count(from)
	var oldest, newest int64
	if c > 0 {
		oldest, newest = w.times[w.after(from)], w.times[len(w.times)-1]
	}
	if admitted {
		if c == 0 {
			oldest, newest = slot, slot
		}
		oldest, newest = min(oldest, slot), max(newest, slot)
		c++
	}
	if left := p.limit - c; left > 0 {
		if c == 0 {
			return policyState{remaining: left}
		}
		return policyState{remaining: left, reset: max(0, newest+p.period-now)}
	}
	return policyState{reset: max(0, oldest+p.period-now)}
}

// decideMixed is decide (gcra.go) for a request that some window rule matches: ws[i].limit > 0 marks rule i as a
// window with state logs[i] (nil: an empty key), else it is GCRA with ps[i] and tats[i]. Every rule must admit.
// On admission with commit, each window records the forward time (now+delay); the TATs are overwritten as decide
// does, for the caller to store. A refused request records nothing, except that with commit each window that
// refused it starts its block. When commit is set the caller passes a log for every window rule.
func decideMixed(now int64, ps []params, ws []windowParams, tats []int64, logs []*windowLog, commit bool,
	states []policyState) (ok bool, delay, retry int64) {
	ok = true
	var wbuf [8]int64
	waits := wbuf[:0]
	for i := range ps {
		if ws[i].limit > 0 {
			wait := windowWait(now, ws[i], logs[i], commit)
			waits = append(waits, wait)
			if wait > 0 {
				ok = false
				retry = max(retry, wait)
			}
			continue
		}
		waits = append(waits, 0)
		ok, delay, retry = ps[i].weigh(now, tats[i], ok, delay, retry)
	}
	if !ok {
		delay = 0
	}
	for i, p := range ps {
		if w := ws[i]; w.limit > 0 {
			var st policyState
			if waits[i] > 0 {
				st = policyState{reset: waits[i]}
				if commit && w.block > 0 {
					logs[i].until = now + w.block
					logs[i].period = w.period
				}
			} else {
				st = windowStateOf(now, w, logs[i], ok, now+delay)
				if ok && commit {
					logs[i].add(now+delay, now-w.period)
					logs[i].period = w.period
				}
			}
			if states != nil {
				states[i] = st
			}
			continue
		}
		p.settle(now, delay, ok, tats, i, states)
	}
	return ok, delay, retry
}
