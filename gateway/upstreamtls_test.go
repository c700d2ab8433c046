package gateway

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reqgate/reqgate/core/coretest"
	"github.com/reqgate/reqgate/gateway/certs/certstest"
	"github.com/reqgate/reqgate/internal/testsupport"
)

// tlsCore is a core served over TLS with a certificate of a test CA, recording what each handshake presented.
type tlsCore struct {
	URL string // https://127.0.0.1:port

	mu      sync.Mutex
	sni     []string // the server names the gateway sent
	clients []string // the common names of the client certificates presented ("" for none)
	hosts   []string // the Host headers received
}

// startTLSCore serves a core's API over TLS with server's certificate; requireClient makes the server ask
// for (and require) a client certificate.
func startTLSCore(t *testing.T, server certstest.Pair, requireClient bool) *tlsCore {
	t.Helper()
	c := coretest.Start(t, coretest.Options{})
	tc := &tlsCore{}
	cert, err := tls.X509KeyPair(server.CertPEM, server.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tc.mu.Lock()
		tc.hosts = append(tc.hosts, r.Host)
		tc.mu.Unlock()
		c.API.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{cert},
		GetConfigForClient: func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			tc.mu.Lock()
			tc.sni = append(tc.sni, hello.ServerName)
			tc.mu.Unlock()
			return nil, nil
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			name := ""
			if len(cs.PeerCertificates) > 0 {
				name = cs.PeerCertificates[0].Subject.CommonName
			}
			tc.mu.Lock()
			tc.clients = append(tc.clients, name)
			tc.mu.Unlock()
			return nil
		},
	}
	if requireClient {
		srv.TLS.ClientAuth = tls.RequireAnyClientCert
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes some tests cause on purpose
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tc.URL = srv.URL
	return tc
}

func (tc *tlsCore) seen() (sni, clients, hosts []string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]string(nil), tc.sni...), append([]string(nil), tc.clients...), append([]string(nil), tc.hosts...)
}

// TestHTTPSUpstream checks a gateway in front of a core served over HTTPS: reads and writes pass when the core's
// certificate is signed by upstream.tls.ca_file, for the name the URL gives (or upstream.tls.server_name, sent
// as SNI); the Host sent is the URL's (or upstream.host); a certificate of another CA is refused with a prompt
// 502 that says nothing was sent, never forwarded; and the client certificate is presented to a core that
// requires one, its absence refused the same way.
func TestHTTPSUpstream(t *testing.T) {
	dir := t.TempDir()
	serverCA := certstest.Write(t, dir, "core")
	otherCA := certstest.Write(t, dir, "other")
	client := certstest.Write(t, dir, "gateway-client")

	readWrite := func(t *testing.T, gw *testGateway) {
		t.Helper()
		if res := get(t, gw.URL+"/api2/demo/re/5"); res.Status != http.StatusOK {
			t.Fatalf("read through the gateway: %d %q", res.Status, res.Body)
		}
		body := `<requirement><fields><field><name>field_101</name><value>Over TLS</value></field></fields></requirement>`
		if res := do(t, http.MethodPost, gw.URL+"/api2/demo/re", "demo", "demo", body); res.Status != http.StatusCreated {
			t.Fatalf("write through the gateway: %d %q", res.Status, res.Body)
		}
	}

	t.Run("verified by the CA file", func(t *testing.T) {
		core := startTLSCore(t, serverCA, false)
		// The URL names localhost: the name verified and sent as SNI, and the Host sent.
		url := strings.Replace(core.URL, "127.0.0.1", "localhost", 1)
		gw := startGateway(t, Options{Upstreams: []string{url}, UpstreamTLS: UpstreamTLS{CAFile: serverCA.CertFile}})
		readWrite(t, gw)
		sni, clients, hosts := core.seen()
		if len(sni) == 0 || sni[0] != "localhost" {
			t.Errorf("SNI sent: %q, want localhost", sni)
		}
		if len(clients) == 0 || clients[0] != "" {
			t.Errorf("client certificates presented: %q, want none", clients)
		}
		want := strings.TrimPrefix(url, "https://")
		for _, h := range hosts {
			if h != want {
				t.Errorf("Host sent: %q, want the URL's %q", h, want)
			}
		}
	})

	t.Run("server name and host configured", func(t *testing.T) {
		core := startTLSCore(t, serverCA, false)
		gw := startGateway(t, Options{Upstreams: []string{core.URL}, UpstreamHost: "api.example",
			UpstreamTLS: UpstreamTLS{CAFile: serverCA.CertFile, ServerName: "localhost"}})
		readWrite(t, gw)
		sni, _, hosts := core.seen()
		if len(sni) == 0 || sni[0] != "localhost" {
			t.Errorf("SNI sent: %q, want the configured localhost", sni)
		}
		for _, h := range hosts {
			if h != "api.example" {
				t.Errorf("Host sent: %q, want the configured api.example", h)
			}
		}
	})

	t.Run("wrong CA", func(t *testing.T) {
		core := startTLSCore(t, serverCA, false)
		gw := startGateway(t, Options{Upstreams: []string{core.URL}, UpstreamTLS: UpstreamTLS{CAFile: otherCA.CertFile}})
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			res := do(t, method, gw.URL+"/api2/demo/re", "demo", "demo", "")
			if res.Status != http.StatusBadGateway {
				t.Errorf("%s with the core's certificate of an unknown CA: %d %q, want 502", method, res.Status, res.Body)
			}
		}
		if _, _, hosts := core.seen(); len(hosts) > 0 {
			t.Errorf("the core received %d requests over a connection the gateway should have refused", len(hosts))
		}
	})

	t.Run("client certificate", func(t *testing.T) {
		core := startTLSCore(t, serverCA, true)
		gw := startGateway(t, Options{Upstreams: []string{core.URL}, UpstreamTLS: UpstreamTLS{
			CAFile: serverCA.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}})
		readWrite(t, gw)
		if _, clients, _ := core.seen(); len(clients) == 0 || clients[0] != "gateway-client" {
			t.Errorf("client certificates presented: %q, want gateway-client", clients)
		}

		without := startGateway(t, Options{Upstreams: []string{core.URL}, UpstreamTLS: UpstreamTLS{CAFile: serverCA.CertFile}})
		if res := get(t, without.URL+"/api2/demo/re/5"); res.Status != http.StatusBadGateway {
			t.Errorf("without a client certificate for a core requiring one: %d %q, want 502", res.Status, res.Body)
		}
	})

	t.Run("health probes over TLS", func(t *testing.T) {
		a, b := startTLSCore(t, serverCA, true), startTLSCore(t, serverCA, true)
		gw := startGateway(t, Options{Upstreams: []string{a.URL, b.URL}, HealthInterval: 20 * time.Millisecond,
			UpstreamTLS: UpstreamTLS{CAFile: serverCA.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}})
		if !testsupport.WaitUntil(5*time.Second, func() bool {
			_, _, ha := a.seen()
			_, _, hb := b.seen()
			return len(ha) > 1 && len(hb) > 1
		}) {
			t.Fatal("the health probes never reached the cores over TLS")
		}
		for _, s := range gw.up.balancer.stats() {
			if !s.Up {
				t.Errorf("core %s down, though its probes are answered over TLS", s.Addr)
			}
		}
	})
}

// TestHTTPSUpstreamReady checks the gateway's /readyz in front of one core served over HTTPS: 200 when the
// core's certificate is signed by upstream.tls.ca_file, 503 when it is of another CA.
func TestHTTPSUpstreamReady(t *testing.T) {
	dir := t.TempDir()
	serverCA := certstest.Write(t, dir, "core")
	otherCA := certstest.Write(t, dir, "other")
	core := startTLSCore(t, serverCA, false)
	tests := []struct {
		name   string
		ca     string
		status int
	}{
		{"the core's CA", serverCA.CertFile, http.StatusOK},
		{"another CA", otherCA.CertFile, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := startGateway(t, Options{Upstreams: []string{core.URL}, UpstreamTLS: UpstreamTLS{CAFile: tt.ca}})
			if res := get(t, gw.URL+"/readyz"); res.Status != tt.status {
				t.Errorf("/readyz: %d %q, want %d", res.Status, res.Body, tt.status)
			}
		})
	}
}
