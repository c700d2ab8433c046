package attacktest

import (
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/reqgate/reqgate/config"
	"github.com/reqgate/reqgate/gateway"
	"github.com/reqgate/reqgate/gateway/certs/certstest"
	"github.com/reqgate/reqgate/internal/wire"
)

// upstreamCA is the test CA of an upstream served over HTTPS: its certificate (self-signed, for localhost and
// 127.0.0.1) is the one the core serves, and the file of it is the gateway's upstream.tls.ca_file.
type upstreamCA struct{ pair certstest.Pair }

func newUpstreamCA(t *testing.T) upstreamCA {
	t.Helper()
	return upstreamCA{certstest.Write(t, t.TempDir(), "upstream")}
}

// serverConfig is the TLS configuration of a core serving the CA's certificate.
func (ca upstreamCA) serverConfig(tb testing.TB) *tls.Config {
	tb.Helper()
	cert, err := tls.X509KeyPair(ca.pair.CertPEM, ca.pair.KeyPEM)
	if err != nil {
		tb.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// upstream points opt at its upstreams over verified TLS, as a gateway in front of a hosted service is
// configured: each https://127.0.0.1:port is named https://localhost:port, so that the name is sent as SNI and
// verified in the certificate, and the CA file is the only one trusted.
func (ca upstreamCA) upstream(opt *gateway.Options) {
	for i, u := range opt.Upstreams {
		if !strings.HasPrefix(u, "https://127.0.0.1:") {
			panic("attacktest: an upstream of a TLS mode must be https://127.0.0.1:port, not " + u)
		}
		opt.Upstreams[i] = "https://localhost:" + strings.TrimPrefix(u, "https://127.0.0.1:")
	}
	opt.UpstreamTLS = gateway.UpstreamTLS{CAFile: ca.pair.CertFile}
}

// impostor is a server that takes the upstream's place on the network (a spoofed name, a hijacked route) and
// answers every request with acme's secret, 200 and the proof the core would give: it records what reached it.
type impostor struct {
	mu       sync.Mutex
	requests []string // method, path and Authorization of each request that reached a handler
}

func (im *impostor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	im.mu.Lock()
	im.requests = append(im.requests, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
	im.mu.Unlock()
	_, _ = io.Copy(io.Discard, r.Body)
	if auth := r.Header.Get("Authorization"); auth != "" {
		w.Header().Set(wire.AuthProofHeader, wire.AuthProof("acme", auth))
	}
	w.Header().Set("Content-Type", "application/xml")
	if r.Method == http.MethodPost {
		w.Header().Set("Location", "/api2/acme/re/2")
		w.WriteHeader(http.StatusCreated)
		return
	}
	_, _ = io.WriteString(w, "<requirement><fields><field><name>field_101</name><value>"+secret+
		"</value></field></fields></requirement>")
}

func (im *impostor) seen() []string {
	im.mu.Lock()
	defer im.mu.Unlock()
	return append([]string(nil), im.requests...)
}

// TestUpstreamImpostor plays the attacker who takes the place of an HTTPS upstream on the network, with a
// certificate of its own CA for the right name, or plain HTTP on the upstream's port, and who would take any
// credential sent to it and vouch for any (a 2xx to every probe, the proof header the core gives): the gateway,
// trusting only upstream.tls.ca_file, must refuse the connection before it sends anything (no credential
// reaches the impostor, no request is forwarded, a write neither), answer 502, and never fall back to plain
// text, in both verify modes.
func TestUpstreamImpostor(t *testing.T) {
	ca := newUpstreamCA(t)
	impostors := []struct {
		name  string
		start func(h http.Handler) *httptest.Server
	}{
		{"certificate of another CA", httptest.NewTLSServer},
		{"plain HTTP", httptest.NewServer},
	}
	for _, verify := range []string{config.VerifyProof, config.VerifyProbe} {
		for _, imp := range impostors {
			t.Run(verify+"/"+imp.name, func(t *testing.T) {
				im := &impostor{}
				srv := imp.start(im)
				srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes refused on purpose
				t.Cleanup(srv.Close)
				m := mode{verify: verify, tls: true, ca: ca}
				addr := srv.Listener.Addr().String()
				opt := m.with(gateway.Options{Upstreams: []string{"https://" + addr},
					Cache: gateway.CacheOptions{Enabled: true}})
				_, url := serve(t, opt)
				for _, req := range []struct{ method, path, body string }{
					{"GET", "/api2/acme/re/1", ""},
					{"GET", "/api2/acme/re/1", ""},
					{"POST", "/api2/acme/re", "<requirement/>"},
					{"GET", "/api2/acme/rate_throttle_status", ""},
				} {
					r := call(t, local, req.method, url+req.path, "alice", "alice-secret", req.body)
					if r.Status != http.StatusBadGateway || strings.Contains(r.Body, secret) {
						t.Errorf("%s %s through an impostor upstream: %d %q, want 502 without its data",
							req.method, req.path, r.Status, r.Body)
					}
				}
				if got := im.seen(); len(got) > 0 {
					t.Errorf("the impostor received %d requests, the caller's credential with them: %q", len(got), got)
				}
			})
		}
	}
}
