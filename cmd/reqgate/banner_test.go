package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestServeOutputIsLogLines runs `serve` with its output going to pipes, as under a container runtime or a
// service manager: nothing is written to stdout, every line on stderr is a JSON log record, the demo account's
// base URLs are one of them, and a clean stop (SIGTERM) ends with one last "stopped" line that says how long the
// process ran and how many requests it answered.
func TestServeOutputIsLogLines(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	cmd := exec.Command(testbin.Binary(t), "serve", "--listen", listen, "--admin-listen", admin,
		"--db", filepath.Join(t.TempDir(), "r.db"))
	cmd.Env = os.Environ()
	var stdout testsupport.LockedBuffer
	cmd.Stdout = &stdout
	p := testbin.Run(t, cmd) // p.Output is stderr
	waitReady(t, p, "http://"+admin+"/readyz")
	const n = 3
	for range n {
		if resp, body := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("GET: %d %s", resp.StatusCode, body)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.Done:
		p.Done <- err
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.Output.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20s of SIGTERM")
	}

	if out := stdout.String(); out != "" {
		t.Errorf("stdout is not empty:\n%s", out)
	}
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(p.Output.String(), "\n"), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("a line on stderr is not JSON: %q\n%s", line, p.Output.String())
		}
		recs = append(recs, rec)
	}
	banner := false
	for _, rec := range recs {
		if rec["msg"] == "demo account ready" {
			banner = rec["base_url_v2"] == "http://"+listen+"/api2/demo" && rec["base_url_v1"] == "http://"+listen+"/api/demo"
		}
	}
	if !banner {
		t.Errorf("no demo account line with the base URLs:\n%s", p.Output.String())
	}
	last := recs[len(recs)-1]
	if last["msg"] != "stopped" || last["role"] != "serve" || last["uptime"] == "" || last["requests"] != float64(n) {
		t.Errorf("last line %v, want msg stopped, role serve, an uptime and requests %d", last, n)
	}
	if s, _ := last["uptime_seconds"].(float64); s <= 0 {
		t.Errorf("uptime_seconds %v", last["uptime_seconds"])
	}
}
