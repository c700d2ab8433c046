package cache

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestRedisBusOnClusterFailover runs two replicas' buses on a Redis Cluster (sharded pub/sub on the master of
// the namespace's slot): a Publish returns once the other replica applied it; after the master of that slot is
// killed and its replica promoted, both buses subscribe on the new master, serve again, and a Publish again
// returns only once the other replica applied it.
func TestRedisBusOnClusterFailover(t *testing.T) {
	cl := redistest.StartCluster(t, 1)
	caches, buses := make([]*Cache, 2), make([]*RedisBus, 2)
	for i := range buses {
		caches[i] = newCache(t, Options{})
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true,
			MaxRetries: 1, DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second})
		t.Cleanup(func() { _ = rdb.Close() })
		buses[i] = NewRedisBus(rdb, "alpha", caches[i], nil)
		buses[i].SetLease(400 * time.Millisecond)
		b := buses[i]
		t.Cleanup(func() { _ = b.Close() })
	}
	serving := func(when string) {
		t.Helper()
		for i, b := range buses {
			if !testsupport.WaitUntil(30*time.Second, func() bool { return b.Up() && b.Serving() && b.viewComplete() }) {
				t.Fatalf("%s: replica %d never served", when, i)
			}
		}
	}
	applied := func(when string) {
		t.Helper()
		for round := range 20 {
			from, to := round%2, (round+1)%2
			before := caches[to].Generation("demo")
			buses[from].Publish(Write{Account: "demo"})
			if caches[to].Generation("demo") == before {
				t.Fatalf("%s: round %d: Publish returned before the other replica applied it", when, round)
			}
		}
	}
	serving("at start")
	applied("at start")
	cl.KillMasterOf(t, buses[0].channel)
	serving("after the failover")
	applied("after the failover")
}
