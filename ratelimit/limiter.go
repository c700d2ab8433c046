package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/redisns"
)

// Options configure a Limiter. The configured values (ratelimit.*) come resolved from package config, which
// alone holds their defaults; New refuses an impossible one.
type Options struct {
	Policies  []Policy
	Overrides []Override

	// Redis is the shared store; nil runs the in-process limiter (one replica). The client stays the caller's,
	// to close once the Limiter is no longer used: a Limiter holds nothing else that needs releasing, so it has
	// no Close and lives as long as it is referenced.
	Redis redis.UniversalClient
	// RedisNamespace (redis.namespace) prefixes every key the limiter uses in Redis, so that deployments sharing
	// one Redis count apart; "" keeps the names "reqgate:rl:...". It must pass redisns.Check. On a Redis Cluster
	// (a *redis.ClusterClient) the namespace becomes one hash tag (redisns.On), so that a decision's script may
	// touch the keys of every matching policy.
	RedisNamespace string
	// OnRedisError is what happens while Redis fails: "local" limits each replica on its own at its share of
	// each policy (see LocalReplicas), "allow" admits everything, "deny" rejects everything.
	OnRedisError string
	// RedisTimeout bounds one script call; slower answers count as Redis errors; > 0. The client must
	// have ContextTimeoutEnabled (see RedisOptions), or go-redis ignores this deadline on the socket.
	RedisTimeout time.Duration
	// RedisBackoff is how long the limiter stays switched to the fallback before one request probes Redis
	// again, and between probes that fail; > 0.
	RedisBackoff time.Duration
	// RedisFailures is how many failures in a row switch the limiter to the fallback, counting the calls that
	// fail together in one stall of Redis as one (health.go); > 0. A failure short of it has its own request
	// decided by the fallback, and the next one goes to Redis again.
	RedisFailures int
	// LocalReplicas is the number of gateway replicas assumed to share the limits until this one has counted them
	// in Redis. With the "local" fallback, every replica announces itself in Redis each second while Redis answers
	// and counts the replicas announced in the last 5 s; while Redis is down it admits limit/count per period
	// (burst likewise, rounded up, at least 1) with the last count it saw, so that all replicas together stay
	// within the policy. At least 1.
	LocalReplicas int
	// MaxHeld bounds the requests held for a shaped slot per policy key in this process; once reached, further
	// requests over the rate are rejected instead of held; 0 holds none.
	MaxHeld int
	// RejectStatus is the HTTP status of a rejection: 429 or 503 (strict compatibility).
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
	// Logger receives the switches to and from the fallback. Nil: slog.Default().
	Logger *slog.Logger
	// Now is the limiter's clock. Nil: the monotonic clock in process, and in Redis the Redis server's clock
	// (TIME), which all replicas share. When set, the Redis script decides at the time it gives (tests set it to
	// decide at controlled times).
	Now func() time.Time
}

// Request names what a request is counted under. Empty fields do not match policies keyed on them.
type Request struct {
	APIKey string // the {key} of the URL
	User   string // the verified Basic-auth user name
	IP     string // the client IP
	// Memo, when set, keeps the rules and keys of this request for the holder's next one: the requests of a
	// keep-alive connection usually share their identity, and their keys need not be built again each time.
	Memo *Memo
	// Stripe is the caller's stripe of the striped counters (internal/striped): the gateway's connection's.
	Stripe uint32
}

// Memo is the rules that applied to the last request asked with it, and their keys, and with the in-process store
// the count of its key when it has one (so that the next request is decided without a lock: local.go). The zero
// value is ready. A Memo serves one request at a time (one per connection, say).
type Memo struct {
	l          *Limiter
	id         [3]string // the APIKey, User and IP it was made for, copied: a caller's strings may be reused buffers
	rules      []*rule
	keys       []string
	overridden bool
	local      localMemo // the in-process store's cell of the single key, when it is GCRA's
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

// Limiter admits, holds or rejects requests. It is safe for concurrent use.
type Limiter struct {
	rules     []*rule
	overrides map[string][]*rule // api_key -> rules with that key's overrides applied
	policyAll string             // RateLimit-Policy when every rule matches

	store   store     // never fails (store.go)
	present *presence // the "local" fallback's count of the replicas (nil without Redis or with another mode)
	status  int       // RejectStatus
	shaping bool      // some rule has MaxDelay > 0
	held    *holds    // requests held for their slot
	opt     Options
}

// Fallback modes.
const (
	OnErrorLocal = "local"
	OnErrorAllow = "allow"
	OnErrorDeny  = "deny"
)

// New validates opt and returns a Limiter. Errors name the policy or override at fault.
func New(opt Options) (*Limiter, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	if opt.Redis != nil {
		opt.RedisNamespace = redisns.On(opt.Redis, opt.RedisNamespace)
	}
	l := &Limiter{status: opt.RejectStatus, held: newHolds(opt.MaxHeld), opt: opt}
	if err := l.compile(opt.Policies, opt.Overrides); err != nil {
		return nil, err
	}
	if opt.Redis != nil && opt.OnRedisError == OnErrorLocal {
		l.present = startPresence(opt.Redis, opt.RedisNamespace, opt.LocalReplicas, opt.Logger)
	}
	var err error
	if l.store, err = newStore(opt, l.shaping, l.present); err != nil {
		return nil, err
	}
	return l, nil
}

// compile sets the rules of l from policies and overrides.
func (l *Limiter) compile(policies []Policy, overrides []Override) error {
	var err error
	if l.rules, l.overrides, err = compile(l.opt.RedisNamespace, policies, overrides); err != nil {
		return err
	}
	items := make([]string, len(l.rules))
	l.shaping = false
	for i, r := range l.rules {
		items[i] = r.header
		l.shaping = l.shaping || r.maxDelay > 0
	}
	l.policyAll = strings.Join(items, ", ")
	return nil
}

// WithPolicies returns a Limiter with other policies and overrides and l's other options, for a configuration
// reloaded while the process serves. It keeps what l has counted: the in-process TATs, the Redis store with
// its health and fallback, the requests held for a slot. A policy keeps its counts under its name, so a
// tightened one limits at once the callers that already used it, and no reload hands out a fresh burst.
// Only when shaping is switched on or off is the store built anew (the remembered Redis rejections depend on
// it). l stays usable: requests already inside it finish under the old policies.
func (l *Limiter) WithPolicies(policies []Policy, overrides []Override) (*Limiter, error) {
	n := &Limiter{status: l.status, held: l.held, opt: l.opt, store: l.store, present: l.present}
	n.opt.Policies, n.opt.Overrides = policies, overrides
	if err := n.compile(policies, overrides); err != nil {
		return nil, err
	}
	if n.shaping != l.shaping {
		var err error
		if n.store, err = newStore(n.opt, n.shaping, n.present); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// newStore builds the store of a Limiter: the in-process store at each policy's full rate without Redis; with
// Redis, the Redis store behind the reject cache and the credits (unless turned off), inside the fallback, whose
// local limits are shares for the replicas that replicas counts.
func newStore(opt Options, shaping bool, replicas *presence) (store, error) {
	if opt.Redis == nil {
		return newLocalStore(nil, opt.Now), nil
	}
	health := newRedisHealth(opt)
	rs, err := newRedisStore(opt, health)
	if err != nil {
		return nil, err
	}
	var shared store = rs
	if !opt.NoRejectCache {
		shared = newRejectCache(shared, shaping)
	}
	if !opt.NoCredits {
		shared = newCreditStore(shared)
	}
	redisUp().Set(1)
	return newFallback(shared, health, replicas, opt), nil
}

// check refuses the values no configuration can mean, and gives a nil Logger slog.Default().
func (o *Options) check() error {
	switch o.OnRedisError {
	case OnErrorLocal, OnErrorAllow, OnErrorDeny:
	default:
		return fmt.Errorf("on_redis_error %q: want local, allow or deny", o.OnRedisError)
	}
	switch {
	case o.RedisTimeout <= 0 || o.RedisBackoff <= 0:
		return errors.New("redis timeout and back-off must be positive")
	case o.RedisFailures < 1:
		return fmt.Errorf("redis failures %d: must be at least 1", o.RedisFailures)
	case o.MaxHeld < 0:
		return fmt.Errorf("max held %d: must not be negative", o.MaxHeld)
	case o.RejectStatus != http.StatusTooManyRequests && o.RejectStatus != http.StatusServiceUnavailable:
		return fmt.Errorf("reject_status %d: want 429 or 503", o.RejectStatus)
	case o.LocalReplicas < 1:
		return fmt.Errorf("local replicas %d: must be at least 1", o.LocalReplicas)
	}
	if err := redisns.Check(o.RedisNamespace); err != nil {
		return fmt.Errorf("redis namespace %q: %w", o.RedisNamespace, err)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// RejectStatus is the HTTP status to send with a rejection (429 or 503).
func (l *Limiter) RejectStatus() int { return l.status }

// match returns the rules that apply to r and their keys, and whether they are r.APIKey's overrides: r.Memo's
// when it was made by l for the same identity, else made in r.Memo's buffers or, without one, appended to the
// given ones. The keys are only read while the request lasts; what keeps one longer copies it.
func (l *Limiter) match(r Request, rs []*rule, keys []string) ([]*rule, []string, bool) {
	m := r.Memo
	if m == nil {
		return l.matchInto(r, rs, keys)
	}
	if id := [3]string{r.APIKey, r.User, r.IP}; m.l != l || m.id != id {
		m.rules, m.keys, m.overridden = l.matchInto(r, m.rules[:0], m.keys[:0])
		m.local = localMemo{}
		m.l, m.id = l, [3]string{strings.Clone(id[0]), strings.Clone(id[1]), strings.Clone(id[2])}
	}
	return m.rules, m.keys, m.overridden
}

// matchInto is match without a memo.
func (l *Limiter) matchInto(r Request, rs []*rule, keys []string) ([]*rule, []string, bool) {
	rules, overridden := l.rules, false
	if len(l.overrides) > 0 && r.APIKey != "" {
		if o, ok := l.overrides[r.APIKey]; ok {
			rules, overridden = o, true
		}
	}
	for _, ru := range rules {
		if k := ru.key(r); k != "" {
			rs = append(rs, ru)
			keys = append(keys, k)
		}
	}
	return rs, keys, overridden
}

// Admit decides on one request. A request over the rate whose shaped slot lies within MaxDelay is held (Admit
// sleeps) until that slot and then returned Allowed. If ctx ends while the request is held, Admit returns at once
// with Allowed false (the slot stays consumed). Admit never fails: Redis trouble follows OnRedisError.
func (l *Limiter) Admit(ctx context.Context, r Request) Decision {
	var rbuf [8]*rule
	var kbuf [8]string
	var sbuf [8]policyState
	q := query{commit: true}
	q.rules, q.keys, q.overridden = l.match(r, rbuf[:0], kbuf[:0])
	if len(q.rules) == 0 {
		return Decision{Allowed: true}
	}
	q.states = stateSlots(sbuf[:], len(q.rules))
	q.shape = l.shaping && l.held.acquire(q.rules, q.keys)
	v := l.decide(ctx, &q, r)
	if q.shape && (!v.ok || v.delay <= 0) {
		l.held.release(q.rules, q.keys)
		q.shape = false
	}
	d := Decision{Allowed: v.ok, Limited: true, RetryAfter: v.retry, Fallback: v.fallback, slot: v.slot}
	d.Policy = l.policyHeader(q.rules)
	if v.known {
		d.counts.set(q.rules, q.states)
	}
	switch {
	case !v.ok:
		decisions[decisionReject].Inc(r.Stripe)
	case v.delay > 0:
		decisions[decisionDelay].Inc(r.Stripe)
		d.Delay = v.delay
		if !l.held.wait(ctx, v.delay) {
			d.Allowed = false
			d.RetryAfter = v.delay
		}
	default:
		decisions[decisionAdmit].Inc(r.Stripe)
	}
	if q.shape {
		l.held.release(q.rules, q.keys)
	}
	return d
}

// Status reports how long until a request for r would be admitted (0: now, possibly after a shaping hold),
// without counting anything.
func (l *Limiter) Status(ctx context.Context, r Request) (retryAfter time.Duration) {
	var rbuf [8]*rule
	var kbuf [8]string
	var q query
	q.rules, q.keys, q.overridden = l.match(r, rbuf[:0], kbuf[:0])
	if len(q.rules) == 0 {
		return 0
	}
	q.shape = true
	if v := l.decide(ctx, &q, r); !v.ok {
		return v.retry
	}
	return 0
}

// decide asks the store for r, which never fails: the Redis store's errors end in the fallback around it. q lives
// on the caller's stack, which a query passed through the store interface cannot: the in-process store, when it
// is the Limiter's store, is called directly, and the chain around Redis gets a pooled copy of q.
func (l *Limiter) decide(ctx context.Context, q *query, r Request) verdict {
	var local *localMemo
	if r.Memo != nil {
		local = &r.Memo.local
	}
	if s, ok := l.store.(*localStore); ok {
		q.local = local
		return s.gcra(q)
	}
	p := q.pooled(r.APIKey, local)
	if l.opt.Now != nil {
		p.at = l.opt.Now()
	}
	v, err := l.store.decide(ctx, &p.query)
	if err != nil {
		panic(fmt.Sprintf("ratelimit: a store outside the fallback failed: %v", err))
	}
	copy(q.states, p.states)
	p.release()
	return v
}
