package gateway

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// TestFailureCounters checks which counters an attempt is charged to: an IPv6 client by its /64, an api_key
// that cannot name an account against the address only, and, with the store full, new keys in the coarse
// counters rather than in place of open ones.
func TestFailureCounters(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	limits := failureLimits{window: time.Minute, maxUserIP: 3, maxIP: 5, maxUserAll: 100}

	t.Run("IPv6 addresses of one /64 share a count", func(t *testing.T) {
		f := newFailures(limits, 100, clock)
		for i := range 5 {
			if w := f.reserve("2001:db8:1:2::"+strconv.Itoa(i+1), "acme", "u"+strconv.Itoa(i)).wait; w != 0 {
				t.Fatalf("attempt %d refused", i)
			}
		}
		if w := f.reserve("2001:db8:1:2:ffff::9", "acme", "other").wait; w == 0 {
			t.Error("a sixth address of the same /64 was not refused at the per-address limit")
		}
		if w := f.reserve("2001:db8:1:3::1", "acme", "other").wait; w != 0 {
			t.Error("an address of another /64 was refused")
		}
		if w := f.reserve("::ffff:192.0.2.1", "acme", "other").wait; w != 0 {
			t.Error("an IPv4-mapped address was refused")
		}
	})

	t.Run("an api_key that cannot exist is counted per address only", func(t *testing.T) {
		f := newFailures(limits, 100, clock)
		for i := range 5 {
			if w := f.reserve("192.0.2.1", "no.such", "name"+strconv.Itoa(i)).wait; w != 0 {
				t.Fatalf("attempt %d refused", i)
			}
		}
		if n := f.m.Len(); n != 1 {
			t.Errorf("%d counters held, want 1 (the address)", n)
		}
		if w := f.reserve("192.0.2.1", "acme", "alice").wait; w == 0 {
			t.Error("the address's sixth attempt was not refused")
		}
	})

	t.Run("a full store keeps open counts and counts new keys coarsely", func(t *testing.T) {
		f := newFailures(limits, 3, clock)
		for range 3 {
			f.reserve("192.0.2.1", "acme", "alice")
		}
		if w := f.reserve("192.0.2.1", "acme", "alice").wait; w == 0 {
			t.Fatal("the fourth guess at alice was not refused")
		}
		// The store is full (3 counters); a flood of new names from new addresses must not displace them.
		for i := range 50 {
			f.reserve("198.51.100."+strconv.Itoa(i), "acme", "name"+strconv.Itoa(i))
		}
		if w := f.reserve("192.0.2.1", "acme", "alice").wait; w == 0 {
			t.Error("the blocked guesser got another guess after the flood")
		}
		// A new key's attempts beyond its limit are refused in the coarse counters too.
		for range 3 {
			f.reserve("203.0.113.7", "acme", "bob")
		}
		if w := f.reserve("203.0.113.7", "acme", "bob").wait; w == 0 {
			t.Error("a key counted only coarsely passed its limit")
		}
		// When the window ends, the store takes new keys again.
		now = now.Add(time.Minute)
		if w := f.reserve("203.0.113.7", "acme", "bob").wait; w != 0 {
			t.Error("refused after the window ended")
		}
		if _, ok := f.m.Get("ui\x00acme\x00bob\x00203.0.113.7", now); !ok {
			t.Error("the store took no new key after its windows ended")
		}
	})
}

// TestKnownAddresses checks the exemption from the limit of all addresses together: only a login the core
// proved makes a network known, for its user alone, by its /24 or /64, for the TTL; the newest networks of a
// user are kept; and past the limit the count of all addresses keeps growing for everyone else.
func TestKnownAddresses(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	limits := failureLimits{window: 3 * time.Hour, maxUserIP: 100, maxIP: 100, maxUserAll: 3}
	f := newFailures(limits, 1000, clock)
	f.known = newKnownAddrs(time.Hour, 100)
	excess := func(ip, user string) int {
		t.Helper()
		r := f.reserve(ip, "acme", user)
		if r.wait != 0 {
			t.Fatalf("attempt from %s refused (%v)", ip, r.wait)
		}
		return r.excess
	}

	f.succeeded("192.0.2.10", "acme", "alice")
	f.succeeded("2001:db8:1:2::1", "acme", "alice")
	// A failure is no login: it makes nothing known.
	excess("198.51.100.7", "alice")
	for i := range 2 {
		if n := excess(fmt.Sprintf("203.0.113.%d", i), "alice"); n != 0 {
			t.Fatalf("guess %d under the limit: excess %d", i, n)
		}
	}
	for i, want := range []int{1, 2, 3} {
		if n := excess(fmt.Sprintf("198.51.%d.1", i), "alice"); n != want {
			t.Errorf("stranger %d past the limit: excess %d, want %d", i, n, want)
		}
	}
	for _, ip := range []string{"192.0.2.10", "192.0.2.200", "2001:db8:1:2:ffff::9", "::ffff:192.0.2.33"} {
		if n := excess(ip, "alice"); n != 0 {
			t.Errorf("alice's own network %s: excess %d, want 0", ip, n)
		}
	}
	for _, ip := range []string{"198.51.100.7", "192.0.3.10", "2001:db8:1:3::1"} {
		if n := excess(ip, "alice"); n == 0 {
			t.Errorf("%s, not a network of alice's logins, was let through past the limit", ip)
		}
	}
	if n := excess("192.0.2.10", "alice2"); n != 0 {
		t.Errorf("another user's first attempt: excess %d", n) // under its own limit
	}
	for range 3 {
		excess("203.0.113.50", "bob")
	}
	if n := excess("192.0.2.10", "bob"); n == 0 {
		t.Error("alice's network was known for bob")
	}

	// The newest knownPerUser networks are kept.
	for i := range knownPerUser + 1 {
		now = now.Add(time.Second)
		f.succeeded(fmt.Sprintf("10.%d.0.1", i), "acme", "carol")
	}
	for range 3 {
		excess("203.0.113.60", "carol")
	}
	if n := excess("10.0.0.1", "carol"); n == 0 {
		t.Error("the oldest of too many networks is still known")
	}
	if n := excess(fmt.Sprintf("10.%d.0.1", knownPerUser), "carol"); n != 0 {
		t.Error("the newest network is not known")
	}

	// Past the TTL the network is a stranger's again; the counts (window 3h) are still there.
	now = now.Add(time.Hour)
	if n := excess("192.0.2.10", "alice"); n == 0 {
		t.Error("a network known longer than the TTL ago was let through past the limit")
	}
}

// TestStrangerHolds checks the growing wait of attempts past the limit of all addresses, its bound, and the
// bounds on the attempts waiting at once, per user and in all.
func TestStrangerHolds(t *testing.T) {
	for _, tt := range []struct {
		excess int
		max    time.Duration
		want   time.Duration
	}{
		{1, 8 * time.Second, 250 * time.Millisecond},
		{2, 8 * time.Second, 500 * time.Millisecond},
		{4, 8 * time.Second, 2 * time.Second},
		{6, 8 * time.Second, 8 * time.Second},
		{1000, 8 * time.Second, 8 * time.Second},
		{3, 700 * time.Millisecond, 700 * time.Millisecond},
	} {
		if got := strangerDelay(tt.excess, tt.max); got != tt.want {
			t.Errorf("strangerDelay(%d, %v) = %v, want %v", tt.excess, tt.max, got, tt.want)
		}
	}

	h := newStrangerHolds(6)
	for i := range strangerHoldsPerUser {
		if !h.acquire("acme", "alice") {
			t.Fatalf("wait %d of one user refused", i)
		}
	}
	if h.acquire("acme", "alice") {
		t.Error("one user got more than strangerHoldsPerUser waits")
	}
	if !h.acquire("acme", "bob") || !h.acquire("globex", "alice") {
		t.Fatal("other users found no room")
	}
	if h.acquire("acme", "carol") {
		t.Error("more waits than the bound of all users")
	}
	h.release("acme", "alice")
	if !h.acquire("acme", "carol") {
		t.Error("a released wait was not given back")
	}
}
