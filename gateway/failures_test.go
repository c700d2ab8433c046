package gateway

import (
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
			if w := f.reserve("2001:db8:1:2::"+strconv.Itoa(i+1), "acme", "u"+strconv.Itoa(i)); w != 0 {
				t.Fatalf("attempt %d refused", i)
			}
		}
		if w := f.reserve("2001:db8:1:2:ffff::9", "acme", "other"); w == 0 {
			t.Error("a sixth address of the same /64 was not refused at the per-address limit")
		}
		if w := f.reserve("2001:db8:1:3::1", "acme", "other"); w != 0 {
			t.Error("an address of another /64 was refused")
		}
		if w := f.reserve("::ffff:192.0.2.1", "acme", "other"); w != 0 {
			t.Error("an IPv4-mapped address was refused")
		}
	})

	t.Run("an api_key that cannot exist is counted per address only", func(t *testing.T) {
		f := newFailures(limits, 100, clock)
		for i := range 5 {
			if w := f.reserve("192.0.2.1", "no.such", "name"+strconv.Itoa(i)); w != 0 {
				t.Fatalf("attempt %d refused", i)
			}
		}
		if n := f.m.Len(); n != 1 {
			t.Errorf("%d counters held, want 1 (the address)", n)
		}
		if w := f.reserve("192.0.2.1", "acme", "alice"); w == 0 {
			t.Error("the address's sixth attempt was not refused")
		}
	})

	t.Run("a full store keeps open counts and counts new keys coarsely", func(t *testing.T) {
		f := newFailures(limits, 3, clock)
		for range 3 {
			f.reserve("192.0.2.1", "acme", "alice")
		}
		if w := f.reserve("192.0.2.1", "acme", "alice"); w == 0 {
			t.Fatal("the fourth guess at alice was not refused")
		}
		// The store is full (3 counters); a flood of new names from new addresses must not displace them.
		for i := range 50 {
			f.reserve("198.51.100."+strconv.Itoa(i), "acme", "name"+strconv.Itoa(i))
		}
		if w := f.reserve("192.0.2.1", "acme", "alice"); w == 0 {
			t.Error("the blocked guesser got another guess after the flood")
		}
		// A new key's attempts beyond its limit are refused in the coarse counters too.
		for range 3 {
			f.reserve("203.0.113.7", "acme", "bob")
		}
		if w := f.reserve("203.0.113.7", "acme", "bob"); w == 0 {
			t.Error("a key counted only coarsely passed its limit")
		}
		// When the window ends, the store takes new keys again.
		now = now.Add(time.Minute)
		if w := f.reserve("203.0.113.7", "acme", "bob"); w != 0 {
			t.Error("refused after the window ended")
		}
		if _, ok := f.m.Get("ui\x00acme\x00bob\x00203.0.113.7", now); !ok {
			t.Error("the store took no new key after its windows ended")
		}
	})
}
