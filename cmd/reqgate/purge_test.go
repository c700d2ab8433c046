package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestPurgeUnknownAccount: a purge of an account the core's store does not hold, or of a name no api_key can
// have, is 404 and purges nothing; each purge and refusal is logged with who asked (the remote address and the
// endpoint). A gateway alone cannot tell which accounts exist: it purges any possible api_key.
func TestPurgeUnknownAccount(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"))
	waitReady(t, p, "http://"+admin+"/readyz")
	for _, tt := range []struct {
		account string
		want    int
		logged  string
	}{
		{"demo", http.StatusOK, "account purged"},
		{"nosuch", http.StatusNotFound, "purge refused: unknown account"},
		{"not%20a%20key", http.StatusNotFound, "purge refused: unknown account"},
	} {
		if resp, body := do(t, http.MethodPost, "http://"+admin+"/purge?account="+tt.account, "", ""); resp.StatusCode != tt.want {
			t.Errorf("POST /purge?account=%s: %d %q, want %d", tt.account, resp.StatusCode, body, tt.want)
		}
		waitLog(t, p, func(rec map[string]any) bool {
			return rec["msg"] == tt.logged && rec["endpoint"] == "POST /purge" &&
				strings.HasPrefix(rec["remote"].(string), "127.0.0.1:") && rec["account"] != nil
		})
	}

	gwAdmin := testbin.FreeAddr(t)
	gw := start(t, "gateway", "--listen", testbin.FreeAddr(t), "--admin-listen", gwAdmin, "--upstream", "http://"+testbin.FreeAddr(t))
	waitReady(t, gw, "http://"+gwAdmin+"/healthz")
	for account, want := range map[string]int{"nosuch": http.StatusOK, "not%20a%20key": http.StatusNotFound} {
		if resp, body := do(t, http.MethodPost, "http://"+gwAdmin+"/purge?account="+account, "", ""); resp.StatusCode != want {
			t.Errorf("gateway role: POST /purge?account=%s: %d %q, want %d", account, resp.StatusCode, body, want)
		}
	}
}

// waitLog waits up to 5s for a JSON log line of p that match accepts.
func waitLog(t *testing.T, p *proc, match func(map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, l := range strings.Split(p.Output.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) == nil && match(rec) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no such log line in:\n%s", p.Output.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
