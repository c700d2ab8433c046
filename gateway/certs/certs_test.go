package certs_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/gateway/certs"
	"github.com/reqgate/reqgate/gateway/certs/certstest"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	a, b := certstest.Write(t, dir, "a"), certstest.Write(t, dir, "b")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		cert, key string
		ok        bool
	}{
		{"pair", a.CertFile, a.KeyFile, true},
		{"key of another certificate", a.CertFile, b.KeyFile, false},
		{"certificate only", a.CertFile, "", false},
		{"key only", "", a.KeyFile, false},
		{"missing file", filepath.Join(dir, "none.crt"), a.KeyFile, false},
		{"not PEM", garbage, a.KeyFile, false},
		{"files swapped", a.KeyFile, a.CertFile, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := certs.Load(tt.cert, tt.key)
			if (err == nil) != tt.ok {
				t.Fatalf("Load: %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && h.Certificate().Leaf.SerialNumber.Cmp(a.Cert.SerialNumber) != 0 {
				t.Errorf("Leaf is not the file's certificate")
			}
		})
	}
}

// TestTLSConfig checks the settings the public listener relies on: TLS 1.2 at least, AEAD suites only for
// TLS 1.2, HTTP/1.1 only, and the holder's current pair for every handshake.
func TestTLSConfig(t *testing.T) {
	p := certstest.Write(t, t.TempDir(), "a")
	h, err := certs.Load(p.CertFile, p.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	c := h.TLSConfig()
	if c.MinVersion != tls.VersionTLS12 {
		t.Errorf("MinVersion %x, want TLS 1.2", c.MinVersion)
	}
	insecure := map[uint16]bool{}
	for _, s := range tls.InsecureCipherSuites() {
		insecure[s.ID] = true
	}
	for _, id := range c.CipherSuites {
		name := tls.CipherSuiteName(id)
		if insecure[id] || !(strings.Contains(name, "_GCM_") || strings.Contains(name, "CHACHA20_POLY1305")) || !strings.Contains(name, "ECDHE") {
			t.Errorf("cipher suite %s is not ECDHE with an AEAD", name)
		}
	}
	if len(c.CipherSuites) == 0 {
		t.Error("no cipher suites: Go's default list includes CBC suites")
	}
	if len(c.NextProtos) != 1 || c.NextProtos[0] != "http/1.1" {
		t.Errorf("NextProtos %q, want http/1.1 only", c.NextProtos)
	}
	got, err := c.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || got != h.Certificate() {
		t.Errorf("GetCertificate: %v, %v; want the current pair", got, err)
	}
}
