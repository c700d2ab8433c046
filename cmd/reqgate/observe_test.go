package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/internal/testbin"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// metricSum adds up every sample of a metric family in Prometheus text (all label sets).
func metricSum(text, name string) float64 {
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// TestAccessLogAndMetrics runs `serve` with its default (JSON) logs under a short load: every request gets
// one JSON access-log line with its request id, account, user, route, status and cache result, and never the
// credentials; the request, cache and store metrics move.
func TestAccessLogAndMetrics(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"))
	waitReady(t, p, "http://"+admin+"/readyz")
	_, before := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")

	const n = 50
	for i := 0; i < n; i++ {
		testsupport.Do(t, http.DefaultClient, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", "demo", "",
			"X-Request-Id: obs-"+strconv.Itoa(i))
	}
	_, after := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")
	for _, m := range []struct {
		name string
		min  float64
	}{
		{"reqgate_gateway_requests_total", n},
		{"reqgate_cache_hits_total", n - 1},
		{"reqgate_core_requests_total", 1},
		{"reqgate_core_store_seconds_count", 1},
		{"reqgate_gateway_request_seconds_count", n},
	} {
		if got := metricSum(after, m.name) - metricSum(before, m.name); got < m.min {
			t.Errorf("%s moved by %v under %d requests, want at least %v", m.name, got, n, m.min)
		}
	}

	// The access log is flushed within 100 ms.
	deadline := time.Now().Add(5 * time.Second)
	var lines []map[string]any
	for time.Now().Before(deadline) {
		lines = lines[:0]
		for _, l := range strings.Split(p.Output.String(), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "request" &&
				strings.HasPrefix(rec["request_id"].(string), "obs-") {
				lines = append(lines, rec)
			}
		}
		if len(lines) == n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(lines) != n {
		t.Fatalf("%d JSON access-log lines for %d requests; output:\n%s", len(lines), n, p.Output.String())
	}
	rec := lines[n-1]
	for k, want := range map[string]any{"account": "demo", "user": "demo", "status": float64(200), "cache": "HIT"} {
		if rec[k] != want {
			t.Errorf("access log %s=%v, want %v (%v)", k, rec[k], want, rec)
		}
	}
	for _, k := range []string{"route", "bytes", "upstream", "upstream_ms", "duration_ms", "user_agent"} {
		if _, ok := rec[k]; !ok {
			t.Errorf("access log lacks %s: %v", k, rec)
		}
	}
	if out := p.Output.String(); strings.Contains(out, "ZGVtbzpkZW1v") || strings.Contains(strings.ToLower(out), "authorization") {
		t.Error("the log shows credentials")
	}
}
