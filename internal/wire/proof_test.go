package wire

import (
	"strings"
	"testing"
)

// TestAuthProofVector pins the proof format the core sends and the gateway checks: both compute it here, and a
// gateway of one release must still understand a core of another.
func TestAuthProofVector(t *testing.T) {
	const want = "bd4c9c1d0e60ca55bac55e4e410dc9d732319c37fcb1080edfd0e9db4cd5fb37"
	if got := AuthProof("acme", "Basic YWxpY2U6YWxpY2Utc2VjcmV0"); got != want {
		t.Fatalf("AuthProof = %s, want %s", got, want)
	}
	if got := string(AppendAuthProof([]byte("x"), "acme", []byte("Basic YWxpY2U6YWxpY2Utc2VjcmV0"))); got != "x"+want {
		t.Fatalf("AppendAuthProof = %s, want x%s", got, want)
	}
}

// TestAuthProofBindsBoth: the proof of one credential is no proof of another, nor of the same one for another
// account, however the bytes are split between the two (the length prefixes).
func TestAuthProofBindsBoth(t *testing.T) {
	base := AuthProof("acme", "Basic YWxpY2U6YWxpY2Utc2VjcmV0")
	for _, tc := range []struct{ key, auth string }{
		{"acme2", "Basic YWxpY2U6YWxpY2Utc2VjcmV0"},
		{"acme", "Basic YWxpY2U6YWxpY2Utc2VjcmV1"},
		{"acm", "eBasic YWxpY2U6YWxpY2Utc2VjcmV0"},
		{"acmeB", "asic YWxpY2U6YWxpY2Utc2VjcmV0"},
		{"acme", ""},
	} {
		if got := AuthProof(tc.key, tc.auth); got == base {
			t.Errorf("AuthProof(%q, %q) is the proof of acme's credential", tc.key, tc.auth)
		}
	}
	long := strings.Repeat("k", 2*proofStack) // past the stack buffer: same value, computed on the heap
	if got, want := AuthProof(long, long), string(AppendAuthProof(nil, []byte(long), long)); got != want || len(got) != AuthProofLen {
		t.Errorf("a long credential's proof: %q and %q", got, want)
	}
}

// The gateway computes a proof for every answer to a verification: it must not allocate.
func TestAppendAuthProofAllocs(t *testing.T) {
	auth := []byte("Basic YWxpY2U6YWxpY2Utc2VjcmV0")
	var buf [AuthProofLen]byte
	if n := testing.AllocsPerRun(100, func() { AppendAuthProof(buf[:0], "acme", auth) }); n != 0 {
		t.Errorf("AppendAuthProof allocates %v times per call", n)
	}
}

func BenchmarkAuthProof(b *testing.B) {
	auth := []byte("Basic YWxpY2U6YWxpY2Utc2VjcmV0")
	var buf [AuthProofLen]byte
	b.ReportAllocs()
	for b.Loop() {
		AppendAuthProof(buf[:0], "acme", auth)
	}
}
