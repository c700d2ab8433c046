package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseNetwork(t *testing.T) {
	tests := []struct {
		in   string
		want string // "" = refused
	}{
		{"10.0.0.0/8", "10.0.0.0/8"},
		{"10.1.2.3/8", "10.0.0.0/8"},
		{"192.0.2.7", "192.0.2.7/32"},
		{"::1", "::1/128"},
		{"fd00::/8", "fd00::/8"},
		{" 127.0.0.1 ", "127.0.0.1/32"},
		{"10.0.0.0/33", ""},
		{"proxy.internal", ""},
		{"", ""},
		{"fe80::1%eth0", ""},
	}
	for _, tt := range tests {
		p, err := ParseNetwork(tt.in)
		got := ""
		if err == nil {
			got = p.String()
		}
		if got != tt.want {
			t.Errorf("ParseNetwork(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestParseNetworks reads a list as the gateway and the core take it: all parsed, or the first refusal.
func TestParseNetworks(t *testing.T) {
	got, err := ParseNetworks([]string{"10.1.2.3/8", "::ffff:192.0.2.1", " ::1 "})
	if err != nil {
		t.Fatal(err)
	}
	if s, want := fmt.Sprint(got), "[10.0.0.0/8 192.0.2.1/32 ::1/128]"; s != want {
		t.Errorf("got %s, want %s", s, want)
	}
	if got, err := ParseNetworks(nil); got != nil || err != nil {
		t.Errorf("none: got %v, %v; want nil", got, err)
	}
	if _, err := ParseNetworks([]string{"10.0.0.0/8", "10.0.0.0/99"}); err == nil || !strings.Contains(err.Error(), `"10.0.0.0/99"`) {
		t.Errorf("bad entry: err = %v", err)
	}
	// What the gateway and the core map into their options: the error of an unchecked configuration names the key.
	bad := Server{TrustedProxies: []string{"10.0.0.0/99"}}
	if _, err := bad.TrustedNetworks(); err == nil || !strings.HasPrefix(err.Error(), `server.trusted_proxies: bad network "10.0.0.0/99"`) {
		t.Errorf("TrustedNetworks of a bad entry: err = %v", err)
	}
	if got, err := (Server{TrustedProxies: []string{"::1"}}).TrustedNetworks(); err != nil || fmt.Sprint(got) != "[::1/128]" {
		t.Errorf("TrustedNetworks: got %v, %v", got, err)
	}
}

// TestTrustedProxies reads server.trusted_proxies from the file and from --set, and refuses a bad entry.
func TestTrustedProxies(t *testing.T) {
	file := writeFile(t, "c.yaml", "server:\n  trusted_proxies: [10.0.0.0/8, 192.0.2.7]\n")
	c := mustLoad(t, RoleGateway, []string{"--config", file}, nil)
	if got, want := c.Server.TrustedProxies, []string{"10.0.0.0/8", "192.0.2.7"}; !reflect.DeepEqual(got, want) {
		t.Errorf("file: got %q, want %q", got, want)
	}
	c = mustLoad(t, RoleGateway, []string{"--set", "server.trusted_proxies=127.0.0.1/32,::1"}, nil)
	if got, want := c.Server.TrustedProxies, []string{"127.0.0.1/32", "::1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("--set: got %q, want %q", got, want)
	}
	if got := Default(RoleGateway).Server.TrustedProxies; got != nil {
		t.Errorf("default: got %q, want none", got)
	}
	_, err := Load(RoleGateway, []string{"--set", "server.trusted_proxies=10.0.0.0/99"}, nil)
	if err == nil || !strings.Contains(err.Error(), `server.trusted_proxies: bad network "10.0.0.0/99"`) {
		t.Errorf("bad network: err = %v", err)
	}
}
