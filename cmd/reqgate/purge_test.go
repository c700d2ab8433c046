package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestPurgeOnAdminListener purges the demo account through the admin listener of `reqgate serve`: the cached
// read is fetched again, and a purge must name its account and be a POST.
func TestPurgeOnAdminListener(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"))
	waitReady(t, p, "http://"+admin+"/readyz")
	read := "http://" + listen + "/api2/demo/re/1"
	do(t, http.MethodGet, read, "demo", "")
	if resp, _ := do(t, http.MethodGet, read, "demo", ""); resp.Header.Get("X-Cache") != "HIT" {
		t.Fatalf("second read: X-Cache %q", resp.Header.Get("X-Cache"))
	}
	resp, body := do(t, http.MethodPost, "http://"+admin+"/purge?account=demo", "", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"demo"`) {
		t.Fatalf("POST /purge: %d %q", resp.StatusCode, body)
	}
	if resp, _ := do(t, http.MethodGet, read, "demo", ""); resp.StatusCode != 200 || resp.Header.Get("X-Cache") != "MISS" {
		t.Errorf("read after the purge: %d, X-Cache %q, want 200 MISS", resp.StatusCode, resp.Header.Get("X-Cache"))
	}
	if resp, _ := do(t, http.MethodPost, "http://"+admin+"/purge", "", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("POST /purge without an account: %d, want 400", resp.StatusCode)
	}
	if resp, _ := do(t, http.MethodGet, "http://"+admin+"/purge?account=demo", "", ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /purge: %d, want 405", resp.StatusCode)
	}
}
