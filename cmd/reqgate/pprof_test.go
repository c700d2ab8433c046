package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestPProfOnAdminListener checks that a running process can be profiled through its admin listener with
// admin.pprof: true, and that the profiler is off by default.
func TestPProfOnAdminListener(t *testing.T) {
	for _, on := range []bool{true, false} {
		listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
		args := []string{"gateway", "--listen", listen, "--admin-listen", admin}
		if on {
			args = append(args, "--set", "admin.pprof=true")
		}
		p := start(t, append(args, "--upstream", "http://"+testbin.FreeAddr(t))...)
		waitReady(t, p, "http://"+admin+"/healthz")
		resp, body := do(t, http.MethodGet, "http://"+admin+"/debug/pprof/goroutine?debug=1", "", "")
		switch {
		case on && (resp.StatusCode != http.StatusOK || !strings.Contains(body, "goroutine profile")):
			t.Errorf("admin.pprof on: /debug/pprof/goroutine: %d %.80q", resp.StatusCode, body)
		case !on && resp.StatusCode != http.StatusNotFound:
			t.Errorf("admin.pprof by default: /debug/pprof/goroutine: %d, want 404", resp.StatusCode)
		}
	}
}
