package cache

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// servingBuses starts n replicas on srv and waits until every one serves hits and knows every other as a
// member (a write through any of them is then acknowledged by all).
func servingBuses(t testing.TB, srv *redistest.Server, n int) ([]*Cache, []*RedisBus) {
	t.Helper()
	caches, buses := make([]*Cache, n), make([]*RedisBus, n)
	for i := range n {
		caches[i] = newCache(t, Options{})
		buses[i] = NewRedisBus(newRedis(t, srv), "", caches[i], nil)
		buses[i].SetLease(400 * time.Millisecond)
		b := buses[i]
		t.Cleanup(func() { _ = b.Close() })
	}
	for i, b := range buses {
		if !testsupport.WaitUntil(10*time.Second, func() bool { return b.Serving() && b.viewComplete() }) {
			t.Fatalf("replica %d never served", i)
		}
	}
	return caches, buses
}

// TestPublishReturnsOnceEveryReplicaApplied is read-your-writes across replicas at the bus: when a Publish
// returns, every other replica has already applied the invalidation (its generation moved), with no wait on
// the reader's side; a replica that merely had the message in its socket would fail this now and then.
func TestPublishReturnsOnceEveryReplicaApplied(t *testing.T) {
	srv := redistest.Start(t)
	caches, buses := servingBuses(t, srv, 3)
	const rounds = 300
	late := 0
	for i := range rounds {
		from := i % 3
		before := make([]uint64, 3)
		for j, c := range caches {
			before[j] = c.Generation("demo")
		}
		buses[from].Publish(Write{Account: "demo"})
		for j, c := range caches {
			if j != from && c.Generation("demo") == before[j] {
				late++
			}
		}
	}
	if late > 0 {
		t.Errorf("%d of %d reads on other replicas, right after a Publish returned, found the invalidation not "+
			"yet applied", late, 2*rounds)
	}
}

// TestSilentMemberIsEvicted: a member that stops acknowledging (a process paused or stuck) keeps one write
// waiting for at most a lease, is then evicted on the channel, and later writes do not wait for it.
func TestSilentMemberIsEvicted(t *testing.T) {
	srv := redistest.Start(t)
	_, buses := servingBuses(t, srv, 2)
	rdb := newRedis(t, srv)
	ctx := context.Background()
	watch := rdb.Subscribe(ctx, Channel)
	t.Cleanup(func() { _ = watch.Close() })
	if _, err := watch.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	// A replica that joins and then never reads nor acknowledges anything.
	if err := rdb.Publish(ctx, Channel, "silent:1 member hello").Err(); err != nil {
		t.Fatal(err)
	}
	if msg, err := watch.ReceiveTimeout(ctx, 5*time.Second); err != nil {
		t.Fatalf("hello: %v", err)
	} else if m, ok := msg.(*redis.Message); !ok || m.Payload != "silent:1 member hello" {
		t.Fatalf("hello: %v", msg)
	}

	// evictions counts the evictions of the silent member on the channel during d (other members' messages
	// keep coming meanwhile).
	evictions := func(d time.Duration) (n int) {
		end := time.Now().Add(d)
		for {
			left := time.Until(end)
			if left <= 0 {
				return n
			}
			msg, err := watch.ReceiveTimeout(ctx, left)
			if err != nil {
				return n
			}
			if m, ok := msg.(*redis.Message); ok && strings.HasSuffix(m.Payload, " member evict silent") {
				n++
			}
		}
	}
	buses[0].Publish(Write{Account: "demo"})
	if n := evictions(time.Second); n != 1 {
		t.Fatalf("%d evictions of the silent member after the first write, want 1", n)
	}
	buses[1].Publish(Write{Account: "demo"})
	buses[0].Publish(Write{Account: "demo"})
	if n := evictions(time.Second); n != 0 {
		t.Errorf("%d more evictions: later writes still waited for the evicted member", n)
	}
}

// TestEvictedReplicaRejoins: a replica evicted by a writer (which it was too slow for) stops serving hits at
// once when it reads its eviction, joins again and serves again.
func TestEvictedReplicaRejoins(t *testing.T) {
	srv := redistest.Start(t)
	caches, buses := servingBuses(t, srv, 2)
	key := caches[1].Key(Scope{}, "demo", "", 2, "/p", "", "xml")
	if err := caches[1].Set(key, &Entry{Status: 200, Body: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	caches[1].Wait()
	buses[0].evict(buses[1].origin)
	// It rejoins within moments, so the gap without hits is too short to watch for: count the lease it lost.
	if !testsupport.WaitUntil(5*time.Second, func() bool { return buses[1].leasesLost.Load() == 1 }) {
		t.Fatal("the evicted replica did not end its lease")
	}
	if !testsupport.WaitUntil(10*time.Second, buses[1].Serving) {
		t.Fatal("the evicted replica never served again")
	}
	if l, ok := caches[1].Get(key); !ok || !l.Fresh {
		t.Error("an entry no write touched is not served again after rejoining")
	}
}

// BenchmarkPublish is what the bus adds to a write's answer: the PUBLISH, the message's return on this replica's
// subscription and, with other replicas, their acknowledgements.
func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(map[int]string{1: "alone", 2: "1 other replica", 3: "2 other replicas"}[n], func(b *testing.B) {
			srv := redistest.Start(b)
			_, buses := servingBuses(b, srv, n)
			for b.Loop() {
				buses[0].Publish(Write{Account: "demo", Kind: "re", ID: "1"})
			}
		})
	}
}
