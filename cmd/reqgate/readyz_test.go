package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/ratelimit/redistest"
)

// TestReadyzExcludeRedis checks the admin listener's /readyz?exclude=redis, the chart's startup probe of the
// gateway: with Redis killed, /readyz says 503 (Redis does not answer) while /readyz?exclude=redis says 200 and
// the gateway serves a read, so a replica started during a Redis outage is not restarted by its probe; with the
// core unreachable it still says 503; and an unknown check name is a 400, never a pass.
func TestReadyzExcludeRedis(t *testing.T) {
	rds := redistest.Start(t)
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"),
		"--redis", rds.URL())
	waitReady(t, p, "http://"+admin+"/readyz")
	readyz := "http://" + admin + "/readyz"

	type probe struct {
		url    string
		status int
		body   string
	}
	check := func(step string, probes []probe) {
		t.Helper()
		for _, pr := range probes {
			resp, body := adminDo(t, http.MethodGet, pr.url)
			if resp.StatusCode != pr.status || !strings.Contains(body, pr.body) {
				t.Errorf("%s: GET %s = %d %q, want %d with %q", step, pr.url, resp.StatusCode, body, pr.status, pr.body)
			}
		}
	}
	bad := []probe{
		{readyz + "?exclude=redsi", http.StatusBadRequest, `unknown check "redsi"`},
		{readyz + "?exclude=redis,core", http.StatusBadRequest, `unknown check "core"`},
	}
	check("redis up", append([]probe{
		{readyz, http.StatusOK, "ready"},
		{readyz + "?exclude=redis", http.StatusOK, "ready"},
	}, bad...))

	rds.Stop()
	check("redis down", append([]probe{
		{readyz, http.StatusServiceUnavailable, "redis"},
		{readyz + "?exclude=redis", http.StatusOK, "ready"},
		{readyz + "?exclude=redis&exclude=redis", http.StatusOK, "ready"},
	}, bad...))
	if resp, _ := do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("a read through the gateway with Redis down: %d, want 200", resp.StatusCode)
	}

	// A gateway started while Redis is down (a new replica during the outage) passes the startup probe once its
	// core answers, and fails it again when the core stops answering.
	coreAddr := testbin.FreeAddr(t)
	core := start(t, "core", "--listen", coreAddr, "--admin-listen", "off", "--db", filepath.Join(t.TempDir(), "c.db"))
	waitReady(t, core, "http://"+coreAddr+"/readyz")
	gwAdmin := testbin.FreeAddr(t)
	gw := start(t, "gateway", "--listen", testbin.FreeAddr(t), "--admin-listen", gwAdmin,
		"--upstream", "http://"+coreAddr, "--redis", rds.URL())
	waitReady(t, gw, "http://"+gwAdmin+"/readyz?exclude=redis")
	if resp, body := adminDo(t, http.MethodGet, "http://"+gwAdmin+"/readyz"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("gateway started without Redis: /readyz = %d %q, want 503", resp.StatusCode, body)
	}
	if err := core.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	resp, body := adminDo(t, http.MethodGet, "http://"+gwAdmin+"/readyz?exclude=redis")
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "upstream") {
		t.Errorf("core stopped: /readyz?exclude=redis = %d %q, want 503 naming the upstream", resp.StatusCode, body)
	}
}
