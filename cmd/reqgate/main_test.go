package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// These tests run the real binary, as an operator would: built once per test run, started with the
// contract's flags on free loopback ports and a temporary SQLite file.

// proc is one running reqgate process.
type proc = testbin.Proc

// start runs the binary with args until the test ends.
func start(t *testing.T, args ...string) *proc {
	t.Helper()
	return testbin.Start(t, nil, args...)
}

// waitReady polls url until it answers 200; the test ends if p exits first.
func waitReady(t *testing.T, p *proc, url string) {
	t.Helper()
	p.WaitReady(t, url)
}

// do sends one request through http.DefaultClient as user (the password the same; "" sends no credentials)
// and returns the response, its body read and closed, and the body.
func do(t *testing.T, method, url, user, body string) (*http.Response, string) {
	t.Helper()
	req, err := testsupport.NewRequest(method, url, user, user, body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServeProvisionsDemoAndShutsDownOnSIGTERM(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	db := filepath.Join(t.TempDir(), "data", "reqgate.db")
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", db)
	waitReady(t, p, "http://"+admin+"/readyz")

	// A log line, written within the log's 100 ms.
	waitLog(t, p, func(rec map[string]any) bool {
		return rec["msg"] == "demo account ready" && rec["base_url_v2"] == "http://"+listen+"/api2/demo" &&
			rec["users"] == "demo / demo, viewer / viewer"
	})
	for _, path := range []string{"/api2/demo/re/1", "/api/demo/re/1", "/api2/demo/object", "/api2/demo/user"} {
		resp, body := do(t, http.MethodGet, "http://"+listen+path, "demo", "")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d, want 200; body %s", path, resp.StatusCode, body)
		}
	}
	if resp, _ := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET without credentials: status %d, want 401", resp.StatusCode)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp, _ := do(t, http.MethodGet, "http://"+listen+path, "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("public %s: status %d, want 200", path, resp.StatusCode)
		}
	}
	_, metrics := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")
	for _, name := range []string{"reqgate_gateway_requests_total", "reqgate_core_requests_total", "go_goroutines"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	if err := p.Stop(t); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}

	// The store was closed cleanly: a second start finds the demo (and does not provision it again).
	p2 := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", db)
	waitReady(t, p2, "http://"+listen+"/readyz")
	if resp, body := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("after restart: status %d; %s", resp.StatusCode, body)
	}
	// Its whole log, once it has stopped (lines are written within 100 ms, and at the stop).
	_ = p2.Stop(t)
	if out := p2.Output.String(); strings.Contains(out, "demo account ready") || !strings.Contains(out, `"msg":"stopped"`) {
		t.Errorf("the second start's log, with the demo account provisioned again or no stop line:\n%s", out)
	}
}

const crashAccounts = `
accounts:
  - api_key: crash
    name: Crash test
    users:
      - {id: 1, username: writer, password: writer, email: w@crash.test, firstname: W, lastname: R}
`

// TestAcknowledgedWritesSurviveKill9 writes records from several clients, kills the core with SIGKILL in
// the middle, restarts it on the same file, and checks that every record whose 201 arrived is there.
func TestAcknowledgedWritesSurviveKill9(t *testing.T) {
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(crashAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "core.db")
	listen := testbin.FreeAddr(t)
	args := []string{"core", "--listen", listen, "--admin-listen", "off", "--db", db, "--accounts", accounts}
	p := start(t, args...)
	waitReady(t, p, "http://"+listen+"/readyz")

	base := "http://" + listen + "/api2/crash"
	var (
		mu    sync.Mutex
		acked []string // Location headers of acknowledged creates
	)
	client := &http.Client{Timeout: 5 * time.Second}
	stop := testsupport.Workers(4, func(w, i int) bool {
		body := fmt.Sprintf(`<requirement><fields><field><name>field_101</name><value>w%d-%d</value></field></fields></requirement>`, w, i)
		resp, err := testsupport.Send(client, http.MethodPost, base+"/re", "writer", "writer", body)
		if err != nil {
			return false // the process is gone
		}
		if resp.Status == http.StatusCreated {
			mu.Lock()
			acked = append(acked, resp.Header.Get("Location"))
			mu.Unlock()
		}
		return true
	})
	if !testsupport.WaitUntil(time.Minute, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 200 }) {
		t.Fatal("fewer than 200 acknowledged creates within a minute")
	}
	if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	stop()

	p2 := start(t, args...)
	waitReady(t, p2, "http://"+listen+"/readyz")
	mu.Lock()
	defer mu.Unlock()
	for _, loc := range acked {
		i := strings.Index(loc, "/api2/crash/")
		if i < 0 {
			t.Fatalf("Location %q does not name the record", loc)
		}
		if resp, body := do(t, http.MethodGet, "http://"+listen+loc[i:], "writer", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("acknowledged record %s lost after kill -9: status %d %s", loc, resp.StatusCode, body)
		}
	}
	t.Logf("%d acknowledged records checked after kill -9", len(acked))
}

func TestConfigCheckRefusesBadFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("cache:\n  ttl: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testbin.Binary(t), "config", "check", bad).CombinedOutput()
	if err == nil {
		t.Fatalf("config check of a bad file succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "cache.ttl") {
		t.Errorf("refusal does not name the key cache.ttl:\n%s", out)
	}
	// A bad value refuses to start, naming the key, and exits non-zero.
	cmd := exec.Command(testbin.Binary(t), "serve", "--config", bad, "--admin-listen", "off")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "cache.ttl") {
		t.Errorf("serve with a bad config: err=%v, output:\n%s", err, out)
	}
}

// TestConfigCheckHelp: `reqgate config check --help` prints the command's help; it used to read a file named
// --help.
func TestConfigCheckHelp(t *testing.T) {
	code, out := runCmd(t, "config", "check", "--help")
	if code != 0 || !strings.Contains(out, "Usage: reqgate config check FILE...") || strings.Contains(out, "cannot read") {
		t.Errorf("exit code %d, output:\n%s", code, out)
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut strings.Builder
	if code := run(t.Context(), []string{"frobnicate"}, nil, &out, &errOut); code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), "unknown command") {
		t.Errorf("stderr %q does not explain", errOut.String())
	}
	sc := bufio.NewScanner(strings.NewReader(usage))
	sc.Scan()
	if !strings.HasPrefix(sc.Text(), "Usage: reqgate") {
		t.Error("usage text lost its first line")
	}
}

func TestLogWriterFlushesOnIntervalAndAtOnceForWarnings(t *testing.T) {
	var out testsupport.LockedBuffer
	lw := newLogWriter(&out, time.Hour)
	fmt.Fprint(lw, "time=x level=INFO msg=request\n")
	if got := out.String(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	fmt.Fprint(lw, "time=x level=WARN msg=trouble\n")
	if got, want := out.String(), "time=x level=INFO msg=request\ntime=x level=WARN msg=trouble\n"; got != want {
		t.Fatalf("after a warning: got %q, want %q", got, want)
	}
	fmt.Fprint(lw, `{"time":"x","level":"INFO","msg":"request"}`+"\n")
	lw.Close()
	if got := out.String(); !strings.HasSuffix(got, `"msg":"request"}`+"\n") {
		t.Fatalf("Close did not flush: %q", got)
	}
}

// TestLocationBehindProxies: the core believes X-Forwarded-Proto and X-Forwarded-Host for the Location of a
// created record only from server.trusted_proxies; under `serve` it believes its gateway, which passes on
// what its own trusted proxies say and nothing else.
func TestLocationBehindProxies(t *testing.T) {
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(crashAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		owner string // scheme://host of the Location; "" for the listener's own
	}{
		{"core, no trusted proxies", []string{"core"}, ""},
		{"core, trusted", []string{"core", "--set", "server.trusted_proxies=127.0.0.1"}, "https://public.example"},
		{"core, other network trusted", []string{"core", "--set", "server.trusted_proxies=10.0.0.0/8"}, ""},
		{"serve, no trusted proxies", []string{"serve"}, ""},
		{"serve, trusted", []string{"serve", "--set", "server.trusted_proxies=::1,127.0.0.1"}, "https://public.example"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listen := testbin.FreeAddr(t)
			db := filepath.Join(dir, fmt.Sprintf("%d.db", i))
			p := start(t, append(tt.args, "--listen", listen, "--admin-listen", "off", "--db", db, "--accounts", accounts)...)
			waitReady(t, p, "http://"+listen+"/readyz")
			req, err := http.NewRequest(http.MethodPost, "http://"+listen+"/api2/crash/re",
				strings.NewReader("<requirement><fields><field><name>field_101</name><value>x</value></field></fields></requirement>"))
			if err != nil {
				t.Fatal(err)
			}
			req.SetBasicAuth("writer", "writer")
			req.Header.Set("Content-Type", "application/xml")
			req.Header.Set("X-Forwarded-Proto", "https")
			req.Header.Set("X-Forwarded-Host", "public.example")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			want := tt.owner
			if want == "" {
				want = "http://" + listen
			}
			if got := resp.Header.Get("Location"); resp.StatusCode != http.StatusCreated || got != want+"/api2/crash/re/1" {
				t.Errorf("status %d, Location %q; want 201, %s/api2/crash/re/1", resp.StatusCode, got, want)
			}
		})
	}
}

// stallingWriter blocks every Write until release is closed, as a log file can while the kernel writes back.
type stallingWriter struct {
	release chan struct{}
	testsupport.LockedBuffer
}

func (w *stallingWriter) Write(p []byte) (int, error) {
	<-w.release
	return w.LockedBuffer.Write(p)
}

// TestLogWriterDoesNotWaitForItsDestination: while the destination of the log blocks, info lines (the access
// log) are still taken at once, more of them than one buffer holds; once it answers, every line arrives, in
// order.
func TestLogWriterDoesNotWaitForItsDestination(t *testing.T) {
	out := &stallingWriter{release: make(chan struct{})}
	lw := newLogWriter(out, time.Millisecond)
	line := strings.Repeat("x", 99) + "\n"
	n := 4 * logBufferSize / len(line) // four buffers' worth: a synchronous writer would block on the first
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for range n {
			fmt.Fprint(infoLines{lw}, line)
		}
	}()
	select {
	case <-wrote:
	case <-time.After(30 * time.Second):
		t.Fatal("lines waited for a blocked destination")
	}
	close(out.release)
	lw.Close()
	if got := out.String(); got != strings.Repeat(line, n) {
		t.Fatalf("wrote %d bytes, want %d in order", len(got), n*len(line))
	}
}
