package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configure a Limiter. Zero values give the defaults stated on each field.
type Options struct {
	Policies  []Policy
	Overrides []Override

	// Redis is the shared store; nil runs the in-process limiter (one replica).
	Redis *redis.Client
	// OnRedisError is what happens while Redis fails: "local" (default) limits each replica on its own at
	// 1/LocalReplicas of each policy's rate, "allow" admits everything, "deny" rejects everything.
	OnRedisError string
	// RedisTimeout bounds one script call; slower answers count as Redis errors. Default 50ms. The client must
	// have ContextTimeoutEnabled (see RedisOptions), or go-redis ignores this deadline on the socket.
	RedisTimeout time.Duration
	// RedisBackoff is how long the limiter stays on the fallback after a Redis error before probing again.
	// Default 1s.
	RedisBackoff time.Duration
	// LocalReplicas is the number of gateway replicas sharing the limits, used by the "local" fallback: each
	// replica then admits limit/LocalReplicas per period (burst likewise, at least 1) so that all replicas together
	// stay near the policy. Default 1: every replica admits the full policy rate while Redis is down.
	LocalReplicas int
	// MaxHeld bounds the requests held for a shaped slot per policy key in this process; once reached, further
	// requests over the rate are rejected instead of held. Default 256.
	MaxHeld int
	// RejectStatus is the HTTP status of a rejection: 429 (default) or 503 (strict compatibility).
	RejectStatus int
	// NoAutoPipeline sends each script call on a pooled connection of its own. By default the calls of
	// concurrent requests go through go-redis' autopipeliner (Client.AutoPipeline, marked experimental by
	// go-redis), which batches them into one write and one read per round trip: about half the CPU per request
	// on the client and on Redis (docs/performance.md).
	NoAutoPipeline bool
	// NoRejectCache sends every request to Redis. By default a replica remembers a Redis rejection of a key set
	// until its Retry-After has passed and rejects the same keys meanwhile without a round trip (exact: Redis
	// would reject them too, as a TAT never moves back).
	NoRejectCache bool
	// NoCredits sends every request of a fast policy to Redis. By default, while a key set is far from its limit
	// (every policy keeps 4 times as many requests), Redis reserves a few extra slots for the replica with an
	// admitted request, which the replica then admits without a round trip (credits.go); only policies of at
	// least 800 requests per second qualify, and the replicas never admit more than the policy allows.
	NoCredits bool
	// Logger receives the switches to and from the fallback. Default slog.Default().
	Logger *slog.Logger
}

// Request names what a request is counted under. Empty fields do not match policies keyed on them.
type Request struct {
	APIKey string // the {key} of the URL
	User   string // the verified Basic-auth user name
	IP     string // the client IP
}

// Decision is the outcome of Admit.
type Decision struct {
	Allowed    bool          // forward the request (after Admit returned, any shaping delay has passed)
	Limited    bool          // some policy matched: send the RateLimit headers
	RetryAfter time.Duration // when rejected: time until a request would be admitted (see RetryAfterSeconds)
	Policy     string        // RateLimit-Policy value: one item per matching policy
	Delay      time.Duration // how long Admit held the request for its shaped slot
	Fallback   bool          // decided without Redis (OnRedisError)

	counts counts // the RateLimit value's numbers (see AppendRateLimit)
	slot   int64  // the forward time on the backend's clock (Redis: µs since epoch; local: ns): for tests
}

// counts are the matched rules and their states, kept in the Decision so that the RateLimit value is written
// only where it is wanted, without an allocation of its own (more rules than fit here spill to a slice).
type counts struct {
	n      int // 0: no counts known
	rules  [8]*rule
	states [8]policyState
	more   []ruleState
}

type ruleState struct {
	rule  *rule
	state policyState
}

// verdict is a backend's answer.
type verdict struct {
	ok           bool
	delay, retry time.Duration
	slot         int64
	credits      int // slots Redis granted this replica beyond the request (credits.go)
}

// Limiter admits, holds or rejects requests. It is safe for concurrent use.
type Limiter struct {
	rules     []*rule
	overrides map[string][]*rule // api_key -> rules with that key's overrides applied
	policyAll string             // RateLimit-Policy when every rule matches

	local    *localStore
	redis    *redisStore
	onError  string
	timeout  time.Duration
	backoff  time.Duration
	status   int
	log      *slog.Logger
	down     atomic.Bool  // Redis is failing: use the fallback
	probeAt  atomic.Int64 // unix nanoseconds after which one caller probes Redis again
	shaping  bool         // some rule has MaxDelay > 0
	held     *holds       // requests held for their slot
	rejects  *rejectCache // Redis rejections still in force; nil without Redis or with NoRejectCache
	credits  *creditStore // slots granted to this replica; nil without Redis or with NoCredits
	onCredit atomic.Int64 // requests this limiter admitted on a credit
}

// Fallback modes.
const (
	OnErrorLocal = "local"
	OnErrorAllow = "allow"
	OnErrorDeny  = "deny"
)

// New validates opt and returns a Limiter. Errors name the policy or override at fault.
func New(opt Options) (*Limiter, error) {
	if err := opt.setDefaults(); err != nil {
		return nil, err
	}
	l := &Limiter{onError: opt.OnRedisError, timeout: opt.RedisTimeout, backoff: opt.RedisBackoff,
		status: opt.RejectStatus, log: opt.Logger, local: newLocalStore(), held: newHolds(opt.MaxHeld)}
	var err error
	if l.rules, l.overrides, err = compile(opt.Policies, opt.Overrides, opt.LocalReplicas); err != nil {
		return nil, err
	}
	items := make([]string, len(l.rules))
	for i, r := range l.rules {
		items[i] = r.header
		l.shaping = l.shaping || r.maxDelay > 0
	}
	l.policyAll = strings.Join(items, ", ")
	if opt.Redis != nil {
		l.redis = &redisStore{rdb: opt.Redis}
		if !opt.NoRejectCache {
			l.rejects = newRejectCache()
		}
		if !opt.NoCredits {
			l.credits = newCreditStore()
		}
		if !opt.NoAutoPipeline {
			ap, err := opt.Redis.AsyncAutoPipeline()
			if err != nil {
				return nil, fmt.Errorf("redis autopipeline: %w", err)
			}
			l.redis.ap = ap
		}
		if !opt.Redis.Options().ContextTimeoutEnabled {
			l.log.Warn("ratelimit: the Redis client has ContextTimeoutEnabled=false, so a stalled Redis can hold requests "+
				"for its ReadTimeout instead of RedisTimeout", "redis_timeout", l.timeout)
		}
		redisUp().Set(1)
	}
	return l, nil
}

// setDefaults fills in the defaults stated on the fields and rejects values out of range.
func (o *Options) setDefaults() error {
	if err := o.setRedisDefaults(); err != nil {
		return err
	}
	if o.MaxHeld == 0 {
		o.MaxHeld = 256
	}
	if o.MaxHeld < 0 {
		return fmt.Errorf("max held %d: must not be negative", o.MaxHeld)
	}
	switch o.RejectStatus {
	case 0:
		o.RejectStatus = http.StatusTooManyRequests
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
	default:
		return fmt.Errorf("reject_status %d: want 429 or 503", o.RejectStatus)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.LocalReplicas == 0 {
		o.LocalReplicas = 1
	}
	if o.LocalReplicas < 0 {
		return fmt.Errorf("local replicas %d: must be at least 1", o.LocalReplicas)
	}
	return nil
}

// setRedisDefaults is the part of setDefaults about the Redis calls and their failures.
func (o *Options) setRedisDefaults() error {
	switch o.OnRedisError {
	case "":
		o.OnRedisError = OnErrorLocal
	case OnErrorLocal, OnErrorAllow, OnErrorDeny:
	default:
		return fmt.Errorf("on_redis_error %q: want local, allow or deny", o.OnRedisError)
	}
	if o.RedisTimeout == 0 {
		o.RedisTimeout = 50 * time.Millisecond
	}
	if o.RedisBackoff == 0 {
		o.RedisBackoff = time.Second
	}
	if o.RedisTimeout < 0 || o.RedisBackoff < 0 {
		return errors.New("redis timeout and back-off must not be negative")
	}
	return nil
}

// RejectStatus is the HTTP status to send with a rejection (429 or 503).
func (l *Limiter) RejectStatus() int { return l.status }

// Close releases nothing today: the Redis client belongs to the caller. It exists so callers can defer it.
func (l *Limiter) Close() error { return nil }

// match returns the rules that apply to r and their keys, appended to the given buffers.
func (l *Limiter) match(r Request, rs []*rule, keys []string) ([]*rule, []string) {
	rules := l.rules
	if len(l.overrides) > 0 && r.APIKey != "" {
		if o, ok := l.overrides[r.APIKey]; ok {
			rules = o
		}
	}
	for _, ru := range rules {
		if k := ru.key(r); k != "" {
			rs = append(rs, ru)
			keys = append(keys, k)
		}
	}
	return rs, keys
}

// Admit decides on one request. A request over the rate whose shaped slot lies within MaxDelay is held (Admit
// sleeps) until that slot and then returned Allowed. If ctx ends while the request is held, Admit returns at once
// with Allowed false (the slot stays consumed). Admit never fails: Redis trouble follows OnRedisError.
func (l *Limiter) Admit(ctx context.Context, r Request) Decision {
	var rbuf [8]*rule
	var kbuf [8]string
	rules, keys := l.match(r, rbuf[:0], kbuf[:0])
	if len(rules) == 0 {
		return Decision{Allowed: true}
	}
	shape := false
	if l.shaping {
		shape = l.held.acquire(rules, keys)
	}
	var sbuf [8]policyState
	var states []policyState
	if len(rules) <= len(sbuf) {
		states = sbuf[:len(rules)]
	} else {
		states = make([]policyState, len(rules))
	}
	v, fallback, known := l.decide(ctx, r.APIKey, rules, keys, true, shape, states)
	if shape && (!v.ok || v.delay <= 0) {
		l.held.release(rules, keys)
		shape = false
	}
	d := Decision{Allowed: v.ok, Limited: true, RetryAfter: v.retry, Fallback: fallback, slot: v.slot}
	d.Policy = l.policyHeader(rules)
	if known {
		d.counts.set(rules, states)
	}
	switch {
	case !v.ok:
		decisionsReject.Inc()
	case v.delay > 0:
		decisionsDelay.Inc()
		d.Delay = v.delay
		if !l.held.wait(ctx, v.delay) {
			d.Allowed = false
			d.RetryAfter = v.delay
		}
	default:
		decisionsAdmit.Inc()
	}
	if shape {
		l.held.release(rules, keys)
	}
	return d
}

// Status reports how long until a request for r would be admitted (0: now, possibly after a shaping hold),
// without counting anything.
func (l *Limiter) Status(ctx context.Context, r Request) (retryAfter time.Duration) {
	var rbuf [8]*rule
	var kbuf [8]string
	rules, keys := l.match(r, rbuf[:0], kbuf[:0])
	if len(rules) == 0 {
		return 0
	}
	v, _, _ := l.decide(ctx, r.APIKey, rules, keys, false, true, nil)
	if v.ok {
		return 0
	}
	return v.retry
}

// decide asks Redis, or the fallback while Redis fails. known reports whether states were filled. apiKey tells
// the reject cache apart requests whose keys are equal but whose numbers differ by an override.
func (l *Limiter) decide(ctx context.Context, apiKey string, rules []*rule, keys []string, commit, shape bool, states []policyState) (v verdict, fallback, known bool) {
	var pbuf [8]params
	ps := pbuf[:0]
	if l.redis == nil {
		for _, r := range rules {
			ps = append(ps, r.local.shaped(shape))
		}
		return l.local.decide(keys, ps, commit, states), false, true
	}
	if l.useRedis() {
		start := time.Now()
		var ck string
		if l.rejects != nil || l.credits != nil {
			ck = setKey(keys)
			if _, ok := l.overrides[apiKey]; ok {
				ck = apiKey + "\x01" + ck
			}
			var sbuf [8]policyState
			st := states
			if st == nil {
				if len(keys) <= len(sbuf) {
					st = sbuf[:len(keys)]
				} else {
					st = make([]policyState, len(keys))
				}
			}
			if l.credits != nil {
				if commit && l.credits.take(ck, start, st) {
					creditHits.Inc()
					l.onCredit.Add(1)
					return verdict{ok: true}, false, true
				}
				if !commit && l.credits.available(ck, start) {
					return verdict{ok: true}, false, false
				}
			}
			if l.rejects != nil {
				if retry, ok := l.rejects.get(ck, start, st); ok {
					rejectCacheHits.Inc()
					return verdict{retry: retry}, false, true
				}
			}
		}
		maxCredits := boxedCredits[0]
		if l.credits != nil && commit {
			c := creditMax
			for _, r := range rules {
				c = min(c, r.credits)
			}
			maxCredits = boxedCredits[c]
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
		// A copy for the Redis client (which may keep it past this call: the autopipeliner), so that the
		// caller's keys, and the in-process path, stay on the stack.
		v, err := l.redis.decide(cctx, slices.Clone(keys), rules, commit, shape, maxCredits, states)
		cancel()
		if err == nil {
			redisSeconds.UpdateDuration(start)
			l.markUp()
			// Only rejections computed with this request's own max delays are remembered: one computed without
			// shaping (MaxHeld reached) would reject requests that could be held.
			if !v.ok && l.rejects != nil && (shape || !l.shaping) {
				l.rejects.put(ck, start, v.retry, states)
			}
			if v.credits > 0 && l.credits != nil {
				l.credits.put(ck, v.credits, start, states)
				for i := range states {
					states[i].remaining += int64(v.credits) // the client may still send them
				}
			}
			return v, false, true
		}
		l.markDown(err)
	}
	redisFallback.Inc()
	switch l.onError {
	case OnErrorAllow:
		return verdict{ok: true}, true, false
	case OnErrorDeny:
		return verdict{retry: l.backoff}, true, false
	}
	for _, r := range rules {
		ps = append(ps, r.fallback.shaped(shape))
	}
	return l.local.decide(keys, ps, commit, states), true, true
}

// shaped returns p without its max delay when shaping is off for this request.
func (p params) shaped(on bool) params {
	if !on {
		p.maxDelay = 0
	}
	return p
}
