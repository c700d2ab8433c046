package ratelimit

import (
	"context"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// windowPolicy is the policy that reproduces the mirrored service's throttle, with the numbers of the test.
func windowPolicy(limit int, period, block time.Duration) Policy {
	return Policy{Name: "account", Key: KeyAPIKey, Limit: limit, Burst: limit, Period: period,
		Algorithm: AlgorithmWindow, Block: block}
}

// TestWindowNeverOverLimit sends calls at irregular, controlled times (several at the same instant, gaps short and
// long) and checks the sliding window both ways: no period-long interval, wherever it starts, holds more than
// limit admitted calls, and every call is admitted when fewer than limit were admitted in the period before it
// (so the window slides with each call, unlike fixed buckets or GCRA's burst on top of its rate).
func TestWindowNeverOverLimit(t *testing.T) { eachBackend(t, testWindowNeverOverLimit) }

func testWindowNeverOverLimit(t *testing.T, backend string) {
	const limit, period = 5, 10 * time.Second
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := newLimiter(t, backend, Options{Policies: []Policy{windowPolicy(limit, period, 0)}, Now: clk.Now})
	rnd := rand.New(rand.NewPCG(1, 2))
	r := Request{APIKey: "k"}
	start := clk.Now()
	var admitted []time.Duration // since start
	for i := range 400 {
		switch rnd.IntN(4) {
		case 0: // same instant as the last call
		case 1:
			clk.Add(time.Duration(rnd.IntN(1000)) * time.Millisecond)
		default:
			clk.Add(time.Duration(rnd.IntN(4000)) * time.Millisecond)
		}
		at := clk.Now().Sub(start)
		inWindow := 0
		for _, a := range admitted {
			if a > at-period {
				inWindow++
			}
		}
		d := l.Admit(context.Background(), r)
		if d.Fallback {
			t.Fatalf("call %d decided by the fallback, not by %s", i, backend)
		}
		if want := inWindow < limit; d.Allowed != want {
			t.Fatalf("call %d at %s: allowed=%v with %d admitted in the last %s, want %v", i, at, d.Allowed,
				inWindow, period, want)
		}
		if d.Allowed {
			admitted = append(admitted, at)
			continue
		}
		// Retry-After is when the oldest call of the window leaves it.
		oldest := admitted[len(admitted)-limit]
		if got, want := d.RetryAfter, oldest+period-at; got != want {
			t.Fatalf("call %d at %s: retry after %s, want %s", i, at, got, want)
		}
	}
	sort.Slice(admitted, func(i, j int) bool { return admitted[i] < admitted[j] })
	for i, a := range admitted {
		n := 0
		for _, b := range admitted[i:] {
			if b < a+period {
				n++
			}
		}
		if n > limit {
			t.Fatalf("%d calls admitted in the %s from %s, want at most %d", n, period, a, limit)
		}
	}
	if len(admitted) < 100 {
		t.Fatalf("only %d of 400 calls admitted: the sequence does not exercise the window", len(admitted))
	}
}

// TestWindowFullPeriod is the mirrored service's own case: 25 calls admitted in a 10-second window, the 26th
// refused, and a GCRA-style refill (one call every 400ms) never admits another until the first call's 10 s
// have passed.
func TestWindowFullPeriod(t *testing.T) { eachBackend(t, testWindowFullPeriod) }

func testWindowFullPeriod(t *testing.T, backend string) {
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := newLimiter(t, backend, Options{Policies: []Policy{windowPolicy(25, 10*time.Second, 0)}, Now: clk.Now})
	r := Request{APIKey: "k"}
	ctx := context.Background()
	for i := range 25 {
		d := l.Admit(ctx, r)
		if !d.Allowed {
			t.Fatalf("call %d refused", i+1)
		}
		if i == 0 {
			if got, want := d.RateLimit(), `"account";r=24;t=10`; got != want {
				t.Errorf("call 1: RateLimit %q, want %q", got, want)
			}
		}
	}
	for i := range 24 { // 9.6 s on: still within the first call's window
		clk.Add(400 * time.Millisecond)
		if d := l.Admit(ctx, r); d.Allowed {
			t.Fatalf("call at +%s admitted: 25 already in the last 10s", time.Duration(i+1)*400*time.Millisecond)
		}
	}
	d := l.Admit(ctx, r)
	if got, want := d.RateLimit(), `"account";r=0;t=1`; got != want {
		t.Errorf("refused: RateLimit %q, want %q", got, want)
	}
	if got, want := d.RetryAfter, 400*time.Millisecond; got != want {
		t.Errorf("refused at 9.6s: retry after %s, want %s", got, want)
	}
	clk.Add(400 * time.Millisecond)
	d = l.Admit(ctx, r)
	if !d.Allowed {
		t.Fatal("call at 10s refused: the first 25 left the window")
	}
	if got, want := d.RateLimit(), `"account";r=24;t=10`; got != want {
		t.Errorf("at 10s: RateLimit %q, want %q", got, want)
	}
}

// TestWindowBlock: once a call is refused, every call is refused for the block, each refused call starts the
// block again, and Status (rate_throttle_status) counts the time left down without restarting it.
func TestWindowBlock(t *testing.T) { eachBackend(t, testWindowBlock) }

func testWindowBlock(t *testing.T, backend string) {
	const block = 10 * time.Minute
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := newLimiter(t, backend, Options{Policies: []Policy{windowPolicy(3, 10*time.Second, block)}, Now: clk.Now})
	r := Request{APIKey: "k"}
	ctx := context.Background()
	if got, _ := admitN(l, r, 3); got != 3 {
		t.Fatalf("admitted %d of 3", got)
	}
	// A full window but no refused call yet: a call would be admitted once the first call leaves the window.
	if got, want := l.Status(ctx, r), 10*time.Second; got != want {
		t.Fatalf("status with a full window: wait %s, want %s", got, want)
	}
	clk.Add(time.Second)
	d := l.Admit(ctx, r) // the 4th in 10 s: refused, the block starts
	if d.Allowed {
		t.Fatal("4th call in 10s admitted")
	}
	if d.RetryAfter != block {
		t.Fatalf("4th call: retry after %s, want the block %s", d.RetryAfter, block)
	}
	if d.Fallback {
		t.Fatalf("decided by the fallback, not by %s", backend)
	}
	hdr := map[string]string{}
	d.Headers(func(k, v string) { hdr[k] = v })
	if got, want := hdr["Retry-After"], "600"; got != want {
		t.Errorf("Retry-After %q, want %q", got, want)
	}
	if got, want := hdr["RateLimit"], `"account";r=0;t=600`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}

	// try_again_after counts down while the client waits.
	clk.Add(4 * time.Minute)
	if got, want := l.Status(ctx, r), 6*time.Minute; got != want {
		t.Fatalf("status 4 min into the block: %s left, want %s", got, want)
	}
	clk.Add(time.Minute)
	if got, want := l.Status(ctx, r), 5*time.Minute; got != want {
		t.Fatalf("status 5 min into the block: %s left, want %s (status must not restart it)", got, want)
	}
	// Long after the window emptied, a call made while blocked is refused and restarts the block.
	d = l.Admit(ctx, r)
	if d.Allowed || d.RetryAfter != block {
		t.Fatalf("call 5 min into the block: allowed=%v retry %s, want refused for %s", d.Allowed, d.RetryAfter, block)
	}
	clk.Add(9 * time.Minute)
	if got, want := l.Status(ctx, r), time.Minute; got != want {
		t.Fatalf("9 min after the restart: %s left, want %s", got, want)
	}
	if d := l.Admit(ctx, r); d.Allowed || d.RetryAfter != block {
		t.Fatalf("call 9 min after the restart: allowed=%v retry %s, want refused for %s", d.Allowed, d.RetryAfter,
			block)
	}
	clk.Add(block)
	if got := l.Status(ctx, r); got != 0 {
		t.Fatalf("status after a quiet block: %s left, want 0", got)
	}
	if got, _ := admitN(l, r, 3); got != 3 {
		t.Fatalf("after the block: admitted %d of 3, want a fresh window", got)
	}
	// Another api_key was never blocked.
	if d := l.Admit(ctx, Request{APIKey: "other"}); !d.Allowed {
		t.Error("another api_key refused")
	}
}

// TestWindowWithGCRA: a request one policy refuses consumes nothing of the other, whichever algorithm refuses.
func TestWindowWithGCRA(t *testing.T) { eachBackend(t, testWindowWithGCRA) }

func testWindowWithGCRA(t *testing.T, backend string) {
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := newLimiter(t, backend, Options{Now: clk.Now, Policies: []Policy{
		windowPolicy(3, time.Hour, 0),
		{Name: "per-ip", Key: KeyIP, Limit: 2, Burst: 2, Period: time.Hour},
	}})
	ctx := context.Background()
	a := Request{APIKey: "k", IP: "10.0.0.1"}
	if got, _ := admitN(l, a, 3); got != 2 {
		t.Fatalf("admitted %d, want the ip policy's 2", got)
	}
	// The third call was refused by the ip policy: the window counted 2 calls, so another address gets 1.
	if got, _ := admitN(l, Request{APIKey: "k", IP: "10.0.0.2"}, 3); got != 1 {
		t.Fatalf("from another address: admitted %d, want the window's last 1", got)
	}
	// Refused by the window, the call took nothing of 10.0.0.3's ip quota.
	if d := l.Admit(ctx, Request{APIKey: "k", IP: "10.0.0.3"}); d.Allowed {
		t.Fatal("4th call of the window admitted")
	}
	if got, _ := admitN(l, Request{APIKey: "k2", IP: "10.0.0.3"}, 3); got != 2 {
		t.Fatalf("10.0.0.3 after the window's refusal: admitted %d, want 2", got)
	}
}

func TestWindowPolicyRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    Policy
		want string
	}{
		{"unknown algorithm", Policy{Name: "a", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Second,
			Algorithm: "leaky"}, `algorithm "leaky"`},
		{"block on gcra", Policy{Name: "a", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Second,
			Block: time.Minute}, "block applies to algorithm window only"},
		{"max_delay on window", Policy{Name: "a", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Second,
			Algorithm: AlgorithmWindow, MaxDelay: time.Second}, "max_delay applies to algorithm gcra only"},
		{"window too large", windowPolicy(MaxWindowLimit+1, time.Second, 0), "a window policy takes 1 to"},
		{"negative block", windowPolicy(5, time.Second, -time.Second), "must not be negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(withConfig(Options{Policies: []Policy{tt.p}, Logger: quiet}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestFallbackWindowShare: with Redis down, a replica that assumes 3 replicas admits its third of a window
// (rounded down) in any period, then blocks the key as Redis would.
func TestFallbackWindowShare(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	srv.Stop()
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := replicas(t, srv, 1, Options{RedisTimeout: testRedisTimeout, RedisBackoff: time.Hour, LocalReplicas: 3,
		Now: clk.Now, Policies: []Policy{windowPolicy(7, 10*time.Second, time.Minute)}})[0]
	r := Request{APIKey: "k"}
	if got, want := admitDown(t, l, r, 3), 2; got != want {
		t.Fatalf("admitted %d of 3, want %d (7/3 rounded down)", got, want)
	}
	clk.Add(30 * time.Second) // the window emptied, the block (1 min) did not end
	d := l.Admit(context.Background(), r)
	if d.Allowed || d.RetryAfter != time.Minute || !d.Fallback {
		t.Fatalf("call while blocked on the fallback: allowed=%v retry %s fallback=%v, want refused for 1m",
			d.Allowed, d.RetryAfter, d.Fallback)
	}
}

// TestWindowOverride: an override gives one api_key its own limit and period; the algorithm and the block stay
// the policy's.
func TestWindowOverride(t *testing.T) { eachBackend(t, testWindowOverride) }

func testWindowOverride(t *testing.T, backend string) {
	clk := testsupport.NewClock(time.Unix(1_800_000_000, 0))
	l := newLimiter(t, backend, Options{Now: clk.Now, Policies: []Policy{windowPolicy(2, time.Hour, time.Minute)},
		Overrides: []Override{{APIKey: "big", Policy: "account", Limit: 4, Burst: 4, Period: time.Hour}}})
	if got, last := admitN(l, Request{APIKey: "big"}, 6); got != 4 || last.RetryAfter < time.Minute {
		t.Fatalf("overridden key: admitted %d of 6, retry %s, want 4 and a refusal", got, last.RetryAfter)
	}
	if got, _ := admitN(l, Request{APIKey: "small"}, 3); got != 2 {
		t.Fatalf("other key: admitted %d of 3, want the policy's 2", got)
	}
	clk.Add(2 * time.Hour) // the window emptied, the block ended
	if got, _ := admitN(l, Request{APIKey: "big"}, 4); got != 4 {
		t.Fatalf("an hour later: admitted %d of 4", got)
	}
	d := l.Admit(context.Background(), Request{APIKey: "big"})
	if d.Allowed || d.RetryAfter != time.Hour {
		t.Fatalf("5th call: allowed=%v retry %s, want refused until the window's first call leaves it (1h)",
			d.Allowed, d.RetryAfter)
	}
}

// TestWindowReloadAlgorithm: a reload that turns a GCRA policy into a window under the same name starts its
// counts afresh, in Redis as in process (the window's keys are apart from the TATs).
func TestWindowReloadAlgorithm(t *testing.T) { eachBackend(t, testWindowReloadAlgorithm) }

func testWindowReloadAlgorithm(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour}}})
	r := Request{APIKey: "k"}
	if got, _ := admitN(l, r, 3); got != 2 {
		t.Fatalf("gcra: admitted %d of 3", got)
	}
	n, err := l.WithPolicies([]Policy{windowPolicy(3, time.Hour, 0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, last := admitN(n, r, 4)
	if got != 3 || last.Fallback {
		t.Fatalf("window after the reload: admitted %d of 4 (fallback %v), want 3 from Redis or in process", got,
			last.Fallback)
	}
}
