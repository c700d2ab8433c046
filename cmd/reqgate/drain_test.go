package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestDrainPastShutdownTimeout stops `reqgate serve` with SIGTERM while a request is held in the gateway (a rate
// policy holds it for its slot, longer than server.shutdown_timeout): the drain is cut at the timeout, the process
// logs what it cut and exits 0, and the spans of the request that had finished reach the collector.
func TestDrainPastShutdownTimeout(t *testing.T) {
	recv := startReceiver(t)
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	cfg := filepath.Join(t.TempDir(), "reqgate.yaml")
	if err := os.WriteFile(cfg, []byte(`server:
  shutdown_timeout: 1s
tracing:
  endpoint: `+recv.URL+`
ratelimit:
  policies:
    - {name: slow, key: api_key, limit: 1, period: 1h, burst: 1, max_delay: 1h}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"),
		"--config", cfg)
	waitReady(t, p, "http://"+admin+"/readyz")

	if resp, body := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("first read: %d %s", resp.StatusCode, body)
	}
	held := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://"+listen+"/api2/demo/re/1", nil)
		req.SetBasicAuth("demo", "demo")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		held <- err
	}()
	waitHeld(t, "http://"+admin+"/metrics")

	if err := p.Stop(t); err != nil {
		t.Errorf("exit after a drain past shutdown_timeout: %v, want status 0", err)
	}
	cut := ""
	for _, l := range strings.Split(p.Output.String(), "\n") {
		if strings.Contains(l, "shutdown_timeout passed; cutting what is still in flight") && strings.Contains(l, `"part":"gateway"`) {
			cut = l
		}
	}
	if !strings.Contains(cut, `"requests":1`) {
		t.Errorf("no log line of the gateway's cut drain naming the 1 request it cut:\n%s", p.Output.String())
	}
	<-held
	spans, _ := recv.received()
	found := false
	for _, s := range spans {
		found = found || s.GetName() == "GET record"
	}
	if !found {
		t.Errorf("the finished request's spans did not reach the collector (%d spans)", len(spans))
	}
}

// waitHeld polls the admin /metrics until a request is held by a rate policy.
func waitHeld(t *testing.T, metrics string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(metrics); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(b), "\nreqgate_ratelimit_held 1\n") {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no request held by the rate policy within 30s")
}
