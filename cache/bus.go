package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/redisns"
	"github.com/reqgate/reqgate/internal/tick"
)

// Channel is the Redis pub/sub channel invalidations travel on, in the empty namespace.
const Channel = "reqgate:inval"

// ChannelIn is the channel of the Redis namespace ns (redis.namespace; see package redisns): Channel itself for
// the empty one. Pub/sub ignores database numbers, so the namespace alone keeps deployments on one Redis from
// hearing each other's invalidations and purges.
func ChannelIn(ns string) string { return redisns.Name(ns, Channel) }

// Bus carries a write's invalidation to the other gateway replicas. The local cache is invalidated by the
// caller first.
type Bus interface {
	// Publish returns once the invalidation of what w may have changed (Cache.InvalidateWrite) is on its way
	// to the other replicas (for RedisBus: Redis has acknowledged it and sent it out), so that a write's
	// response, sent after it, cannot overtake it; or once that has failed, which the bus itself logs and
	// counts.
	Publish(w Write)
	// Purge asks every other replica to drop the account's cached reads and everything it remembers of the
	// account (the handler given to SetPurgeHandler), as Publish does for an invalidation.
	Purge(account string)
	Close() error
}

// LocalBus is the bus of a single replica: there is nobody to tell.
type LocalBus struct{}

// Publish does nothing: the caller has already invalidated the only cache.
func (LocalBus) Publish(Write) {}

// Purge does nothing: the caller has already purged the only replica.
func (LocalBus) Purge(string) {}

// Close does nothing.
func (LocalBus) Close() error { return nil }

// DefaultPublishTimeout is RedisBus.PublishTimeout unless set.
const DefaultPublishTimeout = 500 * time.Millisecond

// probeInterval is how long the subscription may be silent before the bus sends a PING on it, and how long
// the PONG may then take before the bus takes the connection for dead and subscribes on a new one.
const probeInterval = time.Second

// RedisBus publishes invalidations on its namespace's channel (ChannelIn) and applies the ones other replicas
// publish.
//
// Publish returns when Redis has acknowledged the PUBLISH (Redis answers once it has queued the message to
// every subscriber) and, while the bus is up, the message has come back on this replica's own subscription:
// Redis writes a message to all its subscribers in one pass, so by then it has left for the other replicas
// too, not merely been queued. Each replica reads its subscription on one goroutine that applies the
// invalidation as soon as the message is parsed, with no hand-off to another goroutine. So a caller who writes
// through one replica and then reads through another finds the invalidation applied there, unless that
// replica has fallen behind its own socket. A message is "<origin>:<sequence>:<kind>/<id> <account>" for a
// write of a record ("<kind>/" for a create; kind and id path-escaped), "<origin>:<sequence> <account>" for
// the whole account: the origin tells a replica its own messages, the sequence which Publish is waiting for
// one. A replica that knows only the second form reads the first as it (the scope falls in the sequence,
// which only the origin's own replica reads), so it invalidates the whole account: safe during a rolling
// upgrade.
//
// The bus is down while this replica may miss invalidations: from any failed exchange with Redis (a PUBLISH,
// the periodic PING, the subscription's connection, a PING on it left unanswered) until the subscription
// proves itself again, by Redis confirming the SUBSCRIBE of a new connection or answering a PING sent on it
// after the failure. While it is down the cache serves entries only up to its BusDownTTL (SetBusUp), and
// every new subscription invalidates the whole local cache (messages may have been published while there
// was none). The bus logs each change once, counts failures in reqgate_cache_bus_errors_total and shows its
// state in reqgate_cache_bus_up. It starts down and comes up when its first subscription is confirmed.
type RedisBus struct {
	rdb     redis.UniversalClient
	channel string // ChannelIn(the namespace), on Redis Cluster in the namespace's hash tag (redisns.On)
	sharded bool   // Redis Cluster: sharded pub/sub (SPUBLISH, SSUBSCRIBE), see subscribe
	cache   *Cache
	log     *slog.Logger
	origin  string
	ctx     context.Context // ends with Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closed  atomic.Bool

	subMu sync.Mutex // guards sub, which receive replaces when its connection stalls
	sub   *redis.PubSub

	up        atomic.Bool
	stateMu   sync.Mutex // orders failures against the PONGs that would end them
	failures  uint64     // failed exchanges so far; a PONG proves the bus only if none came after its PING
	downSince time.Time  // when the bus last went down

	missedMu       sync.Mutex
	missedAccounts map[string]struct{} // accounts whose invalidation could not be published (flushMissed)

	seq    atomic.Uint64
	echoMu sync.Mutex
	echoes map[uint64]*waiter // Publish calls waiting for their message and its acknowledgements, by sequence

	lease      atomic.Int64        // the lease, in ns (SetLease)
	leasesLost atomic.Uint64       // evictions of this replica read (lease.go)
	members    map[string]struct{} // the replicas that joined, by origin, as the channel's order tells; receive's own
	acks       chan ack            // acknowledgements for acker to publish

	publishTO atomic.Int64                         // SetPublishTimeout
	viewFrom  atomic.Int64                         // from when (ns after leaseBase) the members known make a complete view (lease.go)
	onPurge   atomic.Pointer[func(account string)] // what a purge from another replica runs beside the invalidation
}

// NewRedisBus subscribes to the channel of the namespace ns (ChannelIn; a namespace redisns.Check accepts) and
// starts the receiver. It does not fail when Redis is down at start: the subscription connects when Redis comes
// up, and until then the bus is down.
func NewRedisBus(rdb redis.UniversalClient, ns string, c *Cache, logger *slog.Logger) *RedisBus {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &RedisBus{
		rdb: rdb, channel: ChannelIn(redisns.On(rdb, ns)), sharded: redisns.IsCluster(rdb), cache: c, log: logger,
		origin: newOrigin(), ctx: ctx, cancel: cancel, echoes: make(map[uint64]*waiter),
		members: make(map[string]struct{}), acks: make(chan ack, ackQueue),
	}
	b.lease.Store(int64(DefaultLease))
	c.SetBusUp(false)
	c.RequireLease()
	busUp.Set(0)
	b.sub = b.subscribe()
	b.wg.Add(3)
	go b.receive(b.sub)
	go b.watch()
	go b.acker()
	return b
}

// Publish sends the invalidation of w to the other replicas and returns when Redis has acknowledged it and,
// while the bus is up, it has come back on this replica's subscription; or after PublishTimeout. A failure of
// either marks the bus down; the write it follows has happened all the same, so the caller answers it either
// way. While the bus is down only the acknowledgement is awaited: the subscription may not deliver.
func (b *RedisBus) Publish(w Write) { b.send(writeScope(w), w.Account, w.Account) }

// writeScope is the scope part of the message of w, "" for the whole account.
func writeScope(w Write) string {
	if w.Kind == "" {
		return ""
	}
	return url.PathEscape(w.Kind) + "/" + url.PathEscape(w.ID)
}

// parseWrite reads the scope part of a message back into the write of account it names; ok is false when
// it names none, and the whole account is then invalidated.
func parseWrite(account, scope string) (w Write, ok bool) {
	k, id, found := strings.Cut(scope, "/")
	if !found {
		return Write{}, false
	}
	kind, err := url.PathUnescape(k)
	if err != nil || kind == "" {
		return Write{}, false
	}
	if id, err = url.PathUnescape(id); err != nil {
		return Write{}, false
	}
	return Write{Account: account, Kind: kind, ID: id}, true
}

// purgePrefix marks a purge on the channel: "origin:seq purge <account>". A replica that does not know purges
// reads it as the invalidation of an account named "purge <account>", which no account is (keys have no
// spaces): harmless during a rolling upgrade.
const purgePrefix = "purge "

// Purge sends the account's purge to the other replicas, waiting like Publish.
func (b *RedisBus) Purge(account string) { b.send("", purgePrefix+account, account) }

// busMessage is the payload on the channel of message (an account, or purgePrefix and one) with scope (see
// writeScope) sent by origin as its sequence number seq: the format apply reads.
func busMessage(origin string, seq uint64, scope, message string) string {
	payload := origin + ":" + strconv.FormatUint(seq, 10)
	if scope != "" {
		payload += ":" + scope
	}
	return payload + " " + message
}

// newOrigin is a random name for a process on the bus, so that a replica tells its own messages.
func newOrigin() string {
	var id [8]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// SetPurgeHandler sets what a purge published by another replica runs (besides the cache's invalidation of
// the account).
func (b *RedisBus) SetPurgeHandler(f func(account string)) { b.onPurge.Store(&f) }

// send publishes message (an account, or a purge of one) with scope (see writeScope) and waits as Publish
// says: for the message to come back on this replica's subscription, then for every member replica to
// acknowledge it, or until the lease of those that did not has surely run out (see lease.go).
func (b *RedisBus) send(scope, message, account string) {
	if b.closed.Load() {
		return
	}
	timeout := b.publishTimeout()
	seq := b.seq.Add(1)
	w := b.await(seq)
	defer b.forget(seq)
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	err := publish(ctx, b.rdb, b.sharded, b.channel, busMessage(b.origin, seq, scope, message)).Err()
	// Redis has taken the message, or failed, by now: a replica that has not applied it holds at most a lease
	// from a PING that Redis answered before, which ends within one lease from now.
	sent := time.Now()
	if err != nil {
		if b.closed.Load() {
			return
		}
		b.fail(fmt.Errorf("publish the invalidation of account %q: %w", account, err))
		b.missed(account)
		b.sleepUntil(b.outageLeaseEnd())
		return
	}
	deadline := sent.Add(b.leaseWait())
	select {
	case <-w.echoed:
	case <-ctx.Done():
		if !b.closed.Load() {
			b.fail(fmt.Errorf("the invalidation of account %q did not come back on the subscription within %s",
				account, timeout))
		}
		b.sleepUntil(deadline)
		return
	}
	done := w.done
	if !b.viewComplete() {
		done = nil // members may have joined unheard: wait for every lease
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	case <-b.ctx.Done():
		return
	}
	for _, origin := range w.missing() {
		b.evict(origin)
	}
}

// Up reports whether the bus hears the other replicas: no exchange with Redis has failed since the
// subscription last proved itself.
func (b *RedisBus) Up() bool { return b.up.Load() }

// Close stops the bus.
func (b *RedisBus) Close() error {
	if b.closed.Load() {
		return nil
	}
	if b.up.Load() {
		// Writers stop waiting for this replica at once instead of after a lease.
		b.control(memberPrefix + "bye")
	}
	if b.closed.Swap(true) {
		return nil
	}
	b.cancel()
	b.subMu.Lock()
	err := b.sub.Close() // ends a receive in progress
	b.subMu.Unlock()
	b.wg.Wait()
	if err != nil {
		return fmt.Errorf("cache: close subscription: %w", err)
	}
	return nil
}

// receive reads the subscription and applies each message on this goroutine, without a hand-off: the
// sooner an invalidation is applied, the smaller the window in which a read that follows the write may
// still find the old entry. It also probes the connection when it is silent, since a stalled Redis or a
// half-open connection would otherwise look like a quiet channel.
func (b *RedisBus) receive(sub *redis.PubSub) {
	defer b.wg.Done()
	r := receiver{bus: b, sub: sub, lastPing: time.Now()}
	for {
		msg, err := r.sub.ReceiveTimeout(b.ctx, r.wait())
		if b.ctx.Err() != nil {
			return
		}
		if err != nil && !isTimeout(err) {
			if !r.connectionFailed(err) {
				return
			}
			continue
		}
		if err == nil {
			r.backoff = 0
		}
		r.handle(msg)
		r.probe(time.Now())
	}
}

// receiver is the state of receive: the subscription, the PING outstanding on it, this replica's membership.
type receiver struct {
	bus        *RedisBus
	sub        *redis.PubSub
	subscribed int           // subscriptions confirmed so far
	lastPing   time.Time     // when the last PING was sent (or the subscription made)
	pinged     time.Time     // when the outstanding PING was sent; zero if none is
	pingedAt   uint64        // bus.failures when it was sent
	backoff    time.Duration // the wait after the connection failed

	joined   bool      // this replica's hello came back and no eviction of it since: it may hold a lease
	helloSeq uint64    // the sequence of the hello awaited; 0 if none is
	helloAt  time.Time // when it was sent
	hereAt   time.Time // when this replica last said it is a member (hello or here)
}

// wait is how long the next receive may wait for a message before the subscription is probed, or the
// outstanding PING is taken as unanswered.
func (r *receiver) wait() time.Duration {
	next := r.lastPing.Add(r.bus.pingEvery())
	if !r.pinged.IsZero() {
		next = r.pinged.Add(probeInterval)
	}
	return max(time.Until(next), time.Millisecond)
}

// connectionFailed records the failure of the subscription's connection and waits, longer after each
// failure in a row, before the next receive dials anew and subscribes again (as go-redis does). It
// reports false when the bus closes meanwhile.
func (r *receiver) connectionFailed(err error) bool {
	r.bus.fail(fmt.Errorf("receive invalidations: %w", err))
	r.bus.reloadSlots()
	r.pinged = time.Time{}
	r.backoff = min(max(2*r.backoff, 100*time.Millisecond), probeInterval)
	select {
	case <-r.bus.ctx.Done():
		return false
	case <-time.After(r.backoff):
		return true
	}
}

// handle applies a message of the subscription: an invalidation, a change of membership, an
// acknowledgement, the confirmation of a new subscription, or the answer to a PING.
func (r *receiver) handle(msg any) {
	switch m := msg.(type) {
	case *redis.Message:
		switch {
		case m.Channel != r.bus.channel:
			r.bus.acknowledged(m.Payload)
		case !r.membership(m.Payload):
			r.bus.apply(m.Payload)
		}
	case *redis.Subscription:
		switch {
		case m.Channel != r.bus.channel:
		case m.Kind == "subscribe" || m.Kind == "ssubscribe":
			r.subscriptionConfirmed()
		case m.Kind == "sunsubscribe":
			// Redis Cluster ends a sharded subscription when its slot moves to another node (a failover,
			// a resharding): the connection still answers PINGs, but no message comes on it any more.
			r.bus.fail(errors.New("receive invalidations: the cluster moved the channel's slot"))
			r.sub = r.bus.resubscribe()
			r.pinged, r.lastPing = time.Time{}, time.Now()
		}
	case *redis.Pong:
		if !r.pinged.IsZero() {
			r.pong()
			r.pinged = time.Time{}
		}
	}
}

// subscriptionConfirmed handles Redis's confirmation of a subscription.
func (r *receiver) subscriptionConfirmed() {
	// Whatever was published before this connection subscribed is lost to it.
	r.bus.cache.InvalidateAll()
	r.subscribed++
	if r.subscribed > 1 {
		r.bus.log.Warn("cache invalidation subscription restored; local cache invalidated")
	}
	r.bus.confirmed()
	r.bus.startView()
	r.leave()
	r.hello()
}

// probe replaces the subscription when its PING went unanswered for probeInterval, and sends a PING every
// pingEvery, or at once while the bus is down: its PONG renews the lease and proves the bus up.
func (r *receiver) probe(now time.Time) {
	switch {
	case !r.pinged.IsZero() && now.Sub(r.pinged) >= probeInterval:
		r.bus.fail(errors.New("receive invalidations: no answer to a PING on the subscription"))
		r.sub = r.bus.resubscribe()
		r.pinged, r.lastPing = time.Time{}, now
	case r.pinged.IsZero() && (now.Sub(r.lastPing) >= r.bus.pingEvery() || !r.bus.up.Load()):
		// A PONG comes after every message Redis sent before it: once it arrives, nothing was missed
		// since the PING, and the bus is up again (if nothing failed meanwhile).
		r.here(now)
		r.pingedAt = r.bus.failureCount()
		r.lastPing = now
		if err := r.sub.Ping(r.bus.ctx); err != nil {
			if r.bus.ctx.Err() == nil {
				r.bus.fail(fmt.Errorf("ping the subscription: %w", err))
			}
			return
		}
		r.pinged = now
	}
	if !r.joined && (r.helloSeq == 0 || now.Sub(r.helloAt) >= probeInterval) && r.bus.up.Load() {
		r.hello()
	}
}

// apply applies the invalidation of a message published by another replica, and hands a message of this
// replica's own to the Publish waiting for it.
func (b *RedisBus) apply(payload string) {
	from, account, ok := strings.Cut(payload, " ")
	if !ok || account == "" {
		return
	}
	origin, rest, _ := strings.Cut(from, ":")
	seq, scope, scoped := strings.Cut(rest, ":")
	if origin != b.origin {
		if purged, ok := strings.CutPrefix(account, purgePrefix); ok {
			b.cache.Invalidate(purged)
			if f := b.onPurge.Load(); f != nil {
				(*f)(purged)
			}
		} else if w, ok := parseWrite(account, scope); scoped && ok {
			b.cache.InvalidateWrite(w)
		} else {
			b.cache.Invalidate(account)
		}
		busReceivedTotal.Inc()
		b.acknowledge(origin, seq)
		return
	}
	n, err := strconv.ParseUint(seq, 10, 64)
	if err != nil {
		return
	}
	b.echoMu.Lock()
	w := b.echoes[n]
	b.echoMu.Unlock()
	if w != nil {
		w.echo(b.memberList())
	}
}

// resubscribe replaces a subscription whose connection stopped answering. The new one's confirmation
// invalidates the cache and brings the bus up.
func (b *RedisBus) resubscribe() *redis.PubSub {
	b.subMu.Lock()
	defer b.subMu.Unlock()
	if b.closed.Load() {
		return b.sub
	}
	_ = b.sub.Close()
	b.reloadSlots()
	b.sub = b.subscribe()
	return b.sub
}

// subscribe subscribes one connection to the bus's channel and this replica's acknowledgement channel.
//
// On Redis Cluster the bus uses sharded pub/sub. A classic PUBLISH may go to any node (go-redis sends it to
// one at random), which delivers it to its own subscribers at once and to the other nodes' over the cluster
// bus later: two replicas on different nodes could then see two writers' messages in different orders, and a
// PONG on a subscriber's node could come before a message another node took earlier, which breaks both the
// membership order and the lease (lease.go). SPUBLISH and SSUBSCRIBE go to the master of the channel's hash
// slot, and every channel of the bus shares one hash tag (redisns.Clustered), so one master orders every
// message of the bus and answers every subscriber's PING, as a single Redis does.
func (b *RedisBus) subscribe() *redis.PubSub {
	if b.sharded {
		return b.rdb.SSubscribe(b.ctx, b.channel, b.ackChannel())
	}
	return b.rdb.Subscribe(b.ctx, b.channel, b.ackChannel())
}

// reloadSlots has a Redis Cluster client learn the slots' masters again, after the subscription failed: the
// master of the channel's slot may have died and a replica taken over, and the subscription reconnects to the
// master the client knows (go-redis reloads the map on failed commands, but a quiet bus sends none).
func (b *RedisBus) reloadSlots() {
	if c, ok := b.rdb.(*redis.ClusterClient); ok {
		c.ReloadState(b.ctx)
	}
}

// publish sends message on channel: PUBLISH, or SPUBLISH on Redis Cluster (see RedisBus.subscribe).
func publish(ctx context.Context, c redis.Cmdable, sharded bool, channel, message string) *redis.IntCmd {
	if sharded {
		return c.SPublish(ctx, channel, message)
	}
	return c.Publish(ctx, channel, message)
}

// watch pings Redis every second so an outage shows in logs and metrics, and bounds the cache's freshness,
// even when nothing is written. A success proves nothing about the subscription, so only receive brings
// the bus up.
func (b *RedisBus) watch() {
	defer b.wg.Done()
	tick.Every(b.ctx.Done(), time.Second, func() {
		pctx, cancel := context.WithTimeout(b.ctx, 500*time.Millisecond)
		err := b.rdb.Ping(pctx).Err()
		cancel()
		if err != nil && b.ctx.Err() == nil { // a ping cut short by the bus's closing is no failure
			b.fail(fmt.Errorf("ping redis: %w", err))
		}
	})
}

// fail records a failed exchange with Redis and takes the bus down.
func (b *RedisBus) fail(err error) {
	busErrorsTotal.Inc()
	b.stateMu.Lock()
	b.failures++
	was := b.setUp(false)
	if was {
		b.downSince = time.Now()
	}
	b.stateMu.Unlock()
	if was {
		b.log.Warn("redis unreachable: cache invalidations may be missed; cached reads are served only while "+
			"younger than the bus-down TTL", "ttl", b.cache.opt.BusDownTTL.String(), "err", err)
	}
}

func (b *RedisBus) failureCount() uint64 {
	b.stateMu.Lock()
	defer b.stateMu.Unlock()
	return b.failures
}

// answered brings the bus up on the PONG of a PING sent when failures was at, unless something has failed
// since, and reports whether it did.
func (b *RedisBus) answered(at uint64) bool {
	b.stateMu.Lock()
	if b.failures != at {
		b.stateMu.Unlock()
		return false
	}
	was := b.setUp(true)
	b.stateMu.Unlock()
	if !was {
		b.log.Info("redis reachable again: cache invalidations are shared")
	}
	return true
}

// confirmed brings the bus up on a new subscription: it hears everything from now on, and the cache it
// fills has just been invalidated.
func (b *RedisBus) confirmed() {
	b.stateMu.Lock()
	was := b.setUp(true)
	b.stateMu.Unlock()
	if !was && b.failureCount() > 0 {
		b.log.Info("redis reachable again: cache invalidations are shared")
	}
}

// setUp changes the bus's state (stateMu held) and reports the one before.
func (b *RedisBus) setUp(up bool) (was bool) {
	was = b.up.Swap(up)
	b.cache.SetBusUp(up)
	if up {
		busUp.Set(1)
	} else {
		busUp.Set(0)
	}
	return was
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
