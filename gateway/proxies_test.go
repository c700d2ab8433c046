package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/reqgate/reqgate/core/coretest"
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
		{"other network", []string{"10.0.0.0/8"}, []string{"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com"}, "http://gw/api2/demo/re/"},
		{"none configured", nil, []string{"X-Forwarded-Proto: https", "X-Forwarded-Host: api.example.com"}, "http://gw/api2/demo/re/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := startGateway(t, Options{Upstream: c.URL, TrustedProxies: tt.trusted})
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

func TestParseNetworks(t *testing.T) {
	if _, err := New(Options{TrustedProxies: []string{"10.0.0.0/99"}}); err == nil {
		t.Error("New accepted a bad trusted proxy network")
	}
	got, err := parseNetworks([]string{"10.1.2.3/8", "::ffff:192.0.2.1", " ::1 "})
	if err != nil {
		t.Fatal(err)
	}
	want := "[10.0.0.0/8 192.0.2.1/32 ::1/128]"
	if s := fmt.Sprint(got); s != want {
		t.Errorf("parseNetworks: got %s, want %s", s, want)
	}
}
