package ratelimit

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestClusterSharesLimits runs two replicas of a limiter on a Redis Cluster of three masters, with two policies
// matching every request (one script on two keys per decision, which a cluster runs only within one hash slot):
// together they admit exactly the tighter limit, never on the fallback, count each other for the fallback's
// shares, and keep every key of the namespace under its hash tag.
func TestClusterSharesLimits(t *testing.T) {
	cl := redistest.StartCluster(t, 0)
	for _, tt := range []struct{ ns, prefix string }{{"", "{reqgate}:reqgate:"}, {"alpha", "{alpha}:reqgate:"}} {
		t.Run("namespace "+tt.ns, func(t *testing.T) {
			opt := Options{RedisNamespace: tt.ns, RedisTimeout: time.Second, RedisBackoff: time.Second,
				OnRedisError: OnErrorLocal, LocalReplicas: 1, RejectStatus: 429,
				Policies: []Policy{{Name: "account", Key: KeyAPIKey, Limit: 3, Burst: 3, Period: time.Hour},
					{Name: "address", Key: KeyIP, Limit: 100, Burst: 100, Period: time.Hour, Algorithm: AlgorithmWindow}}}
			var ls []*Limiter
			var rdb *redis.ClusterClient
			for range 2 {
				o := opt
				rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs(), ContextTimeoutEnabled: true})
				t.Cleanup(func() { _ = rdb.Close() })
				o.Redis = rdb
				ls = append(ls, mustNew(t, o))
			}
			allowed := 0
			for i := range 8 {
				d := ls[i%2].Admit(context.Background(), Request{APIKey: "k", IP: "192.0.2.1"})
				if d.Fallback {
					t.Fatalf("decision %d made without Redis", i)
				}
				if d.Allowed {
					allowed++
				}
			}
			if allowed != 3 {
				t.Errorf("two replicas on a cluster admitted %d of api_key k, want 3", allowed)
			}
			waitReplicas(t, ls, 2)
			var (
				mu   sync.Mutex // ForEachMaster asks the masters at once
				keys []string
			)
			err := rdb.ForEachMaster(context.Background(), func(ctx context.Context, c *redis.Client) error {
				k, err := c.Keys(ctx, "*").Result()
				mu.Lock()
				keys = append(keys, k...)
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, k := range keys {
				if strings.HasPrefix(k, tt.prefix) {
					n++
				}
			}
			if n < 3 { // the two policies' keys and the replicas' set
				t.Errorf("keys of namespace %q on the cluster: %q, want at least 3 under %q", tt.ns, keys, tt.prefix)
			}
		})
	}
}
