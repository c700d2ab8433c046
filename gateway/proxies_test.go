package gateway

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/internal/wire"
)

// TestTrustedProxies creates a record through the gateway with X-Forwarded-Proto/-Host set, as a
// TLS-terminating proxy sends them: the Location follows them only when the proxy's network is trusted.
func TestTrustedProxies(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	const create = `<requirement><fields><field><name>field_101</name><value>proxied</value></field></fields></requirement>`
	tests := []struct {
		name    string
		trusted []string
		headers []string
		want    string // Location prefix; "gw" stands for the gateway's own http://host:port
	}{
		{"trusted", []string{"127.0.0.0/8"}, []string{"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com"}, "https://api.example.com/api2/demo/re/"},
		{"trusted single address", []string{"10.9.9.9", "127.0.0.1"}, []string{"X-Forwarded-Proto: https"}, "https://gw/api2/demo/re/"},
		{"trusted, first of a list", []string{"127.0.0.1/32"}, []string{"X-Forwarded-Proto: https, http", "X-Forwarded-Host: a.example:8443, b.example"}, "https://a.example:8443/api2/demo/re/"},
		{"trusted, malformed values ignored", []string{"127.0.0.0/8"}, []string{"X-Forwarded-Proto: gopher", "X-Forwarded-Host: evil.example/x"}, "http://gw/api2/demo/re/"},
		{"trusted, IPv6 literal", []string{"127.0.0.0/8"}, []string{"X-Forwarded-Host: [2001:db8::1]:8443"}, "http://[2001:db8::1]:8443/api2/demo/re/"},
		// Hosts the core's rule (package wire) refuses: the gateway does not forward them either.
		{"trusted, junk after an IPv6 literal", []string{"127.0.0.0/8"}, []string{"X-Forwarded-Host: [::1]evil"}, "http://gw/api2/demo/re/"},
		{"trusted, IPv6 address without brackets", []string{"127.0.0.0/8"}, []string{"X-Forwarded-Host: 2001:db8::1"}, "http://gw/api2/demo/re/"},
		{"trusted, impossible port", []string{"127.0.0.0/8"}, []string{"X-Forwarded-Host: api.example.com:99999"}, "http://gw/api2/demo/re/"},
		{"other network", []string{"10.0.0.0/8"}, []string{"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com"}, "http://gw/api2/demo/re/"},
		{"none configured", nil, []string{"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com"}, "http://gw/api2/demo/re/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := startGateway(t, Options{Upstreams: []string{c.URL}, TrustedProxies: networks(t, tt.trusted...)})
			res := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", create, tt.headers...)
			if res.Status != http.StatusCreated {
				t.Fatalf("create: status %d (%s)", res.Status, res.Body)
			}
			want := strings.Replace(tt.want, "http://gw", gw.URL, 1)
			want = strings.Replace(want, "https://gw", "https://"+strings.TrimPrefix(gw.URL, "http://"), 1)
			if got := res.Header.Get("Location"); !strings.HasPrefix(got, want) {
				t.Errorf("Location: got %q, want prefix %q", got, want)
			}
		})
	}
}

func TestForwardedClient(t *testing.T) {
	proxies := networks(t, "10.0.0.0/8", "::1")
	const bad = "!" // an entry the walk reaches is not an address: refused
	tests := []struct {
		xff, want string
	}{
		{"", ""},
		{"192.0.2.1", "192.0.2.1"},
		{"192.0.2.1, 10.0.0.5", "192.0.2.1"},
		{"6.6.6.6, 192.0.2.1, 10.0.0.5, 10.0.0.6", "192.0.2.1"}, // the spoofable left part is not believed
		{"10.0.0.7, 10.0.0.5", "10.0.0.7"},                      // only proxies: the farthest one
		{"garbage, 10.0.0.5", bad},                              // a proxy's hop that names no caller: refused
		{"garbage", bad},                                        // the right-most hop is not an address
		{"192.0.2.1, 10.0.0.5:4711", "192.0.2.1"},               // ports, as some proxies write them
		{"[2001:db8::7]:443", "2001:db8::7"},
		{"192.0.2.1, , 10.0.0.5,", "192.0.2.1"},       // empty entries are skipped
		{"garbage, 192.0.2.1, 10.0.0.5", "192.0.2.1"}, // beyond the caller nothing is read
		{"192.0.2.1,::1", "192.0.2.1"},
		{"::ffff:192.0.2.9", "192.0.2.9"},
		{"2001:db8::1 , ::1", "2001:db8::1"},
		// Several header lines (one per "\n" here): a proxy that adds a line of its own is read like one
		// that appends; the caller's own first line is not believed.
		{"6.6.6.6\n192.0.2.1", "192.0.2.1"},
		{"6.6.6.6\n192.0.2.1, 10.0.0.5", "192.0.2.1"},
		{"192.0.2.1\n10.0.0.5", "192.0.2.1"},
		{"6.6.6.6, 192.0.2.1\n10.0.0.5\n::1", "192.0.2.1"},
	}
	for _, tt := range tests {
		got, ok := forwardedClient(lines(tt.xff), proxies)
		if !ok {
			got = bad
		}
		if got != tt.want {
			t.Errorf("forwardedClient(%q) = %q, want %q", tt.xff, got, tt.want)
		}
	}
}

func FuzzForwardedHeaders(f *testing.F) {
	proxies := networks(f, "10.0.0.0/8", "::1")
	f.Add("192.0.2.1, 10.0.0.5", "https", "api.example.com")
	f.Add(",,,", "HTTPS, http", "[::1]:8443")
	f.Fuzz(func(t *testing.T, xff, proto, host string) {
		if got, _ := forwardedClient(lines(xff), proxies); got != "" {
			if _, err := netip.ParseAddr(got); err != nil {
				t.Fatalf("forwardedClient(%q) = %q, not an address", xff, got)
			}
		}
		if p := wire.ForwardedProto([]byte(proto)); p != "" && p != "http" && p != "https" {
			t.Fatalf("ForwardedProto(%q) = %q", proto, p)
		}
		if h := wire.ForwardedHost([]byte(host)); len(h) > 0 && (len(h) > 255 || strings.ContainsAny(string(h), "/?#@ \r\n")) {
			t.Fatalf("ForwardedHost(%q) = %q", host, h)
		}
	})
}

// TestFailedLoginsPerForwardedIP: behind a trusted proxy the per-IP login limit counts the callers named in
// X-Forwarded-For, not the proxy; from an untrusted peer the header changes nothing.
func TestFailedLoginsPerForwardedIP(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	for _, trusted := range []bool{true, false} {
		t.Run(fmt.Sprintf("trusted=%v", trusted), func(t *testing.T) {
			opt := Options{Upstreams: []string{c.URL}, MaxUserFailures: 100, MaxIPFailures: 2}
			if trusted {
				opt.TrustedProxies = networks(t, "127.0.0.1")
			}
			gw := startGateway(t, opt)
			url := gw.URL + "/api2/demo/re/1"
			for i, u := range []string{"u1", "u2"} {
				if got := do(t, http.MethodGet, url, u, "x", "", "X-Forwarded-For: 192.0.2.1").Status; got != http.StatusUnauthorized {
					t.Fatalf("attempt %d: status %d, want 401", i, got)
				}
			}
			if got, want := do(t, http.MethodGet, url, "u3", "x", "", "X-Forwarded-For: 192.0.2.1").Status, http.StatusTooManyRequests; got != want {
				t.Errorf("third failure of one caller: status %d, want %d", got, want)
			}
			want := http.StatusOK // another caller behind the same proxy
			if !trusted {
				want = http.StatusTooManyRequests // one peer address: everyone is blocked
			}
			if got := do(t, http.MethodGet, url, "demo", "demo", "", "X-Forwarded-For: 192.0.2.2").Status; got != want {
				t.Errorf("other caller: status %d, want %d", got, want)
			}
		})
	}
}

// TestMalformedForwardedFor: behind a trusted proxy, a request whose X-Forwarded-For names no caller (an entry
// that is not an address where the proxy's own should be) is refused with 400 before anything is counted, so
// it cannot spend the failed-login count of the proxy's address, which every request the proxy sends without
// a forwarded address shares.
func TestMalformedForwardedFor(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	gw := startGateway(t, Options{Upstreams: []string{c.URL}, MaxUserFailures: 100, MaxIPFailures: 2,
		TrustedProxies: networks(t, "127.0.0.1", "10.0.0.0/8")})
	url := gw.URL + "/api2/demo/re/1"
	for i, xff := range []string{"garbage", "unknown, 10.0.0.5", "192.0.2.1,x"} {
		if got := do(t, http.MethodGet, url, fmt.Sprint("u", i), "x", "", "X-Forwarded-For: "+xff).Status; got != http.StatusBadRequest {
			t.Errorf("X-Forwarded-For %q: status %d, want 400", xff, got)
		}
	}
	// The proxy's own request (no X-Forwarded-For) is counted under its address, which the refusals left alone.
	if got := do(t, http.MethodGet, url, "demo", "demo", "").Status; got != http.StatusOK {
		t.Errorf("the proxy's own request: status %d, want 200", got)
	}
	if got := do(t, http.MethodGet, url, "demo", "demo", "", "X-Forwarded-For: 192.0.2.1:5555").Status; got != http.StatusOK {
		t.Errorf("a hop with a port: status %d, want 200", got)
	}
}

// lines splits a test's header value into header lines at "\n".
func lines(s string) [][]byte {
	if s == "" {
		return nil
	}
	var out [][]byte
	for l := range strings.SplitSeq(s, "\n") {
		out = append(out, []byte(l))
	}
	return out
}
