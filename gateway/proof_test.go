package gateway

import "testing"

// TestAuthProofVector pins the proof format to the vector the core's own test pins (core/api proof_test.go).
func TestAuthProofVector(t *testing.T) {
	got := string(authProof("acme", []byte("Basic YWxpY2U6YWxpY2Utc2VjcmV0")))
	if want := "bd4c9c1d0e60ca55bac55e4e410dc9d732319c37fcb1080edfd0e9db4cd5fb37"; got != want {
		t.Fatalf("authProof = %s, want %s", got, want)
	}
}
