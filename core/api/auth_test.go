package api

import (
	"testing"
	"time"
)

// Entries expire with the TTL, and the cache stays bounded.
func TestAuthCacheBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAuthCache(time.Minute, func() time.Time { return now })
	d := a.keys.Sum("k", "u", "p")
	a.put(d, authEntry{})
	if _, ok := a.get(d); !ok {
		t.Fatalf("fresh entry not found")
	}
	now = now.Add(time.Minute)
	if _, ok := a.get(d); ok {
		t.Fatalf("expired entry found")
	}
	for i := 0; i < maxAuthEntries+10; i++ {
		var k [32]byte
		k[0], k[1], k[2] = byte(i), byte(i>>8), byte(i>>16)
		a.put(k, authEntry{})
	}
	if got := a.m.Len(); got > maxAuthEntries {
		t.Errorf("%d entries, want at most %d", got, maxAuthEntries)
	}
	off := newAuthCache(-1, time.Now)
	off.put(d, authEntry{})
	if _, ok := off.get(d); ok {
		t.Errorf("a disabled cache remembered a credential")
	}
}
