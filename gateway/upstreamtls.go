package gateway

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/reqgate/reqgate/config"
	"github.com/valyala/fasthttp"
)

// UpstreamTLS is the client side of TLS to https:// cores (config.UpstreamTLS, the keys upstream.tls.*).
type UpstreamTLS struct {
	ServerName string // SNI and the name verified in the certificate; "" = the host of each core's URL
	CAFile     string // PEM CAs to trust instead of the system's roots; "" = the system's roots
	CertFile   string // PEM client certificate presented to the cores, with KeyFile; "" = none
	KeyFile    string
}

// config builds the TLS configuration the files name, read once at the start.
func (t UpstreamTLS) config() (*tls.Config, error) {
	c := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pool, err := config.LoadCAFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("gateway: upstream TLS CA file: %w", err)
		}
		c.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, fmt.Errorf("gateway: upstream TLS: a client certificate needs both its certificate and its key file")
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("gateway: upstream TLS client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// tlsDialer dials a core over TLS, the handshake done here rather than by fasthttp so that its failure (an
// unknown CA, a wrong name, a refused client certificate, no answer to the ClientHello) counts as a failure to
// connect: nothing of the request was sent, so it may go to another core, writes too, and the caller is told
// it was never sent. The TLS connection runs over the coreConn, which still checks before each request that the
// core has not closed the connection; fasthttp sees the connection has a Handshake method and does not wrap it
// again. The name verified and sent as SNI is tc's ServerName, else host, the host of the core's URL.
func tlsDialer(tc *tls.Config, host string) fasthttp.DialFuncWithTimeout {
	tc = tc.Clone()
	if tc.ServerName == "" {
		tc.ServerName = host
	}
	return func(addr string, timeout time.Duration) (net.Conn, error) {
		limit := min(timeout, dialTimeout)
		start := time.Now()
		raw, err := dial(addr, limit)
		if err != nil {
			return nil, err
		}
		c := tls.Client(raw, tc)
		if err := c.SetDeadline(start.Add(limit)); err != nil {
			_ = raw.Close()
			return nil, dialError{err}
		}
		if err := c.Handshake(); err != nil {
			_ = raw.Close()
			return nil, dialError{fmt.Errorf("TLS handshake with %s: %w", addr, err)}
		}
		if err := c.SetDeadline(time.Time{}); err != nil {
			_ = raw.Close()
			return nil, dialError{err}
		}
		return c, nil
	}
}
