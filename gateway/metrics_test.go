package gateway

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/reqgate/reqgate/core/coretest"
)

// metricValues are the process's metrics as exposed, by series (name and labels).
func metricValues(t *testing.T) map[string]float64 {
	t.Helper()
	var buf bytes.Buffer
	metrics.WritePrometheus(&buf, false)
	m := map[string]float64{}
	for line := range strings.Lines(buf.String()) {
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(line[i+1:]), 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		m[line[:i]] = f
	}
	return m
}

// Every request is counted under its own route, status and cache result, and timed under its own route, also
// when the requests of one connection differ from one to the next (a connection remembers the counter and
// histogram of its last request).
func TestRequestMetricsFollowEachRequest(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, cachedOptions(c))
	paths := []struct{ path, route string }{
		{"/api2/demo/re/1", "record"}, {"/api2/demo/re/1", "record"}, {"/api2/demo/re/999999", "record"},
		{"/api2/demo/user", "users"}, {"/api2/demo/re/1", "record"}, {"/api2/demo/uc/field", "fields"},
		{"/api2/demo/uc/field", "fields"}, {"/api2/demo/re/1", "record"},
	}
	counted := func(route, code, cache string) string {
		return fmt.Sprintf(`reqgate_gateway_requests_total{route=%q,code=%q,cache=%q}`, route, code, cache)
	}
	timed := func(route string) string {
		return fmt.Sprintf(`reqgate_gateway_request_seconds_count{route=%q}`, route)
	}
	want := map[string]float64{}
	before := metricValues(t)
	// The requests go one after another over the client's one keep-alive connection.
	for _, p := range paths {
		r := get(t, gw.URL+p.path)
		cache := r.Header.Get("X-Cache")
		if cache == "" {
			cache = "none"
		}
		want[counted(p.route, strconv.Itoa(r.Status), cache)]++
		want[timed(p.route)]++
	}
	after := metricValues(t)
	for s, n := range want {
		if got := after[s] - before[s]; got != n {
			t.Errorf("%s went up by %v, want %v", s, got, n)
		}
	}
}
