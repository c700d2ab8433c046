package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestNewUpstream checks the reading of the upstream URLs: the address dialled (the scheme's port when the
// URL has none), TLS, the Host sent and the path prefix, and the URLs refused.
func TestNewUpstream(t *testing.T) {
	for _, tc := range []struct {
		name      string
		upstreams []string
		addrs     []string // of the core clients, in order
		tls       []bool
		host      string
		prefix    string
		err       string // a part of the error; "" for none
	}{
		{"http without port", []string{"http://core"}, []string{"core:80"}, []bool{false}, "core", "", ""},
		{"https without port", []string{"https://core/x/"}, []string{"core:443"}, []bool{true}, "core", "/x", ""},
		{"ipv6 literal", []string{"http://[::1]"}, []string{"[::1]:80"}, []bool{false}, "[::1]", "", ""},
		{"explicit port", []string{"https://core:8443/api"}, []string{"core:8443"}, []bool{true}, "core:8443", "/api", ""},
		{"two cores", []string{"http://a:1/p", "https://b/p/"}, []string{"a:1", "b:443"}, []bool{false, true}, "a:1", "/p", ""},
		{"other scheme", []string{"ftp://core"}, nil, nil, "", "", "want http://host:port"},
		{"no host", []string{"http:///x"}, nil, nil, "", "", "want http://host:port"},
		{"malformed", []string{"http://core:port"}, nil, nil, "", "", `upstream "http://core:port"`},
		{"different prefixes", []string{"http://a/p", "http://b/q"}, nil, nil, "", "", "same path prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := newUpstream(&Options{Upstreams: tc.upstreams})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err=%v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer u.close()
			if u.host != tc.host || u.prefix != tc.prefix {
				t.Errorf("host=%q prefix=%q, want %q %q", u.host, u.prefix, tc.host, tc.prefix)
			}
			var addrs []string
			var tls []bool
			if u.balancer == nil {
				hc := u.client.(*fasthttp.HostClient)
				addrs, tls = append(addrs, hc.Addr), append(tls, hc.IsTLS)
			} else {
				for _, be := range u.balancer.backends {
					addrs, tls = append(addrs, be.hc.Addr), append(tls, be.hc.IsTLS)
					if be.probe.Addr != be.hc.Addr || be.probe.IsTLS != be.hc.IsTLS || !be.up.Load() {
						t.Errorf("backend %s: probe %s tls %v, up %v", be.hc.Addr, be.probe.Addr, be.probe.IsTLS, be.up.Load())
					}
				}
			}
			if strings.Join(addrs, " ") != strings.Join(tc.addrs, " ") || len(tls) != len(tc.tls) {
				t.Fatalf("addrs=%v, want %v", addrs, tc.addrs)
			}
			for i := range tls {
				if tls[i] != tc.tls[i] {
					t.Errorf("%s: tls=%v, want %v", addrs[i], tls[i], tc.tls[i])
				}
			}
		})
	}
}

// TestHealthProbesOnlyWhenAsked checks that a gateway with several cores probes them when given a
// HealthInterval and not at all when it is zero (the balancer then rests a refusing core for a while).
func TestHealthProbesOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name     string
		interval time.Duration
		want     bool
	}{
		{"zero: no probes", 0, false},
		{"interval: probes", time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := configured()
			o.Upstreams = []string{"http://" + deadAddr(t), "http://" + deadAddr(t)}
			o.HealthInterval = tc.interval
			g, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = g.Shutdown(t.Context()) }()
			if got := g.up.prober != nil; got != tc.want {
				t.Errorf("prober running: %v, want %v", got, tc.want)
			}
			if got := g.up.balancer.probing; got != tc.want {
				t.Errorf("balancer probing: %v, want %v", got, tc.want)
			}
		})
	}
}
