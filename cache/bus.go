package cache

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Channel is the Redis pub/sub channel invalidations travel on.
const Channel = "reqgate:inval"

// Bus carries an account's invalidation to the other gateway replicas. The local cache is invalidated by the
// caller first; Publish never blocks the request path.
type Bus interface {
	Publish(account string)
	Close() error
}

// LocalBus is the bus of a single replica: there is nobody to tell.
type LocalBus struct{}

// Publish does nothing: the caller has already invalidated the only cache.
func (LocalBus) Publish(string) {}

// Close does nothing.
func (LocalBus) Close() error { return nil }

// RedisBus publishes invalidations on Channel and applies the ones other replicas publish. When Redis is
// unreachable, replicas keep serving and entries fall back to their TTL; the bus logs the outage once, counts
// reqgate_cache_bus_errors_total, sets reqgate_cache_bus_up to 0, and invalidates the whole local cache when
// its subscription comes back (messages of the outage may have been missed).
type RedisBus struct {
	rdb    *redis.Client
	cache  *Cache
	log    *slog.Logger
	origin string
	queue  chan string
	sub    *redis.PubSub
	cancel context.CancelFunc
	wg     sync.WaitGroup
	up     atomic.Bool
	closed atomic.Bool

	// PublishTimeout bounds one PUBLISH; set before the first Publish. Default 500ms.
	PublishTimeout time.Duration
}

// NewRedisBus subscribes to Channel and starts the publisher. It does not fail when Redis is down at start:
// the subscription connects when Redis comes up.
func NewRedisBus(rdb *redis.Client, c *Cache, logger *slog.Logger) *RedisBus {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	ctx, cancel := context.WithCancel(context.Background())
	b := &RedisBus{
		rdb: rdb, cache: c, log: logger, origin: hex.EncodeToString(id[:]),
		queue: make(chan string, 4096), cancel: cancel, PublishTimeout: 500 * time.Millisecond,
	}
	b.up.Store(true)
	busUp.Set(1)
	b.sub = rdb.Subscribe(ctx, Channel)
	ch := b.sub.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(time.Second),
		redis.WithChannelSize(1024))
	b.wg.Add(3)
	go b.receive(ch)
	go b.publish(ctx)
	go b.watch(ctx)
	return b
}

// Publish queues the account's invalidation for the other replicas.
func (b *RedisBus) Publish(account string) {
	if b.closed.Load() {
		return
	}
	select {
	case b.queue <- account:
	default:
		// The queue is full only while Redis is far behind; the TTL bounds what the others may miss.
		busErrorsTotal.Inc()
		b.log.Warn("cache invalidation queue full; other replicas fall back to the cache TTL", "account", account)
	}
}

// Up reports whether the last exchange with Redis worked.
func (b *RedisBus) Up() bool { return b.up.Load() }

// Close stops the bus.
func (b *RedisBus) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.cancel()
	err := b.sub.Close()
	b.wg.Wait()
	return err
}

func (b *RedisBus) receive(ch <-chan any) {
	defer b.wg.Done()
	subscribed := 0
	for m := range ch {
		switch m := m.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			subscribed++
			if subscribed > 1 {
				// A re-subscription after a broken connection: what was published meanwhile is lost.
				b.cache.InvalidateAll()
				b.log.Warn("cache invalidation subscription restored; local cache invalidated")
			}
			b.setUp(true, nil)
		case *redis.Message:
			origin, account, ok := strings.Cut(m.Payload, " ")
			if !ok || origin == b.origin || account == "" {
				continue
			}
			busReceivedTotal.Inc()
			b.cache.Invalidate(account)
		}
	}
}

func (b *RedisBus) publish(ctx context.Context) {
	defer b.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case account := <-b.queue:
			pctx, cancel := context.WithTimeout(ctx, b.PublishTimeout)
			err := b.rdb.Publish(pctx, Channel, b.origin+" "+account).Err()
			cancel()
			if err != nil && !errors.Is(err, context.Canceled) {
				busErrorsTotal.Inc()
				b.setUp(false, err)
				continue
			}
			b.setUp(true, nil)
		}
	}
}

// watch pings Redis every second so an outage shows in logs and metrics even when nothing is written.
func (b *RedisBus) watch(ctx context.Context) {
	defer b.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			err := b.rdb.Ping(pctx).Err()
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				busErrorsTotal.Inc()
			}
			b.setUp(err == nil, err)
		}
	}
}

func (b *RedisBus) setUp(up bool, err error) {
	was := b.up.Swap(up)
	if up {
		busUp.Set(1)
	} else {
		busUp.Set(0)
	}
	switch {
	case was && !up:
		b.log.Warn("redis unreachable: cache invalidations are not shared; replicas fall back to the cache TTL",
			"err", err)
	case !was && up:
		b.log.Info("redis reachable again: cache invalidations are shared")
	}
}
