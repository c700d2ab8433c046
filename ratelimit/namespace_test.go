package ratelimit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestNamespacesCountApart runs two deployments on one Redis database, alpha with two replicas and beta with
// one, each in its own RedisNamespace: each admits a key its own policy's worth, overrides included, and counts
// only its own replicas for the local fallback; every key either writes is in its namespace.
func TestNamespacesCountApart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	opt := func(ns string) Options {
		return Options{RedisNamespace: ns, RedisTimeout: testRedisTimeout,
			Policies:  []Policy{{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour}},
			Overrides: []Override{{APIKey: "big", Policy: "account", Limit: 4, Burst: 4, Period: time.Hour}}}
	}
	alpha := replicas(t, srv, 2, opt("alpha"))
	beta := replicas(t, srv, 1, opt("beta"))[0]

	for _, tt := range []struct {
		key  string
		want int
	}{{"k", 2}, {"big", 4}} {
		r := Request{APIKey: tt.key}
		allowed := 0
		for i := range 2 * tt.want {
			if d := alpha[i%2].Admit(context.Background(), r); d.Allowed {
				allowed++
			} else if d.Fallback {
				t.Fatalf("alpha decided %q without Redis", tt.key)
			}
		}
		if allowed != tt.want {
			t.Fatalf("alpha admitted %d of api_key %q, want %d", allowed, tt.key, tt.want)
		}
		if got := shared(beta, r, tt.want+1); got != tt.want {
			t.Errorf("beta admitted %d of api_key %q after alpha spent its own, want %d", got, tt.key, tt.want)
		}
	}

	waitReplicas(t, alpha, 2)
	// Both of alpha's replicas are announced now: beta's next count must still be beta alone.
	if err := beta.present.announce(); err != nil {
		t.Fatal(err)
	}
	if got := beta.present.replicas(); got != 1 {
		t.Errorf("beta counts %d replicas sharing its limits, want 1 (its own)", got)
	}

	keys, err := newClient(t, srv).Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "alpha:reqgate:rl:") && !strings.HasPrefix(k, "beta:reqgate:rl:") {
			t.Errorf("key %q is in neither namespace", k)
		}
	}
}

// TestNamespaceRefused checks that New refuses a namespace that could run into another's names.
func TestNamespaceRefused(t *testing.T) {
	for _, ns := range []string{"a:b", "a b", "a*", strings.Repeat("n", 65)} {
		if _, err := New(withConfig(Options{RedisNamespace: ns, Logger: quiet})); err == nil {
			t.Errorf("New accepted the namespace %q", ns)
		}
	}
}
