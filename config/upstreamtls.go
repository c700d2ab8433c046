package config

import (
	"crypto/tls"
	"crypto/x509"
	"net/url"
	"os"
	"strings"

	"github.com/reqgate/reqgate/internal/wire"
)

// upstreamTLS checks upstream.host and upstream.tls: a Host that is a host[:port] (wire.ValidHost), TLS settings
// only with an https upstream, a CA file that holds certificates, and a client certificate and key that load
// and belong together, so that a bad file stops the start instead of failing every request.
func (k *checker) upstreamTLS() {
	u := k.c.Upstream
	// Sent as the Host of every forwarded request, which a core behind no trusted proxy builds Location from:
	// a host by the rule the core reads Host by (package wire), or the core would not use it.
	if u.Host != "" && !wire.ValidHost(u.Host) {
		k.fail("upstream.host", "%q: want a host name, with an optional :port", u.Host)
	}
	t := u.TLS
	if t == (UpstreamTLS{}) {
		return
	}
	https := false
	for _, s := range splitList(u.URL) {
		if pu, err := url.Parse(s); err == nil && pu.Scheme == "https" {
			https = true
		}
	}
	if !https {
		key := "upstream.tls.server_name"
		switch {
		case t.CAFile != "":
			key = "upstream.tls.ca_file"
		case t.CertFile != "":
			key = "upstream.tls.cert_file"
		case t.KeyFile != "":
			key = "upstream.tls.key_file"
		}
		k.fail(key, "set, but no upstream.url is https://")
	}
	if strings.ContainsFunc(t.ServerName, func(c rune) bool { return c <= ' ' || c == 0x7f || c == ':' || c == '/' }) {
		k.fail("upstream.tls.server_name", "%q: want a host name", t.ServerName)
	}
	if t.CAFile != "" {
		if _, err := LoadCAFile(t.CAFile); err != nil {
			k.fail("upstream.tls.ca_file", "%v", err)
		}
	}
	switch {
	case t.CertFile == "" && t.KeyFile == "":
	case t.CertFile == "":
		k.fail("upstream.tls.cert_file", "must be set with upstream.tls.key_file")
	case t.KeyFile == "":
		k.fail("upstream.tls.key_file", "must be set with upstream.tls.cert_file")
	default:
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			k.fail("upstream.tls.cert_file", "with upstream.tls.key_file: %v", err)
		}
	}
}

// LoadCAFile reads a PEM file of CA certificates into a pool; a file without any certificate is an error.
func LoadCAFile(name string) (*x509.CertPool, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, &caFileError{name}
	}
	return pool, nil
}

type caFileError struct{ name string }

func (e *caFileError) Error() string { return e.name + ": no PEM certificate in it" }
