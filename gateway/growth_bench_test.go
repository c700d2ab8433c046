package gateway

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/reqgate/reqgate/cache"
	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/credkey"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// growthRounds is how many times BenchmarkHandlerHitGrowth measures every size, the sizes of a dimension in
// turn, so that a shared machine's changing load falls on all of them alike.
var growthRounds = flag.Int("growth.rounds", 1, "BenchmarkHandlerHitGrowth: rounds over the sizes")

// BenchmarkHandlerHitGrowth is BenchmarkHandlerHit's XML hit with the state a gateway gathers as its work
// grows, filled before the timed loop: cached entries (other keys of the same cache), remembered credentials,
// and accounts with rate policies (an override each, and a counted key each: in process, and in Redis for the
// Redis policy). A hit should cost the same at every size. cpu-ns/op is the process's CPU per hit (less
// swayed by other load than ns/op); each fill reports the heap it added per item (after a GC).
func BenchmarkHandlerHitGrowth(b *testing.B) {
	c := coretest.Start(b, coretest.Options{})
	type size struct {
		name string
		gw   *testGateway
	}
	var dims [][]size
	// The fills and the runs take minutes: long enough TTLs that no filled entry or credential expires meanwhile.
	options := func() Options {
		opt := cachedOptions(c)
		opt.Cache.TTL, opt.AuthTTL = time.Hour, time.Hour
		return opt
	}

	var entries []size
	for _, n := range []int{1, 1_000, 1_000_000} {
		opt := options()
		opt.Cache.MaxBytes = 1 << 30 // room for every entry: the measure is of lookups among them, not evictions
		gw := startGateway(b, opt)
		perEntry := heapPer(n-1, func() { fillCache(b, gw.cache, n-1) })
		b.Logf("entries=%d: %.0f heap bytes per entry (64-byte body)", n, perEntry)
		entries = append(entries, size{fmt.Sprintf("entries=%d", n), gw})
	}
	dims = append(dims, entries)

	var creds []size
	for _, n := range []int{10, 100_000} {
		gw := startGateway(b, options())
		perCred := heapPer(n-1, func() { fillCredentials(gw.creds, n-1) })
		b.Logf("credentials=%d: %.0f heap bytes per credential", n, perCred)
		creds = append(creds, size{fmt.Sprintf("credentials=%d", n), gw})
	}
	dims = append(dims, creds)

	rs := redistest.Start(b)
	for _, store := range []string{"local", "redis"} {
		var accounts []size
		for _, n := range []int{1, 10_000} {
			opt := ratelimit.Options{Policies: []ratelimit.Policy{{Name: "never", Key: ratelimit.KeyAPIKey,
				Limit: 1_000_000, Burst: 1_000_000, Period: time.Second}}}
			// Every account but the benchmark's has its own numbers for the policy.
			for i := range n - 1 {
				opt.Overrides = append(opt.Overrides, ratelimit.Override{APIKey: "acct" + strconv.Itoa(i),
					Policy: "never", Limit: 500_000, Burst: 500_000, Period: time.Second})
			}
			if store == "redis" {
				rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
				b.Cleanup(func() { _ = rdb.Close() })
				opt.Redis, opt.RedisNamespace = rdb, "growth"+strconv.Itoa(n)
				opt.RedisTimeout = 10 * time.Second
			}
			var l *ratelimit.Limiter
			// The limiter's heap per account: its compiled override and its counted key (each other account
			// counted once: a key in the in-process store, or credits beside a key in Redis).
			perAccount := heapPer(n-1, func() {
				var err error
				if l, err = ratelimit.New(ratelimittest.With(opt)); err != nil {
					b.Fatal(err)
				}
				for i := range n - 1 {
					if d := l.Admit(context.Background(), ratelimit.Request{APIKey: "acct" + strconv.Itoa(i)}); !d.Allowed {
						b.Fatalf("account %d refused", i)
					}
				}
			})
			b.Logf("%s-accounts=%d: %.0f heap bytes per account in the limiter", store, n, perAccount)
			gwOpt := options()
			gwOpt.Limiter = l
			gw := startGateway(b, gwOpt)
			if opt.Redis != nil {
				keys, err := opt.Redis.DBSize(context.Background()).Result()
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("redis-accounts=%d: %d keys in Redis (every namespace so far)", n, keys)
			}
			accounts = append(accounts, size{fmt.Sprintf("%s-accounts=%d", store, n), gw})
		}
		dims = append(dims, accounts)
	}

	for range *growthRounds {
		for _, dim := range dims {
			for _, s := range dim {
				b.Run(s.name, func(b *testing.B) {
					// Filled again each time: the entry and the credential outlive one run, not the fills.
					hit := hitter(b, s.gw, "")
					runtime.GC()
					b.ReportAllocs()
					c0 := processCPU()
					b.ResetTimer()
					for range b.N {
						hit()
					}
					b.StopTimer()
					b.ReportMetric(float64(processCPU()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		}
	}
}

// fillCache stores n small entries under keys of their own in c.
func fillCache(tb testing.TB, c *cache.Cache, n int) {
	body := make([]byte, 64)
	for i := range n {
		e := &cache.Entry{Status: 200, Header: []cache.Header{{Key: "Content-Type", Value: "application/xml"}},
			Body: append([]byte(nil), body...), ETag: `"e"`}
		if err := c.Set("growth/"+strconv.Itoa(i), e); err != nil {
			tb.Fatal(err)
		}
	}
	c.Wait()
}

// fillCredentials remembers n proved credentials of other users of other accounts, as the core's proofs would.
func fillCredentials(c *credentials, n int) {
	for i := range n {
		var d [credkey.Size]byte
		_, _ = rand.Read(d[:])
		c.remember(credential{present: true, user: "user" + strconv.Itoa(i), apiKey: "acct" + strconv.Itoa(i), digest: d})
	}
}

// heapPer runs fill and returns the live heap it added, per item.
func heapPer(items int, fill func()) float64 {
	if items <= 0 {
		fill()
		return 0
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(items)
}

// processCPU is the user and system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
