package credkey

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/reqgate/reqgate/internal/race"
)

// The digest separates its parts: moving characters between api_key, username and password changes it.
func TestSumSeparatesParts(t *testing.T) {
	h := New()
	creds := [][3]string{
		{"acme", "alice", "secret"},
		{"acm", "ealice", "secret"},
		{"acme", "alices", "ecret"},
		{"acme", "alice", "secret "},
		{"acmealice", "", "secret"},
		{"", "", ""},
		{"", "", "\x00\x00\x00\x00"},
	}
	seen := map[[Size]byte]int{}
	for i, c := range creds {
		d := h.Sum(c[0], c[1], c[2])
		if j, ok := seen[d]; ok {
			t.Errorf("credentials %q and %q share a digest", c, creds[j])
		}
		seen[d] = i
		if again := h.Sum(c[0], c[1], c[2]); again != d {
			t.Errorf("digest of %q is not stable", c)
		}
		if b := h.SumBytes(c[0], []byte(c[1]), []byte(c[2])); b != d {
			t.Errorf("SumBytes of %q differs from Sum", c)
		}
	}
	if New().Sum("acme", "alice", "secret") == h.Sum("acme", "alice", "secret") {
		t.Errorf("two Hashers share a key")
	}
}

// The digest is HMAC-SHA256 of the parts, each after its length as four bytes, big-endian.
func TestSumIsLengthPrefixedHMAC(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	h := &Hasher{}
	h.states.New = func() any { return &state{mac: hmac.New(sha256.New, key)} }
	for _, c := range [][3]string{{"acme", "alice", "secret"}, {"", "", ""}, {"k", "ü", "p:w"}} {
		m := hmac.New(sha256.New, key)
		for _, s := range c {
			m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(s))))
			m.Write([]byte(s))
		}
		var want [Size]byte
		copy(want[:], m.Sum(nil))
		if got := h.Sum(c[0], c[1], c[2]); got != want {
			t.Errorf("Sum(%q) = %x, want %x", c, got, want)
		}
	}
}

func TestSumAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("under the race detector sync.Pool drops items at random, so pooled state is made again")
	}
	h := New()
	user, pass := []byte("alice"), []byte("secret")
	h.SumBytes("acme", user, pass)
	if n := testing.AllocsPerRun(100, func() { h.SumBytes("acme", user, pass) }); n != 0 {
		t.Errorf("SumBytes allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { h.Sum("acme", "alice", "secret") }); n != 0 {
		t.Errorf("Sum allocates %v times", n)
	}
}

func BenchmarkSumBytes(b *testing.B) {
	h := New()
	user, pass := []byte("alice"), []byte("secret")
	b.ReportAllocs()
	for b.Loop() {
		h.SumBytes("acme", user, pass)
	}
}
