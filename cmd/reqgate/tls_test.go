package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway/certs/certstest"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestServeTLS runs the binary with server.tls_cert_file and server.tls_key_file: the gateway answers HTTPS
// with Basic credentials, prints its https:// base URL, answers plain HTTP on that port with 400; the core role
// refuses the keys at start.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	pair := certstest.Write(t, dir, "gw")
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(dir, "reqgate.db"),
		"--set", "server.tls_cert_file="+pair.CertFile, "--set", "server.tls_key_file="+pair.KeyFile)
	waitReady(t, p, "http://"+admin+"/readyz")
	waitLog(t, p, func(rec map[string]any) bool { return rec["base_url_v2"] == "https://"+listen+"/api2/demo" })

	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pair.Pool()}}}
	tests := []struct {
		name   string
		url    string
		user   string
		status int
	}{
		{"HTTPS with credentials", "https://" + listen + "/api2/demo/re/1", "demo", http.StatusOK},
		{"HTTPS without credentials", "https://" + listen + "/api2/demo/re/1", "", http.StatusUnauthorized},
		{"plain HTTP to the TLS port", "http://" + listen + "/api2/demo/re/1", "demo", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := testsupport.Do(t, cl, http.MethodGet, tt.url, tt.user, tt.user, ""); r.Status != tt.status {
				t.Errorf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
		})
	}

	code, out := runCmd(t, "core", "--listen", testbin.FreeAddr(t), "--admin-listen", "off", "--db", filepath.Join(dir, "core.db"),
		"--set", "server.tls_cert_file="+pair.CertFile, "--set", "server.tls_key_file="+pair.KeyFile)
	if code != 2 || !strings.Contains(out, "server.tls_cert_file") {
		t.Errorf("core with TLS keys: exit %d, want 2 naming server.tls_cert_file:\n%s", code, out)
	}
}

// TestReloadCerts calls the gateway node's reloadCerts, the entry point of the SIGHUP reload: after the files
// are replaced with a new pair the next handshake gets it; a pair that does not match is refused and the one
// before stays; a node without TLS has nothing to reload.
func TestReloadCerts(t *testing.T) {
	dir := t.TempDir()
	first := certstest.Write(t, dir, "gw")
	cfg := config.Default(config.RoleGateway)
	cfg.Server.TLSCertFile, cfg.Server.TLSKeyFile = first.CertFile, first.KeyFile
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	n, err := startGateway(cfg, log, nil, ln, "http://127.0.0.1:1", nil, errc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.shutdown(context.Background()) })
	if !strings.HasPrefix(n.url(), "https://") {
		t.Errorf("url %q, want https://", n.url())
	}
	serial := func() string { t.Helper(); return servedSerial(t, n.addr) }
	second, third := certstest.New(t, "second"), certstest.New(t, "third")
	tests := []struct {
		name      string
		cert, key []byte
		ok        bool
		want      string
	}{
		{"new pair", second.CertPEM, second.KeyPEM, true, second.Cert.SerialNumber.String()},
		{"key of another certificate", third.CertPEM, second.KeyPEM, false, second.Cert.SerialNumber.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(first.CertFile, tt.cert, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(first.KeyFile, tt.key, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := n.reloadCerts(log); (err == nil) != tt.ok {
				t.Fatalf("reloadCerts: %v, want ok=%v", err, tt.ok)
			}
			if got := serial(); got != tt.want {
				t.Errorf("serial %s, want %s", got, tt.want)
			}
		})
	}
	if err := (&gatewayNode{}).reloadCerts(log); err != nil {
		t.Errorf("reloadCerts without TLS: %v", err)
	}
}

// TestSIGHUPReloadsCertificate runs `serve` over TLS: after the certificate files are replaced (as a renewal
// does) a SIGHUP makes the next handshake present the new pair; files that do not hold a pair refuse the reload
// and the pair in force stays. reqgate_tls_cert_expiry_seconds follows the pair served.
func TestSIGHUPReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	first := certstest.Write(t, dir, "gw")
	n := startReloadable(t, fmt.Sprintf("server:\n  tls_cert_file: %s\n  tls_key_file: %s\n", first.CertFile, first.KeyFile))
	serial := func() string { t.Helper(); return servedSerial(t, n.listen) }
	if got, want := serial(), first.Cert.SerialNumber.String(); got != want {
		t.Fatalf("serial %s at start, want %s", got, want)
	}
	// The expiry in seconds, which counts down between scrapes: checked to the minute.
	expiry := func(t *testing.T, want *certstest.Pair) {
		t.Helper()
		_, text := do(t, http.MethodGet, "http://"+n.admin+"/metrics", "", "")
		m := regexp.MustCompile(`(?m)^reqgate_tls_cert_expiry_seconds (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("/metrics has no reqgate_tls_cert_expiry_seconds:\n%s", grepLines(text, "tls"))
		}
		got, _ := strconv.ParseFloat(m[1], 64)
		if left := time.Until(want.Cert.NotAfter).Seconds(); got > left+60 || got < left-60 {
			t.Errorf("reqgate_tls_cert_expiry_seconds %v, want about %v (%s)", got, left, want.Cert.Subject.CommonName)
		}
	}
	expiry(t, &first)
	second := certstest.NewUntil(t, "second", time.Now().Add(90*24*time.Hour))
	third := certstest.New(t, "third")
	tests := []struct {
		name      string
		cert, key []byte
		result    string          // the reload counter that moves
		want      *certstest.Pair // the pair served after
	}{
		{"renewed pair", second.CertPEM, second.KeyPEM, "applied", &second},
		{"key of another certificate", third.CertPEM, second.KeyPEM, "refused", &second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(first.CertFile, tt.cert, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(first.KeyFile, tt.key, 0o600); err != nil {
				t.Fatal(err)
			}
			n.reload(t, tt.result, 1)
			if got, want := serial(), tt.want.Cert.SerialNumber.String(); got != want {
				t.Errorf("serial %s after the reload, want %s", got, want)
			}
			expiry(t, tt.want)
		})
	}
}

// servedSerial is the serial number of the certificate the TLS listener at addr presents to a new connection.
func servedSerial(t *testing.T, addr string) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // which certificate, not trust
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}
