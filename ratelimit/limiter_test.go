package ratelimit

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// Counting tests use hour-long periods so that no quota refills while a test runs, whatever the machine's load.

func TestAdmitBoundary(t *testing.T) { eachBackend(t, testAdmitBoundary) }

func testAdmitBoundary(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: 5, Burst: 5, Period: time.Hour},
	}})
	r := Request{APIKey: "k1", User: "alice", IP: "10.0.0.1"}
	ctx := context.Background()
	for i := range 5 {
		d := l.Admit(ctx, r)
		if !d.Allowed || !d.Limited {
			t.Fatalf("request %d: allowed=%v limited=%v, want both", i+1, d.Allowed, d.Limited)
		}
		// t: until fully restored, or, once r is 0, until the next request fits.
		tt := 720 * (i + 1)
		if i == 4 {
			tt = 720
		}
		if got, want := d.RateLimit(), `"account";r=`+strconv.Itoa(4-i)+`;t=`+strconv.Itoa(tt); got != want {
			t.Errorf("request %d: RateLimit %q, want %q", i+1, got, want)
		}
	}
	d := l.Admit(ctx, r)
	if d.Allowed {
		t.Fatal("request 6 allowed, want rejected")
	}
	if got, want := RetryAfterSeconds(d.RetryAfter), 720; got != want {
		t.Errorf("Retry-After %d, want %d", got, want)
	}
	if got, want := d.Policy, `"account";q=5;w=3600`; got != want {
		t.Errorf("RateLimit-Policy %q, want %q", got, want)
	}
	if got, want := d.RateLimit(), `"account";r=0;t=720`; got != want {
		t.Errorf("RateLimit %q, want %q", got, want)
	}
	if d.Fallback {
		t.Error("decided by the fallback")
	}
	// Another api_key has its own quota.
	if d := l.Admit(ctx, Request{APIKey: "k2"}); !d.Allowed {
		t.Error("other api_key rejected")
	}
}

func TestBurst(t *testing.T) { eachBackend(t, testBurst) }

func testBurst(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "b", Key: KeyAPIKey, Limit: 2, Period: time.Hour, Burst: 7},
	}})
	got, last := admitN(l, Request{APIKey: "k"}, 10)
	if want := 7; got != want {
		t.Errorf("admitted %d of 10, want the burst %d", got, want)
	}
	// After the burst the rate applies: the next slot is one interval (30 min) away.
	if got, want := RetryAfterSeconds(last.RetryAfter), 1800; got != want {
		t.Errorf("Retry-After %d, want %d", got, want)
	}
}

func TestKeys(t *testing.T) { eachBackend(t, func(t *testing.T, b string) { testKeys(t, b, nil) }) }

// TestKeysMemo is TestKeys with every request asked through one Memo, as a connection's requests are: a
// request whose identity differs from the last one's gets its own keys.
func TestKeysMemo(t *testing.T) {
	eachBackend(t, func(t *testing.T, b string) { testKeys(t, b, &Memo{}) })
}

func testKeys(t *testing.T, backend string, memo *Memo) {
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "per-user", Key: KeyUser, Limit: 1, Burst: 1, Period: time.Hour},
		{Name: "per-ip", Key: KeyIP, Limit: 3, Burst: 3, Period: time.Hour},
	}})
	ctx := context.Background()
	tests := []struct {
		name    string
		r       Request
		allowed bool
		limited bool
	}{
		{"no user, no ip: no policy matches", Request{APIKey: "k"}, true, false},
		{"alice", Request{APIKey: "k", User: "alice", IP: "1.1.1.1"}, true, true},
		{"alice again", Request{APIKey: "k", User: "alice", IP: "1.1.1.1"}, false, true},
		{"alice under another api_key", Request{APIKey: "k2", User: "alice", IP: "1.1.1.1"}, true, true},
		{"bob, same ip", Request{APIKey: "k", User: "bob", IP: "1.1.1.1"}, true, true},
		{"carol, ip quota spent", Request{APIKey: "k", User: "carol", IP: "1.1.1.1"}, false, true},
		{"carol, other ip", Request{APIKey: "k", User: "carol", IP: "2.2.2.2"}, true, true},
		{"ip only", Request{IP: "3.3.3.3"}, true, true},
	}
	for _, tt := range tests {
		r := tt.r
		r.Memo = memo
		d := l.Admit(ctx, r)
		if got, want := [2]bool{d.Allowed, d.Limited}, [2]bool{tt.allowed, tt.limited}; got != want {
			t.Errorf("%s: allowed, limited = %v, want %v", tt.name, got, want)
		}
	}
}

// A Memo is used only for the identity and the Limiter it was made for: not when the bytes under a caller's
// string changed since (gateways pass strings over reused buffers), and not with another Limiter (a reload).
func TestMemoFollowsItsInputs(t *testing.T) {
	one := []Policy{{Name: "one", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Hour}}
	ctx := context.Background()
	t.Run("reused buffer", func(t *testing.T) {
		l := newLimiter(t, "local", Options{Policies: one})
		var m Memo
		buf := []byte("aaaa")
		key := unsafe.String(&buf[0], len(buf))
		if d := l.Admit(ctx, Request{APIKey: key, Memo: &m}); !d.Allowed {
			t.Fatal("first request of aaaa rejected")
		}
		copy(buf, "bbbb")
		if d := l.Admit(ctx, Request{APIKey: key, Memo: &m}); !d.Allowed {
			t.Error("first request of bbbb rejected: counted as aaaa's")
		}
	})
	t.Run("another limiter", func(t *testing.T) {
		l := newLimiter(t, "local", Options{Policies: one})
		other := newLimiter(t, "local", Options{Policies: []Policy{
			{Name: "two", Key: KeyAPIKey, Limit: 5, Burst: 5, Period: time.Hour}}})
		var m Memo
		l.Admit(ctx, Request{APIKey: "k", Memo: &m})
		// Under policy one (a burst of 1) the second would be rejected.
		if got, _ := admitN(other, Request{APIKey: "k", Memo: &m}, 3); got != 3 {
			t.Errorf("the other limiter admitted %d of 3, want 3 (its policy's burst is 5)", got)
		}
	})
}

// TestEveryPolicyMustAdmit checks that a request rejected by one policy does not consume another's quota.
func TestEveryPolicyMustAdmit(t *testing.T) { eachBackend(t, testEveryPolicyMustAdmit) }

func testEveryPolicyMustAdmit(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour},
		{Name: "ip", Key: KeyIP, Limit: 3, Burst: 3, Period: time.Hour},
	}})
	ctx := context.Background()
	steps := []struct {
		r         Request
		allowed   bool
		rateLimit string
	}{
		{Request{APIKey: "a", IP: "ip1"}, true, `"account";r=1;t=1800, "ip";r=2;t=1200`},
		{Request{APIKey: "a", IP: "ip1"}, true, `"account";r=0;t=1800, "ip";r=1;t=2400`},
		{Request{APIKey: "a", IP: "ip1"}, false, `"account";r=0;t=1800, "ip";r=1;t=2400`}, // ip not consumed
		{Request{APIKey: "b", IP: "ip1"}, true, `"account";r=1;t=1800, "ip";r=0;t=1200`},
		{Request{APIKey: "c", IP: "ip1"}, false, `"account";r=2;t=0, "ip";r=0;t=1200`},
	}
	for i, s := range steps {
		d := l.Admit(ctx, s.r)
		if got, want := d.Allowed, s.allowed; got != want {
			t.Errorf("step %d: allowed %v, want %v", i+1, got, want)
		}
		if got, want := d.RateLimit(), s.rateLimit; got != want {
			t.Errorf("step %d: RateLimit %q, want %q", i+1, got, want)
		}
		if got, want := d.Policy, `"account";q=2;w=3600, "ip";q=3;w=3600`; got != want {
			t.Errorf("step %d: RateLimit-Policy %q, want %q", i+1, got, want)
		}
	}
}

func TestOverrides(t *testing.T) { eachBackend(t, testOverrides) }

func testOverrides(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{
		Policies:  []Policy{{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour}},
		Overrides: []Override{{APIKey: "vip", Policy: "account", Limit: 4, Burst: 4, Period: 2 * time.Hour}},
	})
	tests := []struct {
		key    string
		want   int
		policy string
	}{
		{"plain", 2, `"account";q=2;w=3600`},
		{"vip", 4, `"account";q=4;w=7200`},
	}
	for _, tt := range tests {
		got, last := admitN(l, Request{APIKey: tt.key}, 6)
		if got != tt.want {
			t.Errorf("%s: admitted %d, want %d", tt.key, got, tt.want)
		}
		if got, want := last.Policy, tt.policy; got != want {
			t.Errorf("%s: RateLimit-Policy %q, want %q", tt.key, got, want)
		}
	}
}

func TestStatusDoesNotConsume(t *testing.T) { eachBackend(t, testStatusDoesNotConsume) }

func testStatusDoesNotConsume(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "account", Key: KeyAPIKey, Limit: 2, Burst: 2, Period: time.Hour},
	}})
	ctx := context.Background()
	r := Request{APIKey: "k"}
	for range 10 {
		if got := l.Status(ctx, r); got != 0 {
			t.Fatalf("Status = %s before any request, want 0", got)
		}
	}
	if d := l.Admit(ctx, r); d.RateLimit() != `"account";r=1;t=1800` {
		t.Errorf("first request after Status: RateLimit %q, want r=1", d.RateLimit())
	}
	l.Admit(ctx, r)
	for range 5 {
		if got, want := RetryAfterSeconds(l.Status(ctx, r)), 1800; got != want {
			t.Fatalf("Status = %ds when spent, want %ds", got, want)
		}
	}
	if got := l.Status(ctx, Request{}); got != 0 {
		t.Errorf("Status without a matching policy = %s, want 0", got)
	}
}

// TestShaping holds requests over the rate for their slots: forwarded in order, one interval apart, and rejects
// those whose slot lies beyond max_delay.
func TestShaping(t *testing.T) { eachBackend(t, testShaping) }

func testShaping(t *testing.T, backend string) {
	const interval = 400 * time.Millisecond
	l := newLimiter(t, backend, Options{Policies: []Policy{
		{Name: "shaped", Key: KeyAPIKey, Limit: 5, Period: 5 * interval, Burst: 1, MaxDelay: 2*interval + interval/2},
	}})
	// Slot 0 is immediate, slots 1 and 2 are held (0.4 s, 0.8 s); later ones are beyond max_delay.
	var forwarded []Decision
	rejected := 0
	for _, d := range admitAtOnce(l, Request{APIKey: "k"}, 6) {
		if d.Allowed {
			forwarded = append(forwarded, d)
			continue
		}
		rejected++
		if d.RetryAfter <= 0 {
			t.Errorf("rejected with RetryAfter %s", d.RetryAfter)
		}
	}
	if got, want := len(forwarded), 3; got != want {
		t.Fatalf("forwarded %d, want %d (rejected %d)", got, want, rejected)
	}
	unit := int64(1) // local slots are in nanoseconds, Redis slots in microseconds
	if backend != "local" {
		unit = int64(time.Microsecond)
	}
	held := 0
	for i, d := range forwarded {
		if d.Delay > 0 {
			held++
		}
		// Forwarded in slot order, slots exactly one interval apart.
		if got, want := d.slot-forwarded[max(0, i-1)].slot, int64(interval)/unit; i > 0 && got != want {
			t.Errorf("forward %d: slot %d after the previous one, want %d", i, got, want)
		}
	}
	if got, want := held, 2; got != want {
		t.Errorf("held %d requests, want %d", got, want)
	}
}

// admitAtOnce admits r n times concurrently and returns the decisions in the order Admit returned them.
func admitAtOnce(l *Limiter, r Request, n int) []Decision {
	var mu sync.Mutex
	var ds []Decision
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			d := l.Admit(context.Background(), r)
			mu.Lock()
			ds = append(ds, d)
			mu.Unlock()
		})
	}
	wg.Wait()
	return ds
}

// TestMaxHeld checks that once MaxHeld requests of a key are held, further ones are rejected, not queued.
func TestMaxHeld(t *testing.T) { eachBackend(t, testMaxHeld) }

func testMaxHeld(t *testing.T, backend string) {
	l := newLimiter(t, backend, Options{MaxHeld: 1, Policies: []Policy{
		{Name: "shaped", Key: KeyAPIKey, Limit: 1, Period: time.Second, Burst: 1, MaxDelay: time.Minute},
	}})
	ctx := context.Background()
	r := Request{APIKey: "k"}
	if d := l.Admit(ctx, r); !d.Allowed || d.Delay != 0 {
		t.Fatalf("first request: allowed=%v delay=%s, want immediate", d.Allowed, d.Delay)
	}
	done := make(chan Decision)
	go func() { done <- l.Admit(ctx, r) }()
	key := l.rules[0].key(r)
	for l.heldCount(key) == 0 || heldDelayed(l) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	d := l.Admit(ctx, r)
	if d.Allowed {
		t.Errorf("third request allowed (delay %s), want rejected while one is held", d.Delay)
	}
	if got := <-done; !got.Allowed || got.Delay <= 0 {
		t.Errorf("held request: allowed=%v delay=%s, want allowed after a delay", got.Allowed, got.Delay)
	}
}

// heldDelayed reports whether some request is sleeping for its slot (it has passed the decision).
func heldDelayed(l *Limiter) int { return int(l.held.sleeping.Load()) }

func TestHeldRequestCancelled(t *testing.T) {
	t.Parallel()
	l := newLimiter(t, "local", Options{Policies: []Policy{
		{Name: "shaped", Key: KeyAPIKey, Limit: 1, Period: time.Hour, Burst: 1, MaxDelay: 2 * time.Hour},
	}})
	r := Request{APIKey: "k"}
	l.Admit(context.Background(), r)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Decision)
	go func() { done <- l.Admit(ctx, r) }()
	for heldDelayed(l) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if d := <-done; d.Allowed {
		t.Error("cancelled held request allowed")
	}
	if got := l.heldCount(l.rules[0].key(r)); got != 0 {
		t.Errorf("held count %d after cancel, want 0", got)
	}
}

// TestManyPolicies goes past the fixed-size buffers of the request path.
func TestManyPolicies(t *testing.T) {
	t.Parallel()
	var ps []Policy
	for i := range 12 {
		ps = append(ps, Policy{Name: "p" + strconv.Itoa(i), Key: []string{KeyAPIKey, KeyUser, KeyIP}[i%3],
			Limit: 2 + i, Burst: 2 + i, Period: time.Hour, MaxDelay: time.Duration(i%2) * time.Nanosecond})
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			l := newLimiter(t, backend, Options{Policies: ps})
			got, last := admitN(l, Request{APIKey: "k", User: "u", IP: "ip"}, 3)
			if got != 2 {
				t.Errorf("admitted %d, want 2 (the smallest policy)", got)
			}
			if n := strings.Count(last.RateLimit(), ";r="); n != 12 {
				t.Errorf("RateLimit lists %d policies, want 12: %s", n, last.RateLimit())
			}
			if l.Status(context.Background(), Request{APIKey: "k", User: "u", IP: "ip"}) <= 0 {
				t.Error("Status reports available after the smallest policy is spent")
			}
		})
	}
}

// TestAdmitAllocations guards the request path's allocations: the key of the matching policy, nothing else
// (none with a Memo that has it),
// both in process and on the Redis path a flood takes (the reject cache). A query the compiler could not keep
// on the stack (store.go) would add one per buffer. Not parallel: AllocsPerRun counts the whole process.
func TestAdmitAllocations(t *testing.T) {
	for _, backend := range []string{"local", "redis-ap"} {
		t.Run(backend, func(t *testing.T) {
			l := newLimiter(t, backend, Options{Policies: []Policy{
				{Name: "account", Key: KeyAPIKey, Limit: 1, Burst: 1, Period: time.Hour}}})
			r := Request{APIKey: "k", IP: "10.0.0.1"}
			admitN(l, r, 2) // the second is rejected by Redis, and remembered
			if got := testing.AllocsPerRun(100, func() { l.Admit(context.Background(), r) }); got != 1 {
				t.Errorf("Admit: %.1f allocations, want 1 (the policy key)", got)
			}
			r.Memo = &Memo{}
			l.Admit(context.Background(), r)
			if got := testing.AllocsPerRun(100, func() { l.Admit(context.Background(), r) }); got != 0 {
				t.Errorf("Admit with a Memo of the same identity: %.1f allocations, want 0", got)
			}
		})
	}
}
