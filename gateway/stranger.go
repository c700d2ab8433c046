package gateway

import (
	"sync"
	"sync/atomic"
	"time"
)

// Strangers. Once a user's failed logins from all addresses together have reached their limit within a window
// (failureLimits.maxUserAll), an attempt at that user from a network the user has not logged in from (known.go)
// waits before the core is asked: 250 ms for the first such attempt of the window, twice as long for each one
// after it, up to Options.MaxLoginDelay. The user on a new network still gets in, later; guesses from many
// addresses are slowed to a few per MaxLoginDelay. A wait holds a goroutine and a connection, so the waits
// are bounded: at most strangerHoldsPerUser per user, Options.MaxDelayedLogins in all. An attempt that finds
// no room is refused (Options.RejectStatus, with Retry-After) and not counted.

// strangerHoldsPerUser is how many attempts at one user may wait at once: a few, so that the user on a new
// network still finds room now and then while guesses keep the rest busy, and one attacked user cannot take
// every wait of the process.
const strangerHoldsPerUser = 4

// strangerFirstDelay is the wait of the first attempt past the limit in a window.
const strangerFirstDelay = 250 * time.Millisecond

// strangerDelay is the wait of the excess-th attempt past the limit in a window (from 1), at most max.
func strangerDelay(excess int, max time.Duration) time.Duration {
	d := strangerFirstDelay
	for i := 1; i < excess && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// strangerHolds counts the attempts waiting, per user and in all.
type strangerHolds struct {
	max     int
	mu      sync.Mutex
	n       int
	users   map[string]int // by api_key and username
	delayed atomic.Uint64  // attempts that waited (Stats)
}

func newStrangerHolds(max int) *strangerHolds {
	return &strangerHolds{max: max, users: make(map[string]int)}
}

// acquire takes room for one waiting attempt at user of apiKey; it reports false when there is none.
func (h *strangerHolds) acquire(apiKey, user string) bool {
	k := apiKey + "\x00" + user
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n >= h.max || h.users[k] >= strangerHoldsPerUser {
		return false
	}
	h.n++
	h.users[k]++
	return true
}

// release gives back the room acquire took.
func (h *strangerHolds) release(apiKey, user string) {
	k := apiKey + "\x00" + user
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n--
	if h.users[k]--; h.users[k] <= 0 {
		delete(h.users, k)
	}
}

// holdStranger makes an attempt that reserve reported past the limit of all addresses (r.excess > 0) wait
// its turn. It returns how long the attempt waited, or, when it may not wait (no room, or MaxLoginDelay 0),
// how long the caller should wait before trying again; the attempt is then taken back.
func (g *Gateway) holdStranger(ip, apiKey, user string, r reservation) (waited, refused time.Duration) {
	limit := g.opt.MaxLoginDelay
	if limit <= 0 {
		g.fails.release(ip, apiKey, user)
		return 0, max(r.left, time.Second)
	}
	d := strangerDelay(r.excess, limit)
	if !g.strangers.acquire(apiKey, user) {
		g.fails.release(ip, apiKey, user)
		authDelayedRefused.Inc()
		return 0, d
	}
	defer g.strangers.release(apiKey, user)
	authDelayed.Inc()
	g.strangers.delayed.Add(1)
	time.Sleep(d)
	return d, 0
}
