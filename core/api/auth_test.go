package api

import (
	"testing"
	"time"
)

// The digest separates its parts, so shifting characters between api_key, username and password changes it.
func TestCredentialDigest(t *testing.T) {
	a := newAuthCache(time.Minute, time.Now)
	creds := [][3]string{
		{"acme", "alice", "secret"},
		{"acm", "ealice", "secret"},
		{"acme", "alices", "ecret"},
		{"acme", "alice", "secret "},
		{"", "", ""},
	}
	seen := map[[32]byte]int{}
	for i, c := range creds {
		d := a.digest(c[0], c[1], c[2])
		if j, ok := seen[d]; ok {
			t.Errorf("credentials %d and %d share a digest", i, j)
		}
		seen[d] = i
		if again := a.digest(c[0], c[1], c[2]); again != d {
			t.Errorf("digest of %q is not stable", c)
		}
	}
	if b := newAuthCache(time.Minute, time.Now); b.digest("acme", "alice", "secret") == a.digest("acme", "alice", "secret") {
		t.Errorf("two caches share a key")
	}
}

// Entries expire with the TTL, and the cache stays bounded.
func TestAuthCacheBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	a := newAuthCache(time.Minute, func() time.Time { return now })
	d := a.digest("k", "u", "p")
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
