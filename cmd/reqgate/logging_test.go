package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway/accesslog"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// TestAccessLogFollowsLogConfig checks that the gateway's access log takes log.format and is off above
// log.level info, like the slog lines it sits among.
func TestAccessLogFollowsLogConfig(t *testing.T) {
	tests := []struct {
		level, format string
		prefix        string // "" when there is no access log
	}{
		{"info", "json", `{"time":"`},
		{"info", "text", "time="},
		{"debug", "JSON", `{"time":"`},
		{"warn", "json", ""},
		{"error", "text", ""},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			var out bytes.Buffer
			log, lw, access, _ := newLogger(config.Log{Level: tt.level, Format: tt.format}, &out)
			defer lw.Close()
			defer access.Close()
			// The gateway writes the access log only while its logger is enabled for info.
			if on := log.Enabled(context.Background(), slog.LevelInfo); on != (tt.prefix != "") {
				t.Fatalf("logger enabled for info: %v at level %s", on, tt.level)
			}
			if tt.prefix == "" {
				return
			}
			if err := access.Log(time.Now(), &accesslog.Entry{Path: "/api2/demo/re/1", Status: 200}); err != nil {
				t.Fatal(err)
			}
			lw.Flush()
			got := out.String()
			if !strings.HasPrefix(got, tt.prefix) || !strings.Contains(got, "request") || !strings.Contains(got, "part") {
				t.Errorf("access line %q, want %s... with msg request and part gateway", got, tt.prefix)
			}
		})
	}
}

// TestEveryLineIsJSONWhileRedisIsDown runs a gateway whose Redis refuses connections, with JSON logs: go-redis's
// complaints (the pool cannot dial) come out as JSON lines with part "redis", and no line of the process's
// output is anything but JSON.
func TestEveryLineIsJSONWhileRedisIsDown(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(cfg, []byte("ratelimit:\n  policies:\n    - {name: per-ip, key: ip, limit: 100, period: 1s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	listen := testbin.FreeAddr(t)
	p := start(t, "gateway", "--listen", listen, "--admin-listen", "off", "--upstream", "http://"+testbin.FreeAddr(t),
		"--redis", "redis://"+testbin.FreeAddr(t), "--config", cfg)
	waitReady(t, p, "http://"+listen+"/healthz")
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && !strings.Contains(p.Output.String(), `"part":"redis"`) {
		if resp, err := http.Get("http://" + listen + "/api2/demo/re/1"); err == nil {
			resp.Body.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	out := p.Output.String()
	if !strings.Contains(out, `"part":"redis"`) {
		t.Fatalf("no go-redis line within 15s:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("not a JSON line: %q", line)
		}
	}
}

// TestCoreRequestLog runs the core role and checks its request log: one line per request at info, in
// log.format, with the X-Request-Id it was sent, the method, path, status and duration; none above info.
func TestCoreRequestLog(t *testing.T) {
	accounts := filepath.Join(t.TempDir(), "accounts.yaml")
	if err := os.WriteFile(accounts, []byte(crashAccounts), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, level, format string
		want                string // a substring of the line; "" when there must be none
	}{
		{"json", "info", "json", `"msg":"request","part":"core","request_id":"rid-%d","method":"GET","path":"/api2/crash/user","status":200,"duration_ms":`},
		{"text", "info", "text", `msg=request part=core request_id=rid-%d method=GET path=/api2/crash/user status=200 duration_ms=`},
		{"above info", "warn", "json", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			listen := testbin.FreeAddr(t)
			p := start(t, "core", "--listen", listen, "--admin-listen", "off", "--db", filepath.Join(t.TempDir(), "c.db"),
				"--accounts", accounts, "--set", "log.level="+tt.level, "--set", "log.format="+tt.format)
			waitReady(t, p, "http://"+listen+"/readyz")
			r := testsupport.Do(t, http.DefaultClient, http.MethodGet, "http://"+listen+"/api2/crash/user?q=secret",
				"writer", "writer", "", fmt.Sprintf("X-Request-Id: rid-%d", i))
			if r.Status != http.StatusOK {
				t.Fatalf("status %d", r.Status)
			}
			if tt.want == "" {
				time.Sleep(300 * time.Millisecond) // past the log writer's flush interval
				if out := p.Output.String(); strings.Contains(out, "rid-") {
					t.Errorf("a request line above level info:\n%s", out)
				}
				return
			}
			want := fmt.Sprintf(tt.want, i)
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) && !strings.Contains(p.Output.String(), want) {
				time.Sleep(20 * time.Millisecond)
			}
			out := p.Output.String()
			if !strings.Contains(out, want) {
				t.Fatalf("no request line with %s:\n%s", want, out)
			}
			if strings.Contains(out, "secret") {
				t.Errorf("the request line shows the query:\n%s", out)
			}
		})
	}
}
