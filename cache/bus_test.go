package cache

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

func newRedis(t testing.TB, srv *redistest.Server) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func TestRedisBusCarriesInvalidation(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newCache(t, Options{}), newCache(t, Options{})
	busA, busB := NewRedisBus(newRedis(t, srv), "", a, nil), NewRedisBus(newRedis(t, srv), "", b, nil)
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })

	// Wait until B's subscription is live: a probe published by A must arrive.
	if !testsupport.WaitUntil(5*time.Second, func() bool {
		busA.Publish(Write{Account: "probe"})
		return b.Generation("probe") > 0
	}) {
		t.Fatal("replica B never received an invalidation")
	}
	before := b.Generation("demo")
	a.Invalidate("demo")
	busA.Publish(Write{Account: "demo"})
	if !testsupport.WaitUntil(time.Second, func() bool { return b.Generation("demo") > before }) {
		t.Fatal("replica B did not drop demo within one second")
	}
	if got, want := a.Generation("demo"), uint64(1); got != want {
		t.Errorf("A's own message applied twice: generation=%d, want %d", got, want)
	}
}

// TestRedisBusCarriesWriteScope publishes a write of one record and checks that the other replica makes old
// what the write makes old locally, and only that; a message whose scope it cannot read makes the whole
// account old there, as a replica that knows no scopes does with every message.
func TestRedisBusCarriesWriteScope(t *testing.T) {
	// A kind and an id that need escaping in the message.
	w := Write{Account: "demo", Kind: "r k:/%", ID: "2"}
	odd := []Scope{{Reads: ReadsRecord, Kind: w.Kind, ID: w.ID}, {Reads: ReadsKind, Kind: w.Kind}}
	srv := redistest.Start(t)
	a, b, local := newCache(t, Options{}), newCache(t, Options{}), newCache(t, Options{})
	busA, busB := NewRedisBus(newRedis(t, srv), "", a, nil), NewRedisBus(newRedis(t, srv), "", b, nil)
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })
	if !testsupport.WaitUntil(5*time.Second, func() bool { busA.Publish(Write{Account: "probe"}); return b.Generation("probe") > 0 }) {
		t.Fatal("replica B never received an invalidation")
	}
	wantKey := func(c *Cache) map[string]string {
		keys := scopedKeys(c)
		keys["odd"] = c.Key(odd[0], "demo", "", 2, "/odd", "", "xml")
		keys["odd kind"] = c.Key(odd[1], "demo", "", 2, "/odd", "", "xml")
		return keys
	}
	before := wantKey(b)
	localBefore := wantKey(local)
	local.InvalidateWrite(w)
	busA.Publish(w)
	localAfter := wantKey(local)
	if !testsupport.WaitUntil(time.Second, func() bool { k := wantKey(b); return k["odd"] != before["odd"] }) {
		t.Fatal("replica B did not apply the write within one second")
	}
	after := wantKey(b)
	for name := range after {
		if got, want := after[name] != before[name], localAfter[name] != localBefore[name]; got != want {
			t.Errorf("%s: key changed on replica B=%v, locally %v", name, got, want)
		}
	}

	// A scope this version cannot read: the whole account.
	gen := b.Generation("demo")
	if err := newRedis(t, srv).Publish(context.Background(), Channel, "other:1:re%zz/2 demo").Err(); err != nil {
		t.Fatal(err)
	}
	if !testsupport.WaitUntil(time.Second, func() bool { return b.Generation("demo") > gen }) {
		t.Fatal("a message with an unreadable scope did not invalidate the account")
	}
}

func TestRedisBusOutage(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newCache(t, Options{}), newCache(t, Options{})
	busA, busB := NewRedisBus(newRedis(t, srv), "", a, nil), NewRedisBus(newRedis(t, srv), "", b, nil)
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })
	if !testsupport.WaitUntil(5*time.Second, func() bool { busA.Publish(Write{Account: "probe"}); return b.Generation("probe") > 0 }) {
		t.Fatal("bus never worked")
	}
	key := b.Key(Scope{}, "demo", "", 2, "/p", "", "xml")
	if err := b.Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	b.Wait()

	srv.Stop()
	busA.Publish(Write{Account: "demo"})
	if !testsupport.WaitUntil(5*time.Second, func() bool { return !busA.Up() }) {
		t.Fatal("bus A still up with Redis stopped")
	}
	if _, ok := b.Get(key); !ok {
		t.Fatal("entry lost during the outage; it should live until its TTL")
	}
	srv.Restart(t)
	// B re-subscribes and, having possibly missed messages, drops everything.
	if !testsupport.WaitUntil(10*time.Second, func() bool { _, ok := b.Get(b.Key(Scope{}, "demo", "", 2, "/p", "", "xml")); return !ok }) {
		t.Fatal("replica B kept its entries after the subscription came back")
	}
	if !testsupport.WaitUntil(5*time.Second, func() bool { return busA.Up() }) {
		t.Fatal("bus A not up again after Redis restart")
	}
}

// TestRedisBusDownBoundsFreshness loses Redis in two ways, stopped and stalled. A Publish returns all the same
// (bounded by PublishTimeout and the lease) and takes the bus down; while it is down the cache serves an entry
// as fresh only below BusDownTTL, and nothing once the lease has run out (a write through another replica
// could not be heard); once Redis answers again the bus is up, the lease is renewed and the TTL applies.
func TestRedisBusDownBoundsFreshness(t *testing.T) {
	for _, tc := range []struct {
		name         string
		lose, regain func(t *testing.T, srv *redistest.Server)
	}{
		{"stopped", func(t *testing.T, srv *redistest.Server) { srv.Stop() },
			func(t *testing.T, srv *redistest.Server) { srv.Restart(t) }},
		{"stalled", func(t *testing.T, srv *redistest.Server) { srv.Pause(t) },
			func(t *testing.T, srv *redistest.Server) { srv.Resume(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			clk := testsupport.NewClock(time.Unix(1_700_000_000, 0))
			c := newCache(t, Options{TTL: time.Minute, BusDownTTL: time.Second, Now: clk.Now})
			bus := NewRedisBus(newRedis(t, srv), "", c, nil)
			bus.SetPublishTimeout(200 * time.Millisecond)
			bus.SetLease(300 * time.Millisecond)
			t.Cleanup(func() { _ = bus.Close() })
			if !testsupport.WaitUntil(5*time.Second, bus.Serving) {
				t.Fatal("bus never came up")
			}
			store := func(path string) string {
				key := c.Key(Scope{}, "demo", "", 2, path, "", "xml")
				if err := c.Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
					t.Fatal(err)
				}
				c.Wait()
				return key
			}
			fresh := func(key string) bool { l, ok := c.Get(key); return ok && l.Fresh }

			old := store("/old")
			clk.Add(2 * time.Second)
			if !fresh(old) {
				t.Fatal("bus up: an entry older than BusDownTTL is not fresh")
			}

			tc.lose(t, srv)
			start := time.Now()
			bus.Publish(Write{Account: "demo"})
			// A correctness bound (Publish must not hang on Redis), not a timing check.
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Publish took %v with Redis %s", took, tc.name)
			}
			if bus.Up() {
				t.Error("bus still up after a failed Publish")
			}
			if fresh(old) {
				t.Error("bus down: an entry older than BusDownTTL is still fresh")
			}
			young := store("/young")
			if !testsupport.WaitUntil(5*time.Second, func() bool { return !fresh(young) }) {
				t.Error("bus down: a new entry is still fresh after the lease")
			}

			tc.regain(t, srv)
			if !testsupport.WaitUntil(10*time.Second, bus.Serving) {
				t.Fatal("bus not up again after Redis came back")
			}
			later := store("/later")
			clk.Add(2 * time.Second)
			if !fresh(later) {
				t.Error("bus up again: an entry older than BusDownTTL is not fresh")
			}
		})
	}
}

// TestRedisBusSubscriptionKilled breaks only the subscription's connection (Redis stays up): the bus
// subscribes again and, having possibly missed messages, invalidates the whole cache; then it hears again.
func TestRedisBusSubscriptionKilled(t *testing.T) {
	srv := redistest.Start(t)
	a, b := newCache(t, Options{}), newCache(t, Options{})
	busA, busB := NewRedisBus(newRedis(t, srv), "", a, nil), NewRedisBus(newRedis(t, srv), "", b, nil)
	t.Cleanup(func() { _ = busA.Close(); _ = busB.Close() })
	if !testsupport.WaitUntil(5*time.Second, func() bool { busA.Publish(Write{Account: "probe"}); return b.Generation("probe") > 0 }) {
		t.Fatal("bus never worked")
	}
	key := b.Key(Scope{}, "demo", "", 2, "/p", "", "xml")
	if err := b.Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	admin := newRedis(t, srv)
	if err := admin.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Err(); err != nil {
		t.Fatalf("CLIENT KILL TYPE pubsub: %v", err)
	}
	if !testsupport.WaitUntil(10*time.Second, func() bool { _, ok := b.Get(b.Key(Scope{}, "demo", "", 2, "/p", "", "xml")); return !ok }) {
		t.Fatal("replica B kept its entries after its subscription was broken")
	}
	if !testsupport.WaitUntil(10*time.Second, func() bool { return busA.Up() && busB.Up() }) {
		t.Fatal("buses not up again after their subscriptions were restored")
	}
	before := b.Generation("demo")
	busA.Publish(Write{Account: "demo"})
	if !testsupport.WaitUntil(time.Second, func() bool { return b.Generation("demo") > before }) {
		t.Fatal("replica B does not hear A after its subscription was restored")
	}
}

// TestPublisherPurgeReachesReplicas checks that a purge sent by a process that only publishes (the core of
// split mode) reaches a gateway replica as a replica's own purge does: the account's cached reads are made
// old and the purge handler (which forgets remembered credentials) runs for that account, and only for it.
func TestPublisherPurgeReachesReplicas(t *testing.T) {
	srv := redistest.Start(t)
	c := newCache(t, Options{})
	bus := NewRedisBus(newRedis(t, srv), "", c, nil)
	t.Cleanup(func() { _ = bus.Close() })
	purged := make(chan string, 16)
	bus.SetPurgeHandler(func(account string) { purged <- account })
	pub := NewPublisher(newRedis(t, srv), "")
	ctx := context.Background()
	if !testsupport.WaitUntil(5*time.Second, func() bool {
		if err := pub.Purge(ctx, "probe"); err != nil {
			t.Fatal(err)
		}
		return c.Generation("probe") > 0
	}) {
		t.Fatal("the replica never received a published purge")
	}
	before, other := c.Generation("demo"), c.Generation("other")
	if err := pub.Purge(ctx, "demo"); err != nil {
		t.Fatal(err)
	}
	// Messages arrive in order: the probes' purges (some may still be on their way), then demo's.
	for got := ""; got != "demo"; {
		select {
		case got = <-purged:
			if got != "demo" && got != "probe" {
				t.Fatalf("purge handler ran for %q, want demo", got)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the purge handler did not run for demo")
		}
	}
	if c.Generation("demo") <= before {
		t.Error("the purge did not make demo's cached reads old")
	}
	if c.Generation("other") != other {
		t.Error("the purge of demo made another account's cached reads old")
	}

	// Redis down: the publisher says so rather than hanging.
	srv.Stop()
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := pub.Purge(tctx, "demo"); err == nil {
		t.Error("Purge with Redis stopped returned no error")
	}
}
