package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/ratelimit/redistest"

	"github.com/reqgate/reqgate/internal/testbin"
)

// The Helm chart's Grafana dashboard and the PrometheusRule it reads, as files of the repository.
const (
	dashboardFile = "../../charts/reqgate/dashboards/reqgate.json"
	rulesTemplate = "../../charts/reqgate/templates/prometheusrule.yaml"
)

// TestDashboardMetricsExist runs `serve` with Redis and a rate-limit policy, makes a miss, a hit, a 401 and a
// write, and checks that every metric the chart's dashboard and PrometheusRule query is on /metrics: a renamed
// metric would otherwise leave a panel or an alert silently empty. The dashboard reads recording rules
// (level:metric:operations names), so each of those must be recorded by the PrometheusRule, and the metrics of
// its expression must exist.
func TestDashboardMetricsExist(t *testing.T) {
	rds := redistest.Start(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	policy := "ratelimit:\n  policies:\n    - {name: account, key: api_key, limit: 1000, period: 1s}\n"
	if err := os.WriteFile(config, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	listen, admin := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := start(t, "serve", "--listen", listen, "--admin-listen", admin, "--db", filepath.Join(dir, "r.db"),
		"--redis", rds.URL(), "--config", config)
	waitReady(t, p, "http://"+admin+"/readyz")

	base := "http://" + listen + "/api2/demo"
	for _, r := range []struct {
		method, path, user, body string
		want                     int
	}{
		{http.MethodGet, "/re/1", "demo", "", http.StatusOK}, // a miss
		{http.MethodGet, "/re/1", "demo", "", http.StatusOK}, // a hit
		{http.MethodGet, "/re/1", "", "", http.StatusUnauthorized},
		{http.MethodPost, "/re", "demo", titleBody("dashboard"), http.StatusCreated},
	} {
		if resp, body := do(t, r.method, base+r.path, r.user, r.body); resp.StatusCode != r.want {
			t.Fatalf("%s %s: status %d, want %d; %s", r.method, r.path, resp.StatusCode, r.want, body)
		}
	}
	_, exposition := do(t, http.MethodGet, "http://"+admin+"/metrics", "", "")
	samples := sampleNames(exposition)
	for _, s := range []string{`cache="HIT"`, `cache="MISS"`, `code="401"`, `code="201"`} {
		if !strings.Contains(exposition, s) {
			t.Errorf("/metrics: no reqgate_gateway_requests_total sample with %s", s)
		}
	}

	records, ruleExprs := readRules(t, rulesTemplate)
	dashExprs := dashboardExprs(t, dashboardFile)
	if len(dashExprs) < 20 {
		t.Fatalf("%s: %d queries, want the panels' (20 or more)", dashboardFile, len(dashExprs))
	}

	// The dashboard's queries, the recording rules they read resolved to their expressions, and the alerts.
	queried := map[string][]string{} // metric name -> where it is queried
	for _, e := range dashExprs {
		metricNames, recordNames := promqlNames(e)
		for _, m := range metricNames {
			queried[m] = append(queried[m], "dashboard")
		}
		for _, r := range recordNames {
			expr, ok := records[r]
			if !ok {
				t.Errorf("the dashboard reads %s, which %s does not record", r, rulesTemplate)
				continue
			}
			m, _ := promqlNames(expr)
			for _, m := range m {
				queried[m] = append(queried[m], "dashboard via "+r)
			}
		}
	}
	for _, e := range ruleExprs {
		m, _ := promqlNames(e)
		for _, m := range m {
			queried[m] = append(queried[m], "PrometheusRule")
		}
	}

	names := make([]string, 0, len(queried))
	for m := range queried {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		if !samples[m] {
			t.Errorf("%s (queried by %s) is not on /metrics", m, strings.Join(dedup(queried[m]), ", "))
			continue
		}
		if strings.HasSuffix(m, "_bucket") && !regexp.MustCompile(`(?m)^`+m+`\{.*le="`).MatchString(exposition) {
			t.Errorf("%s has no le label: not a histogram's buckets", m)
		}
	}
	// The panels the dashboard promises, each on the metrics behind it.
	for _, m := range []string{
		"reqgate_gateway_requests_total", "reqgate_cache_hits_total", "reqgate_cache_bytes",
		"reqgate_gateway_upstream_seconds_bucket", "reqgate_ratelimit_decisions_total",
		"reqgate_ratelimit_redis_fallback_total", "reqgate_ratelimit_redis_up", "reqgate_auth_failures_total",
		"reqgate_core_store_seconds_bucket", "reqgate_gateway_account_requests_total",
		"reqgate_gateway_account_errors_total", "reqgate_gateway_account_throttled_total",
		"reqgate_gateway_account_cache_hits_total",
	} {
		if !strings.Contains(strings.Join(queried[m], ","), "dashboard") {
			t.Errorf("the dashboard does not query %s", m)
		}
	}
}

// sampleNames returns the names of the samples of a Prometheus text exposition (a histogram's are its
// _bucket, _sum and _count series, as a query names them).
func sampleNames(text string) map[string]bool {
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

var (
	promqlString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlIdent  = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

// promqlNames returns the reqgate metric names and the recording-rule names (those with a colon) of a PromQL
// expression. Label values are dropped first, so that a quoted "reqgate_..." is not taken for a metric; label
// names, functions, keywords and Grafana's $variables never start with reqgate_ nor hold a colon.
func promqlNames(expr string) (metrics, records []string) {
	for _, id := range promqlIdent.FindAllString(promqlString.ReplaceAllString(expr, `""`), -1) {
		switch {
		case strings.Contains(id, ":"):
			records = append(records, id)
		case strings.HasPrefix(id, "reqgate_"):
			metrics = append(metrics, id)
		}
	}
	return metrics, records
}

// dashboardExprs returns the PromQL of a Grafana dashboard: every "expr" of its panels' targets and the
// queries of its template variables.
func dashboardExprs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return exprs
}

var templateAction = regexp.MustCompile(`\{\{.*?\}\}`)

// readRules reads the PrometheusRule template: the expression of each recording rule by its name, and the
// expressions of every rule (alerts too). It reads the template's lines, not a rendering (no helm here): an
// "expr:" is one line or a block scalar of the lines indented under it, and template actions such as the
// namespace become a placeholder.
func readRules(t *testing.T, path string) (records map[string]string, exprs []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	indent := func(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }
	records = map[string]string{}
	lines := strings.Split(string(data), "\n")
	record := ""
	for i := 0; i < len(lines); i++ {
		field := strings.TrimPrefix(strings.TrimSpace(lines[i]), "- ")
		if name, ok := strings.CutPrefix(field, "record: "); ok {
			record = name
			continue
		}
		if strings.HasPrefix(field, "alert: ") {
			record = ""
			continue
		}
		expr, ok := strings.CutPrefix(field, "expr: ")
		if !ok {
			continue
		}
		if expr == "|" || expr == ">" {
			var block []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || indent(lines[i+1]) > indent(lines[i])) {
				i++
				block = append(block, strings.TrimSpace(lines[i]))
			}
			expr = strings.Join(block, " ")
		}
		expr = templateAction.ReplaceAllString(expr, "x")
		exprs = append(exprs, expr)
		if record != "" {
			records[record] = expr
			record = ""
		}
	}
	if len(records) == 0 || len(exprs) == len(records) {
		t.Fatalf("%s: %d recording rules among %d expressions; want both recording rules and alerts", path, len(records), len(exprs))
	}
	return records, exprs
}

func dedup(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
