package ratelimit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// shaping.go holds requests for their shaped slot, at most Options.MaxHeld per policy key in this process.

// holds counts the requests held for a slot per policy key, so that a burst far over the rate is rejected
// instead of piling up sleeping requests without bound.
type holds struct {
	limit    int // Options.MaxHeld
	mu       sync.Mutex
	n        map[string]int // requests held per key
	sleeping atomic.Int64   // requests sleeping for their slot now
}

func newHolds(limit int) *holds { return &holds{limit: limit, n: make(map[string]int)} }

// acquire takes a held-request ticket on every shaping key; false (nothing taken) when any is at the maximum.
func (h *holds) acquire(rules []*rule, keys []string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range rules {
		if r.maxDelay > 0 && h.n[keys[i]] >= h.limit {
			return false
		}
	}
	for i, r := range rules {
		if r.maxDelay > 0 {
			h.n[keys[i]]++
		}
	}
	return true
}

func (h *holds) release(rules []*rule, keys []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range rules {
		if r.maxDelay > 0 {
			if n := h.n[keys[i]] - 1; n > 0 {
				h.n[keys[i]] = n
			} else {
				delete(h.n, keys[i])
			}
		}
	}
}

// wait sleeps for d, the time until the caller's slot; false when ctx ended first (the slot stays consumed).
func (h *holds) wait(ctx context.Context, d time.Duration) bool {
	heldNow.Inc()
	h.sleeping.Add(1)
	t := time.NewTimer(d)
	ok := true
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
		ok = false
	}
	h.sleeping.Add(-1)
	heldNow.Dec()
	return ok
}
