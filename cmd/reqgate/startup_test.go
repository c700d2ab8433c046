package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/postgres/pgtest"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestPortInUseProvisionsNothing starts serve on a fresh database path while one of its ports is taken: it
// must exit at once with an error naming the address, before the store file (or its directory) exists, let
// alone holds the demo account.
func TestPortInUseProvisionsNothing(t *testing.T) {
	tests := []struct{ name, busy string }{
		{"public port", "listen"},
		{"admin port", "admin-listen"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer busy.Close()
			addrs := map[string]string{"listen": testbin.FreeAddr(t), "admin-listen": testbin.FreeAddr(t)}
			addrs[tt.busy] = busy.Addr().String()
			dir := filepath.Join(t.TempDir(), "data")
			db := filepath.Join(dir, "reqgate.db")
			cmd := exec.Command(testbin.Binary(t), "serve", "--listen", addrs["listen"], "--admin-listen", addrs["admin-listen"], "--db", db)
			done := make(chan struct{})
			var out []byte
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("serve kept running with %s taken:\n%s", busy.Addr(), out)
			}
			if err == nil {
				t.Fatalf("serve succeeded with %s taken:\n%s", busy.Addr(), out)
			}
			if want := "listen on " + busy.Addr().String() + ": "; !strings.Contains(string(out), want) || !strings.Contains(string(out), "address already in use") {
				t.Errorf("output does not say %q ... address already in use:\n%s", want, out)
			}
			if strings.Contains(string(out), "demo account provisioned") {
				t.Errorf("the demo account was provisioned before the port failed:\n%s", out)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the store directory %s exists after the failed start (%v)", dir, err)
			}
		})
	}
}

// TestHealthzDuringAccountImport starts a core on an account file that takes seconds to apply (a hundred
// bcrypt hashes, thousands of records): meanwhile /healthz answers 200 on the admin and the core's own
// listener, and /readyz 503 on both, so a liveness probe does not kill a process that is busy importing.
func TestHealthzDuringAccountImport(t *testing.T) {
	var b strings.Builder
	b.WriteString("accounts:\n  - api_key: big\n    users:\n")
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "      - {id: %d, username: u%d, password: u%d}\n", i, i, i)
	}
	b.WriteString("    records:\n")
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "      - {kind: re, id: %d, created_by: u1, fields: {field_101: record %d}}\n", i, i)
	}
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "core", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "c.db"), "--accounts", file)

	status := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	var seenStarting bool
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-p.Done:
			p.Done <- err
			t.Fatalf("core exited: %v\n%s", err, p.Output.String())
		default:
		}
		adminReady := status("http://" + admin + "/readyz")
		if adminReady == http.StatusOK {
			break
		}
		if adminReady == http.StatusServiceUnavailable && status("http://"+admin+"/healthz") == http.StatusOK &&
			status("http://"+listen+"/healthz") == http.StatusOK && status("http://"+listen+"/readyz") == http.StatusServiceUnavailable {
			seenStarting = true
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !seenStarting {
		t.Fatalf("never saw /healthz 200 with /readyz 503 while the account file was applied:\n%s", p.Output.String())
	}
	if status("http://"+admin+"/readyz") != http.StatusOK {
		t.Fatalf("the core did not finish the import within 60s:\n%s", p.Output.String())
	}
	if resp, body := do(t, http.MethodGet, "http://"+listen+"/api2/big/re/3000", "u1", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("after the import: status %d; %s", resp.StatusCode, body)
	}
}

// TestPostgresUnreachableAtStart starts a core whose PostgreSQL does not answer yet: it waits (admin /healthz
// 200, /readyz 503) and serves once the database answers; with a short store.connect_timeout and no database
// it gives up with an error naming the setting.
func TestPostgresUnreachableAtStart(t *testing.T) {
	srv := pgtest.Shared(t)
	db := srv.NewDatabase(t)
	target := fmt.Sprintf("127.0.0.1:%d", srv.Port)

	t.Run("comes up later", func(t *testing.T) {
		// The core is pointed at a port where nothing listens yet; later a relay there forwards to PostgreSQL.
		relayAddr := testbin.FreeAddr(t)
		dsn := strings.Replace(db, target, relayAddr, 1)
		listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
		p := start(t, "core", "--listen", listen, "--admin-listen", admin, "--db", dsn, "--set", "store.connect_timeout=60s")
		waitReady(t, p, "http://"+admin+"/healthz")
		time.Sleep(time.Second) // a few refused attempts
		if resp, body := do(t, http.MethodGet, "http://"+admin+"/readyz", "", ""); resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/readyz while the database is unreachable: %d %s", resp.StatusCode, body)
		}
		if !strings.Contains(p.Output.String(), "store not reachable, retrying") {
			t.Errorf("no retry logged:\n%s", p.Output.String())
		}
		relay(t, relayAddr, target)
		waitReady(t, p, "http://"+admin+"/readyz")
		if resp, body := do(t, http.MethodGet, "http://"+listen+"/readyz", "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("core /readyz after the database came up: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("gives up", func(t *testing.T) {
		dsn := strings.Replace(db, target, testbin.FreeAddr(t), 1)
		start := time.Now()
		out, err := exec.Command(testbin.Binary(t), "core", "--listen", testbin.FreeAddr(t), "--admin-listen", "off", "--db", dsn,
			"--set", "store.connect_timeout=2s").CombinedOutput()
		if err == nil {
			t.Fatalf("core started without a database:\n%s", out)
		}
		if took := time.Since(start); took < 2*time.Second || took > 20*time.Second {
			t.Errorf("gave up after %v, want about store.connect_timeout (2s)", took)
		}
		if !strings.Contains(string(out), "store not reachable within store.connect_timeout (2s") {
			t.Errorf("the error does not name store.connect_timeout:\n%s", out)
		}
	})

	t.Run("wrong password is not retried", func(t *testing.T) {
		dsn := strings.Replace(db, "postgres://postgres@", "postgres://nobody:wrong@", 1)
		start := time.Now()
		out, err := exec.Command(testbin.Binary(t), "core", "--listen", testbin.FreeAddr(t), "--admin-listen", "off", "--db", dsn,
			"--set", "store.connect_timeout=60s").CombinedOutput()
		if err == nil {
			t.Fatalf("core started with a wrong role:\n%s", out)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("a refusal by the database was retried for %v:\n%s", took, out)
		}
	})
}

// relay forwards TCP connections from addr to target until the test ends: a database that "comes up" at addr.
func relay(t *testing.T, addr, target string) {
	t.Helper()
	testsupport.ServeTCP(t, addr, func(c net.Conn) { relayTo(c, target) })
}

// relayTo copies the bytes of c to a new connection to target and back, until either side ends: at the test's
// end ServeTCP closes the client side, and the relay with it.
func relayTo(c net.Conn, target string) {
	u, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer u.Close()
	go func() { _, _ = io.Copy(u, c); u.Close() }()
	_, _ = io.Copy(c, u)
}
