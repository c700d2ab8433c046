package cache

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Read-your-writes across replicas.
//
// A write answered by one replica must be visible at once through every other: no replica may serve a cached
// read the write made old after the writer has answered it. The bus gets there with acknowledgements and
// leases, in the order of the channel, which Redis delivers to every subscriber alike:
//
//   - Membership. A replica joins by publishing a hello once its subscription is confirmed; it leaves with a
//     bye when it closes, or is evicted by a writer it kept waiting. Every replica applies these in channel
//     order, so when a writer's own message comes back to it, it knows exactly the replicas that joined
//     before that message: the ones that must have it.
//   - Acknowledgements. A replica acknowledges each write message of another once it has applied it, on the
//     writer's own acknowledgement channel. The writer answers its caller when every member has
//     acknowledged: one more round trip through Redis.
//   - Leases. A replica serves hits only under a lease (Cache.RequireLease): a PING sent on its subscription
//     at time p, whose PONG came back (after every message Redis sent before it), lets it serve hits until
//     p + lease, and only while it is a member. So a replica that has not applied a message holds at most
//     a lease from a PING Redis answered before the message, which runs out within one lease of the moment
//     Redis took the message. A writer that misses a member's acknowledgement waits that long instead, then
//     evicts the member, so later writes do not wait for it; the evicted replica, once it reads its eviction
//     (after every message before it), ends its lease and joins again.
//
// A paused or overloaded replica thus costs one write one lease of waiting and stops serving hits until it
// has caught up; a healthy one costs each write one acknowledgement. While Redis is unreachable no replica
// can renew its lease, so none serves hits; a writer that cannot publish waits until every lease taken
// before the outage has run out, and publishes the accounts it could not once the bus is back.

// DefaultLease is the lease of a RedisBus unless SetLease changes it.
const DefaultLease = time.Second

// ackQueue bounds the acknowledgements waiting to be published; one that does not fit is dropped, which costs
// its writer one lease of waiting, never a stale read.
const ackQueue = 4096

// maxMissed bounds the accounts remembered for publishing once the bus is back.
const maxMissed = 4096

// memberPrefix marks a membership message: "origin:seq member hello|here|bye|evict <origin>". A replica that does
// not know membership reads it as the invalidation of an account whose name has a space, which no account has.
const memberPrefix = "member "

// SetLease sets the lease (default DefaultLease): how long a PING's answer lets this replica serve hits, and
// how long a write waits at most for a member that does not acknowledge it. Replicas on one bus must use the
// same lease.
func (b *RedisBus) SetLease(d time.Duration) {
	if d > 0 {
		b.lease.Store(int64(d))
	}
}

// Serving reports whether this replica's cache may serve hits now: it is a member of the bus and its lease
// runs.
func (b *RedisBus) Serving() bool { return b.cache.leaseHeld() }

func (b *RedisBus) leaseDuration() time.Duration { return time.Duration(b.lease.Load()) }

// leaseWait is how long after Redis took a message every lease taken before it has run out, with a margin for
// clocks of different machines running at slightly different rates.
func (b *RedisBus) leaseWait() time.Duration {
	l := b.leaseDuration()
	return l + l/50 + 5*time.Millisecond
}

// pingEvery is how often the subscription is probed, so that the lease is renewed well before it runs out.
func (b *RedisBus) pingEvery() time.Duration { return min(b.leaseDuration()/4, probeInterval) }

// ackChannel is the channel this replica's acknowledgements come on.
func (b *RedisBus) ackChannel() string { return b.ackChannelOf(b.origin) }

// ackChannelOf is the acknowledgement channel of the replica origin, in this bus's namespace.
func (b *RedisBus) ackChannelOf(origin string) string { return b.channel + ":ack:" + origin }

// waiter is a Publish waiting for its message to come back and for the members' acknowledgements.
type waiter struct {
	echoed, done chan struct{}
	mu           sync.Mutex
	need         map[string]bool // the members yet to acknowledge, set when the message comes back
	early        map[string]bool // acknowledgements read before that
}

func (b *RedisBus) await(seq uint64) *waiter {
	w := &waiter{echoed: make(chan struct{}), done: make(chan struct{})}
	b.echoMu.Lock()
	b.echoes[seq] = w
	b.echoMu.Unlock()
	return w
}

func (b *RedisBus) forget(seq uint64) {
	b.echoMu.Lock()
	delete(b.echoes, seq)
	b.echoMu.Unlock()
}

func (b *RedisBus) waiting(seq string) *waiter {
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return nil
	}
	b.echoMu.Lock()
	defer b.echoMu.Unlock()
	return b.echoes[n]
}

// echo records that the message came back, when members were the other replicas that had joined.
func (w *waiter) echo(members []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.need != nil {
		return
	}
	w.need = make(map[string]bool, len(members))
	for _, m := range members {
		if !w.early[m] {
			w.need[m] = true
		}
	}
	close(w.echoed)
	if len(w.need) == 0 {
		close(w.done)
	}
}

func (w *waiter) ack(from string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.need == nil {
		if w.early == nil {
			w.early = make(map[string]bool)
		}
		w.early[from] = true
		return
	}
	if w.need[from] {
		delete(w.need, from)
		if len(w.need) == 0 {
			close(w.done)
		}
	}
}

// missing lists the members that have not acknowledged.
func (w *waiter) missing() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.need))
	for m := range w.need {
		out = append(out, m)
	}
	return out
}

// memberList is the other replicas that have joined; receive's goroutine only.
func (b *RedisBus) memberList() []string {
	out := make([]string, 0, len(b.members))
	for m := range b.members {
		if m != b.origin {
			out = append(out, m)
		}
	}
	return out
}

// ack is an acknowledgement to publish: message seq of origin has been applied.
type ack struct{ to, seq string }

// acknowledge queues the acknowledgement of message seq of origin, which has been applied.
func (b *RedisBus) acknowledge(origin, seq string) {
	select {
	case b.acks <- ack{to: origin, seq: seq}:
	default:
	}
}

// acknowledged reads an acknowledgement on this replica's channel: "<origin> <seq>".
func (b *RedisBus) acknowledged(payload string) {
	from, seq, ok := strings.Cut(payload, " ")
	if !ok {
		return
	}
	if w := b.waiting(seq); w != nil {
		w.ack(from)
	}
}

// acker publishes the queued acknowledgements, those queued together in one pipeline, off receive's goroutine
// so that applying the next message never waits for Redis.
func (b *RedisBus) acker() {
	defer b.wg.Done()
	batch := make([]ack, 0, 64)
	for {
		select {
		case <-b.ctx.Done():
			return
		case a := <-b.acks:
			batch = append(batch[:0], a)
		more:
			for len(batch) < cap(batch) {
				select {
				case a := <-b.acks:
					batch = append(batch, a)
				default:
					break more
				}
			}
			ctx, cancel := context.WithTimeout(b.ctx, b.publishTimeout())
			_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, a := range batch {
					publish(ctx, p, b.sharded, b.ackChannelOf(a.to), b.origin+" "+a.seq)
				}
				return nil
			})
			cancel()
			if err != nil && b.ctx.Err() == nil {
				b.fail(fmt.Errorf("acknowledge invalidations: %w", err))
			}
		}
	}
}

// SetPublishTimeout bounds one Publish's exchange with Redis (the PUBLISH and the wait for its message to come
// back), and so how much longer a write's response may take while Redis does not answer, besides the lease.
// Default DefaultPublishTimeout.
func (b *RedisBus) SetPublishTimeout(d time.Duration) { b.publishTO.Store(int64(d)) }

func (b *RedisBus) publishTimeout() time.Duration {
	if d := time.Duration(b.publishTO.Load()); d > 0 {
		return d
	}
	return DefaultPublishTimeout
}

// hereEvery is how often a member says it is still there.
func (b *RedisBus) hereEvery() time.Duration { return b.leaseDuration() / 2 }

// viewComplete reports whether every replica that may hold a lease is among the members this replica knows:
// it has been subscribed long enough to have heard each live member say it is there (a member says so at
// least every hereEvery, and before each PING its lease comes from), so a write may stop waiting once they
// have all acknowledged. Until then a write waits out every lease.
func (b *RedisBus) viewComplete() bool {
	return int64(time.Since(leaseBase)) >= b.viewFrom.Load()
}

// startView records a new subscription: the members it will hear make a complete view after a while.
func (b *RedisBus) startView() {
	b.viewFrom.Store(int64(time.Since(leaseBase) + b.hereEvery() + b.leaseWait()))
}

// evict tells every replica that origin kept a write waiting past the lease: it is no member until it joins
// again, so later writes do not wait for it.
func (b *RedisBus) evict(origin string) {
	busEvictionsTotal.Inc()
	b.log.Warn("a cache replica did not acknowledge an invalidation within the lease: it serves no cached "+
		"reads until it has caught up", "replica", origin, "lease", b.leaseDuration().String())
	b.control(memberPrefix + "evict " + origin)
}

// control publishes a membership message and returns its sequence, 0 when it failed.
func (b *RedisBus) control(message string) uint64 {
	seq := b.seq.Add(1)
	ctx, cancel := context.WithTimeout(b.ctx, b.publishTimeout())
	defer cancel()
	if err := publish(ctx, b.rdb, b.sharded, b.channel, busMessage(b.origin, seq, "", message)).Err(); err != nil {
		if b.ctx.Err() == nil {
			b.fail(fmt.Errorf("publish %q: %w", message, err))
		}
		return 0
	}
	return seq
}

// membership applies a membership message, in channel order, and reports whether payload was one.
func (r *receiver) membership(payload string) bool {
	from, message, _ := strings.Cut(payload, " ")
	what, ok := strings.CutPrefix(message, memberPrefix)
	if !ok {
		return false
	}
	origin, seq, _ := strings.Cut(from, ":")
	b := r.bus
	switch verb, target, _ := strings.Cut(what, " "); verb {
	case "hello", "here":
		b.members[origin] = struct{}{}
		if origin == b.origin && r.helloSeq != 0 && seq == strconv.FormatUint(r.helloSeq, 10) {
			r.joined, r.helloSeq = true, 0
			r.lastPing = time.Time{} // the lease comes with the next PONG: ask for it now
		}
	case "bye":
		delete(b.members, origin)
	case "evict":
		delete(b.members, target)
		if target == b.origin {
			r.leave()
			r.hello()
		}
	}
	return true
}

// hello publishes this replica's joining; it is a member once the message comes back.
func (r *receiver) hello() {
	r.helloAt, r.hereAt = time.Now(), time.Now()
	r.helloSeq = r.bus.control(memberPrefix + "hello")
}

// here says that this member is still there, every hereEvery and always before the PING that renews its
// lease, so that any replica subscribed since before then counts it among the members; it is published
// before the PING is sent, so it comes before the PING's answer in every replica's order.
func (r *receiver) here(now time.Time) {
	if r.joined && now.Sub(r.hereAt) >= r.bus.hereEvery() {
		r.hereAt = now
		r.bus.control(memberPrefix + "here")
	}
}

// leave ends this replica's membership and lease: it serves no hits until it has joined again.
func (r *receiver) leave() {
	if r.joined {
		busLeaseLostTotal.Inc()
		r.bus.leasesLost.Add(1)
	}
	r.joined, r.helloSeq = false, 0
	r.bus.cache.SetLease(time.Time{})
}

// pong handles the answer to the PING sent at r.pinged: nothing was missed before it, so the bus is up (if
// nothing failed since) and, for a member, the lease runs until one lease after the PING.
func (r *receiver) pong() {
	if !r.bus.answered(r.pingedAt) {
		return
	}
	if r.joined {
		r.bus.cache.SetLease(r.pinged.Add(r.bus.leaseDuration()))
	}
	r.bus.flushMissed()
}

// sleepUntil waits until t or until the bus closes.
func (b *RedisBus) sleepUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-b.ctx.Done():
	}
}

// outageLeaseEnd is when every lease taken before the bus went down has run out: a replica that can still
// reach Redis has heard nothing this one failed to publish, but one cut off with it serves no hits after that.
func (b *RedisBus) outageLeaseEnd() time.Time {
	b.stateMu.Lock()
	since := b.downSince
	b.stateMu.Unlock()
	return since.Add(b.leaseWait())
}

// missed remembers an account whose invalidation could not be published, to publish it once the bus is back.
func (b *RedisBus) missed(account string) {
	b.missedMu.Lock()
	defer b.missedMu.Unlock()
	if b.missedAccounts == nil {
		b.missedAccounts = make(map[string]struct{})
	}
	if len(b.missedAccounts) < maxMissed {
		b.missedAccounts[account] = struct{}{}
	}
}

// flushMissed publishes the invalidation of every account whose own could not be published.
func (b *RedisBus) flushMissed() {
	b.missedMu.Lock()
	accounts := b.missedAccounts
	b.missedAccounts = nil
	b.missedMu.Unlock()
	if len(accounts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, b.publishTimeout())
	defer cancel()
	_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for a := range accounts {
			publish(ctx, p, b.sharded, b.channel, busMessage(b.origin, b.seq.Add(1), "", a))
		}
		return nil
	})
	if err != nil {
		for a := range accounts {
			b.missed(a)
		}
		if b.ctx.Err() == nil {
			b.fail(fmt.Errorf("publish the invalidations missed while Redis was unreachable: %w", err))
		}
	}
}
