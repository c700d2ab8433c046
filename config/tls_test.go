package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/gateway/certs/certstest"
)

// TestTLSFiles loads server.tls_cert_file and server.tls_key_file from the file and refuses what would fail
// at the first handshake: one without the other, unreadable files, a key of another certificate, and TLS on
// the core role.
func TestTLSFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := certstest.Write(t, dir, "a"), certstest.Write(t, dir, "b")
	tests := []struct {
		name      string
		role      string
		cert, key string
		refused   string // key path named in the refusal; "" = accepted
	}{
		{"none", RoleGateway, "", "", ""},
		{"pair, gateway", RoleGateway, a.CertFile, a.KeyFile, ""},
		{"pair, serve", RoleServe, a.CertFile, a.KeyFile, ""},
		{"pair, core", RoleCore, a.CertFile, a.KeyFile, "server.tls_cert_file"},
		{"certificate only", RoleGateway, a.CertFile, "", "server.tls_key_file"},
		{"key only", RoleGateway, "", a.KeyFile, "server.tls_cert_file"},
		{"mismatched", RoleGateway, a.CertFile, b.KeyFile, "server.tls_cert_file"},
		{"missing", RoleGateway, filepath.Join(dir, "none.crt"), a.KeyFile, "server.tls_cert_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := writeFile(t, "c.yaml", "server:\n  tls_cert_file: \""+tt.cert+"\"\n  tls_key_file: \""+tt.key+"\"\n")
			args := []string{"--config", file}
			if tt.role != RoleServe {
				args = append(args, "--set", "upstream.url=http://127.0.0.1:1")
			}
			c, err := Load(tt.role, args, nil)
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if c.Server.TLSCertFile != tt.cert || c.Server.TLSKeyFile != tt.key {
					t.Errorf("got %q %q, want %q %q", c.Server.TLSCertFile, c.Server.TLSKeyFile, tt.cert, tt.key)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.refused) {
				t.Errorf("Load: %v, want a refusal naming %s", err, tt.refused)
			}
		})
	}
}
