package wire

import (
	"net/url"
	"strings"
	"testing"
)

// TestValidHost: a host the rule accepts is put in a Location as it is, by the core and the gateway alike; one
// it refuses must not reach a Location at all.
func TestValidHost(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"gw.test", true},
		{"GW-1.example_net:8443", true},
		{"192.0.2.1", true},
		{"192.0.2.1:80", true},
		{"example.com.", true},
		{"gw.test:", true}, // an empty port is the scheme's default (RFC 3986 §3.2.3)
		{"gw.test:65535", true},
		{"[::1]", true},
		{"[::1]:8080", true},
		{"[2001:db8::1]:443", true},
		{"[::ffff:192.0.2.1]", true},
		{strings.Repeat("a", MaxHostLen), true},

		{"", false},
		{strings.Repeat("a", MaxHostLen+1), false},
		{":8080", false},
		{"gw.test:65536", false},
		{"gw.test:8o", false},
		{"gw.test:1234567", false},
		{"gw.test:80:80", false},
		{"::1", false},              // an IPv6 address must be in brackets
		{"[::1", false},             // unclosed
		{"[::1]x", false},           // junk after the literal
		{"[gw.test]", false},        // a name is no IP-literal
		{"[192.0.2.1]", false},      // nor an IPv4 address
		{"[fe80::1%25eth0]", false}, // a zone id names an interface of the caller's machine
		{"[v1.x]", false},           // IPvFuture
		{"[]", false},
		{"gw.test/x", false},
		{"gw.test?x", false},
		{"gw.test#x", false},
		{"user@gw.test", false},
		{`gw.test\x`, false},
		{"gw test", false},
		{"gw.test\r\nX: y", false},
		{"gw.test\x00", false},
		{"gw.tést", false},
		{"gw.test%2f", false},
		{"gw.test,evil.test", false},
		{"gw!$&'()*+;=.test", false},
		{"gw.test~", false},
		{`"gw.test"`, false},
		{"<gw.test>", false},
	} {
		if got := ValidHost(tc.host); got != tc.want {
			t.Errorf("ValidHost(%q) = %v, want %v", tc.host, got, tc.want)
		}
		if got := ValidHost([]byte(tc.host)); got != tc.want {
			t.Errorf("ValidHost([]byte(%q)) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// FuzzValidHost: whatever the rule accepts is the host of a URL built from it, read back whole by a URL
// parser, with nothing of it taken for a user, a path, a query or a fragment.
func FuzzValidHost(f *testing.F) {
	for _, s := range []string{"gw.test", "[::1]:8443", "a@b", "a/b", "[::1%25x]", "a:", "a:1:2", "a,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if ValidHost(host) != ValidHost([]byte(host)) {
			t.Fatalf("ValidHost(%q) differs between string and []byte", host)
		}
		if !ValidHost(host) {
			return
		}
		u, err := url.Parse("https://" + host + "/api2/demo")
		if err != nil {
			t.Fatalf("ValidHost accepted %q, which makes no URL: %v", host, err)
		}
		if u.Host != host || u.User != nil || u.Path != "/api2/demo" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("ValidHost accepted %q, read back as host %q user %v path %q", host, u.Host, u.User, u.Path)
		}
	})
}

func TestFirstValue(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "a": "a", " a ,b": "a", "\ta\t": "a", ",b": "", "a, b, c": "a", "  ": "",
	} {
		if got := FirstValue(in); got != want {
			t.Errorf("FirstValue(%q) = %q, want %q", in, got, want)
		}
		if got := string(FirstValue([]byte(in))); got != want {
			t.Errorf("FirstValue([]byte(%q)) = %q, want %q", in, got, want)
		}
	}
}

// TestForwarded: the proxy nearest the caller wrote the first value; one the rules refuse is ignored (""), and
// the connection's own scheme and Host stand.
func TestForwarded(t *testing.T) {
	for in, want := range map[string]string{
		"https": "https", "HTTPS": "https", "Http": "http", "https, http": "https", " http ": "http",
		"": "", "ftp": "", "https2": "", "http s": "", ",https": "", "htt": "",
	} {
		if got := ForwardedProto(in); got != want {
			t.Errorf("ForwardedProto(%q) = %q, want %q", in, got, want)
		}
		if got := ForwardedProto([]byte(in)); got != want {
			t.Errorf("ForwardedProto([]byte(%q)) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"gw.test": "gw.test", "gw.test:8443, 10.0.0.5": "gw.test:8443", " [::1]:80 ": "[::1]:80",
		"": "", "gw.test/x": "", "user@gw.test": "", ", gw.test": "",
	} {
		if got := ForwardedHost(in); got != want {
			t.Errorf("ForwardedHost(%q) = %q, want %q", in, got, want)
		}
		if got := string(ForwardedHost([]byte(in))); got != want {
			t.Errorf("ForwardedHost([]byte(%q)) = %q, want %q", in, got, want)
		}
	}
}

// The gateway checks the Host of every request: a name must not allocate.
func TestValidHostAllocs(t *testing.T) {
	host := []byte("api.example.com:8443")
	if n := testing.AllocsPerRun(100, func() { ValidHost(host) }); n != 0 {
		t.Errorf("ValidHost allocates %v times per call", n)
	}
}
