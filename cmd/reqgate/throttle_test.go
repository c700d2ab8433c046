package main

import (
	"fmt"
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
	base := "http://" + serveMirroredThrottle(t, 25) + "/api2/demo"
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

// serveMirroredThrottle starts `reqgate serve` on a fresh database with the mirrored service's throttle
// (docs/api.md: a window of limit calls per account, then 503 Request_Throttled and a 10-minute block), its period
// 5 minutes so that no call leaves the window however slow the machine, and returns its address once ready.
func serveMirroredThrottle(t *testing.T, limit int) string {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "reqgate.yaml")
	policy := fmt.Sprintf("    - {name: account, key: api_key, limit: %d, period: 5m, algorithm: window, block: 10m}\n", limit)
	if err := os.WriteFile(cfg, []byte("ratelimit:\n  reject_status: 503\n  policies:\n"+policy), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(dir, "r.db"), "--config", cfg)
	waitReady(t, p, "http://"+listen+"/readyz")
	return listen
}
