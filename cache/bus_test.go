package cache

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

func newRedis(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// waitFor polls cond up to limit; the limit is a correctness bound (the one second), not a timing check.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func TestRedisBusCarriesInvalidation(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newCache(t, Options{}), newCache(t, Options{})
	busA, busB := NewRedisBus(newRedis(t, srv), a, nil), NewRedisBus(newRedis(t, srv), b, nil)
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })

	// Wait until B's subscription is live: a probe published by A must arrive.
	if !waitFor(5*time.Second, func() bool {
		busA.Publish("probe")
		return b.Generation("probe") > 0
	}) {
		t.Fatal("replica B never received an invalidation")
	}
	before := b.Generation("demo")
	a.Invalidate("demo")
	busA.Publish("demo")
	if !waitFor(time.Second, func() bool { return b.Generation("demo") > before }) {
		t.Fatal("replica B did not drop demo within one second")
	}
	if got, want := a.Generation("demo"), uint64(1); got != want {
		t.Errorf("A's own message applied twice: generation=%d, want %d", got, want)
	}
}

func TestRedisBusOutage(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newCache(t, Options{}), newCache(t, Options{})
	busA, busB := NewRedisBus(newRedis(t, srv), a, nil), NewRedisBus(newRedis(t, srv), b, nil)
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })
	if !waitFor(5*time.Second, func() bool { busA.Publish("probe"); return b.Generation("probe") > 0 }) {
		t.Fatal("bus never worked")
	}
	key := b.Key("demo", "", 2, "/p", "", "xml")
	if err := b.Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	b.Wait()

	srv.Stop()
	busA.Publish("demo")
	if !waitFor(5*time.Second, func() bool { return !busA.Up() }) {
		t.Fatal("bus A still up with Redis stopped")
	}
	if _, ok := b.Get(key); !ok {
		t.Fatal("entry lost during the outage; it should live until its TTL")
	}
	srv.Restart(t)
	// B re-subscribes and, having possibly missed messages, drops everything.
	if !waitFor(10*time.Second, func() bool { _, ok := b.Get(b.Key("demo", "", 2, "/p", "", "xml")); return !ok }) {
		t.Fatal("replica B kept its entries after the subscription came back")
	}
	if !waitFor(5*time.Second, func() bool { return busA.Up() }) {
		t.Fatal("bus A not up again after Redis restart")
	}
}
