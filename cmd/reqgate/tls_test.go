package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/gateway/certs/certstest"
)

// TestServeTLS runs the binary with server.tls_cert_file and server.tls_key_file: the gateway answers HTTPS
// with Basic credentials, prints its https:// base URL, answers plain HTTP on that port with 400; the core role
// refuses the keys at start.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	pair := certstest.Write(t, dir, "gw")
	listen, admin := freeAddr(t), freeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(dir, "reqgate.db"),
		"--set", "server.tls_cert_file="+pair.CertFile, "--set", "server.tls_key_file="+pair.KeyFile)
	waitReady(t, p, "http://"+admin+"/readyz")
	if out := p.stdout.String(); !strings.Contains(out, "https://"+listen+"/api2/demo") {
		t.Errorf("start-up output does not show the https:// base URL:\n%s", out)
	}

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
			req, err := http.NewRequest(http.MethodGet, tt.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.user != "" {
				req.SetBasicAuth(tt.user, tt.user)
			}
			res, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %s", res.StatusCode, tt.status, body)
			}
		})
	}

	out, err := exec.Command(binary(t), "core", "--listen", freeAddr(t), "--admin-listen", "off", "--db", filepath.Join(dir, "core.db"),
		"--set", "server.tls_cert_file="+pair.CertFile, "--set", "server.tls_key_file="+pair.KeyFile).CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "server.tls_cert_file") {
		t.Errorf("core with TLS keys: exit %d, want 2 naming server.tls_cert_file:\n%s", code, out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
