package ratelimit

// gcra.go holds the GCRA arithmetic shared by both backends: the in-process limiter calls decide directly, and the
// Lua script in redis.go mirrors it line for line (keep them in step).

// params are one policy's GCRA constants, all in the caller's time unit (nanoseconds locally, microseconds in
// Redis).
type params struct {
	interval  int64 // T = period / limit: the spacing of admitted requests in the long run
	tolerance int64 // tau = T * burst: how far the theoretical arrival time may run ahead of now
	maxDelay  int64 // shaping: how long a request may be held for its slot; 0 = reject instead
}

// policyState is what decide reports for one policy, for the RateLimit header.
type policyState struct {
	remaining int64 // requests that would still be admitted at once, after this one
	reset     int64 // remaining > 0: time until the quota is fully restored; 0: time until the next request fits
}

// decide applies GCRA to every matching policy at once at time now. tats holds each policy's stored theoretical
// arrival time (TAT; 0 or any value <= now means "idle") and is overwritten with the new TATs only when every
// policy admits, so a request one policy rejects never consumes another's quota. A request whose slot lies ahead
// of now is admitted with delay when the slot is within every policy's maxDelay (the caller holds it until then);
// the slot is reserved in the new TATs, so held requests count against the rate. When rejected, retry is the time
// until a request would be admitted. states, if not nil, receives one entry per policy.
func decide(now int64, ps []params, tats []int64, states []policyState) (ok bool, delay, retry int64) {
	ok = true
	for i, p := range ps {
		ok, delay, retry = p.weigh(now, tats[i], ok, delay, retry)
	}
	if !ok {
		delay = 0
	}
	for i, p := range ps {
		p.settle(now, delay, ok, tats, i, states)
	}
	return ok, delay, retry
}

// weigh folds policy p, whose stored TAT is tat, into a decision so far (ok, delay, retry): its slot within
// maxDelay admits with that delay, beyond it refuses with the time until it would admit.
func (p params) weigh(now, tat int64, ok bool, delay, retry int64) (bool, int64, int64) {
	d := max(tat, now) + p.interval - p.tolerance - now
	if d > p.maxDelay {
		return false, delay, max(retry, d-p.maxDelay)
	}
	return ok, max(delay, d), retry
}

// settle writes policy i's TAT after the decision (only when admitted) and its state, if states is not nil.
func (p params) settle(now, delay int64, ok bool, tats []int64, i int, states []policyState) {
	base := max(tats[i], now) // the TAT after this decision
	if ok {
		// GCRA evaluated at the moment the request is forwarded (now+delay): for the policy that set the
		// delay this is its usual TAT+T; for the others it keeps their slot no earlier than the forward time.
		base = max(tats[i], now+delay) + p.interval
		tats[i] = base
	}
	if states != nil {
		states[i] = state(now, base, p)
	}
}

// state derives remaining quota and reset time of one policy from its TAT.
func state(now, tat int64, p params) policyState {
	free := now - (tat - p.tolerance) // time worth of quota still available
	if free < p.interval {
		return policyState{remaining: 0, reset: max(0, tat+p.interval-p.tolerance-now)}
	}
	return policyState{remaining: free / p.interval, reset: max(0, tat-now)}
}
