package main

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/internal/testbin"
)

// TestMetricsExposition scrapes /metrics of a running `serve` without Redis and checks it as Prometheus tooling
// does: promtool check metrics passes (HELP and TYPE for every family, counters named *_total and no other
// family so named); every family is in the families table, and every family of the table is documented in
// docs/operations.md; reqgate_ratelimit_redis_up reads 0 without Redis.
func TestMetricsExposition(t *testing.T) {
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(t.TempDir(), "r.db"))
	waitReady(t, p, "http://"+admin+"/readyz")
	do(t, http.MethodGet, "http://"+listen+"/api2/demo/re/1", "demo", "") // moves the request series
	resp, text := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}

	promtool, err := exec.Command(filepath.Join("..", "..", ".ci", "promtool")).Output()
	if err != nil {
		t.Fatalf(".ci/promtool: %v", err)
	}
	check := exec.Command(strings.TrimSpace(string(promtool)), "check", "metrics")
	check.Stdin = strings.NewReader(text)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	exposed := exposedFamilies(t, text)
	for name, typ := range exposed {
		f, ok := families[name]
		if !ok {
			t.Errorf("family %s (%s) is not in the families table of exposition.go", name, typ)
			continue
		}
		if f.typ != typ {
			t.Errorf("family %s: TYPE %s, the table says %s", name, typ, f.typ)
		}
	}
	for _, name := range []string{"reqgate_gateway_requests_total", "reqgate_core_requests_total",
		"reqgate_ratelimit_redis_up", "reqgate_build_info", "go_cgo_calls_total", "go_gc_forced_total", "go_cpus", "process_cpu_seconds_total"} {
		if _, ok := exposed[name]; !ok {
			t.Errorf("/metrics lacks the family %s", name)
		}
	}
	if !regexp.MustCompile(`(?m)^reqgate_ratelimit_redis_up 0$`).MatchString(text) {
		t.Errorf("reqgate_ratelimit_redis_up is not 0 without Redis:\n%s", grepLines(text, "redis_up"))
	}

	docs, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range families {
		if !strings.Contains(string(docs), "`"+name+"`") && !strings.Contains(string(docs), "`"+name+"{") {
			t.Errorf("docs/operations.md does not document %s", name)
		}
	}
}

// exposedFamilies reads a Prometheus text exposition into family -> TYPE, failing t on a sample without its
// family's HELP and TYPE lines or a family without help text.
func exposedFamilies(t *testing.T, text string) map[string]string {
	t.Helper()
	types := map[string]string{}
	helped := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, help, _ := strings.Cut(strings.TrimPrefix(line, "# HELP "), " ")
			if strings.TrimSpace(help) == "" {
				t.Errorf("family %s has an empty HELP", name)
			}
			helped[name] = true
		case strings.HasPrefix(line, "# TYPE "):
			name, typ, _ := strings.Cut(strings.TrimPrefix(line, "# TYPE "), " ")
			types[name] = typ
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			name := line[:strings.IndexAny(line, "{ ")]
			fam := name
			if _, ok := types[fam]; !ok {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					if base, ok := strings.CutSuffix(name, suffix); ok {
						fam = base
					}
				}
			}
			if types[fam] == "" || !helped[fam] {
				t.Errorf("sample %q has no HELP or TYPE line before it", line)
			}
		}
	}
	return types
}
