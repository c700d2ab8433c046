package gateway

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/certs"
	"github.com/reqgate/reqgate/gateway/certs/certstest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// startTLSGateway runs a gateway with opt on a free loopback port behind TLS with the pair of h, and shuts it
// down when the test ends. It returns the gateway's https:// URL.
func startTLSGateway(tb testing.TB, opt Options, h *certs.Holder) string {
	tb.Helper()
	_, addr := runGateway(tb, opt, func(g *Gateway, ln net.Listener) error { return g.ServeTLS(ln, h.TLSConfig()) })
	return "https://" + addr
}

// TestWriteTimeoutDropsNonReaderTLS is TestWriteTimeoutDropsNonReader over TLS, where the server writes through
// the TLS connection to the socket beneath it.
func TestWriteTimeoutDropsNonReaderTLS(t *testing.T) {
	pair := certstest.Write(t, t.TempDir(), "gw")
	h, err := certs.Load(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	opt := nonReaderOptions(t)
	base := startTLSGateway(t, opt, h)
	checkNonReaderDropped(t, func(d *net.Dialer) (net.Conn, error) {
		return tls.DialWithDialer(d, "tcp", strings.TrimPrefix(base, "https://"), &tls.Config{RootCAs: pair.Pool()})
	})
}

// tlsClient is an HTTP client that trusts roots, on a new connection for every request.
func tlsClient(roots *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true,
		TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

// TestTLSServe sends requests over HTTPS through the gateway to a real core: with Basic credentials they are
// answered, and the gateway tells the core the caller used https (the Location of a created record).
func TestTLSServe(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	pair := certstest.Write(t, t.TempDir(), "gw")
	h, err := certs.Load(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	base := startTLSGateway(t, Options{Upstreams: []string{c.URL}}, h)
	cl := tlsClient(pair.Pool())
	const create = `<requirement><fields><field><name>field_101</name><value>over TLS</value></field></fields></requirement>`
	tests := []struct {
		name       string
		method     string
		user, pass string
		body       string
		status     int
		location   string // prefix of Location, when not ""
	}{
		{"read", http.MethodGet, "demo", "demo", "", http.StatusOK, ""},
		{"wrong password", http.MethodGet, "demo", "nope", "", http.StatusUnauthorized, ""},
		{"create", http.MethodPost, "demo", "demo", create, http.StatusCreated, base + "/api2/demo/re/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := "/api2/demo/re"
			if tt.method == http.MethodGet {
				path += "/1"
			}
			res, err := testsupport.Send(cl, tt.method, base+path, tt.user, tt.pass, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status {
				t.Fatalf("status %d, want %d (%s)", res.Status, tt.status, res.Body)
			}
			if got := res.Header.Get("Location"); tt.location != "" && !strings.HasPrefix(got, tt.location) {
				t.Errorf("Location %q, want prefix %q", got, tt.location)
			}
		})
	}
}

// TestTLSRefusals checks what the TLS listener refuses: versions before 1.2, TLS 1.2 suites without an AEAD
// and plain HTTP, which gets a plain-text 400; the listener serves HTTPS after each.
func TestTLSRefusals(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	pair := certstest.Write(t, t.TempDir(), "gw")
	h, err := certs.Load(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	base := startTLSGateway(t, Options{Upstreams: []string{c.URL}}, h)
	addr := strings.TrimPrefix(base, "https://")
	tests := []struct {
		name   string
		config *tls.Config
	}{
		{"TLS 1.1", &tls.Config{RootCAs: pair.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}},
		{"TLS 1.0", &tls.Config{RootCAs: pair.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS10}},
		{"TLS 1.2 CBC suite", &tls.Config{RootCAs: pair.Pool(), MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tls.Dial("tcp", addr, tt.config)
			if err == nil {
				v := conn.ConnectionState().Version
				conn.Close()
				t.Fatalf("handshake succeeded (version %x)", v)
			}
		})
	}
	t.Run("TLS 1.2 AEAD suite", func(t *testing.T) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pair.Pool(), MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}})
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	})
	t.Run("plain HTTP", func(t *testing.T) {
		res, err := http.Get("http://" + addr + "/api2/demo/re/1")
		if err != nil {
			t.Fatalf("plain HTTP: %v (want a 400 answer)", err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "HTTPS") {
			t.Errorf("plain HTTP: %d %q, want 400 naming HTTPS", res.StatusCode, b)
		}
	})
	if res, err := testsupport.Send(tlsClient(pair.Pool()), http.MethodGet, base+"/api2/demo/re/1", "demo", "demo", ""); err != nil || res.Status != http.StatusOK {
		t.Fatalf("HTTPS after the refusals: %v %d", err, res.Status)
	}
}

// servedSerial is the serial number of the certificate the server at addr presents.
func servedSerial(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // which certificate, not trust
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// TestTLSReload replaces the certificate files under a running listener and reloads: a valid new pair is
// presented to the next handshake, an invalid one is refused and the pair before it stays.
func TestTLSReload(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	dir := t.TempDir()
	first := certstest.Write(t, dir, "gw")
	h, err := certs.Load(first.CertFile, first.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(startTLSGateway(t, Options{Upstreams: []string{c.URL}}, h), "https://")
	if got, want := servedSerial(t, addr), first.Cert.SerialNumber.String(); got != want {
		t.Fatalf("serial %s, want the first pair's %s", got, want)
	}
	second, third := certstest.New(t, "second"), certstest.New(t, "third")
	tests := []struct {
		name      string
		cert, key []byte // written over the files; nil removes the file
		ok        bool
		want      *x509.Certificate // presented after the reload
	}{
		{"new pair", second.CertPEM, second.KeyPEM, true, second.Cert},
		{"certificate replaced, key not yet", third.CertPEM, second.KeyPEM, false, second.Cert},
		{"key file missing", third.CertPEM, nil, false, second.Cert},
		{"not PEM", []byte("garbage"), third.KeyPEM, false, second.Cert},
		{"both replaced", third.CertPEM, third.KeyPEM, true, third.Cert},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeOrRemove(t, first.CertFile, tt.cert)
			writeOrRemove(t, first.KeyFile, tt.key)
			if err := h.Reload(); (err == nil) != tt.ok {
				t.Fatalf("Reload: %v, want ok=%v", err, tt.ok)
			}
			if got, want := servedSerial(t, addr), tt.want.SerialNumber.String(); got != want {
				t.Errorf("serial %s, want %s", got, want)
			}
		})
	}
}

func writeOrRemove(t *testing.T, path string, b []byte) {
	t.Helper()
	if b == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSSilentClient opens a TCP connection to the TLS listener and sends nothing. With one connection
// allowed per IP, it holds the address's only place until the read timeout ends the handshake; then the
// server closes it and an HTTPS request gets through.
func TestTLSSilentClient(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	pair := certstest.Write(t, t.TempDir(), "gw")
	h, err := certs.Load(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	base := startTLSGateway(t, Options{Upstreams: []string{c.URL}, MaxConnsPerIP: 1, ReadTimeout: 300 * time.Millisecond}, h)
	addr := strings.TrimPrefix(base, "https://")
	cl := tlsClient(pair.Pool())

	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// The silent connection was accepted first and holds the place: this one is closed unanswered.
	if _, err := testsupport.Send(cl, http.MethodGet, base+"/api2/demo/re/1", "demo", "demo", ""); err == nil {
		t.Fatal("a second connection was served while the silent one held the address's only place")
	}
	// The test's own deadline only keeps a failing test from hanging; the server is to close first.
	_ = silent.SetReadDeadline(time.Now().Add(20 * time.Second))
	n, err := bufio.NewReader(silent).ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the silent connection open (read: %v)", err)
	}
	if err == nil {
		t.Fatalf("read byte %q from the server, want the connection closed", n)
	}
	res, err := testsupport.Send(cl, http.MethodGet, base+"/api2/demo/re/1", "demo", "demo", "")
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("HTTPS after the silent client was dropped: %v %d", err, res.Status)
	}
}

// TestTLSSlowHead: on the TLS listener the head timeout runs from the connection's acceptance, the handshake
// included: a client that sends nothing is closed, and one that completes the handshake but not its request
// head gets 408, both long before the read timeout.
func TestTLSSlowHead(t *testing.T) {
	c := coretest.Start(t, coretest.Options{})
	pair := certstest.Write(t, t.TempDir(), "gw")
	h, err := certs.Load(pair.CertFile, pair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	base := startTLSGateway(t, Options{Upstreams: []string{c.URL}, HeaderTimeout: 200 * time.Millisecond,
		ReadTimeout: time.Hour, IdleTimeout: time.Hour}, h)
	addr := strings.TrimPrefix(base, "https://")

	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	// The test's own deadline only keeps a failing test from hanging; the server is to close first.
	_ = silent.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := bufio.NewReader(silent).ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("silent connection: read %v, want it closed by the server", err)
	}

	tc, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pair.Pool()})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	_ = tc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(tc, "GET /healthz HTTP/1.1\r\nHost: gw\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatalf("unfinished head over TLS: %v, want a 408", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestTimeout {
		t.Errorf("unfinished head over TLS: status %d, want 408", res.StatusCode)
	}
}
