package gateway

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

// TestAccountMetrics: with one place in the top, the first proved account gets request, error, throttle and
// cache-hit series of its own, the second counts as "other", and requests the core did not prove (an unknown
// api_key, a wrong password) are in no account's series: a stranger names no label.
func TestAccountMetrics(t *testing.T) {
	c := coretest.Start(t, coretest.Options{AccountsYAML: testsupport.TwoAccounts})
	l, err := ratelimit.New(ratelimittest.With(ratelimit.Options{RejectStatus: 429,
		Policies: []ratelimit.Policy{{Name: "account", Key: "api_key", Limit: 3, Burst: 3, Period: time.Minute}}}))
	if err != nil {
		t.Fatal(err)
	}
	opt := cachedOptions(c)
	opt.Limiter = l
	opt.TopAccounts = 1
	gw := startGateway(t, opt)
	for _, r := range []struct {
		account, user, pass, path string
		want                      int
	}{
		{"acme", "alice", "alice-secret", "/re/1", 200},      // a miss
		{"acme", "alice", "alice-secret", "/re/1", 200},      // a hit
		{"acme", "alice", "alice-secret", "/re/999999", 404}, // an error
		{"acme", "alice", "alice-secret", "/re/1", 429},      // the fourth call of the minute
		{"acme", "alice", "wrong", "/re/1", 401},             // not proved: not counted
		{"nosuch", "alice", "alice-secret", "/re/1", 401},    // not proved: not counted
		{"globex", "gina", "gina-secret", "/re/1", 200},
		{"globex", "gina", "gina-secret", "/re/1", 200},
	} {
		if got := do(t, "GET", gw.URL+"/api2/"+r.account+r.path, r.user, r.pass, ""); got.Status != r.want {
			t.Fatalf("%s %s as %s: status %d, want %d", r.account, r.path, r.user, got.Status, r.want)
		}
	}
	var buf bytes.Buffer
	gw.tenants.WritePrometheus(&buf)
	text := buf.String()
	for series, want := range map[string]int{
		`reqgate_gateway_account_requests_total{account="acme"}`:            4,
		`reqgate_gateway_account_errors_total{account="acme",class="4xx"}`:  2,
		`reqgate_gateway_account_errors_total{account="acme",class="5xx"}`:  0,
		`reqgate_gateway_account_throttled_total{account="acme"}`:           1,
		`reqgate_gateway_account_cache_hits_total{account="acme"}`:          1,
		`reqgate_gateway_account_requests_total{account="other"}`:           2,
		`reqgate_gateway_account_cache_hits_total{account="other"}`:         1,
		`reqgate_gateway_account_errors_total{account="other",class="4xx"}`: 0,
		`reqgate_gateway_account_throttled_total{account="other"}`:          0,
		`reqgate_gateway_account_errors_total{account="other",class="5xx"}`: 0,
	} {
		if line := series + " " + strconv.Itoa(want) + "\n"; !strings.Contains(text, line) {
			t.Errorf("want %q in\n%s", line, text)
		}
	}
	for _, stranger := range []string{`account="nosuch"`, `account="globex"`} {
		if strings.Contains(text, stranger) {
			t.Errorf("series with %s:\n%s", stranger, text)
		}
	}
}
