package gateway

import (
	"net/http"
	"testing"

	"github.com/reqgate/reqgate/gateway/certs/certstest"
)

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
