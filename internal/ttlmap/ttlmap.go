// Package ttlmap is a map whose entries expire after a fixed time, bounded in size and safe for concurrent
// use. It is the store of what reqgate remembers for a short while about callers: the credentials the core
// and the gateway verified, and the gateway's failed-login counters.
//
// A Map keeps no clock: every call that needs the time is given it, so each caller's own clock (injected in
// tests) decides what has expired.
package ttlmap

import (
	"sync"
	"time"
)

// Map maps keys to values for a fixed time after each Set. Its size is bounded because callers make up
// the keys (every password guess is a new one): a Set that finds the map full first drops the expired
// entries and, when that frees no room, every entry. Forgetting costs the callers only a check done
// again, so the map keeps no order of its entries to evict by. A caller for whom forgetting costs more (a
// counter an attacker would like reset) uses Add instead, which only ever drops expired entries.
//
// Get takes a shared lock and allocates nothing, so a lookup on a hot path costs a map access.
type Map[K comparable, V any] struct {
	ttl time.Duration
	max int
	mu  sync.RWMutex
	m   map[K]entry[V]
	// sweepAt is when a full map is next searched for expired entries: no entry expires before it, or it is
	// at most a sixteenth of the TTL after the last search, so a full map is searched (a walk over every
	// entry) at most 16 times per TTL however often Add is refused.
	sweepAt time.Time
}

type entry[V any] struct {
	v   V
	exp time.Time
}

// New returns a Map whose entries live for ttl and which holds at most max entries (max <= 0: no bound).
// With ttl <= 0 the Map remembers nothing: Set does nothing and Get finds nothing.
func New[K comparable, V any](ttl time.Duration, max int) *Map[K, V] {
	return &Map[K, V]{ttl: ttl, max: max, m: make(map[K]entry[V])}
}

// Get returns the value of k if it was set less than the TTL before now.
func (m *Map[K, V]) Get(k K, now time.Time) (V, bool) {
	m.mu.RLock()
	e, ok := m.m[k]
	m.mu.RUnlock()
	if !ok || !now.Before(e.exp) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// Set maps k to v from now until the TTL has passed, making room first when the map is full.
func (m *Map[K, V]) Set(k K, v V, now time.Time) {
	if m.ttl <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.max > 0 && len(m.m) >= m.max {
		for key, e := range m.m {
			if !now.Before(e.exp) {
				delete(m.m, key)
			}
		}
		if len(m.m) >= m.max {
			clear(m.m)
		}
	}
	m.m[k] = entry[V]{v: v, exp: now.Add(m.ttl)}
}

// Add maps k to v from now until the TTL has passed, as Set does, but never drops an entry that has not
// expired: when the map is full and holds no expired entry, it adds nothing and reports false. A key already
// held (expired or not) is always replaced.
func (m *Map[K, V]) Add(k K, v V, now time.Time) bool {
	if m.ttl <= 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, held := m.m[k]; !held && m.max > 0 && len(m.m) >= m.max {
		if now.Before(m.sweepAt) {
			return false
		}
		m.sweepLocked(now)
		if len(m.m) >= m.max {
			return false
		}
	}
	m.m[k] = entry[V]{v: v, exp: now.Add(m.ttl)}
	return true
}

// sweepLocked drops the expired entries and notes when the next search may find one.
func (m *Map[K, V]) sweepLocked(now time.Time) {
	next := now.Add(m.ttl)
	for key, e := range m.m {
		if !now.Before(e.exp) {
			delete(m.m, key)
		} else if e.exp.Before(next) {
			next = e.exp
		}
	}
	if soonest := now.Add(m.ttl / 16); next.Before(soonest) {
		next = soonest
	}
	m.sweepAt = next
}

// Renew maps k to v from now until the TTL has passed, only when k holds an entry that has not expired: what
// was deleted meanwhile stays deleted. It reports whether it renewed.
func (m *Map[K, V]) Renew(k K, v V, now time.Time) bool {
	if m.ttl <= 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.m[k]; !ok || !now.Before(e.exp) {
		return false
	}
	m.m[k] = entry[V]{v: v, exp: now.Add(m.ttl)}
	return true
}

// Delete forgets k.
func (m *Map[K, V]) Delete(k K) {
	m.mu.Lock()
	delete(m.m, k)
	m.mu.Unlock()
}

// Clear forgets every entry.
func (m *Map[K, V]) Clear() {
	m.mu.Lock()
	clear(m.m)
	m.mu.Unlock()
}

// Len is the number of entries held, expired ones included until a full Set or a Delete drops them.
func (m *Map[K, V]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.m)
}

// DeleteFunc forgets every entry whose key and value del reports true for.
func (m *Map[K, V]) DeleteFunc(del func(K, V) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.m {
		if del(k, e.v) {
			delete(m.m, k)
		}
	}
}
