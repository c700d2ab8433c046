package ratelimit

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/config/configtest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// backends are the stores every behaviour test runs against: in process, Redis one call per connection, Redis
// through the autopipeliner (the default).
var backends = []string{"local", "redis", "redis-ap"}

// testRedisTimeout replaces the 100ms default where a test needs every decision from Redis: the shared test machine
// can be slow enough to trip the production timeout, which would (correctly) switch to the fallback.
const testRedisTimeout = 5 * time.Second

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newClient returns a limiter-style client for srv, closed when the test ends.
func newClient(tb testing.TB, srv *redistest.Server) *redis.Client {
	tb.Helper()
	o, err := RedisOptions(srv.URL(), config.Default(config.RoleGateway).Redis.Timeout)
	if err != nil {
		tb.Fatal(err)
	}
	c := redis.NewClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// configured are the options cmd/reqgate gives the limiter under the default configuration (OptionsFrom),
// without policies.
func configured() Options { return OptionsFrom(config.Default(config.RoleGateway)) }

// withConfig is opt with the fields it leaves zero taken from configured.
func withConfig(opt Options) Options { return configtest.Overlay(configured(), opt) }

// newLimiter builds a limiter on the named backend; for "redis" it starts a private redis-server.
func newLimiter(tb testing.TB, backend string, opt Options) *Limiter {
	tb.Helper()
	if backend == "redis" {
		opt.NoAutoPipeline = true
	}
	if strings.HasPrefix(backend, "redis") {
		opt.Redis = newClient(tb, redistest.Start(tb))
		if opt.RedisTimeout == 0 {
			opt.RedisTimeout = testRedisTimeout
		}
	}
	if opt.Logger == nil {
		opt.Logger = quiet
	}
	l, err := New(withConfig(opt))
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return l
}

func mustNew(tb testing.TB, opt Options) *Limiter {
	tb.Helper()
	if opt.Logger == nil {
		opt.Logger = quiet
	}
	l, err := New(withConfig(opt))
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return l
}

// admitN admits r n times and returns how many were allowed, and the last decision.
func admitN(l *Limiter, r Request, n int) (allowed int, last Decision) {
	for range n {
		last = l.Admit(context.Background(), r)
		if last.Allowed {
			allowed++
		}
	}
	return allowed, last
}

// heldCount is the number of requests held under key now.
func (l *Limiter) heldCount(key string) int {
	l.held.mu.Lock()
	defer l.held.mu.Unlock()
	return l.held.n[key]
}

// creditsSpent is the number of requests l admitted on a credit.
func creditsSpent(l *Limiter) int64 {
	if f, ok := l.store.(*fallbackStore); ok {
		if c, ok := f.shared.(*creditStore); ok {
			return c.spent.Load()
		}
	}
	return 0
}

// eachBackend runs test against every backend, in parallel subtests.
func eachBackend(t *testing.T, test func(t *testing.T, backend string)) {
	t.Parallel()
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			test(t, backend)
		})
	}
}
