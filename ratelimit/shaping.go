package ratelimit

// shaping.go bounds the requests held for a shaped slot (Options.MaxHeld) per policy key in this process.

// acquire takes a held-request ticket on every shaping key; false (nothing taken) when any is at MaxHeld.
func (l *Limiter) acquire(rules []*rule, keys []string) bool {
	l.heldMu.Lock()
	defer l.heldMu.Unlock()
	for i, r := range rules {
		if r.maxDelay > 0 && l.held[keys[i]] >= l.maxHeld {
			return false
		}
	}
	for i, r := range rules {
		if r.maxDelay > 0 {
			l.held[keys[i]]++
		}
	}
	return true
}

func (l *Limiter) release(rules []*rule, keys []string) {
	l.heldMu.Lock()
	defer l.heldMu.Unlock()
	for i, r := range rules {
		if r.maxDelay > 0 {
			if n := l.held[keys[i]] - 1; n > 0 {
				l.held[keys[i]] = n
			} else {
				delete(l.held, keys[i])
			}
		}
	}
}
