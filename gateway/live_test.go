package gateway

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/testsupport"
	"github.com/reqgate/reqgate/ratelimit"
	"github.com/reqgate/reqgate/ratelimit/ratelimittest"
)

func mustLimiter(tb testing.TB, limit int) *ratelimit.Limiter {
	tb.Helper()
	l, err := ratelimit.New(ratelimittest.Options(ratelimit.Policy{Name: "account", Key: "api_key", Limit: limit, Burst: limit, Period: time.Hour}))
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestReconfigure changes each live option of a serving gateway and checks that the next request follows
// the new value; the same request before Reconfigure shows the old one.
func TestReconfigure(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	const create = `<requirement><fields><field><name>field_101</name><value>x</value></field></fields></requirement>`
	tests := []struct {
		name  string
		start func(o *Options)
		live  func(t *testing.T) Live
		// probe sends the request whose answer shows the option; it returns what the test compares.
		probe         func(t *testing.T, gw *testGateway, clk *testsupport.Clock) string
		before, after string
	}{
		{
			name: "cors origins",
			live: func(*testing.T) Live { return Live{CORSOrigins: []string{"https://app.example.com"}} },
			probe: func(t *testing.T, gw *testGateway, _ *testsupport.Clock) string {
				return get(t, gw.URL+"/api2/demo/re/1", "Origin: https://app.example.com").Header.Get("Access-Control-Allow-Origin")
			},
			before: "", after: "https://app.example.com",
		},
		{
			name: "trusted proxies",
			live: func(*testing.T) Live {
				return Live{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
			},
			probe: func(t *testing.T, gw *testGateway, _ *testsupport.Clock) string {
				res := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", create,
					"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com")
				loc := res.Header.Get("Location")
				return loc[:strings.Index(loc, "/api2")]
			},
			before: "http://gw", after: "https://api.example.com",
		},
		{
			name: "limiter added",
			live: func(t *testing.T) Live { return Live{Limiter: mustLimiter(t, 1)} },
			probe: func(t *testing.T, gw *testGateway, _ *testsupport.Clock) string {
				get(t, gw.URL+"/api2/demo/re/1")
				return http.StatusText(get(t, gw.URL+"/api2/demo/re/1").Status)
			},
			before: "OK", after: "Too Many Requests",
		},
		{
			name:  "limiter removed",
			start: func(o *Options) { o.Limiter = mustLimiter(t, 1) },
			live:  func(*testing.T) Live { return Live{} },
			probe: func(t *testing.T, gw *testGateway, _ *testsupport.Clock) string {
				return http.StatusText(get(t, gw.URL+"/api2/demo/re/1").Status)
			},
			// The limiter admits one: the probe before Reconfigure; it would reject the one after.
			before: "OK", after: "OK",
		},
		{
			name: "cache ttl",
			live: func(*testing.T) Live { return Live{CacheTTL: 10 * time.Second} },
			probe: func(t *testing.T, gw *testGateway, clk *testsupport.Clock) string {
				get(t, gw.URL+"/api2/demo/re/1", "Cache-Control: no-cache") // stored now
				clk.Add(15 * time.Second)
				return get(t, gw.URL+"/api2/demo/re/1").Header.Get("X-Cache")
			},
			before: "HIT", after: "MISS",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := testsupport.NewClock(time.Now())
			opt := cachedOptions(c)
			opt.Now = clk.Now
			if tt.start != nil {
				tt.start(&opt)
			}
			gw := startGateway(t, opt)
			host := strings.TrimPrefix(gw.URL, "http://")
			norm := func(s string) string { return strings.ReplaceAll(s, host, "gw") }
			if got := norm(tt.probe(t, gw, clk)); got != tt.before {
				t.Fatalf("before Reconfigure: %q, want %q", got, tt.before)
			}
			l := tt.live(t)
			if l.CacheTTL == 0 { // the case does not change the cache's settings
				l.CacheTTL, l.CacheStaleIfError = opt.Cache.TTL, opt.Cache.StaleIfError
			}
			if err := gw.Reconfigure(l); err != nil {
				t.Fatal(err)
			}
			if got := norm(tt.probe(t, gw, clk)); got != tt.after {
				t.Errorf("after Reconfigure: %q, want %q", got, tt.after)
			}
		})
	}
}

// TestReconfigureRefused gives Reconfigure a cache TTL the cache refuses (0): nothing changes, the CORS
// origins in force stay too.
func TestReconfigureRefused(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	opt := cachedOptions(c)
	opt.CORSOrigins = []string{"https://app.example.com"}
	gw := startGateway(t, opt)
	if err := gw.Reconfigure(Live{CacheTTL: 0}); err == nil {
		t.Fatal("Reconfigure accepted a cache TTL of 0")
	}
	if got := get(t, gw.URL+"/api2/demo/re/1", "Origin: https://app.example.com").Header.Get("Access-Control-Allow-Origin"); got != "https://app.example.com" {
		t.Errorf("after the refusal: Access-Control-Allow-Origin %q, want the old origin", got)
	}
}
