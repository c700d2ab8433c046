package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// replicas returns n limiters with their own Redis clients against one redis-server, as n gateway replicas.
func replicas(tb testing.TB, srv *redistest.Server, n int, opt Options) []*Limiter {
	tb.Helper()
	ls := make([]*Limiter, n)
	for i := range ls {
		o := opt
		o.Redis = newClient(tb, srv)
		ls[i] = mustNew(tb, o)
	}
	return ls
}

// TestScriptReload checks the EVALSHA -> EVAL fallback after Redis lost its script cache (SCRIPT FLUSH, restart).
func TestScriptReload(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := newClient(t, srv)
	l := mustNew(t, Options{Redis: c, RedisTimeout: testRedisTimeout, Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour},
	}})
	ctx := context.Background()
	if got := shared(l, Request{APIKey: "k"}, 1); got != 1 {
		t.Fatalf("admitted %d, want 1", got)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got := shared(l, Request{APIKey: "k"}, 2); got != 1 {
		t.Errorf("admitted %d after SCRIPT FLUSH (-1: fallback), want 1", got)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := RetryAfterSeconds(l.Status(ctx, Request{APIKey: "k"})), 1800; got != want {
		t.Errorf("Status after SCRIPT FLUSH = %ds, want %ds", got, want)
	}
}

func TestReplicasShareLimits(t *testing.T) {
	t.Parallel()
	ls := replicas(t, redistest.Start(t), 3, Options{RedisTimeout: testRedisTimeout, Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: 6, Burst: 6, Period: time.Hour},
	}})
	allowed := 0
	for i := range 12 {
		d := ls[i%3].Admit(context.Background(), Request{APIKey: "k"})
		if d.Allowed {
			allowed++
		}
		if d.Fallback {
			t.Fatalf("request %d decided without Redis", i)
		}
	}
	if got, want := allowed, 6; got != want {
		t.Errorf("three replicas admitted %d, want %d", got, want)
	}
}

// TestReplicasAccuracy drives three replicas above the limit for 10 seconds: they must admit within 5% of
// limit * duration / period + burst (the accuracy requirement).
func TestReplicasAccuracy(t *testing.T) {
	const (
		limit    = 100
		period   = time.Second
		duration = 10 * time.Second
		// A second's worth: the shared test machine can stall every driver for a few hundred ms, and with a
		// smaller bucket the quota of such a pause would be lost (a driver gap, not a limiter error).
		burst = 100
	)
	ls := replicas(t, redistest.Start(t), 3, Options{RedisTimeout: testRedisTimeout, Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: limit, Period: period, Burst: burst},
	}})
	n := drive(ls, Request{APIKey: "acme"}, duration, time.Millisecond) // each client far above the limit
	want := float64(limit)*duration.Seconds()/period.Seconds() + burst
	got := float64(n.allowed.Load())
	t.Logf("3 replicas, %s: offered %d, admitted %.0f, expected %.0f (%+.2f%%)", duration, n.offered.Load(), got, want,
		100*(got-want)/want)
	if n.fallback.Load() > 0 {
		t.Errorf("%d decisions without Redis", n.fallback.Load())
	}
	if n.offered.Load() < int64(2*want) {
		t.Fatalf("offered only %d requests; the test needs load well above the limit", n.offered.Load())
	}
	if math.Abs(got-want) > 0.05*want {
		t.Errorf("admitted %.0f, want %.0f +/- 5%%", got, want)
	}
}

// outageCase is one run of TestRedisOutage.
type outageCase struct {
	mode         string
	replicas     int // replicas running on the Redis, which see each other before it stops
	wantAllowed  int // of 5 requests to one replica while Redis is down
	autoPipeline bool
}

// TestRedisOutage stops Redis mid-run: decisions continue by OnRedisError, never an error; after a restart the
// limiter returns to the shared limits.
func TestRedisOutage(t *testing.T) {
	t.Parallel()
	tests := []outageCase{
		{OnErrorLocal, 1, 3, false}, // the local limiter starts empty: a burst of 3
		{OnErrorLocal, 3, 1, false}, // this replica's share of the burst, one of the 3 it counted
		{OnErrorAllow, 1, 5, false},
		{OnErrorDeny, 1, 0, false},
		{OnErrorLocal, 1, 3, true},
		{OnErrorDeny, 1, 0, true},
	}
	for _, tt := range tests {
		name := tt.mode + "/" + strconv.Itoa(tt.replicas)
		if tt.autoPipeline {
			name += "/autopipeline"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testRedisOutage(t, tt)
		})
	}
}

func testRedisOutage(t *testing.T, tt outageCase) {
	srv := redistest.Start(t)
	var logs testsupport.LockedBuffer
	opt := Options{
		Policies:     []Policy{{Name: "account", Key: KeyAPIKey, Limit: 3, Burst: 3, Period: time.Hour}},
		OnRedisError: tt.mode, RedisBackoff: 100 * time.Millisecond, RedisTimeout: testRedisTimeout,
		NoAutoPipeline: !tt.autoPipeline, // local_replicas stays 1: the replicas count each other
		Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
	}
	ls := replicas(t, srv, tt.replicas, opt)
	a := ls[0]
	if tt.mode == OnErrorLocal {
		waitReplicas(t, ls, tt.replicas)
	}
	ctx := context.Background()
	if got, _ := admitN(a, Request{APIKey: "k"}, 4); got != 3 {
		t.Fatalf("admitted %d with Redis up, want 3", got)
	}
	fallbacks0 := redisFallback.Get()

	srv.Stop()
	// A fresh key: "k" is in the reject cache, which would (rightly) reject it without asking Redis.
	if got, want := admitDown(t, a, Request{APIKey: "k-down"}, 5), tt.wantAllowed; got != want {
		t.Errorf("admitted %d of 5 with Redis down, want %d", got, want)
	}
	if got := redisFallback.Get() - fallbacks0; got < 5 {
		t.Errorf("fallback counter rose by %d, want at least 5", got)
	}
	_ = a.Status(ctx, Request{APIKey: "k-down"}) // must not fail either

	srv.Restart(t)
	waitShared(t, a)
	b := replicas(t, srv, 1, opt)[0]
	if got, _ := admitN(a, Request{APIKey: "k2"}, 3); got != 3 {
		t.Fatalf("replica a admitted %d after recovery, want 3", got)
	}
	if d := b.Admit(ctx, Request{APIKey: "k2"}); d.Allowed || d.Fallback {
		t.Errorf("replica b: allowed=%v fallback=%v, want rejected by the shared limit", d.Allowed, d.Fallback)
	}
	for _, want := range []string{"switching to the fallback", "Redis is back"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// admitDown admits r n times while Redis is down and returns how many were allowed, checking that each decision
// came from the fallback, with the policy header, and a Retry-After when rejected.
func admitDown(t *testing.T, l *Limiter, r Request, n int) (allowed int) {
	t.Helper()
	for i := range n {
		d := l.Admit(context.Background(), r)
		if !d.Fallback {
			t.Fatalf("request %d with Redis down not marked Fallback", i)
		}
		if d.Allowed {
			allowed++
		} else if d.RetryAfter <= 0 {
			t.Errorf("request %d rejected without RetryAfter", i)
		}
		if !d.Limited || d.Policy == "" {
			t.Errorf("request %d: Limited=%v Policy=%q, want the policy header", i, d.Limited, d.Policy)
		}
	}
	return allowed
}

// waitReplicas waits until every limiter of ls has counted n replicas in Redis.
func waitReplicas(t *testing.T, ls []*Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for _, l := range ls {
		for l.present.replicas() != int64(n) || !l.present.seen.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("a replica counts %d replicas, want %d", l.present.replicas(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestFallbackSharesLimit stops Redis under two replicas that have seen each other in it: on the local fallback
// each admits its half of the policy, so that the two together admit no more than the policy, although neither
// was told how many replicas run (local_replicas stays 1).
func TestFallbackSharesLimit(t *testing.T) {
	t.Parallel()
	const limit = 120 // an hour: nothing refills while the test runs
	srv := redistest.Start(t)
	ls := replicas(t, srv, 2, Options{RedisTimeout: testRedisTimeout, RedisBackoff: time.Hour, Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: limit, Burst: limit, Period: time.Hour},
	}})
	if got := ls[0].opt.LocalReplicas; got != 1 {
		t.Fatalf("local_replicas %d, want the default 1", got)
	}
	// A limiter built again on a replica's client, as a reload with new policies does, is the same replica.
	o := ls[0].opt
	o.Policies = append([]Policy{{Name: "ip", Key: KeyIP, Limit: 5, Burst: 5, Period: time.Hour}}, o.Policies...)
	if reloaded := mustNew(t, o); reloaded.present != ls[0].present {
		t.Error("a limiter built again on the same Redis client announces another replica")
	}
	waitReplicas(t, ls, 2)
	srv.Stop()
	total := 0
	for i, l := range ls {
		r := Request{APIKey: "acme"}
		if i == 1 {
			r.Memo = new(Memo) // as a connection asks: the fallback's store knows the key's cell after the first
		}
		got := admitDown(t, l, r, limit)
		if got != limit/2 {
			t.Errorf("replica %d admitted %d of %d with Redis down, want its share %d", i, got, limit, limit/2)
		}
		total += got
	}
	if total > limit {
		t.Errorf("two replicas admitted %d with Redis down, more than the policy's %d", total, limit)
	}
}

// TestFallbackAssumesLocalReplicas: a replica that never reached Redis has counted no replicas, and assumes
// local_replicas of them.
func TestFallbackAssumesLocalReplicas(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	srv.Stop()
	l := replicas(t, srv, 1, Options{RedisTimeout: testRedisTimeout, RedisBackoff: time.Hour, LocalReplicas: 3,
		Policies: []Policy{{Name: "account", Key: KeyAPIKey, Limit: 3, Burst: 3, Period: time.Hour}}})[0]
	if got, want := admitDown(t, l, Request{APIKey: "k"}, 5), 1; got != want {
		t.Errorf("admitted %d of 5, want %d (a third of the burst)", got, want)
	}
}

// waitShared admits throw-away requests until l decides through Redis again.
func waitShared(t *testing.T, l *Limiter) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for l.Admit(context.Background(), Request{APIKey: "probe"}).Fallback {
		if time.Now().After(deadline) {
			t.Fatal("still on the fallback 15s after Redis came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisStalled freezes Redis: calls must give up after RedisTimeout and use the fallback, then recover.
func TestRedisStalled(t *testing.T) {
	t.Parallel()
	for _, ap := range []bool{false, true} {
		t.Run("autopipeline="+strconv.FormatBool(ap), func(t *testing.T) {
			t.Parallel()
			testRedisStalled(t, ap)
		})
	}
}

func testRedisStalled(t *testing.T, autoPipeline bool) {
	srv := redistest.Start(t)
	l := replicas(t, srv, 1, Options{
		Policies:     []Policy{{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour}},
		RedisTimeout: 500 * time.Millisecond, RedisBackoff: 100 * time.Millisecond, NoAutoPipeline: !autoPipeline,
	})[0]
	ctx := context.Background()
	waitShared(t, l)
	srv.Pause(t)
	for i := range 3 {
		if d := l.Admit(ctx, Request{APIKey: "k"}); !d.Fallback {
			t.Fatalf("request %d with Redis stalled not decided by the fallback", i)
		}
	}
	srv.Resume(t)
	waitShared(t, l)
	// A fresh key: the calls that timed out were still queued in Redis and ran when it resumed, so "k" may be
	// spent (a stall over-counts, never under-counts).
	if got, want := shared(l, Request{APIKey: "k2"}, 3), 2; got != want {
		t.Errorf("admitted %d after recovery, want the shared limit %d", got, want)
	}
}

// shared admits r n times and returns how many were allowed, failing the test on a fallback decision.
func shared(l *Limiter, r Request, n int) int {
	allowed := 0
	for range n {
		d := l.Admit(context.Background(), r)
		if d.Fallback {
			return -1
		}
		if d.Allowed {
			allowed++
		}
	}
	return allowed
}

// TestRejectCache checks that a replica rejects a key set Redis rejected without asking again until Retry-After
// has passed, and asks again after.
func TestRejectCache(t *testing.T) {
	t.Parallel()
	for _, noCache := range []bool{false, true} {
		t.Run("NoRejectCache="+strconv.FormatBool(noCache), func(t *testing.T) {
			t.Parallel()
			testRejectCache(t, noCache)
		})
	}
}

func testRejectCache(t *testing.T, noCache bool) {
	srv := redistest.Start(t)
	c := newClient(t, srv)
	l := mustNew(t, Options{Redis: c, RedisTimeout: testRedisTimeout, NoRejectCache: noCache, Policies: []Policy{
		{Name: "slow", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Hour},
		{Name: "fast", Key: KeyIP, Limit: 1, Burst: 1, Period: 300 * time.Millisecond},
	}})
	ctx := context.Background()
	slow, fast := Request{APIKey: "k"}, Request{IP: "ip"}
	if got := shared(l, slow, 2); got != 1 {
		t.Fatalf("admitted %d, want 1", got)
	}
	// Forget the state in Redis: only a cached rejection still rejects.
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	d := l.Admit(ctx, slow)
	if got, want := d.Allowed, noCache; got != want {
		t.Errorf("after FLUSHALL: allowed %v, want %v", got, want)
	}
	if !d.Allowed && (d.RateLimit() != `"slow";r=0;t=3600` || RetryAfterSeconds(d.RetryAfter) != 3600) {
		t.Errorf("cached rejection: RateLimit %q, Retry-After %d", d.RateLimit(), RetryAfterSeconds(d.RetryAfter))
	}
	if got := RetryAfterSeconds(l.Status(ctx, slow)); got != 3600 && !noCache {
		t.Errorf("Status from the cache = %ds, want 3600", got)
	}
	// The cached rejection ends with its Retry-After.
	if got := shared(l, fast, 1); got != 1 {
		t.Fatalf("fast: admitted %d, want 1", got)
	}
	d = l.Admit(ctx, fast)
	if d.Allowed {
		t.Fatal("fast: second request allowed")
	}
	time.Sleep(d.RetryAfter)
	if d := l.Admit(ctx, fast); !d.Allowed {
		t.Errorf("fast: rejected after its Retry-After (%s)", d.RetryAfter)
	}
}

// TestRejectCacheOverrides checks that a rejection under one api_key's override is not reused for another api_key
// that shares the counted key (here the client IP) under different numbers.
func TestRejectCacheOverrides(t *testing.T) {
	t.Parallel()
	l := mustNew(t, Options{Redis: newClient(t, redistest.Start(t)), RedisTimeout: testRedisTimeout,
		Policies:  []Policy{{Name: "ip", Key: KeyIP, Limit: 1, Burst: 1, Period: time.Hour}},
		Overrides: []Override{{APIKey: "vip", Policy: "ip", Limit: 2, Burst: 2, Period: time.Hour}},
	})
	vip, plain := Request{APIKey: "vip", IP: "ip"}, Request{APIKey: "plain", IP: "ip"}
	// vip's request moves the shared TAT half an hour ahead: a whole bucket under plain's 1 per hour, half of
	// one under vip's 2 per hour.
	if got := shared(l, vip, 1); got != 1 {
		t.Fatalf("vip: admitted %d, want 1", got)
	}
	if got := shared(l, plain, 1); got != 0 {
		t.Fatalf("plain: admitted %d, want 0", got)
	}
	if got := shared(l, vip, 1); got != 1 {
		t.Errorf("vip after plain was rejected: admitted %d, want 1", got)
	}
}

// TestCredits checks that a fast policy far from its limit is mostly admitted on credits, without Redis, and that
// NoCredits turns that off.
func TestCredits(t *testing.T) {
	t.Parallel()
	for _, noCredits := range []bool{false, true} {
		t.Run("NoCredits="+strconv.FormatBool(noCredits), func(t *testing.T) {
			srv := redistest.Start(t)
			l := mustNew(t, Options{Redis: newClient(t, srv), RedisTimeout: testRedisTimeout, NoCredits: noCredits,
				Policies: []Policy{{Name: "fast", Key: KeyAPIKey, Limit: 1_000_000, Burst: 1_000_000, Period: time.Second}}})
			if got := shared(l, Request{APIKey: "k"}, 170); got != 170 {
				t.Fatalf("admitted %d of 170 (-1: fallback)", got)
			}
			hits := creditsSpent(l)
			if noCredits && hits != 0 {
				t.Errorf("%d requests admitted on credits with NoCredits", hits)
			}
			if !noCredits && hits < 100 {
				t.Errorf("%d of 170 requests admitted on credits, want most (up to 64 per grant)", hits)
			}
		})
	}
}

// TestCreditsNeverExceed drives three replicas hard against a policy fast enough for credits: the replicas
// together must not admit more than the policy (every credit is a slot counted in Redis).
func TestCreditsNeverExceed(t *testing.T) {
	t.Parallel()
	const (
		limit  = 1000 // per second: 1 ms apart, so up to 10 credits per grant
		burst  = 100
		period = time.Second
	)
	ls := replicas(t, redistest.Start(t), 3, Options{RedisTimeout: testRedisTimeout, Policies: []Policy{
		{Name: "fast", Key: KeyAPIKey, Limit: limit, Period: period, Burst: burst},
	}})
	n := drive(ls, Request{APIKey: "acme"}, time.Second, 0)
	var onCredit int64
	for _, l := range ls {
		onCredit += creditsSpent(l)
	}
	most := burst + int64(n.elapsed/(period/limit)) + 1
	t.Logf("admitted %d in %s (at most %d), %d on credits", n.allowed.Load(), n.elapsed, most, onCredit)
	if n.fallback.Load() > 0 {
		t.Fatalf("%d decisions without Redis", n.fallback.Load())
	}
	if n.allowed.Load() > most {
		t.Errorf("admitted %d, more than the policy allows in %s (%d)", n.allowed.Load(), n.elapsed, most)
	}
}

// load is what drive counted.
type load struct {
	offered, allowed, fallback atomic.Int64
	elapsed                    time.Duration
}

// drive sends r to every replica from two clients each, back to back with pause between requests, for d.
func drive(ls []*Limiter, r Request, d, pause time.Duration) *load {
	n := &load{}
	start := time.Now()
	var wg sync.WaitGroup
	for _, l := range ls {
		for range 2 {
			wg.Go(func() { n.send(l, r, start.Add(d), pause) })
		}
	}
	wg.Wait()
	n.elapsed = time.Since(start)
	return n
}

// send is one client of drive.
func (n *load) send(l *Limiter, r Request, until time.Time, pause time.Duration) {
	for time.Now().Before(until) {
		d := l.Admit(context.Background(), r)
		n.offered.Add(1)
		if d.Allowed {
			n.allowed.Add(1)
		}
		if d.Fallback {
			n.fallback.Add(1)
		}
		if pause > 0 {
			time.Sleep(pause)
		}
	}
}
