package main

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestServeMirroredThrottle runs `reqgate serve` with the mirrored service's throttle as docs/api.md gives it,
// with 5 minutes for the period (under the block, so that the block sets the time to wait) so that no call leaves
// the window however slow the machine: the 26th call gets
// 503 Request_Throttled with the 10-minute block, rate_throttle_status answers 200 meanwhile, and a call while
// blocked starts the block again.
func TestServeMirroredThrottle(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "reqgate.yaml")
	if err := os.WriteFile(cfg, []byte("ratelimit:\n  reject_status: 503\n  policies:\n"+
		"    - {name: account, key: api_key, limit: 25, period: 5m, algorithm: window, block: 10m}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(dir, "r.db"),
		"--config", cfg)
	base := "http://" + listen + "/api2/demo"
	waitReady(t, p, "http://"+listen+"/readyz")
	var b testsupport.Throttle
	for i := range 25 {
		if r, body := do(t, http.MethodGet, base+"/re/1", "demo", ""); r.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, r.StatusCode, body)
		}
	}
	r, body := do(t, http.MethodGet, base+"/re/1", "demo", "")
	b = testsupport.ReadThrottle(t, body)
	if r.StatusCode != http.StatusServiceUnavailable || b.Code != "Request_Throttled" || b.After != 600 ||
		r.Header.Get("Retry-After") != "600" {
		t.Fatalf("26th call: %d Retry-After %q %s, want 503 Request_Throttled after 600 s", r.StatusCode,
			r.Header.Get("Retry-After"), body)
	}
	r, body = do(t, http.MethodGet, base+"/rate_throttle_status", "demo", "")
	b = testsupport.ReadThrottle(t, body)
	// The block counts down from 600 s; the window alone would say 300 s at most, a GCRA policy 12 s.
	if r.StatusCode != http.StatusOK || b.Available != "no" || b.After <= 300 || b.After > 600 {
		t.Fatalf("rate_throttle_status while blocked: %d %s, want 200, not available, the block's time left",
			r.StatusCode, body)
	}
	r, body = do(t, http.MethodGet, base+"/re/1", "demo", "")
	b = testsupport.ReadThrottle(t, body)
	if r.StatusCode != http.StatusServiceUnavailable || b.After != 600 {
		t.Fatalf("call while blocked: %d %s, want 503 with the block started again (600 s)", r.StatusCode, body)
	}
}
